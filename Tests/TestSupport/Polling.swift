import Testing

/// Asks `condition` until it holds (`true`) or `bound` has passed (`false`), yielding and then sleeping a
/// millisecond between asks: for state that changes on other threads or tasks, observed rather than slept for.
/// The default bound is a safety net, not a figure: a condition that holds returns at once, and the full suite on
/// two cores has stalled every task for over 10 s (its CPU-bound tests holding the cooperative pool's threads).
public func poll(
    within bound: Duration = .seconds(60), until condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + bound
    var asked = 0
    while try await !condition() {
        guard ContinuousClock.now < deadline else { return false }
        asked += 1
        if asked < 100 { await Task.yield() } else { try? await Task.sleep(for: .milliseconds(1)) }
    }
    return true
}

/// Waits (bounded) until `condition` holds, and records an issue naming `what` if it does not within `bound`.
public func waitUntil(
    _ what: String, within bound: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async rethrows {
    if try await !poll(within: bound, until: condition) {
        Issue.record("not within \(bound): \(what)", sourceLocation: sourceLocation)
    }
}

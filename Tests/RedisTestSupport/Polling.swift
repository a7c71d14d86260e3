/// Asks `condition` every 5 ms until it holds (`true`) or `bound` has passed (`false`): for state that changes on
/// other threads (a subscriber's, a pool's), observed rather than slept for.
public func poll(within bound: Duration, until condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + bound
    while try await !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}

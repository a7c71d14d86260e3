import Testing

/// What `match` takes from the error `body` throws (`\.tlsReason`, a `case` it is after), or nil after recording an
/// issue: when `body` throws nothing, or an error `match` does not take. For a test that wants one kind of failure and
/// then looks inside it.
public func caught<Failure: Error, Value>(
    _ match: (Failure) -> Value?, sourceLocation: SourceLocation = #_sourceLocation,
    isolation: isolated (any Actor)? = #isolation, in body: () async throws(Failure) -> Void
) async -> Value? {
    do throws(Failure) {
        try await body()
        Issue.record("nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch {
        guard let value = match(error) else {
            Issue.record("not the error expected: \(error)", sourceLocation: sourceLocation)
            return nil
        }
        return value
    }
}

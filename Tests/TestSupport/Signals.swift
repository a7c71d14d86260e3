/// What the code under test tells the test as it happens (a handler started, a store began, a listing is held),
/// awaited by the test in order, without sleeping: `signal(_:)` from any thread or task, `next()` or `wait(for:)`
/// from one test task.
public final class Signals<Value: Sendable>: Sendable {
    private let stream: AsyncStream<Value>
    private let continuation: AsyncStream<Value>.Continuation

    public init(of: Value.Type = Value.self) {
        (stream, continuation) = AsyncStream.makeStream(of: Value.self)
    }

    public func signal(_ value: Value) {
        continuation.yield(value)
    }

    /// The next signal, in order (nil once `finish()` was called and every signal was taken, or when cancelled).
    public func next() async -> Value? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }

    /// Waits for `count` more signals.
    public func wait(for count: Int) async {
        var seen = 0
        guard count > 0 else { return }
        for await _ in stream {
            seen += 1
            if seen == count { return }
        }
    }

    /// No more signals: a waiter past the last one returns.
    public func finish() {
        continuation.finish()
    }
}

extension Signals where Value == Void {
    public convenience init() { self.init(of: Void.self) }

    public func signal() { signal(()) }
}

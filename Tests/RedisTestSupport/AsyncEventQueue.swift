import NIOConcurrencyHelpers

/// Events pushed from any thread (e.g. a RedisSubscriber's onEvent), awaited by one test task with
/// a bound: `next(within:)` returns nil instead of hanging when nothing comes.
public final class AsyncEventQueue<Element: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let id: UInt64
        let continuation: CheckedContinuation<Element?, Never>
        /// The bound's timer, cancelled when an element comes first (else it would sleep out the bound).
        var timer: Task<Void, Never>?
    }

    private struct State: Sendable {
        var buffer: [Element] = []
        var waiter: Waiter?
        var nextID: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    public func push(_ element: Element) {
        let waiter = state.withLockedValue { state -> Waiter? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.buffer.append(element)
            return nil
        }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: element)
    }

    /// The next element, or nil when none arrived within `bound` (a bound, not a synchronisation).
    public func next(within bound: Duration = .seconds(10)) async -> Element? {
        await withCheckedContinuation { continuation in
            let (ready, id) = state.withLockedValue { state -> (Element?, UInt64) in
                if !state.buffer.isEmpty { return (state.buffer.removeFirst(), 0) }
                state.nextID += 1
                state.waiter = Waiter(id: state.nextID, continuation: continuation)
                return (nil, state.nextID)
            }
            if let ready {
                continuation.resume(returning: ready)
                return
            }
            // Registered first, so the timer can never miss the waiter; kept with it, unless an element came first.
            let timer = Task { [self] in
                guard (try? await Task.sleep(for: bound)) != nil else { return }
                expire(id)
            }
            let answered = state.withLockedValue { state in
                guard state.waiter?.id == id else { return true }
                state.waiter?.timer = timer
                return false
            }
            if answered { timer.cancel() }
        }
    }

    /// Skips elements until one satisfies `matches`; nil when none did within `bound` overall.
    public func first(within bound: Duration = .seconds(10), where matches: (Element) -> Bool) async -> Element? {
        let deadline = ContinuousClock.now.advanced(by: bound)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, let element = await next(within: remaining) else { return nil }
            if matches(element) { return element }
        }
    }

    /// What arrived and was not taken yet.
    public var pending: [Element] {
        state.withLockedValue { $0.buffer }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(returning: nil)
    }
}

import NIOConcurrencyHelpers

/// What a shared load produced; each waiter turns it into its own `CacheResult` and statistic.
enum LoadOutcome: Sendable {
    /// Found fresh in a tier (a value or a remembered "not found").
    case cached(CacheEntry, CacheTier)
    /// Fetched now; `stored` is false for no-store values and superseded loads.
    case fetched(CacheEntry, stored: Bool)
    /// Another instance of the fleet fetched it (its fill lease); this instance waited for its value.
    case joined(CacheEntry)
    /// The fetch failed (or the upstream gate refused it) and a stored copy within its window was served.
    case stale(CacheEntry, CacheTier, CacheOutcome.StaleReason)
    /// The upstream said not found; `stored`: remembered for the negative TTL.
    case notFound(stored: Bool)
    /// No value: upstream 429 or failure with nothing servable.
    case failed(CacheError)
}

/// A load's outcome for the requests that joined it, told as soon as it is known: a fetched value reaches them
/// before the leader's store in the shared tier (and the fill lease's release in it) is done (CONTRACT §10.4).
/// The first outcome told wins. A joiner waits as a task (`value`) or as a callback (`whenTold`): a stampede's
/// thousand coalesced requests are answered by callbacks in one pass, not by a thousand task resumptions.
final class AnnouncedOutcome: Sendable {
    private enum Waiter {
        case task(CheckedContinuation<LoadOutcome, Never>)
        case callback(@Sendable (LoadOutcome) -> Void)

        func tell(_ outcome: LoadOutcome) {
            switch self {
            case .task(let continuation): continuation.resume(returning: outcome)
            case .callback(let callback): callback(outcome)
            }
        }
    }

    private enum State {
        case waiting([Waiter])
        case told(LoadOutcome)
    }

    private let state = NIOLockedValueBox(State.waiting([]))

    /// Tells every waiter, now and later, unless an outcome was told already.
    func tell(_ outcome: LoadOutcome) {
        let waiting = state.withLockedValue { state -> [Waiter] in
            guard case .waiting(let waiting) = state else { return [] }
            state = .told(outcome)
            return waiting
        }
        for waiter in waiting { waiter.tell(outcome) }
    }

    /// The outcome, once told.
    var value: LoadOutcome {
        get async {
            await withCheckedContinuation { continuation in wait(.task(continuation)) }
        }
    }

    /// Calls `callback` with the outcome once told (at once, on this thread, when it was), on the thread that tells it.
    func whenTold(_ callback: @escaping @Sendable (LoadOutcome) -> Void) {
        wait(.callback(callback))
    }

    private func wait(_ waiter: Waiter) {
        let told = state.withLockedValue { state -> LoadOutcome? in
            switch state {
            case .told(let outcome): return outcome
            case .waiting(var waiting):
                // Appended in place (the state let go of the array first): `waiting + [waiter]` copied the list
                // for every joiner, quadratic in a stampede's 1,000.
                state = .waiting([])
                waiting.append(waiter)
                state = .waiting(waiting)
                return nil
            }
        }
        if let told { waiter.tell(told) }
    }
}

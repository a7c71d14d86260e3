import Clocks
import NIOConcurrencyHelpers

/// At most one switch handed on per `interval`: the first at once; those announced sooner are coalesced into the
/// latest, handed on when the interval since the last one has passed. Sixty `+switch-master` in a burst make two
/// switches, not sixty.
final class SwitchThrottle: Sendable {
    private struct State {
        /// When the last switch was handed on (a reading of `elapsed`).
        var last: Duration?
        var pending: RedisSentinelSwitch?
        var timer: Task<Void, Never>?
        var closed = false
    }

    private let interval: Duration
    private let elapsed: Elapsed
    private let handOn: @Sendable (RedisSentinelSwitch) -> Void
    private let state = NIOLockedValueBox(State())

    init(interval: Duration, elapsed: Elapsed, handOn: @escaping @Sendable (RedisSentinelSwitch) -> Void) {
        self.interval = interval
        self.elapsed = elapsed
        self.handOn = handOn
    }

    func offer(_ change: RedisSentinelSwitch) {
        let now = elapsed.now()
        let handNow = state.withLockedValue { state -> Bool in
            guard !state.closed else { return false }
            guard let last = state.last, now < last + interval else {
                state.last = now
                state.pending = nil
                return true
            }
            state.pending = change
            if state.timer == nil {
                state.timer = Task { [self] in
                    try? await elapsed.sleep(until: last + interval)
                    flush()
                }
            }
            return false
        }
        if handNow { handOn(change) }
    }

    /// Hands on the switch waiting, if any.
    private func flush() {
        let change = state.withLockedValue { state -> RedisSentinelSwitch? in
            state.timer = nil
            guard !state.closed, let pending = state.pending else { return nil }
            state.pending = nil
            state.last = elapsed.now()
            return pending
        }
        if let change { handOn(change) }
    }

    /// Nothing more is handed on (a hand-off under way may still finish).
    func close() {
        let timer = state.withLockedValue { state -> Task<Void, Never>? in
            state.closed = true
            return state.timer
        }
        timer?.cancel()
    }
}

import NIOConcurrencyHelpers
import UnifiedCache

/// The exact local budget over one or more windows (Strava: 200 per 15 minutes and 2,000 a day): the times of the
/// requests granted within the longest window (a sliding log), so that no window of any configured length ever
/// holds more than its limit, wherever it starts. With a user share (CONTRACT §15.2), each user's grants are kept in
/// a log of their own too, and no window holds more of one user's than their share. Memory: one reading (16 bytes)
/// per request granted within the longest window, twice for a user's, never the configured limits up front; a user's
/// log goes once it is empty.
public final class SlidingWindowCounter: UpstreamRateCounter {
    /// The tightest limit and its window (the first given): what the protocol reports.
    public var limit: Int { windows[0].limit }
    public var window: Duration { windows[0].window }
    /// Every window with its limit, in the order given.
    public let windows: [RateWindow]
    /// The most one user may spend of each window (nil: no per-user limit in that window).
    let userLimits: [Int?]
    private let longest: Duration

    /// Times of the grants still inside the longest window, oldest first, from `start` on (the forgotten prefix
    /// is dropped once it is the larger half).
    private struct Log {
        var times: [Duration] = []
        var start = 0

        var count: Int { times.count - start }

        subscript(offset: Int) -> Duration { times[start + offset] }

        /// Grants later than `limit` (those a window ending now holds): found by binary search.
        func count(after limit: Duration) -> Int {
            var low = start
            var high = times.count
            while low < high {
                let middle = (low + high) / 2
                if times[middle] <= limit { low = middle + 1 } else { high = middle }
            }
            return times.count - low
        }

        /// Forgets the grants no window ending now or later can hold together with a new one: `time <= limit`.
        mutating func forget(before limit: Duration) {
            while start < times.count && times[start] <= limit { start += 1 }
            if start >= 64 && start * 2 >= times.count {
                times.removeFirst(start)
                start = 0
            }
        }

        mutating func append(_ time: Duration) { times.append(time) }

        /// How long until a window of `window` ending then holds fewer than `allowed` of these grants; nil when one
        /// ending `now` does. The grants in the window are the log's last `held`: all but `allowed - 1` must leave it.
        func wait(at now: Duration, window: Duration, allowed: Int) -> Duration? {
            guard count(after: now - window) >= allowed else { return nil }
            return allowed > 0 ? self[count - allowed] + window - now : window
        }
    }

    private struct State {
        var log = Log()
        /// Each user's grants (only while a user share applies and the user has some within the longest window).
        var users: [String: Log] = [:]
        /// When the users' logs are next cleared of what left the longest window.
        var nextSweep: Duration = .zero
    }

    private let state: NIOLockedValueBox<State>

    /// `limit` ≥ 1 and `window` > 0 (validated where they are configured).
    public convenience init(limit: Int, window: Duration, userShare: UserShare = .whole) {
        self.init(windows: [RateWindow(limit: limit, window: window)], userShare: userShare)
    }

    /// At least one window, each limit ≥ 1 and window > 0 (validated where they are configured).
    public init(windows: [RateWindow], userShare: UserShare = .whole) {
        let windows = windows.isEmpty ? [RateWindow(limit: 1, window: .seconds(1))] : windows
        self.windows = windows.map { RateWindow(limit: max(1, $0.limit), window: $0.window) }
        userLimits = self.windows.map { userShare.of($0.limit) }
        longest = windows.map(\.window).max() ?? .zero
        state = NIOLockedValueBox(State())
    }

    public func take(at now: Duration, background: Bool, user: String? = nil) -> RateDecision {
        decide(at: now, background: background, user: user, spend: true)
    }

    public func check(at now: Duration, background: Bool, user: String? = nil) -> RateDecision {
        decide(at: now, background: background, user: user, spend: false)
    }

    /// The budget first: when it is spent, the refusal is the budget's (whoever asks), with the wait until both it
    /// and the user's share allow a request; else the user's share.
    private func decide(at now: Duration, background: Bool, user: String?, spend: Bool) -> RateDecision {
        state.withLockedValue { state in
            state.log.forget(before: now - longest)
            var rateWait: Duration?
            for window in windows {
                let allowed = background ? window.limit - Self.backgroundReserve(of: window.limit) : window.limit
                if let until = state.log.wait(at: now, window: window.window, allowed: allowed) {
                    rateWait = max(rateWait ?? .zero, until)
                }
            }
            let charged = userLimits.contains { $0 != nil } ? user : nil
            var userLog = charged.map { state.users[$0] ?? Log() }
            var userWait: Duration?
            if var log = userLog {
                log.forget(before: now - longest)
                for (window, allowed) in zip(windows, userLimits) {
                    guard let allowed, let until = log.wait(at: now, window: window.window, allowed: allowed) else { continue }
                    userWait = max(userWait ?? .zero, until)
                }
                userLog = log
            }
            if let rateWait { return .refused(retryAfter: max(rateWait, userWait ?? .zero)) }
            if let userWait { return .userShareSpent(retryAfter: userWait) }
            if spend {
                state.log.append(now)
                userLog?.append(now)
            }
            if let charged, let userLog { state.users[charged] = userLog.count > 0 ? userLog : nil }
            Self.sweep(&state, at: now, longest: longest)
            return .granted
        }
    }

    /// Once per longest window: forgets what left it from every user's log, and the users left with none.
    private static func sweep(_ state: inout State, at now: Duration, longest: Duration) {
        guard now >= state.nextSweep else { return }
        state.nextSweep = now + longest
        state.users = state.users.compactMapValues { log in
            var log = log
            log.forget(before: now - longest)
            return log.count > 0 ? log : nil
        }
    }

    /// Users with a log of grants (for tests of its bound).
    var usersKept: Int { state.withLockedValue { $0.users.count } }

    public func remaining(at now: Duration) -> Int {
        state.withLockedValue { state in
            state.log.forget(before: now - longest)
            return windows.map { $0.limit - state.log.count(after: now - $0.window) }.min() ?? 0
        }
    }
}

/// At most `limit` requests in any window of `window`.
public struct RateWindow: Sendable, Equatable {
    public var limit: Int
    public var window: Duration

    public init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }
}

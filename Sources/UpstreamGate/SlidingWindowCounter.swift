import NIOConcurrencyHelpers
import UnifiedCache

/// The exact local budget over one or more windows (Strava: 200 per 15 minutes and 2,000 a day): the times of the
/// requests granted within the longest window (a sliding log), so that no window of any configured length ever
/// holds more than its limit, wherever it starts. Memory: one reading (16 bytes) per request granted within the
/// longest window, never the configured limits up front.
public final class SlidingWindowCounter: UpstreamRateCounter {
    /// The tightest limit and its window (the first given): what the protocol reports.
    public var limit: Int { windows[0].limit }
    public var window: Duration { windows[0].window }
    /// Every window with its limit, in the order given.
    public let windows: [RateWindow]
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
    }

    private let log: NIOLockedValueBox<Log>

    /// `limit` ≥ 1 and `window` > 0 (validated where they are configured).
    public convenience init(limit: Int, window: Duration) {
        self.init(windows: [RateWindow(limit: limit, window: window)])
    }

    /// At least one window, each limit ≥ 1 and window > 0 (validated where they are configured).
    public init(windows: [RateWindow]) {
        let windows = windows.isEmpty ? [RateWindow(limit: 1, window: .seconds(1))] : windows
        self.windows = windows.map { RateWindow(limit: max(1, $0.limit), window: $0.window) }
        longest = windows.map(\.window).max() ?? .zero
        log = NIOLockedValueBox(Log())
    }

    public func take(at now: Duration, background: Bool) -> RateDecision {
        decide(at: now, background: background, spend: true)
    }

    public func check(at now: Duration, background: Bool) -> RateDecision {
        decide(at: now, background: background, spend: false)
    }

    private func decide(at now: Duration, background: Bool, spend: Bool) -> RateDecision {
        log.withLockedValue { log in
            log.forget(before: now - longest)
            var wait: Duration?
            for window in windows {
                let allowed = background ? window.limit - Self.backgroundReserve(of: window.limit) : window.limit
                let held = log.count(after: now - window.window)
                guard held >= allowed else { continue }
                // A request is allowed once all but `allowed - 1` of this window's grants have left it; the grants
                // in the window are the log's last `held`.
                let until = allowed > 0 ? log[log.count - allowed] + window.window - now : window.window
                wait = max(wait ?? .zero, until)
            }
            if let wait { return .refused(retryAfter: wait) }
            if spend { log.append(now) }
            return .granted
        }
    }

    public func remaining(at now: Duration) -> Int {
        log.withLockedValue { log in
            log.forget(before: now - longest)
            return windows.map { $0.limit - log.count(after: now - $0.window) }.min() ?? 0
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

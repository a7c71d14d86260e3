import Foundation
import NIOConcurrencyHelpers
import Redis
import UnifiedCache
import UpstreamGate

/// A domain's `--upstream-rate` budget counted for the whole fleet (CONTRACT §7 with §6.3): one sliding log per
/// domain in Redis (a sorted set of grant times, in Redis's own clock), decided by one Lua script so that the
/// fleet's upstream never sees more than N in any window. When Redis cannot be asked, each instance falls back
/// to a local log with N divided by the fleet size it last saw (instances announce themselves every second), so
/// the fleet together still stays inside N.
public final class FleetRateCounter: UpstreamRateCounter {
    public var limit: Int { windows[0].limit }
    public var window: Duration { windows[0].window }
    let windows: [RateWindow]
    let key: String
    let commands: RedisCommands
    let membership: FleetMembership
    /// The local fallback, rebuilt when the fleet size changes.
    private let fallback = NIOLockedValueBox<(size: Int, counter: SlidingWindowCounter)?>(nil)

    public init(domain: String, windows: [RateWindow], commands: RedisCommands, membership: FleetMembership) {
        self.windows = windows.isEmpty ? [RateWindow(limit: 1, window: .seconds(1))] : windows
        key = commands.keys.rate(domain)
        self.commands = commands
        self.membership = membership
    }

    public func take(at now: Duration, background: Bool) async -> RateDecision {
        await decide(mode: "take", background: background) ?? local().take(at: now, background: background)
    }

    public func check(at now: Duration, background: Bool) async -> RateDecision {
        await decide(mode: "check", background: background) ?? local().check(at: now, background: background)
    }

    public func remaining(at now: Duration) async -> Int {
        guard let reply = try? await script(mode: "remaining", background: false),
            case .array(let parts) = reply, parts.count == 3, case .integer(let remaining) = parts[2]
        else { return local().remaining(at: now) }
        return remaining
    }

    private func decide(mode: String, background: Bool) async -> RateDecision? {
        guard let reply = try? await script(mode: mode, background: background), case .array(let parts) = reply,
            parts.count == 3, case .integer(let granted) = parts[0], case .integer(let waitMs) = parts[1]
        else { return nil }
        return granted == 1 ? .granted : .refused(retryAfter: .milliseconds(max(1, waitMs)))
    }

    private func script(mode: String, background: Bool) async throws(SharedTierUnavailable) -> RedisReply {
        var arguments = [mode, commands.instanceID + "-" + RedisCommands.randomToken()]
        for window in windows {
            let allowed = background ? window.limit - SlidingWindowCounter.backgroundReserve(of: window.limit) : window.limit
            arguments += ["\(window.limit)", "\(allowed)", "\(Self.milliseconds(window.window))"]
        }
        return try await commands.run("rate", RedisScripts.rate, keys: [key], arguments: arguments)
    }

    /// The local budget: each window's limit divided by the fleet size last seen (at least 1).
    private func local() -> SlidingWindowCounter {
        let size = max(1, membership.size)
        return fallback.withLockedValue { fallback in
            if let current = fallback, current.size == size { return current.counter }
            let counter = SlidingWindowCounter(
                windows: windows.map { RateWindow(limit: max(1, $0.limit / size), window: $0.window) })
            fallback = (size, counter)
            return counter
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

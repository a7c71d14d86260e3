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
///
/// A user's share of the budget (CONTRACT §15.2) is counted fleet-wide in the same script: each user's grants in a
/// sorted set of their own whose name begins with the domain's log's (one hash slot), asked in the same round trip.
public final class FleetRateCounter: UpstreamRateCounter {
    public var limit: Int { windows[0].limit }
    public var window: Duration { windows[0].window }
    let windows: [RateWindow]
    let domain: String
    let key: String
    let userShare: UserShare
    /// The most one user may spend of each window (nil: no per-user limit in that window).
    private let userLimits: [Int?]
    let commands: RedisCommands
    let membership: FleetMembership
    /// The local fallback, rebuilt when the fleet size changes.
    private let fallback = NIOLockedValueBox<(size: Int, counter: SlidingWindowCounter)?>(nil)

    public init(
        domain: String, windows: [RateWindow], commands: RedisCommands, membership: FleetMembership,
        userShare: UserShare = .whole
    ) {
        self.windows = windows.isEmpty ? [RateWindow(limit: 1, window: .seconds(1))] : windows
        self.domain = domain
        key = commands.keys.rate(domain)
        self.userShare = userShare
        userLimits = self.windows.map { userShare.of($0.limit) }
        self.commands = commands
        self.membership = membership
    }

    public func take(at now: Duration, background: Bool, user: String? = nil) async -> RateDecision {
        await decide(mode: "take", background: background, user: user)
            ?? local().take(at: now, background: background, user: user)
    }

    public func check(at now: Duration, background: Bool, user: String? = nil) async -> RateDecision {
        await decide(mode: "check", background: background, user: user)
            ?? local().check(at: now, background: background, user: user)
    }

    public func remaining(at now: Duration) async -> Int {
        guard let reply = try? await script(mode: "remaining", background: false, user: nil),
            case .array(let parts) = reply, parts.count == 4, case .integer(let remaining) = parts[2]
        else { return local().remaining(at: now) }
        return remaining
    }

    private func decide(mode: String, background: Bool, user: String?) async -> RateDecision? {
        guard let reply = try? await script(mode: mode, background: background, user: user),
            case .array(let parts) = reply, parts.count == 4, case .integer(let granted) = parts[0],
            case .integer(let waitMs) = parts[1], case .integer(let forUser) = parts[3]
        else { return nil }
        if granted == 1 { return .granted }
        let wait = Duration.milliseconds(max(1, waitMs))
        return forUser == 1 ? .userShareSpent(retryAfter: wait) : .refused(retryAfter: wait)
    }

    /// The budget's script, with the user's log among its keys when the request is charged to a user.
    private func script(mode: String, background: Bool, user: String?) async throws(SharedTierUnavailable) -> RedisReply {
        var arguments = [mode, commands.instanceID + "-" + RedisCommands.randomToken()]
        for (window, share) in zip(windows, userLimits) {
            let allowed = background ? window.limit - SlidingWindowCounter.backgroundReserve(of: window.limit) : window.limit
            arguments += ["\(window.limit)", "\(allowed)", "\(Self.milliseconds(window.window))", "\(share ?? 0)"]
        }
        var keys = [key]
        if let user, userLimits.contains(where: { $0 != nil }) {
            keys.append(commands.keys.userRate(domain, user: user))
        }
        return try await commands.run("rate", RedisScripts.rate, keys: keys, arguments: arguments)
    }

    /// The local budget: each window's limit divided by the fleet size last seen (at least 1).
    private func local() -> SlidingWindowCounter {
        let size = max(1, membership.size)
        return fallback.withLockedValue { fallback in
            if let current = fallback, current.size == size { return current.counter }
            let counter = SlidingWindowCounter(
                windows: windows.map { RateWindow(limit: max(1, $0.limit / size), window: $0.window) },
                userShare: userShare)
            fallback = (size, counter)
            return counter
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seconds since the Unix epoch: the time `exp`, `nbf` and `iat` are compared with, and the time the key
/// ring's checks are spaced by. Injected so tests move time instead of sleeping.
public protocol AccessClock: Sendable {
    func now() -> Double
    /// Suspends for `seconds` of this clock's time (a URL JWKS's refresh timer); throws when cancelled.
    func sleep(seconds: Double) async throws
}

/// The real-time clock (`CLOCK_REALTIME`).
public struct SystemAccessClock: AccessClock {
    public init() {}

    public func sleep(seconds: Double) async throws {
        try await Task.sleep(for: .seconds(seconds))
    }

    public func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

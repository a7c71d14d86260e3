import Access
import Clocks
import Logging
import Settings
import UnifiedCache
import UpstreamGate

/// Everything the routes are built from, as one value (Hummingbird's `buildApplication` takes one too):
/// `UnicacheService.build` fills it from the configuration; tests set what they script and keep the defaults.
package struct AppDependencies: Sendable {
    /// The one cache every route reads and writes.
    public var cache: UnifiedCacheManager
    /// Each domain's fetcher (demo or HTTP upstream), each timed into the fetch histogram. A domain without one
    /// answers its routes 503 `no-upstream` (CONTRACT §11.1).
    public var fetchers: [UpstreamDomain: any Fetcher]
    /// `--admin-token`; `nil` disables the admin endpoints (403).
    public var adminToken: String?
    public var logger: Logger
    /// The cache's and the routes' wall clock.
    public var clock: any WallClock
    /// `--ttl NAMESPACE=DURATION`.
    public var ttlOverrides: [String: Duration] = [:]
    /// Each domain's budget and cap (CONTRACT §7); every domain has a circuit breaker.
    public var protection: [UpstreamDomain: UpstreamProtection] = [:]
    /// How long a fetch waits for a slot under its domain's cap (`--request-timeout`, the request's deadline).
    public var slotWait: Duration = .seconds(30)
    /// The upstream gates' clock (monotonic: budgets' windows, pauses, the circuit's cool-down).
    package var gateClock: any Clock<Duration>
    /// Builds each budget's counter (fleet-wide with `--redis`); local sliding logs without.
    package var rateCounter: RateCounterFactory?
    /// `--upstream-user-share` (CONTRACT §15.2); `.whole` (one user may spend everything) unless set.
    public var userShare = UserShare.whole
    /// Who may read what (CONTRACT §8), asked before anything else; `nil` admits every request.
    public var access: AccessControl?
    /// Whether the tiers below memory seal what they store, and the primary key's ID (CONTRACT §9).
    public var encryption = EncryptionStatus()
    /// The version and each domain's source, for `/stats`.
    package var facts = ServiceFacts()

    /// `clock` and `gateClock` are the process's two clocks, made once by the executable (tests pass their own).
    public init(
        cache: UnifiedCacheManager, fetchers: [UpstreamDomain: any Fetcher], adminToken: String?, logger: Logger,
        clock: any WallClock, gateClock: any Clock<Duration>
    ) {
        self.cache = cache
        self.fetchers = fetchers
        self.adminToken = adminToken
        self.logger = logger
        self.clock = clock
        self.gateClock = gateClock
    }
}

import Access
import Clocks
import DiskTier
import Logging
import MicroHTTPServer
import RedisTier
import ServiceLifecycle
import Settings
import UnifiedCache
import UpstreamGate
import UpstreamHTTP

/// The whole service, built in one place from its configuration (Hummingbird's `buildApplication`): `unicache serve`
/// runs what `build` returns (`run`), and the live tests build theirs here too, so both wire the same graph.
///
/// Every part that starts or stops is a `Service` of one `ServiceGroup`. The group starts them in the order of
/// `services` and shuts them down in reverse: the HTTP server drains first, then the disk sweep and the memory
/// reclaimer stop, and last the cache flushes its pending disk writes and the shared tier disconnects.
public struct UnicacheService: Sendable {
    /// The router and the cache behind it.
    package let app: App
    /// The HTTP server (not started: `run` starts it, or a test calls `server.start()` first to learn its port).
    public let server: MicroHTTPServer
    /// In start order; the group stops them in reverse.
    let services: [any Service]
    /// Also `CacheLifecycle`'s, which closes it when the group stops; `discard` closes it when no group runs.
    private let upstream: UpstreamClient
    /// Also `CacheLifecycle`'s, which releases it once the last disk write is flushed; `discard` when no group runs.
    private let directoryLock: DataDirectoryLock?
    let logger: Logger

    /// - Parameters:
    ///   - clock: the cache's, the tiers' and the fetchers' wall clock.
    ///   - ticker: the process's monotonic clock, for every span and deadline the service keeps itself: the upstream
    ///     gates' budgets, pauses and circuits, fetch latencies, the pace of the memory reclaimer and the disk tier's
    ///     sweeps, the shared tier's waits and its Redis link's breakers and Sentinel watch.
    package static func build(
        _ configuration: UnicacheConfiguration, logger: Logger, clock: any WallClock,
        ticker: any Clock<Duration>
    ) async throws -> UnicacheService {
        let codec = try Self.entryCodec(configuration.encryption, logger: logger)
        // Before the disk tier keeps a quarter of the open-file limit's files open (the server would raise it later).
        FileDescriptorLimit.raiseToHardLimit()
        // Before the disk tier sweeps its folder: no second instance shares it.
        let directoryLock = try Self.lockDataDirectory(configuration.cache)
        let disk: DiskTier?
        do {
            disk = try await Self.openDiskTier(
                configuration.cache, codec: codec, clock: clock, ticker: ticker, logger: logger)
        } catch {
            directoryLock?.release()
            throw error
        }
        let shared = Self.sharedTier(configuration, codec: codec, clock: clock, ticker: ticker, logger: logger)
        let cache = UnifiedCacheManager(
            configuration: MemoryTierConfiguration(
                maxBytes: configuration.cache.memoryLimitBytes, maxEntries: configuration.cache.memoryEntries,
                eviction: configuration.cache.eviction),
            secondTier: disk, sharedTier: shared, clock: clock, ticker: ticker, userKeys: ResourceTable.userKeys,
            logger: logger,
            refreshInterval: configuration.cache.refreshInterval)
        let upstreams = configuration.upstreams
        let upstream = UpstreamClient(
            timeout: upstreams.timeout,
            connectionsPerUpstream: UpstreamDomain.allCases.map { upstreams.protection(for: $0).concurrency }.max()
                ?? UpstreamProtection.defaultConcurrency,
            clock: clock, ticker: ticker, logger: logger)
        let fetchers: [UpstreamDomain: any Fetcher]
        let access: AccessControl
        do {
            fetchers = try Self.makeFetchers(upstreams, client: upstream, clock: clock, ticker: ticker)
            // Who may read what (CONTRACT §8): a JWKS that cannot be read stops start-up here, before listening.
            access = try await AccessStartup.accessControl(
                configuration.access, adminToken: configuration.admin.token, client: upstream.httpClient,
                timeout: upstreams.timeout, host: configuration.server.host, wallClock: clock, clock: ticker,
                logger: logger)
        } catch {
            await upstream.shutdown()
            directoryLock?.release()
            throw error
        }
        var dependencies = AppDependencies(
            cache: cache, fetchers: fetchers, adminToken: configuration.admin.token, logger: logger, clock: clock,
            gateClock: ticker)
        dependencies.ttlOverrides = configuration.cache.ttlOverrides
        dependencies.protection = upstreams.protection
        dependencies.slotWait = configuration.server.requestTimeout
        dependencies.rateCounter = Self.fleetBudgets(shared)
        dependencies.userShare = upstreams.userShare
        dependencies.access = access
        dependencies.encryption = EncryptionStatus(primaryKey: codec.primaryKeyID)
        dependencies.facts = ServiceFacts(
            sources: Dictionary(uniqueKeysWithValues: UpstreamDomain.allCases.map { ($0, upstreams.source(for: $0)) }))
        let app = App.build(dependencies)
        let server = MicroHTTPServer(
            configuration: configuration.server, responder: app.router, ticker: ticker, logger: logger)

        var indexed: (@Sendable () async -> Void)?
        if let disk { indexed = { await disk.waitUntilIndexed() } }
        var services: [any Service] = [
            CacheLifecycle(cache: cache, upstream: upstream, directoryLock: directoryLock),
            MemoryReclaimer(
                cache: cache, memoryLimitBytes: configuration.cache.memoryLimitBytes, indexed: indexed, ticker: ticker,
                logger: logger),
        ]
        if let disk { services.append(DiskMaintenance(tier: disk)) }
        services.append(server)
        return UnicacheService(
            app: app, server: server, services: services, upstream: upstream, directoryLock: directoryLock,
            logger: logger)
    }

    /// For a caller that built the service and will not run its group (a test whose `server.start()` threw): closes
    /// what only the group's shutdown closes otherwise, the upstream client (async-http-client stops a debug process
    /// that drops a client still open) and the data dir's lock. Nothing else `build` makes holds a connection before
    /// the group starts it.
    package func discard() async {
        await upstream.shutdown()
        directoryLock?.release()
    }

    /// Runs the service from its configuration until SIGINT/SIGTERM (`unicache serve`).
    public static func run(
        configuration: UnicacheConfiguration, logger: Logger, clock: any WallClock, ticker: any Clock<Duration>
    ) async throws {
        MemoryReclaimer.limitArenas(logger: logger)
        if ProcessHardening.holdsSecrets(configuration) { ProcessHardening.forbidCoreDumps(logger: logger) }
        let service = try await Self.build(configuration, logger: logger, clock: clock, ticker: ticker)
        // After the checks that stop start-up with one line: the version and each domain's source (CONTRACT §11.1).
        logger.info("unicache \(UnicacheVersion.current)", metadata: configuration.sourcesMetadata)
        // The server binds (and logs `listening on …`) inside the group, after the group has trapped
        // SIGTERM/SIGINT: a signal right after the start-up line is a graceful shutdown, never a kill.
        do {
            try await service.serviceGroup(stopsOnSignals: true).run()
        } catch MicroHTTPServerError.invalidHost(let host) {
            // A name of the right form that does not resolve here: one line naming the flag, as a bad value's.
            throw ConfigurationError(
                source: "--host", value: host, isNot: "a name this machine resolves",
                form: "use an IP address or a host name that resolves here, e.g. 127.0.0.1 or 0.0.0.0")
        }
        logger.info("unicache stopped")
    }

    /// The group that runs every service until a graceful shutdown: SIGTERM or SIGINT when `stopsOnSignals`
    /// (`unicache serve`), else the group's `triggerGracefulShutdown()` (tests).
    package func serviceGroup(stopsOnSignals: Bool = false) -> ServiceGroup {
        ServiceGroup(
            configuration: .init(
                services: services, gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [], logger: logger))
    }
}

/// The cache's own start and stop: the shared tier starts delivering the fleet's events when the group starts;
/// at shutdown (after the server has drained) pending disk writes are flushed, the data dir's lock is released, the
/// shared tier disconnects and the upstream client closes its connections.
struct CacheLifecycle: Service {
    let cache: UnifiedCacheManager
    let upstream: UpstreamClient
    let directoryLock: DataDirectoryLock?

    func run() async throws {
        cache.startSharedTier()
        await withTaskGroup(of: Void.self) { group in
            // The shared tier's loops (subscription, membership, checkpoints) run in this service's task group.
            group.addTask { await cache.runSharedTier() }
            // Until graceful shutdown; a cancelled group stops the same way.
            try? await gracefulShutdown()
            // The fleet's last changes applied and the local tiers' writes done first: the shared tier's last
            // checkpoint claims only what reached them.
            await cache.prepareToStop()
            directoryLock?.release()
            group.cancelAll()
        }
        await upstream.shutdown()
    }
}

/// The disk tier's periodic sweep, as a service that stops with the others (paced by the tier's ticker).
struct DiskMaintenance: Service {
    let tier: DiskTier

    func run() async throws {
        await cancelWhenGracefulShutdown { await tier.run() }
    }
}

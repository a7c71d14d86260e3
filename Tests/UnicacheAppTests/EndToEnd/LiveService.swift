import Access
import AsyncHTTPClient
import Clocks
import Foundation
import Logging
import MicroHTTPServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import ServiceLifecycle
@testable import Settings
import TestSupport
import UnifiedCache
import UpstreamGate

@testable import UnicacheApp

/// The whole service on 127.0.0.1 (port 0) in front of a `TestUpstream`, with a real HTTP client.
/// Start it with `withService(LiveService.start(…))`, which stops it on every path.
struct LiveService: StoppableService {
    struct Answer: Sendable {
        var status: Int
        var headers: [String: String]
        var body: String
        /// The body as sent (a binary one does not survive `body`).
        var bytes: [UInt8] = []
        /// Every header field as received, in order (`headers` keeps one value per name).
        var fields: [(name: String, value: String)] = []
        func header(_ name: String) -> String? { headers[name.lowercased()] }
        /// Every value of the field `name`.
        func values(_ name: String) -> [String] {
            fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
    }

    let upstream: TestUpstream
    let app: App
    let port: Int
    let dataDir: String?
    /// Whether `stop` shuts the upstream down (an upstream shared by a fleet of test instances is not).
    private let ownsUpstream: Bool
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    private let client: HTTPClient
    private let stopped = NIOLockedValueBox(false)

    static let token = "live-token"

    /// `protection` and `gateClock`: the upstream gates' settings (CONTRACT §7) and clock; every domain fetches
    /// from the one test upstream, with its domain's service headers. `logger`: the service's, every part of it.
    /// `upstream`: one shared by several instances (started by the caller); `redis`: the fleet's shared tier.
    /// The service is built by `UnicacheService.build`, as `unicache serve` builds it.
    /// `keyFile`: the key ring sealing what the disk and shared tiers store (`--encryption-keys`, CONTRACT §9);
    /// `migrate`: plaintext values still read under it (`--encryption-migrate`).
    /// `domains`: those fetching from the test upstream (the others: `demo`'s, else none); `paths`: `--upstream-path`.
    /// `userShare`: `--upstream-user-share` (the contract's default when nil); `refreshInterval`: `--refresh-interval`;
    /// `clock`: the cache's wall clock; `port`: where it listens (0: a free port the kernel picks).
    static func start(
        dataDir: String? = nil, requestTimeout: Duration = .seconds(30), upstreamTimeout: Duration = .seconds(30),
        protection: [UpstreamDomain: UpstreamProtection] = [:], gateClock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "live-test"), upstream shared: (TestUpstream, port: Int)? = nil,
        redis: SharedTierSettings? = nil, memory: MemoryTierConfiguration = MemoryTierConfiguration(),
        access: AccessSettings = AccessSettings(), host: String = "127.0.0.1", ownsUpstream: Bool? = nil,
        keyFile: String? = nil, migrate: Bool = false, domains: Set<UpstreamDomain> = Set(UpstreamDomain.allCases),
        demo: Set<UpstreamDomain>? = nil, paths: [String: UpstreamPathTemplate] = [:], userShare: UserShare? = nil,
        refreshInterval: Duration = .zero, clock: any WallClock = SystemWallClock(), port listening: Int = 0
    ) async throws -> LiveService {
        let upstream = shared?.0 ?? TestUpstream()
        let upstreamPort: Int
        if let shared { upstreamPort = shared.port } else { upstreamPort = try await upstream.start() }
        let baseURL = TestUpstream.baseURL(port: upstreamPort)
        var configuration = UnicacheConfiguration(
            server: ServerSettings(host: host, port: listening, requestTimeout: requestTimeout, requestIDs: true),
            cache: CacheSettings(
                memoryLimitBytes: memory.maxBytes, memoryEntries: memory.maxEntries, dataDir: dataDir ?? "",
                diskLimitBytes: dataDir == nil ? 0 : 64 << 20),
            // Generous upstream timeout: no live test is about it, and under ThreadSanitizer on 2 cores a first
            // fetch took longer than the 2 s this used to be.
            upstreams: UpstreamSettings(
                urls: Dictionary(uniqueKeysWithValues: domains.map { ($0, baseURL) }),
                timeout: upstreamTimeout, protection: protection, demo: demo, paths: paths),
            admin: AdminSettings(token: token),
            shared: redis ?? SharedTierSettings(), access: access, encryption: EncryptionSettings(keyFile: keyFile, migrate: migrate))
        if let userShare { configuration.upstreams.userShare = userShare }
        configuration.cache.refreshInterval = refreshInterval
        let ownsUpstream = ownsUpstream ?? (shared == nil)
        let application: UnicacheService
        let port: Int
        do {
            application = try await UnicacheService.build(configuration, logger: logger, clock: clock, ticker: gateClock)
            do {
                port = try application.server.start()
            } catch {
                await application.discard()
                throw error
            }
        } catch {
            if ownsUpstream { await upstream.shutdown() }
            throw error
        }
        let group = application.serviceGroup()
        let running = Task { try await group.run() }
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        return LiveService(
            upstream: upstream, app: application.app, port: port, dataDir: dataDir, ownsUpstream: ownsUpstream,
            group: group, running: running, client: client)
    }

    func request(
        _ method: NIOHTTP1.HTTPMethod = .GET, _ path: String, headers: [(String, String)] = [], body: String? = nil,
        bytes: [UInt8]? = nil, admin: Bool = false
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if admin { request.headers.add(name: "Authorization", value: "Bearer \(Self.token)") }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        if let bytes { request.body = .bytes(ByteBuffer(bytes: bytes)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        var collected = try await response.body.collect(upTo: 8 << 20)
        var fields: [String: String] = [:]
        for header in response.headers { fields[header.name.lowercased()] = header.value }
        let bytes = collected.getBytes(at: collected.readerIndex, length: collected.readableBytes) ?? []
        return Answer(
            status: Int(response.status.code), headers: fields,
            body: collected.readString(length: collected.readableBytes) ?? "", bytes: bytes,
            fields: response.headers.map { ($0.name, $0.value) })
    }

    /// Shuts the client and the service down (and the upstream it owns); later calls do nothing.
    func stop() async {
        guard stopped.withLockedValue({ stopped in defer { stopped = true }; return !stopped }) else { return }
        try? await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        if ownsUpstream { await upstream.shutdown() }
    }
}

import AsyncHTTPClient
import DiskTier
import Foundation
import Logging
import MicroHTTPServer
import NIOCore
import NIOHTTP1
import RedisClient
import RedisTier
import Sealing
import ServiceLifecycle
import UnifiedCache

@testable import UnicacheApp

/// The whole service on 127.0.0.1 (port 0) in front of a `TestUpstream`, with a real HTTP client.
final class LiveService: Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: [String: String]
        var body: String
        /// The body as sent (a binary one does not survive `body`).
        var bytes: [UInt8] = []
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    let upstream: TestUpstream
    let app: App
    let port: Int
    let dataDir: String?
    /// Whether `stop` shuts the upstream down (an upstream shared by a fleet of test instances is not).
    private let ownsUpstream: Bool
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    private let upstreamClient: UpstreamClient
    private let client: HTTPClient

    static let token = "live-token"

    /// `protection` and `gateClock`: the upstream gates' settings (CONTRACT §7) and clock; every domain fetches
    /// from the one test upstream, with its domain's service headers. `logger`: the service's, every part of it.
    /// `upstream`: one shared by several instances (started by the caller); `redis`: the fleet's shared tier.
    /// `keyRing`: seals what the disk and shared tiers store (CONTRACT §9).
    static func start(
        dataDir: String? = nil, requestTimeout: Duration = .seconds(30), upstreamTimeout: Duration = .seconds(30),
        protection: [UpstreamDomain: UpstreamProtection] = [:], gateClock: any GateClock = SystemGateClock(),
        logger: Logger = Logger(label: "live-test"), upstream shared: (TestUpstream, port: Int)? = nil,
        redis: RedisTierConfiguration? = nil, memory: MemoryTierConfiguration = MemoryTierConfiguration(),
        keyRing: KeyRing? = nil
    ) async throws -> LiveService {
        let upstream = shared?.0 ?? TestUpstream()
        let upstreamPort: Int
        if let shared { upstreamPort = shared.port } else { upstreamPort = try await upstream.start() }
        // Generous: no live test is about the upstream timeout, and under ThreadSanitizer on 2 cores a first fetch
        // took longer than the 2 s this used to be.
        let upstreamClient = UpstreamClient(
            timeout: upstreamTimeout,
            connectionsPerUpstream: protection.values.map(\.concurrency).max() ?? UpstreamProtection.defaultConcurrency,
            logger: logger)
        var fetchers: [UpstreamDomain: HTTPUpstreamFetcher] = [:]
        for domain in UpstreamDomain.allCases {
            fetchers[domain] = try upstreamClient.fetcher(
                baseURL: TestUpstream.baseURL(port: upstreamPort), headers: protection[domain]?.headers ?? [])
        }
        let codec = EntryCodec(keyRing: keyRing)
        var disk: DiskTier?
        if let dataDir {
            disk = try await DiskTier.open(DiskTierConfiguration(directory: dataDir, limitBytes: 64 << 20), codec: codec)
        }
        let sharedTier = redis.map { RedisSharedTier(configuration: $0, codec: codec, logger: logger) }
        let rateCounter = UnicacheService.fleetBudgets(sharedTier)
        let cache = UnifiedCacheManager(configuration: memory, secondTier: disk, sharedTier: sharedTier, logger: logger)
        let app = App.build(
            cache: cache, fetcher: { fetchers[$0]! }, adminToken: token, logger: logger, protection: protection,
            slotWait: upstreamTimeout, gateClock: gateClock, rateCounter: rateCounter,
            encryption: EncryptionStatus(primaryKey: codec.primaryKeyID))
        let server = MicroHTTPServer(
            configuration: MicroHTTPServerConfiguration(
                host: "127.0.0.1", port: 0, requestTimeout: requestTimeout, requestIDs: true),
            responder: app.router, logger: logger)
        let port = try server.start()
        let group = ServiceGroup(configuration: .init(services: [server], logger: logger))
        let running = Task { try await group.run() }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        return LiveService(
            upstream: upstream, app: app, port: port, dataDir: dataDir, ownsUpstream: shared == nil, group: group,
            running: running, upstreamClient: upstreamClient, client: client)
    }

    private init(
        upstream: TestUpstream, app: App, port: Int, dataDir: String?, ownsUpstream: Bool, group: ServiceGroup,
        running: Task<Void, any Error>, upstreamClient: UpstreamClient, client: HTTPClient
    ) {
        self.upstream = upstream
        self.app = app
        self.port = port
        self.dataDir = dataDir
        self.ownsUpstream = ownsUpstream
        self.group = group
        self.running = running
        self.upstreamClient = upstreamClient
        self.client = client
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
            body: collected.readString(length: collected.readableBytes) ?? "", bytes: bytes)
    }

    func stop() async {
        try? await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        await app.cache.flush()
        await app.cache.stopSharedTier()
        await upstreamClient.shutdown()
        if ownsUpstream { await upstream.shutdown() }
    }
}

import Foundation
import Redis
import TestSupport

/// A primary, a replica and three `redis-server --sentinel` watching them as `unicache` (quorum 2, down after 1 s,
/// failover timeout 5 s): a killed primary is replaced in about 2–4 s. Every process is stopped by its PID.
///
/// A Sentinel that misses its timer for 2 s enters TILT mode and acts on nothing for 30 s. It fsyncs its config file
/// at each new epoch and vote, and on a disk busy with the suite's other tests such an fsync took 2.4 s: the failover
/// came 30 s late, or after the test's time limit. So the servers' folder is on tmpfs when there is one, and TILT
/// lasts 3 s (still three ping periods for a Sentinel to see the group afresh before it acts).
public final class SentinelGroup: StoppableService {
    public static let masterName = "unicache"
    public let primary: RedisServerProcess
    public let replica: RedisServerProcess
    public let sentinels: [RedisServerProcess]
    /// Where the servers keep their files (removed by `stop()`).
    public var folder: URL { temporary.url }
    private let temporary: TemporaryFolder

    private init(
        primary: RedisServerProcess, replica: RedisServerProcess, sentinels: [RedisServerProcess], folder: TemporaryFolder
    ) {
        self.primary = primary
        self.replica = replica
        self.sentinels = sentinels
        temporary = folder
    }

    /// `redis-sentinel://` for this group (database 0, no password).
    public var url: String {
        "redis-sentinel://" + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") + "?master=\(Self.masterName)"
    }

    public static func start() async throws -> SentinelGroup {
        let temporary = try TemporaryFolder("unicache-sentinel", under: TemporaryFolder.memoryBacked), folder = temporary.url
        var started: [RedisServerProcess] = []
        do {
            // Their own folder: a full resynchronisation writes dump.rdb into the working directory.
            let primary = try await RedisServerProcess.start(directory: folder.path)
            started.append(primary)
            let replica = try await RedisServerProcess.start(
                directory: folder.path, extraArguments: ["--replicaof", "127.0.0.1", String(primary.port)])
            started.append(replica)
            var sentinels: [RedisServerProcess] = []
            for _ in 0..<3 {
                let sentinel = try await RedisServerProcess.start(readyMarker: "+monitor master") { port in
                    let file = folder.appendingPathComponent("sentinel-\(port).conf")
                    try """
                    port \(port)
                    bind 127.0.0.1
                    daemonize no
                    dir \(folder.path)
                    sentinel monitor \(masterName) 127.0.0.1 \(primary.port) 2
                    sentinel down-after-milliseconds \(masterName) 1000
                    sentinel failover-timeout \(masterName) 5000

                    """.write(to: file, atomically: true, encoding: .utf8)
                    return [file.path, "--sentinel"]
                }
                started.append(sentinel)
                sentinels.append(sentinel)
                try await shortenTilt(sentinel)
            }
            return SentinelGroup(primary: primary, replica: replica, sentinels: sentinels, folder: temporary)
        } catch {
            for server in started { await server.stop() }
            temporary.remove()
            throw error
        }
    }

    /// `SENTINEL DEBUG tilt-period 3000` (Redis 7.0's only way to set it).
    private static func shortenTilt(_ sentinel: RedisServerProcess) async throws {
        let node = RedisNodeClient(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: sentinel.port), timeout: .seconds(5), clock: ContinuousClock(),
            size: 1)
        defer { node.shutdown() }
        guard case .status("OK") = try await node.send(RedisCommand("SENTINEL", "DEBUG", "tilt-period", "3000")) else {
            throw RedisProcessError("the Sentinel on \(sentinel.port) refused SENTINEL DEBUG tilt-period")
        }
    }

    /// True once every Sentinel knows the replica and the two other Sentinels and the replica is in sync: only then
    /// can a failover happen (polled, bounded).
    public func waitUntilReadyForFailover(within bound: Duration = .seconds(60)) async throws -> Bool {
        func ask(_ server: RedisServerProcess, _ commands: [RedisCommand]) async -> [RedisReply]? {
            let node = RedisNodeClient(endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port), timeout: .seconds(5), clock: ContinuousClock(), size: 1)
            defer { node.shutdown() }
            return try? await node.send(commands)
        }
        return await poll(within: bound) {
            for sentinel in sentinels {
                let replies = await ask(sentinel, [
                    RedisCommand("SENTINEL", "replicas", Self.masterName), RedisCommand("SENTINEL", "sentinels", Self.masterName),
                ])
                guard let replies, case .array(let replicas) = replies[0], replicas.count == 1,
                    case .array(let others) = replies[1], others.count == 2
                else { return false }
            }
            guard let role = await ask(replica, [.role])?.first, case .array(let parts) = role, parts.count == 5
            else { return false }
            return parts[3].text == "connected"
        }
    }

    /// True once the replica has acknowledged every write the primary took so far (`WAIT 1`): Redis replicates
    /// asynchronously, so a write acknowledged just before a failover may be lost on the promoted replica.
    public func replicated(within bound: Duration = .seconds(5)) async -> Bool {
        let node = RedisNodeClient(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: primary.port), timeout: bound + .seconds(1), clock: ContinuousClock(), size: 1)
        defer { node.shutdown() }
        let milliseconds = bound.components.seconds * 1000 + bound.components.attoseconds / 1_000_000_000_000_000
        guard case .integer(let replicas)? = try? await node.send(RedisCommand("WAIT", "1", "\(milliseconds)")) else { return false }
        return replicas >= 1
    }

    /// The end of each server's log, for a failing test's message.
    public var logs: String {
        zip(["primary", "replica"] + sentinels.indices.map { "sentinel \($0)" }, [primary, replica] + sentinels)
            .map { name, server in "\(name) (\(server.port)) logged:\n\(server.output(last: 3000))" }
            .joined(separator: "\n")
    }

    public func stop() async {
        for server in sentinels + [replica, primary] { await server.stop() }
        temporary.remove()
    }
}

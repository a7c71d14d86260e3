import Foundation
import RedisNIO
import RedisTestSupport
import Testing

@Suite("Sentinel discovery and failover")
struct RedisSentinelTests {
    @Test(.timeLimit(.minutes(2)))
    func discoveryFindsThePrimaryAndFollowsAFailover() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withServers { group in
            // Their own folder: a full resynchronisation writes dump.rdb into the working directory.
            let primary = try await group.start(["--dir", folder.path])
            let replica = try await group.start(["--dir", folder.path, "--replicaof", "127.0.0.1", String(primary.port)])
            var sentinels: [RedisServerProcess] = []
            for _ in 0..<3 {
                let sentinel = try await group.start(readyMarker: "+monitor master") { port in
                    let file = folder.appendingPathComponent("sentinel-\(port).conf")
                    try """
                    port \(port)
                    bind 127.0.0.1
                    daemonize no
                    sentinel monitor unicache 127.0.0.1 \(primary.port) 2
                    sentinel down-after-milliseconds unicache 1000
                    sentinel failover-timeout unicache 5000

                    """.write(to: file, atomically: true, encoding: .utf8)
                    return [file.path, "--sentinel"]
                }
                sentinels.append(sentinel)
            }
            // The first address refuses connections: discovery goes on to the next and moves it to the front.
            let refused = try ReservedPort()
            defer { refused.release() }
            let addresses = [RedisURL.Address(host: "127.0.0.1", port: refused.port)]
                + sentinels.map { RedisURL.Address(host: "127.0.0.1", port: $0.port) }
            let sentinel = RedisSentinel(
                sentinels: addresses, masterName: "unicache",
                sentinelTemplate: RedisConnectionConfiguration(host: "", commandTimeout: .seconds(5), connectTimeout: .seconds(5)))
            let node: @Sendable (RedisURL.Address) -> RedisConnectionConfiguration = { address in
                RedisConnectionConfiguration(host: address.host, port: address.port, commandTimeout: .seconds(5), connectTimeout: .seconds(5))
            }

            #expect(try await sentinel.primaryAddress() == RedisURL.Address(host: "127.0.0.1", port: primary.port))
            #expect(sentinel.order.first == addresses[1])
            let first = try await RedisConnection.connect(node(.init(host: "127.0.0.1", port: primary.port)))
            #expect(try await first.send(["SET", "unicache:before", "1"]) == .simpleString("OK"))
            await first.close()

            // A failover needs every Sentinel to know the replica and the other Sentinels, and the replica in sync.
            let ready = try await poll(within: .seconds(60)) {
                for each in sentinels {
                    guard let connection = try? await RedisConnection.connect(configuration(each)) else { return false }
                    let replies = try? await connection.send([
                        ["SENTINEL", "replicas", "unicache"], ["SENTINEL", "sentinels", "unicache"],
                    ])
                    await connection.close()
                    guard let replies, replies[0].array?.count == 1, replies[1].array?.count == 2 else { return false }
                }
                guard let connection = try? await RedisConnection.connect(configuration(replica)) else { return false }
                let role = try? await connection.send(["ROLE"])
                await connection.close()
                return role?.array?.count == 5 && role?.array?[3].string == "connected"
            }
            #expect(ready, "the Sentinel group never saw the replica in sync")
            guard ready else { return }

            let watcher = try await sentinel.watch()
            await primary.kill()
            var switches = watcher.switches.makeAsyncIterator()
            let announced = await switches.next()
            #expect(announced == RedisSentinelSwitch(
                masterName: "unicache", old: .init(host: "127.0.0.1", port: primary.port),
                new: .init(host: "127.0.0.1", port: replica.port)))
            await watcher.close()

            let promoted = try await sentinel.connectToPrimary(node)
            #expect(promoted.configuration.port == replica.port)
            #expect(try await promoted.send(["GET", "unicache:before"]) == .bulkString(Array("1".utf8)))
            await promoted.close()
        }
    }
}

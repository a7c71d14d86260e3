import AsyncHTTPClient
import Foundation
import NIOCore
import RedisTestSupport
import Settings
import Testing
import TestSupport

@testable import UnicacheApp

/// CONTRACT §6.6 with the real executable: an instance killed with SIGKILL in the middle of catching up with the
/// fleet's log has saved no more than it applied, so the next start applies the rest and serves no replaced value.
@Suite(.serialized, .timeLimit(.minutes(5)), .executableBuilt)
struct FleetCrashTests {
    @Test func aCatchUpKilledMidwayResumesWithoutSkipping() async throws {
        try await withService(Fleet.start(instances: 1)) { fleet in
            let other = fleet.instances[0]
            try await withTemporaryFolder("at-rest") { dataDir in
                let checkpoint = dataDir + "/" + UnicacheService.checkpointFileName
                let client = HTTPClient.shared  // never shut down: a throw below cannot leave a client to crash in its deinit
                let arguments = [
                    "--disk-limit", "64MiB", "--data-dir", dataDir, "--redis", "redis://127.0.0.1:\(fleet.redis.port)",
                    "--redis-prefix", fleet.prefix, "--redis-timeout", "\(fleet.timeout.components.seconds)s",
                    "--admin-token", FullDiskTests.token, "--log-format", "json",
                ]
                let keys = (0..<200).map { "crash\($0)" }

                var first = try await ExecutableTests.Service.start(arguments)
                let firstPort = try #require(first.port, "no start-up line in: \(first.log)")
                try await Self.waitUntilInStep(client, port: firstPort)
                for key in keys {
                    #expect(try await FullDiskTests.send(client, port: firstPort, .PUT, key: key, body: Array("v1".utf8)).status == 201)
                }
                #expect(await first.stop() == 0)
                let saved = try String(contentsOfFile: checkpoint, encoding: .utf8)

                // While it is away every key is replaced, between other changes, so that catching up takes a while.
                for chunk in 0..<10 {
                    for key in keys[(chunk * 20)..<(chunk * 20 + 20)] {
                        #expect(try await other.request(.PUT, "/v1/cache/\(key)", body: "v2", admin: true).status == 200)
                    }
                    _ = try await redisCommand(fleet.redis,
                        "EVAL", "for i = 1, 8000 do redis.call('XADD', KEYS[1], '*', 'm', 'v2|elsewhere|key|filler' .. i) end",
                        "1", fleet.prefix + "#log")
                }
                let logEnd = try await redisCommand(fleet.redis, "XREVRANGE", fleet.prefix + "#log", "+", "-", "COUNT", "1")

                // Killed as soon as its checkpoint moved: part of the log applied, the rest not.
                let second = try await ExecutableTests.Service.start(arguments)
                await waitUntil("the catch-up saved a first batch", within: .seconds(60)) {
                    (try? String(contentsOfFile: checkpoint, encoding: .utf8)) != saved
                }
                await second.killAndWait()
                let savedWhenKilled = try String(contentsOfFile: checkpoint, encoding: .utf8)

                var third = try await ExecutableTests.Service.start(arguments)
                let thirdPort = try #require(third.port, "no start-up line in: \(third.log)")
                try await Self.waitUntilInStep(client, port: thirdPort)
                var stale: [String] = []
                for key in keys where try await FullDiskTests.send(client, port: thirdPort, .GET, key: key).body != Array("v2".utf8) {
                    stale.append(key)
                }
                let shared = try await Self.shared(client, port: thirdPort)
                #expect(await third.stop() == 0)
                await fleet.stop()

                #expect(second.process.terminationReason == .uncaughtSignal)
                // Mid-way: the killed instance had saved a position, and not the log's end.
                if case .array(let entries) = logEnd, case .array(let last)? = entries.first, let id = last.first?.text {
                    #expect(!savedWhenKilled.contains(id))
                }
                #expect(stale.isEmpty, "served a replaced value: \(stale)")
                #expect(shared["resets"] as? Int == 0)
                #expect((shared["replayed"] as? Int ?? 0) > 0)
            }
        }
    }

    /// `/stats` `shared`.
    static func shared(_ client: HTTPClient, port: Int) async throws -> [String: Any] {
        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/stats"), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        let document = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return document?["shared"] as? [String: Any] ?? [:]
    }

    static func waitUntilInStep(_ client: HTTPClient, port: Int) async throws {
        try await waitUntil("the instance is in step with the fleet", within: .seconds(60)) {
            try await shared(client, port: port)["connected"] as? Bool == true
        }
    }
}

import Foundation
import Redis
import RedisTestSupport
import RedisTier
@testable import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// CONTRACT §9.3 end to end, with restarts over one data folder, and over one Redis: entries written in the clear,
/// then under k1, are read after k2 is put first (a migration: `--encryption-migrate`); `POST /v1/admin/rekey` moves
/// them all to k2; then k1 leaves the ring and everything is still served, without the migration.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RotationTests {
    let prefix = "rot:"

    func start(_ redis: RedisServerProcess?, dataDir: String?, ring: String?, migrate: Bool = false) async throws
        -> LiveService
    {
        try await LiveService.starting(dataDir: dataDir, redis: redis, prefix: prefix, keyFile: ring, migrate: migrate)
    }

    func rekey(_ service: LiveService) async throws -> [String: Int] {
        let answer = try await service.request(.POST, "/v1/admin/rekey", admin: true)
        #expect(answer.status == 200, "\(answer.body)")
        return try JSONDecoder().decode([String: Int].self, from: Data(answer.body.utf8))
    }

    /// Entries written by a sequence of instances with one key ring after another, each started when the previous
    /// one stopped; every instance reads back what all of them wrote.
    func rotate(redis: RedisServerProcess?, dataDir: String?) async throws {
        try await withService(start(redis, dataDir: dataDir, ring: nil)) { plain in
            #expect(try await plain.request(.PUT, "/v1/cache/doc:plain", body: "written in the clear", admin: true).status == 201)
            await plain.stop()

            // A migration (`--encryption-migrate`): what was written in the clear is still read, until a rekey seals it.
            try await withService(start(redis, dataDir: dataDir, ring: try AtRest.keyFile("k1"), migrate: true)) { first in
                #expect(try await first.request(.GET, "/v1/cache/doc:plain", admin: true).body == "written in the clear")
                #expect(try await first.request(.PUT, "/v1/cache/doc:one", body: "sealed under k1", admin: true).status == 201)
                await first.stop()

                try await withService(start(redis, dataDir: dataDir, ring: try AtRest.keyFile("k2", "k1"), migrate: true)) { rotated in
                    #expect(try await rotated.request(.GET, "/v1/cache/doc:one", admin: true).body == "sealed under k1")
                    // Two entries, none under k2 yet.
                    #expect(try await rekey(rotated) == ["rekeyed": 2, "current": 0, "undecryptable": 0])
                    #expect(try await rekey(rotated) == ["rekeyed": 0, "current": 2, "undecryptable": 0])
                    await rotated.stop()

                    try await withService(start(redis, dataDir: dataDir, ring: try AtRest.keyFile("k2"))) { onlyNew in
                        for (key, body) in [("doc:plain", "written in the clear"), ("doc:one", "sealed under k1")] {
                            let answer = try await onlyNew.request(.GET, "/v1/cache/\(key)", admin: true)
                            #expect(answer.body == body)
                            #expect(answer.status == 200)
                        }
                        let statistics = onlyNew.app.cache.statistics()
                        #expect((statistics.secondTier?.undecryptable ?? 0) + (statistics.shared?.undecryptable ?? 0) == 0)
                        await onlyNew.stop()

                        // An instance left with the old key only cannot open what the rekey re-sealed.
                        try await withService(start(redis, dataDir: dataDir, ring: try AtRest.keyFile("k1"))) { stale throws in
                            #expect(try await stale.request(.GET, "/v1/cache/doc:plain", admin: true).status == 404)
                            let counted = stale.app.cache.statistics()
                            #expect((counted.secondTier?.undecryptable ?? 0) + (counted.shared?.undecryptable ?? 0) == 1)
                            await stale.stop()
                        }
                    }
                }
            }
        }
    }

    /// The disk tier across restarts (no Redis: a restart that finds the fleet's position unknown resets the local
    /// tiers, CONTRACT §6.6).
    @Test func rotationOnDiskAcrossRestarts() async throws {
        let folder = try TemporaryFolder("at-rest"), dataDir = folder.path
        defer { folder.remove() }
        try await rotate(redis: nil, dataDir: dataDir)
    }

    /// The shared tier across restarts (no disk: every read comes from Redis).
    @Test func rotationInRedisAcrossRestarts() async throws {
        let redis = try await RedisServerProcess.start()
        try await rotate(redis: redis, dataDir: nil)
        await redis.stop()
    }

    @Test func rekeyNeedsARingAndTheToken() async throws {
        try await withService(LiveService.start()) { service in
            let unauthorized = try await service.request(.POST, "/v1/admin/rekey")
            let withoutRing = try await service.request(.POST, "/v1/admin/rekey", admin: true)
            await service.stop()
            #expect(unauthorized.status == 401)
            #expect(withoutRing.status == 409)
            #expect(withoutRing.header("Content-Type") == "application/problem+json")
        }
    }

    @Test func rekeyWhileRedisIsDownDoesTheDiskAndAnswers503() async throws {
        let redis = try await RedisServerProcess.start()
        let folder = try TemporaryFolder("at-rest"), dataDir = folder.path
        defer { folder.remove() }
        try await withService(start(redis, dataDir: dataDir, ring: try AtRest.keyFile("k1"))) { service in
            #expect(try await service.request(.PUT, "/v1/cache/doc:a", body: "a", admin: true).status == 201)
            await redis.kill()
            let answer = try await service.request(.POST, "/v1/admin/rekey", admin: true)
            await service.stop()
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") != nil)
            #expect(answer.body.contains("1 current"))
        }
    }
}

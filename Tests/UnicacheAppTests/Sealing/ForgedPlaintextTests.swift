import Crypto
import Foundation
import Redis
import RedisTestSupport
import RedisTier
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

/// CONTRACT §9.2 end to end: with a key ring, a value written in the clear into the data folder or into Redis (which
/// needs no secret to forge) is never served — absent, deleted, counted undecryptable, never a 5xx — and
/// `POST /v1/admin/rekey` deletes and counts it instead of sealing the forgery into a genuine entry. Started with
/// `--encryption-migrate`, such values are read and the rekey seals them.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ForgedPlaintextTests {
    let prefix = "forged:"
    static let forgedBody = #"{"plan":"forged by whoever can write to the store"}"#

    /// A read-through entry of carol's subscription with the forger's body, in the clear.
    static func forgedSubscription() -> [UInt8] {
        let now = Date()
        return EntryFormat.encode(
            CacheEntry(
                key: "subscription:carol", namespace: "subscription", user: "carol", body: Array(forgedBody.utf8),
                contentType: "application/json", etag: "\"forged\"", storedAt: now, expiresAt: now + 3600,
                staleUntil: now + 3600))
    }

    /// A raw-cache entry in the clear.
    static func plainRaw(_ key: String, body: String) -> [UInt8] {
        let now = Date()
        return EntryFormat.encode(
            CacheEntry(
                key: key, namespace: "raw", user: nil, body: Array(body.utf8), contentType: "text/plain",
                etag: "\"plain\"", storedAt: now, expiresAt: now + 3600, staleUntil: now + 3600))
    }

    /// Where the disk tier keeps `key`'s file: `<root>/a/bc/<SHA-256 of the key in hex>`.
    static func diskPath(_ dataDir: String, _ key: String) -> String {
        let name = SHA256.hash(data: Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
        return "\(dataDir)/\(name.prefix(1))/\(name.dropFirst().prefix(2))/\(name)"
    }

    /// What a forged entry gives: the upstream's answer, not the forged body and not from `tier`; the forgery
    /// counted once as undecryptable, never as corrupt.
    static func expectNotServed(
        _ answer: LiveService.Answer, from tier: String, undecryptable: Int?, corrupt: Int?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(answer.status == 200, sourceLocation: sourceLocation)
        #expect(answer.body != forgedBody, sourceLocation: sourceLocation)
        #expect(answer.header("X-Cache-Tier") != tier, sourceLocation: sourceLocation)
        #expect(undecryptable == 1, sourceLocation: sourceLocation)
        #expect(corrupt == 0, sourceLocation: sourceLocation)
    }

    func set(_ redis: RedisServerProcess, _ key: String, _ value: [UInt8]) async throws {
        #expect(try await redisCommand(redis, [Array("SET".utf8), Array((prefix + key).utf8), value]) == .status("OK"))
    }

    func rekey(_ service: LiveService) async throws -> [String: Int] {
        let answer = try await service.request(.POST, "/v1/admin/rekey", admin: true)
        #expect(answer.status == 200, "\(answer.body)")
        return try JSONDecoder().decode([String: Int].self, from: Data(answer.body.utf8))
    }

    @Test func aForgedPlaintextValueInRedisIsNotServedUnderAKeyRing() async throws {
        let redis = try await RedisServerProcess.start()
        try await withService(LiveService.starting(redis: redis, prefix: prefix, keyFile: try AtRest.keyFile("k1"))) { service in
            try await set(redis, "subscription:carol", Self.forgedSubscription())
            let answer = try await service.request(.GET, "/v1/users/carol/subscription")
            let shared = service.app.cache.statistics().shared
            Self.expectNotServed(answer, from: "shared", undecryptable: shared?.undecryptable, corrupt: shared?.corrupt)
            // Deleted, then replaced (behind the answer) by the upstream's answer, sealed.
            try await waitUntil("the upstream's answer is sealed in Redis") {
                guard case .string(let value) = try await redisCommand(redis, "GET", prefix + "subscription:carol") else {
                    return false
                }
                return try EntryFormat.decodeHeader(value).isSealed
            }
            await redis.stop()
        }
    }

    @Test func aForgedPlaintextFileIsNotServedUnderAKeyRing() async throws {
        let folder = try TemporaryFolder("at-rest"), dataDir = folder.path
        defer { folder.remove() }
        let path = Self.diskPath(dataDir, "subscription:carol")
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(Self.forgedSubscription()).write(to: URL(fileURLWithPath: path))
        try await withService(LiveService.starting(dataDir: dataDir, prefix: prefix, keyFile: try AtRest.keyFile("k1"))) { service in
            let answer = try await service.request(.GET, "/v1/users/carol/subscription")
            let disk = service.app.cache.statistics().secondTier
            Self.expectNotServed(answer, from: "disk", undecryptable: disk?.undecryptable, corrupt: disk?.corrupt)
        }
    }

    @Test func rekeyWithoutAMigrationDeletesAndCountsPlaintextValues() async throws {
        let redis = try await RedisServerProcess.start()
        try await withService(LiveService.starting(redis: redis, prefix: prefix, keyFile: try AtRest.keyFile("k1"))) { service in
            try await set(redis, "doc:plain", Self.plainRaw("doc:plain", body: "in the clear"))
            #expect(try await rekey(service) == ["rekeyed": 0, "current": 0, "undecryptable": 1])
            let shared = service.app.cache.statistics().shared
            let read = try await service.request(.GET, "/v1/cache/doc:plain", admin: true)
            await service.stop()
            #expect(shared?.undecryptable == 1)
            #expect(read.status == 404)
            #expect(try await redisCommand(redis, "EXISTS", prefix + "doc:plain") == .integer(0))
            await redis.stop()
        }
    }

    @Test func aMigrationReadsPlaintextValuesAndRekeySealsThem() async throws {
        let redis = try await RedisServerProcess.start()
        try await set(redis, "doc:plain", Self.plainRaw("doc:plain", body: "in the clear"))
        try await set(redis, "doc:later", Self.plainRaw("doc:later", body: "sealed by the rekey"))
        try await withService(LiveService.starting(
            redis: redis, prefix: prefix, keyFile: try AtRest.keyFile("k1"), migrate: true)) { migrating in
            let read = try await migrating.request(.GET, "/v1/cache/doc:plain", admin: true)
            #expect(read.status == 200)
            #expect(read.body == "in the clear")
            #expect(try await rekey(migrating) == ["rekeyed": 2, "current": 0, "undecryptable": 0])
            await migrating.stop()
            for key in ["doc:plain", "doc:later"] {
                guard case .string(let value) = try await redisCommand(redis, "GET", prefix + key) else {
                    Issue.record("no value for \(key) in Redis")
                    continue
                }
                #expect(try EntryFormat.decodeHeader(value).isSealed)
            }
            // Sealed now: an instance without the migration serves them.
            try await withService(LiveService.starting(redis: redis, prefix: prefix, keyFile: try AtRest.keyFile("k1"))) { strict in
                let later = try await strict.request(.GET, "/v1/cache/doc:later", admin: true)
                let undecryptable = strict.app.cache.statistics().shared?.undecryptable
                await strict.stop()
                await redis.stop()
                #expect(later.body == "sealed by the rekey")
                #expect(undecryptable == 0)
            }
        }
    }
}

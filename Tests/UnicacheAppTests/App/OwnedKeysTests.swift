import DiskTier
import Foundation
import HTTPRouting
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

/// The read-through routes own their keys (CONTRACT §3's key table, §14.3): the key shapes the docs give are the keys
/// the routes make, a raw PUT cannot take one, and erasure of a user removes every entry whose key names the user.
@Suite(.timeLimit(.minutes(2))) struct OwnedKeysTests {
    /// Each namespace's route with values of its own, and those values by placeholder.
    static let reads: [(namespace: String, target: String, values: [String: String])] = [
        ("health.today", "/health/today?tz=Europe/Berlin", ["date": "2026-11-22"]),
        ("health.averages", "/health/averages/tuesday", ["weekday": "3"]),
        ("health.metrics", "/health/metrics/rhr/2026-11-20", ["metric": "rhr", "date": "2026-11-20"]),
        ("wellness", "/wellness?days=7", ["days": "7"]),
        ("scores", "/scores/2026-11-19", ["date": "2026-11-19"]),
        ("activities", "/activities?types=Run,ride,run&days=14", ["types": "ride,run", "days": "14"]),
        ("streams", "/activities/42/streams", ["id": "42"]),
        ("subscription", "/subscription", [:]),
        ("profile", "/profile", [:]),
        ("progress.history", "/progress/history", [:]),
        ("progress.streak", "/progress/streak", [:]),
        ("progress.today", "/progress/answered-today?tz=Pacific/Kiritimati", ["date": "2026-11-23"]),
        ("progress.any", "/progress/answered-any", [:]),
    ]

    @Test func theKeyShapesAreTheKeysTheRoutesMake() async throws {
        let h = AppHarness()
        #expect(Set(ResourceCatalog.keyShapes.keys) == Set(ResourceTable.rows.map(\.namespace)))
        #expect(Dictionary(uniqueKeysWithValues: ResourceTable.rows.map { ($0.namespace, $0.domain) }) == ResourceCatalog.domains)
        #expect(Set(Self.reads.map(\.namespace)) == Set(ResourceTable.rows.map(\.namespace)))
        for read in Self.reads {
            #expect(try await h.send(.get, "/v1/users/alice" + read.target).status == 200, "\(read.target)")
        }
        let listing = try await h.send(.get, "/v1/cache?prefix=", admin: true)
        let entries = try #require(listing.json["entries"] as? [[String: Any]])
        let stored = Dictionary(uniqueKeysWithValues: entries.compactMap { entry in
            (entry["namespace"] as? String).flatMap { namespace in (entry["key"] as? String).map { (namespace, $0) } }
        })
        #expect(stored.count == Self.reads.count)
        for read in Self.reads {
            var key = ResourceCatalog.keyShapes[read.namespace]?.replacingOccurrences(of: "{user}", with: "alice") ?? ""
            for (name, value) in read.values { key = key.replacingOccurrences(of: "{\(name)}", with: value) }
            #expect(stored[read.namespace] == key, "\(read.namespace)")
            #expect(ResourceTable.userKeys.user(in: key) == "alice", "\(key)")
        }
    }

    @Test(arguments: [
        "subscription:carol", "health:today:carol:2026-11-29", "activities:carol:run:30", "health:avg:carol:3",
        "health:hrv:carol:2026-11-20", "health:sleep:carol", "wellness:carol:30", "scores:carol:2026-11-20",
        "streams:carol:42", "profile:carol", "progress:history:carol", "progress:streak:carol",
        "progress:today:carol:2026-11-29", "progress:any:carol", "subscription:carol:notes",
    ])
    func aRawPutUnderAKeyARouteOwnsIsRefused(key: String) async throws {
        let h = AppHarness()
        let answer = try await h.send(.put, "/v1/cache/\(key)", body: #"{"status":"premium"}"#, admin: true)
        #expect(answer.status == 409)
        #expect(answer.header("Content-Type") == "application/problem+json")
        #expect(answer.json["type"] as? String == Problem.typeURI("key-owned"))
        #expect(try await h.send(.get, "/v1/cache/\(key)", admin: true).status == 404)
    }

    @Test(arguments: ["subscription", "subscription:", "notes:carol", "health:steps:carol", "carol:subscription", "raw:1"])
    func otherKeysStayTheRawAPIs(key: String) async throws {
        let h = AppHarness()
        #expect(try await h.send(.put, "/v1/cache/\(key)", body: "x", admin: true).status == 201)
    }

    @Test func anOwnedKeyIsStillReadAndDeleted() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/carol/subscription")
        #expect(try await h.send(.get, "/v1/cache/subscription:carol", admin: true).status == 200)
        #expect(try await h.send(.delete, "/v1/cache/subscription:carol", admin: true).status == 204)
    }

    /// A raw entry stored under a key naming a user before such puts were refused has no user of its own: erasure
    /// finds it by its key. Another user's key and a key that only mentions the user stay.
    @Test func erasureRemovesRawEntriesWhoseKeyNamesTheUser() async throws {
        let h = AppHarness()
        for key in ["subscription:carol", "health:today:carol:2026-11-29", "subscription:carolyn", "notes:carol"] {
            _ = try await h.app.cache.put(key: key, body: Array("x".utf8), ttl: .seconds(600))
        }
        _ = try await h.send(.get, "/v1/users/carol/profile")
        let answer = try await h.send(.delete, "/v1/users/carol", admin: true)
        #expect(answer.json["erased"] as? Int == 3)
        #expect(try await h.send(.get, "/v1/cache/subscription:carol", admin: true).status == 404)
        #expect(try await h.send(.get, "/v1/cache/health:today:carol:2026-11-29", admin: true).status == 404)
        #expect(try await h.send(.get, "/v1/cache/subscription:carolyn", admin: true).status == 200)
        #expect(try await h.send(.get, "/v1/cache/notes:carol", admin: true).status == 200)
    }

    /// The same after a restart: the raw entry is on disk only, found by the disk tier's index.
    @Test func erasureRemovesSuchEntriesFromDiskAfterARestart() async throws {
        try await withTemporaryFolder("owned-keys") { folder in
            let configuration = DiskTierConfiguration(directory: folder, limitBytes: 1 << 20)
            func restarted() async throws -> AppHarness {
                AppHarness(secondTier: try await DiskTier.open(
                    configuration, clock: ManualWallClock(AppHarness.start), ticker: ManualClock()))
            }
            _ = try await restarted().app.cache.put(key: "progress:any:carol", body: Array("x".utf8), ttl: .seconds(600))
            #expect(try await restarted().send(.delete, "/v1/users/carol", admin: true).json["erased"] as? Int == 1)
            #expect(try await restarted().send(.get, "/v1/cache/progress:any:carol", admin: true).status == 404)
        }
    }
}

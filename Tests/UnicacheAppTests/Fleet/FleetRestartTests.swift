import Foundation
import Settings
import Testing
import TestSupport

import UnicacheApp

/// CONTRACT §6.6 end to end: a restarted instance with a disk tier catches up from the fleet's log instead of
/// clearing its disk, and still resets when the log cannot vouch (Redis restarted empty).
@Suite(.serialized, .timeLimit(.minutes(3))) struct FleetRestartTests {
    /// An instance stopped while changes happen elsewhere comes back, applies them, and serves its other disk
    /// entries as disk hits without refetching them.
    @Test func aRestartedInstanceAppliesWhatItMissedAndKeepsItsDisk() async throws {
        try await withService(Fleet.start(instances: 1)) { fleet in
            let other = fleet.instances[0]
            try await withTemporaryFolder("at-rest") { dataDir in
                try await withService(fleet.startInstance(dataDir: dataDir)) { first in
                    for user in ["w1", "w2", "w3"] {
                        #expect(try await first.request(.GET, "/v1/users/\(user)/subscription").header("X-Cache") == "MISS")
                    }
                    #expect(try await first.request(.PUT, "/v1/cache/note", body: "v1", admin: true).status == 201)
                    await first.stop()

                    // While it is away: an event drops w1 (from Redis too), a PUT replaces the raw note.
                    let event = try await other.request(
                        .POST, "/v1/users/w1/events", body: #"{"type":"subscription.updated"}"#, admin: true)
                    #expect(event.status == 200)
                    #expect(try await other.request(.PUT, "/v1/cache/note", body: "v2", admin: true).status == 200)

                    try await withService(fleet.startInstance(dataDir: dataDir)) { back in
                        let w2 = try await back.request(.GET, "/v1/users/w2/subscription")
                        let w3 = try await back.request(.GET, "/v1/users/w3/subscription")
                        let w1 = try await back.request(.GET, "/v1/users/w1/subscription")
                        let note = try await back.request(.GET, "/v1/cache/note", admin: true)
                        let stats = try await back.request(.GET, "/stats")
                        let shared = Fleet.shared(back)
                        await back.stop()
                        await fleet.stop()

                        #expect(w2.header("X-Cache") == "HIT" && w2.header("X-Cache-Tier") == "disk")
                        #expect(w3.header("X-Cache") == "HIT" && w3.header("X-Cache-Tier") == "disk")
                        #expect(w1.header("X-Cache") == "MISS")
                        #expect(note.body == "v2")
                        #expect(fleet.upstream.requestCount("/users/w2/subscription") == 1)
                        #expect(fleet.upstream.requestCount("/users/w1/subscription") == 2)
                        #expect(shared.resets == 0 && shared.replayed == 2)  // the two changes only: its own are in its checkpoint
                        #expect(stats.body.contains(#""resets":0"#))
                    }
                }
            }
        }
    }

    /// Redis restarted empty: a new epoch, so the restarted instance drops the read-through entries of its disk
    /// (and its raw entries, which Redis no longer holds either), as before the log.
    @Test func redisRestartedEmptyDropsTheDiskAsBefore() async throws {
        try await withService(Fleet.start(instances: 0)) { fleet in
            try await withTemporaryFolder("at-rest") { dataDir in
                try await withService(fleet.startInstance(dataDir: dataDir)) { first in
                    _ = try await first.request(.GET, "/v1/users/e1/subscription")
                    await first.stop()
                    try await fleet.redis.restart()

                    try await withService(fleet.startInstance(dataDir: dataDir)) { back in
                        let answer = try await back.request(.GET, "/v1/users/e1/subscription")
                        let shared = Fleet.shared(back)
                        await back.stop()
                        await fleet.stop()

                        #expect(answer.header("X-Cache") == "MISS")
                        #expect(fleet.upstream.requestCount("/users/e1/subscription") == 2)
                        #expect(shared.resets == 1 && shared.replayed == 0)
                    }
                }
            }
        }
    }
}

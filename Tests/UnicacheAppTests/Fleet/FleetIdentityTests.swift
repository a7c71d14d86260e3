import Foundation
import RedisTestSupport
import Settings
import TestSupport
import Testing

import UnicacheApp

/// CONTRACT §14.2 over two whole instances: an event and an erasure for `auth0|abc` on one instance remove
/// `auth0|abc`'s entries on the other, and nothing of user `auth0`'s.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FleetIdentityTests {
    /// `change`'s answer, once its announcement has reached `receiver` (a step waits for its own announcement, so a
    /// late message of an earlier step is never taken for it).
    static func announced(
        to receiver: LiveService, _ change: () async throws -> LiveService.Answer
    ) async throws -> LiveService.Answer {
        let before = Fleet.shared(receiver).invalidationsReceived
        let answer = try await change()
        await waitUntil("the change reaches the other instance") { Fleet.shared(receiver).invalidationsReceived > before }
        return answer
    }

    /// Whether `instance` answers `path` from its memory tier.
    static func inMemory(_ instance: LiveService, _ path: String) async throws -> Bool {
        try await instance.request(.GET, path).header("X-Cache-Tier") == "memory"
    }

    @Test func anEventAndAnErasureForAUserWithABarReachOnlyThatUser() async throws {
        try await withService(Fleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            let barred = ["/v1/users/auth0%7Cabc/subscription", "/v1/users/auth0%7Cabc/progress/streak"]
            let plain = ["/v1/users/auth0/subscription", "/v1/users/auth0/progress/streak"]
            // Both users' entries in B's memory (A's fill is announced: B reads after it, from Redis).
            for path in barred + plain {
                _ = try await Self.announced(to: b) { try await a.request(.GET, path) }
                _ = try await b.request(.GET, path)
                #expect(try await Self.inMemory(b, path), "\(path)")
            }

            // `question.answered` names several namespaces: the message carries the user and each of them.
            let event = try await Self.announced(to: b) {
                try await a.request(.POST, "/v1/users/auth0%7Cabc/events", body: #"{"type":"question.answered"}"#, admin: true)
            }
            #expect(event.status < 300, "\(event.status) \(event.body)")
            for path in barred { #expect(try await b.request(.GET, path).header("X-Cache") == "MISS", "after the event: \(path)") }
            for path in plain { #expect(try await Self.inMemory(b, path), "after the event: \(path)") }

            // B fetched `auth0|abc`'s entries again (announced to A); A erases the user.
            for path in barred { #expect(try await Self.inMemory(b, path), "\(path)") }
            let erasure = try await Self.announced(to: b) { try await a.request(.DELETE, "/v1/users/auth0%7Cabc", admin: true) }
            #expect(erasure.status < 300, "\(erasure.status) \(erasure.body)")
            for path in barred { #expect(try await b.request(.GET, path).header("X-Cache") == "MISS", "after the erasure: \(path)") }
            for path in plain { #expect(try await Self.inMemory(b, path), "after the erasure: \(path)") }
            await fleet.stop()
        }
    }
}

import Access
import Foundation
import Logging
@testable import Settings
import Testing
import TestSupport

@testable import UnicacheApp

/// CONTRACT §8.1 with a real peer that is not loopback: a client in its own network namespace, across a veth
/// pair on 198.18.0.0/15, talks to the service bound on the host end (never 0.0.0.0).
@Suite("Protected mode", .serialized, .timeLimit(.minutes(3)))
struct ProtectedModeTests {
    /// `curl` inside the namespace: the status code and the body.
    static func curl(_ namespace: NetworkNamespace, _ url: String, method: String = "GET") async throws -> (Int, String) {
        let output = try await namespace.run(inside: [
            "curl", "-s", "--max-time", "20", "-X", method, "-H", "Authorization: Bearer \(LiveService.token)",
            "-w", "\n%{http_code}", url,
        ])
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test func aRemotePeerGetsOnlyTheOperationsEndpoints() async throws {
        try await withService(NetworkNamespace.make()) { namespace in
            try await withService(LiveService.start(host: namespace.hostAddress)) { live in
                let base = "http://\(namespace.hostAddress):\(live.port)"
                var answers: [String: (Int, String)] = [:]
                answers["DELETE /v1/users/alice"] = try await Self.curl(
                    namespace, base + "/v1/users/alice", method: "DELETE")
                for path in ["/v1/users/alice/subscription", "/v1/cache?prefix=a", "/healthz", "/readyz", "/stats",
                             "/metrics", "/openapi.yaml"] {
                    answers[path] = try await Self.curl(namespace, base + path)
                }
                let fetches = live.upstream.requestCount("/users/alice/subscription")
                let cache = live.app.cache.statistics().requests
                await live.stop()

                for path in ["/healthz", "/readyz", "/stats", "/metrics", "/openapi.yaml"] {
                    #expect(answers[path]?.0 == 200, "\(path)")
                }
                for path in ["/v1/users/alice/subscription", "/v1/cache?prefix=a", "DELETE /v1/users/alice"] {
                    #expect(answers[path]?.0 == 403, "\(path)")
                    #expect(answers[path]?.1.contains("--auth jwt") == true, "\(path)")
                }
                #expect(fetches == 0)
                #expect(cache.hits + cache.misses + cache.coalesced + cache.stale + cache.refreshes == 0)
                let stats = try #require(answers["/stats"]?.1)
                #expect(stats.contains(#""protected":3"#))
                #expect(stats.contains(#""mode":"protected""#))
            }
        }
    }

    @Test func theNamespaceIsRemovedAfterwards() async throws {
        let namespace = try await NetworkNamespace.make()
        #expect(await namespace.exists)
        #expect(NetworkNamespace.owner(of: namespace.name) == getpid())
        await namespace.stop()
        #expect(await !namespace.exists)
    }

    /// A namespace left by a test process that is gone (crashed, killed) is deleted when the next one is made;
    /// one whose process still runs (this one) is not.
    @Test func aNamespaceOfAProcessThatIsGoneIsSwept() async throws {
        let exited = try await ChildProcess.run(URL(fileURLWithPath: "/bin/true"), []).pid
        #expect(!NetworkNamespace.processExists(exited))
        let id = String(UInt32.random(in: 0..<0x3FFF), radix: 16)
        let stale = NetworkNamespace.name(pid: exited, id: id)
        let live = NetworkNamespace.name(pid: getpid(), id: id)
        try await withService(NetworkNamespace.Bare.add([stale, live])) { _ in
            try await withService(NetworkNamespace.make()) { _ in }
            #expect(await !NetworkNamespace.exists(stale))
            #expect(await NetworkNamespace.exists(live))
        }
    }

    @Test func aLoopbackPeerIsServedAsBefore() async throws {
        let (read, admin) = try await withService(LiveService.start()) { live in
            (try await live.request(.GET, "/v1/users/alice/subscription"),
             try await live.request(.DELETE, "/v1/users/alice", admin: true))
        }
        #expect(read.status == 200)
        #expect(admin.status == 200)
    }
}

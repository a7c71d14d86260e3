import Foundation
import Redis
import RedisTestSupport
import Settings
import Testing
import TestSupport
import TLSTestSupport
import UnifiedCache

import UnicacheApp

/// CONTRACT §10.1 and §10.6 through the whole service: a Redis with only a TLS port, `tls-auth-clients yes` and a
/// test CA. With the right CA, name and client certificate the instance is connected over TLS and says so in
/// /stats; with a wrong CA, an expired certificate or a wrong name it is not connected, counts the refusals,
/// reads go on from the upstream and fleet writes answer 503.
@Suite("The service over TLS to Redis", .serialized, .timeLimit(.minutes(3)))
struct FleetTLSTests {
    static func settings(_ server: RedisServerProcess, _ options: RedisTLSOptions) -> SharedTierSettings {
        SharedTierSettings(
            redis: RedisEndpoint(host: "127.0.0.1", port: server.port, tls: options), timeout: .seconds(2),
            prefix: "tls\(UInt16.random(in: 0...UInt16.max)):")
    }

    @Test func theRightCertificatesConnectAndTheStatsSaySo() async throws {
        let folder = try TemporaryFolder("unicache-fleet-tls")
        defer { folder.remove() }
        let pki = try TestCertificate.Authority(folder: folder.url)
        let client = try pki.issue(commonName: "unicache", dnsNames: [], client: true)
        let server = try await RedisServerProcess.startTLS(pki: pki, certificate: try pki.issue(), authClients: true)
        let options = RedisTLSOptions(
            caFile: pki.caFile, serverName: "localhost", certificateFile: client.certificate, keyFile: client.key)
        try await withService(LiveService.start(upstreamTimeout: .seconds(5), redis: Self.settings(server, options))) { live in
            await waitUntil("the shared tier is connected over TLS") { Fleet.shared(live).connected }
            let put = try await live.request(.PUT, "/v1/cache/over-tls", body: "v", admin: true)
            let stats = try await live.request(.GET, "/stats", admin: true)
            await live.stop()
            await server.stop()
            #expect(put.status < 300, "\(put.status) \(put.body)")
            let shared = try #require(
                (try JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any])?["shared"] as? [String: Any])
            #expect(shared["endpoint"] as? String == "127.0.0.1:\(server.port)")
            #expect(shared["tls"] as? Bool == true)
            #expect(shared["tlsErrors"] as? Int == 0)
            #expect(shared["authErrors"] as? Int == 0)
            #expect(shared["failovers"] as? Int == 0)
        }
    }

    @Test(arguments: ["wrong CA", "expired", "wrong name"])
    func aCertificateThatDoesNotVerifyIsRefusedCountedAndReadsGoOn(_ problem: String) async throws {
        let folder = try TemporaryFolder("unicache-fleet-tls")
        defer { folder.remove() }
        let pki = try TestCertificate.Authority(folder: folder.url)
        let otherCA = try TestCertificate.Authority(folder: folder.url, name: "someone else's CA")
        let client = try pki.issue(commonName: "unicache", dnsNames: [], client: true)
        let certificate =
            problem == "expired"
            ? try pki.issue(notValidBefore: Date() - 3 * 86_400, notValidAfter: Date() - 86_400) : try pki.issue()
        let server = try await RedisServerProcess.startTLS(pki: pki, certificate: certificate, authClients: true)
        let options = RedisTLSOptions(
            caFile: problem == "wrong CA" ? otherCA.caFile : pki.caFile,
            serverName: problem == "wrong name" ? "redis.example" : "localhost",
            certificateFile: client.certificate, keyFile: client.key)
        try await withService(LiveService.start(upstreamTimeout: .seconds(5), redis: Self.settings(server, options))) { live in
            let read = try await live.request(.GET, "/v1/users/tls/subscription")
            let put = try await live.request(.PUT, "/v1/cache/k", body: "v", admin: true)
            await waitUntil("the refusal is counted") { Fleet.shared(live).tlsErrors > 0 }
            let shared = Fleet.shared(live)
            await live.stop()
            await server.stop()
            #expect(read.status == 200, "\(read.status) \(read.body)")
            #expect(put.status == 503 && put.header("Retry-After") != nil, "\(put.status)")
            #expect(!shared.connected && shared.tls)
            #expect(shared.tlsErrors > 0 && shared.authErrors == 0)
        }
    }
}

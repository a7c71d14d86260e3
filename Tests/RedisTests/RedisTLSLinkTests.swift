import Foundation
import Redis
import RedisTestSupport
import TestSupport
import Testing
import TLSTestSupport

/// CONTRACT §10.1: the node and the subscriber over `rediss://` to a redis-server with only a TLS port and
/// `tls-auth-clients yes`: verified connections work; a wrong CA, an expired certificate and a wrong name are each
/// refused (never a plaintext fallback), said so in the reason and counted.
@Suite("The Redis link over TLS", .timeLimit(.minutes(3)))
struct RedisTLSLinkTests {
    /// What every test here shares: a CA, a client certificate, and a TLS-only server.
    struct Setup {
        let folder: URL
        let pki: TestCertificate.Authority
        let client: (certificate: String, key: String)
        let server: RedisServerProcess

        /// The endpoint with full verification, the right CA, name and client certificate.
        var verified: RedisEndpoint {
            RedisEndpoint(
                host: "127.0.0.1", port: server.port,
                tls: RedisTLSOptions(
                    caFile: pki.caFile, serverName: "localhost", certificateFile: client.certificate, keyFile: client.key))
        }
    }

    func withTLSServer(
        certificate: ((TestCertificate.Authority) throws -> (certificate: String, key: String))? = nil,
        _ body: (Setup) async throws -> Void
    ) async throws {
        let temporary = try TemporaryFolder("unicache-redis-tls")
        defer { temporary.remove() }
        let folder = temporary.url
        let pki = try TestCertificate.Authority(folder: folder)
        let client = try pki.issue(commonName: "unicache", dnsNames: [], client: true)
        let server = try await RedisServerProcess.startTLS(
            pki: pki, certificate: try certificate?(pki) ?? pki.issue(), authClients: true)
        do {
            try await body(Setup(folder: folder, pki: pki, client: client, server: server))
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    /// The reason the node gives for its first command, which must fail.
    func refusal(_ endpoint: RedisEndpoint) async -> (reason: String?, node: RedisNodeClient) {
        let node = RedisNodeClient(endpoint: endpoint, timeout: .seconds(5), clock: ContinuousClock(), size: 1)
        do {
            _ = try await node.send(RedisCommand("PING"))
            Issue.record("connected although the certificate should be refused")
            return (nil, node)
        } catch {
            guard case .unavailable(let reason) = error else { return (nil, node) }
            return (reason, node)
        }
    }

    @Test func verifiedCommandsAndSubscriptionsWorkWithAClientCertificate() async throws {
        try await withTLSServer { (setup: Setup) async throws in
            let node = RedisNodeClient(endpoint: setup.verified, timeout: .seconds(5), clock: ContinuousClock())
            defer { node.shutdown() }
            #expect(try await node.send([RedisCommand("SET", "k", "v"), .get("k")])
                == [.status("OK"), .string(Array("v".utf8))])
            #expect(node.connectFailures.tls == 0)
            #expect(setup.verified.description == "rediss://127.0.0.1:\(setup.server.port)/0")

            let events = AsyncEventQueue<RedisSubscriber.Event>()
            let subscriber = RedisSubscriber(endpoint: setup.verified, channel: "c", timeout: .seconds(5), clock: ContinuousClock()) { events.push($0) }
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await events.next() == .subscribed)
            #expect(try await node.send(RedisCommand("PUBLISH", "c", "over TLS")) == .integer(1))
            #expect(await events.next() == .message(Array("over TLS".utf8)))
        }
    }

    @Test func aWrongCAAWrongNameAndNoClientCertificateAreRefusedAndCounted() async throws {
        try await withTLSServer { (setup: Setup) async throws in
            let otherCA = try TestCertificate.Authority(folder: setup.folder, name: "someone else's CA")
            var wrongCA = setup.verified
            wrongCA.tls?.caFile = otherCA.caFile
            let untrusted = await refusal(wrongCA)
            defer { untrusted.node.shutdown() }
            #expect(untrusted.reason?.contains("not issued by a trusted CA") == true, "\(untrusted.reason ?? "")")
            #expect(untrusted.node.connectFailures.tls == 1)

            var wrongName = setup.verified
            wrongName.tls?.serverName = "redis.example"
            let misnamed = await refusal(wrongName)
            defer { misnamed.node.shutdown() }
            #expect(misnamed.reason?.contains("does not name redis.example") == true, "\(misnamed.reason ?? "")")
            #expect(misnamed.node.connectFailures.tls == 1)

            // tls-auth-clients yes: no client certificate, no connection.
            var anonymous = setup.verified
            anonymous.tls?.certificateFile = nil
            anonymous.tls?.keyFile = nil
            let refused = await refusal(anonymous)
            defer { refused.node.shutdown() }
            #expect(refused.reason != nil)
            #expect(refused.node.connectFailures.tls == 1, "\(refused.reason ?? "")")

            // Plain TCP to the TLS port is never a connection.
            var plain = setup.verified
            plain.tls = nil
            let plaintext = await refusal(plain)
            defer { plaintext.node.shutdown() }
            #expect(plaintext.reason != nil)

            // The subscriber is refused the same way, and counts into the counter it is given.
            let failures = RedisConnectFailures()
            let events = AsyncEventQueue<RedisSubscriber.Event>()
            let subscriber = RedisSubscriber(
                endpoint: wrongCA, channel: "c", timeout: .seconds(5), clock: ContinuousClock(), failures: failures) { events.push($0) }
            defer { subscriber.stop() }
            subscriber.start()
            guard let reason = await disconnectReason(events) else { return }
            #expect(reason.contains("not issued by a trusted CA"), "\(reason)")
            #expect(failures.tls >= 1)
        }
    }

    @Test func anExpiredCertificateIsRefusedAndCounted() async throws {
        try await withTLSServer(certificate: { pki in
            try pki.issue(notValidBefore: Date() - 3 * 86_400, notValidAfter: Date() - 86_400)
        }) { (setup: Setup) async throws in
            let expired = await refusal(setup.verified)
            defer { expired.node.shutdown() }
            #expect(expired.reason?.contains("expired") == true, "\(expired.reason ?? "")")
            #expect(expired.node.connectFailures.tls == 1)
            #expect(!expired.node.isAvailable || expired.node.lastError?.contains("expired") == true)
        }
    }
}

import Foundation
import Redis
import RedisTestSupport
import Testing
import TestSupport
import TLSTestSupport

@Suite("TLS to a TLS-only redis-server")
struct RedisTLSTests {
    /// A server with only a TLS port, its certificate from `pki`.
    private func startTLSServer(
        _ group: RedisServerGroup, pki: TestCertificate.Authority, certificate: (certificate: String, key: String), authClients: Bool
    ) async throws -> RedisServerProcess {
        try await group.start { port in
            RedisServerProcess.standardArguments(port: port) + [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", certificate.certificate,
                "--tls-key-file", certificate.key, "--tls-ca-cert-file", pki.caFile,
                "--tls-auth-clients", authClients ? "yes" : "no",
            ]
        }
    }

    private func tlsEndpoint(_ server: RedisServerProcess, _ options: RedisTLSOptions) -> RedisEndpoint {
        var result = endpoint(server)
        result.tls = options
        return result
    }

    /// Why a connect to `endpoint` fails TLS; nil, with an issue, when it connects or fails otherwise.
    private func tlsReason(_ endpoint: RedisEndpoint, sourceLocation: SourceLocation = #_sourceLocation) async -> String? {
        await caught(\.tlsReason, sourceLocation: sourceLocation) { () async throws(RedisError) in
            try await connect(endpoint).close()
        }
    }

    @Test func verifiedConnectionsWorkAndEveryBadCertificateIsRefusedSayingWhy() async throws {
        let temporary = try TemporaryFolder("unicache-redisnio")
        defer { temporary.remove() }
        let folder = temporary.url
        let pki = try TestCertificate.Authority(folder: folder)
        let otherCA = try TestCertificate.Authority(folder: folder, name: "someone else's CA")
        let client = try pki.issue(commonName: "unicache", dnsNames: [], client: true)
        try await withRedisServers { group in
            let server = try await startTLSServer(group, pki: pki, certificate: try pki.issue(), authClients: true)
            let verified = RedisTLSOptions(
                caFile: pki.caFile, serverName: "localhost", certificateFile: client.certificate, keyFile: client.key)

            let connection = try await connect(tlsEndpoint(server, verified))
            #expect(try await connection.send([RedisCommand("SET", "unicache:tls", "yes"), .get("unicache:tls")])
                == [.status("OK"), .string(Array("yes".utf8))])
            await connection.close()
            let subscription = try await RedisSubscription.connect(
                tlsEndpoint(server, verified), timeout: .seconds(5), connectTimeout: .seconds(5))
            try await subscription.subscribe(["unicache:events"])
            await subscription.close()

            var wrongCA = verified
            wrongCA.caFile = otherCA.caFile
            let untrusted = await tlsReason(tlsEndpoint(server, wrongCA))
            #expect(untrusted?.contains("not issued by a trusted CA") == true, "\(untrusted ?? "")")

            var wrongName = verified
            wrongName.serverName = "redis.example"
            let misnamed = await tlsReason(tlsEndpoint(server, wrongName))
            #expect(misnamed?.contains("does not name redis.example") == true, "\(misnamed ?? "")")

            // An address is never sent as SNI; without an override the certificate must name the address.
            var byAddress = verified
            byAddress.serverName = nil
            let address = await tlsReason(tlsEndpoint(server, byAddress))
            #expect(address?.contains("does not name 127.0.0.1") == true, "\(address ?? "")")

            // tls-auth-clients yes: no client certificate, no connection (never a plaintext fallback).
            var anonymous = verified
            anonymous.certificateFile = nil
            anonymous.keyFile = nil
            await #expect(throws: RedisError.self) { try await connect(tlsEndpoint(server, anonymous)) }

            // Plain TCP to the TLS port is not a connection either.
            await #expect(throws: RedisError.self) { try await connect(server) }
        }
    }

    /// A given server name is verified as that name: the certificate's IP entry for the connected address does not
    /// stand in for it (NIOSSL's own check would accept either), and without a name the address is what is verified.
    @Test func aGivenServerNameIsVerifiedAsThatNameAlone() async throws {
        let temporary = try TemporaryFolder("unicache-redisnio")
        defer { temporary.remove() }
        let pki = try TestCertificate.Authority(folder: temporary.url)
        let certificate = try pki.issue(dnsNames: ["localhost", "*.cache.internal"], ipAddresses: [[127, 0, 0, 1]])
        try await withRedisServers { group in
            let server = try await startTLSServer(group, pki: pki, certificate: certificate, authClients: false)
            let misnamed = await tlsReason(tlsEndpoint(server, RedisTLSOptions(caFile: pki.caFile, serverName: "redis.example")))
            #expect(misnamed == "the certificate does not name redis.example (wrong name)")

            for name in ["localhost", "LOCALHOST.", "redis-1.cache.internal", nil] {
                let connection = try await connect(tlsEndpoint(server, RedisTLSOptions(caFile: pki.caFile, serverName: name)))
                #expect(try await connection.send(.ping) == .status("PONG"))
                await connection.close()
            }
            let wildcardTooDeep = await tlsReason(
                tlsEndpoint(server, RedisTLSOptions(caFile: pki.caFile, serverName: "a.b.cache.internal")))
            #expect(wildcardTooDeep?.contains("does not name a.b.cache.internal") == true)
        }
    }

    @Test func anExpiredCertificateIsRefusedSayingSo() async throws {
        let temporary = try TemporaryFolder("unicache-redisnio")
        defer { temporary.remove() }
        let folder = temporary.url
        let pki = try TestCertificate.Authority(folder: folder)
        let expired = try pki.issue(notValidBefore: Date() - 3 * 86_400, notValidAfter: Date() - 86_400)
        try await withRedisServers { group in
            let server = try await startTLSServer(group, pki: pki, certificate: expired, authClients: false)
            let reason = await tlsReason(tlsEndpoint(server, RedisTLSOptions(caFile: pki.caFile, serverName: "localhost")))
            #expect(reason?.contains("expired") == true, "\(reason ?? "")")
        }
    }
}

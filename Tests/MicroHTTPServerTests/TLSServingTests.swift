import HTTPRouting
import Logging
import NIOSSL
import TLSTestSupport
import TestSupport
import Testing
@testable import MicroHTTPServer

/// HTTPS through libmicrohttpd (GnuTLS) on both listening paths: MHD's own listening socket (one polling thread)
/// and the shim's acceptor handing connections over with MHD_add_connection (a pool of two).
@Suite(.timeLimit(.minutes(3))) struct TLSServingTests {
    static let certificate = Result { try TestCertificate() }

    static func router() -> Router {
        var router = Router()
        router.getNow()
        router.get("/async") { _ in .text("async") }
        return router
    }

    static func configuration(pollingThreads: Int) throws -> MicroHTTPServerConfiguration {
        let certificate = try Self.certificate.get()
        // A generous header timeout: these tests are about TLS, and a client starved for seconds (the suite's
        // CPU-bound tests can hold the cooperative pool's two threads) must not see its connection closed mid-request
        // by the 10 s one (a clean Debian root's `make test` saw both keep-alive cases closed so at ~15 s).
        var configuration = MicroHTTPServerConfiguration.test(pollingThreads: pollingThreads, headerTimeout: .seconds(120))
        configuration.tls = try TLSCredentials(
            certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
        return configuration
    }

    @Test(arguments: [1, 2])
    func keepAliveRequestsOverTLS13AndTLS12(pollingThreads: Int) async throws {
        let trusted = try Self.certificate.get().certificatePEM
        let store = CapturingLogHandler.Store()
        let logger = CapturingLogHandler.logger(store)
        try await withLiveServer(try Self.configuration(pollingThreads: pollingThreads), router: Self.router(), logger: logger) { port, _ in
            #expect(store.messages.contains { $0.contains("listening on https://127.0.0.1:\(port)") })
            for version in [TLSVersion.tlsv13, .tlsv12] {
                // Three requests, one connection: the immediate path, the async one (suspend/resume), again.
                let exchange = try await HTTPSTestClient.get(
                    ["/now", "/async", "/now"], port: port, trusting: trusted, minimum: version, maximum: version)
                #expect(exchange.version == version)
                #expect(exchange.responses.map(\.status) == [200, 200, 200])
                #expect(exchange.responses.map(\.body) == ["now", "async", "now"])
            }
        }
    }

    /// libmicrohttpd's own answer to a malformed Content-Length went out with its head twice over TLS too; the shim
    /// answers it once, through the connection's TLS session.
    @Test(arguments: [1, 2])
    func aMalformedContentLengthIsAnsweredOnceOverTLS(pollingThreads: Int) async throws {
        let trusted = try Self.certificate.get().certificatePEM
        try await withLiveServer(try Self.configuration(pollingThreads: pollingThreads), router: Self.router()) { port, _ in
            let received = try await HTTPSTestClient.rawExchange(
                "POST /now HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n", port: port, trusting: trusted)
            let text = String(decoding: received, as: UTF8.self)
            #expect(text.components(separatedBy: "HTTP/1.").count == 2)
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(text.contains("\r\nContent-Type: application/problem+json\r\n"))
            #expect(text.hasSuffix("\"detail\":\"The request has an invalid Content-Length.\"}"))
        }
    }

    @Test(arguments: [1, 2])
    func tls11AndPlainHTTPAreRefused(pollingThreads: Int) async throws {
        let trusted = try Self.certificate.get().certificatePEM
        try await withLiveServer(try Self.configuration(pollingThreads: pollingThreads), router: Self.router()) { port, _ in
            await #expect(throws: (any Error).self) {
                try await HTTPSTestClient.get(["/now"], port: port, trusting: trusted, minimum: .tlsv1, maximum: .tlsv11)
            }
            let plain = try await HTTPSTestClient.plainExchange("GET /now HTTP/1.1\r\nHost: localhost\r\n\r\n", port: port)
            #expect(!String(decoding: plain, as: UTF8.self).contains("HTTP/1."))
            // Refusing them cost the server nothing: it still answers over TLS.
            let exchange = try await HTTPSTestClient.get(["/now"], port: port, trusting: trusted)
            #expect(exchange.responses.map(\.status) == [200])
        }
    }

    @Test func aClientTrustingAnotherCertificateRefusesTheServer() async throws {
        let other = try TestCertificate().certificatePEM
        try await withLiveServer(try Self.configuration(pollingThreads: 1), router: Self.router()) { port, _ in
            await #expect(throws: (any Error).self) {
                try await HTTPSTestClient.get(["/now"], port: port, trusting: other)
            }
        }
    }
}

@Suite struct TLSCredentialsTests {
    @Test func aMatchingPairIsAcceptedAndNeverShown() throws {
        let certificate = try TestCertificate()
        let credentials = try TLSCredentials(
            certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
        #expect(!"\(credentials)".contains("PRIVATE"))
        #expect(!String(reflecting: MicroHTTPServerConfiguration(tls: credentials)).contains(certificate.privateKeyPEM))
    }

    @Test func eachBadPairIsNamed() throws {
        let certificate = try TestCertificate()
        let other = try TestCertificate()
        let garbage = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
        #expect {
            try TLSCredentials(certificateChainPEM: garbage, privateKeyPEM: certificate.privateKeyPEM)
        } throws: { error in
            guard case .certificate = error as? TLSCredentialsError else { return false }
            return true
        }
        #expect {
            try TLSCredentials(certificateChainPEM: "no PEM here", privateKeyPEM: certificate.privateKeyPEM)
        } throws: { error in
            guard case .certificate = error as? TLSCredentialsError else { return false }
            return true
        }
        #expect {
            try TLSCredentials(certificateChainPEM: certificate.certificatePEM, privateKeyPEM: "not a key")
        } throws: { error in
            guard case .privateKey = error as? TLSCredentialsError else { return false }
            return true
        }
        #expect {
            try TLSCredentials(certificateChainPEM: certificate.certificatePEM, privateKeyPEM: other.privateKeyPEM)
        } throws: { error in
            guard case .mismatch = error as? TLSCredentialsError else { return false }
            return !"\(error)".contains("PRIVATE")
        }
    }
}

import Clocks
import Foundation
@testable import Settings
import TestSupport
import TLSTestSupport
import Testing
import Tools
import UnicacheApp

/// The built executable with `--tls-cert`/`--tls-key`: HTTPS on its port, `listening on https://…`, a bad pair
/// stopping start-up with one line, and `unicache healthcheck` (Docker's HEALTHCHECK) over TLS.
@Suite(.serialized, .timeLimit(.minutes(3)), .executableBuilt)
struct TLSServiceTests {
    @Test func servesHTTPSAndTheHealthcheckPinsItsCertificate() async throws {
        let pair = try TestCertificate()
        let files = try pair.write()
        defer { files.folder.remove() }
        // A long header timeout: on a starved machine (the whole suite in parallel on 2 cores) the client's handshake
        // and request once took past the default 10 s, and the server rightly closed the connection.
        var service = try await ExecutableTests.Service.start(
            ["--tls-cert", files.certificate, "--tls-key", files.key, "--header-timeout", "120s"])
        defer { if service.process.isRunning { kill(service.process.processIdentifier, SIGKILL) } }  // a test that threw
        let port = try #require(service.port, "no start-up line in: \(service.log)")
        #expect(service.log.contains("listening on https://127.0.0.1:\(port)"))
        #expect(!service.log.contains("PRIVATE KEY"))

        let exchange = try await HTTPSTestClient.get(
            ["/healthz", "/v1/users/alice/subscription", "/healthz"], port: port, trusting: pair.certificatePEM)
        #expect(exchange.responses.map(\.status) == [200, 200, 200])

        // In-process and as Docker runs it: the same variables as the service.
        let client = try HealthcheckOptions.parse(["--timeout", "10s"]).client(
            environment: ["UNICACHE_PORT": "\(port)", "UNICACHE_TLS_CERT": files.certificate, "UNICACHE_TLS_KEY": files.key])
        #expect(try await onThread { try client.status() } == 200)
        let healthy = try await BuiltExecutable.run(
            ["healthcheck", "--timeout", "10s"],
            environment: ["UNICACHE_PORT": "\(port)", "UNICACHE_TLS_CERT": files.certificate])
        #expect(healthy.status == 0, "\(healthy.standardError)")

        // Plain HTTP to an HTTPS port is no answer; another certificate is not this service's.
        let plain = try await BuiltExecutable.run(["healthcheck", "--port", "\(port)", "--timeout", "10s"])
        #expect(plain.status == 1)
        #expect(plain.standardError.hasPrefix("unhealthy: "))
        #expect(plain.standardError.contains("pass the same --tls-cert FILE"), "\(plain.standardError)")
        let other = try TestCertificate().write()
        defer { other.folder.remove() }
        let impostor = try await BuiltExecutable.run(
            ["healthcheck", "--port", "\(port)", "--tls-cert", other.certificate, "--timeout", "10s"])
        #expect(impostor.status == 1)
        #expect(
            impostor.standardError == "unhealthy: 127.0.0.1:\(port): TLS failed: the service showed another "
                + "certificate than the one given (--tls-cert): not this service's, or the service's certificate was replaced\n",
            "\(impostor.standardError)")

        // `unicache top` over HTTPS with the same pin (it refused https:// URLs); plain HTTP says to use https://.
        let url = "https://127.0.0.1:\(port)"
        let source = try TopOptions.source(url: url, tlsCert: files.certificate, environment: [:])
        let patient = TopSource(url: url, host: "127.0.0.1", port: port, timeout: .seconds(30), tls: source.tls)
        let version = try await onThread { try patient.snapshot(on: Elapsed(ContinuousClock())).text("version") }
        #expect(version == UnicacheVersion.current)
        let plainTop = TopSource(url: "http://127.0.0.1:\(port)", host: "127.0.0.1", port: port, timeout: .seconds(30))
        await #expect {
            try await onThread { _ = try plainTop.snapshot(on: Elapsed(ContinuousClock())) }
        } throws: { error in
            "\(error)".contains("use --url https://HOST:PORT and pass the same --tls-cert FILE")
        }
        #expect(await service.stop() == 0)
    }

    @Test func aBadPairStopsStartUpWithOneLine() async throws {
        let files = try TestCertificate().write()
        let otherKey = try TestCertificate().write()
        defer {
            files.folder.remove()
            otherKey.folder.remove()
        }
        let cases: [([String], [String: String], String)] = [
            (["--tls-cert", files.certificate], [:], "error: --tls-cert: given without --tls-key"),
            (["--tls-cert", files.folder.path + "/none.pem", "--tls-key", files.key], [:], "error: --tls-cert: cannot read"),
            (["--tls-cert", files.key, "--tls-key", files.key], [:], "error: --tls-cert: "),
            (["--tls-cert", files.certificate, "--tls-key", files.certificate], [:], "error: --tls-key: "),
            (["--tls-cert", files.certificate, "--tls-key", otherKey.key], [:], "error: --tls-key: "),
            ([], ["UNICACHE_TLS_CERT": files.certificate, "UNICACHE_TLS_KEY": otherKey.key], "error: UNICACHE_TLS_KEY: "),
        ]
        for (arguments, environment, prefix) in cases {
            let result = try await BuiltExecutable.run(
                arguments + ["--port", "0", "--disk-limit", "0"], environment: environment)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.standardError.hasPrefix(prefix), "\(result.standardError)")
            #expect(result.standardError.filter { $0 == "\n" }.count == 1)
            #expect(!result.standardError.contains("listening"))
            #expect(result.standardOutput.isEmpty)
        }
    }
}

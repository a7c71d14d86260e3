@testable import Settings
import Tools
import TestSupport
import Testing
import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct HealthcheckClientTests {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}"
    /// Long enough for a loaded CI machine; only `noAnswerTimesOut` waits for a timeout.
    static let generous = Duration.seconds(10)
    static let unavailable = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"

    /// `client.status()` on a thread of its own: its connect and receive block, up to the client's timeout, and on
    /// the cooperative pool they would hold every async test running beside this one.
    static func status(_ client: HealthcheckClient) async throws(HealthcheckError) -> Int {
        try await onThread { () throws(HealthcheckError) -> Int in try client.status() }
    }

    @Test func a200IsHealthyAndTheRequestIsGETHealthz() async throws {
        let server = try TinyHTTPServer(answer: Self.ok)
        defer { server.stop() }
        let status = try await Self.status(HealthcheckClient(host: "127.0.0.1", port: server.port, timeout: Self.generous))
        #expect(status == 200)
        #expect(server.requestLine == "GET /healthz HTTP/1.1")
    }

    @Test func a503IsReportedAsSuch() async throws {
        let server = try TinyHTTPServer(answer: Self.unavailable)
        defer { server.stop() }
        #expect(try await Self.status(HealthcheckClient(host: "127.0.0.1", port: server.port, timeout: Self.generous)) == 503)
    }

    @Test func aWildcardBindAddressIsCheckedOnLoopback() async throws {
        let server = try TinyHTTPServer(answer: Self.ok)
        defer { server.stop() }
        #expect(try await Self.status(HealthcheckClient(host: "0.0.0.0", port: server.port, timeout: Self.generous)) == 200)
    }

    @Test func nothingListeningIsAConnectError() async throws {
        let port = try TinyHTTPServer.unusedPort()
        await #expect {
            try await Self.status(HealthcheckClient(host: "127.0.0.1", port: port, timeout: Self.generous))
        } throws: { error in
            guard case .connect? = error as? HealthcheckError else { return false }
            return true
        }
    }

    @Test func noAnswerTimesOut() async throws {
        let server = try TinyHTTPServer(answer: nil)
        defer { server.stop() }
        await #expect(throws: HealthcheckError.timeout) {
            try await Self.status(HealthcheckClient(host: "127.0.0.1", port: server.port, timeout: .seconds(1)))
        }
    }

    /// A close without a byte is what libmicrohttpd's HTTPS port answers plain HTTP with: the error says to pass
    /// --tls-cert (CONTRACT §11.4); so does a TLS record where a status line belongs.
    @Test(arguments: [("", HealthcheckError.closedWithoutAnswer), ("\u{15}\u{3}\u{3}\u{0}\u{2}\u{2}\u{32}", .speaksTLS)])
    func anHTTPSPortIsNamed(_ answer: String, _ error: HealthcheckError) async throws {
        let server = try TinyHTTPServer(answer: answer)
        defer { server.stop() }
        await #expect(throws: error) {
            try await Self.status(HealthcheckClient(host: "127.0.0.1", port: server.port, timeout: Self.generous))
        }
        #expect(error.description.contains("--tls-cert"))
    }

    @Test(arguments: ["garbage\r\n\r\n", "HTTP/1.1 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "SSH-2.0-OpenSSH\r\n"])
    func aNonHTTPAnswerIsMalformed(_ answer: String) async throws {
        let server = try TinyHTTPServer(answer: answer)
        defer { server.stop() }
        await #expect(throws: HealthcheckError.malformedResponse) {
            try await Self.status(HealthcheckClient(host: "127.0.0.1", port: server.port, timeout: Self.generous))
        }
    }

    @Test func anUnknownHostIsAResolveError() async {
        await #expect {
            try await Self.status(HealthcheckClient(host: "no-such-host.invalid", port: 8080, timeout: Self.generous))
        } throws: { error in
            guard case .resolve? = error as? HealthcheckError else { return false }
            return true
        }
    }

    @Test(arguments: [("0.0.0.0", "127.0.0.1"), ("", "127.0.0.1"), ("::", "::1"), ("[::]", "::1"), ("[::1]", "::1"), ("10.0.0.5", "10.0.0.5"), ("localhost", "localhost")])
    func connectHostForBindAddress(_ bind: String, _ connect: String) {
        #expect(HealthcheckClient.connectHost(forBindAddress: bind) == connect)
    }

    @Test func optionsReadTheServeVariables() async throws {
        let server = try TinyHTTPServer(answer: Self.ok)
        defer { server.stop() }
        let options = try HealthcheckOptions.parse([])
        var client = try options.client(environment: ["UNICACHE_HOST": "0.0.0.0", "UNICACHE_PORT": "\(server.port)"])
        #expect(client.host == "0.0.0.0")
        #expect(client.port == server.port)
        #expect(client.timeout == .seconds(2))
        client.timeout = Self.generous
        #expect(try await Self.status(client) == 200)
    }

    @Test func optionsFlagsWinAndBadValuesAreOneLine() throws {
        let client = try HealthcheckOptions.parse(["--port", "9000", "--timeout", "500ms"])
            .client(environment: ["UNICACHE_PORT": "1"])
        #expect(client.port == 9000)
        #expect(client.timeout == .milliseconds(500))
        for arguments in [["--port", "0"], ["--port", "x"], ["--timeout", "0s"], ["--host", " "]] {
            #expect {
                try HealthcheckOptions.parse(arguments).client(environment: [:])
            } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                return error.message.hasPrefix(arguments[0] + ": ") && !error.message.contains("\n")
            }
        }
    }

    /// A port out of range told the checker that "0 picks a free port", the server's meaning of 0, and the
    /// variable's 0 was blamed on `--port`.
    @Test(arguments: [(["--port", "70000"], [String: String](), "--port: \"70000\""), ([], ["UNICACHE_PORT": "0"], "UNICACHE_PORT")])
    func aPortToCheckIsOneToUpperBound(_ arguments: [String], _ environment: [String: String], _ named: String) {
        #expect {
            try HealthcheckOptions.parse(arguments).client(environment: environment)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.message.hasPrefix(named) && error.message.contains("is not a port to check")
                && error.message.contains("from 1 to 65535") && !error.message.contains("free port")
        }
    }
}

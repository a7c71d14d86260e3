import Foundation
import Testing

/// CONTRACT §11.6: `unicache top` against a URL that does not answer a unicache `/stats` exits 1 saying so, at once,
/// with `--once` or without (it used to show a frame of dashes, or retry forever).
@Suite(.serialized, .timeLimit(.minutes(2)), .executableBuilt)
struct TopExecutableTests {
    /// `timeout` bounds a top that would run forever (exit 124): the test then fails instead of hanging.
    static func top(_ arguments: [String]) async throws -> ChildProcess {
        guard let executable = BuiltExecutable.url else { throw BuiltExecutable.NotBuilt() }
        return try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/timeout"), ["20", executable.path, "top"] + arguments,
            environment: ["PATH": "/usr/bin:/bin"])
    }

    @Test(arguments: [["--once"], []])
    func anotherServiceIsNotWatched(_ mode: [String]) async throws {
        // Another service: its /stats answers 200 with a JSON object of its own.
        let body = #"{"status":"ok","requests":12}"#
        let other = try TinyHTTPServer(
            answer: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body)
        defer { other.stop() }
        let port = other.port
        let result = try await Self.top(mode + ["--url", "http://127.0.0.1:\(port)", "--interval", "100ms"])
        #expect(other.requestLine == "GET /stats HTTP/1.1")
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("unicache top: http://127.0.0.1:\(port): "))
        #expect(result.standardError.contains("is not unicache's"), "\(result.standardError)")
        #expect(result.standardError.filter { $0 == "\n" }.count == 1)
    }

    /// `unicache top | head -1`: the reader gone, top's next frame met a closed pipe (`EPIPE` where `SIGPIPE` is
    /// ignored, as a shell's `trap '' PIPE` or a supervisor leaves it) and trapped in Foundation's `FileHandle.write`
    /// with a stack trace; now it ends quietly with status 0.
    @Test func aClosedStandardOutputEndsTopQuietly() async throws {
        guard let executable = BuiltExecutable.url else { throw BuiltExecutable.NotBuilt() }
        var service = try await ExecutableTests.Service.start([])
        defer { if service.process.isRunning { kill(service.process.processIdentifier, SIGKILL) } }  // a test that threw
        let port = try #require(service.port, "no start-up line in: \(service.log)")
        let script = "trap '' PIPE; timeout 20 \"$0\" top --url http://127.0.0.1:\(port) --interval 50ms | head -1; "
            + "exit ${PIPESTATUS[0]}"
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script, executable.path], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasPrefix("unicache top  http://127.0.0.1:\(port)"))
        #expect(result.standardError.isEmpty, "\(result.standardError)")
        #expect(await service.stop() == 0)
    }

    @Test func nothingListeningEndsTopToo() async throws {
        let port = try TinyHTTPServer.unusedPort()
        let result = try await Self.top(["--url", "http://127.0.0.1:\(port)"])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("unicache top: http://127.0.0.1:\(port): "))
    }
}

import Foundation
import Settings
import Tools
import TestSupport
import Testing
import UnicacheApp

/// The built `unicache` next to the test bundle (SwiftPM builds it for `swift test`); these tests skip without it.
enum BuiltExecutable {
    static let url: URL? = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("unicache")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }()

    /// Whether this build runs under ThreadSanitizer (`swift test --sanitize=thread` builds the executable the same
    /// way): its allocator keeps shadow memory and quarantines freed blocks, so resident-memory bounds do not apply.
    static let underThreadSanitizer = dlsym(nil, "__tsan_init") != nil

    struct NotBuilt: Error {}

    typealias Result = ChildProcess

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        guard let executable = Self.url else { throw NotBuilt() }
        return try await ChildProcess.run(
            executable, arguments, environment: environment.merging(["PATH": "/usr/bin:/bin"]) { own, _ in own })
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where the `unicache` executable is built (beside the test bundle).
    static var executableBuilt: Self { .enabled(if: BuiltExecutable.url != nil, "the unicache executable is not built") }
}

@Suite(.timeLimit(.minutes(10)), .serialized, .executableBuilt)
struct ExecutableTests {
    @Test(arguments: [
        (["--memory-limit", "12XB"], "error: --memory-limit: \"12XB\" is not a byte size"),
        (["--port", "eighty"], "error: --port: "),
        (["--log-format", "xml"], "error: --log-format: "),
        (["--bogus"], "error: Unknown option '--bogus'"),
        (["serve", "--upstream", "weather=http://x"], "error: --upstream: "),
        (["--ttl", "nope=1s"], "error: --ttl: "),
        (["--port"], "error: Missing value for '--port"),
        (["healthcheck", "--port", "x"], "error: --port: "),
        (["nonsense"], "error: Unexpected argument 'nonsense'"),
    ])
    func invalidInvocationsExitNonZeroWithOneLine(_ arguments: [String], _ prefix: String) async throws {
        let result = try await BuiltExecutable.run(arguments)
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix(prefix))
        #expect(result.standardError.filter { $0 == "\n" }.count == 1)
        #expect(result.standardError.hasSuffix("\n"))
        #expect(result.standardOutput.isEmpty)
    }

    /// A host name of the right form that does not resolve (`.invalid` never does, RFC 2606) is found only when the
    /// server binds: it still stops start-up with one line naming the flag, and exit status 64, as a bad value does.
    @Test func aHostThatDoesNotResolveIsNamedAsTheFlag() async throws {
        let result = try await withTemporaryFolder { folder in
            try await BuiltExecutable.run(["--host", "no-such-host.invalid", "--port", "0", "--data-dir", folder])
        }
        #expect(result.status == 64)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.last?.hasPrefix(#"error: --host: "no-such-host.invalid" is not a name this machine resolves"#) == true)
        #expect(!result.standardError.contains("listening on"))
    }

    @Test func aBadEnvironmentVariableIsNamed() async throws {
        let result = try await BuiltExecutable.run([], environment: ["UNICACHE_DISK_LIMIT": "lots"])
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("error: UNICACHE_DISK_LIMIT: \"lots\" is not a byte size"))
        #expect(result.standardError.filter { $0 == "\n" }.count == 1)
    }

    @Test func helpIsArgumentParsersAndSucceeds() async throws {
        let result = try await BuiltExecutable.run(["serve", "--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("--memory-limit <size>"))
        #expect(result.standardOutput.contains("UNICACHE_MEMORY_LIMIT"))
    }

    /// Starts the service (no subcommand, or `serve`), waits for its start-up line, checks /healthz, stops it with
    /// SIGTERM: exit 0, every log line JSON, the token never logged.
    /// A running service (port 0, no disk tier), its standard error read up to the start-up line. Started and
    /// stopped on a thread of its own: reading the child's standard error and waiting for its exit block, and a
    /// service that takes seconds to start or to drain must not hold a thread of the cooperative pool meanwhile.
    struct Service: Sendable {
        let process: Process
        let standardError: FileHandle
        var log: String
        let port: Int?

        /// `launcher` runs the executable (`taskset -c 0`), or nothing; `executable` is the built one unless given.
        /// `environment` is added to the service's own (`PATH`, no disk tier, port 0).
        static func start(
            _ arguments: [String], launcher: [String] = [], executable: URL? = nil, environment: [String: String] = [:]
        ) async throws -> Service {
            guard let executable = executable ?? BuiltExecutable.url else { throw BuiltExecutable.NotBuilt() }
            return try await onThread { () throws -> Service in
                try Service(arguments, launcher: launcher, executable: executable, environment: environment)
            }
        }

        private init(_ arguments: [String], launcher: [String], executable: URL, environment: [String: String]) throws {
            process = Process()
            let command = launcher + [executable.path] + arguments
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.environment = ["PATH": "/usr/bin:/bin", "UNICACHE_DISK_LIMIT": "0", "UNICACHE_PORT": "0"]
                .merging(environment) { _, added in added }
            let error = Pipe()
            process.standardError = error
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            standardError = error.fileHandleForReading
            let startUpLine = #"listening on https?://127\.0\.0\.1:[0-9]+"#
            let (log, _) = Self.read(standardError, after: "") {
                $0.range(of: startUpLine, options: .regularExpression) != nil
            }
            self.log = log
            port = log.range(of: startUpLine, options: .regularExpression).flatMap {
                Int(log[$0].split(separator: ":").last ?? "")
            }
        }

        /// `log` and what `standardError` gives after it, read until `done` holds of the whole (true) or the
        /// service's standard error ends (false). Blocks: call it on a thread of its own.
        private static func read(
            _ standardError: FileHandle, after log: String, until done: (String) -> Bool
        ) -> (String, Bool) {
            var log = log
            while !done(log) {
                let chunk = standardError.availableData
                if chunk.isEmpty { return (log, false) }
                log += String(decoding: chunk, as: UTF8.self)
            }
            return (log, true)
        }

        /// Reads the log on until it holds `text` (a line the service writes later than its start-up line, such as
        /// the disk tier's "disk tier index rebuilt"); false if the service ended first.
        mutating func waitForLog(_ text: String) async -> Bool {
            let (standardError, read) = (self.standardError, self.log)
            let found = await onThread { Self.read(standardError, after: read) { $0.contains(text) } }
            self.log = found.0
            return found.1
        }

        /// SIGTERM, then the rest of the log; returns the exit status.
        mutating func stop() async -> Int32 {
            let (process, standardError) = (self.process, self.standardError)
            log += await onThread {
                kill(process.processIdentifier, SIGTERM)
                let rest = String(decoding: standardError.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return rest
            }
            return process.terminationStatus
        }

        /// SIGKILL, and its end.
        func killAndWait() async {
            let process = self.process
            await onThread {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    @Test(arguments: [[], ["--port", "0"], ["serve", "--port", "0"]])
    func noSubcommandServesUntilSIGTERM(_ arguments: [String]) async throws {
        var service = try await Service.start(arguments + ["--log-format", "json", "--admin-token", "never-logged"])
        let listening = try #require(service.port, "no start-up line in: \(service.log)")
        #expect(try await HealthcheckClientTests.status(HealthcheckClient(host: "127.0.0.1", port: listening, timeout: .seconds(5))) == 200)
        #expect(await service.stop() == 0)
        let log = service.log
        for line in log.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] != nil)
        }
        #expect(!log.contains("never-logged"))
    }

    /// A misspelt variable is named at start-up, with the one meant and without its value; the service starts.
    @Test func aMisspeltVariableIsNamedInTheStartUpLog() async throws {
        var service = try await Service.start(
            ["--log-format", "json"], environment: ["UNICACHE_MEMORY_LIMT": "1GiB", "UNICACHE_ADMIN_TOKN": "never-logged"])
        #expect(service.port != nil, "no start-up line in: \(service.log)")
        #expect(await service.stop() == 0)
        let warnings = service.log.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.filter { ($0["message"] as? String)?.hasPrefix("environment variable ignored") == true }
        let named = warnings.compactMap { $0["metadata"] as? [String: String] }
        #expect(named.contains { $0 == ["variable": "UNICACHE_MEMORY_LIMT", "didYouMean": "UNICACHE_MEMORY_LIMIT"] })
        #expect(named.contains { $0 == ["variable": "UNICACHE_ADMIN_TOKN", "didYouMean": "UNICACHE_ADMIN_TOKEN"] })
        #expect(warnings.allSatisfy { $0["level"] as? String == "warning" })
        #expect(!service.log.contains("never-logged"))
    }

    /// With `--log-format json` every line is one JSON object, the fatal one too: a port already taken is told as a
    /// `critical` line with the error (in text, `error: cannot listen on …`), exit status 1.
    @Test func aServiceThatCannotListenSaysSoInJSON() async throws {
        var first = try await Service.start([])
        let port = try #require(first.port, "no start-up line in: \(first.log)")
        let second = try await BuiltExecutable.run(["--port", "\(port)", "--log-format", "json"])
        let text = try await BuiltExecutable.run(["--port", "\(port)"])
        #expect(await first.stop() == 0)
        #expect(second.status == 1)
        let lines = second.standardError.split(separator: "\n")
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)")
        }
        let last = try #require(
            lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(last["level"] as? String == "critical")
        #expect("\(last)".contains("cannot listen on 127.0.0.1:\(port)"))
        #expect(text.status == 1)
        #expect(text.standardError.hasSuffix(
            "error: cannot listen on 127.0.0.1:\(port): Address already in use (errno \(EADDRINUSE))\n"))
    }

    /// One polling thread per CPU the process may run on: pinned to one CPU, one thread (the start-up line says so).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), "taskset is not installed"))
    func pinnedToOneCPUItPollsWithOneThread() async throws {
        var service = try await Service.start([], launcher: ["/usr/bin/taskset", "-c", "0"])
        #expect(service.port != nil, "no start-up line in: \(service.log)")
        #expect(service.log.contains("pollingThreads=1 "))
        #expect(await service.stop() == 0)
    }

    /// The open-file limit is raised before the disk tier sizes its kept files by it: started under a soft limit of
    /// 256 and a hard one of 2,048, the tier keeps up to 512 files open (a quarter of the raised limit), not 64.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "prlimit is not installed"))
    func theDiskTierKeepsAQuarterOfTheRaisedOpenFileLimit() async throws {
        try await withTemporaryFolder("kept-open") { dataDir in
            var service = try await Service.start(
                ["--disk-limit", "10MiB", "--data-dir", dataDir], launcher: ["/usr/bin/prlimit", "--nofile=256:2048"])
            #expect(service.port != nil, "no start-up line in: \(service.log)")
            #expect(await service.stop() == 0)
            #expect(service.log.contains("openFileLimit=2048 "), "\(service.log)")
            #expect(service.log.contains("keptOpenFiles=512 "), "\(service.log)")
        }
    }

    @Test func healthcheckExitsZeroOn200AndOneOn503() async throws {
        let healthy = try TinyHTTPServer(answer: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        defer { healthy.stop() }
        #expect(try await BuiltExecutable.run(["healthcheck", "--port", "\(healthy.port)", "--timeout", "10s"]).status == 0)

        let unhealthy = try TinyHTTPServer(answer: "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
        defer { unhealthy.stop() }
        let result = try await BuiltExecutable.run(["healthcheck", "--timeout", "10s"], environment: ["UNICACHE_PORT": "\(unhealthy.port)"])
        #expect(result.status == 1)
        #expect(result.standardError == "unhealthy: GET /healthz answered 503\n")
    }
}

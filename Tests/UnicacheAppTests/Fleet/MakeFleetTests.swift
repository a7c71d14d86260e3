import Foundation
import Tools
import NIOConcurrencyHelpers
import Testing
import TestSupport

/// `make fleet` (scripts/fleet.sh) with the built executable, redis-server and haproxy (CONTRACT §11.6): it prints
/// the commands to try only once every instance's `/stats` reports the shared tier connected, and a fleet that cannot
/// connect stops within its bounded wait, saying which instances did not, with nothing to try printed.
@Suite(.serialized, .timeLimit(.minutes(3)), .executableBuilt)
struct MakeFleetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// scripts/fleet.sh running, its standard output read as it comes.
    final class FleetScript: Sendable {
        let process = Process()
        private let output: FileHandle
        private let error: FileHandle
        private let text = NIOLockedValueBox("")

        init(_ arguments: [String], timeout: Int) throws {
            guard let executable = BuiltExecutable.url else { throw BuiltExecutable.NotBuilt() }
            // A child starts with its parent thread's signal mask, and the test runner's threads block SIGTERM: the
            // script (and what it starts) must see it, as from a shell. python3 clears the mask and runs bash.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [
                "-c",
                "import os, signal, sys; signal.signal(signal.SIGPIPE, signal.SIG_DFL); "
                    + "signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv('/bin/bash', ['bash'] + sys.argv[1:])",
                MakeFleetTests.root.appendingPathComponent("scripts/fleet.sh").path,
            ] + arguments
            process.environment = [
                "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "UNICACHE_BIN": executable.path,
                "FLEET_STARTUP_TIMEOUT": "\(timeout)",
            ]
            let (output, error) = (Pipe(), Pipe())
            process.standardOutput = output
            process.standardError = error
            process.standardInput = FileHandle.nullDevice
            try process.run()
            self.output = output.fileHandleForReading
            self.error = error.fileHandleForReading
        }

        /// Standard output up to `marker` (or to its end, when the script exits first).
        func output(through marker: String) async -> String {
            let (handle, text) = (output, self.text)
            return await onThread {
                while !text.withLockedValue({ $0.contains(marker) }) {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    text.withLockedValue { $0 += String(decoding: chunk, as: UTF8.self) }
                }
                return text.withLockedValue { $0 }
            }
        }

        /// SIGTERM (the script stops what it started), then its exit status and standard error.
        func stop() async -> (status: Int32, standardError: String) {
            let (process, handle) = (self.process, error)
            return await onThread {
                if process.isRunning { process.terminate() }
                let errors = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return (process.terminationStatus, errors)
            }
        }
    }

    /// Every `NAME  http://127.0.0.1:PORT` of the printed fleet whose name starts with `unicache-`.
    static func instancePorts(_ output: String) -> [Int] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 2, fields[0].hasPrefix("unicache-"), fields[1].hasPrefix("http://127.0.0.1:") else {
                return nil
            }
            return Int(fields[1].dropFirst("http://127.0.0.1:".count))
        }
    }

    @Test func theCommandsToTryComeOnceEveryInstanceIsConnected() async throws {
        let fleet = try FleetScript([], timeout: 60)
        let output = await fleet.output(through: "Ctrl-C stops everything.")
        var connected: [Bool] = []
        for port in Self.instancePorts(output) {
            let stats = try? await onThread {
                try HealthcheckClient(host: "127.0.0.1", port: port, path: "/stats").get(accept: "application/json")
            }
            let document = stats.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] }
            connected.append((document?["shared"] as? [String: Any])?["connected"] as? Bool == true)
        }
        let stopped = await fleet.stop()
        #expect(output.contains("A value fetched by one instance is a shared hit on the other"), "\(stopped.standardError)")
        #expect(connected == [true, true], "\(output)")
        #expect(stopped.standardError.contains("stopping the fleet"))
    }

    /// Instances that cannot subscribe (a key prefix outside the ACL user's rules) never connect: the script stops
    /// after its bounded wait, naming them, and prints nothing to try.
    @Test func aFleetThatCannotConnectSaysSoAndPrintsNothingToTry() async throws {
        let fleet = try FleetScript(["--redis-prefix", "elsewhere:"], timeout: 5)
        let output = await fleet.output(through: "Ctrl-C stops everything.")
        let stopped = await fleet.stop()
        #expect(stopped.status == 1)
        #expect(!output.contains("curl"), "\(output)")
        #expect(
            stopped.standardError.contains(
                "after 5s, unicache-a unicache-b did not report the shared tier connected (/stats shared.connected true)"),
            "\(stopped.standardError)")
    }
}

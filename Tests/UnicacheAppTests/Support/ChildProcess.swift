import Foundation
import TestSupport

/// A command run to its end: its exit status and what it wrote.
struct ChildProcess: Sendable {
    var status: Int32
    /// The process's id (it has exited and been reaped: no process has it, until the system reuses it).
    var pid: Int32
    var standardOutput: String
    var standardError: String

    /// Runs the command on a thread of its own: a child that takes seconds (a healthcheck timing out, `curl
    /// --max-time`) must not hold one of the cooperative pool's threads (two on this machine), or every live-server
    /// test running beside it stalls past its clients' timeouts.
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, standardInput: String? = nil
    ) async throws -> ChildProcess {
        try await onThread { () throws -> ChildProcess in
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            if let environment { process.environment = environment }
            let output = Pipe()
            let error = Pipe()
            process.standardOutput = output
            process.standardError = error
            let input = Pipe()
            process.standardInput = standardInput == nil ? FileHandle.nullDevice : input
            try process.run()
            if let standardInput {
                input.fileHandleForWriting.write(Data(standardInput.utf8))
                try input.fileHandleForWriting.close()
            }
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            let errorData = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return ChildProcess(
                status: process.terminationStatus, pid: process.processIdentifier,
                standardOutput: String(decoding: outputData, as: UTF8.self),
                standardError: String(decoding: errorData, as: UTF8.self))
        }
    }
}

import Foundation
import JSONLogging
@testable import Settings
import TestSupport
import Testing
import UnicacheApp

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.timeLimit(.minutes(10))) struct LogOutputTests {
    /// Lines far longer than PIPE_BUF from many tasks at once: without the writer's lock they would interleave.
    @Test func concurrentLongLinesArriveWhole() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let received: Task<[UInt8], Never> = Task.detached {
            await onThread {
                var all: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    all += chunk[..<count]
                }
                return all
            }
        }
        let output = LogOutput.fileDescriptor(writeEnd)
        // Eight writers on threads of their own: a write blocks while the pipe is full and the others wait for the
        // writer's lock, which on the cooperative pool's two threads held every other test of the suite (this one
        // took 34 s in a full run, and the tests beside it stalled).
        await withTaskGroup { group in
            for task in 0..<8 {
                group.addTask {
                    await onThread {
                        let letter = Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(task)))
                        for _ in 0..<50 { output.writeLine(String(repeating: letter, count: 20_000)) }
                    }
                }
            }
        }
        close(writeEnd)
        let lines = String(decoding: await received.value, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 400)
        let broken = lines.filter { $0.count != 20_000 || Set($0).count != 1 }
        #expect(broken.isEmpty, "\(broken.count) lines were interleaved")
    }
}

import Foundation
import NIOCore
import Testing
@testable import MicroHTTPServer

@Suite(.timeLimit(.minutes(10))) struct PollingThreadsTests {
    /// The CPUs in the `Cpus_allowed` mask of /proc/self/status (hex words separated by commas).
    static func cpusAllowedByProc() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed:") })
        let mask = line.dropFirst("Cpus_allowed:".count).trimmingCharacters(in: .whitespaces)
        var count = 0
        for word in mask.split(separator: ",") {
            count += try #require(UInt32(word, radix: 16)).nonzeroBitCount
        }
        return count
    }

    @Test func availableProcessorsIsTheAffinityMaskWithinTheContainersQuota() throws {
        let allowed = try Self.cpusAllowedByProc()
        #expect(allowed >= 1)
        #expect(MicroHTTPServerConfiguration.availableProcessors() == min(allowed, System.coreCount))
    }

    @Test func byDefaultOnePollingThreadPerAvailableProcessor() {
        let configuration = MicroHTTPServerConfiguration()
        #expect(configuration.pollingThreads == MicroHTTPServerConfiguration.availableProcessors())
        #expect(configuration.effectivePollingThreads == configuration.pollingThreads)
    }

    @Test(arguments: [(threads: 0, connections: 10, started: 1), (4, 10, 4), (4, 2, 2), (3, 0, 1)])
    func startedWithAtLeastOneThreadAndNoMoreThanConnections(threads: Int, connections: Int, started: Int) {
        let configuration = MicroHTTPServerConfiguration(maxConnections: connections, pollingThreads: threads)
        #expect(configuration.effectivePollingThreads == started)
    }
}

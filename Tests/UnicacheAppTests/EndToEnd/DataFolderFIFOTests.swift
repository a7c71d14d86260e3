import Foundation
@testable import Settings
import TestSupport
import Testing
@testable import Tools
@testable import UnicacheApp

/// CONTRACT §4: nothing placed in the data folder can hang the service. A raw entry's file is swapped for a FIFO
/// while the service is stopped; after the restart (whose index rebuild meets the FIFO) a GET of that key answers
/// 404 at once (within 5 s, far from the 30 s request timeout a blocked open would run into, and a bound a loaded
/// machine does not reach), another key is still served, and SIGTERM still stops the process.
@Suite(.serialized, .timeLimit(.minutes(1)), .executableBuilt)
struct DataFolderFIFOTests {
    static let token = "fifo-token"

    /// The status of `GET /v1/cache/{key}` and how long the service took to answer it, timed on a thread of its
    /// own with a blocking socket: a cooperative pool kept busy by other tests does not count, only the service.
    static func timedGet(_ port: Int, _ key: String) async throws -> (status: Int, took: Duration) {
        let request = "GET /v1/cache/\(key) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Connection: close\r\n\r\n"
        return try await onThread { () throws(HealthcheckError) -> (status: Int, took: Duration) in
            let clock = ContinuousClock()
            let start = clock.now
            let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(10))
            defer { socket.close() }
            try socket.send(Array(request.utf8))
            let head = try socket.receive(until: Array("\r\n".utf8), limit: 8192, deadline: start + .seconds(10))
            return (try HealthcheckClient.statusCode(ofResponseHead: head), clock.now - start)
        }
    }

    /// Entry files under `dir` (the tier's `a/bc/<hash>` layout), temp files aside.
    static func entryFiles(_ dir: URL) throws -> Set<String> {
        let walker = try #require(FileManager.default.enumerator(at: dir, includingPropertiesForKeys: [.isRegularFileKey]))
        var files: Set<String> = []
        for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            files.insert(url.path)
        }
        return files
    }

    @Test func aFIFOInPlaceOfAnEntryFileIsAnsweredAtOnce() async throws {
        let folder = try TemporaryFolder("unicache-fifo"), dir = folder.url.appendingPathComponent("data")
        defer { folder.remove() }
        let arguments = ["--data-dir", dir.path, "--disk-limit", "64MiB", "--admin-token", Self.token]

        var first = try await ExecutableTests.Service.start(arguments)
        let port = try #require(first.port, "no start-up line in: \(first.log)")
        #expect(try await FullDiskTests.put(port: port, key: "kept", token: Self.token) == 201)
        let before = try Self.entryFiles(dir)
        #expect(try await FullDiskTests.put(port: port, key: "fifo", token: Self.token) == 201)
        let fifoFile = try #require(try Self.entryFiles(dir).subtracting(before).first)
        #expect(await first.stop() == 0)

        try FileManager.default.removeItem(atPath: fifoFile)
        #expect(mkfifo(fifoFile, 0o644) == 0)

        var restarted = try await ExecutableTests.Service.start(arguments)
        let newPort = try #require(restarted.port, "no start-up line in: \(restarted.log)")
        let fifo = try await Self.timedGet(newPort, "fifo")
        #expect(fifo.status == 404)
        #expect(fifo.took < .seconds(5))
        #expect(try await FullDiskTests.send(port: newPort, .GET, key: "kept", token: Self.token).status == 200)
        #expect(await restarted.stop() == 0)
    }
}

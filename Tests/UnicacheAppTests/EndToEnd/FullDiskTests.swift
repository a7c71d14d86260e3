import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// A small tmpfs mounted for one test (root only; the suite is skipped where mounting is not allowed), unmounted by
/// `stop()`; `mount` and `umount` run on a thread of their own.
struct Tmpfs: StoppableService {
    let folder: TemporaryFolder
    var path: String { folder.path }

    static func canMount() async -> Bool {
        guard getuid() == 0, let probe = try? await mount(size: "64k") else { return false }
        await probe.stop()
        return true
    }

    static func mount(size: String) async throws -> Tmpfs {
        let folder = try TemporaryFolder("unicache-tmpfs")
        guard await run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),noatime", "tmpfs", folder.path]) == nil else {
            folder.remove()
            throw CocoaError(.fileWriteNoPermission)
        }
        return Tmpfs(folder: folder)
    }

    /// `mount -o remount,ro` (or `rw`): a data dir that turns read-only under a running service. Nil when done, or
    /// what `mount` said. Linux refuses a read-only remount ("busy") while anything writes to the mount, an atime
    /// update too: the tmpfs is `noatime`, and a test waits for the service's start-up scan to end first.
    func remount(readOnly: Bool) async -> String? {
        await Self.run("/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", path])
    }

    func stop() async {
        _ = await Self.run("/bin/umount", [path])
        folder.remove()
    }

    /// Nil when `tool` exits 0, else what it said on standard error.
    private static func run(_ tool: String, _ arguments: [String]) async -> String? {
        guard let done = try? await ChildProcess.run(URL(fileURLWithPath: tool), arguments) else {
            return "\(tool) did not run"
        }
        return done.status == 0 ? nil : done.standardError
    }
}

/// CONTRACT §4: a raw PUT is acknowledged only once written to the disk tier; on a full disk it answers 507
/// problem+json and stores nothing. After kill -9 and a restart every acknowledged PUT is there, no refused one.
@Suite(
    .serialized, .timeLimit(.minutes(2)), .executableBuilt,
    .enabled("mounting a tmpfs needs root") { await Tmpfs.canMount() })
struct FullDiskTests {
    static let token = "full-disk-token"

    struct Answer {
        var status: Int
        var contentType: String?
        var body: [UInt8]
    }

    /// `method /v1/cache/{key}` to the service on `port`, with the admin `token`.
    static func send(
        _ client: HTTPClient = .shared, port: Int, _ method: NIOHTTP1.HTTPMethod, key: String, body: [UInt8]? = nil,
        token: String = FullDiskTests.token
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/cache/\(key)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 2 << 20)
        return Answer(
            status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
            body: Array(collected.readableBytesView))
    }

    /// `PUT /v1/cache/{key}` with the body "value of {key}" (the data-folder tests): its status.
    static func put(port: Int, key: String, token: String) async throws -> Int {
        try await send(port: port, .PUT, key: key, body: Array("value of \(key)".utf8), token: token).status
    }

    /// `DELETE /v1/cache?{query}` to the service on `port`, with the admin token.
    static func deleteMany(port: Int, _ query: String) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/cache?\(query)")
        request.method = .DELETE
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 1 << 20)
        return Answer(
            status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
            body: Array(collected.readableBytesView))
    }

    /// The `type` of a problem+json answer.
    static func problemType(_ answer: Answer) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["type"] as? String
    }

    static func body(_ index: Int) -> [UInt8] {
        (0..<(48 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
    }

    @Test func aFullDiskRefusesWithProblemJSONAndLosesNoAcknowledgedWriteAcrossKill9() async throws {
        try await withService(Tmpfs.mount(size: "1m")) { disk in
            let client = HTTPClient.shared
            let arguments = [
                "--data-dir", disk.path, "--disk-limit", "1GiB", "--admin-token", Self.token,
            ]

            let service = try await ExecutableTests.Service.start(arguments)
            let port = try #require(service.port, "no start-up line in: \(service.log)")
            var acknowledged: [Int] = []
            var refused: [Int] = []
            for index in 0..<40 {
                let answer = try await Self.send(client, port: port, .PUT, key: "full:\(index)", body: Self.body(index))
                switch answer.status {
                case 201: acknowledged.append(index)
                case 507:
                    refused.append(index)
                    #expect(answer.contentType == "application/problem+json")
                    let problem = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
                    #expect(problem?["status"] as? Int == 507)
                default: Issue.record("PUT full:\(index) answered \(answer.status)")
                }
            }
            #expect(acknowledged.count >= 5)  // 1 MiB holds about twenty 48 KiB entries
            #expect(refused.count >= 10)
            for index in refused {
                #expect(try await Self.send(client, port: port, .GET, key: "full:\(index)").status == 404)
            }
            await service.killAndWait()

            var restarted = try await ExecutableTests.Service.start(arguments)
            let newPort = try #require(restarted.port, "no start-up line in: \(restarted.log)")
            for index in acknowledged {
                let answer = try await Self.send(client, port: newPort, .GET, key: "full:\(index)")
                #expect(answer.status == 200, "acknowledged PUT full:\(index) lost")
                #expect(answer.body == Self.body(index))
            }
            for index in refused {
                #expect(try await Self.send(client, port: newPort, .GET, key: "full:\(index)").status == 404)
            }
            #expect(await restarted.stop() == 0)
        }
    }

    /// CONTRACT §4: invalidation removes the entry from memory and disk before the answer is sent. A data dir turned
    /// read-only cannot delete: the delete is not acknowledged (503 problem+json), the entry is no longer served, and
    /// the same delete once the disk is writable again removes the files (a restart does not bring them back).
    @Test func aDeleteTheDiskCannotDoIs503AndItsRetryRemovesTheFiles() async throws {
        try await withService(Tmpfs.mount(size: "1m")) { disk in
            let arguments = ["--data-dir", disk.path, "--disk-limit", "1GiB", "--admin-token", Self.token]
            let keys = ["ro:a", "ro:b", "ro:c"]
            var service = try await ExecutableTests.Service.start(arguments)
            let port = try #require(service.port, "no start-up line in: \(service.log)")
            #expect(await service.waitForLog("disk tier index rebuilt"), "\(service.log)")
            for key in keys { #expect(try await Self.put(port: port, key: key, token: Self.token) == 201) }

            #expect(await disk.remount(readOnly: true) == nil)
            let one = try await Self.send(port: port, .DELETE, key: "ro:a")
            #expect(one.status == 503)
            #expect(one.contentType == "application/problem+json")
            #expect(
                Self.problemType(one)?.hasSuffix("/not-removed") == true, "\(String(decoding: one.body, as: UTF8.self))")
            let many = try await Self.deleteMany(port: port, "prefix=ro:")
            #expect(many.status == 503)
            for key in keys { #expect(try await Self.send(port: port, .GET, key: key).status == 404) }

            #expect(await disk.remount(readOnly: false) == nil)
            let retried = try await Self.deleteMany(port: port, "prefix=ro:")
            #expect(retried.status == 200)
            #expect(String(decoding: retried.body, as: UTF8.self) == #"{"invalidated":3}"#)
            await service.killAndWait()

            var restarted = try await ExecutableTests.Service.start(arguments)
            let newPort = try #require(restarted.port, "no start-up line in: \(restarted.log)")
            for key in keys { #expect(try await Self.send(port: newPort, .GET, key: key).status == 404) }
            #expect(await restarted.stop() == 0)
        }
    }

    /// A replacing PUT the read-only disk cannot write is 507, and the previous value's file, which it cannot delete
    /// either, is named in the answer (a restart would serve it); the PUT retried, or a DELETE, once the disk is
    /// writable again leaves no trace of it. A PUT of a new key, and a DELETE of a key never stored, say nothing of
    /// a previous value (Linux's unlink says "read-only" before it finds no such file, once the file's folder exists:
    /// the test makes every folder of the layout, `<data dir>/a/bc`, first).
    @Test func aReplacingPutTheDiskCannotWriteNamesThePreviousFileAndItsRetryReplacesIt() async throws {
        try await withService(Tmpfs.mount(size: "1m")) { disk in
            let hex = Array("0123456789abcdef")
            for first in hex {
                for second in hex {
                    for third in hex {
                        try FileManager.default.createDirectory(
                            atPath: "\(disk.path)/\(first)/\(second)\(third)", withIntermediateDirectories: true)
                    }
                }
            }
            let arguments = ["--data-dir", disk.path, "--disk-limit", "1GiB", "--admin-token", Self.token]
            var service = try await ExecutableTests.Service.start(arguments)
            let port = try #require(service.port, "no start-up line in: \(service.log)")
            #expect(await service.waitForLog("disk tier index rebuilt"), "\(service.log)")
            for key in ["ro:put", "ro:delete"] {
                #expect(try await Self.put(port: port, key: key, token: Self.token) == 201)
            }

            #expect(await disk.remount(readOnly: true) == nil)
            for key in ["ro:put", "ro:delete"] {
                let refused = try await Self.send(port: port, .PUT, key: key, body: Array("new".utf8))
                #expect(refused.status == 507)
                let detail = String(decoding: refused.body, as: UTF8.self)
                #expect(detail.contains("Nor could it delete the previous value's file"), "\(detail)")
                #expect(try await Self.send(port: port, .GET, key: key).status == 404)
            }
            let fresh = try await Self.send(port: port, .PUT, key: "ro:new", body: Array("new".utf8))
            #expect(fresh.status == 507)
            #expect(String(decoding: fresh.body, as: UTF8.self).contains("Nothing is kept under this key"))
            #expect(try await Self.send(port: port, .DELETE, key: "ro:never-stored").status == 404)

            #expect(await disk.remount(readOnly: false) == nil)
            #expect(try await Self.send(port: port, .PUT, key: "ro:put", body: Array("new".utf8)).status == 201)
            #expect(try await Self.send(port: port, .DELETE, key: "ro:delete").status == 404)
            await service.killAndWait()

            var restarted = try await ExecutableTests.Service.start(arguments)
            let newPort = try #require(restarted.port, "no start-up line in: \(restarted.log)")
            #expect(try await Self.send(port: newPort, .GET, key: "ro:put").body == Array("new".utf8))
            #expect(try await Self.send(port: newPort, .GET, key: "ro:delete").status == 404)
            #expect(await restarted.stop() == 0)
        }
    }
}

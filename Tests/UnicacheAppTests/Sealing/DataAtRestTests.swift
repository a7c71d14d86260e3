import Crypto
import Foundation
import Redis
import RedisTestSupport
import RedisTier
@testable import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// CONTRACT §9.1 end to end: bodies with distinctive markers (raw PUTs, text and binary, and read-through values)
/// go through a whole service with a disk tier and a real Redis; once it is stopped, every file of the data folder,
/// every Redis value under the prefix and an RDB dump are scanned. With a key ring no marker is anywhere; without
/// one every marker is everywhere, which proves the scan sees them.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DataAtRestTests {
    struct Stored {
        /// Markers that must not be readable at rest with a key ring: bodies, content type, ETags, body digests.
        var secrets: [(what: String, bytes: [UInt8])] = []
    }

    @Test(arguments: [true, false])
    func nothingOfABodyIsReadableAtRest(sealed: Bool) async throws {
        let data = try TemporaryFolder("at-rest"), redisFolder = try TemporaryFolder("at-rest")
        let (dataDir, redisDir) = (data.path, redisFolder.path)
        defer { data.remove(); redisFolder.remove() }
        let redis = try await RedisServerProcess.start(directory: redisDir)
        let prefix = "rest:"
        try await withService(LiveService.starting(
            dataDir: dataDir, redis: redis, prefix: prefix, keyFile: sealed ? try AtRest.keyFile("k1") : nil)) { service in
            let stored = try await store(in: service)
            await service.stop()

            let files = try AtRest.files(under: dataDir)
            let values = try await AtRest.redisValues(redis, prefix: prefix)
            let dump = try await AtRest.rdbDump(redis)
            await redis.stop()
            #expect(files.count >= 3)
            #expect(values.count >= 3)
            for (what, secret) in stored.secrets {
                let inFiles = files.contains { $0.contains(subsequence: secret) }
                let inRedis = values.values.contains { $0.contains(subsequence: secret) }
                let inDump = dump.contains(subsequence: secret)
                if sealed {
                    #expect(!inFiles && !inRedis && !inDump, "\(what): files \(inFiles), Redis \(inRedis), RDB \(inDump)")
                } else {
                    #expect(inFiles && inRedis && inDump, "\(what): files \(inFiles), Redis \(inRedis), RDB \(inDump)")
                }
            }
        }
    }

    /// A raw text PUT, a raw binary PUT and a read-through value, each with its own marker; returns what must not
    /// be readable at rest.
    func store(in service: LiveService) async throws -> Stored {
        let tag = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        var stored = Stored()
        let text = "RAW-TEXT-\(tag)"
        let contentType = "application/x-ct-\(tag)"
        let put = try await service.request(
            .PUT, "/v1/cache/notes:text", headers: [("Content-Type", contentType)], body: #"{"note":"\#(text)"}"#, admin: true)
        #expect(put.status == 201)
        stored.secrets += [("text body", Array(text.utf8)), ("content type", Array(contentType.utf8))]

        let binaryMarker = Array("RAW-BIN-\(tag)".utf8)
        let binary: [UInt8] = [0, 255, 254, 1] + binaryMarker + [0, 0, 13, 10, 128]
        let binaryPut = try await service.request(.PUT, "/v1/cache/notes:binary", bytes: binary, admin: true)
        #expect(binaryPut.status == 201)
        let binaryGet = try await service.request(.GET, "/v1/cache/notes:binary", admin: true)
        #expect(binaryGet.bytes == binary)
        stored.secrets += [("binary body", binaryMarker), ("binary body digest", Array(SHA256.hash(data: binary)))]

        let fetched = "READ-THROUGH-\(tag)"
        service.upstream.set("/users/alice/subscription", .reply(.json(#"{"plan":"\#(fetched)"}"#)))
        let read = try await service.request(.GET, "/v1/users/alice/subscription")
        #expect(read.status == 200)
        #expect(read.body.contains(fetched))
        stored.secrets.append(("read-through body", Array(fetched.utf8)))
        for (what, answer) in [("text", put), ("binary", binaryPut), ("read-through", read)] {
            if let etag = answer.header("ETag") { stored.secrets.append(("\(what) ETag", Array(etag.utf8))) }
        }
        return stored
    }
}

import Crypto
import Foundation
import Redis
import RedisTestSupport
import RedisTier
@testable import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// What the data-at-rest tests need: key rings, a folder, and every byte the service left on disk and in Redis.
enum AtRest {
    /// A key file (mode 600) of `ids`, alone in a fresh temporary folder, the first the primary; each key derived from
    /// its ID, so two rings with one ID agree. Read once, at start-up: remove its folder once the service has started
    /// (`LiveService.starting` does).
    static func keyFile(_ ids: String...) throws -> String {
        try keyFile(ids.map { ($0, Array(SHA256.hash(data: Array("key of \($0)".utf8)))) })
    }

    static func keyFile(_ keys: [(id: String, secret: [UInt8])]) throws -> String {
        let text = keys.map { "\($0.id):\(Data($0.secret).base64EncodedString())\n" }.joined()
        return try secretFile(text, mode: 0o600, name: "keys").path
    }

    /// The contents of every regular file under `directory`.
    static func files(under directory: String) throws -> [[UInt8]] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var files: [[UInt8]] = []
        while let relative = walker.nextObject() as? String {
            let path = "\(directory)/\(relative)"
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files.append(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        }
        return files
    }

    /// Every value under `prefix` (the tier's own `#` keys included), by SCAN and GET.
    static func redisValues(_ redis: RedisServerProcess, prefix: String) async throws -> [String: [UInt8]] {
        var values: [String: [UInt8]] = [:]
        var cursor = "0"
        repeat {
            guard case .array(let parts) = try await redisCommand(redis, "SCAN", cursor, "MATCH", prefix + "*", "COUNT", "1000"),
                parts.count == 2, case .string(let next) = parts[0], case .array(let names) = parts[1]
            else { throw RedisProcessError("unexpected SCAN reply") }
            cursor = String(decoding: next, as: UTF8.self)
            for case .string(let name) in names {
                let name = String(decoding: name, as: UTF8.self)
                if case .string(let value) = try await redisCommand(redis, "GET", name) { values[name] = value }
            }
        } while cursor != "0"
        return values
    }

    /// An RDB dump taken with `SAVE` (uncompressed, so that a plaintext marker shows verbatim and the scan is
    /// fair), found through `CONFIG GET dir` and `dbfilename` and read back whole. Start the server with a
    /// `directory` of the test's: Redis 7 refuses to change it at run time.
    static func rdbDump(_ redis: RedisServerProcess) async throws -> [UInt8] {
        _ = try await redisCommand(redis, "CONFIG", "SET", "rdbcompression", "no")
        #expect(try await redisCommand(redis, "SAVE") == .status("OK"))
        let path = try await configuration(redis, "dir") + "/" + configuration(redis, "dbfilename")
        #expect(redis.directory.map { path.hasPrefix($0) } == true)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private static func configuration(_ redis: RedisServerProcess, _ name: String) async throws -> String {
        guard case .array(let reply) = try await redisCommand(redis, "CONFIG", "GET", name), reply.count == 2,
            case .string(let value) = reply[1]
        else { throw RedisProcessError("unexpected CONFIG GET reply") }
        return String(decoding: value, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}

extension LiveService {
    /// A service sealing with the key ring `keyFile` (an `AtRest.keyFile`, removed with its folder once read), or in
    /// the clear without one; `migrate`: plaintext values still read under the ring (`--encryption-migrate`).
    static func starting(
        dataDir: String? = nil, redis: RedisServerProcess? = nil, prefix: String, keyFile: String?,
        upstream: (TestUpstream, port: Int)? = nil, migrate: Bool = false
    ) async throws -> LiveService {
        defer { if let keyFile { try? FileManager.default.removeItem(atPath: (keyFile as NSString).deletingLastPathComponent) } }
        let service = try await LiveService.start(
            dataDir: dataDir, upstream: upstream,
            redis: redis.map { SharedTierSettings(redis: $0.endpoint, timeout: .seconds(1), prefix: prefix) },
            keyFile: keyFile, migrate: migrate)
        if redis != nil {
            await waitUntil("the shared tier is connected") { service.app.cache.statistics().shared?.connected == true }
        }
        return service
    }
}

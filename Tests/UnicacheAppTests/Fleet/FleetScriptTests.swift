import Foundation
import Redis
import RedisTestSupport
import Settings
import Testing
import TestSupport
import UnifiedCache

import UnicacheApp

/// The shared tier's Lua scripts go to Redis by digest (`EVALSHA`), not as text with every command, and a Redis
/// that lost its script cache (restarted, `SCRIPT FLUSH`) costs one `EVAL` that caches the script again.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FleetScriptTests {
    @Test func scriptsGoByDigestAndSurviveAFlushedScriptCache() async throws {
        try await withService(Fleet.start(instances: 1)) { fleet in
            let instance = fleet.instances[0]
            let before = try await instance.request(.PUT, "/v1/cache/script-a", body: "a", admin: true)
            let cached = try await instance.request(.PUT, "/v1/cache/script-a2", body: "a", admin: true)
            _ = try await redisCommand(fleet.redis, "SCRIPT", "FLUSH")
            let after = try await instance.request(.PUT, "/v1/cache/script-b", body: "b", admin: true)
            let stored = try await redisCommand(fleet.redis, "EXISTS", fleet.prefix + "script-b")
            let stats = try await redisCommand(fleet.redis, "INFO", "commandstats")
            let shared = Fleet.shared(instance)
            await fleet.stop()

            #expect(before.status == 201 && cached.status == 201)
            #expect(after.status == 201)
            #expect(stored == .integer(1))
            #expect(shared.operations[.init("store", "error")] == nil)
            guard case .string(let bytes) = stats else {
                Issue.record("INFO commandstats answered \(stats)")
                return
            }
            let text = String(decoding: bytes, as: UTF8.self)
            // The second PUT's store script ran by digest (the first one's NOSCRIPT had cached it); the first store and
            // the one after the flush were refused (NOSCRIPT) and sent again as EVAL. (Not "every refusal had its EVAL":
            // a background command's EVAL may time out before Redis sees it on a loaded machine.)
            let evalsha = Self.field("evalsha", in: text)
            #expect(evalsha["calls", default: 0] - evalsha["failed_calls", default: 0] >= 1)
            #expect(evalsha["failed_calls", default: 0] >= 2)
            #expect(Self.field("eval", in: text)["calls", default: 0] >= 2)
        }
    }

    /// The counters of `cmdstat_COMMAND` in `INFO commandstats` (`calls`, `failed_calls`, …); empty when the
    /// command never ran.
    static func field(_ command: String, in info: String) -> [String: Int] {
        var fields: [String: Int] = [:]
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_\(command):") {
            for pair in line.dropFirst("cmdstat_\(command):".count).split(separator: ",") {
                let parts = pair.split(separator: "=")
                if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
            }
        }
        return fields
    }
}

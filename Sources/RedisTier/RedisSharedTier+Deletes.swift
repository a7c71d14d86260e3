import Redis
import UnifiedCache

/// Erasure, prefix and full deletes: on a cluster once per shard, each shard's deletions and announcement one script
/// in that shard's slot, the counts summed (CONTRACT §13.2). On one Redis the one shard is the whole key space.
extension RedisSharedTier {
    /// Each namespace is an argument of its own: no separator a name could contain. Per shard, two steps: the user's
    /// index read (`HGETALL`), then the script over the entries it names (`RedisScripts.deleteUser`), again for any
    /// key the index gained meanwhile. Every shard announces the change in its own log (a shard whose log vouches for
    /// an instance's position holds it), even with no entry removed.
    func deleteUser(_ user: String, namespaces: Set<String>?, change: String) async throws(SharedTierUnavailable)
        -> [String]
    {
        let filter = namespaces.map { ["some"] + $0.sorted() } ?? ["all"]
        var removed: [String] = []
        for shard in 0..<keys.shards {
            let index = keys.userIndex(user, shard: shard)
            var pending = try await indexedKeys(index, namespaces: namespaces)
            for round in 1...Self.erasureRounds {
                let reply = try await commands.run(
                    "invalidate",
                    RedisScripts.deleteUser.on(keys), keys: [index, keys.log(shard)] + pending.map(keys.entry),
                    arguments: [keys.shardPrefix(shard), keys.channel(shard), messageHead, change, "\(configuration.logLength)"]
                        + filter)
                guard case .array(let parts) = reply, parts.count == 2, case .array(let deleted) = parts[0],
                    case .array(let left) = parts[1]
                else { throw SharedTierUnavailable(reason: "unexpected erasure reply") }
                removed += deleted.compactMap(\.text)
                pending = left.compactMap(\.text)
                if pending.isEmpty { break }
                guard round < Self.erasureRounds else {
                    throw SharedTierUnavailable(reason: "the user's index kept gaining keys during the erasure")
                }
            }
        }
        return removed
    }

    /// Rounds of an erasure's script per shard before it gives up (each round takes the keys stored meanwhile).
    static let erasureRounds = 5

    /// The cache keys `index` holds (of `namespaces`, or all).
    private func indexedKeys(_ index: String, namespaces: Set<String>?) async throws(SharedTierUnavailable) -> [String] {
        let reply = try await commands.run("invalidate", .hgetall(index), key: index)
        guard case .array(let fields) = reply, fields.count % 2 == 0 else {
            throw SharedTierUnavailable(reason: "unexpected HGETALL reply")
        }
        return stride(from: 0, to: fields.count, by: 2).compactMap { at in
            guard let key = fields[at].text, let namespace = fields[at + 1].text else { return nil }
            return namespaces.map { $0.contains(namespace) } ?? true ? key : nil
        }
    }

    /// Prefix and full deletes: SCAN for the entries (never the tier's own keys; every primary of a cluster), delete
    /// them in batches of one shard, then announce on each shard (the announcement goes out even when nothing was
    /// found: other instances may hold copies).
    func deleteScanned(keyPrefix: String, change: String) async throws(SharedTierUnavailable) -> [String] {
        var byShard: [Int: [(name: String, key: String)]] = [:]
        for found in try await scanEntries(keyPrefix: keyPrefix) { byShard[keys.shard(of: found.key), default: []].append(found) }
        var removed: [String] = []
        for shard in 0..<keys.shards {
            let found = byShard[shard] ?? []
            var start = 0
            repeat {
                let batch = found[start..<min(found.count, start + 500)]
                start += 500
                let names = batch.map(\.name)
                // The last batch (or the only, empty one) also announces.
                if start >= found.count {
                    _ = try await commands.run(
                        "invalidate", RedisScripts.delete.on(keys), keys: [keys.log(shard)] + names,
                        arguments: [keys.channel(shard), messageHead, change, "\(configuration.logLength)"])
                } else {
                    _ = try await commands.run("invalidate", .del(names), key: names[0])
                }
                removed += batch.map(\.key)
            } while start < found.count
        }
        return removed
    }

    /// The Redis names and cache keys of the entries whose key starts with `keyPrefix` (SCAN on every node holding
    /// entries; never the tier's own keys).
    func scanEntries(keyPrefix: String) async throws(SharedTierUnavailable) -> [(name: String, key: String)] {
        try await scanEntries(matching: keys.entryPattern(keyPrefix: keyPrefix)) { $0.hasPrefix(keyPrefix) }
    }

    /// The entries `pattern` (a SCAN glob over Redis names) finds whose cache key `wanted` takes, by one pass over
    /// every node holding entries; never the tier's own keys.
    private func scanEntries(matching pattern: String, where wanted: (String) -> Bool)
        async throws(SharedTierUnavailable) -> [(name: String, key: String)]
    {
        var found: [(name: String, key: String)] = []
        for node in try await commands.entryNodes() {
            var cursor = "0"
            repeat {
                let reply = try await commands.run("scan", .scan(cursor: cursor, match: pattern, count: 1000), on: node)
                guard case .array(let parts) = reply, parts.count == 2, case .string(let next) = parts[0],
                    case .array(let names) = parts[1]
                else { throw SharedTierUnavailable(reason: "unexpected SCAN reply") }
                cursor = String(decoding: next, as: UTF8.self)
                for case .string(let name) in names {
                    let name = String(decoding: name, as: UTF8.self)
                    if let key = keys.cacheKey(ofEntry: name), wanted(key) { found.append((name, key)) }
                }
            } while cursor != "0"
        }
        return found
    }

    /// Deletes, without announcing, the entries whose key names `user` (`configuration.userKeys`) but that were
    /// stored without a user, so that no user index finds them: one SCAN pass for every such key shape. The caller
    /// announces the user's erasure, which every instance applies to such keys as well.
    func deleteUnindexed(namingUser user: String) async throws(SharedTierUnavailable) -> [String] {
        let userKeys = configuration.userKeys
        guard !userKeys.prefixes.isEmpty else { return [] }
        let found = try await scanEntries(matching: keys.entryPattern(containing: user)) { userKeys.key($0, names: user) }
        for entry in found { _ = try await commands.run("invalidate", .del([entry.name]), key: entry.name) }
        return found.map(\.key)
    }
}

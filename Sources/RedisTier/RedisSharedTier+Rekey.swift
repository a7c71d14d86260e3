import Redis
import UnifiedCache

/// `POST /v1/admin/rekey`'s shared part (CONTRACT §9.3).
extension RedisSharedTier {
    /// Re-seals under the key ring's primary every value under the prefix that is not (plaintext ones included),
    /// each by compare-and-set in Redis (`RedisScripts.replace`): a value another instance wrote meanwhile is never
    /// overwritten (it counts as current: its writer sealed it), and the value keeps its expiry. No announcement is
    /// needed: the entry's contents are unchanged. Values that do not open are deleted and counted, as on a read.
    /// Without a key ring it does nothing.
    public func rekey() async throws(SharedTierUnavailable) -> RekeyReport {
        var report = RekeyReport()
        guard codec.keyRing != nil else { return report }
        for (name, key) in try await scanEntries(keyPrefix: "") {
            guard case .string(let value) = try await commands.run("get", .get(name), key: name) else { continue }
            let resealed: [UInt8]?
            do throws(EntryFormatError) { resealed = try codec.resealed(value, key: key) } catch {
                await discard(key, value: value, reason: error)
                report.undecryptable += 1
                continue
            }
            guard let resealed else {
                report.current += 1
                continue
            }
            let reply = try await commands.run("rekey", RedisScripts.replace, keys: [name], arguments: [value, resealed])
            if reply == .integer(1) { report.rekeyed += 1 } else { report.current += 1 }
        }
        logger.info(
            "shared tier rekeyed",
            metadata: ["rekeyed": "\(report.rekeyed)", "current": "\(report.current)", "undecryptable": "\(report.undecryptable)"])
        return report
    }
}

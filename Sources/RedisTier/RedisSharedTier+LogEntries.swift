import Logging
import Redis
import UnifiedCache

/// The fleet's log as `XRANGE` returns it, and what an instance does with a change it cannot read.
extension RedisSharedTier {
    /// One entry of the log: its id, and what it records.
    struct LogEntry {
        enum Record {
            /// The entry that starts an epoch (`epoch RANDOM`): no change.
            case epochStart
            case change(InvalidationMessage)
            /// A change in no format this release reads (another release's, or damaged).
            case unreadable
        }

        var position: LogPosition
        var record: Record
    }

    /// `XRANGE`'s reply as entries; `nil` when it is not one.
    static func logEntries(_ reply: RedisReply) -> [LogEntry]? {
        guard case .array(let items) = reply else { return nil }
        var entries: [LogEntry] = []
        entries.reserveCapacity(items.count)
        for item in items {
            guard case .array(let pair) = item, pair.count == 2, let id = pair[0].text, let position = LogPosition(id),
                case .array(let fields) = pair[1]
            else { return nil }
            var record = LogEntry.Record.unreadable
            if fields.count == 2, fields[0].text == "epoch" {
                record = .epochStart
            } else if fields.count == 2, fields[0].text == "m", let bytes = fields[1].bytes,
                let message = InvalidationMessage(position: position, entry: bytes)
            {
                record = .change(message)
            }
            entries.append(LogEntry(position: position, record: record))
        }
        return entries
    }

    /// A change this instance cannot read may concern any entry: rather than go on serving what it may have replaced,
    /// the local tiers are dropped (counted as a reset). Their entries are fetched again from Redis or the upstream.
    func dropLocalTiers(because reason: String) {
        guard let handler = hooks.withLockedValue({ $0.handler }) else { return }
        handler(.reset)
        commands.counters.reset()
        warnUnreadable(reason)
    }

    /// Logged at warning the first time (an instance of another release in the fleet, or a damaged message), at
    /// debug after: a rolling deploy sends many. The message itself is never logged (it names keys and users).
    func warnUnreadable(_ reason: String) {
        let first = hooks.withLockedValue { state in
            defer { state.unreadableSeen = true }
            return !state.unreadableSeen
        }
        let level: Logger.Level = first ? .warning : .debug
        logger.log(level: level, "shared tier: \(reason); local tiers dropped (an instance of another release in the fleet?)")
    }
}

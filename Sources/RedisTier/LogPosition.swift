/// A position in the fleet's invalidation log: a Redis stream id, `MILLISECONDS-SEQUENCE` (CONTRACT §6.6).
/// Ids grow with every entry the log gets, so positions compare as Redis orders them.
struct LogPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    var milliseconds: UInt64
    var sequence: UInt64

    /// Before every entry: a position no log holds, so a log never vouches for it.
    static let zero = LogPosition(milliseconds: 0, sequence: 0)

    init(milliseconds: UInt64, sequence: UInt64) {
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    /// `MS-SEQ` as Redis writes it, or `MS` alone (sequence 0, as Redis reads it), in decimal digits only; `nil` for
    /// anything else (a sign included).
    init?<Text: StringProtocol>(_ text: Text) {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let milliseconds = Self.number(first) else { return nil }
        if parts.count == 2 {
            guard let sequence = Self.number(parts[1]) else { return nil }
            self.init(milliseconds: milliseconds, sequence: sequence)
        } else {
            self.init(milliseconds: milliseconds, sequence: 0)
        }
    }

    private static func number<Digits: StringProtocol>(_ text: Digits) -> UInt64? {
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(text)
    }

    var description: String { "\(milliseconds)-\(sequence)" }

    static func < (lhs: LogPosition, rhs: LogPosition) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }
}

/// Where an instance stands: everything the log of `epoch` holds up to `position` is applied to its local tiers.
struct LogCheckpoint: Sendable, Equatable {
    var epoch: String
    var position: LogPosition
}

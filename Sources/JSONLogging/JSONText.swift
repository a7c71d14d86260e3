import Foundation
import Logging

/// Just enough JSON writing for log lines (RFC 8259 escaping; keys sorted so lines are stable).
package enum JSONText {
    package static func string(_ text: String) -> String {
        quoted(text) { scalar in
            switch scalar {
            case "\u{08}": return "\\b"
            case "\u{0C}": return "\\f"
            // Control characters, DEL and the line/paragraph separators, so a line is one line everywhere.
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\u{2028}" || scalar == "\u{2029}":
                let hex = String(scalar.value, radix: 16, uppercase: false)
                return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: return nil
            }
        }
    }

    /// `text` in double quotes with quotes, backslashes, `\n`, `\r` and `\t` escaped, and every other scalar that
    /// `escape` returns a text for replaced by it (a log line's JSON string, a one-line error message's value).
    package static func quoted(_ text: String, escape: (Unicode.Scalar) -> String?) -> String {
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if let escaped = escape(scalar) { result += escaped } else { result.unicodeScalars.append(scalar) }
            }
        }
        return result + "\""
    }

    static func object(_ metadata: Logger.Metadata) -> String {
        "{" + metadata.sorted { $0.key < $1.key }.map { string($0.key) + ":" + value($0.value) }.joined(separator: ",") + "}"
    }

    static func value(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): string(text)
        case .stringConvertible(let convertible): string(convertible.description)
        case .array(let values): "[" + values.map { Self.value($0) }.joined(separator: ",") + "]"
        case .dictionary(let metadata): object(metadata)
        }
    }

    /// ISO 8601 in UTC with milliseconds, e.g. `2026-11-22T11:30:00.123Z`.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}

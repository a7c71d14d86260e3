import Clocks
/// The textual forms of configuration values (CONTRACT §1), shared with anything else that reads them
/// (e.g. the raw API's `?ttl=` duration).
public enum ValueSyntax {
    /// A whole number of bytes with `B`, `KiB`, `MiB` or `GiB` (or no suffix: bytes), e.g. `64MiB`; `nil` otherwise or on overflow.
    package static func byteSize(_ text: String) -> Int? {
        let (digits, suffix) = split(text)
        guard let number = wholeNumber(digits) else { return nil }
        let factor: Int
        switch suffix {
        case "", "B": factor = 1
        case "KiB": factor = 1 << 10
        case "MiB": factor = 1 << 20
        case "GiB": factor = 1 << 30
        default: return nil
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: factor)
        return overflow ? nil : bytes
    }

    /// A whole number with `ms`, `s`, `m`, `h` or `d`, e.g. `250ms`, `90s`, `30d`; `nil` otherwise, and on overflow
    /// unless `saturating` (then a number too large to hold is the longest duration a second count holds, as RFC
    /// 9111's delta-seconds is: a TTL that is cut anyway).
    public static func duration(_ text: String, saturating: Bool = false) -> Duration? {
        let (digits, unit) = split(text)
        guard isDigits(digits), let number = Int(digits) ?? (saturating ? .max : nil) else { return nil }
        let secondsPerUnit: Int
        switch unit {
        case "ms": return .milliseconds(number)
        case "s": secondsPerUnit = 1
        case "m": secondsPerUnit = 60
        case "h": secondsPerUnit = 3600
        case "d": secondsPerUnit = 86400
        default: return nil
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: secondsPerUnit)
        guard overflow else { return .seconds(seconds) }
        return saturating ? .seconds(Int.max) : nil
    }

    /// Only ASCII digits (no sign, no spaces), fitting an `Int`.
    package static func wholeNumber(_ text: some StringProtocol) -> Int? {
        isDigits(text) ? Int(text) : nil
    }

    /// RFC 9111's `delta-seconds`: ASCII digits only; a number past what an `Int` holds is `Int.max` (its section
    /// 1.2.2: the greatest integer the recipient can represent), not an error.
    package static func deltaSeconds(_ text: some StringProtocol) -> Int? {
        isDigits(text) ? Int(text) ?? .max : nil
    }

    private static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The leading digits and what follows them.
    private static func split(_ text: String) -> (Substring, Substring) {
        let end = text.firstIndex { !("0"..."9").contains($0) } ?? text.endIndex
        return (text[..<end], text[end...])
    }
}

extension ValueSyntax {
    /// The shortest text `duration(_:)` reads back as `value`, e.g. `200ms`, `30s`, `10m`, `7d`
    /// (sub-millisecond parts are dropped).
    public static func text(of value: Duration) -> String {
        let seconds = value.wholeSeconds
        if value != .seconds(seconds) || seconds == 0, let milliseconds = value.wholeMilliseconds {
            return "\(milliseconds)ms"
        }
        for (unit, size) in [("d", Int64(86400)), ("h", 3600), ("m", 60)] where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }
}

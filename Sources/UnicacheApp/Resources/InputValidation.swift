import Foundation
import HTTPRouting

/// The contract's (§2, §3) patterns and ranges for path and query values. Pure functions, no I/O.
enum InputValidation {
    /// `{user}`: `[A-Za-z0-9._|@-]{1,128}`, not made only of dots (`|` and `@` for identity providers' ids:
    /// `auth0|5f7c…`, an e-mail-shaped id; CONTRACT §11.3).
    static func user(_ value: String) throws(InputError) -> String {
        guard matches(value, maxLength: 128, extra: userExtra) else {
            throw InputError(parameter: "user", expected: "1–128 characters of A–Z a–z 0–9 . _ | @ - and not only dots")
        }
        return value
    }

    /// `{key}` after percent-decoding: `[A-Za-z0-9._:,@-]{1,512}`, not made only of dots.
    static func key(_ value: String) throws(InputError) -> String {
        guard matches(value, maxLength: 512, extra: keyExtra) else {
            throw InputError(parameter: "key", expected: "1–512 characters of A–Z a–z 0–9 . _ : , @ - and not only dots")
        }
        return value
    }

    /// An identifier in a path (activity id): `[A-Za-z0-9._-]{1,128}`, not made only of dots.
    static func identifier(_ value: String, name: String) throws(InputError) -> String {
        guard matches(value, maxLength: 128, extra: identifierExtra) else {
            throw InputError(parameter: name, expected: "1–128 characters of A–Z a–z 0–9 . _ - and not only dots")
        }
        return value
    }

    /// A whole number in `range`; `nil` → `defaultValue`.
    static func integer(_ value: String?, name: String, range: ClosedRange<Int>, default defaultValue: Int) throws(InputError) -> Int {
        guard let value else { return defaultValue }
        guard value.utf8.count <= 6, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(value),
            range.contains(number)
        else {
            throw InputError(parameter: name, expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// The value of the query parameter `name`, nil when absent; given twice (`?days=3&days=4`) it is refused rather
    /// than one value chosen for the client.
    static func single(_ name: String, of query: QueryParameters) throws(InputError) -> String? {
        var found: String?
        for item in query.items where item.name == name {
            guard found == nil else { throw InputError(parameter: name, expected: "given at most once") }
            found = item.value
        }
        return found
    }

    /// `true`/`false` (also `1`/`0`); `nil` → false.
    static func boolean(_ value: String?, name: String) throws(InputError) -> Bool {
        switch value?.lowercased() {
        case nil, "false", "0": return false
        case "true", "1": return true
        default: throw InputError(parameter: name, expected: "true or false")
        }
    }

    /// An IANA time zone name (`Europe/Berlin`, `Asia/Kolkata`, `UTC`) of `TimeZoneNames`; `nil` → UTC.
    static func timeZone(_ value: String?) throws(InputError) -> TimeZone {
        guard let value else { return utc }
        if value == "UTC" || value == "Etc/UTC" { return utc }
        guard TimeZoneNames.accepted.contains(value), let zone = TimeZone(identifier: value) else {
            throw InputError(parameter: "tz", expected: "an IANA time zone name such as Europe/Berlin or UTC")
        }
        return zone
    }

    /// `yyyy-mm-dd`, a real calendar date.
    static func date(_ value: String, name: String = "date") throws(InputError) -> LocalDate {
        guard let date = LocalDate(parsing: value) else {
            throw InputError(parameter: name, expected: "a date yyyy-mm-dd")
        }
        return date
    }

    /// 1 = Sunday … 7 = Saturday, or the English day name.
    static func weekday(_ value: String) throws(InputError) -> Int {
        if let number = Int(value), (1...7).contains(number), value.utf8.count == 1 { return number }
        if let index = weekdayNames.firstIndex(of: value.lowercased()) { return index + 1 }
        throw InputError(parameter: "weekday", expected: "1 (Sunday) to 7 (Saturday) or sunday…saturday")
    }

    /// Activity types: comma-separated, lower-cased, de-duplicated and sorted (`Run,ride,run` → `ride,run`).
    static func activityTypes(_ value: String?) throws(InputError) -> [String] {
        guard let value, !value.isEmpty else { return [] }
        var types = Set<String>()
        for part in value.split(separator: ",", omittingEmptySubsequences: false) {
            let type = part.lowercased()
            guard (1...32).contains(type.utf8.count),
                type.utf8.allSatisfy({ isLowerAlnum($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
            else {
                throw InputError(parameter: "types", expected: "a comma-separated list of activity types (letters, digits, - and _)")
            }
            types.insert(type)
        }
        return types.sorted()
    }

    static let weekdayNames = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
    private static let userExtra: Set<UInt8> = Set(".-_|@".utf8)
    private static let identifierExtra: Set<UInt8> = Set(".-_".utf8)
    private static let keyExtra: Set<UInt8> = Set(".-_:,@".utf8)

    private static func isLowerAlnum(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
    }

    private static func matches(_ value: String, maxLength: Int, extra: Set<UInt8>) -> Bool {
        let bytes = value.utf8
        guard (1...maxLength).contains(bytes.count) else { return false }
        var onlyDots = true
        for byte in bytes {
            let alnum = isLowerAlnum(byte) || (byte >= 0x41 && byte <= 0x5A)
            guard alnum || extra.contains(byte) else { return false }
            if byte != UInt8(ascii: ".") { onlyDots = false }
        }
        return !onlyDots
    }
}

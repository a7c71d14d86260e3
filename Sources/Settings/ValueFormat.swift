import JSONLogging
import Logging
import Redis
import UnifiedCache

/// How one setting's text becomes a value, and how to say what is accepted when it does not.
struct ValueFormat<Value> {
    /// What the value is, for "is not …": "a byte size".
    var kind: String
    /// The accepted form: "use a whole number with B, KiB, MiB or GiB, e.g. 64MiB".
    var form: String
    var parse: (String) -> Value?
    /// A further condition a parsed value must meet, and how to name it ("above zero").
    var constraint: (name: String, isMet: (Value) -> Bool)? = nil

    /// Parses trimmed `text` read from `source` (a flag or an environment variable).
    func value(of text: String, from source: String) throws(ConfigurationError) -> Value {
        guard let value = parse(text.trimmingWhitespace()) else {
            throw ConfigurationError(source: source, value: text, isNot: kind, form: form)
        }
        if let constraint, !constraint.isMet(value) {
            throw ConfigurationError(
                message: "\(source): \(ConfigurationError.quoted(text)) is not \(constraint.name) (\(form))")
        }
        return value
    }
}

extension ValueFormat where Value == Int {
    static func byteSize(example: String, aboveZero: Bool) -> Self {
        ValueFormat(
            kind: "a byte size", form: "use a whole number with B, KiB, MiB or GiB, e.g. \(example)",
            parse: ValueSyntax.byteSize, constraint: aboveZero ? ("above zero", { $0 > 0 }) : nil)
    }

    static func count(example: String) -> Self {
        ValueFormat(
            kind: "a whole number", form: "use a whole number of at least 1, e.g. \(example)",
            parse: { ValueSyntax.wholeNumber($0) }, constraint: ("at least 1", { $0 >= 1 }))
    }

    /// A whole percent from 1 to 100, with or without `%`.
    static func percent(example: String) -> Self {
        ValueFormat(
            kind: "a percentage", form: "use a whole number from 1 to 100, e.g. \(example)",
            parse: { text in
                ValueSyntax.wholeNumber(text.hasSuffix("%") ? String(text.dropLast()) : text)
                    .flatMap { (1...100).contains($0) ? $0 : nil }
            })
    }

    static var port: Self {
        ValueFormat(
            kind: "a port", form: "use a whole number from 0 to 65535, e.g. 8080; 0 picks a free port",
            parse: { ValueSyntax.wholeNumber($0).flatMap { (0...65535).contains($0) ? $0 : nil } })
    }

    /// A port a client connects to (`healthcheck`): 0 picks nothing there.
    static var portToCheck: Self {
        ValueFormat(
            kind: "a port to check", form: "use the port the service listens on, from 1 to 65535, e.g. 8080",
            parse: { ValueSyntax.wholeNumber($0).flatMap { (1...65535).contains($0) ? $0 : nil } })
    }
}

extension ValueFormat where Value == Duration {
    static func duration(example: String, aboveZero: Bool) -> Self {
        ValueFormat(
            kind: "a duration", form: "use a whole number with ms, s, m, h or d, e.g. \(example)",
            parse: { ValueSyntax.duration($0) }, constraint: aboveZero ? ("above zero", { $0 > .zero }) : nil)
    }
}

extension ValueFormat where Value == String {
    /// An IP address or a host name (`RedisEndpoint.Address.isValidHost`'s grammar), or an IPv6 address with its zone
    /// (`fe80::1%eth0`, which the resolver takes): `999.1.1.1`, `[::1]` or `a b` stop start-up here, naming the flag,
    /// rather than when the server binds.
    static var host: Self {
        ValueFormat(
            kind: "a bind address", form: "use an IP address or host name, e.g. 127.0.0.1 or 0.0.0.0",
            parse: { text in RedisEndpoint.Address.isValidHost(text) || isScopedIPv6(text) ? text : nil })
    }

    private static func isScopedIPv6(_ text: String) -> Bool {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].contains(":"), RedisEndpoint.Address.isValidHost(String(parts[0])),
            !parts[1].isEmpty
        else { return false }
        return parts[1].utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    static var directory: Self {
        ValueFormat(
            kind: "a directory path", form: "use a path, e.g. ./.unicache",
            parse: { text in text.isEmpty || text.contains("\0") ? nil : text })
    }
}

extension ValueFormat where Value == Bool {
    /// An environment variable standing for a flag without a value.
    static var boolean: Self {
        ValueFormat(
            kind: "a boolean", form: "use true or false (also 1 or 0, yes or no, on or off)",
            parse: { text in
                switch text.lowercased() {
                case "true", "1", "yes", "on": true
                case "false", "0", "no", "off": false
                default: nil
                }
            })
    }
}

extension ValueFormat where Value == Logger.Level {
    static var logLevel: Self {
        ValueFormat(
            kind: "a log level", form: "use trace, debug, info, notice, warning, error or critical",
            parse: { Logger.Level(rawValue: $0.lowercased()) })
    }
}

extension ValueFormat where Value == EvictionKind {
    static var eviction: Self {
        ValueFormat(kind: "an eviction policy", form: "use tinylfu or lru", parse: { EvictionKind(rawValue: $0.lowercased()) })
    }
}

extension ValueFormat where Value == LogFormat {
    static var logFormat: Self {
        ValueFormat(kind: "a log format", form: "use text or json", parse: { LogFormat(rawValue: $0.lowercased()) })
    }
}

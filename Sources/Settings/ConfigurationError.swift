import JSONLogging

/// A configuration value the service cannot start with.
///
/// `message` is one line that names the flag or environment variable and the accepted form, e.g.
/// `--memory-limit: "12XB" is not a byte size (use a whole number with B, KiB, MiB or GiB, e.g. 64MiB)`.
/// The executable prints it as `error: <message>` on stderr and exits non-zero.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(message: String) {
        self.message = Self.singleLine(message)
    }

    /// `<source>: "<value>" is not <kind> (<form>)`, the shape of every bad-value error.
    public init(source: String, value: String, isNot kind: String, form: String) {
        self.init(message: "\(source): \(Self.quoted(value)) is not \(kind) (\(form))")
    }

    /// For the start-up check of the disk tier's root, e.g. `reason` = "permission denied".
    public static func dataDirectory(_ path: String, reason: String) -> ConfigurationError {
        ConfigurationError(
            message: "--data-dir: \(quoted(path)) is not a writable directory: \(reason) "
                + "(use a directory the service may create and write, or set --disk-limit 0 to disable the disk tier)")
    }

    /// The data dir's lock is held by another running service (`holder`: its process id, when known).
    public static func dataDirectoryInUse(_ path: String, holder: Int?) -> ConfigurationError {
        ConfigurationError(
            message: "--data-dir: \(quoted(path)) is in use by another running unicache"
                + (holder.map { " (pid \($0))" } ?? "")
                + " (give each instance a data dir of its own, or set --disk-limit 0 to disable the disk tier)")
    }

    public var description: String { "error: \(message)" }

    /// The value in double quotes, with quotes, backslashes and control characters escaped,
    /// so the message stays one line whatever the user typed.
    static func quoted(_ value: String) -> String {
        JSONText.quoted(value) { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : nil
        }
    }

    private static func singleLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.joined(separator: " ")
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and newlines.
    func trimmingWhitespace() -> String {
        guard let start = firstIndex(where: { !$0.isWhitespace }), let end = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[start...end])
    }
}

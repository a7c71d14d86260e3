import Logging

/// How log lines look on stderr.
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's `StreamLogHandler` line format.
    case text
    /// One JSON object per line.
    case json
}

/// `--log-level` and `--log-format`.
public struct LogSettings: Sendable, Equatable {
    public var level: Logger.Level
    public var format: LogFormat

    public init(level: Logger.Level = .info, format: LogFormat = .text) {
        self.level = level
        self.format = format
    }
}

import Logging

/// Installs the process's swift-log handlers from `--log-level` and `--log-format`.
public enum LoggingBootstrap {
    /// Call once at start-up, before the first `Logger` is made (swift-log allows one bootstrap per process).
    /// Returns the service's root logger.
    public static func bootstrap(_ settings: LogSettings, label: String = "unicache") -> Logger {
        LoggingSystem.bootstrap(handlerFactory(for: settings, output: .standardError()))
        return Logger(label: label)
    }

    /// The handler factory `bootstrap` installs; `output` is used by the JSON format (text goes to stderr).
    public static func handlerFactory(
        for settings: LogSettings, output: LogOutput
    ) -> @Sendable (String) -> any LogHandler {
        switch settings.format {
        case .text:
            return { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = settings.level
                return handler
            }
        case .json:
            return { label in JSONLogHandler(label: label, level: settings.level, output: output) }
        }
    }
}

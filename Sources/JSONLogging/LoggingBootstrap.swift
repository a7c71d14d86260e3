import HTTPRouting
import Clocks
import Logging

/// Installs the process's swift-log handlers from `--log-level` and `--log-format`.
public enum LoggingBootstrap {
    /// Call once at start-up, before the first `Logger` is made (swift-log allows one bootstrap per process).
    /// Returns the service's root logger.
    /// `clock`: the process's wall clock (the JSON lines' timestamps).
    public static func bootstrap(_ settings: LogSettings, clock: any WallClock, label: String = "unicache") -> Logger {
        LoggingSystem.bootstrap(
            handlerFactory(for: settings, output: .standardError(), clock: clock), metadataProvider: requestID)
        return Logger(label: label)
    }

    /// `requestId` on every line written on a request's behalf: by its handler, the cache core, a fetcher, or
    /// a task the request started (CONTRACT §7.4).
    public static let requestID = Logger.MetadataProvider {
        RequestID.current.map { ["requestId": "\($0.value)"] } ?? [:]
    }

    /// The handler factory `bootstrap` installs; `output` is used by the JSON format (text goes to stderr).
    package static func handlerFactory(
        for settings: LogSettings, output: LogOutput, clock: any WallClock
    ) -> @Sendable (String, Logger.MetadataProvider?) -> any LogHandler {
        switch settings.format {
        case .text:
            return { label, provider in
                var handler = StreamLogHandler.standardError(label: label, metadataProvider: provider)
                handler.logLevel = settings.level
                return handler
            }
        case .json:
            return { label, provider in
                JSONLogHandler(label: label, level: settings.level, output: output, metadataProvider: provider, clock: clock)
            }
        }
    }
}

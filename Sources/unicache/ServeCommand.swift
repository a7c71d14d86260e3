import ArgumentParser
import Clocks
import Foundation
import JSONLogging
import Logging
import Settings
import UnicacheApp

/// Validates the configuration, sets up logging and runs the service.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the cache service (the default when no subcommand is given).")

    @OptionGroup var options: ServeOptions

    func run() async throws {
        // The same checks as UnicacheConfiguration.parse(arguments:environment:), on the options parsed above.
        let environment = ProcessInfo.processInfo.environment
        let configuration = try options.configuration(environment: environment)
        // The process's two clocks, made here and passed down: the wall clock (dates, expiry, log timestamps) and the
        // monotonic one (deadlines, budgets, back-offs).
        let clock = SystemWallClock()
        let ticker = ContinuousClock()
        let logger = LoggingBootstrap.bootstrap(configuration.log, clock: clock)
        for ignored in ServeOptions.ignoredVariables(in: environment) {
            var metadata: Logger.Metadata = ["variable": "\(ignored.name)"]
            if let suggestion = ignored.suggestion { metadata["didYouMean"] = "\(suggestion)" }
            logger.warning("environment variable ignored: unicache reads no such variable", metadata: metadata)
        }
        do {
            try await UnicacheService.run(configuration: configuration, logger: logger, clock: clock, ticker: ticker)
        } catch where configuration.log.format == .json {
            // CONTRACT §1: with `--log-format json` every output line is one JSON object, the last one too (in text,
            // the entry point writes `error: …`).
            logger.critical("stopped", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
    }
}

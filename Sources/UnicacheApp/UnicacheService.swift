import Foundation
import Logging
import UnifiedCache

/// Runs the service from its configuration until SIGINT/SIGTERM (`unicache serve`).
public enum UnicacheService {
    public static func run(configuration: UnicacheConfiguration, logger: Logger) async throws {
        MemoryReclaimer.limitArenas(logger: logger)
        if ProcessHardening.holdsSecrets(configuration) { ProcessHardening.forbidCoreDumps(logger: logger) }
        let application = try await Application.build(configuration, logger: logger)
        // After the checks that stop start-up with one line: the version and each domain's source (CONTRACT §11.1).
        logger.info("unicache \(UnicacheVersion.current)", metadata: configuration.sourcesMetadata)
        // The server binds (and logs `listening on …`) inside the group, after the group has trapped
        // SIGTERM/SIGINT: a signal right after the start-up line is a graceful shutdown, never a kill.
        try await application.serviceGroup(stopsOnSignals: true).run()
        logger.info("unicache stopped")
    }
}

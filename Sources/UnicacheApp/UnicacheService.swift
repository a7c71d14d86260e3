import Logging

/// The service's entry point, called by `unicache serve` once the configuration is valid and logging is set up.
///
/// Placeholder: logs the configuration summary and returns. The lead replaces it with the real service group.
public enum UnicacheService {
    public static func run(configuration: UnicacheConfiguration, logger: Logger) async throws {
        logger.info("unicache configured (service not wired yet)", metadata: configuration.logMetadata)
    }
}

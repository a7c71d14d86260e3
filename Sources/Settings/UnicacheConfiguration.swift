import Access
import ArgumentParser
import JSONLogging
import MicroHTTPServer

/// Everything the service is started with, one value per concern; `init()` gives CONTRACT §1's defaults.
public struct UnicacheConfiguration: Sendable, Equatable {
    public var server: ServerSettings
    public var cache: CacheSettings
    public var upstreams: UpstreamSettings
    public var admin: AdminSettings
    public var log: LogSettings
    public var shared: SharedTierSettings
    /// Who may read what (CONTRACT §8): protected mode unless `--auth` says otherwise.
    public var access: AccessSettings
    public var encryption: EncryptionSettings

    public init(
        server: ServerSettings = ServerSettings(requestIDs: true),
        cache: CacheSettings = CacheSettings(),
        upstreams: UpstreamSettings = UpstreamSettings(),
        admin: AdminSettings = AdminSettings(),
        log: LogSettings = LogSettings(),
        shared: SharedTierSettings = SharedTierSettings(),
        access: AccessSettings = AccessSettings(),
        encryption: EncryptionSettings = EncryptionSettings()
    ) {
        self.server = server
        self.cache = cache
        self.upstreams = upstreams
        self.admin = admin
        self.log = log
        self.shared = shared
        self.access = access
        self.encryption = encryption
    }

    /// The configuration from `serve`'s command-line `arguments` (without the executable's name; a leading
    /// `serve` is skipped) and `environment` (flag > `UNICACHE_` variable > default). Pure: reads nothing else.
    public static func parse(
        arguments: [String], environment: [String: String]
    ) throws(ConfigurationError) -> UnicacheConfiguration {
        let options: ServeOptions
        do {
            let arguments = CommandLineArguments.prepared(arguments)
            options = try ServeOptions.parse(arguments.first == "serve" ? Array(arguments.dropFirst()) : arguments)
        } catch {
            throw ConfigurationError(commandLineError: error, of: ServeOptions.self)
        }
        return try options.configuration(environment: environment)
    }
}

extension ConfigurationError {
    /// One line for an error of ArgumentParser's (unknown flag, missing value, …), without its usage text.
    public init<Arguments: ParsableArguments>(commandLineError error: any Error, of _: Arguments.Type) {
        if let error = error as? ConfigurationError {
            self = error
            return
        }
        let text = Arguments.message(for: error).trimmingWhitespace()
        let first = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? "invalid command line"
        self.init(message: "\(first) (see unicache --help for the accepted flags and forms)")
    }
}

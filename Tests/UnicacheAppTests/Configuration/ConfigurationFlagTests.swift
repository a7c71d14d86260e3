import JSONLogging
import Logging
import Settings
import Testing
import UnicacheApp

/// One row per single-valued flag: its variable, two different valid texts and what each must become.
struct SettingCase: Sendable, CustomTestStringConvertible {
    var flag: String
    var variable: String
    var first: (text: String, value: String)
    var second: (text: String, value: String)
    var read: @Sendable (UnicacheConfiguration) -> String
    var testDescription: String { flag }
}

let settingCases: [SettingCase] = [
    SettingCase(flag: "--host", variable: "UNICACHE_HOST", first: ("0.0.0.0", "0.0.0.0"), second: ("::1", "::1")) { $0.server.host },
    SettingCase(flag: "--port", variable: "UNICACHE_PORT", first: ("0", "0"), second: ("65535", "65535")) { "\($0.server.port)" },
    SettingCase(flag: "--data-dir", variable: "UNICACHE_DATA_DIR", first: ("/var/lib/unicache", "/var/lib/unicache"), second: ("data dir", "data dir")) { $0.cache.dataDir },
    SettingCase(flag: "--memory-limit", variable: "UNICACHE_MEMORY_LIMIT", first: ("128MiB", "134217728"), second: ("512KiB", "524288")) { "\($0.cache.memoryLimitBytes)" },
    SettingCase(flag: "--memory-entries", variable: "UNICACHE_MEMORY_ENTRIES", first: ("1", "1"), second: ("250000", "250000")) { "\($0.cache.memoryEntries)" },
    SettingCase(flag: "--disk-limit", variable: "UNICACHE_DISK_LIMIT", first: ("0", "0"), second: ("2GiB", "2147483648")) { "\($0.cache.diskLimitBytes)" },
    SettingCase(flag: "--eviction", variable: "UNICACHE_EVICTION", first: ("lru", "lru"), second: ("TinyLFU", "tinylfu")) { $0.cache.eviction.rawValue },
    SettingCase(flag: "--upstream-timeout", variable: "UNICACHE_UPSTREAM_TIMEOUT", first: ("750ms", "750ms"), second: ("1m", "1m")) { ValueSyntax.text(of: $0.upstreams.timeout) },
    SettingCase(flag: "--demo-latency", variable: "UNICACHE_DEMO_LATENCY", first: ("0ms", "0ms"), second: ("2s", "2s")) { ValueSyntax.text(of: $0.upstreams.demoLatency) },
    SettingCase(flag: "--admin-token", variable: "UNICACHE_ADMIN_TOKEN", first: ("s3cret", "s3cret"), second: ("other-token", "other-token")) { $0.admin.token ?? "nil" },
    SettingCase(flag: "--max-connections", variable: "UNICACHE_MAX_CONNECTIONS", first: ("10", "10"), second: ("20000", "20000")) { "\($0.server.maxConnections)" },
    SettingCase(flag: "--max-connections-per-ip", variable: "UNICACHE_MAX_CONNECTIONS_PER_IP", first: ("2", "2"), second: ("64", "64")) { "\($0.server.maxConnectionsPerIP)" },
    SettingCase(flag: "--idle-timeout", variable: "UNICACHE_IDLE_TIMEOUT", first: ("5s", "5s"), second: ("2h", "2h")) { ValueSyntax.text(of: $0.server.idleTimeout) },
    SettingCase(flag: "--header-timeout", variable: "UNICACHE_HEADER_TIMEOUT", first: ("1500ms", "1500ms"), second: ("1m", "1m")) { ValueSyntax.text(of: $0.server.headerTimeout) },
    SettingCase(flag: "--header-stall", variable: "UNICACHE_HEADER_STALL", first: ("250ms", "250ms"), second: ("0s", "0ms")) { ValueSyntax.text(of: $0.server.headerStall) },
    SettingCase(flag: "--request-timeout", variable: "UNICACHE_REQUEST_TIMEOUT", first: ("250ms", "250ms"), second: ("1d", "1d")) { ValueSyntax.text(of: $0.server.requestTimeout) },
    SettingCase(flag: "--log-level", variable: "UNICACHE_LOG_LEVEL", first: ("trace", "trace"), second: ("critical", "critical")) { $0.log.level.rawValue },
    SettingCase(flag: "--log-format", variable: "UNICACHE_LOG_FORMAT", first: ("json", "json"), second: ("text", "text")) { $0.log.format.rawValue },
    SettingCase(flag: "--encryption-keys", variable: "UNICACHE_ENCRYPTION_KEYS", first: ("/run/secrets/keys", "/run/secrets/keys"), second: ("keys.txt", "keys.txt")) { $0.encryption.keyFile ?? "nil" },
]

@Suite(.timeLimit(.minutes(10))) struct ConfigurationFlagTests {
    @Test(arguments: settingCases)
    func flagSetsTheValue(_ setting: SettingCase) throws {
        let configuration = try UnicacheConfiguration.parse(arguments: [setting.flag, setting.first.text], environment: [:])
        #expect(setting.read(configuration) == setting.first.value)
        let other = try UnicacheConfiguration.parse(arguments: ["\(setting.flag)=\(setting.second.text)"], environment: [:])
        #expect(setting.read(other) == setting.second.value)
    }

    @Test(arguments: settingCases)
    func environmentVariableIsTheFallback(_ setting: SettingCase) throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: [], environment: [setting.variable: setting.second.text])
        #expect(setting.read(configuration) == setting.second.value)
    }

    @Test(arguments: settingCases)
    func flagWinsOverEnvironmentVariable(_ setting: SettingCase) throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: [setting.flag, setting.first.text], environment: [setting.variable: setting.second.text])
        #expect(setting.read(configuration) == setting.first.value)
    }

    @Test(arguments: settingCases)
    func badEnvironmentValueIsNotReadWhenTheFlagWins(_ setting: SettingCase) throws {
        // The flag wins, so the variable is never read: a bad variable under a good flag is no error.
        let configuration = try UnicacheConfiguration.parse(
            arguments: [setting.flag, setting.first.text], environment: [setting.variable: "\u{1}bad value"])
        #expect(setting.read(configuration) == setting.first.value)
    }

    @Test func everyFlagAtOnce() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: [
                "--host", "0.0.0.0", "--port", "9000",
                "--data-dir", "/data", "--memory-limit", "1GiB", "--memory-entries", "500", "--disk-limit", "10GiB",
                "--upstream", "health=http://up:9000", "--upstream-timeout", "2s", "--demo-latency", "10ms",
                "--admin-token", "tok", "--ttl", "scores=2h", "--max-connections", "100",
                "--max-connections-per-ip", "10", "--idle-timeout", "15s", "--header-timeout", "5s",
                "--header-stall", "2s", "--request-timeout", "45s",
                "--log-level", "warning", "--log-format", "json",
            ],
            environment: [:])
        let expected = UnicacheConfiguration(
            server: ServerSettings(
                host: "0.0.0.0", port: 9000, maxConnections: 100, maxConnectionsPerIP: 10,
                idleTimeout: .seconds(15), headerTimeout: .seconds(5), headerStall: .seconds(2),
                requestTimeout: .seconds(45), requestIDs: true),
            cache: CacheSettings(
                memoryLimitBytes: 1 << 30, memoryEntries: 500, dataDir: "/data", diskLimitBytes: 10 << 30,
                ttlOverrides: ["scores": .seconds(7200)]),
            upstreams: UpstreamSettings(urls: [.health: "http://up:9000"], timeout: .seconds(2), demoLatency: .milliseconds(10)),
            admin: AdminSettings(token: "tok"),
            log: LogSettings(level: .warning, format: .json))
        #expect(configuration == expected)
    }

    @Test func valuesAreTrimmedAndLevelAndFormatIgnoreCase() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: ["--log-level", "DEBUG", "--log-format", "JSON"],
            environment: ["UNICACHE_PORT": " 8081\n", "UNICACHE_MEMORY_LIMIT": "\t32MiB "])
        #expect(configuration.log.level == .debug)
        #expect(configuration.log.format == .json)
        #expect(configuration.server.port == 8081)
        #expect(configuration.cache.memoryLimitBytes == 32 << 20)
    }

    @Test func lastOfARepeatedSingleValuedFlagWins() throws {
        let configuration = try UnicacheConfiguration.parse(arguments: ["--port", "1", "--port", "2"], environment: [:])
        #expect(configuration.server.port == 2)
    }

    @Test func aLeadingServeWordIsSkipped() throws {
        let configuration = try UnicacheConfiguration.parse(arguments: ["serve", "--port", "0"], environment: [:])
        #expect(configuration.server.port == 0)
    }
}

import Logging
import Settings
import Testing
import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct ConfigurationDefaultsTests {
    @Test func noFlagsAndNoEnvironmentGiveTheContractDefaults() throws {
        let configuration = try UnicacheConfiguration.parse(arguments: [], environment: [:])
        #expect(configuration == UnicacheConfiguration())
        #expect(configuration.server.host == "127.0.0.1")
        #expect(configuration.server.port == 8080)
        #expect(configuration.server.maxConnections == 4096)
        #expect(configuration.server.maxConnectionsPerIP == 1024)
        #expect(configuration.server.idleTimeout == .seconds(30))
        #expect(configuration.server.headerTimeout == .seconds(10))
        #expect(configuration.server.headerStall == .seconds(1))
        #expect(configuration.server.requestTimeout == .seconds(30))
        #expect(configuration.server.shutdownTimeout == .seconds(10))
        #expect(configuration.cache.dataDir == "./.unicache")
        #expect(configuration.cache.memoryLimitBytes == 64 * 1024 * 1024)
        #expect(configuration.cache.memoryEntries == 100_000)
        #expect(configuration.cache.diskLimitBytes == 1024 * 1024 * 1024)
        #expect(configuration.cache.diskTierEnabled)
        #expect(configuration.cache.ttlOverrides.isEmpty)
        #expect(configuration.upstreams.urls.isEmpty)
        #expect(configuration.upstreams.timeout == .seconds(5))
        #expect(configuration.upstreams.demoLatency == .milliseconds(200))
        #expect(configuration.admin.token == nil)
        #expect(configuration.log.level == .info)
        #expect(configuration.log.format == .text)
    }

    @Test func unrelatedEnvironmentVariablesAreIgnored() throws {
        let environment = ["PATH": "/usr/bin", "HOME": "/root", "UNICACHE": "x", "UNICACHEPORT": "1"]
        #expect(try UnicacheConfiguration.parse(arguments: [], environment: environment) == UnicacheConfiguration())
    }

    @Test func blankEnvironmentVariablesCountAsUnset() throws {
        let environment = ["UNICACHE_PORT": "", "UNICACHE_ADMIN_TOKEN": "  ", "UNICACHE_UPSTREAM_HEALTH": ""]
        #expect(try UnicacheConfiguration.parse(arguments: [], environment: environment) == UnicacheConfiguration())
    }

    @Test func diskLimitZeroDisablesTheDiskTier() throws {
        let configuration = try UnicacheConfiguration.parse(arguments: ["--disk-limit", "0"], environment: [:])
        #expect(configuration.cache.diskLimitBytes == 0)
        #expect(!configuration.cache.diskTierEnabled)
    }
}

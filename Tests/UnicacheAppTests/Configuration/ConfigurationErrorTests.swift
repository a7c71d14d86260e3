import Foundation
import Settings
import Testing
import UnicacheApp

/// An invalid command line or environment and what its one error line must contain.
struct InvalidCase: Sendable, CustomTestStringConvertible {
    var arguments: [String]
    var environment: [String: String] = [:]
    /// The line starts with this (the flag or variable, or ArgumentParser's own first words).
    var prefix: String
    /// …and says this about the accepted form.
    var form: String
    var testDescription: String {
        (arguments + environment.map { "\($0)=\($1)" }).joined(separator: " ").replacingOccurrences(of: "\n", with: "\\n")
    }
}

let invalidCases: [InvalidCase] = [
    // The contract's own examples.
    InvalidCase(arguments: ["--bogus"], prefix: "Unknown option '--bogus'", form: "unicache --help"),
    InvalidCase(arguments: ["--upstream", "weather=http://x:1"], prefix: "--upstream: ", form: "health, activities, subscription, progress"),
    InvalidCase(arguments: ["--ttl", "health.yesterday=1m"], prefix: "--ttl: ", form: "progress.any"),
    InvalidCase(arguments: ["--memory-limit", "12XB"], prefix: "--memory-limit: \"12XB\" is not a byte size", form: "B, KiB, MiB or GiB"),
    InvalidCase(arguments: ["--port", "eighty"], prefix: "--port: \"eighty\" is not a port", form: "0 to 65535"),
    InvalidCase(arguments: ["--log-format", "xml"], prefix: "--log-format: \"xml\" is not a log format", form: "use text or json"),
    // Environment variables are named as such.
    InvalidCase(arguments: [], environment: ["UNICACHE_PORT": "eighty"], prefix: "UNICACHE_PORT: \"eighty\"", form: "0 to 65535"),
    InvalidCase(arguments: [], environment: ["UNICACHE_MEMORY_LIMIT": "12XB"], prefix: "UNICACHE_MEMORY_LIMIT: ", form: "MiB"),
    InvalidCase(arguments: [], environment: ["UNICACHE_LOG_LEVEL": "verbose"], prefix: "UNICACHE_LOG_LEVEL: ", form: "trace, debug, info"),
    InvalidCase(arguments: [], environment: ["UNICACHE_UPSTREAM_HEALTH": "ftp://x"], prefix: "UNICACHE_UPSTREAM_HEALTH: ", form: "http://"),
    InvalidCase(arguments: [], environment: ["UNICACHE_UPSTREAM_WEATHER": "http://x"], prefix: "UNICACHE_UPSTREAM_WEATHER: ", form: "HEALTH, ACTIVITIES"),
    InvalidCase(arguments: [], environment: ["UNICACHE_IDLE_TIMEOUT": "30"], prefix: "UNICACHE_IDLE_TIMEOUT: ", form: "ms, s, m, h or d"),
    // The shared tier (CONTRACT §6); a password in a bad URL is never echoed (checked below).
    InvalidCase(arguments: ["--redis", "http://cache:6379"], prefix: "--redis: ", form: "redis://[[user]:password@]host[:port][/db]"),
    InvalidCase(arguments: ["--redis", "redis://:hunter2@cache:port"], prefix: "--redis: ", form: "redis://[[user]:password@]host[:port][/db]"),
    InvalidCase(arguments: [], environment: ["UNICACHE_REDIS": "redis://cache/x"], prefix: "UNICACHE_REDIS: ", form: "redis://"),
    InvalidCase(arguments: ["--redis-timeout", "0ms"], prefix: "--redis-timeout: ", form: "50ms"),
    InvalidCase(arguments: ["--redis-prefix", "has space"], prefix: "--redis-prefix: ", form: "visible ASCII"),
    // Other bad values.
    InvalidCase(arguments: ["--port", "65536"], prefix: "--port: ", form: "0 to 65535"),
    InvalidCase(arguments: ["--port=-1"], prefix: "--port: ", form: "0 to 65535"),
    InvalidCase(arguments: ["--port"], prefix: "Missing value for '--port", form: "unicache --help"),
    InvalidCase(arguments: ["stray"], prefix: "Unexpected argument 'stray'", form: "unicache --help"),
    InvalidCase(arguments: ["--host", ""], prefix: "--host: ", form: "IP address or host name"),
    // Neither an address nor a name: a mistyped address, brackets, a space (they failed only when the server bound).
    InvalidCase(arguments: ["--host", "999.1.1.1"], prefix: "--host: \"999.1.1.1\" is not a bind address", form: "IP address"),
    InvalidCase(arguments: ["--host", "1.2.3"], prefix: "--host: ", form: "IP address or host name"),
    InvalidCase(arguments: ["--host", "[::1]"], prefix: "--host: ", form: "IP address or host name"),
    InvalidCase(arguments: ["--host", "a b"], prefix: "--host: ", form: "IP address or host name"),
    InvalidCase(arguments: ["--data-dir", ""], prefix: "--data-dir: ", form: "path"),
    InvalidCase(arguments: ["--memory-limit", "0"], prefix: "--memory-limit: \"0\" is not above zero", form: "64MiB"),
    InvalidCase(arguments: ["--disk-limit", "1TB"], prefix: "--disk-limit: ", form: "0 to disable"),
    InvalidCase(arguments: ["--memory-entries", "0"], prefix: "--memory-entries: ", form: "at least 1"),
    InvalidCase(arguments: ["--max-connections", "many"], prefix: "--max-connections: ", form: "whole number"),
    // A negative value is a value, refused with the flag's form (ArgumentParser alone said "Missing value").
    InvalidCase(arguments: ["--max-connections-per-ip", "-3"], prefix: "--max-connections-per-ip: ", form: "at least 1"),
    InvalidCase(arguments: ["--port", "-1"], prefix: "--port: ", form: "from 0 to 65535"),
    InvalidCase(arguments: ["serve", "--refresh-interval", "-1s"], prefix: "--refresh-interval: ", form: "ms, s, m, h or d"),
    InvalidCase(arguments: ["--memory-limit", "-5MiB"], prefix: "--memory-limit: ", form: "MiB"),
    InvalidCase(arguments: ["--port"], prefix: "Missing value for '--port", form: "unicache --help"),
    InvalidCase(arguments: ["--data-dir", "--port", "8080"], prefix: "Missing value for '--data-dir", form: "unicache --help"),
    InvalidCase(arguments: ["--upstream-timeout", "0s"], prefix: "--upstream-timeout: \"0s\" is not above zero", form: "ms, s, m, h or d"),
    InvalidCase(arguments: ["--header-timeout", "0ms"], prefix: "--header-timeout: \"0ms\" is not above zero", form: "10s"),
    InvalidCase(arguments: [], environment: ["UNICACHE_HEADER_TIMEOUT": "ten"], prefix: "UNICACHE_HEADER_TIMEOUT: ", form: "ms, s, m, h or d"),
    InvalidCase(arguments: ["--header-stall", "1"], prefix: "--header-stall: \"1\" is not a duration", form: "0s to never"),
    InvalidCase(arguments: ["--request-timeout", "1.5s"], prefix: "--request-timeout: ", form: "whole number"),
    InvalidCase(arguments: ["--demo-latency", "fast"], prefix: "--demo-latency: ", form: "200ms"),
    InvalidCase(arguments: ["--log-level", "loud"], prefix: "--log-level: ", form: "critical"),
    InvalidCase(arguments: ["--upstream", "health"], prefix: "--upstream: \"health\" is not DOMAIN=URL", form: "health=http://"),
    InvalidCase(arguments: ["--upstream", "health=http://"], prefix: "--upstream: ", form: "with a host"),
    InvalidCase(arguments: ["--upstream", "health=http://up/x?q=1"], prefix: "--upstream: ", form: "no query"),
    InvalidCase(arguments: ["--upstream", "health=up:9000"], prefix: "--upstream: ", form: "http:// or https://"),
    // A host that is no host, or port 0: every fetch would fail; refused at start-up.
    InvalidCase(arguments: ["--upstream", "health=http://999.1.1.1:9000"], prefix: "--upstream: ", form: "with a host"),
    InvalidCase(arguments: ["--upstream", "health=http://a%20b"], prefix: "--upstream: ", form: "with a host"),
    InvalidCase(arguments: ["--upstream", "health=http://up:0"], prefix: "--upstream: ", form: "with a host"),
    InvalidCase(arguments: ["--upstream", "health=http://a", "--upstream", "health=http://b"], prefix: "--upstream: domain health is given twice", form: "at most once"),
    InvalidCase(arguments: ["--ttl", "wellness"], prefix: "--ttl: \"wellness\" is not NAMESPACE=DURATION", form: "wellness=10m"),
    InvalidCase(arguments: ["--ttl", "wellness=10"], prefix: "--ttl: ", form: "ms, s, m, h or d"),
    InvalidCase(arguments: ["--ttl", "scores=1h", "--ttl", "scores=2h"], prefix: "--ttl: namespace scores is given twice", form: "at most once"),
    InvalidCase(arguments: ["--admin-token", ""], prefix: "--admin-token: ", form: "printable secret"),
    InvalidCase(arguments: ["--port", "8080\nINJECTED"], prefix: "--port: \"8080\\nINJECTED\"", form: "0 to 65535"),
    // Upstream protection (CONTRACT §7).
    InvalidCase(arguments: ["--upstream-rate", "subscription=abc"], prefix: "--upstream-rate: ", form: "N/DURATION"),
    InvalidCase(arguments: ["--upstream-rate", "subscription=0/10s"], prefix: "--upstream-rate: ", form: "at least 1"),
    InvalidCase(arguments: ["--upstream-rate", "subscription=5/0s"], prefix: "--upstream-rate: ", form: "above zero"),
    InvalidCase(arguments: ["--upstream-rate", "weather=5/10s"], prefix: "--upstream-rate: ", form: "health, activities"),
    InvalidCase(arguments: ["--upstream-rate", "subscription"], prefix: "--upstream-rate: \"subscription\" is not DOMAIN=N/DURATION", form: "200/15m"),
    InvalidCase(arguments: ["--upstream-rate", "health=1/1s", "--upstream-rate", "health=2/1s"], prefix: "--upstream-rate: domain health has two budgets for a window of 1s", form: "at most once"),
    InvalidCase(arguments: ["--upstream-rate", "health=5/10s,100/10s"], prefix: "--upstream-rate: domain health has two budgets for a window of 10s", form: "at most once"),
    InvalidCase(arguments: [], environment: ["UNICACHE_UPSTREAM_RATE_HEALTH": "5/10s,abc"], prefix: "UNICACHE_UPSTREAM_RATE_HEALTH: ", form: "N/DURATION"),
    InvalidCase(arguments: ["--upstream-concurrency", "x=0"], prefix: "--upstream-concurrency: ", form: "health, activities"),
    InvalidCase(arguments: ["--upstream-concurrency", "health=0"], prefix: "--upstream-concurrency: ", form: "at least 1"),
    InvalidCase(arguments: ["--upstream-header", "health=X-Key"], prefix: "--upstream-header: ", form: "NAME:VALUE"),
    InvalidCase(arguments: ["--upstream-header", "health=X Key:v"], prefix: "--upstream-header: ", form: "without spaces"),
    InvalidCase(arguments: ["--upstream-header", "health=:v"], prefix: "--upstream-header: ", form: "NAME:VALUE"),
    InvalidCase(arguments: ["--upstream-header", "health=Content-Length:5"], prefix: "--upstream-header: ", form: "sets itself"),
    InvalidCase(arguments: ["--upstream-header", "health=connection: close"], prefix: "--upstream-header: ", form: "sets itself"),
    InvalidCase(arguments: ["--upstream-header", "health=X-Request-Id:a"], prefix: "--upstream-header: ", form: "sets itself"),
    InvalidCase(arguments: ["--upstream-header", "health=Accept-Encoding:gzip"], prefix: "--upstream-header: ", form: "sets itself"),
    InvalidCase(arguments: [], environment: ["UNICACHE_UPSTREAM_HEADER_HEALTH": "Transfer-Encoding:chunked"],
                prefix: "UNICACHE_UPSTREAM_HEADER_HEALTH: ", form: "sets itself"),
    InvalidCase(arguments: [], environment: ["UNICACHE_UPSTREAM_RATE_HEALTH": "fast"], prefix: "UNICACHE_UPSTREAM_RATE_HEALTH: ", form: "N/DURATION"),
    InvalidCase(arguments: [], environment: ["UNICACHE_UPSTREAM_RATE_WEATHER": "5/10s"], prefix: "UNICACHE_UPSTREAM_RATE_WEATHER: ", form: "UNICACHE_UPSTREAM_RATE_<DOMAIN>"),
    InvalidCase(arguments: [], environment: ["UNICACHE_UPSTREAM_CONCURRENCY_HEALTH": "-1"], prefix: "UNICACHE_UPSTREAM_CONCURRENCY_HEALTH: ", form: "at least 1"),
]

@Suite(.timeLimit(.minutes(10))) struct ConfigurationErrorTests {
    /// Only a flag's value that starts with `-` and a digit is joined to the flag; the rest stays as given.
    @Test func aNegativeValueIsJoinedToItsFlag() {
        #expect(CommandLineArguments.prepared(["--port", "-1", "--host", "h"]) == ["--port=-1", "--host", "h"])
        #expect(CommandLineArguments.prepared(["serve", "--ttl", "-5s"]) == ["serve", "--ttl=-5s"])
        for unchanged in [
            ["--port=1", "-2"], ["--", "-1"], ["-p", "-1"], ["--port", "--host"], ["--port", "-x"], ["-1"], ["--port", "-"],
        ] {
            #expect(CommandLineArguments.prepared(unchanged) == unchanged, "\(unchanged)")
        }
    }

    @Test(arguments: invalidCases)
    func invalidInputGivesOneLineNamingTheSourceAndTheForm(_ invalid: InvalidCase) {
        #expect {
            try UnicacheConfiguration.parse(arguments: invalid.arguments, environment: invalid.environment)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return !error.message.contains("\n") && error.message.hasPrefix(invalid.prefix)
                && error.message.contains(invalid.form) && error.description == "error: \(error.message)"
        }
    }

    /// What a bind address may be: addresses, names (container names with `_` too), and an IPv6 address with its zone.
    @Test(arguments: ["0.0.0.0", "::", "::1", "fe80::1%eth0", "localhost", "unicache-1", "my_service", "api.example"])
    func aBindAddressIsAnAddressOrAName(_ host: String) throws {
        #expect(try UnicacheConfiguration.parse(arguments: ["--host", host], environment: [:]).server.host == host)
    }

    /// Upstream URLs with an address, a name, IPv6 in brackets, credentials or a base path are taken.
    @Test(arguments: ["http://10.0.0.5:9000", "https://api.example", "http://[::1]:9000", "http://u:p@up:9000/base", "http://up_1"])
    func anUpstreamURLNamesAHost(_ url: String) throws {
        let configuration = try UnicacheConfiguration.parse(arguments: ["--upstream", "health=\(url)"], environment: [:])
        #expect(configuration.upstreams.urls[.health] == url)
    }

    @Test(arguments: ["fe80::1%", "fe80::1%e th0", "10.0.0.1%eth0", "::1%%x"])
    func aZoneGoesOnlyWithAnIPv6Address(_ host: String) {
        #expect(throws: ConfigurationError.self) { try UnicacheConfiguration.parse(arguments: ["--host", host], environment: [:]) }
    }

    @Test func theBriefsExampleLineIsExact() throws {
        let error = #expect(throws: ConfigurationError.self) {
            try UnicacheConfiguration.parse(arguments: ["--memory-limit", "12XB"], environment: [:])
        }
        #expect(
            error?.description
                == #"error: --memory-limit: "12XB" is not a byte size (use a whole number with B, KiB, MiB or GiB, e.g. 64MiB)"#)
    }

    @Test func aBadAdminTokenIsNotEchoed() {
        let error = #expect(throws: ConfigurationError.self) {
            try UnicacheConfiguration.parse(arguments: ["--admin-token", "top h4x0r"], environment: [:])
        }
        #expect(error?.message.contains("h4x0r") == false)
    }

    @Test func aRedisPasswordIsNotEchoed() throws {
        let error = #expect(throws: ConfigurationError.self) {
            try UnicacheConfiguration.parse(arguments: ["--redis", "redis://:hunter2@cache:port"], environment: [:])
        }
        #expect(error?.message.contains("hunter2") == false)
        let configuration = try UnicacheConfiguration.parse(arguments: ["--redis", "redis://:hunter2@cache:7000/2"], environment: [:])
        #expect(configuration.shared.redis?.password == "hunter2")
        #expect(configuration.shared.redis?.database == 2)
        #expect(!"\(configuration.logMetadata)".contains("hunter2"))
    }

    @Test func dataDirectoryErrorForTheAppsStartUpCheck() {
        let error = ConfigurationError.dataDirectory("/root/x", reason: "permission denied")
        #expect(error.message.hasPrefix(#"--data-dir: "/root/x" is not a writable directory: permission denied"#))
        #expect(error.message.contains("--disk-limit 0"))
        #expect(!error.message.contains("\n"))
    }

    @Test func multiLineMessagesAreJoinedIntoOne() {
        #expect(ConfigurationError(message: "first\n  second\r\nthird").message == "first second third")
    }
}

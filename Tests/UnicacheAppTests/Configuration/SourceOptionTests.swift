import Settings
import Testing
import UnicacheApp

/// CONTRACT §11.1 and §11.2: `--demo` and `--upstream-path`, each with its environment variable.
@Suite("Upstream sources and paths", .timeLimit(.minutes(1)))
struct SourceOptionTests {
    func upstreams(_ arguments: [String], _ environment: [String: String] = [:]) throws -> UpstreamSettings {
        try UnicacheConfiguration.parse(arguments: arguments, environment: environment).upstreams
    }

    func sources(_ settings: UpstreamSettings) -> [String] {
        UpstreamDomain.allCases.map { settings.source(for: $0).description }
    }

    /// `make run` keeps its demo data; once any upstream is given, the rest is demo only where `--demo` says so.
    @Test func theDemoServesEverythingOnlyWithoutUpstreams() throws {
        #expect(sources(try upstreams([])) == ["demo", "demo", "demo", "demo"])
        let one = try upstreams(["--upstream", "health=https://user:pw@health.example/api"])
        #expect(sources(one) == ["https://health.example:443", "none", "none", "none"])
        let mixed = try upstreams(["--upstream", "health=http://10.0.0.5:9000", "--demo", "progress,subscription"])
        #expect(sources(mixed) == ["http://10.0.0.5:9000", "none", "demo", "demo"])
        #expect(sources(try upstreams(["--demo", "none"])) == ["none", "none", "none", "none"])
        #expect(sources(try upstreams(["--demo", "health"])) == ["demo", "none", "none", "none"])
        let variable = try upstreams([], ["UNICACHE_UPSTREAM_ACTIVITIES": "http://up:9000", "UNICACHE_DEMO": "all"])
        #expect(sources(variable) == ["demo", "http://up:9000", "demo", "demo"])
        #expect(!sources(one).joined().contains("pw"))
    }

    @Test func badDemoValuesNameTheFlag() {
        #expect(configurationError(["--demo", "heath"]).hasPrefix("--demo: \"heath\" is not a list of demo domains"))
        #expect(configurationError([], ["UNICACHE_DEMO": "all,health"]).hasPrefix("UNICACHE_DEMO: "))
        #expect(configurationError(["--upstream", "health=http://up:9000", "--demo", "health"])
            .hasPrefix("--demo: domain health has an --upstream too"))
    }

    @Test func aTemplateReplacesTheUpstreamPath() throws {
        let settings = try upstreams([
            "--upstream", "activities=https://www.strava.example", "--upstream-path",
            "activities=/api/v3/athletes/{user}/activities?per_page=50&days={days}&types={types}",
        ], ["UNICACHE_UPSTREAM_PATH_STREAMS": "/api/v3/activities/{id}/streams?athlete={user}"])
        #expect(settings.paths["activities"]?.text == "/api/v3/athletes/{user}/activities?per_page=50&days={days}&types={types}")
        #expect(settings.paths["streams"]?.text == "/api/v3/activities/{id}/streams?athlete={user}")
    }

    @Test(arguments: [
        (["activities=api/{user}"], "--upstream-path: the template of activities is not usable: \"api/{user}\" does not start with /"),
        (["activities=/a/{date}"], "--upstream-path: the template of activities is not usable: this route has no {date}"),
        (["activities=/a/{nope}"], "--upstream-path: the template of activities is not usable: {nope} is not a placeholder"),
        (["activities=/a/{user"], "--upstream-path: the template of activities is not usable: a { without its }"),
        (["nothing=/a"], "--upstream-path: \"nothing\" is not a read-through namespace"),
        (["activities"], "--upstream-path: \"activities\" is not NAMESPACE=TEMPLATE"),
        (["subscription=/s/{user}"], "--upstream-path: namespace subscription is served by domain subscription, which has no --upstream"),
    ])
    func aBadTemplateStopsStartUpNamingTheFlag(values: [String], prefix: String) {
        let arguments = ["--upstream", "activities=http://up:9000"] + values.flatMap { ["--upstream-path", $0] }
        #expect(configurationError(arguments).hasPrefix(prefix), "\(configurationError(arguments))")
    }

    /// CONTRACT §11.6: a template that leaves out a placeholder of its namespace's key would store under that key
    /// data the key does not describe: start-up stops, naming the flag and every missing placeholder.
    @Test(arguments: [
        ("activities=/api/v3/athletes/{user}/activities?days={days}", "activities leaves out {types}, part of its cache key activities:{user}:{types}:{days}"),
        ("activities=/a/{user}", "activities leaves out {types}, {days}, parts of its cache key"),
        ("wellness=/w/{user}", "wellness leaves out {days}, part"),
        ("scores=/s/{user}", "scores leaves out {date}, part"),
        ("health.metrics=/m/{user}/{date}", "health.metrics leaves out {metric}, part"),
        ("health.averages=/avg/{user}?tz={tz}", "health.averages leaves out {weekday}, part"),
        ("health.today=/today/{user}", "health.today leaves out {date} (or {tz}, which decides it), part"),
        ("streams=/streams?athlete={user}", "streams leaves out {id}, part"),
        ("subscription=/me/subscription", "subscription leaves out {user}, part of its cache key subscription:{user}"),
        ("progress.today=/p/{user}/today", "progress.today leaves out {date} (or {tz}, which decides it), part"),
    ])
    func aTemplateLeavingOutAKeyPlaceholderStopsStartUp(value: String, expected: String) {
        let arguments = UpstreamDomain.allCases.flatMap { ["--upstream", "\($0.rawValue)=http://up:9000"] } + ["--upstream-path", value]
        #expect(configurationError(arguments).hasPrefix("--upstream-path: the template of \(expected)"), "\(configurationError(arguments))")
    }

    @Test func aTemplateWithEveryKeyPlaceholderIsAccepted() throws {
        let settings = try upstreams(
            UpstreamDomain.allCases.flatMap { ["--upstream", "\($0.rawValue)=http://up:9000"] } + [
                "--upstream-path", "health.today=/today/{user}?tz={tz}",
                "--upstream-path", "progress.today=/p/{user}/{date}",
                "--upstream-path", "health.averages=/avg/{user}/{weekday}",
                "--upstream-path", "subscription=/s?u={user}",
            ])
        #expect(settings.paths.count == 4)
        let variable = configurationError(
            ["--upstream", "health=http://up:9000"], ["UNICACHE_UPSTREAM_PATH_WELLNESS": "/w/{user}"])
        #expect(variable.hasPrefix("UNICACHE_UPSTREAM_PATH_WELLNESS: the template of wellness leaves out {days}"))
    }

    @Test func anUnknownPathVariableIsAnError() {
        #expect(configurationError([], ["UNICACHE_UPSTREAM_PATH_NOTHING": "/x"]).hasPrefix("UNICACHE_UPSTREAM_PATH_NOTHING: unknown upstream variable"))
    }
}

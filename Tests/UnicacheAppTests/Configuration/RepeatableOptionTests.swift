import Settings
import Testing
import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct RepeatableOptionTests {
    @Test func everyDomainCanHaveAnUpstream() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: [
                "--upstream", "health=http://h:9000", "--upstream", "activities=https://a.example/api/",
                "--upstream=subscription=http://s:1", "--upstream", "PROGRESS=http://p",
            ],
            environment: [:])
        #expect(
            configuration.upstreams.urls == [
                .health: "http://h:9000", .activities: "https://a.example/api", .subscription: "http://s:1",
                .progress: "http://p",
            ])
    }

    @Test func upstreamVariablesPerDomainAndFlagsWinPerDomain() throws {
        let environment = [
            "UNICACHE_UPSTREAM_HEALTH": "http://env-health:1",
            "UNICACHE_UPSTREAM_PROGRESS": "http://env-progress:2/",
            "UNICACHE_UPSTREAM_TIMEOUT": "3s",
        ]
        let configuration = try UnicacheConfiguration.parse(
            arguments: ["--upstream", "health=http://flag-health:9"], environment: environment)
        #expect(configuration.upstreams.url(for: .health) == "http://flag-health:9")
        #expect(configuration.upstreams.url(for: .progress) == "http://env-progress:2")
        #expect(configuration.upstreams.url(for: .activities) == nil)
        #expect(configuration.upstreams.timeout == .seconds(3))
    }

    @Test func upstreamURLsKeepPathAndPortAndUserInfo() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: ["--upstream", "health=http://user:pw@[::1]:9000/base//"], environment: [:])
        #expect(configuration.upstreams.url(for: .health) == "http://user:pw@[::1]:9000/base")
    }

    @Test func everyNamespaceCanHaveATTL() throws {
        let arguments = CacheSettings.namespaces.enumerated().flatMap { index, namespace in
            ["--ttl", "\(namespace)=\(index + 1)m"]
        }
        let configuration = try UnicacheConfiguration.parse(arguments: arguments, environment: [:])
        #expect(configuration.cache.ttlOverrides.count == 13)
        for (index, namespace) in CacheSettings.namespaces.enumerated() {
            #expect(configuration.cache.ttlOverrides[namespace] == .seconds(60 * (index + 1)))
        }
    }

    @Test func ttlNamespacesAreTheContractsTable() {
        #expect(
            Set(CacheSettings.namespaces) == [
                "health.today", "health.averages", "health.metrics", "wellness", "scores", "activities", "streams",
                "subscription", "profile", "progress.history", "progress.streak", "progress.today", "progress.any",
            ])
    }

    @Test func ttlAcceptsZeroAndEveryUnit() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: ["--ttl", "wellness=0s", "--ttl", "streams=7d", "--ttl=scores=500ms"], environment: [:])
        #expect(configuration.cache.ttlOverrides == ["wellness": .zero, "streams": .seconds(7 * 86400), "scores": .milliseconds(500)])
    }

    @Test func upstreamDomainVariableNames() {
        #expect(UpstreamDomain.allCases.map(\.environmentName) == [
            "UNICACHE_UPSTREAM_HEALTH", "UNICACHE_UPSTREAM_ACTIVITIES", "UNICACHE_UPSTREAM_SUBSCRIPTION",
            "UNICACHE_UPSTREAM_PROGRESS",
        ])
    }
}

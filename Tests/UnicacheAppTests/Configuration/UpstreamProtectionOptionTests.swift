import Settings
import Testing
import UpstreamGate
import UnicacheApp

/// `--upstream-rate`, `--upstream-concurrency`, `--upstream-header` and their variables (CONTRACT §7), whose
/// names are told apart from `UNICACHE_UPSTREAM_<DOMAIN>` exactly.
@Suite(.timeLimit(.minutes(10))) struct UpstreamProtectionOptionTests {
    @Test func flagsSetBudgetsCapsAndHeadersPerDomain() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: [
                "--upstream-rate", "activities=200/15m", "--upstream-rate", "SUBSCRIPTION=5/10s",
                "--upstream-concurrency", "health=8",
                "--upstream-header", "activities=Authorization: Bearer s3cret",
                "--upstream-header", "activities=X-Client:unicache",
            ],
            environment: [:])
        let upstreams = configuration.upstreams
        #expect(upstreams.protection(for: .activities).budgets == [RateWindow(limit: 200, window: .seconds(900))])
        #expect(upstreams.protection(for: .subscription).budgets == [RateWindow(limit: 5, window: .seconds(10))])
        #expect(upstreams.protection(for: .health) == UpstreamProtection(concurrency: 8))
        #expect(upstreams.protection(for: .progress) == UpstreamProtection())
        #expect(
            upstreams.protection(for: .activities).headers == [
                UpstreamHeader(name: "Authorization", value: "Bearer s3cret"),
                UpstreamHeader(name: "X-Client", value: "unicache"),
            ])
    }

    /// Strava's two limits: the flag repeated, or the budgets separated by commas (the only way in a variable).
    @Test func aDomainTakesBudgetsOfSeveralWindows() throws {
        let strava = [RateWindow(limit: 200, window: .seconds(900)), RateWindow(limit: 2000, window: .seconds(86_400))]
        let flags = try UnicacheConfiguration.parse(
            arguments: ["--upstream-rate", "activities=200/15m", "--upstream-rate", "activities=2000/1d"], environment: [:])
        let commas = try UnicacheConfiguration.parse(
            arguments: ["--upstream-rate", "activities=200/15m, 2000/1d"], environment: [:])
        let variable = try UnicacheConfiguration.parse(
            arguments: [], environment: ["UNICACHE_UPSTREAM_RATE_ACTIVITIES": "200/15m,2000/1d"])
        #expect(flags.upstreams.protection(for: .activities).budgets == strava)
        #expect(commas.upstreams.protection(for: .activities).budgets == strava)
        #expect(variable.upstreams.protection(for: .activities).budgets == strava)
        #expect("\(flags.logMetadata)".contains("200/15m,2000/1d"))
    }

    /// `UNICACHE_UPSTREAM_RATE_SUBSCRIPTION` is the budget of `subscription`, not the URL of a domain called
    /// `RATE_SUBSCRIPTION` (an error at start-up before).
    @Test func variablesOfEveryKindAreToldApart() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: ["--upstream-concurrency", "health=2"],
            environment: [
                "UNICACHE_UPSTREAM_SUBSCRIPTION": "http://sub:9000",
                "UNICACHE_UPSTREAM_RATE_SUBSCRIPTION": "5/10s",
                "UNICACHE_UPSTREAM_CONCURRENCY_SUBSCRIPTION": "3",
                "UNICACHE_UPSTREAM_CONCURRENCY_HEALTH": "9",
                "UNICACHE_UPSTREAM_HEADER_SUBSCRIPTION": "X-Api-Key:k",
            ])
        let upstreams = configuration.upstreams
        #expect(upstreams.urls == [.subscription: "http://sub:9000"])
        #expect(
            upstreams.protection(for: .subscription) == UpstreamProtection(
                budgets: [RateWindow(limit: 5, window: .seconds(10))], concurrency: 3,
                headers: [UpstreamHeader(name: "X-Api-Key", value: "k")]))
        #expect(upstreams.protection(for: .health).concurrency == 2)  // the flag wins
    }

    /// A header value is a secret: an error about it names the flag, the summary names the header only.
    @Test func headerValuesAreNeverShown() throws {
        let configuration = try UnicacheConfiguration.parse(
            arguments: ["--upstream-header", "activities=Authorization:Bearer s3cret"], environment: [:])
        #expect(!"\(configuration.logMetadata)".contains("s3cret"))
        #expect("\(configuration.logMetadata)".contains("Authorization"))
        #expect(!"\(configuration.upstreams)".contains("s3cret"))
        let error = #expect(throws: ConfigurationError.self) {
            try UnicacheConfiguration.parse(
                arguments: ["--upstream-header", "activities=Bad Name:s3cret"], environment: [:])
        }
        #expect(error.map { !$0.message.contains("s3cret") } == true)
    }
}

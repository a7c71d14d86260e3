import Settings
import Testing
import UpstreamGate
import UnicacheApp

/// `--upstream-user-share` and `--refresh-interval` (CONTRACT §15) and their variables: defaults, forms, and the
/// one-line errors naming the flag.
@Suite(.timeLimit(.minutes(10))) struct FairShareOptionTests {
    @Test func theDefaultsAreATenthPerUserAndNoThrottle() throws {
        let configuration = try UnicacheConfiguration.parse(arguments: [], environment: [:])
        #expect(configuration.upstreams.userShare == UserShare(percent: 10))
        #expect(configuration.cache.refreshInterval == .zero)
        #expect(configuration.logMetadata["upstream-user-share"] == "10%")
        #expect(configuration.logMetadata["refresh-interval"] == "off")
    }

    @Test func flagsAndVariablesSetThem() throws {
        let flags = try UnicacheConfiguration.parse(
            arguments: ["--upstream-user-share", "25%", "--refresh-interval", "30s"], environment: [:])
        #expect(flags.upstreams.userShare == UserShare(percent: 25) && flags.cache.refreshInterval == .seconds(30))
        // `UNICACHE_UPSTREAM_USER_SHARE` is the share, not the URL of a domain called `USER_SHARE`.
        let variables = try UnicacheConfiguration.parse(
            arguments: [], environment: ["UNICACHE_UPSTREAM_USER_SHARE": "100", "UNICACHE_REFRESH_INTERVAL": "2m"])
        #expect(variables.upstreams.userShare == .whole && variables.cache.refreshInterval == .seconds(120))
        let flagWins = try UnicacheConfiguration.parse(
            arguments: ["--upstream-user-share", "5"], environment: ["UNICACHE_UPSTREAM_USER_SHARE": "50"])
        #expect(flagWins.upstreams.userShare == UserShare(percent: 5))
    }

    @Test(arguments: [
        (["--upstream-user-share", "0"], "--upstream-user-share: \"0\" is not a percentage"),
        (["--upstream-user-share", "101"], "--upstream-user-share: \"101\" is not a percentage"),
        (["--upstream-user-share", "ten"], "--upstream-user-share: \"ten\" is not a percentage"),
        (["--refresh-interval", "soon"], "--refresh-interval: \"soon\" is not a duration"),
    ])
    func invalidValuesStopStartUpNamingTheFlag(arguments: [String], prefix: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try UnicacheConfiguration.parse(arguments: arguments, environment: [:])
        }
        #expect(error?.message.hasPrefix(prefix) == true)
        #expect(error?.message.contains("\n") == false)
    }
}

import Logging
import Settings
import Testing
import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct ConfigurationSecrecyTests {
    let configuration: UnicacheConfiguration

    init() throws {
        configuration = try UnicacheConfiguration.parse(
            arguments: ["--admin-token", "tok-123-secret", "--upstream", "health=http://alice:pa55@up:9000/x"],
            environment: [:])
    }

    @Test func theTokenIsKept() {
        #expect(configuration.admin.token == "tok-123-secret")
        #expect(configuration.admin.isTokenSet)
    }

    @Test func descriptionsAndDumpsNeverShowTheToken() {
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [String(describing: configuration), String(reflecting: configuration), dumped, "\(configuration.admin)"] {
            #expect(!text.contains("tok-123-secret"))
        }
        #expect(String(describing: configuration.admin).contains("<redacted>"))
    }

    @Test func summaryShowsOnlyWhetherATokenIsSetAndNoURLCredentials() {
        let summary = configuration.logMetadata
        let text = "\(summary)"
        #expect(!text.contains("tok-123-secret"))
        #expect(!text.contains("pa55"))
        #expect(summary["admin-token"] == "set")
        guard case .dictionary(let upstreams)? = summary["upstreams"] else {
            Issue.record("no upstreams in the summary")
            return
        }
        // CONTRACT §11.1: the source's scheme, host and port; a domain with neither upstream nor demo is none.
        #expect(upstreams["health"] == "http://up:9000")
        #expect(upstreams["activities"] == "none")
        #expect(UnicacheConfiguration().logMetadata["admin-token"] == "unset")
    }
}

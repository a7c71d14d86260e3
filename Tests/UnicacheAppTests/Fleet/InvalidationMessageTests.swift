import Testing
import UnifiedCache

@testable import RedisTier

/// The invalidation channel's messages and the tier's key names, without Redis.
@Suite(.timeLimit(.minutes(10))) struct InvalidationMessageTests {
    @Test(arguments: [
        SharedScope.key("subscription:alice"), .prefix("health:"), .user("alice"), .all,
        .namespaces(["subscription", "progress.today"], user: "bob"),
    ])
    func aMessageReadsBackAsItsScope(_ scope: SharedScope) {
        let text = "instance-1|42|" + InvalidationMessage.body(scope)
        #expect(InvalidationMessage(Array(text.utf8)) == InvalidationMessage(origin: "instance-1", sequence: 42, scope: scope))
    }

    @Test(arguments: ["", "a|b", "a|x|key|k", "a|1|key|", "a|1|nonsense|k", "a|1|ns|", "a|1|ns|onlyuser"])
    func malformedMessagesAreRefused(_ text: String) {
        #expect(InvalidationMessage(Array(text.utf8)) == nil)
    }

    @Test func invalidUTF8IsRefused() {
        #expect(InvalidationMessage([0xFF, 0xFE, 0x7C]) == nil)
    }

    @Test func keysNeverCollideWithTheTiersOwnAndPatternsEscapeThePrefix() {
        let keys = RedisKeys(prefix: "fleet*[1]:")
        #expect(keys.entry("subscription:alice") == "fleet*[1]:subscription:alice")
        #expect(keys.sequence.hasPrefix(keys.internalPrefix) && keys.lock("k").hasPrefix(keys.internalPrefix))
        #expect(keys.userIndex("alice") == "fleet*[1]:#user:{alice}")
        #expect(keys.entryPattern(keyPrefix: "health:") == #"fleet\*\[1\]:health:*"#)
        #expect(keys.channel == "fleet*[1]:inval")
    }
}

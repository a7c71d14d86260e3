import Testing
import UnifiedCache

@testable import RedisTier

/// The invalidation channel's messages, the log's entries and positions, and the tier's key names, without Redis.
@Suite(.timeLimit(.minutes(10))) struct InvalidationMessageTests {
    @Test(arguments: [
        SharedScope.key("subscription:alice"), .prefix("health:"), .user("alice"), .all,
        .namespaces(["subscription", "progress.today"], user: "bob"),
    ])
    func aMessageReadsBackAsItsScope(_ scope: SharedScope) {
        let position = LogPosition(milliseconds: 1_764_130_000_123, sequence: 7)
        let text = "instance-1|1764130000123-7|" + InvalidationMessage.body(scope)
        let message = InvalidationMessage(origin: "instance-1", position: position, scope: scope)
        #expect(InvalidationMessage(Array(text.utf8)) == message)
        // The log's entry of the same change: without its position, which is the entry's id.
        let entry = "instance-1|" + InvalidationMessage.body(scope)
        #expect(InvalidationMessage(position: position, entry: Array(entry.utf8)) == message)
    }

    @Test func positionsReadAsRedisWritesThemAndOrderAsItDoes() {
        #expect(LogPosition("1764130000123-7") == LogPosition(milliseconds: 1_764_130_000_123, sequence: 7))
        #expect(LogPosition("42") == LogPosition(milliseconds: 42, sequence: 0))
        #expect(LogPosition("") == nil && LogPosition("1-x") == nil && LogPosition("-1") == nil)
        #expect(LogPosition("9-10")! > LogPosition("9-9")! && LogPosition("10-0")! > LogPosition("9-99")!)
        #expect(LogPosition("1-0")!.description == "1-0" && LogPosition.zero < LogPosition("0-1")!)
    }

    /// A newly fetched value is announced as `stored`: it replaces the key's copies without superseding loads.
    @Test func aStoredValueReadsBackAsAReplacement() {
        let position = LogPosition(milliseconds: 1_764_130_000_123, sequence: 7)
        let message = InvalidationMessage(Array("instance-1|1764130000123-7|stored|subscription:alice".utf8))
        #expect(message == InvalidationMessage(origin: "instance-1", position: position, event: .replaced("subscription:alice")))
        #expect(message?.key == "subscription:alice")
        #expect(InvalidationMessage(position: position, entry: Array("instance-1|stored|k".utf8))?.event == .replaced("k"))
        #expect(InvalidationMessage(Array("a|1|stored|".utf8)) == nil)
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
        #expect(keys.log.hasPrefix(keys.internalPrefix) && keys.lock("k").hasPrefix(keys.internalPrefix))
        #expect(keys.userIndex("alice") == "fleet*[1]:#user:{alice}")
        #expect(keys.entryPattern(keyPrefix: "health:") == #"fleet\*\[1\]:health:*"#)
        #expect(keys.channel == "fleet*[1]:inval")
    }
}

import Testing
import Redis
import UnifiedCache

@testable import RedisTier

/// The invalidation channel's messages, the log's entries and positions, and the tier's key names, without Redis.
@Suite(.timeLimit(.minutes(10))) struct InvalidationMessageTests {
    static let position = LogPosition(milliseconds: 1_764_130_000_123, sequence: 7)

    /// The channel's text of a change, as the Lua scripts write it.
    static func channelText(origin: String = "instance-1", _ change: String) -> String {
        InvalidationMessage.head(origin: origin) + "|1764130000123-7|" + change
    }

    /// The log entry's text of the same change (its position is the entry's id).
    static func entryText(origin: String = "instance-1", _ change: String) -> String {
        InvalidationMessage.head(origin: origin) + "|" + change
    }

    /// Every kind, with the ids users really have (`auth0|abc`, `a@b`), one that looks encoded (`%7C`), keys with
    /// every separator a format might use, the empty namespace list and a key of the longest length.
    @Test(arguments: [
        SharedScope.key("subscription:alice"), .prefix("health:"), .user("alice"), .all,
        .namespaces(["subscription", "progress.today"], user: "bob"),
        .namespaces(["subscription", "progress.today"], user: "auth0|abc"), .user("auth0|abc"), .user("a@b"),
        .user("%7C"), .user("auth0%7Cabc"), .namespaces([], user: "auth0|abc"), .namespaces(["a,b", "c|d"], user: "e"),
        .key("activities:auth0|abc:ride,run:14"), .key("a:b,c@d"), .prefix("health:auth0|"),
        .key(String(repeating: "a|:,", count: 128)),
    ])
    func aMessageReadsBackAsItsScope(_ scope: SharedScope) {
        let message = InvalidationMessage(origin: "instance-1", position: Self.position, scope: scope)
        let change = InvalidationMessage.change(scope)
        #expect(InvalidationMessage(Array(Self.channelText(change).utf8)) == message)
        #expect(InvalidationMessage(position: Self.position, entry: Array(Self.entryText(change).utf8)) == message)
    }

    /// A newly fetched value is announced as `stored`: it replaces the key's copies without superseding loads.
    @Test(arguments: ["subscription:alice", "subscription:auth0|abc", "streams:a@b:%7C"])
    func aStoredValueReadsBackAsAReplacement(_ key: String) {
        let stored = InvalidationMessage.change(storing: key, as: .fetched)
        let message = InvalidationMessage(Array(Self.channelText(stored).utf8))
        #expect(message == InvalidationMessage(origin: "instance-1", position: Self.position, event: .replaced(key)))
        #expect(message?.key == key)
        #expect(InvalidationMessage(position: Self.position, entry: Array(Self.entryText(stored).utf8))?.event == .replaced(key))
        // A raw put is announced as `key`, like a delete.
        let put = InvalidationMessage.change(storing: key, as: .put)
        #expect(InvalidationMessage(Array(Self.channelText(put).utf8))?.event == .invalidate(.key(key)))
    }

    @Test func anOriginWithTheSeparatorReadsBack() {
        let text = Self.channelText(origin: "o|1|%", InvalidationMessage.change(.all))
        #expect(InvalidationMessage(Array(text.utf8))?.origin == "o|1|%")
    }

    /// The wire text itself, field by field: a user's `|` is never a separator.
    @Test func anEventForAUserWithABarIsOneField() {
        let text = "v2|instance-1|1764130000123-7|ns|auth0%7Cabc|progress.today|subscription"
        #expect(Self.channelText(InvalidationMessage.change(.namespaces(["subscription", "progress.today"], user: "auth0|abc"))) == text)
        #expect(
            InvalidationMessage(Array(text.utf8))?.event
                == .invalidate(.namespaces(["subscription", "progress.today"], user: "auth0|abc")))
        #expect(InvalidationMessage(Array("v2|i|1-0|user|a@b".utf8))?.event == .invalidate(.user("a@b")))
        #expect(InvalidationMessage(Array("v2|i|1-0|user|%257C".utf8))?.event == .invalidate(.user("%7C")))
        #expect(InvalidationMessage(Array("v2|i|1-0|ns|auth0%7Cabc".utf8))?.event == .invalidate(.namespaces([], user: "auth0|abc")))
    }

    @Test func fieldsAreEncodedOneWay() {
        #expect(MessageField.encode("auth0|abc") == "auth0%7Cabc")
        #expect(MessageField.encode("%7C") == "%257C")
        #expect(MessageField.encode("a@b") == "a@b")
        #expect(MessageField.encode("health:a.b_c-d:x,y") == "health:a.b_c-d:x,y")
        #expect(MessageField.encode("é {}") == "%C3%A9%20%7B%7D")
        #expect(MessageField.decode("auth0%7Cabc") == "auth0|abc" && MessageField.decode("%C3%A9") == "é")
    }

    @Test(arguments: [
        // Not this format: none, another marker, the release before's (a `|` inside an id read as a separator).
        "", "v2", "v3|o|1-0|user|u", "V2|o|1-0|user|u", "o|1-0|user|u", "o|1-0|ns|auth0|abc|subscription", "o|1-0|all|",
        // Fields missing, empty or too many for the kind.
        "v2|o|1-0", "v2|o|1-0|key", "v2|o|1-0|key|", "v2|o|1-0|key|a|b", "v2|o|1-0|all|", "v2|o|1-0|all|x",
        "v2|o|1-0|ns", "v2|o|1-0|ns||subscription", "v2|o|1-0|ns|u|subscription|", "v2|o|1-0|ns|u|a|a",
        "v2|o|1-0|stored|", "v2||1-0|user|u", "v2|o|1-0|nonsense|k", "v2|o|1-0|user|auth0|abc",
        // Fields not well-formed: lower-case or needless escapes, a truncated or bad escape, raw bytes outside the
        // set, bytes that are not UTF-8 once decoded, a position with a sign or no digits.
        "v2|o|1-0|user|auth0%7cabc", "v2|o|1-0|user|a%40b", "v2|o|1-0|user|a%41", "v2|o|1-0|user|a%4", "v2|o|1-0|user|a%",
        "v2|o|1-0|user|a%ZZ", "v2|o|1-0|user|a b", "v2|o|1-0|user|a{b}", "v2|o|1-0|user|é", "v2|o|1-0|user|\u{212A}",
        "v2|o|1-0|user|%FF", "v2|o|1-0|user|%C3", "v2|o|+1-0|user|u", "v2|o|1-+0|user|u", "v2|o|x|user|u",
        "v2|o%7c|1-0|user|u",
    ])
    func malformedMessagesAreRefused(_ text: String) {
        #expect(InvalidationMessage(Array(text.utf8)) == nil)
    }

    @Test(arguments: ["", "v2|o", "o|user|u", "o|ns|auth0|abc|subscription", "v2|o|1-0|user|u", "v2|o|user|a|b", "v2|o|all|"])
    func malformedLogEntriesAreRefused(_ text: String) {
        #expect(InvalidationMessage(position: Self.position, entry: Array(text.utf8)) == nil)
    }

    @Test func invalidUTF8IsRefused() {
        #expect(InvalidationMessage([0xFF, 0xFE, 0x7C]) == nil)
        #expect(InvalidationMessage(Array("v2|o|1-0|user|".utf8) + [0xFF]) == nil)
    }

    @Test func positionsReadAsRedisWritesThemAndOrderAsItDoes() {
        #expect(LogPosition("1764130000123-7") == LogPosition(milliseconds: 1_764_130_000_123, sequence: 7))
        #expect(LogPosition("42") == LogPosition(milliseconds: 42, sequence: 0))
        #expect(LogPosition("") == nil && LogPosition("1-x") == nil && LogPosition("-1") == nil)
        #expect(LogPosition("+1-0") == nil && LogPosition("1-+0") == nil && LogPosition("1-") == nil)
        #expect(LogPosition("9-10")! > LogPosition("9-9")! && LogPosition("10-0")! > LogPosition("9-99")!)
        #expect(LogPosition("1-0")!.description == "1-0" && LogPosition.zero < LogPosition("0-1")!)
    }

    @Test func keysNeverCollideWithTheTiersOwnAndPatternsEscapeThePrefix() {
        let keys = RedisKeys(prefix: "fleet*[1]:")
        #expect(keys.entry("subscription:alice") == "fleet*[1]:subscription:alice")
        #expect(keys.log(0) == "fleet*[1]:#log" && keys.epoch(0) == "fleet*[1]:#epoch")
        #expect(keys.lock("k") == "fleet*[1]:#lock:k")
        #expect(keys.cacheKey(ofEntry: keys.log(0)) == nil && keys.cacheKey(ofEntry: keys.lock("k")) == nil)
        #expect(keys.cacheKey(ofEntry: keys.entry("health:x")) == "health:x")
        #expect(keys.userIndex("alice", shard: 0) == "fleet*[1]:#user:{alice}")
        #expect(keys.entryPattern(keyPrefix: "health:") == #"fleet\*\[1\]:health:*"#)
        #expect(keys.channel(0) == "fleet*[1]:inval")
    }

    /// Names carry ids verbatim (the entry's name is the cache key after the prefix); a prefix delete's pattern
    /// escapes the key prefix's glob characters too, so it matches only keys that start with it.
    @Test func namesCarryIdsVerbatimAndPatternsMatchOnlyTheirPrefix() {
        let keys = RedisKeys(prefix: "u:")
        #expect(
            keys.userIndex("auth0|abc", shard: 0) == "u:#user:{auth0|abc}"
                && keys.userIndex("auth0", shard: 0) == "u:#user:{auth0}")
        #expect(keys.entry("subscription:auth0|abc") == "u:subscription:auth0|abc")
        #expect(keys.lock("subscription:auth0|abc") == "u:#lock:subscription:auth0|abc")
        #expect(keys.entryPattern(keyPrefix: "a*b?[c]\\") == #"u:a\*b\?\[c\]\\*"#)
    }

    /// On a cluster every name of a shard carries the shard's hash tag first (one slot per shard), ids verbatim after
    /// it; the rate and membership keys keep their one-slot names (CONTRACT §13).
    @Test func clusterNamesCarryTheirShardsTagFirst() {
        let keys = RedisKeys(prefix: "u:", shards: 16)
        let shard = keys.shard(of: "subscription:auth0|abc")
        #expect(shard == SharedShard.index(of: "subscription:auth0|abc", count: 16))
        #expect(keys.entry("subscription:auth0|abc") == "u:{s\(shard)}subscription:auth0|abc")
        #expect(keys.lock("subscription:auth0|abc") == "u:{s\(shard)}#lock:subscription:auth0|abc")
        #expect(keys.userIndex("auth0|abc", shard: 3) == "u:{s3}#user:auth0|abc")
        #expect(keys.log(3) == "u:{s3}#log" && keys.epoch(3) == "u:{s3}#epoch" && keys.channel(3) == "u:{s3}inval")
        #expect(RedisHashSlot.of(keys.entry("a")) == RedisHashSlot.of(keys.log(keys.shard(of: "a"))))
        // A shared hit's GET names the entry by each shard's prefix, kept as bytes, and the key: the same name, and
        // the same slot by every form of `RedisHashSlot.of` (its bytes, its text, a byte slice).
        for key in ["a", "subscription:auth0|abc", "health:today:é:2026-12-04", "x"] {
            for names in [keys, RedisKeys(prefix: "u:")] {
                let get = RedisCommand.get(names.entryHead(key), key)
                #expect(get == .get(names.entry(key)) && get.arguments == [Array(names.entry(key).utf8)])
                let bytes = get.arguments[0]
                #expect(RedisHashSlot.of(bytes) == RedisHashSlot.of(names.entry(key)))
                #expect(RedisHashSlot.of(bytes[...]) == RedisHashSlot.of(bytes))
            }
        }
        #expect(keys.cacheKey(ofEntry: keys.entry("x:y")) == "x:y" && keys.cacheKey(ofEntry: keys.lock("x")) == nil)
        #expect(keys.cacheKey(ofEntry: keys.log(3)) == nil && keys.cacheKey(ofEntry: keys.rate("d")) == nil)
        #expect(keys.rate("d") == "u:#rate:{d}" && keys.instances == "u:#instances")
        #expect(keys.entryPattern(keyPrefix: "a*") == #"u:{s*}a\**"#)
        // Keys spread over the shards.
        #expect(Set((0..<200).map { keys.shard(of: "k\($0)") }).count == 16)
    }
}

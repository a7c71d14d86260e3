@testable import Redis
import Testing

@Suite("The replies to a batch")
struct RedisRepliesTests {
    private static let replies: [RedisReply] = [.status("OK"), .integer(7), .string(Array("v".utf8)), .null]

    /// Every count of replies reads back in order, whether one command's reply (held as itself) or several.
    @Test(arguments: 0...4)
    func holdsTheRepliesInOrder(count: Int) {
        var held = RedisReplies(expected: count)
        #expect(held.isEmpty)
        for reply in Self.replies.prefix(count) { held.append(reply) }
        #expect(Array(held) == Array(Self.replies.prefix(count)))
        #expect(held.count == count)
        #expect(held.first == Self.replies.prefix(count).first)
    }

    /// More replies than expected (a SUBSCRIBE's, one per channel) are kept too.
    @Test func keepsMoreRepliesThanExpected() {
        var held = RedisReplies(expected: 1)
        for reply in Self.replies { held.append(reply) }
        #expect(Array(held) == Self.replies)
    }

    /// A copy taken before an append keeps what it held.
    @Test func aCopyIsNotChangedByAnAppend() {
        var held = RedisReplies(expected: 3)
        held.append(.integer(1))
        held.append(.integer(2))
        let copy = held
        held.append(.integer(3))
        #expect(Array(copy) == [.integer(1), .integer(2)])
        #expect(Array(held) == [.integer(1), .integer(2), .integer(3)])
    }
}

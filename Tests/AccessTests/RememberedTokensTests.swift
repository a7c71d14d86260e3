@testable import Access
import Testing

@Suite("The remembered-token table", .timeLimit(.minutes(1)))
struct RememberedTokensTests {
    func grant(until: Double) -> VerifiedToken {
        VerifiedToken(user: "u", canReadAll: false, isAdmin: false, acceptedUntil: until)
    }

    @Test func anExpiredTokenIsNotUsedAndLeavesTheTable() {
        let table = RememberedTokens(capacity: 3)
        table.remember("a", grant(until: 10), generation: 0)
        #expect(table.lookup("a", generation: 0, now: 5) != nil)
        #expect(table.lookup("a", generation: 0, now: 20) == nil)
        #expect(table.count == 0)
    }

    /// CONTRACT §8.9: a full table forgets its oldest token to admit a new one (first in, first out), with no scan
    /// of the table; it never holds more than its capacity, whatever mix of new, repeated and expired tokens comes.
    @Test func aFullTableForgetsTheOldestTokenFirst() {
        let table = RememberedTokens(capacity: 3)
        table.remember("a", grant(until: 100), generation: 0)
        table.remember("b", grant(until: 100), generation: 0)
        table.remember("c", grant(until: 100), generation: 0)
        table.remember("d", grant(until: 100), generation: 0)
        #expect(table.count == 3)
        #expect(table.lookup("a", generation: 0, now: 0) == nil)
        for kept in ["b", "c", "d"] { #expect(table.lookup(kept, generation: 0, now: 0) != nil) }
        table.remember("e", grant(until: 100), generation: 0)
        #expect(table.lookup("b", generation: 0, now: 0) == nil)
        #expect(table.count == 3)
    }

    @Test func neverOutgrowsItsCapacity() {
        let capacity = 64
        let table = RememberedTokens(capacity: capacity)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<5_000 {
            let token = "token-\(Int.random(in: 0..<200, using: &generator))"
            table.remember(token, grant(until: Double(round % 7 == 0 ? 0 : 1_000)), generation: 0)
            _ = table.lookup(token, generation: 0, now: 1)
            #expect(table.count <= capacity)
        }
        // The newest token is always held (until it expires).
        table.remember("newest", grant(until: 1_000), generation: 0)
        #expect(table.lookup("newest", generation: 0, now: 1) != nil)
    }

    @Test func onlyUnderTheKeysThatVerifiedIt() {
        let table = RememberedTokens()
        table.remember("t", grant(until: 100), generation: 1)
        #expect(table.lookup("t", generation: 2, now: 0) == nil)
        table.remember("t", grant(until: 100), generation: 2)
        table.forgetAll()
        #expect(table.lookup("t", generation: 2, now: 0) == nil)
    }

    /// A made-up token with a remembered one's length and last bytes (its slot) is not its grant: it misses the
    /// table, and the remembered token keeps its place. Once that token is verified and remembered too, each still
    /// answers only for itself (sharing the slot, the first may be forgotten and verified again).
    @Test func aTokenSharingTheSlotOfAnotherIsNotItsGrant() {
        let table = RememberedTokens()
        let tail = String(repeating: "s", count: 40)
        let real = "header.claims-of-kate." + tail
        let forged = "header.claims-of-mike." + tail
        #expect(real.utf8.count == forged.utf8.count)
        table.remember(real, VerifiedToken(user: "kate", canReadAll: false, isAdmin: false, acceptedUntil: 100), generation: 0)
        #expect(table.lookup(forged, generation: 0, now: 0) == nil)
        #expect(table.lookup(real, generation: 0, now: 0)?.user == "kate")
        table.remember(forged, VerifiedToken(user: "mike", canReadAll: false, isAdmin: false, acceptedUntil: 100), generation: 0)
        #expect(table.lookup(forged, generation: 0, now: 0)?.user == "mike")
        #expect(table.lookup(real, generation: 0, now: 0)?.user != "mike")
    }
}

extension RememberedTokens {
    /// A look-up of `token` as a header holding only it would present it.
    func lookup(_ token: String, generation: Int, now: Double) -> VerifiedToken? {
        lookup(BearerToken.Token(header: token, start: 0), generation: generation, now: now)
    }
}

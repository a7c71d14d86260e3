@testable import Access
import Testing

@Suite("The remembered-token table", .timeLimit(.minutes(1)))
struct RememberedTokensTests {
    func grant(until: Double) -> VerifiedToken {
        VerifiedToken(user: "u", canReadAll: false, isAdmin: false, acceptedUntil: until)
    }

    @Test func boundedAndExpiredFirst() {
        let table = RememberedTokens(capacity: 3)
        table.remember("a", grant(until: 10), generation: 0, now: 0)
        table.remember("b", grant(until: 100), generation: 0, now: 0)
        table.remember("c", grant(until: 100), generation: 0, now: 0)
        table.remember("d", grant(until: 100), generation: 0, now: 20)  // "a" has expired: it goes
        #expect(table.count == 3)
        #expect(table.lookup("a", generation: 0, now: 20) == nil)
        #expect(table.lookup("d", generation: 0, now: 20) != nil)
        table.remember("e", grant(until: 100), generation: 0, now: 20)  // none expired: one goes, still 3
        #expect(table.count == 3)
        #expect(table.lookup("e", generation: 0, now: 20) != nil)
    }

    @Test func onlyUnderTheKeysThatVerifiedIt() {
        let table = RememberedTokens()
        table.remember("t", grant(until: 100), generation: 1, now: 0)
        #expect(table.lookup("t", generation: 2, now: 0) == nil)
        table.remember("t", grant(until: 100), generation: 2, now: 0)
        table.forgetAll()
        #expect(table.lookup("t", generation: 2, now: 0) == nil)
    }
}

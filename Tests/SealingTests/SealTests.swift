import Testing

@testable import Sealing

/// AES-256-GCM in the Tink-like envelope: a fresh nonce per seal, the key's ID in front, and nothing opens that
/// was edited, relabelled, sealed for another context or under a key the ring does not hold.
@Suite(.timeLimit(.minutes(10))) struct SealTests {
    let old = try! KeyRing(keys: [("old", Array(repeating: 1, count: 32))])  // Valid by construction.
    let rotated = try! KeyRing(keys: [("new", Array(repeating: 2, count: 32)), ("old", Array(repeating: 1, count: 32))])  // Valid too.
    let plaintext = Array("the body: marker-7f3a".utf8) + [0, 255, 10, 13]
    let context = Array("unicache:key|metadata".utf8)

    @Test func roundTripsWithTheKeyItNames() throws {
        let envelope = try old.seal(plaintext, authenticating: context)
        #expect(KeyRing.keyID(of: envelope[...]) == "old")
        #expect(envelope.count == plaintext.count + old.overhead)
        #expect(try old.open(envelope[...], authenticating: context) == plaintext)
        // Rotation: a ring whose primary is new still opens what the old key sealed.
        #expect(try rotated.open(envelope[...], authenticating: context) == plaintext)
        #expect(KeyRing.keyID(of: try rotated.seal(plaintext, authenticating: context)[...]) == "new")
    }

    @Test func everySealHasAFreshNonceAndShowsNoPlaintext() throws {
        let a = try old.seal(plaintext, authenticating: context)
        let b = try old.seal(plaintext, authenticating: context)
        #expect(a != b)
        let nonceA = a[5..<17]
        let nonceB = b[5..<17]
        #expect(nonceA != nonceB)
        #expect(!a.contains(subsequence: Array("marker-7f3a".utf8)))
    }

    @Test func nothingEditedOrMisplacedOpens() throws {
        let envelope = try old.seal(plaintext, authenticating: context)
        for index in envelope.indices {
            var edited = envelope
            edited[index] ^= 0x01
            #expect(throws: (any Error).self, "byte \(index)") { try old.open(edited[...], authenticating: context) }
        }
        #expect(throws: SealingError.notAuthentic) { try old.open(envelope[...], authenticating: context + [0]) }
        #expect(throws: SealingError.notAuthentic) { try old.open(envelope.dropLast()[...], authenticating: context) }
        let newOnly = try KeyRing(keys: [("new", Array(repeating: 2, count: 32))])
        #expect(throws: SealingError.unknownKey("old")) { try newOnly.open(envelope[...], authenticating: context) }
        // Relabelled to a key the ring holds: the ID is authenticated, so it still does not open.
        let relabelled = Array(envelope[0..<2]) + Array("new".utf8) + Array(envelope[5...])
        #expect(throws: SealingError.notAuthentic) { try rotated.open(relabelled[...], authenticating: context) }
        #expect(throws: SealingError.malformed) { try old.open([9, 9, 9][...], authenticating: context) }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}

import Foundation
import Testing

@testable import Sealing

/// CONTRACT §9's key file: `ID:BASE64` lines, the first the primary, `#` comments and blank lines ignored; every
/// bad ring refused with an error that names the line, never a key.
@Suite(.timeLimit(.minutes(10))) struct KeyRingParsingTests {
    static let keyA = Data((0..<32).map { UInt8($0) }).base64EncodedString()
    static let keyB = Data((0..<32).map { UInt8(255 - $0) }).base64EncodedString()

    @Test func theFirstKeyIsThePrimaryAndCommentsAndBlankLinesAreIgnored() throws {
        let ring = try KeyRing.parse("# rotated 2026-11\n\n  k2026-11:\(Self.keyB)  \r\nk2026_10:\(Self.keyA)\n# old\n")
        #expect(ring.primary.id == "k2026-11")
        #expect(ring.keys.map(\.id) == ["k2026-11", "k2026_10"])
        #expect(ring.key(id: "k2026_10") != nil)
        #expect(ring.key(id: "nope") == nil)
        var dumped = ""
        dump(ring, to: &dumped)
        for shown in ["\(ring)", String(reflecting: ring), dumped] {
            #expect(!shown.contains(Self.keyA) && !shown.contains(Self.keyB))
            #expect(!shown.contains("SymmetricKey") && shown.contains("k2026-11"))
        }
    }

    @Test(arguments: [
        ("no colon here", KeyRingError.malformedLine(1)),
        ("bad id!:\(keyA)", .malformedLine(1)),
        (":\(keyA)", .malformedLine(1)),
        ("\(String(repeating: "x", count: 33)):\(keyA)", .malformedLine(1)),
        ("k1:", .malformedLine(1)),
        ("k1:\(keyA)\nk2:not*base64", .notBase64(line: 2, id: "k2")),
        ("k1:\(Data(repeating: 7, count: 16).base64EncodedString())", .wrongKeyLength(line: 1, id: "k1", bytes: 16)),
        ("k1:\(Data(repeating: 7, count: 33).base64EncodedString())", .wrongKeyLength(line: 1, id: "k1", bytes: 33)),
        ("k1:\(keyA)\n\nk1:\(keyB)", .duplicateID(line: 3, id: "k1")),
        ("# only a comment\n\n", .empty),
        ("", .empty),
    ])
    func everyBadRingIsRefused(_ text: String, _ expected: KeyRingError) {
        #expect(throws: expected) { try KeyRing.parse(text) }
    }

    @Test func errorsNeverShowKeyMaterial() {
        // A key pasted without its ID, a short key, a duplicate: the message names lines and IDs only.
        for text in [Self.keyA, "k1:\(Self.keyA.dropLast(8))", "k1:\(Self.keyA)\nk1:\(Self.keyB)", "k1 \(Self.keyA)"] {
            do {
                _ = try KeyRing.parse(text)
                Issue.record("accepted: a bad ring")
            } catch {
                #expect(!error.description.contains(Self.keyA.prefix(12)))
                #expect(!error.description.contains(Self.keyB.prefix(12)))
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test func programmaticRingsAreCheckedToo() {
        #expect(throws: KeyRingError.empty) { try KeyRing(keys: []) }
        #expect(throws: KeyRingError.wrongKeyLength(line: 1, id: "a", bytes: 3)) { try KeyRing(keys: [("a", [1, 2, 3])]) }
    }
}

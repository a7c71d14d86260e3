import Testing
@testable import HTTPRouting

@Suite(.timeLimit(.minutes(10))) struct RequestIDTests {
    @Test(arguments: ["a", "req-42", String(repeating: "x", count: 128), "!~{}[]<>\"\\", "0a1b2c3d-4e5f"])
    func visibleASCIIOfOneTo128CharactersIsAccepted(value: String) throws {
        #expect(try #require(RequestID(validating: value)).value == value)
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 129), "two words", "tab\there", "line\nbreak", "nul\u{0}", "é", "del\u{7F}",
    ])
    func anythingElseIsRefused(value: String) {
        #expect(RequestID(validating: value) == nil)
    }

    @Test func aClientsValidIDIsKeptAndAnInvalidOneReplaced() {
        let generator = RequestIDGenerator()
        // The header is found by name, in any case, as it arrives (`ArrivedHeadersTests` in MicroHTTPServerTests).
        #expect(generator.id(given: "from-client").value == "from-client")
        let replaced = generator.id(given: "has space")
        #expect(replaced.value != "has space")
        #expect(RequestID(validating: replaced.value) == replaced)
        #expect(generator.id(given: nil) != generator.id(given: nil))
    }

    /// A generated id is spelled out only when asked; its bytes, length and text agree at every digit count.
    @Test(arguments: [0, 1, 61, 62, 3_843, 3_844, 238_327, 238_328, 56_800_235_583, 56_800_235_584, UInt64.max])
    func aGeneratedIDsBytesLengthAndTextAgree(number: UInt64) throws {
        let prefix = Array("k3R9xQ0b".utf8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let id = RequestID(prefix: prefix, number: number)
        var expected = ""
        var rest = number
        repeat {
            expected.insert(Character(UnicodeScalar(RequestIDGenerator.digits[Int(rest % 62)])), at: expected.startIndex)
            rest /= 62
        } while rest > 0
        #expect(id.value == "k3R9xQ0b-" + expected)
        #expect(written(id) == Array(id.value.utf8))
        #expect(id.utf8Count == id.value.utf8.count)
        let given = try #require(RequestID(validating: id.value))
        #expect(given == id && given.hashValue == id.hashValue && given.utf8Count == id.utf8Count)
        #expect(written(given) == Array(id.value.utf8))
    }

    @Test func generatedIDsAreDistinctValidAndDifferPerGenerator() async {
        let generator = RequestIDGenerator()
        let ids = await withTaskGroup(of: [RequestID].self) { group in
            for _ in 0..<8 { group.addTask { (0..<1000).map { _ in generator.next() } } }
            return await group.reduce(into: [RequestID]()) { $0 += $1 }
        }
        #expect(Set(ids).count == 8000)
        #expect(ids.allSatisfy { RequestID(validating: $0.value) == $0 })
        // A random prefix per generator (per process): a restarted instance does not repeat its ids.
        let prefix = { (id: RequestID) in id.value.split(separator: "-").first.map(String.init) }
        #expect(prefix(RequestIDGenerator().next()) != prefix(generator.next()))
    }
}

/// What `write(to:)` puts down: exactly `utf8Count` bytes (the rest of the buffer untouched).
private func written(_ id: RequestID) -> [UInt8] {
    var buffer = [UInt8](repeating: 0xFF, count: id.utf8Count + 4)
    buffer.withUnsafeMutableBytes { id.write(to: $0.baseAddress!) }
    #expect(buffer.suffix(4) == [0xFF, 0xFF, 0xFF, 0xFF])
    return Array(buffer.prefix(id.utf8Count))
}

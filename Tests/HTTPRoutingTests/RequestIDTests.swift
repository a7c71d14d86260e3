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
        #expect(generator.id(for: ["X-Request-ID": "from-client"]).value == "from-client")
        #expect(generator.id(for: ["x-request-id": "lower-case-name"]).value == "lower-case-name")
        let replaced = generator.id(for: ["X-Request-ID": "has space"])
        #expect(replaced.value != "has space")
        #expect(RequestID(validating: replaced.value) == replaced)
        #expect(generator.id(for: [:]) != generator.id(for: [:]))
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

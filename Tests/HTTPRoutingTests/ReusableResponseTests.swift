import Testing
@testable import HTTPRouting

@Suite(.timeLimit(.minutes(10))) struct ReusableResponseTests {
    @Test func reusableCopiesShareOneMemoAndEachMarkingMakesANewOne() throws {
        let response = Response.json(#"{"a":1}"#).reusable()
        let copy = response
        let memo = try #require(response.memo)
        #expect(copy.memo === memo)
        let again = try #require(response.reusable().memo)
        #expect(again !== memo)
        #expect(Response.json(#"{"a":1}"#).memo == nil)
    }

    /// The form is made at the second send, once, and read back by every later one; it goes with the memo.
    @Test func theMemoMakesItsFormAtTheSecondSendOnceAndReleasesItWithTheLastCopy() throws {
        var response: Response? = Response.json(#"{"a":1}"#).reusable()
        var made = 0
        let make = { () -> Form? in
            made += 1
            return Form()
        }
        weak var released: Form?
        do {
            let memo = try #require(response?.memo)
            let first: Form? = memo.form(make)
            let before: Form? = memo.current(as: Form.self)
            #expect(first == nil && before == nil)
            let made: Form? = memo.form(make), again: Form? = memo.form(make)
            let form = try #require(made)
            #expect(again === form)
            #expect(memo.current(as: Form.self) === form)
            released = form
        }
        #expect(made == 1)
        #expect(released != nil)
        response = nil
        #expect(released == nil)
    }

    /// Threads sending the same response at once keep one form: the first one stored.
    @Test func threadsRacingKeepOneForm() async throws {
        let memo = try #require(Response.json(#"{"a":1}"#).reusable().memo)
        let make = { @Sendable () -> Form? in Form() }
        _ = memo.form(make)
        let forms = await withTaskGroup(of: ObjectIdentifier?.self) { group in
            for _ in 0..<64 { group.addTask { memo.form(make).map { ObjectIdentifier($0) } } }
            return await group.reduce(into: Set<ObjectIdentifier?>()) { $0.insert($1) }
        }
        #expect(forms.count == 1 && forms.first! != nil)
    }

    /// A server's stand-in form.
    final class Form: Sendable {}

    @Test func anyChangeDropsTheMemo() {
        let response = Response.json(#"{"a":1}"#).reusable()
        var status = response
        status.status = 201
        var headers = response
        headers.headers.add(name: "X-More", value: "1")
        var body = response
        body.body = []
        let dropped = [status, headers, body, Response.json(#"{"a":1}"#)].map { $0.memo == nil }
        #expect(response.memo != nil)
        #expect(dropped == [true, true, true, true])
        #expect(response == Response.json(#"{"a":1}"#))
    }

    @Test func clientAddressIsFormattedOnDemand() {
        let v4: [UInt8] = [127, 0, 0, 1]
        let v6: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        #expect(v4.withUnsafeBytes { ClientAddress(bytes: $0) }.description == "127.0.0.1")
        #expect(v6.withUnsafeBytes { ClientAddress(bytes: $0) }.description == "::1")
        #expect([UInt8](repeating: 1, count: 5).withUnsafeBytes { ClientAddress(bytes: $0) } == .unknown)
        #expect(ClientAddress.unknown.description == "")
    }
}

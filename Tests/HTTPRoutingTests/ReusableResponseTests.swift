import Testing
@testable import HTTPRouting

private final class Form {}

@Suite(.timeLimit(.minutes(10))) struct ReusableResponseTests {
    @Test func reusableCopiesShareOneSlotAndTheFirstFormWins() throws {
        let response = Response.json(#"{"a":1}"#).reusable()
        let copy = response
        let slot = try #require(response.wireForm)
        let copySlot = try #require(copy.wireForm)
        #expect(ObjectIdentifier(copySlot) == ObjectIdentifier(slot))
        #expect(slot.form == nil)
        let first = Form()
        let installed = ObjectIdentifier(slot.install(first))
        let again = ObjectIdentifier(slot.install(Form()))
        let seen = try #require(copySlot.form)
        #expect(installed == ObjectIdentifier(first))
        #expect(again == ObjectIdentifier(first))
        #expect(ObjectIdentifier(seen) == ObjectIdentifier(first))
    }

    @Test func aSlotTellsAFirstSendingFromLaterOnesAndStillTakesAForm() throws {
        let slot = try #require(Response.json(#"{"a":1}"#).reusable().wireForm)
        #expect(slot.sentBefore() == false)
        #expect(slot.form == nil)
        #expect(slot.sentBefore() == true)
        let form = Form()
        #expect(ObjectIdentifier(slot.install(form)) == ObjectIdentifier(form))
        #expect(slot.form.map(ObjectIdentifier.init) == ObjectIdentifier(form))
        #expect(slot.sentBefore() == true)
    }

    @Test func anyChangeDropsTheSlot() {
        let response = Response.json(#"{"a":1}"#).reusable()
        var status = response
        status.status = 201
        var headers = response
        headers.headers.add(name: "X-More", value: "1")
        var body = response
        body.body = []
        let dropped = [status, headers, body, Response.json(#"{"a":1}"#)].map { $0.wireForm == nil }
        #expect(response.wireForm != nil)
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

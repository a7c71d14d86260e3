import Testing
@testable import HTTPRouting

@Suite(.timeLimit(.minutes(10))) struct ReusableResponseTests {
    @Test func reusableCopiesShareOneIdentityAndEachMarkingNamesANewOne() throws {
        let response = Response.json(#"{"a":1}"#).reusable()
        let copy = response
        let identity = try #require(response.reuseIdentity)
        #expect(copy.reuseIdentity == identity)
        let again = try #require(response.reusable().reuseIdentity)
        #expect(again != identity)
        #expect(Response.json(#"{"a":1}"#).reuseIdentity == nil)
    }

    @Test func anyChangeDropsTheIdentity() {
        let response = Response.json(#"{"a":1}"#).reusable()
        var status = response
        status.status = 201
        var headers = response
        headers.headers.add(name: "X-More", value: "1")
        var body = response
        body.body = []
        let dropped = [status, headers, body, Response.json(#"{"a":1}"#)].map { $0.reuseIdentity == nil }
        #expect(response.reuseIdentity != nil)
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

import Testing

@testable import HTTPRouting

/// W3C Trace Context level 1's `traceparent`: what is accepted, what counts as absent, and what a fetch sends.
@Suite struct TraceParentTests {
    static let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func aValidHeaderIsReadFieldByField() throws {
        let parsed = try #require(TraceParent(parsing: Self.valid))
        #expect(parsed.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parsed.parentID == "00f067aa0ba902b7")
        #expect(parsed.flags == 1)
        #expect(parsed.header == Self.valid)
    }

    @Test(arguments: [
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",          // no flags
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",       // upper case
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",       // trace id all zeros
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",       // parent id all zeros
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // version ff
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", // version 00 is exactly 55 characters
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",      // a later version: a dash must follow
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // separator
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",       // not hex
        "0-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",
    ])
    func anInvalidHeaderIsAbsent(_ value: String) {
        #expect(TraceParent(parsing: value) == nil)
    }

    @Test func aLaterVersionIsReadByItsFirstFourFields() throws {
        let parsed = try #require(TraceParent(parsing: "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next"))
        #expect(parsed.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parsed.header == Self.valid)
    }

    @Test func aFetchContinuesAValidTraceWithANewSpanAndTheStateUnchanged() throws {
        let sent = TraceParent.outgoing(traceparent: Self.valid, tracestate: "congo=t61rcWkgMzE", requestID: "r-1")
        let parsed = try #require(TraceParent(parsing: sent.traceparent))
        #expect(parsed.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parsed.parentID != "00f067aa0ba902b7")
        #expect(parsed.flags == 1)
        #expect(sent.tracestate == "congo=t61rcWkgMzE")
    }

    @Test func withoutAValidTraceAFetchStartsTheRequestsOwnWithoutState() throws {
        let sent = TraceParent.outgoing(
            traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01", tracestate: "congo=x", requestID: "r-2")
        let parsed = try #require(TraceParent(parsing: sent.traceparent))
        #expect(parsed.traceID == TraceParent.traceID(forRequestID: "r-2"))
        #expect(parsed.flags == 0)
        #expect(sent.tracestate == nil)
        // The request's log line names the same trace.
        #expect(TraceParent.traceID(traceparent: nil, requestID: "r-2") == parsed.traceID)
        #expect(TraceParent.traceID(traceparent: Self.valid, requestID: "r-2") == "4bf92f3577b34da6a3ce929d0e0e4736")
        // No request: a random trace.
        let random = try #require(TraceParent(parsing: TraceParent.outgoing(traceparent: nil, tracestate: nil, requestID: nil).traceparent))
        #expect(random.traceID != parsed.traceID)
    }

    @Test func aRequestsTraceIDIsStableForItsIDAndDiffersBetweenIDs() {
        let ids = (0..<1000).map { TraceParent.traceID(forRequestID: "k3R9xQ0b-\($0)") }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { $0.utf8.count == 32 && TraceParent(parsing: "00-\($0)-00f067aa0ba902b7-00") != nil })
        #expect(TraceParent.traceID(forRequestID: "k3R9xQ0b-7") == ids[7])
    }
}

import Testing

@testable import HTTPRouting

/// W3C Trace Context level 1's `tracestate`: what is passed on to an upstream and what is dropped.
@Suite struct TraceStateTests {
    static let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test(arguments: [
        "congo=t61rcWkgMzE",
        "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
        "rojo=00f067aa0ba902b7 ,\tcongo=t61rcWkgMzE",             // spaces and tabs around members
        "a=1,,b=2, ,",                                            // empty members are allowed
        "0vendor_-*/=a value with spaces!~",                      // a key may start with a digit
        "tenant1@sys-tem=x",                                      // multi-tenant key
        "\(String(repeating: "k", count: 256))=v",                // the longest simple key
        "\(String(repeating: "t", count: 241))@\(String(repeating: "s", count: 14))=v",
        "k=\(String(repeating: "v", count: 256))",                // the longest value
        (0..<32).map { "k\($0)=v" }.joined(separator: ","),       // 32 members
    ])
    func aValidStateIsPassedOn(_ value: String) {
        #expect(TraceState.validated(value) == value)
        #expect(TraceParent.outgoing(traceparent: Self.traceparent, tracestate: value, requestID: nil).tracestate == value)
    }

    @Test(arguments: [
        "a=\u{7f}",                                               // a control character (the HTTP client refused it)
        "a=b\u{0}c", "a=é", "a=b\nc",                              // NUL, UTF-8, a line break
        "", " , ",                                                // no member
        "a", "=b", "a=",                                          // no =, no key, no value
        "A=b", "-a=b", "a.b=c",                                   // upper case, first character, a dot
        "a=b=c", "a=b ,c",                                        // = in a value; a member without =
        "\(String(repeating: "k", count: 257))=v",                // key too long
        "t@\(String(repeating: "s", count: 15))=v", "t@1s=v", "@s=v", "t@=v",
        "k=\(String(repeating: "v", count: 257))",                // value too long
        (0..<33).map { "k\($0)=v" }.joined(separator: ","),       // 33 members
        (0..<16).map { "key\($0)=\(String(repeating: "v", count: 30))" }.joined(separator: ","),  // over 512
    ])
    func anInvalidStateIsDroppedWhileTheTraceGoesOn(_ value: String) throws {
        #expect(TraceState.validated(value) == nil)
        let sent = TraceParent.outgoing(traceparent: Self.traceparent, tracestate: value, requestID: "r")
        #expect(sent.tracestate == nil)
        #expect(try #require(TraceParent(parsing: sent.traceparent)).traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
    }
}

/// W3C Trace Context level 1 (`traceparent`, `tracestate`): what a request's upstream fetch carries so that the
/// upstream's traces and logs join the caller's, and the trace id of the request's log line.
///
/// Nothing here runs on a cache hit: the headers are read when a request reaches the cache's load path, parsed when a
/// fetch is sent, and a request's trace id is made only for its debug log line.
public struct TraceParent: Sendable, Equatable {
    public static let headerName = "traceparent"
    public static let stateHeaderName = "tracestate"

    /// 32 lower-case hex digits, not all zero.
    public let traceID: String
    /// 16 lower-case hex digits, not all zero: the caller's span.
    public let parentID: String
    /// The trace flags (bit 0: sampled).
    public let flags: UInt8

    public init(traceID: String, parentID: String, flags: UInt8) {
        self.traceID = traceID
        self.parentID = parentID
        self.flags = flags
    }

    /// A `traceparent` value, or nil when it is not one: `00-{32 hex}-{16 hex}-{2 hex}` (lower case), neither id all
    /// zeros. A later version (`01`…`fe`) is read by its first four fields when what follows them starts with `-`;
    /// version `ff` is invalid. An invalid header counts as absent (the request starts a new trace).
    public init?(parsing value: String) {
        let bytes = Array(value.utf8)
        guard bytes.count >= 55, bytes[2] == 0x2D, bytes[35] == 0x2D, bytes[52] == 0x2D,
              let version = Self.hexByte(bytes[0], bytes[1]), version != 0xFF,
              let flags = Self.hexByte(bytes[53], bytes[54])
        else { return nil }
        if version == 0 {
            guard bytes.count == 55 else { return nil }
        } else if bytes.count > 55, bytes[55] != 0x2D {
            return nil
        }
        let trace = bytes[3..<35]
        let parent = bytes[36..<52]
        guard trace.allSatisfy(Self.isLowerHex), parent.allSatisfy(Self.isLowerHex),
              trace.contains(where: { $0 != 0x30 }), parent.contains(where: { $0 != 0x30 })
        else { return nil }
        self.init(traceID: String(decoding: trace, as: UTF8.self), parentID: String(decoding: parent, as: UTF8.self), flags: flags)
    }

    /// The header value, version 00.
    public var header: String { "00-\(traceID)-\(parentID)-\(Self.hex(UInt64(flags), digits: 2))" }

    /// What a call made on this trace's behalf carries: the same trace and flags, `spanID` as the parent.
    public func child(spanID: String) -> TraceParent {
        TraceParent(traceID: traceID, parentID: spanID, flags: flags)
    }

    /// The `traceparent` and `tracestate` an upstream fetch sends: a child of the incoming `traceparent` when that is
    /// valid, with its `tracestate` passed on unchanged when that is valid too (`TraceState`) and dropped otherwise;
    /// else a new trace (not sampled, no state) whose id is the request's (`TraceParent.traceID(forRequestID:)`) when
    /// the fetch has a request, else random.
    public static func outgoing(
        traceparent: String?, tracestate: String?, requestID: String?
    ) -> (traceparent: String, tracestate: String?) {
        let span = randomID(digits: 16)
        if let incoming = traceparent.flatMap(TraceParent.init(parsing:)) {
            return (incoming.child(spanID: span).header, tracestate.flatMap(TraceState.validated))
        }
        let trace = requestID.map(traceID(forRequestID:)) ?? randomID(digits: 32)
        return (TraceParent(traceID: trace, parentID: span, flags: 0).header, nil)
    }

    /// The trace id of a request: its valid `traceparent`'s, else the one made from its id.
    public static func traceID(traceparent: String?, requestID: String?) -> String? {
        if let incoming = traceparent.flatMap(TraceParent.init(parsing:)) { return incoming.traceID }
        return requestID.map(traceID(forRequestID:))
    }

    /// The trace id of a request that came without a valid `traceparent`: 128 bits hashed from its request id with
    /// the process's random hashing seed, so that its log line and every fetch it causes agree without anything
    /// stored per request (ids the service makes are unique; a client reusing its `X-Request-ID` reuses the trace).
    public static func traceID(forRequestID requestID: String) -> String {
        var high = Hasher()
        high.combine(0x7472_6163_6568 as UInt64)
        high.combine(requestID)
        var low = Hasher()
        low.combine(0x7472_6163_656C as UInt64)
        low.combine(requestID)
        let lowBits = UInt64(bitPattern: Int64(low.finalize()))
        return hex(UInt64(bitPattern: Int64(high.finalize())), digits: 16) + hex(lowBits == 0 ? 1 : lowBits, digits: 16)
    }

    /// `digits` random lower-case hex digits (16 or 32), not all zero.
    static func randomID(digits: Int) -> String {
        var random = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<(digits / 16) { text += hex(random.next() | 1, digits: 16) }
        return text
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.utf8.count)) + text
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func hexByte(_ high: UInt8, _ low: UInt8) -> UInt8? {
        guard isLowerHex(high), isLowerHex(low) else { return nil }
        func value(_ byte: UInt8) -> UInt8 { byte <= 0x39 ? byte - 0x30 : byte - 0x61 + 10 }
        return value(high) << 4 | value(low)
    }
}

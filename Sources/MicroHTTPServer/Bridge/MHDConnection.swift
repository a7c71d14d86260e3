import CMicroHTTPD
import CMicroHTTPDShim
#if canImport(Glibc)
import Glibc
#endif
import HTTPRouting
import Synchronization

/// The few libmicrohttpd connection operations we use, on an `MHD_Connection *`.
enum MHDConnection {
    static func suspend(_ connection: OpaquePointer) {
        MHD_suspend_connection(connection)
    }

    /// Queues `response` on `context`'s connection, with `X-Request-ID` when the request has an id. MHD sets
    /// `Content-Length` and omits the body for HEAD. A reusable response sent a second time is built into an MHD
    /// response once (`PreparedResponse`, kept in the response's memo) and then queued again as is, or, to carry a
    /// request id, as one of its copies with the id in place, lent to the request until MHD reports it complete
    /// (`RequestContext.returnLentResponse`); `close` answers are always built afresh.
    static func queue(_ response: Response, for context: RequestContext, close: Bool) -> MHD_Result {
        let status = UInt32(clamping: response.status)
        if !close, let memo = response.memo, let prepared = memo.form({ PreparedResponse(response) }) {
            guard let requestID = context.requestID else {
                return withExtendedLifetime(prepared) { MHD_queue_response(context.connection, status, prepared.pointer) }
            }
            guard let spare = prepared.lend(carrying: requestID) else { return .NO }
            let result = MHD_queue_response(context.connection, status, spare.copy)
            let lent = LentResponse(prepared: prepared, spare: spare)
            if result == .YES {
                context.lent = lent
            } else {
                lent.giveBack()
            }
            return result
        }
        guard let mhdResponse = make(response, close: close, requestID: context.requestID) else { return .NO }
        // MHD takes its own reference when queueing; ours is dropped after.
        defer { MHD_destroy_response(mhdResponse) }
        return MHD_queue_response(context.connection, status, mhdResponse)
    }

    /// An MHD response with `response`'s headers and a copy of its body.
    private static func make(_ response: Response, close: Bool, requestID: RequestID?) -> OpaquePointer? {
        let mhdResponse = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return nil }
        addHeaders(of: response, to: mhdResponse)
        if let requestID { add(RequestID.headerName, requestID.value, to: mhdResponse) }
        if close, response.headers["Connection"] == nil {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        return mhdResponse
    }

    /// `response`'s headers but `Content-Length` (MHD sets it).
    static func addHeaders(of response: Response, to mhdResponse: OpaquePointer) {
        for field in response.headers where !field.name.equalsIgnoringASCIICase("Content-Length") {
            add(field.name, field.value, to: mhdResponse)
        }
    }

    /// false when MHD refuses the header (no memory, or a line break in it).
    @discardableResult
    static func add(_ name: String, _ value: String, to mhdResponse: OpaquePointer) -> Bool {
        // withCString: a small Swift string is copied to the stack, not to a heap array.
        name.withCString { name in value.withCString { value in MHD_add_response_header(mhdResponse, name, value) } } == .YES
    }

    /// Every request header, in order, as MHD parsed them (with their lengths: no `strlen` of a long token), in
    /// one allocation (MHD counts them first: no iterator), and what the server itself asks of them, noted from the
    /// raw names on the way (a look-up by name afterwards compares Swift strings: ~300 instructions a name).
    static func headers(of connection: OpaquePointer) -> ArrivedHeaders {
        var arrived = ArrivedHeaders()
        arrived.headers.reserveCapacity(Int(MHD_get_connection_values_n(connection, .HEADER_KIND, nil, nil)))
        withUnsafeMutablePointer(to: &arrived) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, { cls, _, key, keySize, value, valueSize in
                guard let cls, let key else { return .YES }
                let arrived = cls.assumingMemoryBound(to: ArrivedHeaders.self)
                let name = String(arrivedBytes: UnsafeRawBufferPointer(start: key, count: keySize))
                let count = value.map { MHDConnection.trimmedCount($0, valueSize) } ?? 0
                let bytes = UnsafeRawBufferPointer(start: value, count: count)
                let text = String(arrivedBytes: bytes)
                arrived.pointee.note(key, keySize, value: text, bytes: bytes)
                arrived.pointee.headers.add(name: name, value: text)
                return .YES
            }, pointer)
        }
        return arrived
    }

    /// `count` less the spaces and tabs that end the value at `value`: a field value does not include the whitespace
    /// around it (RFC 9110, section 5.5). libmicrohttpd drops the leading whitespace and keeps the trailing, so
    /// `Authorization: Bearer TOKEN ` or `X-Request-ID: id ` would be read with the space.
    static func trimmedCount(_ value: UnsafePointer<CChar>, _ count: Int) -> Int {
        var count = count
        while count > 0, value[count - 1] == 0x20 || value[count - 1] == 0x09 { count -= 1 }
        return count
    }

    /// The client's address (formatted later, if ever).
    static func clientAddress(of connection: OpaquePointer) -> ClientAddress {
        var bytes: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            let count = unicache_mhd_client_address(connection, raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
            return count > 0 ? ClientAddress(bytes: UnsafeRawBufferPointer(rebasing: raw[..<Int(count)])) : .unknown
        }
    }
}

/// A reusable response's MHD form, built once: an MHD response (`pointer`, one reference ours) whose body
/// is a malloc'd copy freed by MHD when the last reference to it goes, so it may be queued as is on any
/// number of connections; and, for answers that carry a request id, copies of it with one more header
/// (`X-Request-ID`), each lent to one request at a time and kept for the next once MHD is done with it.
///
/// libmicrohttpd 0.9.75 cannot add a header to a response a connection holds, and building a copy per answer
/// (an MHD response and three allocations per header) was a third of a warm answer's instructions. A connection
/// reads a response's headers only while it builds the answer's header block, on its polling thread, between
/// `MHD_queue_response` and the request's completion (MHD_OPTION_NOTIFY_COMPLETED); after that it only drops
/// its reference (see `connection_reset` and `MHD_connection_close_` in connection.c). So a copy given back at
/// completion is no longer read, and its id header may be replaced for the next request, on any thread.
///
/// `@unchecked Sendable`: `pointer`, `body` and the template's header list are immutable after `init`; MHD's
/// reference counting is locked inside libmicrohttpd; a copy's header list is changed only by the one request it
/// is lent to (before queueing it) or while it sits in `spares`, which a lock guards.
final class PreparedResponse: @unchecked Sendable {
    let pointer: OpaquePointer
    private let body: UnsafeMutableRawPointer
    private let bodyCount: Int
    /// Copies no request holds, each with the id it last carried (our reference each).
    private let spares = Mutex<[Spare]>([])
    /// The copies kept for reuse at most; more concurrent answers make copies that are destroyed after use.
    static let sparesKept = 64

    /// nil when MHD cannot allocate the response.
    init?(_ response: Response) {
        // At least one byte: MHD refuses a NULL buffer, and malloc(0) may return one.
        guard let body = malloc(max(response.body.count, 1)) else { return nil }
        response.body.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { body.copyMemory(from: base, byteCount: bytes.count) }
        }
        guard let pointer = MHD_create_response_from_buffer_with_free_callback_cls(
            response.body.count, body, { free($0) }, body)
        else {
            free(body)
            return nil
        }
        MHDConnection.addHeaders(of: response, to: pointer)
        self.pointer = pointer
        self.body = body
        self.bodyCount = response.body.count
    }

    deinit {
        // No copy is lent (a lent copy holds `self`); the spares are only ours. The body goes with `pointer`'s
        // last reference.
        for spare in spares.withLock(announcingTo: self, { $0 }) { MHD_destroy_response(spare.copy) }
        MHD_destroy_response(pointer)
    }

    /// The copies kept for the next answers (none is lent).
    var spareCount: Int { spares.withLock(announcingTo: self) { $0.count } }

    /// A copy carrying `requestID` for one request, to be given back (`giveBack`) once MHD is done with it; nil
    /// when MHD cannot allocate one.
    func lend(carrying requestID: RequestID) -> Spare? {
        if let spare = spares.withLock(announcingTo: self, { $0.popLast() }) {
            if let lent = spare.carrying(requestID) { return lent }
            MHD_destroy_response(spare.copy)
        }
        return copy(adding: requestID).map { Spare(copy: $0, carrying: requestID) }
    }

    /// Takes back a copy `lend` gave once no connection reads it (its request completed, or queueing it failed).
    func giveBack(_ spare: Spare) {
        let kept = spares.withLock(announcingTo: self) { spares in
            guard spares.count < Self.sparesKept else { return false }
            spares.append(spare)
            return true
        }
        if !kept { MHD_destroy_response(spare.copy) }
    }

    /// A new MHD response (one reference, the caller's) with this one's headers, `X-Request-ID` and the same body
    /// bytes (valid while `self` lives: a lent copy's request holds `self`, a spare is destroyed in `deinit`).
    private func copy(adding requestID: RequestID) -> OpaquePointer? {
        guard let copy = MHD_create_response_from_buffer(bodyCount, body, .RESPMEM_PERSISTENT) else { return nil }
        _ = MHD_get_response_headers(pointer, { copy, _, name, value in
            guard let copy, let name, let value else { return .YES }
            _ = MHD_add_response_header(OpaquePointer(copy), name, value)
            return .YES
        }, UnsafeMutableRawPointer(copy))
        guard MHDConnection.add(RequestID.headerName, requestID.value, to: copy) else {
            MHD_destroy_response(copy)
            return nil
        }
        return copy
    }
}

/// A copy of a prepared response and the id it carries.
///
/// `@unchecked Sendable`: an MHD response only its holder references (a request it is lent to, or the spares
/// under their lock), handed between polling threads through that lock.
struct Spare: @unchecked Sendable {
    let copy: OpaquePointer
    let requestID: RequestID
    /// The id header's value as MHD holds it (`requestID`'s bytes), nil when MHD did not return it.
    private let value: UnsafePointer<CChar>?

    /// `copy`, whose id header carries `requestID`.
    init(copy: OpaquePointer, carrying requestID: RequestID) {
        self.init(copy: copy, requestID: requestID, value: MHD_get_response_header(copy, RequestID.cHeaderName))
    }

    private init(copy: OpaquePointer, requestID: RequestID, value: UnsafePointer<CChar>?) {
        self.copy = copy
        self.requestID = requestID
        self.value = value
    }

    /// This copy carrying `requestID` instead, or nil when MHD refuses the header (the copy is then the caller's
    /// to destroy). An id as long as the one it replaces (generated ids are, for 62ⁿ requests at a time) is
    /// written over the old one's bytes: libmicrohttpd 0.9.75 keeps a header's value in its own malloc'd copy,
    /// returned by `MHD_get_response_header` (kept in `value` until the header is replaced), and reads it with the
    /// length it measured when the header was added (`add_response_entry` in response.c, `add_user_headers` in
    /// connection.c), only while it builds an answer's header block, which no connection does with a copy no
    /// request holds. Any other id replaces the header (three frees, three allocations).
    func carrying(_ requestID: RequestID) -> Spare? {
        if let value, requestID.utf8Count == self.requestID.utf8Count {
            requestID.write(to: UnsafeMutableRawPointer(mutating: value))
            return Spare(copy: copy, requestID: requestID, value: value)
        }
        let removed = self.requestID.value.withCString { old in
            MHD_del_response_header(copy, RequestID.cHeaderName, old)
        }
        guard removed == .YES, MHDConnection.add(RequestID.headerName, requestID.value, to: copy) else { return nil }
        return Spare(copy: copy, carrying: requestID)
    }
}

/// A prepared response's copy lent to one request (it keeps the prepared response, and so the body, alive).
struct LentResponse {
    let prepared: PreparedResponse
    let spare: Spare

    func giveBack() { prepared.giveBack(spare) }
}

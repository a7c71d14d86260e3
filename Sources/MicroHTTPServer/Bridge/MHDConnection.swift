import CMicroHTTPD
import CMicroHTTPDShim
#if canImport(Glibc)
import Glibc
#endif
import HTTPRouting

/// The few libmicrohttpd connection operations we use, on an `MHD_Connection *`.
enum MHDConnection {
    static func suspend(_ connection: OpaquePointer) {
        MHD_suspend_connection(connection)
    }

    /// Queues `response`, with `X-Request-ID: requestID` when given. MHD sets `Content-Length` and omits the
    /// body for HEAD. A reusable response is built into an MHD response once (`PreparedResponse`) and then
    /// queued again as is, or, to carry a request id, copied into a fresh MHD response that shares its body
    /// bytes (as a C server would build one per request); `close` answers are always built afresh.
    static func queue(_ response: Response, on connection: OpaquePointer, close: Bool, requestID: RequestID?) -> MHD_Result {
        let mhdResponse: OpaquePointer?
        var owner: PreparedResponse?
        if !close, let slot = response.wireForm,
            let prepared = (slot.form ?? PreparedResponse(response).map(slot.install)) as? PreparedResponse {
            if let requestID {
                mhdResponse = prepared.copy(adding: requestID)
            } else {
                mhdResponse = prepared.pointer
                owner = prepared
            }
        } else {
            mhdResponse = make(response, close: close, requestID: requestID)
        }
        guard let mhdResponse else { return .NO }
        // MHD takes its own reference when queueing; ours is dropped after (a prepared one by `owner`).
        defer { if owner == nil { MHD_destroy_response(mhdResponse) } }
        return withExtendedLifetime(owner) {
            MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
        }
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

    static func add(_ name: String, _ value: String, to mhdResponse: OpaquePointer) {
        // withCString: a small Swift string is copied to the stack, not to a heap array.
        _ = name.withCString { name in value.withCString { value in MHD_add_response_header(mhdResponse, name, value) } }
    }

    /// Every request header, in order, as MHD parsed them.
    static func headers(of connection: OpaquePointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
                headers.pointee.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
                return .YES
            }, pointer)
        }
        return headers
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
/// number of connections, or copied per request with one more header (`copy(adding:)`).
///
/// `@unchecked Sendable`: immutable after `init`; MHD's response reference counting is locked inside
/// libmicrohttpd, and the template's header list is only read once built.
final class PreparedResponse: @unchecked Sendable {
    let pointer: OpaquePointer
    private let body: UnsafeMutableRawPointer
    private let bodyCount: Int

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
        MHD_destroy_response(pointer)
    }

    /// A new MHD response (one reference, the caller's) with this one's headers, `X-Request-ID` and the same
    /// body bytes, which it keeps alive by retaining `self` until MHD destroys it.
    func copy(adding requestID: RequestID) -> OpaquePointer? {
        let retained = Unmanaged.passRetained(self).toOpaque()
        guard let copy = MHD_create_response_from_buffer_with_free_callback_cls(
            bodyCount, body, { Unmanaged<PreparedResponse>.fromOpaque($0!).release() }, retained)
        else {
            Unmanaged<PreparedResponse>.fromOpaque(retained).release()
            return nil
        }
        _ = MHD_get_response_headers(pointer, { copy, _, name, value in
            guard let copy, let name, let value else { return .YES }
            _ = MHD_add_response_header(OpaquePointer(copy), name, value)
            return .YES
        }, UnsafeMutableRawPointer(copy))
        MHDConnection.add(RequestID.headerName, requestID.value, to: copy)
        return copy
    }
}

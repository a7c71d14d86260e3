import CMicroHTTPD
import CMicroHTTPDShim
import HTTPRouting

/// The few libmicrohttpd connection operations we use, on an `MHD_Connection *`.
enum MHDConnection {
    static func suspend(_ connection: OpaquePointer) {
        MHD_suspend_connection(connection)
    }

    /// Queues `response`. MHD sets `Content-Length` and omits the body for HEAD. A reusable response is
    /// built into an MHD response once and then queued again as is (MHD responses are reference counted and
    /// may be queued on any number of connections); `close` answers are always built afresh.
    static func queue(_ response: Response, on connection: OpaquePointer, close: Bool) -> MHD_Result {
        let prepared: PreparedResponse?
        if !close, let slot = response.wireForm {
            prepared = (slot.form ?? make(response).map(slot.install)) as? PreparedResponse
        } else {
            prepared = make(response, close: close)
        }
        guard let prepared else { return .NO }
        // `prepared` holds one reference until after queueing (MHD takes its own; a fresh one is dropped then).
        return withExtendedLifetime(prepared) {
            MHD_queue_response(connection, UInt32(clamping: response.status), prepared.pointer)
        }
    }

    /// An MHD response with `response`'s headers and a copy of its body.
    private static func make(_ response: Response, close: Bool = false) -> PreparedResponse? {
        let mhdResponse = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return nil }
        for field in response.headers where !field.name.equalsIgnoringASCIICase("Content-Length") {
            // withCString: a small Swift string is copied to the stack, not to a heap array.
            _ = field.name.withCString { name in
                field.value.withCString { value in MHD_add_response_header(mhdResponse, name, value) }
            }
        }
        if close, response.headers["Connection"] == nil {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        return PreparedResponse(pointer: mhdResponse)
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

/// An `MHD_Response *` we own one reference of; `MHD_destroy_response` drops it (MHD keeps the response
/// alive while connections still send it).
///
/// `@unchecked Sendable`: immutable; MHD's response reference counting is locked inside libmicrohttpd.
final class PreparedResponse: @unchecked Sendable {
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        MHD_destroy_response(pointer)
    }
}

import CMicroHTTPD
import CMicroHTTPDShim
import HTTPRouting

/// The few libmicrohttpd connection operations we use, on an `MHD_Connection *`.
enum MHDConnection {
    static func suspend(_ connection: OpaquePointer) {
        MHD_suspend_connection(connection)
    }

    /// Queues `response` (body copied into MHD). MHD sets `Content-Length` and omits the body for HEAD.
    static func queue(_ response: Response, on connection: OpaquePointer, close: Bool) -> MHD_Result {
        let mhdResponse = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for field in response.headers where !field.name.isContentLength {
            _ = MHD_add_response_header(mhdResponse, field.name, field.value)
        }
        if close, response.headers["Connection"] == nil {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        return MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
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

    /// The client's IP literal, or "" when MHD cannot tell.
    static func clientAddress(of connection: OpaquePointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            guard let base = buffer.baseAddress,
                  unicache_mhd_client_address(connection, base, buffer.count) == 0 else { return "" }
            return String(cString: base)
        }
    }
}

extension String {
    var isContentLength: Bool {
        utf8.count == 14 && lowercased() == "content-length"
    }
}

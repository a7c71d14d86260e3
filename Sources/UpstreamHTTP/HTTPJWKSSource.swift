import Access
import AsyncHTTPClient
import Clocks
import Foundation
import HTTPRouting
import NIOCore
import NIOPosix

/// A JWKS URL, fetched with the service's HTTP client (no redirects, bounded body and time). Errors name the URL
/// without its user information and query (either may carry a credential) and the cause: refused, timed out, TLS, an
/// HTTP status (CONTRACT §11.4); never anything of the document.
package struct HTTPJWKSSource: JWKSSource {
    /// A JWK Set larger than this is refused (a few dozen RSA keys fit in 64 KiB).
    static let maxBytes = 1 << 20

    let url: String
    let client: HTTPClient
    let timeout: Duration

    package init(url: String, client: HTTPClient, timeout: Duration) {
        self.url = url
        self.client = client
        self.timeout = timeout
    }

    package var isRemote: Bool { true }

    /// The URL as errors show it: scheme, host, port and path.
    package var origin: String? { Self.shown(url) }

    static func shown(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "the JWKS URL" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "the JWKS URL"
    }

    package func read() async throws(KeySetError) -> [UInt8]? {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/jwk-set+json, application/json")
        // Read as JSON as it comes: asked for unencoded, and refused with its reason when encoded anyway (a gzip
        // document read as JSON would be "no usable key", which sends an operator to the keys, not the server).
        request.headers.add(name: "Accept-Encoding", value: "identity")
        do {
            return try await client.exchange(request, within: timeout) { response in
                guard response.status.code == 200 else {
                    throw KeySetError("the JWKS URL answered HTTP \(response.status.code) \(response.status.reasonPhrase)")
                }
                guard !ContentCoding.isEncoded(response.headers["Content-Encoding"]) else {
                    throw KeySetError("the JWKS URL answered in a content coding it was not asked for (Content-Encoding)")
                }
                return Array(try await response.body.collect(upTo: Self.maxBytes).readableBytesView)
            }
        } catch let error as KeySetError {
            throw error
        } catch {
            throw KeySetError("the JWKS URL could not be fetched: \(Self.cause(of: error))")
        }
    }

    /// What went wrong, in words an operator acts on; never the error's full text (which can quote the URL).
    static func cause(of error: any Error) -> String {
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                return "timed out (no answer within --upstream-timeout)"
            case .remoteConnectionClosed:
                return "the server closed the connection"
            default:
                return "\(client)".prefix(80).description
            }
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ENETUNREACH, EHOSTUNREACH: return "host unreachable"
            case ETIMEDOUT: return "timed out"
            default: return "I/O error \(io.errnoCode) (\(String(cString: strerror(io.errnoCode))))"
            }
        }
        if error is NIOTooManyBytesError { return "the answer was larger than \(maxBytes) bytes" }
        let kind = String(describing: type(of: error))
        if kind.contains("SSL") || kind.contains("TLS") || kind.contains("BoringSSL") {
            return "TLS failed (\(kind): the certificate does not verify, or the server does not speak TLS)"
        }
        if error is NIOConnectionError || kind.contains("Resolution") || error is SocketAddressError {
            return "cannot connect (the host name does not resolve, or every address refused)"
        }
        return kind
    }
}

#if canImport(Glibc)
import Glibc
#endif

import HTTPRouting

/// Why the server could not start.
public enum MicroHTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host is neither an IP literal nor a resolvable name.
    case invalidHost(String)
    /// The port is outside 0...65535.
    case invalidPort(Int)
    /// The socket could not be bound or the daemon not started (`errno` of the failing step, 0 if none).
    case startFailed(host: String, port: Int, errno: Int32)
    /// `start()` after the server has stopped.
    case stopped
    /// TLS credentials were given and this libmicrohttpd is built without TLS.
    case tlsUnavailable

    public var description: String {
        switch self {
        case .invalidHost(let host): "cannot listen on \(host): not an IP address or a resolvable name"
        case .invalidPort(let port): "cannot listen on port \(port): ports are 0...65535"
        case .startFailed(let host, let port, let errno):
            "cannot listen on \(authority(host: host, port: port))"
                + (errno == 0 ? "" : ": \(String(cString: strerror(errno))) (errno \(errno))")
        case .stopped: "the server has stopped"
        case .tlsUnavailable: "cannot serve HTTPS: this libmicrohttpd is built without TLS"
        }
    }
}

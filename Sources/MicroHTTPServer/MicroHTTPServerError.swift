/// Why the server could not start.
public enum MicroHTTPServerError: Error, Sendable, Equatable {
    /// The host is neither an IP literal nor a resolvable name.
    case invalidHost(String)
    /// The port is outside 0...65535.
    case invalidPort(Int)
    /// libmicrohttpd could not bind or start (`errno` as it was).
    case startFailed(host: String, port: Int, errno: Int32)
    /// `start()` after the server has stopped.
    case stopped
}

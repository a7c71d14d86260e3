#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback TCP port bound by a socket that does not listen: connecting to it is refused, and while it is held no
/// other process or test can take it. (A port freed by stopping a server is not safe to test a refusal with: a
/// server that another test starts meanwhile may be given it.)
public final class ReservedPort: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws(RedisProcessError) {
        #if canImport(Glibc)
        let socketType = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
        #else
        let socketType = SOCK_STREAM
        #endif
        let descriptor = socket(AF_INET, socketType, 0)
        guard descriptor >= 0 else { throw RedisProcessError("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw RedisProcessError("cannot bind a loopback port: \(reason)")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Closes the socket; the port is free again. Call it once.
    public func release() {
        close(descriptor)
    }
}

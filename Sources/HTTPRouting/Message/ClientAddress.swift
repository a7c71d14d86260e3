#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client's IP address as raw bytes; formatted (`inet_ntop`) only when someone asks for the text.
public struct ClientAddress: Sendable, Equatable, CustomStringConvertible {
    public enum Family: Sendable, Equatable {
        case unknown, ipv4, ipv6
    }

    public let family: Family
    /// Network byte order: the first 4 bytes for IPv4, all 16 for IPv6.
    let bytes: (UInt64, UInt64)

    public static let unknown = ClientAddress(family: .unknown, bytes: (0, 0))

    /// `bytes`: 4 (IPv4) or 16 (IPv6) bytes in network order; any other count is `.unknown`.
    public init(bytes: UnsafeRawBufferPointer) {
        var storage: (UInt64, UInt64) = (0, 0)
        switch bytes.count {
        case 4, 16:
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            self.init(family: bytes.count == 4 ? .ipv4 : .ipv6, bytes: storage)
        default:
            self.init(family: .unknown, bytes: storage)
        }
    }

    private init(family: Family, bytes: (UInt64, UInt64)) {
        self.family = family
        self.bytes = bytes
    }

    public static func == (lhs: ClientAddress, rhs: ClientAddress) -> Bool {
        lhs.family == rhs.family && lhs.bytes == rhs.bytes
    }

    /// The IP literal (`127.0.0.1`, `::1`), or "" when unknown.
    public var description: String {
        let af: Int32
        switch family {
        case .unknown: return ""
        case .ipv4: af = AF_INET
        case .ipv6: af = AF_INET6
        }
        var storage = bytes
        return withUnsafeBytes(of: &storage) { raw in
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
                guard let base = buffer.baseAddress,
                      inet_ntop(af, raw.baseAddress, base, socklen_t(buffer.count)) != nil else { return "" }
                return String(cString: base)
            }
        }
    }
}

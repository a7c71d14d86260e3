import NIOCore

extension RedisEndpoint {
    /// A node's (or a Sentinel's) host and port.
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `host:port`, an IPv6 host in brackets.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }
}

extension RedisEndpoint.Address {
    /// Whether `host` is an IP address (v4 or v6) or a host name: dot-separated labels of ASCII letters, digits, `-`
    /// and `_` (container names have it), each 1–63 bytes and not starting or ending with `-`, 253 bytes in all, an
    /// optional final dot, the last label not all digits (RFC 1123 section 2.1: `999.1.1.1` or `1.2.3` is a mistyped
    /// address, not a name). What a Sentinel names is input: a host outside this grammar (escape codes, spaces, control
    /// characters) is refused, so that nothing raw reaches a log line, `/stats` or a problem.
    public static func isValidHost(_ host: String) -> Bool {
        if (try? SocketAddress(ipAddress: host, port: 0)) != nil { return true }
        var name = Substring(host)
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard let last = labels.last, !last.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return false }
        return labels.allSatisfy { label in
            let bytes = label.utf8
            guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-")
            else { return false }
            return bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default:
                    false
                }
            }
        }
    }

    /// Whether the host is loopback: `localhost`, an address in 127.0.0.0/8, or `::1`.
    public var isLoopback: Bool {
        if host.lowercased() == "localhost" || host.lowercased() == "localhost." { return true }
        guard let address = try? SocketAddress(ipAddress: host, port: 0) else { return false }
        switch address {
        case .v4(let v4): return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6: return address.ipAddress == "::1"
        default: return false
        }
    }

    /// A host and port a Sentinel (or a cluster node: `by`) named, checked: the host by `isValidHost`, the port from 1
    /// to 65535. The error shows what was named escaped (`escapedForLog`).
    static func named(host: String, port: Int?, by namer: String = "a Sentinel") throws(RedisError) -> RedisEndpoint.Address {
        guard isValidHost(host) else {
            throw .unexpectedReply("\(namer) named the host \(host.escapedForLog), which is neither a host name nor an IP address")
        }
        guard let port, (1...65535).contains(port) else {
            throw .unexpectedReply("\(namer) named \(host) with a port that is not a number from 1 to 65535")
        }
        return RedisEndpoint.Address(host: host, port: port)
    }
}

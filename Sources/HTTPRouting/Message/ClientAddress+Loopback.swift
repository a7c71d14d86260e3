extension ClientAddress {
    /// 127.0.0.0/8, `::1`, or an IPv4-mapped loopback address (`::ffff:127.x.y.z`).
    public var isLoopback: Bool {
        var storage = bytes
        return withUnsafeBytes(of: &storage) { raw in
            switch family {
            case .unknown:
                return false
            case .ipv4:
                return raw[0] == 127
            case .ipv6:
                let zeroes = raw[0..<10].allSatisfy { $0 == 0 }
                if zeroes, raw[10] == 0xFF, raw[11] == 0xFF { return raw[12] == 127 }
                return zeroes && raw[10] == 0 && raw[11] == 0 && raw[12..<15].allSatisfy { $0 == 0 } && raw[15] == 1
            }
        }
    }
}

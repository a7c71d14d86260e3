/// Redis Cluster's key slots: CRC16 (XMODEM: polynomial 0x1021, initial value 0) of the key modulo 16384, or of its
/// hash tag, the text between the first `{` and the first `}` after it when that text is not empty, so that keys
/// sharing a tag (`{alice}.entries`, `{alice}.log`) live in one slot.
public enum RedisHashSlot {
    /// The slots of a cluster, 0 to 16383.
    public static let count = 16384

    /// The slot `key` lives in.
    public static func of(_ key: some Collection<UInt8>) -> Int {
        key.withContiguousStorageIfAvailable(of(bytes:)) ?? Array(key).withUnsafeBufferPointer(of(bytes:))
    }

    /// The slot of a key's bytes: a shared hit's, so not through the generic `Collection` path, which another module
    /// calls unspecialized (about 9,000 instructions a key, a tenth of a shared hit's on a cluster; callgrind).
    public static func of(_ key: [UInt8]) -> Int {
        key.withUnsafeBufferPointer(of(bytes:))
    }

    /// The slot of a text key (its UTF-8).
    public static func of(_ key: String) -> Int {
        var key = key
        return key.withUTF8(of(bytes:))
    }

    static func of(bytes: UnsafeBufferPointer<UInt8>) -> Int {
        Int(crc16(hashed(bytes)) & 0x3FFF)
    }

    /// The part of `key` that is hashed: its hash tag, else the whole key.
    static func hashed<Key: Collection<UInt8>>(_ key: Key) -> Key.SubSequence {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")) else { return key[...] }
        let afterOpen = key.index(after: open)
        guard let close = key[afterOpen...].firstIndex(of: UInt8(ascii: "}")), close != afterOpen else { return key[...] }
        return key[afterOpen..<close]
    }

    static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    /// The CRC of each byte value, computed once.
    private static let table: [UInt16] = (0..<256).map { value in
        var crc = UInt16(value) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}

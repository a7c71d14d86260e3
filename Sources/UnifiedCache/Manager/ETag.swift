/// Strong entity tags derived from a body's bytes.
public enum ETag {
    /// A quoted strong validator: two 64-bit FNV-1a hashes (different offsets) of the body and its length, in hex.
    public static func make(for body: [UInt8]) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in body {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second &+ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second ^= second >> 29
        }
        return "\"" + hex(first) + hex(second) + String(body.count, radix: 16) + "\""
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

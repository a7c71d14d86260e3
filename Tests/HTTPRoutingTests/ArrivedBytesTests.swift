import HTTPRouting
import Testing

/// `String(arrivedBytes:)` is `String(decoding:as: UTF8.self)` with a fast path for short ASCII strings: the same
/// string for every input, the fast path's edges and the repairs included.
struct ArrivedBytesTests {
    static let inputs: [[UInt8]] = [
        [],
        Array("1".utf8),
        Array("Host".utf8),
        Array("127.0.0.1:19611".utf8),  // 15 bytes: the largest small string
        Array("127.0.0.1:196110".utf8),  // 16 bytes: a heap string
        Array("/v1/users/alice/subscription".utf8),
        Array("café".utf8),  // short, past ASCII: validated
        [0x61, 0xFF, 0x62],  // short, not UTF-8: repaired
        [0x61, 0xC3],  // a sequence cut short
        Array(repeating: 0x41, count: 40) + [0xE2, 0x82],  // long, cut short
        [0x61, 0x00, 0x62],  // a NUL byte is kept
    ]

    @Test(arguments: inputs)
    func isTheDecodedString(_ bytes: [UInt8]) {
        let arrived = bytes.withUnsafeBytes { String(arrivedBytes: $0) }
        let decoded = String(decoding: bytes, as: UTF8.self)
        #expect(arrived == decoded)
        #expect(Array(arrived.utf8) == Array(decoded.utf8))
    }

    @Test func readsOnlyTheBytesGiven() {
        let bytes = Array("Host: example".utf8)
        let name = bytes.withUnsafeBytes { String(arrivedBytes: UnsafeRawBufferPointer(rebasing: $0[..<4])) }
        #expect(name == "Host")
        #expect(String(arrivedBytes: UnsafeRawBufferPointer(start: nil, count: 0)) == "")
    }
}

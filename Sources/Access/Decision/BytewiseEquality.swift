#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The equality of every security decision (CONTRACT §8.9): byte for byte over UTF-8. Swift's `String ==` is
/// Unicode canonical equivalence, under which `"\u{212A}ate"` (KELVIN SIGN) equals `"Kate"`.
enum BytewiseEquality {
    static func equal(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        // `memcmp` when both are contiguous (native strings and their substrings are): `elementsEqual` steps
        // through two UTF-8 views a byte at a time, ~650 instructions for a five-letter user on every request.
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in equal(x, y) }
        }
        return (fast ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    static func equal(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
    }

    /// False when `a` is absent (a claim that is missing or not a string matches nothing).
    static func matches(_ a: String?, _ b: some StringProtocol) -> Bool {
        guard let a else { return false }
        return equal(a, b)
    }
}

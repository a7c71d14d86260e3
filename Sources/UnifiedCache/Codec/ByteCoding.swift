import Foundation

/// Appends little-endian integers, dates and length-prefixed strings.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    mutating func date(_ date: Date) { integer(date.timeIntervalSinceReferenceDate.bitPattern) }

    mutating func string(_ string: String) {
        integer(UInt32(string.utf8.count))
        bytes += string.utf8
    }
}

/// Reads what `ByteWriter` wrote; every read is bounds-checked.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func take(_ count: Int, orThrow error: EntryFormatError) throws(EntryFormatError) -> ArraySlice<UInt8> {
        guard let slice = take(count) else { throw error }
        return slice
    }

    mutating func integer<T: FixedWidthInteger>() throws(EntryFormatError) -> T {
        let slice = try take(MemoryLayout<T>.size, orThrow: .malformedHeader)
        return T(littleEndian: slice.withUnsafeBytes { $0.loadUnaligned(as: T.self) })
    }

    mutating func date() throws(EntryFormatError) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try integer() as UInt64))
    }

    mutating func string() throws(EntryFormatError) -> String {
        let length = Int(try integer() as UInt32)
        let slice = try take(length, orThrow: .malformedHeader)
        // `String(decoding:)` is the stdlib's specialised UTF-8 path (`String(validating:as:)` is generic: its
        // metadata look-ups made a header's five strings ~3,700 instructions dearer per disk and shared hit); a
        // repair means the bytes were not valid UTF-8, seen as a difference from them.
        var string = String(decoding: slice, as: UTF8.self)
        let same = string.withUTF8 { decoded in
            slice.withUnsafeBufferPointer { raw in
                // Force unwraps: both buffers hold the same count of bytes, more than none.
                decoded.count == raw.count && (raw.isEmpty || memcmp(decoded.baseAddress!, raw.baseAddress!, raw.count) == 0)
            }
        }
        guard same else { throw .malformedHeader }
        return string
    }
}

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
    /// A string the caller expects among those read (the entry's key): read as that very string, not a copy.
    private let expected: String?

    init(_ bytes: [UInt8], expecting expected: String? = nil) {
        self.bytes = bytes
        self.expected = expected
    }

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
        // The expected key and the usual content type are not copied (a disk or shared hit read three strings anew).
        if let expected, Self.bytes(of: expected, equal: slice) { return expected }
        if Self.bytes(of: Self.json, equal: slice) { return Self.json }
        // `String(decoding:)` is the stdlib's specialised UTF-8 path (`String(validating:as:)` is generic: its
        // metadata look-ups made a header's five strings ~3,700 instructions dearer per disk and shared hit); a
        // repair means the bytes were not valid UTF-8, seen as a difference from them.
        let string = String(decoding: slice, as: UTF8.self)
        guard Self.bytes(of: string, equal: slice) else { throw .malformedHeader }
        return string
    }

    private static let json = "application/json"

    /// Whether `string`'s UTF-8 is `slice`'s bytes (false for a string without contiguous UTF-8, which a native
    /// string, a literal and a decoded one always have).
    private static func bytes(of string: String, equal slice: ArraySlice<UInt8>) -> Bool {
        string.utf8.count == slice.count
            && string.utf8.withContiguousStorageIfAvailable { utf8 in
                slice.withUnsafeBufferPointer { raw in
                    // Force unwraps: both buffers hold the same count of bytes, more than none.
                    raw.isEmpty || memcmp(utf8.baseAddress!, raw.baseAddress!, raw.count) == 0
                }
            } == true
    }
}

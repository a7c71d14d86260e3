extension String {
    /// `String(decoding: bytes, as: UTF8.self)`, with the stdlib's fast path for a short ASCII string: up to 15 bytes
    /// that are all ASCII become a small string without a pass of UTF-8 validation (the flag is read off the string's
    /// two words), where `String(decoding:)` validates every string first (about 60 instructions more for a header's
    /// name or value). Longer strings, which that path would validate after copying them, and bytes past ASCII are
    /// decoded and repaired as `String(decoding:)` does.
    @inlinable
    public init(arrivedBytes bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= 15 else {
            self.init(decoding: bytes, as: UTF8.self)
            return
        }
        self.init(unsafeUninitializedCapacity: bytes.count) { buffer in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: bytes)
            return bytes.count
        }
    }
}

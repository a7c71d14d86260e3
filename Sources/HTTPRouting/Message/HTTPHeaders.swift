/// Ordered header fields with case-insensitive lookup by name.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]
    /// One bit per name present (`bit(for:)`, from the name's length and first letter): a look-up of a name whose
    /// bit is clear answers at once. A request is asked for a handful of names it mostly does not carry
    /// (`Authorization`, `X-Request-ID`, `Cache-Control`, `If-None-Match`, `Content-Length`, `Transfer-Encoding`), and
    /// each miss used to compare every field's name. Derived from `fields`; not part of equality.
    private var names: UInt64 = 0

    public init() {
        fields = []
    }

    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
        names = fields.reduce(0) { $0 | Self.bit(for: $1.name) }
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields == rhs.fields
    }

    /// The name's bit in `names`: its length and its first letter in lower case (names are ASCII tokens).
    static func bit(for name: String) -> UInt64 {
        let utf8 = name.utf8
        guard let first = utf8.first else { return 1 }
        return 1 &<< (UInt64(truncatingIfNeeded: utf8.count &* 31 &+ Int(first | 0x20)) & 63)
    }

    /// Whether a field of that name may be present: `false` means it is not.
    public func mayContain(_ name: String) -> Bool {
        names & Self.bit(for: name) != 0
    }

    /// The bits of a set of names (`mayContain(anyOf:)`), made once by a caller that asks for the same names on every
    /// request: a name's bit costs a look at its first byte through the string's UTF-8 view.
    public static func bits(of names: String...) -> UInt64 {
        names.reduce(0) { $0 | bit(for: $1) }
    }

    /// Whether a field of any of the names whose `bits(of:)` these are may be present: `false` means none is.
    public func mayContain(anyOf bits: UInt64) -> Bool {
        names & bits != 0
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Room for `count` fields without growing (a parser that knows how many come).
    public mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// The first value of the named field, if any.
    public subscript(name: String) -> String? {
        guard mayContain(name) else { return nil }
        // `firstIndex(where:)` lends each field to the test (a `for` loop copied it: four reference counts a field).
        return fields.firstIndex { $0.name.equalsIgnoringASCIICase(name) }.map { fields[$0].value }
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        guard mayContain(name) else { return [] }
        return fields.lazy.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        self[name] != nil
    }

    /// Appends a field, keeping any existing ones of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
        names |= Self.bit(for: name)
    }

    /// Replaces the first field of that name (dropping the others) or appends it.
    package mutating func replaceOrAdd(name: String, value: String) {
        guard mayContain(name), let first = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) else {
            add(name: name, value: value)
            return
        }
        fields[first].value = value
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if fields[index].name.equalsIgnoringASCIICase(name) {
                fields.remove(at: index)
            } else {
                index = fields.index(after: index)
            }
        }
    }

    public mutating func remove(name: String) {
        guard mayContain(name) else { return }
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
        names = fields.reduce(0) { $0 | Self.bit(for: $1.name) }
    }
}

extension String {
    /// ASCII case-insensitive equality without allocating (header names are ASCII tokens). Both strings are read in
    /// place, not copied: `withUTF8` is mutating, and the copies it needed cost two reference counts each.
    @inlinable
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let inPlace = utf8.withContiguousStorageIfAvailable { left in
            other.utf8.withContiguousStorageIfAvailable { right in
                for index in left.indices where left[index] != right[index] {
                    if left[index].asciiLowercased != right[index].asciiLowercased { return false }
                }
                return true
            }
        }
        return (inPlace ?? nil) ?? utf8.elementsEqual(other.utf8) { $0.asciiLowercased == $1.asciiLowercased }
    }
}

extension UInt8 {
    @usableFromInline
    var asciiLowercased: UInt8 {
        (self >= 0x41 && self <= 0x5A) ? self | 0x20 : self
    }
}

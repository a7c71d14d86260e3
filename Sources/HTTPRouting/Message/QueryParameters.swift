/// Ordered, percent-decoded query parameters (`+` is a space). Repeated names keep every value.
public struct QueryParameters: Sendable, Equatable, Sequence {
    /// A name and its value, the same pair as a header field.
    public typealias Item = HTTPHeaders.Field

    public private(set) var items: [Item]

    /// The most parameters a request may carry: more is 414 (no route takes more than a few; libmicrohttpd, which
    /// would spend a record of its connection memory on each, never sees them: the shim hides the query from it).
    package static let maximumCount = 64

    public init(_ items: [Item] = []) {
        self.items = items
    }

    /// Parses a raw query string (without the `?`). Throws `PercentDecodingError` on a bad escape.
    public init(parsing query: Substring) throws(PercentDecodingError) {
        var query = query
        self = try query.withUTF8 { bytes in
            Result { () throws(PercentDecodingError) in try QueryParameters(parsing: bytes[...]) }
        }.get()
    }

    /// The parameters of a raw query string (non-empty `&`-separated parts), counted without decoding them.
    static func count(in query: Slice<UnsafeBufferPointer<UInt8>>) -> Int {
        query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).count
    }

    init(parsing query: Slice<UnsafeBufferPointer<UInt8>>) throws(PercentDecodingError) {
        var items: [Item] = []
        for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let name: String
            let value: String
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                name = try PercentDecoding.decode(pair[pair.startIndex..<equals], plusAsSpace: true)
                value = try PercentDecoding.decode(pair[pair.index(after: equals)...], plusAsSpace: true)
            } else {
                name = try PercentDecoding.decode(pair, plusAsSpace: true)
                value = ""
            }
            items.append(Item(name: name, value: value))
        }
        self.items = items
    }

    public var isEmpty: Bool { items.isEmpty }

    public func makeIterator() -> IndexingIterator<[Item]> {
        items.makeIterator()
    }

    /// The first value for `name`, if present.
    public func first(_ name: String) -> String? {
        items.first { $0.name == name }?.value
    }

    /// Every value for `name`, in order.
    public func all(_ name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        items.contains { $0.name == name }
    }
}

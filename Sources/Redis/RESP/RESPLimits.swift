/// Bounds on what one reply may hold: a reply over a limit is a protocol violation, never unbounded memory. The
/// bounds are the whole reply's, nested arrays included: a peer that streams `*1000000` elements of 64 MiB each is
/// refused once the reply's bytes (or elements) so far pass the bound, not after a million elements each within one.
package struct RESPLimits: Sendable, Hashable {
    /// Most bytes one whole reply may take on the wire, every nested element and framing byte counted.
    package var maxReplyBytes: Int
    /// Most elements one whole reply may hold: the counts of all its arrays, nested ones included, added up.
    package var maxElements: Int
    /// Deepest nesting of arrays.
    public var maxDepth: Int
    /// Longest `+`, `-` or `:` line (bytes, without CRLF).
    package var maxLineLength: Int

    public init(
        maxReplyBytes: Int = 64 << 20, maxElements: Int = 1 << 20, maxDepth: Int = 16, maxLineLength: Int = 64 << 10
    ) {
        self.maxReplyBytes = maxReplyBytes
        self.maxElements = maxElements
        self.maxDepth = maxDepth
        self.maxLineLength = maxLineLength
    }

    /// Throws when a reply would end past `end` bytes from its start.
    func checkBytes(through end: Int) throws(RedisError) {
        guard end <= maxReplyBytes else {
            throw .protocolViolation("a reply of more than \(maxReplyBytes) bytes (the limit of one whole reply)")
        }
    }

    /// Throws when a reply would hold more than `count` elements.
    func checkElements(_ count: Int) throws(RedisError) {
        guard count <= maxElements else {
            throw .protocolViolation("a reply of more than \(maxElements) elements (the limit of one whole reply)")
        }
    }

    /// Throws when an array opens `depth` levels deep (the outermost at 1).
    func checkDepth(_ depth: Int) throws(RedisError) {
        guard depth <= maxDepth else { throw .protocolViolation("arrays nested deeper than \(maxDepth)") }
    }
}

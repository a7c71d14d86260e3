import Crypto

/// The keys values at rest are sealed with (CONTRACT §9): the first is the primary, which seals every new
/// value; the others still open what they sealed, until a rekey has moved everything to the primary.
///
/// Its descriptions name key IDs only: no byte of a key ever reaches a log line, an error or a document.
public struct KeyRing: Sendable, CustomStringConvertible, CustomReflectable {
    /// One key of the ring: its ID (stored beside every value it seals) and its 256-bit secret.
    public struct Key: Sendable, CustomStringConvertible, CustomReflectable {
        public let id: String
        let secret: SymmetricKey
        /// The ID as it is written before each sealed value.
        let idBytes: [UInt8]

        init(id: String, secret: SymmetricKey) {
            self.id = id
            self.secret = secret
            idBytes = Array(id.utf8)
        }

        public var description: String { "key \(id)" }
        /// `dump` and debuggers see the ID only.
        public var customMirror: Mirror { Mirror(self, children: ["id": id], displayStyle: .struct) }
    }

    /// Every key in the file's order; never empty.
    public let keys: [Key]
    private let byID: [String: Key]

    /// A ring of `keys`, the first the primary. Each secret must be 32 bytes with an ID of `[A-Za-z0-9_-]{1,32}`,
    /// no ID twice; the file parser checks this with line numbers, this initializer for programmatic rings.
    public init(keys: [(id: String, secret: [UInt8])]) throws(KeyRingError) {
        guard !keys.isEmpty else { throw .empty }
        var seen: [String: Key] = [:]
        var ordered: [Key] = []
        for (index, key) in keys.enumerated() {
            guard Self.isValidID(key.id) else { throw .malformedLine(index + 1) }
            guard key.secret.count == Self.keyLength else {
                throw .wrongKeyLength(line: index + 1, id: key.id, bytes: key.secret.count)
            }
            guard seen[key.id] == nil else { throw .duplicateID(line: index + 1, id: key.id) }
            let made = Key(id: key.id, secret: SymmetricKey(data: key.secret))
            seen[key.id] = made
            ordered.append(made)
        }
        self.keys = ordered
        byID = seen
    }

    /// The key new values are sealed with.
    public var primary: Key { keys[0] }  // `init` refuses an empty ring.

    public func key(id: String) -> Key? { byID[id] }

    public var description: String { "KeyRing(primary: \(primary.id), keys: \(keys.map(\.id).joined(separator: ", ")))" }
    public var customMirror: Mirror { Mirror(self, children: ["keys": keys.map(\.id)], displayStyle: .struct) }

    /// AES-256: 32 bytes.
    package static let keyLength = 32

    /// `[A-Za-z0-9_-]{1,32}`.
    package static func isValidID(_ id: some StringProtocol) -> Bool {
        (1...32).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }
}

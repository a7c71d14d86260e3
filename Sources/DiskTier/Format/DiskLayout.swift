import Crypto

/// Where entries live under the data dir, nginx-style `levels=1:2`: `<root>/a/bc/<64 hex>` where
/// the name is the SHA-256 of the full key. No input ever becomes part of a path.
struct DiskLayout: Sendable {
    /// Prefix of every temporary file; the rest is `<instance token>-<sequence>`.
    static let temporaryPrefix = ".tmp-"
    private static let hexDigits = Array("0123456789abcdef".utf8)

    let root: String

    init(root: String) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    /// The file name for `key`: lowercase hex of its SHA-256.
    static func fileName(for key: String) -> String {
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Array(key.utf8)) {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The folder holding a file name: `<root>/a/bc`.
    func directory(forFileName name: String) -> String {
        "\(root)/\(name.prefix(1))/\(name.dropFirst().prefix(2))"
    }

    func path(for key: String) -> String {
        let name = Self.fileName(for: key)
        return "\(directory(forFileName: name))/\(name)"
    }

    /// Whether a name found in a leaf folder is a well-formed entry file name.
    static func isEntryFileName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { hexDigits.contains($0) }
    }

    /// The first-level folder names, `0` … `f`.
    static let firstLevel: [String] = hexDigits.map { String(UnicodeScalar($0)) }
}

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
        String(unsafeUninitializedCapacity: 64) { hex in
            writeHexDigest(of: key, into: UnsafeMutableBufferPointer(rebasing: hex[...]))
            return 64
        }
    }

    /// The folder holding a file name: `<root>/a/bc`.
    func directory(forFileName name: String) -> String {
        "\(root)/\(name.prefix(1))/\(name.dropFirst().prefix(2))"
    }

    /// `<root>/a/bc/<64 hex>`, written in one buffer (a disk hit computes it on every read).
    func path(for key: String) -> String {
        let rootLength = root.utf8.count
        return String(unsafeUninitializedCapacity: rootLength + 70) { path in
            _ = path.initialize(from: root.utf8)
            let slash = UInt8(ascii: "/")
            let name = UnsafeMutableBufferPointer(rebasing: path[(rootLength + 6)...])
            Self.writeHexDigest(of: key, into: name)
            path[rootLength] = slash
            path[rootLength + 1] = name[0]
            path[rootLength + 2] = slash
            path[rootLength + 3] = name[1]
            path[rootLength + 4] = name[2]
            path[rootLength + 5] = slash
            return rootLength + 70
        }
    }

    /// Writes the 64 lowercase hex digits of `key`'s SHA-256 at the start of `out`.
    private static func writeHexDigest(of key: String, into out: UnsafeMutableBufferPointer<UInt8>) {
        var key = key
        var hasher = SHA256()
        key.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        let digest = hasher.finalize()
        var at = 0
        for byte in digest {
            out[at] = hexDigits[Int(byte >> 4)]
            out[at + 1] = hexDigits[Int(byte & 0x0f)]
            at += 2
        }
    }

    /// Whether a name found in a leaf folder is a well-formed entry file name.
    static func isEntryFileName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { hexDigits.contains($0) }
    }

    /// The first-level folder names, `0` … `f`.
    static let firstLevel: [String] = hexDigits.map { String(UnicodeScalar($0)) }
}

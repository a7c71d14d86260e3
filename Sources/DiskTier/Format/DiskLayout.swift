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
        var name = name
        return name.withUTF8 { name in
            String(unsafeUninitializedCapacity: root.utf8.count + Self.levelBytes) { out in
                writeDirectory(forFileName: name, into: out)
            }
        }
    }

    /// `<root>/a/bc/<64 hex>`, written in one buffer (a disk hit computes it on every read).
    func path(for key: String) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { name in
            Self.writeHexDigest(of: key, into: name)
            return String(unsafeUninitializedCapacity: root.utf8.count + Self.levelBytes + 65) { out in
                var at = writeDirectory(forFileName: UnsafeBufferPointer(name), into: out)
                out[at] = UInt8(ascii: "/")
                at += 1
                for byte in name {
                    out[at] = byte
                    at += 1
                }
                return at
            }
        }
    }

    /// What the levels add to the root: `/a/bc`.
    private static let levelBytes = 5

    /// Writes `<root>/a/bc` for the file name `name` at the start of `out`; returns the bytes written. The one
    /// place that spells the levels.
    private func writeDirectory(forFileName name: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>)
        -> Int
    {
        let at = out.initialize(from: root.utf8).1
        let slash = UInt8(ascii: "/")
        (out[at], out[at + 1], out[at + 2], out[at + 3], out[at + 4]) = (slash, name[0], slash, name[1], name[2])
        return at + Self.levelBytes
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

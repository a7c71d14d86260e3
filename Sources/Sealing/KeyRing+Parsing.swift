import Foundation

extension KeyRing {
    /// Parses a key file's text: `ID:BASE64` lines, the first key the primary; blank lines and lines starting
    /// with `#` are ignored; spaces around a line are trimmed.
    public static func parse(_ text: String) throws(KeyRingError) -> KeyRing {
        var keys: [(id: String, secret: [UInt8])] = []
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else { throw .malformedLine(number) }
            let id = String(line[..<colon])
            let encoded = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard isValidID(id), !encoded.isEmpty else { throw .malformedLine(number) }
            guard let secret = Data(base64Encoded: encoded) else { throw .notBase64(line: number, id: id) }
            guard secret.count == keyLength else { throw .wrongKeyLength(line: number, id: id, bytes: secret.count) }
            guard !keys.contains(where: { $0.id == id }) else { throw .duplicateID(line: number, id: id) }
            keys.append((id, Array(secret)))
        }
        return try KeyRing(keys: keys)
    }
}

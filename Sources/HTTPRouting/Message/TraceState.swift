/// W3C Trace Context level 1's `tracestate`: a request's value is passed on to the upstream only when it is one, else
/// it is dropped (the `traceparent` still goes). A value the grammar refuses may hold bytes an HTTP client refuses
/// to send (`a=\x7f`), and a fetch that fails for that fails for that request alone.
///
/// The grammar: list members separated by `,` with optional spaces or tabs around them (empty members are allowed
/// and ignored), each `key=value`, where a key is `[a-z0-9][_0-9a-z-*/]{0,255}` or `tenant@system` (tenant
/// `[a-z0-9][_0-9a-z-*/]{0,240}`, system `[a-z][_0-9a-z-*/]{0,13}`) and a value is 1–256 characters of printable
/// ASCII (0x20–0x7E) other than `,` and `=`, not ending in a space; at most 32 members and 512 characters in all.
package enum TraceState {
    package static let maximumMembers = 32
    public static let maximumLength = 512

    /// `value` when it is a valid `tracestate` with at least one member, else nil.
    package static func validated(_ value: String) -> String? {
        isValid(value) ? value : nil
    }

    /// Whether `value` is a valid `tracestate` with at least one member.
    package static func isValid(_ value: String) -> Bool {
        guard value.utf8.count <= maximumLength else { return false }
        var members = 0
        for member in Array(value.utf8).split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard let start = member.firstIndex(where: { !isOWS($0) }), let last = member.lastIndex(where: { !isOWS($0) })
            else { continue }
            guard isMember(member[start...last]) else { return false }
            members += 1
            guard members <= maximumMembers else { return false }
        }
        return members > 0
    }

    private static func isMember(_ member: ArraySlice<UInt8>) -> Bool {
        guard let equals = member.firstIndex(of: UInt8(ascii: "=")) else { return false }
        return isKey(member[..<equals]) && isValue(member[(equals + 1)...])
    }

    private static func isKey(_ key: ArraySlice<UInt8>) -> Bool {
        guard let at = key.firstIndex(of: UInt8(ascii: "@")) else {
            return isKeyPart(key, first: isLowerAlphaOrDigit, maximum: 256)
        }
        let tenant = key[..<at]
        let system = key[(at + 1)...]
        return isKeyPart(tenant, first: isLowerAlphaOrDigit, maximum: 241)
            && isKeyPart(system, first: { (0x61...0x7A).contains($0) }, maximum: 14)
    }

    /// `first` then 0 to `maximum - 1` of `[_0-9a-z-*/]`.
    private static func isKeyPart(_ part: ArraySlice<UInt8>, first: (UInt8) -> Bool, maximum: Int) -> Bool {
        guard let head = part.first, first(head), part.count <= maximum else { return false }
        return part.dropFirst().allSatisfy { byte in
            isLowerAlphaOrDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "/")
        }
    }

    private static func isValue(_ value: ArraySlice<UInt8>) -> Bool {
        guard (1...256).contains(value.count), value.last != 0x20 else { return false }
        return value.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }

    private static func isLowerAlphaOrDigit(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
    }

    private static func isOWS(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }
}

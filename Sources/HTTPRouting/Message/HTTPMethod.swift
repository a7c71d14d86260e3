/// An HTTP request method. The common ones are constants; any other token is kept as sent.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// The method from a C string, without building a new string for the common ones.
    public init(cString: UnsafePointer<CChar>) {
        // GET first, by its four bytes (with the NUL): nearly every request is one.
        if cString[0] == 0x47, cString[1] == 0x45, cString[2] == 0x54, cString[3] == 0 {
            self = .get
            return
        }
        for common in Self.common where Self.equals(cString, common.rawValue) {
            self = common
            return
        }
        self.init(rawValue: String(cString: cString))
    }

    private static let common: [HTTPMethod] = [.head, .post, .put, .delete]

    private static func equals(_ cString: UnsafePointer<CChar>, _ name: String) -> Bool {
        var index = 0
        for byte in name.utf8 {
            guard UInt8(bitPattern: cString[index]) == byte else { return false }  // stops at the NUL too
            index += 1
        }
        return cString[index] == 0
    }

    public static let get = HTTPMethod("GET")
    public static let head = HTTPMethod("HEAD")
    public static let post = HTTPMethod("POST")
    public static let put = HTTPMethod("PUT")
    public static let delete = HTTPMethod("DELETE")
    package static let patch = HTTPMethod("PATCH")
    public static let options = HTTPMethod("OPTIONS")
}

/// The bearer token of the admin endpoints (CONTRACT §4). Never printed: descriptions and mirrors redact it.
public struct AdminSettings: Sendable, Equatable {
    /// `nil` when unset: the admin endpoints then answer 403.
    public var token: String?

    public init(token: String? = nil) {
        self.token = token
    }

    public var isTokenSet: Bool { token != nil }
}

extension AdminSettings: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "AdminSettings(token: \(isTokenSet ? "<redacted>" : "unset"))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["token": isTokenSet ? "<redacted>" : "unset"], displayStyle: .struct)
    }
}

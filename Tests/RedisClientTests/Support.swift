import RedisClient

extension Array where Element == UInt8 {
    init(_ text: String) {
        self = Array(text.utf8)
    }
}

/// The message of a `.unavailable` error.
func reason(_ error: RedisError?) -> String? {
    guard case .unavailable(let reason)? = error else { return nil }
    return reason
}

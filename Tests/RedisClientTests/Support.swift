import RedisClient

extension Array where Element == UInt8 {
    init(_ text: String) {
        self = Array(text.utf8)
    }
}

/// The reason of an error (`.unavailable` or `.refused`).
func reason(_ error: RedisError?) -> String? {
    error?.reason
}

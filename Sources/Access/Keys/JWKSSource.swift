/// Where a JWK Set comes from: a file (read again when it changed) or a URL (fetched; UnicacheApp brings the
/// HTTP client). Access itself fetches nothing.
public protocol JWKSSource: Sendable {
    /// A URL is fetched again every `--jwt-jwks-refresh` and for an unknown `kid`; a file is checked at most
    /// once a second for a change.
    var isRemote: Bool { get }
    /// The document, or `nil` when it is known not to have changed since the last document returned.
    /// The error's description names no credential and no key material.
    func read() async throws(KeySetError) -> [UInt8]?
    /// Where the keys come from, as an error may name it (a URL without its credentials or query); `nil` when the
    /// errors name it themselves (a file).
    var origin: String? { get }
}

extension JWKSSource {
    public var origin: String? { nil }
}

import Access
import AsyncHTTPClient
import Foundation

/// A JWKS URL, fetched with the service's HTTP client (no redirects, bounded body and time). Errors never
/// name the URL (it may carry a credential in its query) or anything of the document.
struct HTTPJWKSSource: JWKSSource {
    /// A JWK Set larger than this is refused (a few dozen RSA keys fit in 64 KiB).
    static let maxBytes = 1 << 20

    let url: String
    let client: HTTPClient
    let timeout: Duration

    var isRemote: Bool { true }

    func read() async throws(KeySetError) -> [UInt8]? {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/jwk-set+json, application/json")
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(UpstreamClient.nanoseconds(timeout)))
            guard response.status.code == 200 else {
                throw KeySetError("the JWKS URL answered HTTP \(response.status.code)")
            }
            return Array(try await response.body.collect(upTo: Self.maxBytes).readableBytesView)
        } catch let error as KeySetError {
            throw error
        } catch {
            throw KeySetError("the JWKS URL could not be fetched (\(Self.describe(error)))")
        }
    }

    /// The error's type and kind, never its full text (which can quote the URL).
    private static func describe(_ error: any Error) -> String {
        if let client = error as? HTTPClientError { return "\(client)".prefix(80).description }
        return String(describing: type(of: error))
    }
}

import Access
import AccessTestSupport
import HTTPRouting
import Logging

let loopback = address([127, 0, 0, 1])
let remotePeer = address([198, 18, 0, 2])

/// An access control over `source` (a JWKS in memory unless given) with the test clock.
func makeAccess(
    _ mode: AccessSettings.Mode = .jwt, keys: [SigningKey] = SigningKey.all, source: (any JWKSSource)? = nil,
    clock: TestClock = TestClock(), adminToken: String? = nil, issuer: String? = nil, audience: String? = nil,
    userClaim: String = "sub"
) async throws -> AccessControl {
    try await AccessControl(
        settings: AccessSettings(mode: mode, jwks: "test", issuer: issuer, audience: audience, userClaim: userClaim),
        source: source ?? MemoryJWKSSource(jwks(keys.map { $0.jwk() })), adminToken: adminToken, wallClock: clock, clock: clock.monotonic,
        logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
}

/// The gate's answer, waited for: `nil` when the request is let through.
func decide(
    _ access: AccessControl, _ method: HTTPMethod = .get, _ target: String = "/v1/users/alice/subscription",
    token: String? = nil, peer: ClientAddress = remotePeer
) async -> Response? {
    var headers = HTTPHeaders()
    if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
    switch access.decide(method: method, target: target, headers: headers, clientAddress: peer) {
    case .pass: return nil
    case .answer(let response): return response
    case .wait(let work): return await work()
    }
}

extension Response {
    var challenge: String { headers["WWW-Authenticate"] ?? "" }
    var text: String { String(decoding: body, as: UTF8.self) }
}

func address(_ bytes: [UInt8]) -> ClientAddress {
    bytes.withUnsafeBytes { ClientAddress(bytes: $0) }
}

/// A GET of `target`.
func decide(_ access: AccessControl, _ target: String, token: String? = nil, peer: ClientAddress = remotePeer) async -> Response? {
    await decide(access, .get, target, token: token, peer: peer)
}

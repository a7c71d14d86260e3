// The cost of the access decision (CONTRACT §8.6), printed by `make bench-http`: a first verification per
// algorithm (a token never seen, so a signature check) and a remembered one (the same token again: a table
// look-up), both through `AccessControl.decide` as the router's gate calls it, on one thread.
import Clocks
import Access
import AccessTestSupport
import Foundation
import HTTPRouting
import Logging

/// The JWKS as a URL would serve it (never due for a refresh during the run).
struct FixedJWKS: JWKSSource {
    let document: [UInt8]
    var isRemote: Bool { true }
    func read() async throws(KeySetError) -> [UInt8]? { document }
}

let firstRuns = Int(ProcessInfo.processInfo.environment["FIRST_RUNS"] ?? "") ?? 300
let rememberedRuns = Int(ProcessInfo.processInfo.environment["REMEMBERED_RUNS"] ?? "") ?? 300_000
let peer = [UInt8]([127, 0, 0, 1]).withUnsafeBytes { ClientAddress(bytes: $0) }
let target = "/v1/users/alice/subscription"
let now = Date().timeIntervalSince1970

func headers(_ token: String) -> HTTPHeaders {
    var headers = HTTPHeaders()
    headers.add(name: "Host", value: "127.0.0.1")
    headers.add(name: "Authorization", value: "Bearer \(token)")
    return headers
}

/// Microseconds per call of `decide` over `requests`; every one must be let through.
func measure(_ access: AccessControl, _ requests: [HTTPHeaders]) -> Double {
    let start = ContinuousClock.now
    for request in requests {
        guard case .pass = access.decide(method: .get, target: target, headers: request, clientAddress: peer) else {
            FileHandle.standardError.write(Data("access-bench: a token was refused\n".utf8))
            exit(1)
        }
    }
    let elapsed = ContinuousClock.now - start
    return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(requests.count)
}

print("access decision, \(firstRuns) first verifications and \(rememberedRuns) remembered ones per algorithm (one thread)")
print("algorithm   first (us)   remembered (us)")
for key in SigningKey.all {
    let access = try await AccessControl(
        settings: AccessSettings(mode: .jwt, jwks: "bench"), source: FixedJWKS(document: jwks([key.jwk()])),
        adminToken: nil, wallClock: SystemWallClock(), clock: ContinuousClock(),
        logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() }))
    let fresh = (0..<firstRuns).map { index in
        headers(TokenMinter.mint(key, claims: ["sub": "alice", "exp": now + 3600, "iat": now, "jti": "\(index)"]))
    }
    let first = measure(access, fresh)
    let reused = Array(repeating: fresh[0], count: rememberedRuns)
    let remembered = measure(access, reused)
    print(key.alg.padding(toLength: 10, withPad: " ", startingAt: 0) + String(format: " %11.1f %17.3f", first, remembered))
}

import Clocks
import Foundation
import HTTPRouting
import Logging

/// Who may read what (CONTRACT §8): one decision per request, before the cache or an upstream sees it.
/// Install `accessCheck` as the router's access check; admin handlers ask `grantsAdmin` for a bearer JWT with the admin scope.
public final class AccessControl: Sendable {
    public let mode: AccessSettings.Mode
    let verificationKeys: VerificationKeys?
    let verifier: TokenVerifier
    let remembered: RememberedTokens
    let statistics: AccessStatistics
    let adminToken: [UInt8]?
    /// Token times (`exp`, `nbf`, `iat`) are compared with this clock's seconds since the Unix epoch.
    let wallClock: any WallClock

    /// A failed start (`--auth jwt` with an unreadable JWKS or one without a usable key), naming the flag.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// - Parameters:
    ///   - source: the JWKS for `--auth jwt` (required there, ignored otherwise); read once before this returns.
    ///   - adminToken: `--admin-token`, which admin requests may present instead of an admin JWT.
    ///   - wallClock: the time tokens are checked at.
    ///   - clock: the monotonic time a URL JWKS's refresh timer and its refetches for an unknown `kid` run on (a file's
    ///     checks are spaced by the requests' own wall-clock readings).
    public init(
        settings: AccessSettings, source: (any JWKSSource)?, adminToken: String?,
        wallClock: any WallClock, clock: any Clock<Duration>, logger: Logger
    ) async throws(StartError) {
        let statistics = AccessStatistics()
        let remembered = RememberedTokens()
        self.mode = settings.mode
        self.statistics = statistics
        self.remembered = remembered
        self.wallClock = wallClock
        self.adminToken = adminToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.verifier = TokenVerifier(
            issuer: settings.issuer, audience: settings.audience, userClaim: settings.userClaim,
            leeway: settings.leeway.seconds)
        guard settings.mode == .jwt else {
            self.verificationKeys = nil
            return
        }
        guard let source else { throw StartError(description: "--jwt-jwks: --auth jwt needs a JWKS file or URL") }
        do {
            self.verificationKeys = try await VerificationKeys(
                source: source, refresh: settings.jwksRefresh, clock: Elapsed(clock),
                now: wallClock.now().timeIntervalSince1970, statistics: statistics, logger: logger,
                changed: { remembered.forgetAll() })
        } catch {
            let origin = source.origin.map { "\($0): " } ?? ""
            throw StartError(description: "--jwt-jwks: \(origin)\(error.description)")
        }
    }

    /// The router's access check.
    public var accessCheck: AccessCheck {
        { [self] method, target, headers, clientAddress in
            decide(method: method, target: target, headers: headers, clientAddress: clientAddress)
        }
    }

    public func decide(method: HTTPMethod, target: String, headers: HTTPHeaders, clientAddress: ClientAddress) -> Admission {
        let scope = RequestScope(method: method, target: target)
        if case .open = scope { return .pass }
        let credential = BearerToken.credential(headers)
        // In every mode (CONTRACT §8.9): which of two credentials counts would be a guess.
        if case .repeated = credential { return .answer(BearerToken.repeatedProblem()) }
        switch mode {
        case .none:
            return allow()
        case .protected:
            return clientAddress.isLoopback ? allow() : deny(.protected, Denial.protected())
        case .jwt:
            return decideBearer(scope, credential: credential)
        }
    }

    /// Whether the request's bearer token is a valid JWT with the scope `unicache:admin` (never in other modes).
    public func grantsAdmin(_ headers: HTTPHeaders) -> Bool {
        guard mode == .jwt, let verificationKeys, case .token(let token) = BearerToken.credential(headers),
              case .success(let verified) = grant(token, keys: verificationKeys, now: now)
        else { return false }
        return verified.isAdmin
    }

    public var snapshot: AccessSnapshot {
        AccessSnapshot(
            mode: mode, allowed: statistics.allowed.load(ordering: .relaxed),
            denied: Dictionary(uniqueKeysWithValues: DenialReason.allCases.map { ($0, statistics.denied($0)) }),
            keys: verificationKeys?.keys.count ?? 0, keyRefreshes: statistics.keyRefreshes.load(ordering: .relaxed),
            keyErrors: statistics.keyErrors.load(ordering: .relaxed))
    }

    /// Seconds since the Unix epoch, the unit of a token's times.
    var now: Double { wallClock.now().timeIntervalSince1970 }

    func allow() -> Admission {
        statistics.allowed.add(1, ordering: .relaxed)
        return .pass
    }

    func deny(_ reason: DenialReason, _ response: Response) -> Admission {
        statistics.deny(reason)
        return .answer(response)
    }
}

/// Test hooks (`package`: for this package's tests, not API).
extension AccessControl {
    /// Tokens remembered now.
    package var rememberedCount: Int { remembered.count }

    /// Signature checks made so far: a remembered token makes none.
    package var signatureChecks: Int { statistics.signatureChecks.load(ordering: .relaxed) }
}

import HTTPRouting

extension AccessControl {
    /// `--auth jwt`: the admin token (admin requests only), else a remembered or freshly verified JWT.
    func decideBearer(_ scope: RequestScope, credential: consuming BearerToken.Credential) -> Admission {
        guard case .token(let token) = consume credential else { return deny(.missing, Denial.missing()) }
        if case .admin = scope, let adminToken, AdminToken.equal(Array(token.text.utf8), adminToken) { return allow() }
        guard let verificationKeys else { return deny(.invalid, Denial.invalid("no keys")) }
        let now = self.now
        if verificationKeys.claimFileCheck(now: now) {
            // A file: this request looks (a stat, a read when it changed) before it is decided.
            return .wait { [self] in
                await verificationKeys.reload()
                return await answer(
                    decideToken(token, scope: scope, keys: verificationKeys, now: self.now, mayRefetch: true))
            }
        }
        return decideToken(token, scope: scope, keys: verificationKeys, now: now, mayRefetch: true)
    }

    /// Verifies (or remembers) the token and authorizes the scope; an unknown `kid` waits for one refetch of a
    /// URL JWKS when one is allowed.
    private func decideToken(
        _ token: BearerToken.Token, scope: RequestScope, keys: VerificationKeys, now: Double, mayRefetch: Bool
    ) -> Admission {
        switch grant(token, keys: keys, now: now) {
        case .success(let verified):
            return authorize(verified, scope: scope)
        case .failure(.unknownKey):
            if mayRefetch, keys.claimUnknownKeyFetch() {
                return .wait { [self] in
                    await keys.reload()
                    return await answer(decideToken(token, scope: scope, keys: keys, now: self.now, mayRefetch: false))
                }
            }
            return deny(.invalid, Denial.invalid("unknown key (kid)"))
        case .failure(.expired):
            return deny(.expired, Denial.invalid("token expired"))
        case .failure(.invalid(let description)):
            return deny(.invalid, Denial.invalid(description))
        }
    }

    /// A grant remembered under the keys in force (no lock on them), else a verification with them (remembered when
    /// it succeeds).
    func grant(
        _ token: BearerToken.Token, keys: VerificationKeys, now: Double
    ) -> Result<VerifiedToken, TokenRejection> {
        if let remembered = remembered.lookup(token, generation: keys.generation, now: now) { return .success(remembered) }
        let keys = keys.keys
        let text = String(token.text)
        statistics.signatureChecks.add(1, ordering: .relaxed)
        let result = verifier.verify(text, keys: keys, now: now)
        if case .success(let verified) = result {
            remembered.remember(text, verified, generation: keys.generation)
        }
        return result
    }

    private func authorize(_ verified: VerifiedToken, scope: RequestScope) -> Admission {
        switch scope {
        case .open:
            return .pass
        case .read(let user):
            guard verified.canReadAll || user.isNamed(verified.user) else {
                return deny(.forbidden, Denial.forbidden("another user's data", scope: VerifiedToken.readScope))
            }
            return allow()
        case .admin:
            guard verified.isAdmin else {
                return deny(.forbidden, Denial.forbidden("admin endpoints", scope: VerifiedToken.adminScope))
            }
            return allow()
        }
    }

    private func answer(_ admission: Admission) async -> Response? {
        switch admission {
        case .pass: return nil
        case .answer(let response): return response
        case .wait(let decide): return await decide()
        }
    }
}

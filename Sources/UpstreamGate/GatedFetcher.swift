import Clocks
import UnifiedCache

/// A fetcher behind its domain's upstream gate: every fetch is let through (or refused) by the gate and reports
/// its outcome to it.
public struct GatedFetcher: Fetcher {
    public let base: any Fetcher
    public let gate: UpstreamGate

    public init(_ base: any Fetcher, gate: UpstreamGate) {
        self.base = base
        self.gate = gate
    }

    public func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let pass = try await gate.admit(background: request.background, user: request.user)
        do throws(FetchError) {
            let value = try await base.fetch(request)
            gate.finish(pass, .answered)
            return value
        } catch {
            switch error {
            case .notFound: gate.finish(pass, .answered)
            case .rateLimited(let retryAfter):
                gate.finish(pass, .rateLimited(retryAfter: retryAfter))
                // The client is told the pause the gate keeps (60 s without a `Retry-After`, at most an hour), not
                // the upstream's number: no request reaches the upstream before then, and all may after it.
                throw .rateLimited(retryAfter: Int(gate.pause(retryAfter: retryAfter).wholeSecondsRoundedUp))
            case .unavailable, .unreachable, .timeout, .refused: gate.finish(pass, .failed)
            case .invalidRequest: gate.finish(pass, .notSent)
            }
            throw error
        }
    }
}

import Foundation
import HTTPRouting
import UnifiedCache

/// The response headers of a read-through answer (CONTRACT §3): X-Cache, Cache-Status (RFC 9211), Age, ETag,
/// Cache-Control, X-Cache-Tier; and 304 for a matching `If-None-Match`.
enum CacheHeaders {
    static func xCache(_ outcome: CacheOutcome) -> String {
        switch outcome {
        case .hit: return "HIT"
        case .miss: return "MISS"
        case .coalesced: return "COALESCED"
        case .stale: return "STALE"
        case .refresh: return "REFRESH"
        }
    }

    /// `refreshThrottled`: a forced refresh answered from a recent copy (CONTRACT §15.1).
    static func cacheStatus(
        _ outcome: CacheOutcome, stored: Bool, tier: CacheTier? = nil, refreshThrottled: Bool = false
    ) -> String {
        let storedPart = stored ? "; stored" : ""
        if refreshThrottled, outcome == .hit { return "unicache; hit; detail=refresh-throttled" }
        switch outcome {
        case .hit: return tier == .shared ? "unicache; hit; detail=shared" : "unicache; hit"
        case .miss: return "unicache; fwd=miss" + storedPart
        case .coalesced: return "unicache; fwd=miss; collapsed" + storedPart
        case .refresh: return "unicache; fwd=request" + storedPart
        case .stale(.upstreamError): return "unicache; hit; fwd=stale; detail=upstream-error"
        case .stale(.backgroundRefresh): return "unicache; hit; fwd=stale; detail=background-refresh"
        case .stale(.onlyIfCached): return "unicache; hit; detail=only-if-cached"
        case .stale(.upstreamRefused(let reason)): return "unicache; hit; fwd=stale; detail=" + detail(reason)
        }
    }

    /// The `detail` of an answer the upstream gate shaped: a stale copy served instead, or a refusal's problem.
    static func detail(_ reason: UpstreamRefusal.Reason) -> String {
        switch reason {
        case .rate: return "rate-limited"
        case .paused: return "upstream-paused"
        case .circuit: return "circuit-open"
        case .user: return "user-budget"
        }
    }

    /// The `Cache-Status` of a refusal answered with a problem: nothing stored was served, nothing was forwarded, and
    /// the detail says why (the access log line shows it).
    static func refusalStatus(_ reason: UpstreamRefusal.Reason) -> String { "unicache; detail=" + detail(reason) }

    /// The answer for `result`: 200 with the body, or 304 when `If-None-Match` matches its ETag.
    static func response(for result: CacheResult, request: Request) -> Response {
        let response = response(for: result)
        if let condition = request.headers["If-None-Match"], etagMatches(condition, result.entry.etag) {
            return notModified(response.headers)
        }
        return response
    }

    /// 304 with the 200's headers but `Content-Type`: RFC 9110 section 15.4.5 keeps the validators and caching
    /// fields (`ETag`, `Cache-Control`, `Expires`, `Date`) and asks for no other representation metadata.
    static func notModified(_ headers: HTTPHeaders) -> Response {
        var headers = headers
        headers.remove(name: "Content-Type")
        return Response(status: 304, headers: headers)
    }

    /// The unconditional 200 answer for `result`; with `date`, its `Date` header (else the server adds one).
    static func response(for result: CacheResult, date: String? = nil) -> Response {
        let entry = result.entry
        var headers = HTTPHeaders()
        if let date { headers.add(name: "Date", value: date) }
        headers.add(name: "Content-Type", value: entry.contentType)
        headers.add(name: "ETag", value: entry.etag)
        headers.add(name: "Age", value: String(result.ageSeconds))
        headers.add(name: "Cache-Control", value: "private, max-age=\(result.remainingFreshSeconds)")
        headers.add(name: "X-Cache", value: xCache(result.outcome))
        headers.add(
            name: "Cache-Status",
            value: cacheStatus(
                result.outcome, stored: result.stored, tier: result.tier, refreshThrottled: result.refreshThrottled))
        if let tier = result.tier { headers.add(name: "X-Cache-Tier", value: tier.rawValue) }
        return Response(status: 200, headers: headers, body: entry.body)
    }

    /// `If-None-Match` uses the weak comparison (RFC 9110 §13.1.2): `*`, or any listed tag equal ignoring `W/`.
    static func etagMatches(_ condition: String, _ etag: String) -> Bool {
        let wanted = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for part in condition.split(separator: ",") {
            var tag = part.trimmingCharacters(in: .whitespaces)[...]
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == wanted { return true }
        }
        return false
    }
}

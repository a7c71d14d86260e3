import Foundation
import HTTPRouting
import NIOConcurrencyHelpers
import UnifiedCache

/// The read-through answers to plain requests (GET/HEAD, no `Cache-Control`, no `If-None-Match`), remembered
/// per raw target and renewed every wall-clock second: what the target resolves to (route, key and policy: a
/// pure function of the target within a second) and its last rendered answer, reused for as long as
/// everything the answer is made of is unchanged (the same entry, outcome, tier, age and freshness).
///
/// So a warm target is resolved and its headers built once a second instead of once a request, and its
/// later requests in that second take the router's shortcut (no parsing, no routing); the 1,000 coalesced
/// waiters of a stampede share one answer; and answers are `reusable()`, so the server builds each wire
/// form once too. The cache is still asked on every request (each hit counted, the LRU order kept), so an
/// invalidated or erased entry is never answered from here; everything held is at most a second old (the
/// table is dropped when the second changes), and a rendered answer carries that second's `Date` (the server
/// dates every other answer itself: a time read, `gmtime_r` under glibc's lock and its format per request).
final class RenderedAnswers: Sendable {
    /// Classes, so that taking one out of the table is one retain.
    final class Rendered: Sendable {
        let result: CacheResult
        let response: Response

        init(result: CacheResult, response: Response) {
            self.result = result
            self.response = response
        }

        /// Whether `CacheHeaders.response(for: other)` would be this answer.
        func matches(_ other: CacheResult) -> Bool {
            let entry = result.entry
            return entry.storedAt == other.entry.storedAt && result.ageSeconds == other.ageSeconds
                && result.remainingFreshSeconds == other.remainingFreshSeconds && result.outcome == other.outcome
                && result.tier == other.tier && result.stored == other.stored && entry.etag == other.entry.etag
                && entry.contentType == other.entry.contentType
        }
    }

    /// What a target resolves to in one second (its resource, key and policy), with its last rendered answer.
    final class Memo: Sendable {
        let resource: Resource
        let resolved: ResolvedResource
        /// The second the resolution was made in: the table it may be remembered in.
        fileprivate let second: Int
        fileprivate let rendered: Rendered?

        fileprivate init(resource: Resource, resolved: ResolvedResource, rendered: Rendered? = nil) {
            self.resource = resource
            self.resolved = resolved
            second = RenderedAnswers.second(resolved.resolvedAt)
            self.rendered = rendered
        }

        var route: String { resource.route }

        /// `lookup` asked for this target's key: from a method, so that the request is lent from the memo's field
        /// (read from outside, the caller copied it first: ~250 instructions with its strings' retains).
        func look(_ lookup: (_ fetch: FetchRequest, _ policy: FreshnessPolicy) -> CacheLook) -> CacheLook {
            lookup(resolved.fetch, resolved.policy)
        }
    }

    private struct Table {
        var second = Int.min
        var memos: [String: Memo] = [:]
    }

    // NIOLockedValueBox rather than Synchronization.Mutex: ThreadSanitizer on Linux sees pthread locks only.
    private let table = NIOLockedValueBox(Table())
    /// Targets remembered per second at most (the table is emptied when full).
    private let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// Whether a request's method and headers make it plain (its answer depends on the target alone). Most requests
    /// carry neither name, which the headers' bits tell at once.
    static func isPlain(_ method: HTTPMethod, _ headers: HTTPHeaders) -> Bool {
        (method == .get || method == .head)
            && (!headers.mayContain(anyOf: notPlainNames)
                || (headers["Cache-Control"] == nil && headers["If-None-Match"] == nil))
    }

    private static let notPlainNames = HTTPHeaders.bits(of: "Cache-Control", "If-None-Match")

    /// Whether a routed request is plain and its answer may be remembered: never a `?refresh=` (it must fetch).
    static func isPlain(_ request: Request) -> Bool {
        isPlain(request.method, request.headers) && !request.query.contains("refresh")
    }

    /// The answer for `result` of a plain `request` that `resolved` answers on `resource`, at `now`.
    func answer(
        _ result: CacheResult, to request: Request, on resource: Resource, resolved: ResolvedResource, now: Date
    ) -> Response {
        let memo = remembered(request.target, second: Self.second(resolved.resolvedAt))
            ?? Memo(resource: resource, resolved: resolved)
        return answer(result, memo: memo, target: request.target, now: now)
    }

    /// Before parsing (the router's shortcut): what a plain request's target resolves to when it was answered this
    /// second; nil when the request is not plain or the target is not remembered.
    func remembered(method: HTTPMethod, target: String, headers: HTTPHeaders, now: Date) -> Memo? {
        guard Self.isPlain(method, headers) else { return nil }
        return remembered(target, second: Self.second(now))
    }

    fileprivate static func second(_ now: Date) -> Int { Int(now.timeIntervalSince1970.rounded(.down)) }

    private func remembered(_ target: String, second: Int) -> Memo? {
        table.withLockedValue { table in table.second == second ? table.memos[target] : nil }
    }

    /// `memo`'s rendered answer when it is this second's and `again` says the cache would read the same result now
    /// (`UnifiedCacheManager.lookAgain`, which counts the hit): the answer of a warm target without a copy of its entry
    /// and its `CacheResult`; nil otherwise, with nothing counted.
    func rememberedAnswer(_ memo: Memo, now: Date, again: (_ rendered: Rendered) -> Bool) -> Response? {
        guard memo.second == Self.second(now), let rendered = memo.rendered, again(rendered) else { return nil }
        return rendered.response
    }

    /// The answer for `result` of a plain request for `target` that `memo` resolves, at `now`: the remembered one if
    /// it still matches, else a new one, remembered while the second its resolution was made in lasts (a read that
    /// ends after that second is answered, not remembered: the next second resolves the target afresh). Rendered
    /// outside the lock; when waiters resumed together rendered it at once, the first one remembered is the one they
    /// all answer.
    func answer(_ result: CacheResult, memo: Memo, target: String, now: Date) -> Response {
        let second = Self.second(now)
        if memo.second == second, let rendered = memo.rendered, rendered.matches(result) { return rendered.response }
        // Dated here, with the second it is answered in (MHD would format its own `Date` for every request).
        let response = CacheHeaders.response(for: result, date: HTTPDates.httpDate(second: second)).reusable()
        // A miss or a refresh is its request's answer alone: it never replaces one that others can share (the
        // coalesced waiters' of that very miss, finishing beside it).
        let shareable = result.outcome != .miss && result.outcome != .refresh
        guard memo.second == second else { return response }
        let renewed = Memo(
            resource: memo.resource, resolved: memo.resolved,
            rendered: shareable ? Rendered(result: result, response: response) : nil)
        return table.withLockedValue { table in
            // Another second's table: an older one, or, the wall clock stepped back, one still to come.
            if second != table.second || table.memos.count >= capacity {
                table.second = second
                table.memos.removeAll(keepingCapacity: true)
            } else if let current = table.memos[target]?.rendered {
                if current.matches(result) { return current.response }
                if !shareable { return response }
            }
            table.memos[target] = renewed
            return response
        }
    }
}

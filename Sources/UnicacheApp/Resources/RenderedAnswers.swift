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
/// table is dropped when the second changes).
final class RenderedAnswers: Sendable {
    /// Classes, so that taking one out of the table is one retain.
    fileprivate final class Rendered: Sendable {
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

    /// What a target resolves to this second (its resource, key and policy), with its last rendered answer.
    final class Memo: Sendable {
        let resource: Resource
        let fetch: FetchRequest
        let policy: FreshnessPolicy
        fileprivate let rendered: Rendered?

        fileprivate init(resource: Resource, fetch: FetchRequest, policy: FreshnessPolicy, rendered: Rendered? = nil) {
            self.resource = resource
            self.fetch = fetch
            self.policy = policy
            self.rendered = rendered
        }

        var route: String { resource.route }

        /// `lookup` asked for this target's key: from a method, so that the request is lent from the memo's field
        /// (read from outside, the caller copied it first: ~250 instructions with its strings' retains).
        func look(_ lookup: (_ fetch: FetchRequest, _ policy: FreshnessPolicy) -> CacheLook) -> CacheLook {
            lookup(fetch, policy)
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

    /// Whether a request's method and headers make it plain (its answer depends on the target alone).
    static func isPlain(_ method: HTTPMethod, _ headers: HTTPHeaders) -> Bool {
        (method == .get || method == .head) && headers["Cache-Control"] == nil && headers["If-None-Match"] == nil
    }

    /// Whether a routed request is plain and its answer may be remembered: never a `?refresh=` (it must fetch).
    static func isPlain(_ request: Request) -> Bool {
        isPlain(request.method, request.headers) && !request.query.contains("refresh")
    }

    /// The answer for `result` of a plain `request` that `resolved` answers on `resource`, at `now`.
    func answer(
        _ result: CacheResult, to request: Request, on resource: Resource, resolved: ResolvedResource, now: Date
    ) -> Response {
        let second = Self.second(now)
        let memo = remembered(request.target, second: second)
            ?? Memo(resource: resource, fetch: resolved.fetch, policy: resolved.policy)
        return answer(result, memo: memo, target: request.target, second: second)
    }

    /// The answer for `result` of a plain request for `target`, whose `memo` the shortcut found, at `now`.
    func answer(_ result: CacheResult, memo: Memo, target: String, now: Date) -> Response {
        answer(result, memo: memo, target: target, second: Self.second(now))
    }

    /// Before parsing (the router's shortcut): what a plain request's target resolves to when it was answered this
    /// second; nil when the request is not plain or the target is not remembered.
    func remembered(method: HTTPMethod, target: String, headers: HTTPHeaders, now: Date) -> Memo? {
        guard Self.isPlain(method, headers) else { return nil }
        return remembered(target, second: Self.second(now))
    }

    private static func second(_ now: Date) -> Int { Int(now.timeIntervalSince1970.rounded(.down)) }

    private func remembered(_ target: String, second: Int) -> Memo? {
        table.withLockedValue { table in table.second == second ? table.memos[target] : nil }
    }

    /// The remembered answer if it still matches `result`, else a new one, remembered. Rendered outside the lock;
    /// when waiters resumed together rendered it at once, the first one remembered is the one they all answer.
    private func answer(_ result: CacheResult, memo: Memo, target: String, second: Int) -> Response {
        if let rendered = memo.rendered, rendered.matches(result) { return rendered.response }
        let response = CacheHeaders.response(for: result).reusable()
        // A miss or a refresh is its request's answer alone: it never replaces one that others can share (the
        // coalesced waiters' of that very miss, finishing beside it).
        let shareable = result.outcome != .miss && result.outcome != .refresh
        let renewed = Memo(
            resource: memo.resource, fetch: memo.fetch, policy: memo.policy,
            rendered: shareable ? Rendered(result: result, response: response) : nil)
        return table.withLockedValue { table in
            if table.second != second || table.memos.count >= capacity {
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

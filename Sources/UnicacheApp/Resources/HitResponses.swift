import Foundation
import HTTPRouting
import NIOConcurrencyHelpers
import UnifiedCache

/// The fast path's memory of warm request targets, renewed every wall-clock second: what a target resolves
/// to (key and policy; a pure function of the target within a second), and the rendered answer of its last
/// fresh hit, reused while nothing in it changes (the same entry at the same age and freshness). A warm
/// target is resolved and its headers built once a second instead of once a request, and the answer is
/// `reusable()`, so the server also reuses its wire form.
///
/// The cache is still asked on every request, so an invalidated or erased entry is never answered from
/// here; everything held is at most a second old (the table is dropped when the second changes).
final class HitResponses: Sendable {
    private struct Rendered {
        let storedAt: Date
        let etag: String
        let tier: CacheTier?
        let ageSeconds: Int
        let remainingFreshSeconds: Int
        let response: Response

        func matches(_ result: CacheResult) -> Bool {
            storedAt == result.entry.storedAt && ageSeconds == result.ageSeconds
                && remainingFreshSeconds == result.remainingFreshSeconds && tier == result.tier
                && etag == result.entry.etag
        }
    }

    /// A class, so that taking one out of the table is one retain.
    private final class Memo: Sendable {
        let key: String
        let policy: FreshnessPolicy
        let rendered: Rendered?

        init(key: String, policy: FreshnessPolicy, rendered: Rendered? = nil) {
            self.key = key
            self.policy = policy
            self.rendered = rendered
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

    /// The answer for `request` (unconditional) when the cache holds a fresh copy, else nil. `resolve` runs
    /// when the target is not remembered this second; `lookup` is the cache read.
    func answer(
        _ request: Request, now: Date, resolve: () -> ResolvedResource?,
        lookup: (_ key: String, _ policy: FreshnessPolicy) -> CacheResult?
    ) -> Response? {
        let second = Int(now.timeIntervalSince1970.rounded(.down))
        let remembered = table.withLockedValue { table in table.second == second ? table.memos[request.target] : nil }
        let memo: Memo
        if let remembered {
            memo = remembered
        } else {
            guard let resolved = resolve() else { return nil }
            memo = Memo(key: resolved.key, policy: resolved.policy)
        }
        guard let result = lookup(memo.key, memo.policy) else { return nil }
        guard case .hit = result.outcome else { return CacheHeaders.response(for: result, request: request) }
        if let rendered = memo.rendered, rendered.matches(result) { return rendered.response }
        let response = CacheHeaders.response(for: result, request: request).reusable()
        let rendered = Memo(key: memo.key, policy: memo.policy, rendered: Rendered(
            storedAt: result.entry.storedAt, etag: result.entry.etag, tier: result.tier,
            ageSeconds: result.ageSeconds, remainingFreshSeconds: result.remainingFreshSeconds, response: response))
        table.withLockedValue { table in
            if table.second != second || table.memos.count >= capacity {
                table.second = second
                table.memos.removeAll(keepingCapacity: true)
            }
            table.memos[request.target] = rendered
        }
        return response
    }
}

import Foundation

/// What a read finds without waiting (`UnifiedCacheManager.look`): the one synchronous read of the core, beside the
/// one async read, `get`.
public enum CacheLook: Sendable {
    /// Answered now, and counted: a fresh value from memory or the second tier, or a stale memory copy while its
    /// upstream refuses a fetch at once (an open circuit, a 429 pause).
    case ready(CacheResult)
    /// Something already under way will answer: a load of the key in flight to join, or the shared tier to ask.
    case pending(PendingRead)
    /// Nothing to answer or join without a task: `get` decides (a miss, a stale or refresh-ahead value, a remembered
    /// 404).
    case absent
}

/// A read that something under way answers: `whenDone` calls back once, on the thread that learns the answer (at
/// once when it is known already), with the result or the error a `get` would give, or with `nil` when `get` must
/// decide after all (the shared tier had no fresh value, or an invalidation came between). No task is made: a
/// stampede's thousand coalesced requests are answered by callbacks in one pass.
public struct PendingRead: Sendable {
    enum Source: Sendable {
        /// A load of the key in flight, joined.
        case load(AnnouncedOutcome)
        /// The shared tier, asked when `whenDone` is called, if no invalidation counted past `invalidations`
        /// (`keyHash`: the key's `MemoryTier.hash`, which `look` made, for the promotion of a hit).
        case shared(policy: FreshnessPolicy, invalidations: UInt64, keyHash: UInt32)
    }

    let manager: UnifiedCacheManager
    let key: String
    let namespace: String
    let source: Source

    /// Calls `answer` once with the read's result, its error, or `nil` for `get` to decide.
    public func whenDone(_ answer: @escaping @Sendable (Result<CacheResult, CacheError>?) -> Void) {
        switch source {
        case .load(let announced):
            announced.whenTold { [manager, namespace] outcome in
                answer(
                    Result { () throws(CacheError) in
                        try manager.result(of: outcome, namespace: namespace, fetched: .coalesced)
                    })
            }
        case .shared(let policy, let invalidations, let keyHash):
            manager.askShared(key, keyHash: keyHash, policy: policy, after: invalidations, answer: answer)
        }
    }
}

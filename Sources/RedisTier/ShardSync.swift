import NIOConcurrencyHelpers
import Redis
import UnifiedCache

/// Where this instance stands in one shard's invalidation log (one shard on one Redis; a cluster's fixed shards,
/// CONTRACT §13), and the subscriber of that shard's channel.
final class ShardSync: Sendable {
    let index: Int
    let state: NIOLockedValueBox<SyncState>
    private let subscriberBox = NIOLockedValueBox<RedisSubscriber?>(nil)

    init(index: Int, applied: LogCheckpoint?) {
        self.index = index
        state = NIOLockedValueBox(SyncState(applied: applied, saved: applied))
    }

    /// The subscriber whose session runs now (the one a primary switch stops), nil when none runs.
    var subscriber: RedisSubscriber? { subscriberBox.withLockedValue { $0 } }

    func install(_ new: RedisSubscriber?) {
        subscriberBox.withLockedValue { $0 = new }
    }

    var isConnected: Bool { subscriber?.isConnected ?? false }

    /// In step with this shard of the fleet: subscribed, and its log caught up (or its entries reset) since.
    var inStep: Bool { isConnected && state.withLockedValue { $0.inStep } }
}

/// Where this instance stands in a shard's log.
struct SyncState {
    /// Everything the log of this epoch holds up to this position is applied to the local tiers; `nil`: not known
    /// (no checkpoint), so the next check resets.
    var applied: LogCheckpoint?
    /// Subscribed, and the log caught up (or the local tiers reset) since: live messages advance `applied`.
    var inStep = false
    /// The highest position of a message applied live since the subscription, while catching up.
    var live: LogPosition?
    /// Counts subscriptions and losses: a position check applies only to the subscription it was made for.
    var generation: UInt64 = 0
    /// The checkpoint written to the file last.
    var saved: LogCheckpoint?
    /// In step at least once since start-up: the entries stored before it are vouched for (caught up or reset).
    var vouched = false

    init(applied: LogCheckpoint?, saved: LogCheckpoint?) {
        self.applied = applied
        self.saved = saved
    }
}

/// Where the shared tier's events go: set by `start`, cleared when `run` ends.
struct EventHooks {
    var handler: (@Sendable (SharedTierEvent) -> Void)?
    /// Returns once every event handed to `handler` so far has reached the local tiers (disk included).
    var settled: (@Sendable () async -> Void)?
    /// A change this instance could not read has been logged (at warning, once).
    var unreadableSeen = false
}

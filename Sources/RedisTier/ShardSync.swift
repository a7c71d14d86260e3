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
    /// The channel was lost (or its first subscription failed) and is not subscribed again: `followLogs` reads the
    /// log in its stead. False while subscribed (caught up or catching up: that catch-up reads the log).
    var channelLost = false
    /// The highest position of a message applied live since the subscription, while catching up.
    var live: LogPosition?
    /// Counts subscriptions and losses: a position check applies only to the subscription it was made for.
    var generation: UInt64 = 0
    /// The checkpoint written to the file last.
    var saved: LogCheckpoint?
    /// Caught up with the log (or reset) at least once since start-up, by a catch-up or by `followLogs`: the entries
    /// stored before it are vouched for.
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

/// The first catch-up of each shard since start-up. On a cluster they are logged as one line once every shard is in
/// step (sixteen shards made sixteen lines at every start); a shard's later ones (its primary lost, a failover) are
/// logged shard by shard.
struct FirstCatchUps {
    enum Outcome {
        /// Applied the log from this instance's position: `replayed` changes of other instances.
        case caughtUp(replayed: Int)
        /// The log could not vouch for what was missed: the shard's local entries dropped.
        case reset
    }

    /// The shards whose first catch-up is still to come.
    private(set) var waiting: Set<Int>
    private(set) var caughtUp = 0
    private(set) var reset = 0
    private(set) var replayed = 0

    init(shards: Int) { waiting = Set(0..<shards) }

    /// Counts `shard`'s catch-up when it is its first. `first`: it was; `last`: it was the last shard's first.
    mutating func count(_ shard: Int, _ outcome: Outcome) -> (first: Bool, last: Bool) {
        guard waiting.remove(shard) != nil else { return (false, false) }
        switch outcome {
        case .caughtUp(let changes):
            caughtUp += 1
            replayed += changes
        case .reset:
            reset += 1
        }
        return (true, waiting.isEmpty)
    }
}

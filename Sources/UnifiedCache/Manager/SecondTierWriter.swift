import Synchronization

/// Serialises every write and removal sent to the second tier, in the order the manager issued
/// them under its lock, so a fire-and-forget store can never land after (and resurrect past) a later
/// invalidation of the same key. Callers that must wait pass a continuation.
final class SecondTierWriter: Sendable {
    enum Operation: Sendable {
        case store(CacheEntry, CheckedContinuation<Bool, Never>?)
        /// A raw put: `settle` runs in queue order with whether the tier stored it, before `done` resumes.
        case put(CacheEntry, settle: @Sendable (Bool) -> Void, done: CheckedContinuation<Bool, Never>)
        /// Removes what the scope covers (one key: that key's file, no scan of the tier).
        case removeAll(KeyScope, CheckedContinuation<SecondTierRemoval, Never>?)
        /// Resumes once everything enqueued before it is done.
        case barrier(CheckedContinuation<Void, Never>)
    }

    let tier: any SecondTier
    /// Operations queued and not yet done: while any is, a read on the caller's thread may see a file an operation
    /// is about to change, so the manager leaves reads to the queue-ordered path.
    private let queued = Counter()
    private let operations: AsyncStream<Operation>.Continuation
    private let worker: Task<Void, Never>

    init(tier: any SecondTier) {
        self.tier = tier
        let (stream, continuation) = AsyncStream.makeStream(of: Operation.self)
        let queued = queued
        operations = continuation
        worker = Task {
            for await operation in stream {
                let answer = await Self.perform(operation, on: tier)
                // Done before its caller hears so: a caller that waited for it finds the writer idle.
                queued.value.subtract(1, ordering: .releasing)
                answer()
            }
        }
    }

    deinit {
        // The worker drains what is queued, then ends.
        operations.finish()
    }

    /// Queues `operation`; never blocks.
    func enqueue(_ operation: Operation) {
        queued.value.add(1, ordering: .relaxed)
        operations.yield(operation)
    }

    /// Whether every operation queued so far is done.
    var isIdle: Bool { queued.value.load(ordering: .acquiring) == 0 }

    /// An atomic the worker task can share (an `Atomic` cannot be captured).
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// Waits until every operation queued so far is done.
    func flush() async {
        await withCheckedContinuation { enqueue(.barrier($0)) }
    }

    /// Performs `operation` on the tier; returns what tells its caller (run once the operation counts as done).
    private static func perform(_ operation: Operation, on tier: any SecondTier) async -> @Sendable () -> Void {
        switch operation {
        case .store(let entry, let done):
            let stored = await tier.store(entry)
            return { done?.resume(returning: stored) }
        case .put(let entry, let settle, let done):
            let stored = await tier.store(entry)
            settle(stored)
            return { done.resume(returning: stored) }
        case .removeAll(let scope, let done):
            let removal: SecondTierRemoval
            if case .key(let key) = scope.kind {
                removal = await tier.remove(key)
            } else {
                removal = await tier.removeAll(in: scope)
            }
            return { done?.resume(returning: removal) }
        case .barrier(let done):
            return { done.resume() }
        }
    }
}

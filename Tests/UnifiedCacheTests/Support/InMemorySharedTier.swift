import NIOConcurrencyHelpers
import TestSupport
import UnifiedCache

/// A shared tier in a dictionary, for the manager's side of the fleet (CONTRACT §6) without Redis: what it holds,
/// what it was told, and scripted fill-lease answers.
final class InMemorySharedTier: SharedTier {
    struct State {
        var entries: [String: CacheEntry] = [:]
        var stores = 0
        var invalidations: [SharedScope] = []
        /// Answers to `claimFill`, first first; when empty, every claim leads.
        var claims: [FillClaim] = []
        var claimCount = 0
        /// Answers to `awaitFill`, first first; when empty, the lease ends without a value.
        var fills: [CacheEntry?] = []
        /// While set, every call that can say so answers "cannot ask".
        var unavailable = false
        var handler: (@Sendable (SharedTierEvent) -> Void)?
        /// What `vouchesForStoredEntries` answers (a restarted instance still catching up: `false`).
        var vouches = true
        /// Whether `loadNow` is offered; its reads wait in `pendingReads` until `answerPendingReads`.
        var readsNow = false
        var pendingReads: [@Sendable () -> Void] = []
        /// Hits `loadNow` counted (entries taken).
        var hitsNow = 0
        /// When set, each store waits for it to open before it stores (a slow Redis).
        var storeGate: Latch?
        /// Stores begun (counted before the gate).
        var storesBegun = 0
        /// Leases held now by `holdFill` (key and token), and the holds that ended.
        var holding: [String: String] = [:]
        var holdsEnded = 0
    }

    let state = NIOLockedValueBox(State())

    init(_ initial: [CacheEntry] = []) {
        state.withLockedValue { state in for entry in initial { state.entries[entry.key] = entry } }
    }

    /// Delivers `event` as another instance (or a reconnection) would.
    func deliver(_ event: SharedTierEvent) {
        state.withLockedValue { $0.handler }?(event)
    }

    private func check() throws(SharedTierUnavailable) {
        if state.withLockedValue({ $0.unavailable }) { throw SharedTierUnavailable(reason: "test: unavailable") }
    }

    func load(_ key: String) async throws(SharedTierUnavailable) -> CacheEntry? {
        try check()
        return state.withLockedValue { $0.entries[key] }
    }

    func loadNow(_ key: String, for read: any SharedReadNow) -> Bool {
        state.withLockedValue { state in
            guard state.readsNow else { return false }
            state.pendingReads.append { [self] in
                let found = self.state.withLockedValue { $0.unavailable ? nil : $0.entries[key] }
                guard let found, read.accept(found) else { return read.answer(nil) }
                self.state.withLockedValue { $0.hitsNow += 1 }
                read.answer(found)
            }
            return true
        }
    }

    /// Replies to the `loadNow` reads made so far, as a Redis worker would (on the calling thread).
    func answerPendingReads() {
        let reads = state.withLockedValue { state in
            defer { state.pendingReads = [] }
            return state.pendingReads
        }
        reads.forEach { $0() }
    }

    func store(_ entry: CacheEntry) async throws(SharedTierUnavailable) {
        try check()
        let gate = state.withLockedValue { state in
            state.storesBegun += 1
            return state.storeGate
        }
        await gate?.wait()
        state.withLockedValue { state in
            state.entries[entry.key] = entry
            state.stores += 1
        }
    }

    func invalidate(_ scope: SharedScope) async throws(SharedTierUnavailable) -> [String] {
        try check()
        return state.withLockedValue { state in
            state.invalidations.append(scope)
            guard case .key(let key) = scope else { return [] }
            return state.entries.removeValue(forKey: key) == nil ? [] : [key]
        }
    }

    func claimFill(_ key: String) async -> FillClaim {
        state.withLockedValue { state in
            state.claimCount += 1
            if state.unavailable { return .unavailable }
            return state.claims.isEmpty ? .leader(token: "t\(state.claimCount)") : state.claims.removeFirst()
        }
    }

    func releaseFill(_ key: String, token: String) async {}

    /// Holds until cancelled, as the Redis tier renews until the fetch is over.
    func holdFill(_ key: String, token: String) async {
        state.withLockedValue { $0.holding[key] = token }
        await Latch().wait()
        state.withLockedValue { state in
            state.holding[key] = nil
            state.holdsEnded += 1
        }
    }

    func awaitFill(_ key: String) async -> CacheEntry? {
        state.withLockedValue { state in state.fills.isEmpty ? nil : state.fills.removeFirst() }
    }

    func start(events: @escaping @Sendable (SharedTierEvent) -> Void, settled: @escaping @Sendable () async -> Void) {
        state.withLockedValue { $0.handler = events }
    }

    func run() async {
        // Nothing of its own to run: waits for the cancellation that ends it.
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        state.withLockedValue { $0.handler = nil }
    }

    var vouchesForStoredEntries: Bool { state.withLockedValue { $0.vouches } }

    func statistics() -> SharedTierStatistics { SharedTierStatistics(connected: !state.withLockedValue { $0.unavailable }) }
}

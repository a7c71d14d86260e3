import Clocks
import Logging
import NIOConcurrencyHelpers
import Synchronization

/// The current key set and when to look at its source again (CONTRACT §8.5, §8.9). Requests read the set without
/// waiting. A file is looked at by the first request after a second has passed (on the request's own reading of the
/// wall clock: no second clock read per request); a URL is fetched by a timer every `--jwt-jwks-refresh`, whether or
/// not requests arrive, and at once for an unknown `kid`. Reloads run one at a time. A request with a remembered token
/// takes no lock here: it reads the set's generation and claims a file's check with atomics.
final class VerificationKeys: Sendable {
    /// An unknown `kid` fetches a URL JWKS again at most this often.
    static let unknownKeyInterval = Duration.seconds(30)
    /// A file is checked for a change at most this often (on the wall clock).
    static let fileCheckInterval = Duration.seconds(1)

    private struct State {
        var keys: KeySet
        var lastUnknownKeyFetch: Duration?
        var reload: Task<Void, Never>?
        /// A URL's refresh timer, cancelled when these keys go away.
        var timer: Task<Void, Never>?
    }

    let source: any JWKSSource
    /// `source.isRemote`, read once: requests ask on every decision.
    private let isRemote: Bool
    private let clock: Elapsed
    private let statistics: AccessStatistics
    private let logger: Logger
    private let changed: @Sendable () -> Void
    private let state: NIOLockedValueBox<State>
    /// `keys.generation`, stored with the keys: a remembered token is looked up under it.
    private let currentGeneration = Synchronization.Atomic<Int>(0)
    /// When a file was last looked at (a URL's timer keeps its own time): the bits of the wall clock's seconds since
    /// 1970 (`Double(bitPattern:)`).
    private let lastCheck: Synchronization.Atomic<UInt64>

    /// Reads the source once: a JWKS that cannot be read or holds no usable key is the error.
    init(
        source: any JWKSSource, refresh: Duration, clock: Elapsed, now: Double, statistics: AccessStatistics,
        logger: Logger, changed: @escaping @Sendable () -> Void
    ) async throws(KeySetError) {
        guard let document = try await source.read() else { throw KeySetError("the JWKS source returned nothing") }
        let keys = try await KeySet.load(document, generation: 0)
        self.source = source
        self.isRemote = source.isRemote
        self.clock = clock
        self.statistics = statistics
        self.logger = logger
        self.changed = changed
        self.state = NIOLockedValueBox(State(keys: keys))
        self.lastCheck = Synchronization.Atomic(now.bitPattern)
        if isRemote { startTimer(every: refresh) }
    }

    deinit {
        state.withLockedValue { $0.timer?.cancel() }
    }

    /// Fetches a URL again every `interval` until these keys go away (the task holds it weakly).
    private func startTimer(every interval: Duration) {
        let timer = Task { [weak self, clock] in
            await clock.repeating(every: interval) {
                guard let self else { return false }
                await self.reload()
                return true
            }
        }
        state.withLockedValue { $0.timer = timer }
    }

    var keys: KeySet { state.withLockedValue { $0.keys } }

    /// The generation of the keys in force.
    var generation: Int { currentGeneration.load(ordering: .acquiring) }

    /// Whether this caller is the one that finds a file's check due (it then calls `reload()` before deciding). A
    /// URL's checks are its timer's: never due for a request. `now` is the request's reading of the wall clock
    /// (seconds since 1970); a clock set back by a second or more makes a check due too, rather than none until it
    /// catches up.
    func claimFileCheck(now: Double) -> Bool {
        if isRemote { return false }
        let last = lastCheck.load(ordering: .relaxed)
        guard abs(now - Double(bitPattern: last)) >= Self.fileCheckInterval.seconds else { return false }
        return lastCheck.compareExchange(expected: last, desired: now.bitPattern, ordering: .relaxed).exchanged
    }

    /// True when a URL may be fetched again for an unknown `kid` (at most once per 30 s).
    func claimUnknownKeyFetch() -> Bool {
        guard isRemote else { return false }
        let now = clock.now()
        return state.withLockedValue { state in
            if let last = state.lastUnknownKeyFetch, now - last < Self.unknownKeyInterval { return false }
            state.lastUnknownKeyFetch = now
            return true
        }
    }

    /// Reads the source again (joining a reload already running). A failure keeps the keys held.
    func reload() async {
        let task = state.withLockedValue { state -> Task<Void, Never> in
            if let running = state.reload { return running }
            let task = Task { await self.readSource() }
            state.reload = task
            return task
        }
        await task.value
    }

    private func readSource() async {
        defer { state.withLockedValue { $0.reload = nil } }
        do throws(KeySetError) {
            guard let document = try await source.read() else { return }
            let current = keys
            // Counted once the keys in force are the ones read (and the remembered tokens forgotten): whoever sees
            // the count sees the new keys.
            guard document != current.document else {
                statistics.keyRefreshes.add(1, ordering: .relaxed)
                return
            }
            let next = try await KeySet.load(document, generation: current.generation + 1)
            state.withLockedValue { state in
                state.keys = next
                currentGeneration.store(next.generation, ordering: .releasing)
            }
            changed()
            statistics.keyRefreshes.add(1, ordering: .relaxed)
            logger.info("JWKS changed", metadata: ["keys": "\(next.count)", "source": "\(source.isRemote ? "url" : "file")"])
        } catch {
            statistics.keyErrors.add(1, ordering: .relaxed)
            logger.warning(
                "JWKS could not be loaded; keeping the last good keys",
                metadata: ["reason": "\(error.description)", "keys": "\(keys.count)"])
        }
    }
}

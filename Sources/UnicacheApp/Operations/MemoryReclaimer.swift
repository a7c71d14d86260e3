import Clocks
import CMalloc
import Foundation
import Logging
import ServiceLifecycle
import UnifiedCache

/// Keeps what glibc's allocator holds close to what the memory tier counts, so that `--memory-limit` bounds the
/// process (CONTRACT §1): at most two malloc arenas (glibc's default is eight per CPU, and memory freed in one
/// thread's arena is not reused by the others), and `malloc_trim(0)` once a second after the memory tier released
/// a burst of entries (evicted, replaced or invalidated), which returns free pages to the kernel; once, too, after
/// the disk tier's start-up scan, whose working lists are the size of the whole index.
struct MemoryReclaimer: Service {
    /// Arenas when the operator has not set `MALLOC_ARENA_MAX` (measured: see docs/operations.md).
    static let arenas: Int32 = 2

    let cache: UnifiedCacheManager
    /// Returns once the disk tier's index is rebuilt (`nil` without a disk tier).
    let indexed: (@Sendable () async -> Void)?
    /// Paces the once-a-second look at what the memory tier released.
    let ticker: any Clock<Duration>
    let logger: Logger
    /// Released bytes that make a trim worth its few milliseconds.
    let threshold: Int

    init(
        cache: UnifiedCacheManager, memoryLimitBytes: Int, indexed: (@Sendable () async -> Void)?,
        ticker: any Clock<Duration>, logger: Logger
    ) {
        self.cache = cache
        self.indexed = indexed
        self.ticker = ticker
        self.logger = logger
        threshold = max(4 << 20, memoryLimitBytes / 16)
    }

    /// Call before the service allocates much: arenas already created stay.
    static func limitArenas(logger: Logger) {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
        if mallopt(M_ARENA_MAX, arenas) != 1 { logger.warning("mallopt(M_ARENA_MAX) failed") }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { await trimAfterBursts() }
    }

    private func trimAfterBursts() async {
        if let indexed {
            await indexed()
            malloc_trim(0)
        }
        var trimmedAt = cache.statistics().memory.releasedBytes
        await Elapsed(ticker).repeating(every: .seconds(1)) {
            let released = cache.statistics().memory.releasedBytes
            guard released - trimmedAt >= threshold else { return true }
            malloc_trim(0)
            logger.trace("malloc_trim after releasing entries", metadata: ["bytes": "\(released - trimmedAt)"])
            trimmedAt = released
            return true
        }
    }
}

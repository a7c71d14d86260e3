import CoreMetrics
import UnifiedCache

/// Times every fetch of a domain into `unicache_upstream_fetch_seconds`, successes and failures alike.
struct MeasuredFetcher: Fetcher {
    let base: any Fetcher
    let timer: CoreMetrics.Timer

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let start = ContinuousClock.now
        defer { timer.recordInterval(since: start) }
        return try await base.fetch(request)
    }
}

extension CoreMetrics.Timer {
    fileprivate func recordInterval(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}

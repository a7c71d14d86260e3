import Clocks
import Prometheus
import UnifiedCache

/// Times every fetch of a domain into `unicache_upstream_fetch_seconds`, successes and failures alike.
struct MeasuredFetcher: Fetcher {
    let base: any Fetcher
    let histogram: ValueHistogram

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let start = ContinuousClock.now
        defer { histogram.record((ContinuousClock.now - start).seconds) }
        return try await base.fetch(request)
    }
}

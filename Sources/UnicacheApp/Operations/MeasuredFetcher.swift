import Clocks
import Prometheus
import UnifiedCache

/// Times every fetch of a domain into `unicache_upstream_fetch_seconds`, successes and failures alike.
struct MeasuredFetcher: Fetcher {
    let base: any Fetcher
    let histogram: ValueHistogram
    /// The process's monotonic time.
    let elapsed: Elapsed

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let start = elapsed.now()
        defer { histogram.record((elapsed.now() - start).seconds) }
        return try await base.fetch(request)
    }
}

import Foundation
import HTTPRouting
import JSONLogging
import Settings
import UnifiedCache

/// `/health/summary`: today's data plus the current weekday's average (CONTRACT §3).
/// `view` is `full` when today's data is from today in `tz`, else `average-only`; `asOf` is its `latestSampleTimestamp`.
struct HealthSummary: Sendable {
    let readThrough: ReadThrough

    func handle(_ request: Request) async throws(Problem) -> Response {
        let (today, average) = try readThrough.resolve(request) { c throws(InputError) in
            let today = try ResourceTable.healthToday.resolve(c)
            let weekday = LocalDate(c.now, in: try c.timeZone().zone).weekday
            return (today, try ResourceTable.averages(c, weekday: weekday))
        }
        // The two reads are parts of one answer: the summary is counted once, as a whole (below).
        var (traced, tracedAverage) = (ReadThrough.traced(today, request), ReadThrough.traced(average, request))
        (traced.fetch.counted, tracedAverage.fetch.counted) = (false, false)
        let zone = try readThrough.resolve(request) { c throws(InputError) in try c.timeZone() }
        let control = try ReadThrough.control(request)
        async let todayResult = readThrough.result(traced, domain: .health, control: control)
        async let averageResult = readThrough.result(tracedAverage, domain: .health, control: control)
        // Today's part may fail or be missing: the summary degrades to the average alone.
        let todayPart: CacheResult? = try? await todayResult.get()
        let averagePart: CacheResult
        do throws(Problem) {
            averagePart = try await averageResult.get()
        } catch {
            // Counted as a read that went to the upstream, as a single route's failed read is; `only-if-cached`
            // without a copy counts nowhere.
            if control != .onlyIfCached {
                let outcome: CacheOutcome = control == .refresh ? .refresh : .miss
                readThrough.cache.countComposed(outcome, namespace: Self.namespace, tier: nil)
            }
            throw error
        }

        let todayDate = LocalDate(readThrough.clock.now(), in: zone.zone)
        let json = todayPart.flatMap { try? JSONSerialization.jsonObject(with: Data($0.entry.body)) as? [String: Any] }
        let stamp = json?["latestSampleTimestamp"] as? String
        let isToday = stamp.flatMap(ISO8601Timestamp.parse).map { LocalDate($0, in: zone.zone) == todayDate } ?? false

        var body = Array(#"{"view":"\#(isToday ? "full" : "average-only")","asOf":"#.utf8)
        body += stamp.map { Array(JSONText.string($0).utf8) } ?? Array("null".utf8)
        body += Array(#","date":"\#(todayDate)","timeZone":\#(JSONText.string(zone.name)),"today":"#.utf8)
        body += isToday ? (todayPart?.entry.body ?? Array("null".utf8)) : Array("null".utf8)
        body += Array(#","average":"#.utf8) + averagePart.entry.body + Array("}".utf8)

        let parts = [todayPart, averagePart].compactMap { $0 }
        let outcome = Self.combined(parts.map(\.outcome))
        let tier = parts.allSatisfy({ $0.tier != nil }) ? parts.compactMap(\.tier).first : nil
        readThrough.cache.countComposed(outcome, namespace: Self.namespace, tier: outcome == .hit ? tier : nil)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "ETag", value: ETag.make(for: body))
        headers.add(name: "Age", value: String(parts.map(\.ageSeconds).max() ?? 0))
        headers.add(name: "Cache-Control", value: "private, max-age=\(parts.map(\.remainingFreshSeconds).min() ?? 0)")
        headers.add(name: "X-Cache", value: CacheHeaders.xCache(outcome))
        headers.add(name: "Cache-Status", value: CacheHeaders.cacheStatus(outcome, stored: parts.contains { $0.stored }))
        if let tier { headers.add(name: "X-Cache-Tier", value: tier.rawValue) }
        if let condition = request.headers["If-None-Match"],
            let etag = headers["ETag"], CacheHeaders.etagMatches(condition, etag)
        {
            return CacheHeaders.notModified(headers)
        }
        return Response(status: 200, headers: headers, body: body)
    }

    /// Where `/stats` counts a summary (its parts are `health.today` and `health.averages` reads).
    static let namespace = "health.summary"

    /// The summary's outcome is its weakest part's: a fetch beats a wait, a wait beats stale, stale beats a hit.
    static func combined(_ outcomes: [CacheOutcome]) -> CacheOutcome {
        func rank(_ outcome: CacheOutcome) -> Int {
            switch outcome {
            case .miss: return 4
            case .refresh: return 3
            case .coalesced: return 2
            case .stale: return 1
            case .hit: return 0
            }
        }
        return outcomes.max { rank($0) < rank($1) } ?? .hit
    }
}

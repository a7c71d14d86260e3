/// Chooses the window's share while the cache runs, by the hit rate: the window stands on a ladder of shares and
/// moves to the rung that hits most often. Where Caffeine compares the hit rate of one sample of requests with the
/// previous sample's (at another window), the rates compared here come from the same requests: miniature caches
/// (`ShadowCache`), one at each rung, replay the requests of a sample of the keys (chosen by hash, so that a miniature
/// sees every request for its keys) with the policy's own frequencies. After each sample of requests the window moves
/// to the best rung once its smoothed hit rate beats the current one's by a point and it did better in each of the
/// last two samples, so that the noise of a workload without a clear winner (a loop) does not move it.
///
/// Caffeine's own climber (step 6.25 % of the capacity, decay 0.98, restart on a 5-point change, a sample of ten
/// requests per entry) was tried first on `make bench-efficiency`'s traces: consecutive samples differ by more than
/// the window's effect, so it wandered, losing up to 23 points to the better of LRU and a fixed window
/// (docs/eviction.md). Comparing windows on the same requests is what makes the signal clean (Caffeine's simulator's
/// `MiniSimClimber` does the same).
struct WindowClimber: Sendable {
    /// The shares the miniatures run at; the first is the initial window (Caffeine's 1 %), the last is LRU.
    static let shares: [Double] = [0.01, 0.05, 0.2, 0.5, 1]
    /// Entries a miniature holds at most, about.
    static let miniatureEntries = 1_000
    /// Requests in a sample: one per eight entries, at least this many.
    static let minimumPeriod = 500
    /// Requests the miniatures replayed in a sample, at least (they replay a sample of the keys: at 4,000 entries a
    /// quarter). With 125, what 500 requests gave them at 4,000 entries, their hit rates moved by points from one
    /// sample to the next, and on a loop the window wandered. Samples four times as long made a rung at a time too
    /// slow for a hot set that moves: the window now goes to the best rung at once (`MiniSimClimber`'s way).
    static let minimumReplayed = 500
    /// Weight of the latest sample in a miniature's smoothed hit rate.
    static let smoothing = 0.25
    /// How much better (hit rate, smoothed) a share must do than the current one to replace it.
    static let margin = 0.01
    /// How many samples in a row it must have done better.
    static let streak = 2

    private let capacity: EvictionCapacity
    private var miniatures: [ShadowCache] = []
    private var scores: [Double]
    private var streaks: [Int]
    /// The miniatures replay the keys whose hash's top `samplingBits` bits are 0: one key in 2^bits.
    private var samplingBits = 0
    private(set) var requests = 0
    /// Requests of this sample the miniatures replayed.
    private var replayed = 0
    /// The index in `shares` of the window's share.
    private(set) var current = 0

    init(capacity: EvictionCapacity) {
        self.capacity = capacity
        scores = Self.shares.map { _ in .nan }
        streaks = Self.shares.map { _ in 0 }
        let expected = capacity.count == .max ? 0 : capacity.count
        while expected >> samplingBits > Self.miniatureEntries, samplingBits < 24 { samplingBits += 1 }
        makeMiniatures()
    }

    var share: Double { Self.shares[current] }

    /// Counts a request (a hit or a new entry) and replays it in the miniatures if its key is sampled.
    mutating func record(_ hash: UInt32, weight: Int, frequencies: FrequencySketch) {
        requests += 1
        guard samplingBits == 0 || (hash &* 0x9E37_79B1) >> (32 - samplingBits) == 0 else { return }
        replayed += 1
        for index in miniatures.indices { miniatures[index].record(hash, weight: weight, frequencies: frequencies) }
    }

    /// Once a sample of requests is complete: the new share, if the window should move to another; else `nil`.
    /// `count` is the policy's number of entries (the sample's length and the miniatures' scale follow it).
    mutating func adapt(count: Int) -> Double? {
        guard requests >= max(Self.minimumPeriod, count / 8), replayed >= Self.minimumReplayed else { return nil }
        (requests, replayed) = (0, 0)
        if count >> samplingBits > 2 * Self.miniatureEntries, samplingBits < 24 {
            // More entries than the scale the miniatures were made for: a sparser sample, miniatures anew.
            while count >> samplingBits > Self.miniatureEntries, samplingBits < 24 { samplingBits += 1 }
            makeMiniatures()
            return nil
        }
        let rates = miniatures.map(\.hitRate)
        for index in miniatures.indices {
            miniatures[index].resetCounts()
            streaks[index] = rates[index] > rates[current] ? streaks[index] + 1 : 0
            scores[index] = scores[index].isNaN ? rates[index] : scores[index] + Self.smoothing * (rates[index] - scores[index])
        }
        // The best of the other rungs, if it beat the current share.
        let others = scores.indices.filter { $0 != current }
        guard let best = others.max(by: { scores[$0] < scores[$1] }),
            scores[best] - scores[current] > Self.margin, streaks[best] >= Self.streak
        else { return nil }
        current = best
        return share
    }

    private mutating func makeMiniatures() {
        let scaled = EvictionCapacity(
            weight: capacity.weight >> samplingBits, count: capacity.count == .max ? .max : capacity.count >> samplingBits)
        miniatures = Self.shares.map { ShadowCache(capacity: scaled, window: $0) }
        scores = Self.shares.map { _ in .nan }
        streaks = Self.shares.map { _ in 0 }
    }
}

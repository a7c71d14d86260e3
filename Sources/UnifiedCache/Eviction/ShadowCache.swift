/// A miniature of the policy at a fixed window share, for `WindowClimber`: it replays the requests of the sampled keys
/// with the parent's frequencies, so that its admissions are the ones the parent would make.
struct ShadowCache: Sendable {
    private var policy: TinyLFUPolicy<UInt32>
    private var slots: [UInt32: Int] = [:]
    /// Each slot's key.
    private var keys: [UInt32] = []
    private var victims: [Int] = []
    private var hits = 0
    private var requests = 0

    init(capacity: EvictionCapacity, window: Double) {
        policy = TinyLFUPolicy<UInt32>(miniatureOf: capacity, window: window)
    }

    var hitRate: Double { Double(hits) / Double(max(1, requests)) }

    mutating func record(_ hash: UInt32, weight: Int, frequencies: FrequencySketch) {
        requests += 1
        if let slot = slots[hash] {
            policy.recordAccess(slot)
            hits += 1
            return
        }
        let slot = policy.insert(hash: hash, weight: weight)
        slots[hash] = slot
        if slot < keys.count { keys[slot] = hash } else { keys.append(hash) }
        victims.removeAll(keepingCapacity: true)
        policy.evict(keeping: slot, into: &victims, frequencies: frequencies)
        for victim in victims { slots[keys[victim]] = nil }
    }

    mutating func resetCounts() {
        hits = 0
        requests = 0
    }
}

import EfficiencyTraces

@testable import UnifiedCache

/// Replays keys through a policy as a tier would (a hit records an access, a miss stores the key), with weight 1
/// unless told; returns the hit ratio.
struct PolicyReplay<Policy: EvictionPolicy<Int>> {
    var policy: Policy
    private(set) var slots: [Int: Int] = [:]
    private var keys: [Int: Int] = [:]
    private var victims: [Int] = []
    private(set) var evicted: [Int] = []

    init(_ policy: Policy) { self.policy = policy }

    /// Whether `key` was a hit.
    @discardableResult
    mutating func request(_ key: Int, weight: Int = 1) -> Bool {
        if let slot = slots[key] {
            policy.recordAccess(slot)
            return true
        }
        let slot = policy.insert(key, weight: weight)
        slots[key] = slot
        keys[slot] = key
        victims.removeAll(keepingCapacity: true)
        policy.evict(keeping: slot, into: &victims)
        for victim in victims {
            if let gone = keys.removeValue(forKey: victim) {
                slots[gone] = nil
                evicted.append(gone)
            }
        }
        return false
    }

    /// Forgets `key` (its slot was removed from the policy).
    mutating func forget(_ key: Int) {
        if let slot = slots.removeValue(forKey: key) { keys[slot] = nil }
    }

    mutating func hitRatio(_ trace: some Sequence<Int>) -> Double {
        var hits = 0
        var requests = 0
        for key in trace {
            requests += 1
            if request(key) { hits += 1 }
        }
        return Double(hits) / Double(max(1, requests))
    }
}

/// Synthetic workloads for the policies' tests: `make bench-efficiency`'s traces, as `Int` keys.
enum Workload {
    /// A loop over `span` keys, `length` requests.
    static func loop(span: Int, length: Int) -> [Int] { (0..<length).map { $0 % span } }

    /// Recently asked keys asked again (an LRU stack, log-uniform depths up to 30,000), a new key one time in four.
    static func recency(length: Int, seed: UInt64) -> [Int] {
        TraceShape.recency.generate(length: length, size: 0, seed: seed).map { Int($0) + 1_000_000 }
    }
}

import Foundation
import UnifiedCache

/// The synthetic traces `make bench-efficiency` replays (and the policies' tests): keys as numbers, generated from a seed, so that every run
/// asks the same questions.
public enum TraceShape: String, CaseIterable, Sendable {
    /// Zipf(0.9) over 100,000 keys.
    case zipf
    /// The same, with a scan of 3,000 keys never asked again every 10,000 requests (a daily warm-up of every user).
    case zipfScan = "zipf+scan"
    /// A loop over 1.5 times the cache's entries.
    case loop
    /// 80 % of requests to a hot set of 2,000 keys that moves every 20,000 requests, the rest to a million others.
    case movingHotSet = "moving-hot-set"
    /// Recently asked keys asked again (an LRU stack whose depths are log-uniform), a new key one time in four: where
    /// recency is what matters and LRU is hard to beat.
    case recency
    /// Half the requests from `zipf`, half from `recency` (other keys), interleaved at random.
    case mixed

    /// Whether the trace depends on the cache's size (the loop's length does).
    public var dependsOnSize: Bool { self == .loop }

    /// The trace's keys, `length` requests.
    public func generate(length: Int, size: Int, seed: UInt64) -> [Int32] {
        var random = PolicyRandom(seed: seed &+ UInt64(dependsOnSize ? size : 0) &* 0x9E37_79B9)
        switch self {
        case .zipf:
            let zipf = ZipfSampler(keys: 100_000, exponent: 0.9)
            return (0..<length).map { _ in Int32(zipf.next(&random)) }
        case .zipfScan:
            let zipf = ZipfSampler(keys: 100_000, exponent: 0.9)
            var keys: [Int32] = []
            keys.reserveCapacity(length)
            var fresh: Int32 = 1_000_000
            while keys.count < length {
                for _ in 0..<7_000 where keys.count < length { keys.append(Int32(zipf.next(&random))) }
                for _ in 0..<3_000 where keys.count < length {
                    keys.append(fresh)
                    fresh += 1
                }
            }
            return keys
        case .loop:
            let span = size * 3 / 2
            return (0..<length).map { Int32($0 % span) }
        case .movingHotSet:
            return (0..<length).map { index in
                if random.next() % 5 == 0 { return Int32(10_000_000 + random.next() % 1_000_000) }
                return Int32(index / 20_000 * 2_000 + Int(random.next() % 2_000))
            }
        case .recency:
            return RecencyStack.generate(length: length, newKeyOdds: 4, maximumDepth: 30_000, random: &random)
        case .mixed:
            let zipf = ZipfSampler(keys: 100_000, exponent: 0.9)
            let recent = RecencyStack.generate(length: length, newKeyOdds: 4, maximumDepth: 30_000, random: &random)
            var next = 0
            return (0..<length).map { _ in
                if random.next() % 2 == 0 { return Int32(zipf.next(&random)) }
                defer { next += 1 }
                return 20_000_000 + recent[next]
            }
        }
    }
}

/// Draws ranks 0..<keys with probability proportional to 1 / (rank + 1)^exponent, scattered over the key space.
public struct ZipfSampler {
    private let cumulative: [Double]
    private let permutation: [Int]

    public init(keys: Int, exponent: Double) {
        var total = 0.0
        var cumulative: [Double] = []
        cumulative.reserveCapacity(keys)
        for rank in 1...keys {
            total += 1 / pow(Double(rank), exponent)
            cumulative.append(total)
        }
        self.cumulative = cumulative.map { $0 / total }
        var random = PolicyRandom(seed: UInt64(keys))
        permutation = Array(0..<keys).shuffled(using: &random)
    }

    public func next(_ random: inout PolicyRandom) -> Int {
        let target = Double(random.next() >> 11) / Double(1 << 53)
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < target { low = middle + 1 } else { high = middle }
        }
        return permutation[low]
    }
}

/// An LRU stack model: each request is a new key (one time in `newKeyOdds`) or the key at a log-uniform depth of
/// the stack of keys asked before, which then moves to the top.
public enum RecencyStack {
    public static func generate(length: Int, newKeyOdds: UInt64, maximumDepth: Int, random: inout PolicyRandom) -> [Int32] {
        var stack: [Int32] = []  // the top is the end
        stack.reserveCapacity(maximumDepth + 1)
        var next: Int32 = 0
        var keys: [Int32] = []
        keys.reserveCapacity(length)
        for _ in 0..<length {
            let key: Int32
            if stack.isEmpty || random.next() % newKeyOdds == 0 {
                key = next
                next += 1
                if stack.count >= maximumDepth { stack.removeFirst() }
            } else {
                let unit = Double(random.next() >> 11) / Double(1 << 53)
                let depth = min(stack.count, Int(pow(Double(stack.count), unit)))
                key = stack.remove(at: stack.count - depth)
            }
            stack.append(key)
            keys.append(key)
        }
        return keys
    }
}

/// A small deterministic PRNG (SplitMix64) seeded from a stable FNV-1a hash of its inputs.
///
/// Swift's `Hasher` is randomised per process, so it must never seed demo data:
/// the same (user, date, parameters) has to give the same bytes in every run.
struct DemoRandom: RandomNumberGenerator {
    private var state: UInt64

    /// Seeds from the parts, in order; `["a", "bc"]` and `["ab", "c"]` seed differently.
    init(_ parts: String...) {
        self.init(parts: parts)
    }

    init(parts: [String]) {
        state = Self.stableHash(parts)
    }

    /// 64-bit FNV-1a over the UTF-8 bytes of each part, with a separator byte between parts.
    static func stableHash(_ parts: [String]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for part in parts {
            for byte in part.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
            hash ^= 0x1f
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A double in `range`, rounded to `places` decimals so the JSON stays short.
    mutating func double(in range: ClosedRange<Double>, places: Int = 1) -> Double {
        let raw = Double.random(in: range, using: &self)
        return raw.rounded(places: places)
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// `true` with the given probability.
    mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    mutating func pick<T>(_ options: [T]) -> T? {
        options.randomElement(using: &self)
    }
}

extension Double {
    func rounded(places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<max(0, places) { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

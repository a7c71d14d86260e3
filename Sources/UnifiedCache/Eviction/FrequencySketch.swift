/// How often each key was asked for, approximately (Caffeine's `FrequencySketch`, a count-min sketch): depth 4, 4-bit
/// counters packed sixteen to a 64-bit word, the four counters of a key in one 64-byte block. Every counter halves
/// once ten times the capacity increments were counted, so that old popularity fades (aging).
///
/// The width follows the number of entries (a power of two of words, at least one word per entry): a policy whose
/// capacity is in bytes learns its entry count only as entries come, so the sketch grows with it, starting over each
/// time it doubles, as Caffeine's does for a weighted cache.
struct FrequencySketch: Sendable {
    static let minimumCapacity = 256
    /// A counter's most it can count.
    static let maximumFrequency = 15
    private static let resetMask: UInt64 = 0x7777_7777_7777_7777
    private static let oneMask: UInt64 = 0x1111_1111_1111_1111

    private var table: [UInt64] = []
    private var blockMask = 0
    /// Increments between two halvings.
    private(set) var sampleSize = 0
    /// Increments since the last halving.
    private(set) var size = 0

    var isInitialized: Bool { !table.isEmpty }
    /// The table's length in words.
    var width: Int { table.count }

    /// Makes the sketch fit `capacity` entries: a wider table (its counts start over) when it is too narrow, else
    /// only a new sample size.
    mutating func ensureCapacity(_ capacity: Int) {
        let maximum = max(min(capacity, Int(Int32.max) >> 1), Self.minimumCapacity)
        let sample = 10 * maximum
        if table.count >= maximum {
            if sample != sampleSize {
                sampleSize = sample
                size = min(size, sample - 1)
            }
            return
        }
        let length = 1 << (Int.bitWidth - (maximum - 1).leadingZeroBitCount)
        table = Array(repeating: 0, count: length)
        blockMask = (length >> 3) - 1
        sampleSize = sample
        size = 0
    }

    /// The estimated number of times `hash` was counted since it aged, 0 to 15.
    func frequency(_ hash: UInt32) -> Int {
        guard isInitialized else { return 0 }
        let blockHash = Self.spread(hash)
        let counterHash = Self.rehash(blockHash)
        let block = (Int(blockHash) & blockMask) << 3
        var frequency = Self.maximumFrequency
        table.withUnsafeBufferPointer { table in
            for row in 0..<4 {
                let (slot, shift) = Self.counter(counterHash, row: row, block: block)
                frequency = min(frequency, Int((table[slot] &>> shift) & 0xF))
            }
        }
        return frequency
    }

    /// Counts `hash` once in each row (a counter at 15 stays there); halves every counter once `sampleSize` were.
    mutating func increment(_ hash: UInt32) {
        guard isInitialized else { return }
        let blockHash = Self.spread(hash)
        let counterHash = Self.rehash(blockHash)
        let block = (Int(blockHash) & blockMask) << 3
        var added = false
        table.withUnsafeMutableBufferPointer { table in
            for row in 0..<4 {
                let (slot, shift) = Self.counter(counterHash, row: row, block: block)
                let mask: UInt64 = 0xF &<< shift
                if table[slot] & mask != mask {
                    table[slot] &+= 1 &<< shift
                    added = true
                }
            }
        }
        if added {
            size += 1
            if size >= sampleSize { reset() }
        }
    }

    /// Row `row`'s counter of a key: its word in the key's block and the counter's bit offset in it. Masking shifts
    /// (`&>>`, `&<<`): every amount here is in range, and `>>` would test for one past the width on every row.
    @inline(__always)
    private static func counter(_ counterHash: UInt32, row: Int, block: Int) -> (slot: Int, shift: UInt64) {
        let bits = counterHash &>> UInt32(truncatingIfNeeded: row &<< 3)
        return (block &+ Int(bits & 1) &+ (row &<< 1), UInt64((bits &>> 1) & 15) &<< 2)
    }

    /// Halves every counter; `size` loses what the halving dropped (the odd counters' lost halves).
    private mutating func reset() {
        var odd = 0
        for index in table.indices {
            odd += (table[index] & Self.oneMask).nonzeroBitCount
            table[index] = (table[index] >> 1) & Self.resetMask
        }
        size = max(0, (size - (odd >> 2)) >> 1)
    }

    static func spread(_ value: UInt32) -> UInt32 {
        var x = value
        x ^= x >> 17
        x &*= 0xED5A_D4BB
        x ^= x >> 11
        x &*= 0xAC4C_1B51
        x ^= x >> 15
        return x
    }

    static func rehash(_ value: UInt32) -> UInt32 {
        var x = value &* 0x3184_8BAB
        x ^= x >> 14
        return x
    }
}

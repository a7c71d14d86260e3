import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where hits are recorded without the policy's lock (Caffeine's striped read buffer): rings of handles, each written
/// by the threads that hash to it with one compare-and-swap, and read in a batch by whoever holds the policy's lock
/// next. It is lossy: a full ring, or a lost race for a slot, drops the record (the policy's order and frequencies
/// are estimates anyway; a miss is never dropped, it goes through the lock).
///
/// One ring is in use until threads contend for one (a lost race for a slot), and then twice as many, up to
/// `rings` (as Caffeine's `StripedBuffer` grows on contention): a batch is drained ring by ring, so hits recorded in
/// several rings reach the policy out of the order they came in. A client whose requests are answered by one thread
/// and then another, one at a time, contends with nobody, and its hits now reach the policy in its order: with every
/// ring in use from the start, a loop through 4,000 entries kept about 0.7 points less (2026-12-06).
final class ReadBuffer: Sendable {
    /// Slots of one ring.
    static let ringSize = 16

    /// One ring: `tail` counts handles written, `head` handles read; a slot holds 0 until written and after read.
    final class Ring: Sendable {
        let head = Atomic<Int>(0)
        let tail = Atomic<Int>(0)
        let slots: InlineArray<16, Atomic<UInt64>> = InlineArray { _ in Atomic<UInt64>(0) }
    }

    private let rings: [Ring]
    /// The rings in use less one (a power of two less one): grows on contention, never shrinks.
    private let mask = Atomic<UInt>(0)

    /// At most `rings`, rounded up to a power of two (four per processor by default).
    init(rings: Int = 4 * ReadBuffer.processors) {
        var count = 1
        while count < rings { count <<= 1 }
        self.rings = (0..<count).map { _ in Ring() }
    }

    /// The rings in use.
    var ringsInUse: Int { Int(mask.load(ordering: .relaxed)) + 1 }

    static var processors: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Records `handle` (never 0); returns `true` when its ring was full (the caller should drain, if it can).
    @discardableResult
    func record(_ handle: UInt64) -> Bool {
        // The ring read in place, as `drain` reads them: bound to a constant, it was retained and released per hit.
        let mask = mask.load(ordering: .relaxed)
        let index = Int(Self.threadHash() & mask)
        let tail = rings[index].tail.load(ordering: .relaxed)
        let head = rings[index].head.load(ordering: .acquiring)
        guard tail &- head < Self.ringSize else { return true }
        guard rings[index].tail.compareExchange(expected: tail, desired: tail &+ 1, ordering: .relaxed).exchanged else {
            spread(from: mask)
            return false
        }
        rings[index].slots[tail & (Self.ringSize - 1)].store(handle, ordering: .releasing)
        return false
    }

    /// Another thread won the race for a slot of a ring: twice as many rings from now on, if there are more (one
    /// thread's CAS does it; another's, for the same contention, finds it done).
    func spread(from mask: UInt) {
        guard Int(mask) + 1 < rings.count else { return }
        _ = self.mask.compareExchange(expected: mask, desired: mask << 1 | 1, ordering: .relaxed)
    }

    /// Appends every recorded handle to `handles`, ring by ring, oldest first in each ring; the caller holds the
    /// policy's lock (one drainer at a time).
    func drain(into handles: inout [UInt64]) {
        // By index, each ring read in place: `for ring in rings` retained and released every ring, the array too.
        // Only the rings in use: a ring past them has never been written (they only grow).
        for index in 0..<ringsInUse {
            var head = rings[index].head.load(ordering: .relaxed)
            let tail = rings[index].tail.load(ordering: .acquiring)
            guard head != tail else { continue }
            while head != tail {
                let slot = head & (Self.ringSize - 1)
                let handle = rings[index].slots[slot].load(ordering: .acquiring)
                // Claimed but not written yet: the rest waits for the next drain.
                guard handle != 0 else { break }
                rings[index].slots[slot].store(0, ordering: .relaxed)
                handles.append(handle)
                head &+= 1
            }
            rings[index].head.store(head, ordering: .releasing)
        }
    }

    /// The calling thread, spread over the rings (a thread keeps its ring).
    private static func threadHash() -> UInt {
        (UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))) &* 0x9E37_79B9_7F4A_7C15) >> 40
    }
}

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where hits are recorded without the policy's lock (Caffeine's striped read buffer): a few rings of handles, each
/// written by the threads that hash to it with one compare-and-swap, and read in a batch by whoever holds the
/// policy's lock next. It is lossy: a full ring, or a lost race for a slot, drops the record (the policy's order and
/// frequencies are estimates anyway; a miss is never dropped, it goes through the lock).
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
    private let mask: UInt

    /// `rings` rounds up to a power of two (four per processor by default).
    init(rings: Int = 4 * ReadBuffer.processors) {
        var count = 1
        while count < rings { count <<= 1 }
        self.rings = (0..<count).map { _ in Ring() }
        mask = UInt(count - 1)
    }

    static var processors: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Records `handle` (never 0); returns `true` when its ring was full (the caller should drain, if it can).
    @discardableResult
    func record(_ handle: UInt64) -> Bool {
        // The ring read in place, as `drain` reads them: bound to a constant, it was retained and released per hit.
        let index = Int(Self.threadHash() & mask)
        let tail = rings[index].tail.load(ordering: .relaxed)
        let head = rings[index].head.load(ordering: .acquiring)
        guard tail &- head < Self.ringSize else { return true }
        guard rings[index].tail.compareExchange(expected: tail, desired: tail &+ 1, ordering: .relaxed).exchanged else {
            return false
        }
        rings[index].slots[tail & (Self.ringSize - 1)].store(handle, ordering: .releasing)
        return false
    }

    /// Appends every recorded handle to `handles`, ring by ring, oldest first in each ring; the caller holds the
    /// policy's lock (one drainer at a time).
    func drain(into handles: inout [UInt64]) {
        // By index, each ring read in place: `for ring in rings` retained and released every ring, the array too.
        for index in rings.indices {
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

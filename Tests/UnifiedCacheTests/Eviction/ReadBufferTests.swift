import NIOConcurrencyHelpers
import Testing
import TestSupport

@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct ReadBufferTests {
    /// Hits recorded by threads taking turns (a client's requests answered one at a time, by whichever thread) reach
    /// the policy in the order they came: nobody contended, so one ring holds them all. With every ring in use from
    /// the start they came ring by ring, out of their order.
    @Test func hitsOfThreadsTakingTurnsDrainInTheirOrder() async {
        let buffer = ReadBuffer(rings: 8)
        let handles = Array(1...UInt64(ReadBuffer.ringSize))
        for handle in handles {
            let full = await onThread { buffer.record(handle) }
            #expect(!full)
        }
        var drained: [UInt64] = []
        buffer.drain(into: &drained)
        #expect(drained == handles)
        #expect(buffer.ringsInUse == 1)
    }

    /// A lost race for a slot spreads the records over twice as many rings, up to the most there are; a second
    /// thread that lost the same race finds it done.
    @Test func contentionSpreadsTheRings() {
        let buffer = ReadBuffer(rings: 4)
        buffer.spread(from: 0)
        #expect(buffer.ringsInUse == 2)
        buffer.spread(from: 0)
        #expect(buffer.ringsInUse == 2)
        buffer.spread(from: 1)
        #expect(buffer.ringsInUse == 4)
        buffer.spread(from: 3)
        #expect(buffer.ringsInUse == 4)
    }

    /// Threads recording at once while another drains: every handle drained was recorded, none twice, and a thread
    /// told its ring was full drained it as the tier's readers do.
    @Test func concurrentRecordsAreDrainedOnceEach() async {
        let buffer = ReadBuffer(rings: 8)
        // One drainer at a time, as the policy's lock makes it in the tier.
        let drained = NIOLockedValueBox<[UInt64]>([])
        let drain: @Sendable () -> Void = { drained.withLockedValue { buffer.drain(into: &$0) } }
        let threads = 4
        let perThread: UInt64 = 20_000
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<UInt64(threads) {
                group.addTask {
                    await onThread {
                        for index in 1...perThread where buffer.record(thread * perThread + index) { drain() }
                    }
                }
            }
        }
        drain()
        let all = drained.withLockedValue { $0 }
        #expect(Set(all).count == all.count)
        #expect(all.allSatisfy { (1...UInt64(threads) * perThread).contains($0) })
        #expect(!all.isEmpty)
    }
}

import Clocks
import NIOConcurrencyHelpers
import Testing
import TestSupport

/// The timer shapes over a clock the test moves, and the blocking helpers.
struct TimerTests {
    @Test func aTimerFiresAtItsDeadlineAndNotBefore() async {
        let clock = ManualClock()
        let elapsed = Elapsed(clock)
        let fired = Latch()
        let timer = elapsed.timer(at: .seconds(5)) { fired.open() }
        await waitUntil("the timer sleeps") { clock.sleepers == 1 }
        clock.advance(by: .milliseconds(4999))
        #expect(!fired.isOpen)
        clock.advance(by: .milliseconds(1))
        await timer.value
        #expect(fired.isOpen)
    }

    @Test func aCancelledTimerDoesNotFire() async {
        let clock = ManualClock()
        let fired = Latch()
        let timer = Elapsed(clock).timer(at: .seconds(1)) { fired.open() }
        timer.cancel()
        await timer.value
        clock.advance(by: .seconds(2))
        #expect(!fired.isOpen)
    }

    @Test func repeatingTicksEveryIntervalUntilTheTickStopsIt() async {
        let clock = ManualClock()
        let (loop, ticks) = countingLoop(on: clock, every: .seconds(10), stoppingAfter: 3)
        for expected in 1...3 {
            await waitUntil("the loop sleeps") { clock.sleepers == 1 }
            #expect(ticks.withLockedValue { $0 } == expected - 1)
            clock.advance(by: .seconds(10))
            await waitUntil("tick \(expected)") { ticks.withLockedValue { $0 } == expected }
        }
        await loop.value  // the third tick returned false
        #expect(clock.sleepers == 0)
    }

    @Test func repeatingStopsWhenItsTaskIsCancelled() async {
        let clock = ManualClock()
        let (loop, ticks) = countingLoop(on: clock, every: .seconds(1))
        await waitUntil("the loop sleeps") { clock.sleepers == 1 }
        loop.cancel()
        await loop.value
        clock.advance(by: .seconds(5))
        #expect(ticks.withLockedValue { $0 } == 0)
    }

    /// A repeating loop on `clock` that counts its ticks, and stops itself after `limit` of them when one is given.
    private func countingLoop(
        on clock: ManualClock, every interval: Duration, stoppingAfter limit: Int = .max
    ) -> (Task<Void, Never>, NIOLockedValueBox<Int>) {
        let ticks = NIOLockedValueBox(0)
        let loop = Task {
            await Elapsed(clock).repeating(every: interval) {
                ticks.withLockedValue { $0 += 1 }
                return ticks.withLockedValue { $0 } < limit
            }
        }
        return (loop, ticks)
    }

    @Test func blockingWorkReturnsItsResultToTheAwaitingTask() async {
        #expect(await Blocking.run(label: "test.blocking") { (1...10).reduce(0, +) } == 55)
    }

    @Test func aBlockingSleepOfNoTimeReturns() {
        Blocking.sleep(for: .zero)
        Blocking.sleep(for: .seconds(-1))
    }
}

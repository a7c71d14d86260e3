import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import RedisTier

/// `FillWaiters`: a fill announced between a waiter's look in Redis and its wait is not lost (the wait returns at
/// once instead of after a poll interval, which here never passes: the clock is moved by hand, and a lost wake fails
/// the test by its time limit).
@Suite(.timeLimit(.minutes(1))) struct FillWaitersTests {
    @Test func aWakeBetweenArmingAndWaitingIsNotLost() async {
        let waiters = FillWaiters(clock: ManualClock())
        let ticket = waiters.arm("k")
        waiters.wake("k")
        await waiters.wait(ticket, atMost: .seconds(3600))
    }

    @Test func aWakeOfEverythingBetweenArmingAndWaitingIsNotLost() async {
        let waiters = FillWaiters(clock: ManualClock())
        let first = waiters.arm("a")
        let second = waiters.arm("b")
        waiters.wakeAll()
        await waiters.wait(first, atMost: .seconds(3600))
        await waiters.wait(second, atMost: .seconds(3600))
    }

    /// Another key's fill does not count: the wait lasts its poll interval on the waiters' clock.
    @Test func anotherKeysWakeDoesNotCount() async {
        let clock = ManualClock()
        let waiters = FillWaiters(clock: clock)
        let ticket = waiters.arm("k")
        waiters.wake("other")
        let returned = NIOLockedValueBox(false)
        let waiting = Task {
            await waiters.wait(ticket, atMost: .milliseconds(20))
            returned.withLockedValue { $0 = true }
        }
        await waitUntil("the wait's bound sleeps on the clock") { clock.sleepers == 1 }
        clock.advance(by: .milliseconds(19))
        #expect(clock.sleepers == 1)
        #expect(!returned.withLockedValue { $0 })
        clock.advance(by: .milliseconds(1))
        await waiting.value
        #expect(returned.withLockedValue { $0 })
    }
}

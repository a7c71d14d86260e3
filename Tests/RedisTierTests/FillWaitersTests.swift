import Testing

@testable import RedisTier

/// `FillWaiters`: a fill announced between a waiter's look in Redis and its wait is not lost (the wait returns at
/// once instead of after a poll interval, which here is an hour: a lost wake fails the test by its time limit).
@Suite(.timeLimit(.minutes(1))) struct FillWaitersTests {
    @Test func aWakeBetweenArmingAndWaitingIsNotLost() async {
        let waiters = FillWaiters()
        let ticket = waiters.arm("k")
        waiters.wake("k")
        await waiters.wait(ticket, atMost: .seconds(3600))
    }

    @Test func aWakeOfEverythingBetweenArmingAndWaitingIsNotLost() async {
        let waiters = FillWaiters()
        let first = waiters.arm("a")
        let second = waiters.arm("b")
        waiters.wakeAll()
        await waiters.wait(first, atMost: .seconds(3600))
        await waiters.wait(second, atMost: .seconds(3600))
    }

    /// Another key's fill does not count: the wait lasts its poll interval.
    @Test func anotherKeysWakeDoesNotCount() async {
        let waiters = FillWaiters()
        let ticket = waiters.arm("k")
        waiters.wake("other")
        let start = ContinuousClock.now
        await waiters.wait(ticket, atMost: .milliseconds(20))
        #expect(ContinuousClock.now - start >= .milliseconds(20))
    }
}

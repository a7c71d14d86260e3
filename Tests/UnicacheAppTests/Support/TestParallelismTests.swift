import Foundation
import TestSupport
import Testing

/// The suite runs a bounded number of tests at once (TestParallelism's constructor), not all of them: unbounded, on
/// two loaded CPUs, one-line unit tests waited past their minute and live servers' answers past their clients'
/// timeouts behind the rest of the suite's work on the cooperative pool.
@Suite struct TestParallelismTests {
    @Test func theWidthIsBoundedBeforeTheRunStarts() {
        let given = ProcessInfo.processInfo.environment["SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"]
        #expect(given != nil)
        #expect(testParallelismWidth > 0)
        #expect(Int(given ?? "") == testParallelismWidth)
    }
}

import Access
import NIOConcurrencyHelpers

/// A wall clock the test moves.
public final class TestClock: AccessClock {
    public static let start = 1_800_000_000.0
    private let time = NIOLockedValueBox(TestClock.start)

    public init() {}

    public func now() -> Double { time.withLockedValue { $0 } }

    public func advance(_ seconds: Double) { time.withLockedValue { $0 += seconds } }
}

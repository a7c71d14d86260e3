import Access
import Synchronization

/// A wall clock the test moves.
public final class TestClock: AccessClock {
    public static let start = 1_800_000_000.0
    private let time = Mutex(TestClock.start)

    public init() {}

    public func now() -> Double { time.withLock { $0 } }

    public func advance(_ seconds: Double) { time.withLock { $0 += seconds } }
}

import Clocks
import Foundation
import NIOConcurrencyHelpers
import ClocksTesting

/// The access tests' time, moved by hand: a wall clock (the time tokens are checked at, and a key file's checks are
/// spaced by) and the monotonic clock a URL key set's refresh timer runs on, advanced together.
public final class TestClock: WallClock {
    public static let start = 1_800_000_000.0

    private let time = NIOLockedValueBox(TestClock.start)

    /// The monotonic clock to give the code under test beside this one.
    public let monotonic = ManualClock()

    public init() {}

    public func now() -> Date { Date(timeIntervalSince1970: time.withLockedValue { $0 }) }

    /// Moves both clocks on and wakes every sleeper whose deadline it reaches.
    public func advance(_ seconds: Double) {
        time.withLockedValue { $0 += seconds }
        monotonic.advance(by: .seconds(seconds))
    }

    /// Sets the wall clock back (as an operator or NTP may); the monotonic clock does not move.
    public func setBack(_ seconds: Double) {
        time.withLockedValue { $0 -= seconds }
    }

    /// How many tasks sleep on the monotonic clock now (a test waits for a timer to be asleep before it moves time).
    public var sleeperCount: Int { monotonic.sleepers }
}

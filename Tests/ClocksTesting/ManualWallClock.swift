import Clocks
import Foundation
import NIOConcurrencyHelpers

/// A wall clock tests move by hand instead of sleeping; code under test takes it as its `any WallClock`.
public final class ManualWallClock: WallClock {
    private let current: NIOLockedValueBox<Date>
    public init(_ start: Date) { current = NIOLockedValueBox(start) }
    public func now() -> Date { current.withLockedValue { $0 } }
    public func set(_ date: Date) { current.withLockedValue { $0 = date } }
    public func advance(by seconds: TimeInterval) { current.withLockedValue { $0 += seconds } }
}

import Foundation
import NIOConcurrencyHelpers

/// The source of "now" for every expiry and day boundary, injectable so tests never sleep.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system's real time.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock tests move by hand (`package`: a test hook, not API).
package final class ManualWallClock: WallClock {
    private let current: NIOLockedValueBox<Date>
    package init(_ start: Date) { current = NIOLockedValueBox(start) }
    package func now() -> Date { current.withLockedValue { $0 } }
    package func set(_ date: Date) { current.withLockedValue { $0 = date } }
    package func advance(by seconds: TimeInterval) { current.withLockedValue { $0 += seconds } }
}

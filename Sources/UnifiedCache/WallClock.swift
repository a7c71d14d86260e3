import Foundation
import Synchronization

/// The source of "now" for every expiry and day boundary, injectable so tests never sleep.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system's real time.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock tests move by hand.
public final class ManualWallClock: WallClock {
    private let current: Mutex<Date>
    public init(_ start: Date) { current = Mutex(start) }
    public func now() -> Date { current.withLock { $0 } }
    public func set(_ date: Date) { current.withLock { $0 = date } }
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

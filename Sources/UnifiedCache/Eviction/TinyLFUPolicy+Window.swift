/// The window's adaptation (Caffeine's `climb`, `increaseWindow`, `decreaseWindow`).
extension TinyLFUPolicy {
    /// Entries moved between regions in one call at most, as Caffeine's `QUEUE_TRANSFER_THRESHOLD`: a large move
    /// continues in the next calls, so that no call holds the tier's lock for long.
    static var transferLimit: Int { 1_000 }

    /// Moves the window to the climber's share once it chose another, and carries on a move in progress.
    mutating func climb() {
        if let share = climber?.adapt(count: lists.count) {
            let previous = windowShare
            setWindowShare(share)
            growing = windowShare > previous
        }
        rebalanceWindow()
    }

    /// A window over its bound gives its eldest entries to probation; a window whose share just grew takes the main
    /// region's eldest (probation's, then protected's) while they fit. At most `transferLimit` entries a call.
    mutating func rebalanceWindow() {
        var moved = 0
        while moved < Self.transferLimit, Self.exceeds(lists.window, windowLimit), lists.window.eldest >= 0 {
            lists.move(Int(lists.window.eldest), to: .probation)
            moved += 1
        }
        while growing, moved < Self.transferLimit {
            guard let eldest = mainEldest,
                lists.window.weight + lists.weight(of: eldest) <= windowLimit.weight,
                lists.window.count < windowLimit.count
            else {
                growing = false
                break
            }
            lists.move(eldest, to: .window)
            moved += 1
        }
        demoteFromProtected()
    }

    private var mainEldest: Int? {
        if lists.probation.eldest >= 0 { return Int(lists.probation.eldest) }
        return lists.protected.eldest >= 0 ? Int(lists.protected.eldest) : nil
    }
}

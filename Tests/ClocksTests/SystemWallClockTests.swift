import Clocks
import Foundation
import Testing

/// The system's wall clock reads what `Date()` reads.
struct SystemWallClockTests {
    @Test func itReadsTheTimeDateReads() {
        for _ in 0..<1000 {
            let before = Date()
            let now = SystemWallClock().now()
            let after = Date()
            #expect(before <= now && now <= after)
        }
    }
}

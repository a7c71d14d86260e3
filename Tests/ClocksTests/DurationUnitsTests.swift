import Clocks
import Testing

/// The one `Duration` helper: each conversion's rounding and its edges.
struct DurationUnitsTests {
    @Test func secondsAndMillisecondsAsDoubles() {
        #expect(Duration.milliseconds(1500).seconds == 1.5)
        #expect(Duration.milliseconds(1500).milliseconds == 1500)
        #expect(Duration.microseconds(250).milliseconds == 0.25)
        #expect(Duration.zero.seconds == 0)
    }

    @Test func wholeSecondsRoundTowardZeroOrUp() {
        #expect(Duration.milliseconds(1999).wholeSeconds == 1)
        #expect(Duration.milliseconds(1999).wholeSecondsRoundedUp == 2)
        #expect(Duration.seconds(2).wholeSecondsRoundedUp == 2)
        #expect(Duration.nanoseconds(1).wholeSecondsRoundedUp == 1)
    }

    @Test func wholeMillisecondsRoundTowardZeroOrUp() {
        #expect(Duration.microseconds(1_234_567).wholeMilliseconds == 1234)
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == nil)
        #expect(Duration.microseconds(1_234_001).wholeMillisecondsRoundedUp == 1235)
        #expect(Duration.milliseconds(-5).wholeMillisecondsRoundedUp == 0)
    }

    @Test func secondsAndMicrosecondsSplitATimeval() {
        let (seconds, microseconds) = Duration.microseconds(2_500_001).secondsAndMicroseconds
        #expect(seconds == 2)
        #expect(microseconds == 500_001)
        #expect(Duration.nanoseconds(999).secondsAndMicroseconds.microseconds == 0)
    }

    @Test func wholeNanosecondsSaturateAtInt64Max() {
        #expect(Duration.milliseconds(1500).wholeNanosecondsSaturating == 1_500_000_000)
        #expect(Duration.seconds(Int64.max / 2).wholeNanosecondsSaturating == Int64.max)
    }
}

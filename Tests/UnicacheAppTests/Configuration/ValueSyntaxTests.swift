import Settings
import Testing
import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct ValueSyntaxTests {
    @Test(arguments: [
        ("0", 0), ("1", 1), ("12B", 12), ("1KiB", 1024), ("64MiB", 64 << 20), ("1GiB", 1 << 30),
        ("3GiB", 3 << 30), ("007KiB", 7 << 10), ("0GiB", 0), ("9223372036854775807", Int.max),
    ])
    func byteSizes(_ text: String, _ bytes: Int) {
        #expect(ValueSyntax.byteSize(text) == bytes)
    }

    @Test(arguments: [
        "", "B", "12XB", "12KB", "12MB", "12kib", "12 MiB", " 12MiB", "-1", "+1", "1.5GiB", "MiB12", "12MiBs",
        "12TiB", "1e3", "0x10", "١٢", "9223372036854775807KiB", "99999999999999999999",
    ])
    func notByteSizes(_ text: String) {
        #expect(ValueSyntax.byteSize(text) == nil)
    }

    @Test(arguments: [
        ("0ms", Duration.zero), ("250ms", .milliseconds(250)), ("90s", .seconds(90)), ("10m", .seconds(600)),
        ("2h", .seconds(7200)), ("30d", .seconds(30 * 86400)), ("0s", .zero), ("1500ms", .milliseconds(1500)),
    ])
    func durations(_ text: String, _ duration: Duration) {
        #expect(ValueSyntax.duration(text) == duration)
    }

    @Test(arguments: [
        "", "5", "s", "5S", "5sec", "5 s", "1.5s", "-5s", "+5s", "5us", "5w", "5M", "ms5", "5ms5",
        "106751991167301d", "99999999999999999999s",
    ])
    func notDurations(_ text: String) {
        #expect(ValueSyntax.duration(text) == nil)
    }

    /// Saturating, a number too large to hold is the longest duration; anything else that is no duration stays nil.
    @Test func saturatingDurations() {
        #expect(ValueSyntax.duration("99999999999999999999s", saturating: true) == .seconds(Int.max))
        #expect(ValueSyntax.duration("106751991167301d", saturating: true) == .seconds(Int.max))
        #expect(ValueSyntax.duration("9223372036854775808ms", saturating: true) == .milliseconds(Int.max))
        #expect(ValueSyntax.duration("90s", saturating: true) == .seconds(90))
        for text in ["", "-5s", "1.5s", "99999999999999999999", "99999999999999999999w"] {
            #expect(ValueSyntax.duration(text, saturating: true) == nil, "\(text)")
        }
    }

    @Test(arguments: [
        (Duration.milliseconds(200), "200ms"), (.seconds(30), "30s"), (.seconds(90), "90s"), (.seconds(600), "10m"),
        (.seconds(7200), "2h"), (.seconds(86400 * 7), "7d"), (.zero, "0ms"), (.milliseconds(1500), "1500ms"),
    ])
    func durationTextReadsBack(_ duration: Duration, _ text: String) {
        #expect(ValueSyntax.text(of: duration) == text)
        #expect(ValueSyntax.duration(text) == duration)
    }

    @Test func wholeNumbersAreDigitsOnly() {
        #expect(ValueSyntax.wholeNumber("42") == 42)
        #expect(ValueSyntax.wholeNumber("-42") == nil)
        #expect(ValueSyntax.wholeNumber("4 2") == nil)
        #expect(ValueSyntax.wholeNumber("") == nil)
    }
}

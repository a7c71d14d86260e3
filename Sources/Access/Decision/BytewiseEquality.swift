/// The equality of every security decision (CONTRACT §8.9): byte for byte over UTF-8. Swift's `String ==` is
/// Unicode canonical equivalence, under which `"\u{212A}ate"` (KELVIN SIGN) equals `"Kate"`.
enum BytewiseEquality {
    static func equal(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// False when `a` is absent (a claim that is missing or not a string matches nothing).
    static func matches(_ a: String?, _ b: some StringProtocol) -> Bool {
        guard let a else { return false }
        return equal(a, b)
    }
}

import Foundation

/// One field of an invalidation message or a log entry (`InvalidationMessage`), percent-encoded so that no id can be
/// read as another whatever it contains: the characters of a raw cache key (`A–Z a–z 0–9 . _ : , @ -`) stand for
/// themselves, every other UTF-8 byte is `%` and two upper-case hex digits (`auth0|abc` is `auth0%7Cabc`, `%7C` is
/// `%257C`). A field never holds a raw `|`, the messages' separator.
///
/// Each text has exactly one encoding and a reader takes only that one: a field with a raw byte outside the set, a
/// `%` without two upper-case hex digits, an escaped character that stands for itself, or bytes that are not UTF-8
/// once decoded is refused.
enum MessageField {
    private static let literal = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:,@-")

    static func encode(_ text: String) -> String {
        // Nil only for text that is not Unicode, which a Swift String never is.
        text.addingPercentEncoding(withAllowedCharacters: literal) ?? ""
    }

    /// The text `field` encodes, `nil` when it is not a well-formed field.
    static func decode(_ field: Substring) -> String? {
        // Decoded leniently, then held to the one encoding byte for byte (String's `==` would let canonically
        // equivalent Unicode pass).
        guard let text = field.removingPercentEncoding, encode(text).utf8.elementsEqual(field.utf8) else { return nil }
        return text
    }
}

import Foundation

/// Reads one top-level field of a JSON object body, for the resources' body-reading `Expiry` rules.
/// Type-strict through `JSONDecoder`: `1` is not `true`, a number is not a timestamp.
enum JSONFields {
    /// `true`/`false` when the field is a JSON boolean, else `nil`.
    static func bool(_ field: String, in body: [UInt8]) -> Bool? {
        decode(Bool.self, field, in: body)
    }

    /// The field parsed as an ISO 8601 timestamp with `Z` or an offset (fractional seconds allowed).
    static func timestamp(_ field: String, in body: [UInt8]) -> Date? {
        decode(String.self, field, in: body).flatMap(ISO8601Timestamp.parse)
    }

    private static func decode<T: Decodable & Sendable>(_ type: T.Type, _ field: String, in body: [UInt8]) -> T? {
        let decoder = JSONDecoder()
        decoder.userInfo[FieldKey.userInfoKey] = field
        return (try? decoder.decode(OneField<T>.self, from: Data(body)))?.value
    }

    private struct FieldKey: CodingKey {
        // The raw value is a non-empty literal, so the failable initialiser cannot fail.
        static let userInfoKey = CodingUserInfoKey(rawValue: "unicache.field")!
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private struct OneField<T: Decodable>: Decodable {
        var value: T?
        init(from decoder: any Decoder) throws {
            let field = decoder.userInfo[FieldKey.userInfoKey] as? String ?? ""
            let container = try decoder.container(keyedBy: FieldKey.self)
            value = try? container.decodeIfPresent(T.self, forKey: FieldKey(stringValue: field))
        }
    }
}

/// ISO 8601 date-times with `Z` or a numeric offset, with or without fractional seconds.
enum ISO8601Timestamp {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

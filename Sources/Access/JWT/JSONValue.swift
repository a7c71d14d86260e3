import Foundation

/// A JSON value, for JOSE headers, claim sets and JWKs whose members we read by name.
enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    /// The JSON object in `bytes`, or `nil` when they are not one.
    static func object(_ bytes: some DataProtocol) -> [String: JSONValue]? {
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { return nil }
        return object
    }

    var string: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    var number: Double? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// A string, or every string of an array of strings (`aud`, `scp`).
    var strings: [String]? {
        switch self {
        case .string(let string): return [string]
        case .array(let values): return values.compactMap(\.string)
        default: return nil
        }
    }
}

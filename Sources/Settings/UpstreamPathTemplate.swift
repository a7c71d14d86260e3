/// `--upstream-path NAMESPACE=TEMPLATE` (CONTRACT §11.2): the path and query a namespace's fetch asks its domain's
/// upstream for, in place of `{URL}/users/{user}/…`. Placeholders are the route's values, each percent-encoded:
/// `/api/v3/athletes/{user}/activities?days={days}`.
public struct UpstreamPathTemplate: Sendable, Equatable, CustomStringConvertible {
    enum Part: Sendable, Equatable {
        case literal(String)
        case placeholder(String)
    }

    /// Every placeholder a template may name.
    package static let allPlaceholders = ["user", "days", "types", "date", "metric", "weekday", "id", "tz"]

    public let text: String
    let parts: [Part]

    /// Why a template text is not one; `reason` says what to change.
    public struct Invalid: Error, Sendable, Equatable {
        public let reason: String
    }

    /// Parses `text` for a route whose values are `available` (its placeholders).
    public init(_ text: String, available: Set<String>) throws(Invalid) {
        guard text.hasPrefix("/") else { throw Invalid(reason: "\"\(text)\" does not start with /") }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "#" }) else {
            throw Invalid(reason: "it contains a space, a control character or #")
        }
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let literal = rest[..<open]
            guard !literal.contains("}") else { throw Invalid(reason: "a } without its {") }
            if !literal.isEmpty { parts.append(.literal(String(literal))) }
            guard let close = rest[open...].firstIndex(of: "}") else { throw Invalid(reason: "a { without its }") }
            let name = String(rest[rest.index(after: open)..<close])
            guard Self.allPlaceholders.contains(name) else {
                throw Invalid(reason: "{\(name)} is not a placeholder (use \(Self.allPlaceholders.map { "{\($0)}" }.joined(separator: ", ")))")
            }
            guard available.contains(name) else {
                throw Invalid(
                    reason: "this route has no {\(name)} (it has \(available.sorted().map { "{\($0)}" }.joined(separator: ", ")))")
            }
            parts.append(.placeholder(name))
            rest = rest[rest.index(after: close)...]
        }
        guard !rest.contains("}") else { throw Invalid(reason: "a } without its {") }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        self.text = text
        self.parts = parts
    }

    /// The path (and query) for one fetch: each placeholder's value percent-encoded.
    package func expand(user: String?, parameters: [String: String]) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .literal(let literal): out += literal
            case .placeholder(let name):
                out += PathEncoding.segment((name == "user" ? user : parameters[name]) ?? "")
            }
        }
        return out
    }

    public var description: String { text }
}

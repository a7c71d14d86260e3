/// A pre-split route pattern such as `/v1/users/{user}/profile`.
struct RoutePattern: Sendable {
    enum Component: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    let template: String
    let components: [Component]

    init(_ template: String) {
        self.template = template
        var path = Substring(template)
        if path.first == "/" { path = path.dropFirst() }
        components = path.isEmpty ? [] : path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            if segment.count > 2, segment.first == "{", segment.last == "}" {
                return .parameter(String(segment.dropFirst().dropLast()))
            }
            return .literal(String(segment))
        }
    }

    /// Whether `segments` (same count) fit this pattern. Allocates nothing.
    func matches(_ segments: [String]) -> Bool {
        for (component, segment) in zip(components, segments) {
            if case .literal(let literal) = component, literal != segment { return false }
        }
        return true
    }

    /// The `{name}` values of matching `segments`.
    func parameters(_ segments: [String]) -> PathParameters {
        var parameters = PathParameters()
        for (component, segment) in zip(components, segments) {
            if case .parameter(let name) = component { parameters.append(name: name, value: segment) }
        }
        return parameters
    }

    /// Literal segments win over parameters at the first position where two patterns differ.
    func isMoreSpecific(than other: RoutePattern) -> Bool {
        for (mine, theirs) in zip(components, other.components) {
            switch (mine, theirs) {
            case (.literal, .parameter): return true
            case (.parameter, .literal): return false
            default: continue
            }
        }
        return false
    }
}

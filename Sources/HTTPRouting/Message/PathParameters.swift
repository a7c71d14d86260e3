/// The decoded values of a route's `{name}` segments, in pattern order.
public struct PathParameters: Sendable, Equatable {
    public private(set) var names: [String]
    public private(set) var values: [String]

    public init() {
        names = []
        values = []
    }

    public var isEmpty: Bool { names.isEmpty }

    public subscript(name: String) -> String? {
        guard let index = names.firstIndex(of: name) else { return nil }
        return values[index]
    }

    mutating func append(name: String, value: String) {
        names.append(name)
        values.append(value)
    }
}

/// One command: its name and its arguments, binary-safe (text is sent as UTF-8). Redis has no empty command, so a
/// command always has a name. The commands the service sends are built by name (`RedisCommand+Commands`).
public struct RedisCommand: Sendable, Hashable {
    /// `GET`, `EVALSHA`, … (sent as it is written).
    public let name: String
    public let arguments: [[UInt8]]

    public init(_ name: String, arguments: [[UInt8]]) {
        self.name = name
        self.arguments = arguments
    }

    /// A command whose arguments are all text.
    public init(_ name: String, _ arguments: String...) {
        self.init(name, arguments: arguments.map { Array($0.utf8) })
    }
}

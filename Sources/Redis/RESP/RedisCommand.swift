/// One command: its name and its arguments, binary-safe (text is sent as UTF-8). Redis has no empty command, so a
/// command always has a name. The commands the service sends are built by name (`RedisCommand+Commands`).
public struct RedisCommand: Sendable, Hashable {
    /// `GET`, `EVALSHA`, … (sent as it is written).
    public let name: String
    private let storage: Arguments

    /// A single argument is held without an array around it, as bytes and a string joined only as they are written
    /// (a key's prefix and the key): a shared hit's `GET` makes no allocation of its own on the HTTP thread for the
    /// event loop to free (its array of arguments and its key's bytes were two).
    private enum Arguments: Sendable {
        case one(head: [UInt8], tail: String)
        case list([[UInt8]])
    }

    public init(_ name: String, arguments: [[UInt8]]) {
        self.name = name
        storage = .list(arguments)
    }

    /// A command of one argument: `head`'s bytes, then `tail`'s UTF-8.
    public init(_ name: String, argument head: [UInt8], _ tail: String = "") {
        self.name = name
        storage = .one(head: head, tail: tail)
    }

    /// A command whose arguments are all text.
    public init(_ name: String, _ arguments: String...) {
        self.init(name, arguments: arguments.map { Array($0.utf8) })
    }

    public var arguments: [[UInt8]] {
        switch storage {
        case .one(let head, let tail): [head + Array(tail.utf8)]
        case .list(let arguments): arguments
        }
    }

    /// How many arguments follow the name.
    var argumentCount: Int {
        switch storage {
        case .one: 1
        case .list(let arguments): arguments.count
        }
    }

    /// Calls `body` with each argument's bytes in order, in two parts (the second empty but for a single argument
    /// made of two), without an array of them.
    func forEachArgument(_ body: (_ head: UnsafeRawBufferPointer, _ tail: UnsafeRawBufferPointer) -> Void) {
        switch storage {
        case .one(let head, var tail):
            tail.withUTF8 { tail in head.withUnsafeBytes { body($0, UnsafeRawBufferPointer(tail)) } }
        case .list(let arguments):
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            for argument in arguments { argument.withUnsafeBytes { body($0, none) } }
        }
    }

    public static func == (lhs: RedisCommand, rhs: RedisCommand) -> Bool {
        lhs.name == rhs.name && lhs.arguments == rhs.arguments
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(arguments)
    }
}

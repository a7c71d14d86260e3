/// The commands of one submission, in order: a single one held as it is (a shared hit's `GET` makes no array on the
/// HTTP thread for the event loop to free), or several in an array.
struct RedisCommandList: RandomAccessCollection, Sendable {
    private enum Storage: Sendable {
        case one(RedisCommand)
        case many([RedisCommand])
    }

    private let storage: Storage
    let endIndex: Int

    init(_ command: RedisCommand) { (storage, endIndex) = (.one(command), 1) }
    init(_ commands: [RedisCommand]) { (storage, endIndex) = (.many(commands), commands.count) }

    var startIndex: Int { 0 }

    /// Each command in order, lent where it lies (iterating the list copied it, then each command).
    func forEach(_ body: (RedisCommand) -> Void) {
        switch storage {
        case .one(let command): body(command)
        case .many(let commands): for index in commands.indices { body(commands[index]) }
        }
    }

    subscript(position: Int) -> RedisCommand {
        switch storage {
        case .one(let command):
            precondition(position == 0, "Index out of range")
            return command
        case .many(let commands):
            return commands[position]
        }
    }
}

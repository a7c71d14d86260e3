/// The replies to one batch of commands, in order. A batch of one command (every shared hit's `GET`) holds its reply
/// as itself: an array of one was an allocation per command, made on the connection's event loop and freed on the
/// thread the reply went to.
struct RedisReplies: RandomAccessCollection, Sendable {
    private enum Storage: Sendable {
        case none
        case one(RedisReply)
        case many([RedisReply])
    }

    private var storage: Storage

    /// Room for `expected` replies: an array only when more than one is expected.
    init(expected: Int) {
        guard expected > 1 else {
            storage = .none
            return
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(expected)
        storage = .many(replies)
    }

    var startIndex: Int { 0 }

    var endIndex: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .many(let replies): replies.count
        }
    }

    subscript(position: Int) -> RedisReply {
        switch storage {
        case .one(let reply) where position == 0: reply
        case .many(let replies): replies[position]
        default: preconditionFailure("RedisReplies: index \(position) out of range")
        }
    }

    mutating func append(_ reply: RedisReply) {
        switch storage {
        case .none:
            storage = .one(reply)
        case .one(let first):
            storage = .many([first, reply])
        case .many(var replies):
            // Let go of the stored array first, so that it is appended to in place rather than copied.
            storage = .none
            replies.append(reply)
            storage = .many(replies)
        }
    }
}

import NIOConcurrencyHelpers
import Synchronization

/// One of a node client's connections: none yet, being made (with the commands waiting for it), or made.
final class ConnectionSlot: Sendable {
    typealias Waiter = @Sendable (Result<(RedisConnection, fresh: Bool), RedisError>) -> Void

    private enum State {
        case idle
        case connecting([Waiter])
        case connected(RedisConnection)
        case shutDown
    }

    enum Take {
        case use(RedisConnection)
        /// A connect is under way; the waiter is called when it ends.
        case wait
        /// Nobody is connecting: the caller connects, and its waiter is the first called.
        case connect
        case refuse
    }

    private let state = NIOLockedValueBox(State.idle)
    /// Commands sent on the slot and not answered yet (the node client picks the slot with the fewest).
    private let commandsInFlight = Atomic<Int>(0)

    var inFlight: Int { commandsInFlight.load(ordering: .relaxed) }

    /// Whether a command may join the slot's batch: its connection holds commands that wait for the event loop to
    /// write them.
    var isJoinable: Bool {
        state.withLockedValue { state in
            guard case .connected(let connection) = state else { return false }
            return connection.isCollecting
        }
    }

    /// The slot's connection when it has a live one.
    var connection: RedisConnection? {
        state.withLockedValue { state in
            guard case .connected(let connection) = state, connection.isActive else { return nil }
            return connection
        }
    }

    func began() {
        commandsInFlight.wrappingAdd(1, ordering: .relaxed)
    }

    func ended() {
        commandsInFlight.wrappingSubtract(1, ordering: .relaxed)
    }

    func take(_ waiter: @escaping Waiter) -> Take {
        state.withLockedValue { state -> Take in
            switch state {
            case .connected(let connection) where connection.isActive:
                return .use(connection)
            case .connecting(var waiters):
                // Appended in place (the state let go of the array first), not copied for every waiter.
                state = .connecting([])
                waiters.append(waiter)
                state = .connecting(waiters)
                return .wait
            case .idle, .connected:
                state = .connecting([waiter])
                return .connect
            case .shutDown:
                return .refuse
            }
        }
    }

    func connected(_ connection: RedisConnection) {
        let waiters = state.withLockedValue { state -> [Waiter]? in
            guard case .connecting(let waiters) = state else { return nil }
            state = .connected(connection)
            return waiters
        }
        guard let waiters else {
            // Shut down meanwhile.
            connection.closeSoon()
            return
        }
        for waiter in waiters { waiter(.success((connection, true))) }
    }

    func failed(_ failure: RedisError) {
        let waiters = state.withLockedValue { state -> [Waiter] in
            guard case .connecting(let waiters) = state else { return [] }
            state = .idle
            return waiters
        }
        for waiter in waiters { waiter(.failure(failure)) }
    }

    /// Forgets `connection` after a failure on it (closed already when it timed out), unless the slot
    /// moved on meanwhile.
    func drop(_ connection: RedisConnection) {
        let current = state.withLockedValue { state -> Bool in
            guard case .connected(let held) = state, held === connection else { return false }
            state = .idle
            return true
        }
        if current { connection.closeSoon() }
    }

    /// Closes the slot's connection unless it goes to `address` (a failover: the old primary's connections go).
    func dropConnection(unlessAt address: RedisEndpoint.Address) {
        let dropped = state.withLockedValue { state -> RedisConnection? in
            guard case .connected(let connection) = state, connection.address != address else { return nil }
            state = .idle
            return connection
        }
        dropped?.closeSoon()
    }

    func shutDown() {
        let (connection, waiters) = state.withLockedValue { state -> (RedisConnection?, [Waiter]) in
            defer { state = .shutDown }
            switch state {
            case .connected(let connection): return (connection, [])
            case .connecting(let waiters): return (nil, waiters)
            case .idle, .shutDown: return (nil, [])
            }
        }
        connection?.closeSoon()
        for waiter in waiters { waiter(.failure(.shutDown)) }
    }
}

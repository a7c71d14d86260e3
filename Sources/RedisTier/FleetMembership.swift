import NIOConcurrencyHelpers

/// This instance's membership of the fleet: it announces itself every second (each announcement lives three), and
/// the reply is the fleet's size, which the rate counters' local fallback divides its budgets by.
public final class FleetMembership: Sendable {
    let commands: RedisCommands
    /// Instances announced when last asked (1 until then).
    private let announced = NIOLockedValueBox(1)
    private let announcer = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(commands: RedisCommands) {
        self.commands = commands
    }

    /// The fleet's size as last seen.
    public var size: Int { announced.withLockedValue { $0 } }

    /// Starts announcing (again: a running announcer is replaced).
    func start() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                if case .integer(let size)? = try? await self.commands.run(
                    "announce", RedisScripts.announce, keys: [self.commands.keys.instances],
                    arguments: [self.commands.instanceID, "3000"])
                {
                    self.announced.withLockedValue { $0 = max(1, size) }
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        announcer.withLockedValue { current in
            current?.cancel()
            current = task
        }
    }

    func stop() {
        announcer.withLockedValue { current in
            current?.cancel()
            current = nil
        }
    }
}

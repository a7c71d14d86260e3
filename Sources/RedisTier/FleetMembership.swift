import Clocks
import NIOConcurrencyHelpers

/// This instance's membership of the fleet: it announces itself every second (each announcement lives three), and
/// the reply is the fleet's size, which the rate counters' local fallback divides its budgets by.
public final class FleetMembership: Sendable {
    let commands: RedisCommands
    /// The pace of the announcements.
    let elapsed: Elapsed
    /// Instances announced when last asked (1 until then).
    private let announced = NIOLockedValueBox(1)

    init(commands: RedisCommands, elapsed: Elapsed) {
        self.commands = commands
        self.elapsed = elapsed
    }

    /// The fleet's size as last seen.
    public var size: Int { announced.withLockedValue { $0 } }

    /// Announces this instance every second until the calling task is cancelled.
    func run() async {
        repeat {
            if case .integer(let size)? = try? await commands.run(
                "announce", RedisScripts.announce, keys: [commands.keys.instances],
                arguments: [commands.instanceID, "3000"])
            {
                announced.withLockedValue { $0 = max(1, size) }
            }
        } while (try? await elapsed.sleep(for: .seconds(1))) != nil
    }
}

import ArgumentParser
import Settings
import UnicacheApp

/// `unicache [serve] [flags]` runs the service; `unicache healthcheck` probes a running one; `unicache top` watches one.
struct UnicacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unicache",
        abstract: "A cache in front of slow health and fitness upstreams, served as REST.",
        discussion: "Every flag also reads an environment variable (UNICACHE_ + upper snake case); the flag wins.",
        version: UnicacheVersion.current,
        subcommands: [ServeCommand.self, HealthcheckCommand.self, TopCommand.self],
        defaultSubcommand: ServeCommand.self)
}

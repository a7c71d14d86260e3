import ArgumentParser
import Foundation
import Settings
import Tools
import UnicacheApp

/// For Docker's HEALTHCHECK: exit 0 when `GET /healthz` answers 200, else 1 with one line on stderr.
struct HealthcheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck", abstract: "Exit 0 when a running service answers GET /healthz with 200.")

    @OptionGroup var options: HealthcheckOptions

    func run() throws {
        let client = try options.client(environment: ProcessInfo.processInfo.environment)
        let status: Int
        do {
            status = try client.status()
        } catch {
            StandardError.writeLine("unhealthy: \(client.host):\(client.port): \(error)")
            throw ExitCode.failure
        }
        guard status == 200 else {
            StandardError.writeLine("unhealthy: GET /healthz answered \(status)")
            throw ExitCode.failure
        }
    }
}

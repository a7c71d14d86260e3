import ArgumentParser
import UnicacheApp

/// Runs `UnicacheCommand`, turning every command-line or configuration error into one line on stderr
/// (ArgumentParser's multi-line usage output stays for `--help` only).
@main
enum EntryPoint {
    /// EX_USAGE: the command line or the environment is wrong.
    static let usageExitCode: Int32 = 64

    static func main() async {
        var command: any ParsableCommand
        do {
            command = try UnicacheCommand.parseAsRoot(Array(CommandLine.arguments.dropFirst()))
        } catch {
            if UnicacheCommand.exitCode(for: error) == .success {
                UnicacheCommand.exit(withError: error)  // --help, --version
            }
            fail(ConfigurationError(commandLineError: error, of: UnicacheCommand.self))
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ConfigurationError {
            fail(error)
        } catch let error as ExitCode {
            UnicacheCommand.exit(withError: error)
        } catch where UnicacheCommand.exitCode(for: error) == .success {
            UnicacheCommand.exit(withError: error)  // `--help` comes back from the built-in help command
        } catch {
            StandardError.writeLine("error: \(error)")
            UnicacheCommand.exit(withError: ExitCode.failure)
        }
    }

    private static func fail(_ error: ConfigurationError) -> Never {
        StandardError.writeLine(error.description)
        UnicacheCommand.exit(withError: ExitCode(usageExitCode))
    }
}

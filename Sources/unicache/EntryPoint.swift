import ArgumentParser
import Foundation
import Settings
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
            let arguments = CommandLineArguments.prepared(Array(CommandLine.arguments.dropFirst()))
            command = try UnicacheCommand.parseAsRoot(arguments)
        } catch {
            if UnicacheCommand.exitCode(for: error) == .success {
                exitShowingHelp(error)  // --help, --version
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
            exitShowingHelp(error)  // `unicache help` comes back from the built-in help command
        } catch {
            StandardError.writeLine("error: \(error)")
            UnicacheCommand.exit(withError: ExitCode.failure)
        }
    }

    /// ArgumentParser's answer to `--help` or `--version`, except the root's help, which is serve's (`RootHelp`).
    private static func exitShowingHelp(_ error: any Error) -> Never {
        guard RootHelp.isRootHelp(UnicacheCommand.fullMessage(for: error)) else { UnicacheCommand.exit(withError: error) }
        FileHandle.standardOutput.write(Data(RootHelp.text().utf8))
        UnicacheCommand.exit()
    }

    private static func fail(_ error: ConfigurationError) -> Never {
        StandardError.writeLine(error.description)
        UnicacheCommand.exit(withError: ExitCode(usageExitCode))
    }
}

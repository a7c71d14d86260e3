import ArgumentParser
import Foundation

/// `unicache --help` (also `-h` and `unicache help`). ArgumentParser's help of the root command lists the
/// subcommands and no flag, while the flags users look for (and the README and every start-up error send them to)
/// are those of the default subcommand, `serve`. So the root's help is made of ArgumentParser's own blocks: the root's
/// overview, serve's usage with `serve` optional, serve's options (every flag, as `unicache serve --help` prints
/// them), then the root's subcommands.
enum RootHelp {
    /// Whether `message` is ArgumentParser's help of the root command (however it was asked for).
    static func isRootHelp(_ message: String) -> Bool {
        message.trimmingCharacters(in: .whitespacesAndNewlines)
            == UnicacheCommand.helpMessage().trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func text(columns: Int? = nil) -> String {
        let root = blocks(of: UnicacheCommand.helpMessage(columns: columns))
        let serve = blocks(of: UnicacheCommand.helpMessage(for: ServeCommand.self, columns: columns))
        let usage = serve["USAGE:"].map { usage in
            usage.range(of: "unicache serve").map { usage.replacingCharacters(in: $0, with: "unicache [serve]") } ?? usage
        }
        return [root["OVERVIEW:"], usage, serve["OPTIONS:"], root["SUBCOMMANDS:"]].compactMap { $0 }
            .joined(separator: "\n\n") + "\n"
    }

    /// The help text cut into its blocks, by header (`OVERVIEW:`, `USAGE:`, `OPTIONS:`, `SUBCOMMANDS:`: a word of
    /// capitals and a colon opening a line): each block from its header to the next, without blank lines at its end.
    static func blocks(of help: String) -> [String: String] {
        var blocks: [String: String] = [:]
        var header = ""
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            let word = line.prefix { $0 != " " }
            if word.count > 1, word.hasSuffix(":"), word.dropLast().allSatisfy(\.isUppercase) { header = String(word) }
            blocks[header, default: ""] += line + "\n"
        }
        return blocks.mapValues { $0.trimmingCharacters(in: .newlines) }
    }
}

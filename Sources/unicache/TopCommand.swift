import ArgumentParser
import Clocks
import Foundation
import UnicacheApp

/// `unicache top`: a running service's figures, refreshed every second (varnishstat's model). On a terminal the
/// frame is redrawn in place; otherwise each frame is printed as plain text; `--once` prints one frame (rates over
/// one interval) and exits.
struct TopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Show a running service's requests, hit rates, latency, upstreams, tiers and access, every second.")

    @Option(name: .customLong("url"), help: "The service (plain HTTP): http://HOST:PORT (env UNICACHE_TOP_URL, default http://127.0.0.1:8080).")
    var url: String?

    @Option(name: .customLong("interval"), help: "Time between frames: ms, s, m (default 1s).")
    var interval: String?

    @Flag(name: .customLong("once"), help: "Print one frame as plain text (rates over one interval) and exit.")
    var once = false

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let source = try TopSource(url: url ?? environment["UNICACHE_TOP_URL"] ?? "http://127.0.0.1:8080")
        let every = try TopSource.interval(interval)
        if once {
            try printOnce(source, every: every)
            return
        }
        let terminal = isatty(STDOUT_FILENO) == 1
        var previous: TopSnapshot?
        while true {
            let started = ContinuousClock.now
            var lines: [String]
            do {
                let current = try source.snapshot()
                lines = TopView(url: source.url, previous: previous, current: current).lines()
                previous = current
            } catch {
                lines = ["unicache top  \(source.url)", "", "cannot read the service: \(error) (retrying)"]
            }
            write(frame: lines, terminal: terminal)
            Blocking.sleep(for: every - (ContinuousClock.now - started))
        }
    }

    private func printOnce(_ source: TopSource, every: Duration) throws {
        do {
            let first = try source.snapshot()
            Blocking.sleep(for: every)
            let second = try source.snapshot()
            write(frame: TopView(url: source.url, previous: first, current: second).lines(), terminal: false)
        } catch {
            StandardError.writeLine("unicache top: \(source.url): \(error)")
            throw ExitCode.failure
        }
    }

    /// On a terminal: home, each line cleared to its end, the rest of the screen cleared (no flicker). Else the
    /// frame as plain lines and a blank line after it.
    private func write(frame lines: [String], terminal: Bool) {
        let text = terminal
            ? "\u{1B}[H" + lines.map { $0 + "\u{1B}[K\n" }.joined() + "\u{1B}[J"
            : lines.joined(separator: "\n") + "\n\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

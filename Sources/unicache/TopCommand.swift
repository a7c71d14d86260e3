import ArgumentParser
import Clocks
import Foundation
import Settings
import Tools
import UnicacheApp

/// `unicache top`: a running service's figures, refreshed every second (varnishstat's model). On a terminal the
/// frame is redrawn in place; otherwise each frame is printed as plain text; `--once` prints one frame (rates over
/// one interval) and exits. A URL that does not answer a unicache `/stats` at start ends it with exit 1.
struct TopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Show a running service's requests, hit rates, latency, upstreams, tiers and access, every second.")

    @Option(name: .customLong("url"), help: "The service: http://HOST:PORT, or https://HOST:PORT with --tls-cert (env UNICACHE_TOP_URL, default http://127.0.0.1:8080, https:// with a certificate).")
    var url: String?

    @Option(name: .customLong("tls-cert"), help: "The service's --tls-cert, for an https:// URL: only this certificate is accepted (env UNICACHE_TLS_CERT).")
    var tlsCert: String?

    @Option(name: .customLong("interval"), help: "Time between frames: ms, s, m (default 1s).")
    var interval: String?

    @Flag(name: .customLong("once"), help: "Print one frame as plain text (rates over one interval) and exit.")
    var once = false

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let source = try TopOptions.source(url: url, tlsCert: tlsCert, environment: environment)
        let every = try TopOptions.interval(interval)
        // The command's one monotonic clock: when each reading was taken, and the pace of the frames.
        let elapsed = Elapsed(ContinuousClock())
        // The first reading decides: a URL that does not answer a unicache /stats ends top at once, saying so.
        let first = try reading(source, on: elapsed)
        if once {
            Blocking.sleep(for: every)
            let second = try reading(source, on: elapsed)
            try write(frame: TopView(url: source.url, previous: first, current: second).lines(), terminal: false)
            return
        }
        let terminal = isatty(STDOUT_FILENO) == 1
        var previous: TopSnapshot?
        var next: TopSnapshot? = first
        while true {
            let started = elapsed.now()
            var lines: [String]
            do {
                let current = try next ?? source.snapshot(on: elapsed)
                next = nil
                lines = TopView(url: source.url, previous: previous, current: current).lines()
                previous = current
            } catch {
                // A later failure (the service restarting) keeps top running.
                lines = TopView.fit(["unicache top  \(source.url)", "", "cannot read the service: \(error) (retrying)"])
            }
            try write(frame: lines, terminal: terminal)
            Blocking.sleep(for: every - (elapsed.now() - started))
        }
    }

    /// A reading, or exit 1 with one line saying why (the service is not there, or is not unicache).
    private func reading(_ source: TopSource, on elapsed: Elapsed) throws -> TopSnapshot {
        do {
            return try source.snapshot(on: elapsed)
        } catch {
            StandardError.writeLine("unicache top: \(source.url): \(error)")
            throw ExitCode.failure
        }
    }

    /// On a terminal: home, each line cleared to its end, the rest of the screen cleared (no flicker), and no newline
    /// after the last line, so that a frame of 24 lines fills a 24-line terminal without scrolling it. Else the frame
    /// as plain lines and a blank line after it.
    /// A standard output that cannot be written (`unicache top | head`, the reader gone) ends top with status 0.
    private func write(frame lines: [String], terminal: Bool) throws {
        let text = terminal
            ? "\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[J"
            : lines.joined(separator: "\n") + "\n\n"
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        } catch {
            throw ExitCode.success
        }
    }
}

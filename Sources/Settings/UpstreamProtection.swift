import HTTPRouting
import UpstreamGate

/// How one domain's upstream is protected and called (CONTRACT §7).
public struct UpstreamProtection: Sendable, Equatable {
    public static let defaultConcurrency = 64

    /// `--upstream-rate`: none, one, or several of different windows (each must allow a request).
    public var budgets: [RateWindow]
    /// `--upstream-concurrency`.
    public var concurrency: Int
    /// `--upstream-header`, sent with every request to the upstream.
    public var headers: [UpstreamHeader]

    public init(budgets: [RateWindow] = [], concurrency: Int = defaultConcurrency, headers: [UpstreamHeader] = []) {
        self.budgets = budgets
        self.concurrency = concurrency
        self.headers = headers
    }
}

/// `--upstream-rate`'s budgets are the gate's windows: at most `limit` requests in any window of `window`
/// (`200/15m`).
extension RateWindow {
    /// `N/DURATION`, N ≥ 1 and DURATION above zero; nil otherwise.
    init?(text: String) {
        let parts = text.trimmingWhitespace().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let limit = ValueSyntax.wholeNumber(parts[0]), limit >= 1,
            let window = ValueSyntax.duration(String(parts[1])), window > .zero
        else { return nil }
        self.init(limit: limit, window: window)
    }

    /// `N/DURATION`, as `init?(text:)` reads it.
    var text: String { "\(limit)/\(ValueSyntax.text(of: window))" }

    /// Budgets separated by commas (`200/15m,2000/1d`); nil when one of them is not valid.
    static func list(text: String) -> [RateWindow]? {
        var budgets: [RateWindow] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let budget = RateWindow(text: String(item)) else { return nil }
            budgets.append(budget)
        }
        return budgets
    }
}

/// A header sent to an upstream (a service credential). Its value is never shown: descriptions and mirrors name
/// the header only.
public struct UpstreamHeader: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The fields the service sets on each fetch, or that frame the connection and the message: a configured one
    /// would contradict them (`Content-Length: 5` on a GET without a body leaves the upstream waiting for it,
    /// `Accept-Encoding: gzip` brings a body the service refuses, a second `X-Request-ID` hides the request's).
    /// `Accept` is not among them: a configured one replaces the default `application/json`.
    public static let reservedNames = [
        "Accept-Encoding", "Connection", "Content-Length", "Expect", "Keep-Alive", "Proxy-Connection", "TE",
        "Trailer", "Transfer-Encoding", "Upgrade", "X-Request-ID", "traceparent", "tracestate",
    ]

    /// `NAME:VALUE`: NAME an HTTP token (RFC 9110 §5.6.2) and none of `reservedNames` (in any case), VALUE printable
    /// ASCII (spaces and tabs inside), both trimmed; nil otherwise.
    init?(text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingWhitespace()
        let value = text[text.index(after: colon)...].trimmingWhitespace()
        guard HTTPToken.isToken(name),
            !Self.reservedNames.contains(where: { $0.lowercased() == name.lowercased() }),
            value.utf8.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 })
        else { return nil }
        self.init(name: name, value: value)
    }

    public var description: String { "\(name): <redacted>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["name": name, "value": "<redacted>"]) }
}

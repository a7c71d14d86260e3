import TestSupport

/// What the test upstream answers on a path.
extension TestUpstream {
    struct Reply: Sendable {
        var status: Int
        var headers: [Header]
        var body: [UInt8]

        struct Header: Sendable {
            let name: String
            let value: String
        }

        init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers.map { Header(name: $0.0, value: $0.1) }
            self.body = body
        }

        /// A JSON answer (Content-Type application/json unless `headers` names another).
        static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> Reply {
            let hasType = headers.contains { $0.0.lowercased() == "content-type" }
            return Reply(
                status: status,
                headers: hasType ? headers : [("Content-Type", "application/json")] + headers,
                body: Array(text.utf8)
            )
        }

        /// A JSON answer the upstream forbids storing.
        static func noStore(_ text: String) -> Reply {
            json(text, headers: [("Cache-Control", "private, no-store")])
        }

        static let notFound = json(#"{"error":"not found"}"#, status: 404)
        static let serverError = json(#"{"error":"boom"}"#, status: 500)

        /// 429; `retryAfter` is sent verbatim (seconds or an HTTP-date) when given.
        static func rateLimited(retryAfter: String? = nil) -> Reply {
            json(#"{"error":"slow down"}"#, status: 429, headers: retryAfter.map { [("Retry-After", $0)] } ?? [])
        }
    }

    enum Behavior: Sendable {
        /// Answer at once.
        case reply(Reply)
        /// Answer once the gate is opened by the test.
        case gated(Latch, Reply)
        /// Answer after a delay.
        case delayed(Duration, Reply)
        /// Read the request and never answer (until the upstream shuts down).
        case hang
        /// Answer 200 with a head promising a 1 MiB body, then send it a byte every `interval` (each byte within any
        /// read timeout), never finishing: until the client closes the connection or the upstream shuts down.
        case trickle(every: Duration)
    }
}

/// The fleet's tests still say `Gate` (they move to `Latch` with the Redis work).
typealias Gate = Latch

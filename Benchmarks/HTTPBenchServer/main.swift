// The Swift side of scripts/bench-http.sh: the same ~1 KB JSON body as Benchmarks/mhd-baseline,
// on a synchronous route (answered `.now`, on the MHD thread) and an async route (`.later`, in a task).
// Usage: HTTPBenchServer [--port N] [--host H] [--request-ids]   (--request-ids: every answer carries X-Request-ID,
// as unicache's do: the prepared response is copied per request)
import HTTPRouting
import Logging
import MicroHTTPServer
import ServiceLifecycle

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.index(after: $0) < arguments.endIndex ? arguments[$0 + 1] : nil }
}

let body = Array(("{\"status\":\"ok\",\"padding\":\"" + String(repeating: "a", count: 1000) + "\"}").utf8)
let response = Response.json(body).reusable()

var router = Router()
router.handle(.get, "/sync") { _ in .now(response) }
router.get("/async") { _ in response }

var logger = Logger(label: "HTTPBenchServer")
logger.logLevel = .info
let configuration = MicroHTTPServerConfiguration(
    host: option("--host") ?? "127.0.0.1",
    port: option("--port").flatMap(Int.init) ?? 8091,
    requestIDs: arguments.contains("--request-ids")
)
let server = MicroHTTPServer(configuration: configuration, responder: router, ticker: ContinuousClock(), logger: logger)
let group = ServiceGroup(configuration: ServiceGroupConfiguration(
    services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
try await group.run()

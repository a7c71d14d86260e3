import AsyncHTTPClient
import Foundation
import NIOCore

/// One running unicache, started for one row of the table: its own data dir, `--port 0`, an admin token for the raw
/// API; stopped (SIGTERM, then waited for) by `stop`.
final class Service {
    static let token = "efficiency-bench"

    let port: Int
    private let process: Process
    private let folder: URL

    /// Starts `binary` with `arguments` and waits (up to a minute) for its `listening on` line.
    init(binary: String, arguments: [String]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("unicache-efficiency-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = folder.appendingPathComponent("service.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            [
                "--host", "127.0.0.1", "--port", "0", "--data-dir", folder.appendingPathComponent("data").path,
                "--admin-token", Self.token, "--log-level", "info",
            ] + arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while true {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(text[range].split(separator: ":").last ?? "") ?? 0
                break
            }
            guard process.isRunning, Date() < deadline else {
                throw BenchError.serviceDidNotStart(text.split(separator: "\n").suffix(3).joined(separator: "\n"))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }
}

enum BenchError: Error, CustomStringConvertible {
    case serviceDidNotStart(String)
    case unexpectedStatus(String, UInt)

    var description: String {
        switch self {
        case .serviceDidNotStart(let log): "the service did not start: \(log)"
        case .unexpectedStatus(let what, let status): "\(what) answered \(status)"
        }
    }
}

/// Asks the service as the replay of a trace does: GET each key, PUT it on 404.
struct RawClient {
    let client: HTTPClient
    let port: Int
    /// The body of every entry (its size makes every disk file the same size).
    static let body = ByteBuffer(string: String(repeating: "x", count: 64))

    /// A trace's key as a raw cache key: fixed width, so that every entry weighs the same.
    static func key(_ key: Int32) -> String {
        let digits = String(UInt32(bitPattern: key))
        return "k" + String(repeating: "0", count: max(0, 10 - digits.count)) + digits
    }

    /// Whether the service had `key`; stores it when it did not.
    func request(_ key: Int32) async throws -> Bool {
        let url = "http://127.0.0.1:\(port)/v1/cache/\(Self.key(key))"
        var get = HTTPClientRequest(url: url)
        get.headers.add(name: "Authorization", value: "Bearer \(Service.token)")
        let answer = try await client.execute(get, timeout: .seconds(30))
        _ = try await answer.body.collect(upTo: 1 << 20)
        if answer.status == .ok { return true }
        guard answer.status == .notFound else { throw BenchError.unexpectedStatus("GET", answer.status.code) }
        var put = HTTPClientRequest(url: url)
        put.method = .PUT
        put.headers.add(name: "Authorization", value: "Bearer \(Service.token)")
        put.headers.add(name: "Content-Type", value: "application/octet-stream")
        put.body = .bytes(Self.body)
        let stored = try await client.execute(put, timeout: .seconds(30))
        _ = try await stored.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(stored.status.code) else {
            throw BenchError.unexpectedStatus("PUT", stored.status.code)
        }
        return false
    }

    /// `/stats` as JSON.
    func stats() async throws -> [String: Any] {
        var get = HTTPClientRequest(url: "http://127.0.0.1:\(port)/stats")
        get.headers.add(name: "Authorization", value: "Bearer \(Service.token)")
        let answer = try await client.execute(get, timeout: .seconds(30))
        let body = try await answer.body.collect(upTo: 1 << 22)
        return (try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]) ?? [:]
    }
}

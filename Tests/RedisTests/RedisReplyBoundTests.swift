import NIOConcurrencyHelpers
import NIOCore
import Redis
import RedisTestSupport
import Testing
import TestSupport

/// A peer that answers a command with a reply that never ends (`*1000000` elements of 64 MiB each, every one within
/// a per-element bound) fails that connection once the whole reply passes its bound, with a reason that says so,
/// while the peer still has almost all of it to send: the client never holds more than the bound.
@Suite("A whole reply is bounded", .timeLimit(.minutes(2)))
struct RedisReplyBoundTests {
    /// A peer that answers PING (the handshake) and streams `header`, then `element` over and over, in answer to GET,
    /// at most `cap` bytes.
    private func endlessPeer(header: String, element: @escaping @Sendable () -> [ByteBuffer], cap: Int) async throws -> FakeRedisPeer {
        try await FakeRedisPeer { connection, command in
            switch command.first {
            case "PING": connection.send("+PONG\r\n")
            case "GET":
                let pending = NIOLockedValueBox([ByteBuffer(string: header)])
                let sent = NIOLockedValueBox(0)
                connection.stream {
                    guard sent.withLockedValue({ $0 }) < cap else { return nil }
                    let chunk = pending.withLockedValue { chunks -> ByteBuffer in
                        if chunks.isEmpty { chunks = element() }
                        return chunks.removeFirst()
                    }
                    sent.withLockedValue { $0 += chunk.readableBytes }
                    return chunk
                }
            default: connection.send("-ERR unknown\r\n")
            }
        }
    }

    /// 64 MiB of one element in 1 MiB chunks, with its framing.
    private static func bulk(mebibytes: Int) -> [ByteBuffer] {
        let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 1 << 20)
        return [ByteBuffer(string: "$\(mebibytes << 20)\r\n")] + Array(repeating: chunk, count: mebibytes) + [ByteBuffer(string: "\r\n")]
    }

    /// The error of a GET to `port` that must fail (no reply ever comes), and the connection closed by it.
    private func failure(_ port: Int, limits: RESPLimits = RESPLimits()) async throws -> RedisError? {
        let connection = try await RedisConnection.connect(
            RedisEndpoint(host: "127.0.0.1", port: port), timeout: .seconds(30), connectTimeout: .seconds(5), limits: limits)
        defer { connection.closeSoon() }
        do {
            let reply = try await connection.send(.get("k"))
            Issue.record("a reply came: \(String(describing: reply).prefix(80))")
            return nil
        } catch {
            try? await connection.closeFuture.get()
            #expect(!connection.isActive)
            return error
        }
    }

    @Test func aMillionElementsOf64MiBHitTheDefaultBound() async throws {
        let cap = 200 << 20
        try await withService(try await endlessPeer(header: "*1000000\r\n", element: { Self.bulk(mebibytes: 64) }, cap: cap)) { peer in
            let error = try await failure(peer.port)
            guard case .protocolViolation(let reason)? = error else {
                Issue.record("not a protocol violation: \(String(describing: error))")
                return
            }
            #expect(reason == "a reply of more than 67108864 bytes (the limit of one whole reply)")
            // The peer was stopped by the close long before its stream ended.
            let written = try #require(peer.connections.first).bytesWritten
            #expect(written < 64 << 20, "\(written) bytes written before the close")
        }
    }

    @Test func smallElementsStreamedPastTheBoundFailMidReply() async throws {
        let element = [ByteBuffer(string: "$65536\r\n"), ByteBuffer(repeating: 0x78, count: 65_536), ByteBuffer(string: "\r\n")]
        let cap = 256 << 20
        try await withService(try await endlessPeer(header: "*1000000\r\n", element: { element }, cap: cap)) { peer in
            let error = try await failure(peer.port, limits: RESPLimits(maxReplyBytes: 1 << 20))
            #expect(error == .protocolViolation("a reply of more than 1048576 bytes (the limit of one whole reply)"))
            let written = try #require(peer.connections.first).bytesWritten
            // Some megabytes sit in the sockets' buffers; nothing near what the peer would have sent.
            #expect(written < 64 << 20, "\(written) bytes written before the close")
        }
    }
}

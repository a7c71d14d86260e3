import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Redis
import TestSupport

/// A fake Redis or Sentinel on 127.0.0.1, port 0, for what a real server never does: a reply that never ends, a
/// Sentinel that goes silent or names a forged host, a burst of announcements. Each command a client sends (a RESP
/// array, as text) goes to `script` with its connection, which answers through the connection, or does not.
public final class FakeRedisPeer: StoppableService {
    public let port: Int
    private let channel: any Channel
    private let accepted = NIOLockedValueBox<[Connection]>([])

    /// One accepted connection: what the script writes to it, and what it has written so far.
    public final class Connection: Sendable {
        let channel: any Channel
        private let written = NIOLockedValueBox(0)
        private let commands = NIOLockedValueBox<[[String]]>([])
        private let stream = NIOLockedValueBox<(@Sendable () -> ByteBuffer?)?>(nil)

        init(channel: any Channel) { self.channel = channel }

        /// Bytes written to the client so far (a stream's included).
        public var bytesWritten: Int { written.withLockedValue { $0 } }

        /// The commands received so far, the one being answered included.
        public var received: [[String]] { commands.withLockedValue { $0 } }

        func receive(_ command: [String]) { commands.withLockedValue { $0.append(command) } }

        /// Writes `text` (RESP, CRLFs included).
        public func send(_ text: String) {
            let buffer = channel.allocator.buffer(string: text)
            written.withLockedValue { $0 += buffer.readableBytes }
            channel.writeAndFlush(buffer, promise: nil)
        }

        /// Writes what `next` gives, chunk after chunk as fast as the client reads, until it gives nil or the
        /// connection closes.
        public func stream(_ next: @escaping @Sendable () -> ByteBuffer?) {
            stream.withLockedValue { $0 = next }
            channel.eventLoop.execute { self.pump() }
        }

        /// Closes the connection.
        public func close() {
            channel.close(promise: nil)
        }

        /// On the loop: writes the stream's chunks while the channel takes them.
        func pump() {
            guard let next = stream.withLockedValue({ $0 }) else { return }
            while channel.isActive, channel.isWritable {
                guard let chunk = next() else {
                    stream.withLockedValue { $0 = nil }
                    break
                }
                written.withLockedValue { $0 += chunk.readableBytes }
                channel.write(chunk, promise: nil)
            }
            channel.flush()
        }
    }

    /// Starts listening; `script` is called on the connection's event loop for each command, in order.
    public init(script: @escaping @Sendable (Connection, [String]) -> Void) async throws {
        let accepted = self.accepted
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let connection = Connection(channel: channel)
                accepted.withLockedValue { $0.append(connection) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(CommandDecoder()))
                    try channel.pipeline.syncOperations.addHandler(Handler(connection: connection, script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    /// Every connection accepted so far, in order.
    public var connections: [Connection] { accepted.withLockedValue { $0 } }

    /// Stops listening and closes every connection.
    public func stop() async {
        try? await channel.close()
        for connection in connections { try? await connection.channel.close() }
    }

    /// A RESP array of bulk strings (what a server sends: a pub/sub message, an address pair).
    public static func array(_ items: [String]) -> String {
        "*\(items.count)\r\n" + items.map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined()
    }

    /// A Sentinel's answer to SUBSCRIBE: one confirmation per channel.
    public static func subscribed(_ command: [String]) -> String {
        command.dropFirst().enumerated().map { index, channel in
            "*3\r\n$9\r\nsubscribe\r\n$\(channel.utf8.count)\r\n\(channel)\r\n:\(index + 1)\r\n"
        }.joined()
    }

    private struct CommandDecoder: NIOSingleStepByteToMessageDecoder {
        typealias InboundOut = [String]
        func decode(buffer: inout ByteBuffer) throws -> [String]? {
            guard let value = try RESPParser().next(from: &buffer) else { return nil }
            return value.array?.compactMap(\.text) ?? []
        }
        func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> [String]? { try decode(buffer: &buffer) }
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = [String]
        let connection: Connection
        let script: @Sendable (Connection, [String]) -> Void

        init(connection: Connection, script: @escaping @Sendable (Connection, [String]) -> Void) {
            self.connection = connection
            self.script = script
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let command = unwrapInboundIn(data)
            connection.receive(command)
            script(connection, command)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            connection.pump()
            context.fireChannelWritabilityChanged()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

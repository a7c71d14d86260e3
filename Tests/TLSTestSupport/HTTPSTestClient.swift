import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// One answer of `HTTPSTestClient`.
public struct TestResponse: Sendable {
    public let status: Int
    public let body: String
}

/// What one TLS connection carried: the TLS version negotiated and the answers, in order.
public struct TestExchange: Sendable {
    public let version: TLSVersion?
    public let responses: [TestResponse]
}

/// A real HTTPS client (swift-nio-ssl, BoringSSL) that trusts only the given certificate (and checks that it names
/// `localhost`), and sends its requests one after another on one keep-alive connection to 127.0.0.1.
public enum HTTPSTestClient {
    /// A client context trusting only `certificatePEM`.
    static func context(
        trusting certificatePEM: String, minimum: TLSVersion = .tlsv12, maximum: TLSVersion = .tlsv13
    ) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)))
        configuration.minimumTLSVersion = minimum
        configuration.maximumTLSVersion = maximum
        return try NIOSSLContext(configuration: configuration)
    }

    public static func get(
        _ paths: [String], port: Int, trusting certificatePEM: String,
        minimum: TLSVersion = .tlsv12, maximum: TLSVersion = .tlsv13
    ) async throws -> TestExchange {
        let context = try context(trusting: certificatePEM, minimum: minimum, maximum: maximum)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let rawChannel = channel.channel
        return try await channel.executeThenClose { inbound, outbound in
            var parts = inbound.makeAsyncIterator()
            var responses: [TestResponse] = []
            for path in paths {
                var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
                head.headers.add(name: "Host", value: "localhost")
                try await outbound.write(.head(head))
                try await outbound.write(.end(nil))
                var status = 0
                var body = ByteBuffer()
                reading: while let part = try await parts.next() {
                    switch part {
                    case .head(let head): status = Int(head.status.code)
                    case .body(var bytes): body.writeBuffer(&bytes)
                    case .end: break reading
                    }
                }
                guard status != 0 else { throw TestClientError.closedBeforeAnAnswer }
                responses.append(TestResponse(status: status, body: String(buffer: body)))
            }
            return TestExchange(version: try await rawChannel.nioSSL_tlsVersion().get(), responses: responses)
        }
    }

    /// Sends `request` in plain text (no TLS) and returns every byte the server sent until it closed.
    public static func plainExchange(_ request: String, port: Int) async throws -> [UInt8] {
        try await exchangeUntilClosed(request, port: port) { _ in }
    }

    /// Sends `request` as it is over TLS (trusting only `certificatePEM`) and returns every byte the server sent
    /// until it closed, with or without a TLS close_notify.
    public static func rawExchange(_ request: String, port: Int, trusting certificatePEM: String) async throws -> [UInt8] {
        let context = try context(trusting: certificatePEM)
        return try await exchangeUntilClosed(request, port: port) { channel in
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
        }
    }

    private static func exchangeUntilClosed(
        _ request: String, port: Int, setUp: @escaping @Sendable (any Channel) throws -> Void
    ) async throws -> [UInt8] {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try setUp(channel)
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var received: [UInt8] = []
            do {
                for try await chunk in inbound { received += chunk.readableBytesView }
            } catch let error as IOError where error.errnoCode == ECONNRESET {
                // A reset instead of a clean close: the server refused the bytes all the same.
            } catch NIOSSLError.uncleanShutdown {
                // Closed without a TLS close_notify: what came before it came all the same.
            }
            return received
        }
    }
}

public enum TestClientError: Error {
    case closedBeforeAnAnswer
}

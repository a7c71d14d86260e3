import Synchronization

/// A request's correlation id (CONTRACT §7.4): the client's `X-Request-ID` when it is 1–128 visible ASCII
/// characters, else one the server made. Echoed in the response, sent upstream with the fetch the request
/// caused, and written in the request's log lines.
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    public static let headerName = headerNameLiteral.description
    /// The name as a literal, for C calls: a small `String` passed as `const char *` is copied to a heap array.
    public static let headerNameLiteral: StaticString = "X-Request-ID"

    public let value: String

    /// The id a client sent, or nil when it is empty, longer than 128 bytes or not all visible ASCII
    /// (`%x21-7E`: no spaces, no control characters, no UTF-8).
    public init?(validating value: String) {
        let bytes = value.utf8
        guard (1...128).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        self.value = value
    }

    init(generated value: String) {
        self.value = value
    }

    public var description: String { value }

    /// The id of the request whose work is running (bound by the router around its handlers), for log lines
    /// written far from the request (the cache core, a fetcher).
    @TaskLocal public static var current: RequestID?
}

/// Makes ids unique across restarts and instances without a system call or an allocation per request: eight
/// base-62 characters drawn at random once (about 48 bits), a dash, and a base-62 counter (`k3R9xQ0b-2Bz`). Up to
/// 62⁶ requests per process the id fits Swift's 15-byte inline string.
public final class RequestIDGenerator: Sendable {
    private static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    private let prefix: UInt64
    private let counter = Atomic<UInt64>(0)

    public init() {
        var random = SystemRandomNumberGenerator()
        var prefix: UInt64 = 0
        for _ in 0..<8 { prefix = prefix << 8 | UInt64(Self.digits[Int(random.next(upperBound: 62 as UInt64))]) }
        self.prefix = prefix
    }

    public func next() -> RequestID {
        var number = counter.add(1, ordering: .relaxed).newValue
        var count = 1
        var rest = number / 62
        while rest > 0 {
            count += 1
            rest /= 62
        }
        // The prefix, a dash and at most 11 base-62 digits (a UInt64), on the stack.
        let value = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 9 + count) { buffer -> String in
            var prefix = prefix
            for index in (0..<8).reversed() {
                buffer[index] = UInt8(truncatingIfNeeded: prefix)
                prefix >>= 8
            }
            buffer[8] = UInt8(ascii: "-")
            for index in (9..<9 + count).reversed() {
                buffer[index] = Self.digits[Int(number % 62)]
                number /= 62
            }
            return String(decoding: UnsafeBufferPointer(buffer), as: UTF8.self)
        }
        return RequestID(generated: value)
    }

    /// The client's id from `headers` when valid, else a new one.
    public func id(for headers: HTTPHeaders) -> RequestID {
        headers[RequestID.headerName].flatMap(RequestID.init(validating:)) ?? next()
    }
}

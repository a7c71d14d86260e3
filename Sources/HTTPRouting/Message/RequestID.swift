import Synchronization

/// A request's correlation id (CONTRACT §7.4): the client's `X-Request-ID` when it is 1–128 visible ASCII
/// characters, else one the server made. Echoed in the response, sent upstream with the fetch the request
/// caused, and written in the request's log lines.
///
/// A generated id is kept as its two numbers and spelled out only when asked: the answer's header is written from
/// `write(to:)` into libmicrohttpd's copy, so a warm hit makes no `String` of it (validating one cost ~190
/// instructions a request).
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    public static let headerName = headerNameLiteral.description
    /// The name as a literal, for C calls: a small `String` passed as `const char *` is copied to a heap array.
    public static let headerNameLiteral: StaticString = "X-Request-ID"

    private enum Storage: Sendable {
        case given(String)
        /// Eight base-62 characters packed in `prefix` (the first in the high byte), then a dash and `number` in
        /// base 62.
        case generated(prefix: UInt64, number: UInt64)
    }

    private let storage: Storage

    /// The id a client sent, or nil when it is empty, longer than 128 bytes or not all visible ASCII
    /// (`%x21-7E`: no spaces, no control characters, no UTF-8).
    public init?(validating value: String) {
        let bytes = value.utf8
        guard (1...128).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        storage = .given(value)
    }

    init(prefix: UInt64, number: UInt64) {
        storage = .generated(prefix: prefix, number: number)
    }

    /// The id as text.
    public var value: String {
        switch storage {
        case .given(let value):
            value
        case .generated:
            String(unsafeUninitializedCapacity: utf8Count) { buffer in
                write(to: UnsafeMutableRawPointer(buffer.baseAddress!))
                return buffer.count
            }
        }
    }

    /// Writes the id's `utf8Count` bytes at `destination`, without making a `String` of a generated one (not
    /// generic: a generic `withUTF8` taken across modules cost more than the `String`).
    public func write(to destination: UnsafeMutableRawPointer) {
        switch storage {
        case .given(var value):
            value.withUTF8 { destination.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        case .generated(var prefix, var number):
            let bytes = destination.assumingMemoryBound(to: UInt8.self)
            for index in (0..<8).reversed() {
                bytes[index] = UInt8(truncatingIfNeeded: prefix)
                prefix >>= 8
            }
            bytes[8] = UInt8(ascii: "-")
            for index in (9..<9 + Self.digitCount(number)).reversed() {
                bytes[index] = RequestIDGenerator.digits[Int(number % 62)]
                number /= 62
            }
        }
    }

    /// The id's length in bytes.
    public var utf8Count: Int {
        switch storage {
        case .given(let value): value.utf8.count
        case .generated(_, let number): 9 + Self.digitCount(number)
        }
    }

    /// Base-62 digits of `number` (at least one).
    private static func digitCount(_ number: UInt64) -> Int {
        var count = 1
        var rest = number / 62
        while rest > 0 {
            count += 1
            rest /= 62
        }
        return count
    }

    /// Ids are equal when their text is, however they were made.
    public static func == (lhs: RequestID, rhs: RequestID) -> Bool {
        lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }

    public var description: String { value }

    /// The id of the request whose work is running (bound by the router around its handlers), for log lines
    /// written far from the request (the cache core, a fetcher).
    @TaskLocal public static var current: RequestID?
}

/// Makes ids unique across restarts and instances without a system call or an allocation per request: eight
/// base-62 characters drawn at random once (about 48 bits), a dash, and a base-62 counter (`k3R9xQ0b-2Bz`). Up to
/// 62⁶ requests per process the id's text fits Swift's 15-byte inline string.
public final class RequestIDGenerator: Sendable {
    static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    private let prefix: UInt64
    private let counter = Atomic<UInt64>(0)

    public init() {
        var random = SystemRandomNumberGenerator()
        var prefix: UInt64 = 0
        for _ in 0..<8 { prefix = prefix << 8 | UInt64(Self.digits[Int(random.next(upperBound: 62 as UInt64))]) }
        self.prefix = prefix
    }

    public func next() -> RequestID {
        RequestID(prefix: prefix, number: counter.add(1, ordering: .relaxed).newValue)
    }

    /// The client's id `value` (its first `X-Request-ID`) when valid, else a new one.
    public func id(given value: String?) -> RequestID {
        value.flatMap(RequestID.init(validating:)) ?? next()
    }
}

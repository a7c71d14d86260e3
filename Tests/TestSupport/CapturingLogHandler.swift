import Logging
import NIOConcurrencyHelpers

/// A log handler that keeps what is logged through it, for tests that check a log line (and its request id).
public struct CapturingLogHandler: LogHandler {
    /// What the handlers sharing it have logged, in order.
    public final class Store: Sendable {
        private let entries = NIOLockedValueBox<[(message: String, metadata: Logger.Metadata)]>([])

        public init() {}

        public var messages: [String] { entries.withLockedValue { $0.map(\.message) } }
        /// Each message with the `requestId` of its metadata, if any.
        public var requestIDs: [(message: String, requestID: String?)] {
            entries.withLockedValue { $0.map { ($0.message, $0.metadata["requestId"].map { "\($0)" }) } }
        }

        /// Each line as text: its message, then its metadata as `key=value`, sorted by key.
        public var rendered: [String] {
            entries.withLockedValue { entries in
                entries.map { entry in
                    ([entry.message] + entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
                        .joined(separator: " ")
                }
            }
        }

        func append(_ message: String, _ metadata: Logger.Metadata) {
            entries.withLockedValue { $0.append((message, metadata)) }
        }
    }

    public let store: Store
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(store: Store) { self.store = store }

    /// A logger whose lines land in `store`.
    public static func logger(_ store: Store, label: String = "test") -> Logger {
        Logger(label: label) { _ in CapturingLogHandler(store: store) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        store.append(event.message.description, event.metadata ?? [:])
    }
}

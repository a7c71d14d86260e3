import Clocks
import Foundation
import Logging

/// A swift-log handler that writes every event as one JSON object on one line:
/// `{"timestamp":"…Z","level":"info","label":"…","message":"…","metadata":{…}}` (plus `"requestId"` and
/// `"traceId"` when the metadata has them, and `"error"` when the event has one).
package struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?

    private let label: String
    private let output: LogOutput
    private let clock: any WallClock

    public init(
        label: String, level: Logger.Level = .info, output: LogOutput,
        metadataProvider: Logger.MetadataProvider? = nil,
        clock: any WallClock
    ) {
        self.label = label
        self.logLevel = level
        self.output = output
        self.metadataProvider = metadataProvider
        self.clock = clock
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let own = event.metadata {
            merged.merge(own) { _, new in new }
        }
        var line = "{\"timestamp\":" + JSONText.string(JSONText.timestamp(clock.now()))
        line += ",\"level\":" + JSONText.string(event.level.rawValue)
        line += ",\"label\":" + JSONText.string(label)
        line += ",\"message\":" + JSONText.string(event.message.description)
        // The request's id also at the top (CONTRACT §7.4), where log pipelines index it.
        if let requestID = merged["requestId"] {
            line += ",\"requestId\":" + JSONText.string(requestID.description)
        }
        // Its W3C trace id beside it, for joining the upstream's traces (docs/operations.md).
        if let traceID = merged["traceId"] {
            line += ",\"traceId\":" + JSONText.string(traceID.description)
        }
        line += ",\"metadata\":" + JSONText.object(merged)
        if let error = event.error {
            line += ",\"error\":" + JSONText.string(String(describing: error))
        }
        output.writeLine(line + "}")
    }
}

import Clocks
import Foundation
import HTTPRouting
import JSONLogging
import Logging
@testable import Settings
import Testing
import TestSupport
import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct JSONLogHandlerTests {
    static let fixedDate = Date(timeIntervalSince1970: 1_795_000_000.5)

    func logger(_ collector: LineCollector, level: Logger.Level = .info) -> Logger {
        Logger(label: "unicache.test") { label in
            JSONLogHandler(label: label, level: level, output: collector.output, clock: ManualWallClock(Self.fixedDate))
        }
    }

    func object(_ line: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(value as? [String: Any])
    }

    @Test func aLineIsOneJSONObjectWithTheFiveFields() throws {
        let collector = LineCollector()
        logger(collector).info("listening on http://127.0.0.1:8080", metadata: ["port": "8080"])
        let lines = collector.lines
        try #require(lines.count == 1)
        #expect(
            lines[0]
                == #"{"timestamp":"2026-11-18T11:06:40.500Z","level":"info","label":"unicache.test","message":"listening on http://127.0.0.1:8080","metadata":{"port":"8080"}}"#
        )
    }

    @Test(arguments: [
        "quote \" backslash \\ slash /", "new\nline", "cr\r tab\t", "bell \u{07} nul \u{00} esc \u{1B} del \u{7F}",
        "unicode é 漢字 🚀", "separators \u{2028} \u{2029}", "", "{\"looks\":\"like json\"}",
    ])
    func messagesAreEscapedAndReadBackExactly(_ message: String) throws {
        let collector = LineCollector()
        logger(collector).notice("\(message)", metadata: ["key \"q\"\n": "\(message)"])
        let line = try #require(collector.lines.first)
        #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{2028}"))
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 })
        let decoded = try object(line)
        #expect(decoded["message"] as? String == message)
        #expect((decoded["metadata"] as? [String: Any])?["key \"q\"\n"] as? String == message)
        #expect(decoded["level"] as? String == "notice")
    }

    @Test func metadataOfEveryKindIsNestedJSON() throws {
        let collector = LineCollector()
        var log = logger(collector)
        log[metadataKey: "handler"] = "h"
        log[metadataKey: "shadowed"] = "from handler"
        log.warning(
            "m",
            metadata: [
                "shadowed": "from call", "count": .stringConvertible(42),
                "list": ["a", .dictionary(["x": "y"])], "nested": ["inner": ["deep": "z"]],
            ])
        let decoded = try object(try #require(collector.lines.first))
        let metadata = try #require(decoded["metadata"] as? [String: Any])
        #expect(metadata["handler"] as? String == "h")
        #expect(metadata["shadowed"] as? String == "from call")
        #expect(metadata["count"] as? String == "42")
        let list = try #require(metadata["list"] as? [Any])
        #expect(list.first as? String == "a")
        #expect((list.last as? [String: Any])?["x"] as? String == "y")
        #expect(((metadata["nested"] as? [String: Any])?["inner"] as? [String: Any])?["deep"] as? String == "z")
    }

    @Test func metadataKeysAreSortedSoLinesAreStable() throws {
        let collector = LineCollector()
        logger(collector).info("m", metadata: ["b": "2", "a": "1", "c": "3"])
        #expect(try #require(collector.lines.first).contains(#""metadata":{"a":"1","b":"2","c":"3"}"#))
    }

    @Test func metadataProviderValuesAreIncluded() throws {
        let collector = LineCollector()
        let provider = Logger.MetadataProvider { ["request-id": "r-1"] }
        let logger = Logger(label: "p") { label in
            JSONLogHandler(label: label, output: collector.output, metadataProvider: provider, clock: ManualWallClock(Self.fixedDate))
        }
        logger.info("m")
        let metadata = try object(try #require(collector.lines.first))["metadata"] as? [String: Any]
        #expect(metadata?["request-id"] as? String == "r-1")
    }

    @Test func levelBelowTheHandlersIsDropped() {
        let collector = LineCollector()
        let log = logger(collector, level: .warning)
        log.info("dropped")
        log.debug("dropped")
        log.error("kept")
        #expect(collector.lines.count == 1)
        #expect(collector.lines.first?.contains("\"kept\"") == true)
    }

    @Test func concurrentLoggingKeepsEveryLineWhole() async throws {
        let collector = LineCollector()
        let log = logger(collector)
        await withTaskGroup { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<200 { log.info("task \(task) line \(index)", metadata: ["i": "\(index)"]) }
                }
            }
        }
        let lines = collector.lines
        #expect(lines.count == 1600)
        for line in lines {
            _ = try object(line)
        }
    }

    @Test func theRequestIDOfTheRunningHandlerIsWrittenAtTheTopAndInTheMetadata() throws {
        let collector = LineCollector()
        let log = Logger(label: "unicache.test") { label in
            JSONLogHandler(
                label: label, output: collector.output, metadataProvider: LoggingBootstrap.requestID, clock: ManualWallClock(Self.fixedDate))
        }
        log.info("outside")
        RequestID.$current.withValue(RequestID(validating: "req-1")) { log.info("inside", metadata: ["k": "v"]) }
        #expect(
            collector.lines == [
                #"{"timestamp":"2026-11-18T11:06:40.500Z","level":"info","label":"unicache.test","message":"outside","metadata":{}}"#,
                #"{"timestamp":"2026-11-18T11:06:40.500Z","level":"info","label":"unicache.test","message":"inside","requestId":"req-1","metadata":{"k":"v","requestId":"req-1"}}"#,
            ])
    }

    @Test func bootstrapFactoryFollowsTheSettings() {
        let collector = LineCollector()
        let json = LoggingBootstrap.handlerFactory(for: LogSettings(level: .debug, format: .json), output: collector.output, clock: SystemWallClock())
        let handler = json("x", nil)
        #expect(handler is JSONLogHandler)
        #expect(handler.logLevel == .debug)
        let text = LoggingBootstrap.handlerFactory(for: LogSettings(level: .error, format: .text), output: collector.output, clock: SystemWallClock())("y", nil)
        #expect(text is StreamLogHandler)
        #expect(text.logLevel == .error)
    }
}

import JSONLogging
import NIOConcurrencyHelpers
@testable import Settings
import UnicacheApp

/// A `LogOutput` that keeps the lines written to it.
final class LineCollector: Sendable {
    private let storage = NIOLockedValueBox<[String]>([])

    var lines: [String] { storage.withLockedValue { $0 } }

    var output: LogOutput {
        LogOutput { line in self.storage.withLockedValue { $0.append(line) } }
    }
}

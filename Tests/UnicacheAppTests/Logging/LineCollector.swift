import Synchronization
import UnicacheApp

/// A `LogOutput` that keeps the lines written to it.
final class LineCollector: Sendable {
    private let storage = Mutex<[String]>([])

    var lines: [String] { storage.withLock { $0 } }

    var output: LogOutput {
        LogOutput { line in self.storage.withLock { $0.append(line) } }
    }
}

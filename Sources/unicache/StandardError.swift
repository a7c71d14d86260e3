import Foundation

/// The executable's only direct output: one-line errors at start-up.
enum StandardError {
    static func writeLine(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

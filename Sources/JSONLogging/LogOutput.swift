import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where log lines go: one call per complete line (without its newline).
package struct LogOutput: Sendable {
    public let writeLine: @Sendable (String) -> Void

    public init(writeLine: @escaping @Sendable (String) -> Void) {
        self.writeLine = writeLine
    }

    /// Standard error, one whole line per write, lines of concurrent loggers never interleaved.
    /// Make it once and share it among all handlers.
    public static func standardError() -> LogOutput {
        fileDescriptor(2)
    }

    /// Whole lines to an open file descriptor (which the caller keeps open and closes).
    public static func fileDescriptor(_ fileDescriptor: Int32) -> LogOutput {
        let writer = FileDescriptorLineWriter(fileDescriptor: fileDescriptor)
        return LogOutput { writer.write($0) }
    }
}

/// Writes whole lines to a file descriptor under a lock.
final class FileDescriptorLineWriter: Sendable {
    private let fileDescriptor: Int32
    private let lock = NIOLock()

    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { buffer in
                    systemWrite(fileDescriptor, buffer.baseAddress, buffer.count)
                }
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return  // Nowhere left to report a failing log stream.
                }
            }
        }
    }
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
    Darwin.write(fd, buffer, count)
    #elseif canImport(Musl)
    Musl.write(fd, buffer, count)
    #else
    Glibc.write(fd, buffer, count)
    #endif
}

import Foundation
import TestSupport
import Testing

@testable import DiskTier

/// `POSIXFileSystem.readWhole`, the disk hit's read on the HTTP thread (one `read`, no `fstat`): the whole file or
/// nil, never a part of one, and nothing but a regular file ever reads as one.
@Suite(.timeLimit(.minutes(1)))
struct POSIXReadWholeTests {
    private let fileSystem = POSIXFileSystem()

    private func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    private func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    @Test(arguments: [0, 1, 1_200, POSIXFileSystem.wholeReadBytes - 1, POSIXFileSystem.wholeReadBytes,
                      POSIXFileSystem.wholeReadBytes + 1, 3 * POSIXFileSystem.wholeReadBytes + 5])
    func aFileWithinTheLimitIsReadWhole(size: Int) throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            try write(bytes(size), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(size))
        }
    }

    @Test(arguments: [10, POSIXFileSystem.wholeReadBytes, POSIXFileSystem.wholeReadBytes + 100])
    func aFileLongerThanTheLimitIsNil(limit: Int) throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            try write(bytes(limit + 1), to: path)
            #expect(fileSystem.readWhole(path, upTo: limit) == nil)
            try write(bytes(limit), to: path)
            #expect(fileSystem.readWhole(path, upTo: limit) == bytes(limit))
        }
    }

    @Test func aMissingFileAFolderALinkAndAFIFOAreNotAnEntrysBytes() throws {
        try withTemporaryFolder { dir in
            #expect(fileSystem.readWhole("\(dir)/missing", upTo: 1 << 20) == nil)
            try FileManager.default.createDirectory(atPath: "\(dir)/folder", withIntermediateDirectories: false)
            #expect(fileSystem.readWhole("\(dir)/folder", upTo: 1 << 20) == nil)
            try write(bytes(100), to: "\(dir)/target")
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/link", withDestinationPath: "\(dir)/target")
            #expect(fileSystem.readWhole("\(dir)/link", upTo: 1 << 20) == nil)
            // A FIFO without a writer opens at once (O_NONBLOCK) and reads as empty: bytes no entry verifies.
            #expect(mkfifo("\(dir)/fifo", 0o644) == 0)
            #expect(fileSystem.readWhole("\(dir)/fifo", upTo: 1 << 20) ?? [] == [])
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOConcurrencyHelpers

/// A JWKS file, read again only when its inode, size or modification or change time moved (a rotation by
/// rename or by rewriting in place).
public final class FileJWKSSource: JWKSSource {
    struct Stamp: Equatable {
        let inode: UInt64
        let size: Int64
        let modified: Int
        let modifiedNanoseconds: Int
        let changed: Int
        let changedNanoseconds: Int
    }

    public let path: String
    private let lastStamp = NIOLockedValueBox<Stamp?>(nil)

    public init(path: String) {
        self.path = path
    }

    public var isRemote: Bool { false }

    public func read() async throws(KeySetError) -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw KeySetError("cannot read the JWKS file \(path): \(String(cString: strerror(errno)))")
        }
        let stamp = Stamp(
            inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: info.st_mtim.tv_sec,
            modifiedNanoseconds: info.st_mtim.tv_nsec, changed: info.st_ctim.tv_sec,
            changedNanoseconds: info.st_ctim.tv_nsec)
        if lastStamp.withLockedValue({ $0 == stamp }) { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw KeySetError("cannot read the JWKS file \(path)") }
        lastStamp.withLockedValue { $0 = stamp }
        return Array(data)
    }
}

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
        /// The modification and change times, to the nanosecond.
        let modified: Duration
        let changed: Duration
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
            inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: Duration(info.st_mtim),
            changed: Duration(info.st_ctim))
        if lastStamp.withLockedValue({ $0 == stamp }) { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw KeySetError("cannot read the JWKS file \(path)") }
        lastStamp.withLockedValue { $0 = stamp }
        return Array(data)
    }
}

extension Duration {
    /// A `stat` time (seconds and nanoseconds since the epoch) as one value.
    fileprivate init(_ time: timespec) {
        self = .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

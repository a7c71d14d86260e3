import Foundation

/// A fresh folder under the system's temporary directory (or under `base`), named `prefix-UUID`; `remove()` deletes it
/// and all in it.
public struct TemporaryFolder: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(_ prefix: String = "unicache", under base: URL = FileManager.default.temporaryDirectory) throws {
        url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// /dev/shm when it is a writable directory, else the usual temporary directory: for servers whose timers must not
    /// wait on a disk busy with other tests (a Redis Sentinel or Cluster node fsyncs its config at every change; on
    /// tmpfs an fsync waits for no disk).
    public static var memoryBacked: URL {
        access("/dev/shm", W_OK) == 0 ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
    }

    /// The path of `name` inside the folder.
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Runs `body` with the path of a fresh temporary folder, removed afterwards.
@discardableResult
public func withTemporaryFolder<T>(_ prefix: String = "unicache", _ body: (String) async throws -> T) async throws -> T {
    let folder = try TemporaryFolder(prefix)
    defer { folder.remove() }
    return try await body(folder.path)
}

/// Runs `body` with the path of a fresh temporary folder, removed afterwards.
@discardableResult
public func withTemporaryFolder<T>(_ prefix: String = "unicache", _ body: (String) throws -> T) throws -> T {
    let folder = try TemporaryFolder(prefix)
    defer { folder.remove() }
    return try body(folder.path)
}

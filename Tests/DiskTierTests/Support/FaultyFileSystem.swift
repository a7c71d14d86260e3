import Dispatch
import Foundation
import Synchronization

@testable import DiskTier

/// The real file system with injectable faults: each operation can be made to fail with an `errno`,
/// and folder listings can be held until released (to keep the start-up index rebuild pending).
final class FaultyFileSystem: DiskFileSystem {
    struct Faults {
        var read: Int32?
        var create: Int32?
        var rename: Int32?
        var unlink: Int32?
        var list: Int32?
        var makeDirectory: Int32?
    }

    private let real = POSIXFileSystem()
    private let faults = Mutex(Faults())
    /// While held, `list` waits on it; released once, it lets every listing through (each passes the permit on).
    private let gate: Mutex<DispatchSemaphore?> = Mutex(nil)

    func set(_ change: (inout Faults) -> Void) { faults.withLock { change(&$0) } }
    func clearFaults() { faults.withLock { $0 = Faults() } }

    func holdListings() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }
    func releaseListings() {
        let semaphore = gate.withLock { gate in
            defer { gate = nil }
            return gate
        }
        semaphore?.signal()
    }

    private func fault(_ path: KeyPath<Faults, Int32?>, _ operation: String) throws(FileSystemError) {
        if let code = faults.withLock({ $0[keyPath: path] }) { throw FileSystemError(operation, code: code) }
    }

    func read(_ path: String, upTo limit: Int) throws(FileSystemError) -> FileContents {
        try fault(\.read, "read")
        return try real.read(path, upTo: limit)
    }

    func createFile(_ path: String, bytes: [UInt8], sync: Bool) throws(FileSystemError) {
        try fault(\.create, "open")
        try real.createFile(path, bytes: bytes, sync: sync)
    }

    func rename(_ source: String, to destination: String) throws(FileSystemError) {
        try fault(\.rename, "rename")
        try real.rename(source, to: destination)
    }

    func unlink(_ path: String) throws(FileSystemError) {
        try fault(\.unlink, "unlink")
        try real.unlink(path)
    }

    func list(_ directory: String) throws(FileSystemError) -> [String] {
        if let semaphore = gate.withLock({ $0 }) {
            semaphore.wait()
            semaphore.signal()
        }
        try fault(\.list, "opendir")
        return try real.list(directory)
    }

    func makeDirectory(_ path: String) throws(FileSystemError) {
        try fault(\.makeDirectory, "mkdir")
        try real.makeDirectory(path)
    }

    func syncDirectory(_ path: String) throws(FileSystemError) {
        try real.syncDirectory(path)
    }
}

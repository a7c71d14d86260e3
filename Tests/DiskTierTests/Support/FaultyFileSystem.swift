import Foundation
import NIOConcurrencyHelpers
import TestSupport

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
    private let faults = NIOLockedValueBox(Faults())
    /// A hold on folder listings (all, or of one folder): a listing waits at the latch (on the disk tier's own
    /// thread), after announcing itself on `reached`; released, it lets every listing through.
    private struct Gate {
        var folder: String?
        var latch: Latch
        var reached: Signals<Void>
    }

    private let gate: NIOLockedValueBox<Gate?> = NIOLockedValueBox(nil)

    func set(_ change: (inout Faults) -> Void) { faults.withLockedValue { change(&$0) } }
    func clearFaults() { faults.withLockedValue { $0 = Faults() } }

    /// Holds listings of `folder` (every folder when `nil`); signals each time one is held.
    @discardableResult
    func holdListings(of folder: String? = nil) -> Signals<Void> {
        let reached = Signals()
        gate.withLockedValue { $0 = Gate(folder: folder, latch: Latch(), reached: reached) }
        return reached
    }

    func releaseListings() {
        let held = gate.withLockedValue { gate in
            defer { gate = nil }
            return gate
        }
        held?.reached.finish()
        held?.latch.open()
    }

    private func fault(_ path: KeyPath<Faults, Int32?>, _ operation: String) throws(FileSystemError) {
        if let code = faults.withLockedValue({ $0[keyPath: path] }) { throw FileSystemError(operation, code: code) }
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
        if let held = gate.withLockedValue({ $0 }), held.folder == nil || held.folder == directory {
            held.reached.signal()
            held.latch.blockingWait()
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

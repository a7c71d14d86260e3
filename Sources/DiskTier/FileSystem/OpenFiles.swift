#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import Synchronization

/// An open entry file, closed when the last reader lets it go (so a descriptor is never closed under a read, and
/// its number never reused while one is in flight).
final class OpenFile: Sendable {
    let descriptor: Int32
    private let reads = Atomic<Int>(0)

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    /// True for every 16th read: the reader checks with `fstat` that the file is still linked.
    func isDueForCheck() -> Bool {
        reads.wrappingAdd(1, ordering: .relaxed).newValue & 15 == 0
    }

    deinit { close(descriptor) }
}

/// Entry files kept open between disk hits (nginx's `open_file_cache`): a hit on a kept file costs a `pread` instead of
/// an `open` (a walk of the whole path), a `read` and a `close`. Found by a `Name`: an entry's key within its tier's
/// folder, so that a hit needs no path (the path is made from the key's SHA-256), or a path itself.
///
/// Never stale for the tier's own changes: `POSIXFileSystem` drops a path right after it renames a file onto it or
/// unlinks it (the fleet's invalidations too end there), whatever name the file there is kept by, and a file opened
/// before such a change is not kept when it is offered after it (`generation`). A file written in place by anyone else
/// is read anew at once; one renamed over or deleted by anyone else is let go at the latest at its 16th read after
/// (`OpenFile.isDueForCheck`: `fstat` finds no link left), as nginx's `open_file_cache_valid` checks its files now and
/// then. At most `capacity` files are held; past it the oldest kept goes.
final class OpenFiles: Sendable {
    /// What a kept file is found by: `key` within `scope` (an entry's key within its tier's folder; a path within
    /// nothing). One name always names one path. Hashed by `hash`, the key's, given (a disk hit's key was hashed by
    /// the memory tier's look-up: one word is hashed here, not the key's bytes again), never by `scope` (a tier's
    /// scope is the same string for every entry, and compares in one step when it is the same storage).
    struct Name: Hashable, Sendable {
        let scope: String
        let key: String
        /// The same for one key at every call (the caller's function of the key alone).
        let hash: Int

        init(key: String, hash: Int, in scope: String) {
            self.scope = scope
            self.key = key
            self.hash = hash
        }

        init(path: String) { self.init(key: path, hash: path.hashValue, in: "") }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    private struct Kept {
        let file: OpenFile
        let path: String
        let serial: UInt64
    }

    private struct State {
        var kept: [Name: Kept] = [:]
        /// The name each kept path is kept by (for `drop`).
        var names: [String: Name] = [:]
        /// Names in the order they were kept, from `head` on; a name dropped or kept again since leaves a stale
        /// mark behind (its serial no longer matches), skipped when it comes up and swept when they pile up.
        var order: [(name: Name, serial: UInt64)] = []
        var head = 0
        var serial: UInt64 = 0
        /// Counts the drops: a file opened before one may be the file the dropped path named until then.
        var generation: UInt64 = 0

        /// Forgets `name`'s file; returns it.
        mutating func remove(_ name: Name) -> Kept? {
            guard let kept = kept.removeValue(forKey: name) else { return nil }
            if names[kept.path] == name { names[kept.path] = nil }
            return kept
        }
    }

    // NIOLockedValueBox rather than Synchronization.Mutex: ThreadSanitizer on Linux sees pthread locks only.
    private let state = NIOLockedValueBox(State())
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// A quarter of the process's open-file limit (`sysconf(_SC_OPEN_MAX)`, the soft limit), at most 1,024: room is
    /// left for connections and everything else.
    static var defaultCapacity: Int {
        let limit = sysconf(Int32(_SC_OPEN_MAX))
        return limit > 0 ? min(limit / 4, 1_024) : 0
    }

    subscript(name: Name) -> OpenFile? {
        state.withLockedValue { $0.kept[name]?.file }
    }

    /// To be read before opening a file that may be offered to `keep`.
    var generation: UInt64 { state.withLockedValue { $0.generation } }

    /// Keeps `file`, opened at `path` when the generation was `generation`, as `name`, unless a path was dropped since.
    func keep(_ file: OpenFile, as name: Name, at path: String, openedIn generation: UInt64) {
        guard capacity > 0 else { return }
        // What leaves the table is closed after the lock is released.
        let released: [Kept] = state.withLockedValue { state in
            guard state.generation == generation else { return [] }
            var released: [Kept] = []
            if let other = state.names[path], other != name, let kept = state.remove(other) { released.append(kept) }
            if state.kept[name] == nil {
                while state.kept.count >= capacity, state.head < state.order.count {
                    let oldest = state.order[state.head]
                    state.head += 1
                    if state.kept[oldest.name]?.serial == oldest.serial, let kept = state.remove(oldest.name) {
                        released.append(kept)
                    }
                }
            }
            state.serial += 1
            if let replaced = state.remove(name) { released.append(replaced) }
            state.kept[name] = Kept(file: file, path: path, serial: state.serial)
            state.names[path] = name
            state.order.append((name, state.serial))
            Self.sweep(&state, capacity: capacity)
            return released
        }
        _ = released
    }

    /// Forgets `path` (a file was renamed onto it or unlinked): the file kept there, if any, is closed once its
    /// readers are done.
    func drop(_ path: String) {
        let released: Kept? = state.withLockedValue { state in
            state.generation += 1
            return state.names[path].flatMap { state.remove($0) }
        }
        _ = released
    }

    /// Forgets `name` if `file` is still the one kept by it (it was found renamed over or deleted).
    func drop(_ name: Name, ifStill file: OpenFile) {
        let released: Kept? = state.withLockedValue { state in
            guard state.kept[name]?.file === file else { return nil }
            return state.remove(name)
        }
        _ = released
    }

    /// Files held now.
    var count: Int { state.withLockedValue { $0.kept.count } }

    /// Keeps the order list within twice the capacity (plus what `head` passed): stale marks are removed.
    private static func sweep(_ state: inout State, capacity: Int) {
        guard state.order.count - state.head > 2 * capacity + 16 || state.head > capacity + 16 else { return }
        let kept = state.kept
        state.order = state.order[state.head...].filter { kept[$0.name]?.serial == $0.serial }
        state.head = 0
    }
}

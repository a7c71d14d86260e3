/// The singleflight table (groupcache's `singleflight.Group`): per key at most one pending load and
/// one pending forced refresh, each a shared unstructured `Task` that every waiter awaits.
///
/// A plain structure; the manager keeps it under its lock and registers a record before any
/// suspension. Invalidation *detaches* matching records: their waiters still get the result,
/// new requests start a fresh load, and the detached load no longer stores (it is not current).
struct InFlightTable {
    enum Mode: Sendable {
        /// Serve from a tier if fresh, else fetch.
        case load
        /// Fetch unconditionally (forced or background refresh).
        case refresh
    }

    struct Record {
        let id: UInt64
        let key: String
        let namespace: String
        let user: String?
        let task: Task<LoadOutcome, Never>
        /// What the requests that joined it wait for (told before the task's last steps).
        let announced: AnnouncedOutcome
        /// Requests that joined after the one that started it.
        var waiters = 0
    }

    private var loads: [String: Record] = [:]
    private var refreshes: [String: Record] = [:]
    private var lastID: UInt64 = 0

    var count: Int { loads.count + refreshes.count }

    var pendingTasks: [Task<LoadOutcome, Never>] { loads.values.map(\.task) + refreshes.values.map(\.task) }

    /// Joins the pending load a request in `mode` may share: a refresh joins only a refresh; a load
    /// joins a load, else a refresh (which fetches, so its result is fresh).
    mutating func join(_ key: String, mode: Mode) -> AnnouncedOutcome? {
        if mode == .load, loads[key] != nil {
            loads[key]?.waiters += 1
            return loads[key]?.announced
        }
        guard refreshes[key] != nil else { return nil }
        refreshes[key]?.waiters += 1
        return refreshes[key]?.announced
    }

    /// Whether a load or a refresh of `key` is pending.
    func isPending(_ key: String) -> Bool { loads[key] != nil || refreshes[key] != nil }

    /// Requests waiting on the pending loads of `key` besides their starters.
    func waiters(_ key: String) -> Int { (loads[key]?.waiters ?? 0) + (refreshes[key]?.waiters ?? 0) }

    /// A fresh identifier for the record about to be registered.
    mutating func nextID() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    mutating func register(_ record: Record, mode: Mode) {
        switch mode {
        case .load: loads[record.key] = record
        case .refresh: refreshes[record.key] = record
        }
    }

    /// Removes the record if it is still the current one for its key; returns whether it was current.
    mutating func finish(id: UInt64, key: String, mode: Mode) -> Bool {
        switch mode {
        case .load:
            guard loads[key]?.id == id else { return false }
            loads[key] = nil
        case .refresh:
            guard refreshes[key]?.id == id else { return false }
            refreshes[key] = nil
        }
        return true
    }

    /// Detaches every record matching `scope` (both modes).
    mutating func detach(where scope: KeyScope) {
        loads = loads.filter { !scope.matches(key: $0.key, namespace: $0.value.namespace, user: $0.value.user) }
        refreshes = refreshes.filter {
            !scope.matches(key: $0.key, namespace: $0.value.namespace, user: $0.value.user)
        }
    }
}

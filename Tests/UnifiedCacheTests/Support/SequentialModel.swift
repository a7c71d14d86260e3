import Foundation
import SeededRandom
@testable import UnifiedCache

/// One operation of a model-checked history.
enum ModelOperation: Sendable, Equatable, CustomStringConvertible {
    case get(String)
    case put(String, size: Int)
    case invalidate(String)

    var key: String {
        switch self {
        case .get(let key), .put(let key, _), .invalidate(let key): key
        }
    }

    var description: String {
        switch self {
        case .get(let key): "get(\(key))"
        case .put(let key, let size): "put(\(key),\(size))"
        case .invalidate(let key): "invalidate(\(key))"
        }
    }

    /// What the fetcher answers for `key` (its size depends on the key so byte budgets matter).
    static func fetchedBody(_ key: String) -> [UInt8] {
        Array("f\(key)".utf8) + [UInt8](repeating: 0x2E, count: (Int(key) ?? 1) * 40)
    }

    static func putBody(_ key: String, size: Int) -> [UInt8] {
        Array("p\(key)".utf8) + [UInt8](repeating: 0x2D, count: size)
    }
}

/// What an operation answered: a body for gets, a Bool for puts (`created`) and invalidations (`removed`).
enum ModelResult: Sendable, Equatable, CustomStringConvertible {
    case body([UInt8])
    case flag(Bool)

    var description: String {
        switch self {
        case .body(let body): "\(String(decoding: body.prefix(2), as: UTF8.self))[\(body.count)]"
        case .flag(let flag): "\(flag)"
        }
    }
}

/// The sequential specification: an LRU with the memory tier's cost function and budgets.
struct SequentialCacheModel {
    let configuration: MemoryTierConfiguration
    /// Most recently used first.
    private(set) var entries: [CacheEntry] = []

    init(configuration: MemoryTierConfiguration) { self.configuration = configuration }

    var bytes: Int { entries.reduce(0) { $0 + MemoryTier.cost(of: $1) } }

    static func fetchedEntry(_ key: String) -> CacheEntry {
        let body = ModelOperation.fetchedBody(key)
        let date = Date(timeIntervalSince1970: 0)
        return CacheEntry(
            key: key, namespace: "test", user: "alice", body: body, contentType: "application/json",
            etag: ETag.make(for: body), storedAt: date, expiresAt: date, staleUntil: date)
    }

    static func putEntry(_ key: String, size: Int) -> CacheEntry {
        let body = ModelOperation.putBody(key, size: size)
        let date = Date(timeIntervalSince1970: 0)
        return CacheEntry(
            key: key, namespace: "raw", user: nil, body: body, contentType: "application/octet-stream",
            etag: ETag.make(for: body), storedAt: date, expiresAt: date, staleUntil: date)
    }

    /// Applies `operation`; `storeFetched: false` is the "invalidated while in flight" variant of a miss.
    mutating func apply(_ operation: ModelOperation, storeFetched: Bool = true) -> ModelResult {
        switch operation {
        case .get(let key):
            if let index = entries.firstIndex(where: { $0.key == key }) {
                let entry = entries.remove(at: index)
                entries.insert(entry, at: 0)
                return .body(entry.body)
            }
            let entry = Self.fetchedEntry(key)
            if storeFetched { insert(entry) }
            return .body(entry.body)
        case .put(let key, let size):
            let existed = entries.contains { $0.key == key }
            insert(Self.putEntry(key, size: size))
            return .flag(!existed)
        case .invalidate(let key):
            let existed = entries.contains { $0.key == key }
            entries.removeAll { $0.key == key }
            return .flag(existed)
        }
    }

    private mutating func insert(_ entry: CacheEntry) {
        entries.removeAll { $0.key == entry.key }
        guard MemoryTier.cost(of: entry) <= configuration.maxBytes, configuration.maxEntries > 0 else { return }
        entries.insert(entry, at: 0)
        while bytes > configuration.maxBytes || entries.count > configuration.maxEntries {
            entries.removeLast()
        }
    }

    /// Whether some interleaving of the tasks' operations (each task in its own order) yields exactly the
    /// observed results and ends in `final` (keys and bodies, most recently used first).
    /// A miss may skip its store when another task touches the same key (invalidation in flight wins).
    static func explains(
        start: SequentialCacheModel, tasks: [[(ModelOperation, ModelResult)]], final: [(String, [UInt8])]
    ) -> Bool {
        func search(_ model: SequentialCacheModel, _ next: [Int]) -> Bool {
            if zip(next, tasks).allSatisfy({ $0 == $1.count }) {
                return model.entries.map(\.key) == final.map(\.0) && model.entries.map(\.body) == final.map(\.1)
            }
            for (task, position) in next.enumerated() where position < tasks[task].count {
                let (operation, observed) = tasks[task][position]
                var advanced = next
                advanced[task] += 1
                var variants = [true]
                if case .get(let key) = operation,
                    tasks.indices.contains(where: { other in
                        other != task && tasks[other].contains { $0.0.key == key && $0.0 != .get(key) }
                    })
                {
                    variants.append(false)
                }
                for storeFetched in variants {
                    var candidate = model
                    guard candidate.apply(operation, storeFetched: storeFetched) == observed else { continue }
                    if search(candidate, advanced) { return true }
                }
            }
            return false
        }
        return search(start, Array(repeating: 0, count: tasks.count))
    }
}

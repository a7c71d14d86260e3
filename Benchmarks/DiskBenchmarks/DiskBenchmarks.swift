// Disk tier benchmarks: a disk hit (load of a 1 KB entry) and a warm restart (index rebuild of 100,000 entries).
// Run from Benchmarks/: swift package benchmark --target DiskBenchmarks
import Benchmark
import Clocks
import DiskTier
import Foundation
import Sealing
import UnifiedCache

let benchmarks: @Sendable () -> Void = {
    // The same hit with and without a key ring (CONTRACT §9), in the same run.
    for sealed in [false, true] {
        Benchmark(
            sealed ? "disk hit: load of a 1 KB sealed entry" : "disk hit: load of a 1 KB entry",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(10)),
            closure: { benchmark in
                let tier = await DiskFixture.shared.hitTier(sealed: sealed)
                benchmark.startMeasurement()
                for i in benchmark.scaledIterations {
                    blackHole(await tier.load(DiskFixture.hitKey(i % DiskFixture.hitKeys)))
                }
                benchmark.stopMeasurement()
            },
            teardown: { await DiskFixture.shared.removeAll() })
    }

    Benchmark(
        "warm restart: index rebuild of 100,000 entries",
        configuration: .init(metrics: [.wallClock], maxDuration: .seconds(60), maxIterations: 5),
        closure: { benchmark in
            let directory = await DiskFixture.shared.restartDirectory()
            benchmark.startMeasurement()
            let tier = try? await DiskTier.open(
                DiskTierConfiguration(directory: directory, limitBytes: 1 << 30), clock: SystemWallClock(),
                ticker: ContinuousClock())
            await tier?.waitUntilIndexed()
            benchmark.stopMeasurement()
            blackHole(tier?.statistics().entries)
        },
        teardown: { await DiskFixture.shared.removeAll() })

    // One user's invalidation arriving from the fleet (an event's namespaces, none of them held here): the scan of the
    // index, on the tier's queue, that every such event costs each instance.
    Benchmark(
        "user invalidation: scan of a 100,000-entry index",
        configuration: .init(metrics: [.wallClock, .mallocCountTotal], maxDuration: .seconds(10), maxIterations: 1_000),
        closure: { benchmark in
            let tier = await DiskFixture.shared.restartTier()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(await tier.removeAll(in: KeyScope(kind: .namespaces(["subscription"], user: "nobody"))))
            }
            benchmark.stopMeasurement()
        },
        teardown: { await DiskFixture.shared.removeAll() })
}

/// Folders filled once and shared by the iterations of a benchmark.
actor DiskFixture {
    static let shared = DiskFixture()
    static let hitKeys = 1000
    static let restartEntries = 100_000

    private var folders: [String] = []
    private var hit: [Bool: DiskTier] = [:]
    private var restart: String?

    static func hitKey(_ i: Int) -> String { "health.metrics:user\(i):hrv" }

    func hitTier(sealed: Bool) async -> DiskTier {
        if let tier = hit[sealed] { return tier }
        // Force unwraps as preconditions: a fresh temporary folder is writable and a 32-byte key makes a ring, or the
        // benchmark cannot run at all.
        let codec = sealed ? EntryCodec(keyRing: try! KeyRing(keys: [("bench", Array(repeating: 9, count: 32))]), acceptPlaintext: false) : EntryCodec()
        let tier = try! await DiskTier.open(
            DiskTierConfiguration(directory: newFolder(), limitBytes: 1 << 30), codec: codec, clock: SystemWallClock(),
            ticker: ContinuousClock())
        for i in 0..<Self.hitKeys { await tier.store(entry(Self.hitKey(i), bytes: 1024)) }
        hit[sealed] = tier
        return tier
    }

    func restartDirectory() async -> String {
        if let restart { return restart }
        let folder = newFolder()
        // Force unwrap as precondition: as above.
        let tier = try! await DiskTier.open(
            DiskTierConfiguration(directory: folder, limitBytes: 1 << 30), clock: SystemWallClock(), ticker: ContinuousClock())
        for i in 0..<Self.restartEntries { await tier.store(entry("activities:user\(i):run:30", bytes: 512)) }
        restart = folder
        return folder
    }

    /// The tier of `restartDirectory()`, indexed.
    func restartTier() async -> DiskTier {
        // Force unwrap as precondition: as above.
        let tier = try! await DiskTier.open(
            DiskTierConfiguration(directory: await restartDirectory(), limitBytes: 1 << 30), clock: SystemWallClock(),
            ticker: ContinuousClock())
        await tier.waitUntilIndexed()
        return tier
    }

    func removeAll() {
        for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
        folders = []
        hit = [:]
        restart = nil
    }

    private func newFolder() -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("disk-bench-\(UUID().uuidString)").path
        folders.append(folder)
        return folder
    }

    private func entry(_ key: String, bytes: Int) -> CacheEntry {
        let now = Date()
        return CacheEntry(
            key: key, namespace: "bench", user: nil, body: Array(repeating: 0x7b, count: bytes),
            contentType: "application/json", etag: "\"bench\"", storedAt: now, expiresAt: now + 86_400,
            staleUntil: now + 86_400)
    }
}

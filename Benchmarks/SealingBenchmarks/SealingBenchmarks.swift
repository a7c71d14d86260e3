// Values at rest (CONTRACT §9): AES-256-GCM seal and open per KiB, and the entry codec that every disk and Redis
// write and read goes through, sealed against plaintext in the same run.
// Run from Benchmarks/: swift package benchmark --target SealingBenchmarks (or scripts/bench-sealing.sh)
import Benchmark
import Foundation
import Sealing
import UnifiedCache

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(5))
    // Valid by construction: one 32-byte key with an allowed ID.
    let ring = try! KeyRing(keys: [("bench", (0..<32).map { UInt8($0) })])
    let context = Array(repeating: UInt8(7), count: 120)

    for kib in [1, 16, 64] {
        let plaintext = (0..<(kib << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let envelope = try! ring.seal(plaintext, authenticating: context)  // Sealing with a valid key cannot fail.
        Benchmark("seal \(kib) KiB", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try? ring.seal(plaintext, authenticating: context)) }
        }
        Benchmark("open \(kib) KiB", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try? ring.open(envelope[...], authenticating: context)) }
        }
    }

    let entry = CacheEntry(
        key: "health.metrics:user1:hrv", namespace: "health.metrics", user: "user1",
        body: (0..<1024).map { UInt8(truncatingIfNeeded: $0) }, contentType: "application/json",
        etag: ETag.make(for: Array(repeating: 1, count: 8)), storedAt: Date(), expiresAt: Date() + 3600,
        staleUntil: Date() + 3600)
    for (name, codec) in [("plaintext", EntryCodec()), ("sealed", EntryCodec(keyRing: ring, acceptPlaintext: false))] {
        let stored = try! codec.encode(entry)  // Encoding with a valid key cannot fail.
        Benchmark("entry codec, \(name): encode 1 KiB", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try? codec.encode(entry)) }
        }
        Benchmark("entry codec, \(name): decode 1 KiB", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try? codec.decode(stored, key: entry.key)) }
        }
    }
}

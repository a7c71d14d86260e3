// swift-tools-version:6.1
// Benchmarks of the cache core with ordo-one/benchmark. A package of its own so that
// `swift test` on the service never builds the benchmark tooling. Run: scripts/bench-cache.sh
import PackageDescription

let package = Package(
    name: "unicache-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "unicache", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CacheBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Clocks", package: "unicache"),
                .product(name: "UnifiedCache", package: "unicache"),
                .product(name: "UpstreamGate", package: "unicache"),
                .product(name: "Breaker", package: "unicache"),
            ],
            path: "CacheBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SealingBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Sealing", package: "unicache"),
                .product(name: "Clocks", package: "unicache"),
                .product(name: "UnifiedCache", package: "unicache"),
            ],
            path: "SealingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "DiskBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Clocks", package: "unicache"),
                .product(name: "UnifiedCache", package: "unicache"),
                .product(name: "DiskTier", package: "unicache"),
                .product(name: "Sealing", package: "unicache"),
            ],
            path: "DiskBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)

// swift-tools-version:6.2
import PackageDescription

/// Our own targets build in Swift 6 language mode with every warning an error.
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .treatAllWarnings(as: .error)]

let package = Package(
    name: "unicache",
    platforms: [.macOS(.v15)],
    products: [
        // The one product that ships. The libraries below are for the benchmark package (Benchmarks/Package.swift),
        // which can only depend on products; nothing else imports them.
        .executable(name: "unicache", targets: ["unicache"]),
        .library(name: "Clocks", targets: ["Clocks"]),
        .library(name: "UnifiedCache", targets: ["UnifiedCache"]),
        .library(name: "DiskTier", targets: ["DiskTier"]),
        .library(name: "UpstreamGate", targets: ["UpstreamGate"]),
        .library(name: "Breaker", targets: ["Breaker"]),
        .library(name: "Sealing", targets: ["Sealing"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // swift-nio: NIOConcurrencyHelpers' locks (a pthread lock ThreadSanitizer understands on Linux) in most targets;
        // NIOCore and NIOPosix in MicroHTTPServer (System.coreCount), UnicacheApp (the upstream and JWKS client's
        // errors), Tools (the healthcheck's TLS) and Redis; the core, UnifiedCache, uses only the locks.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        // Access: JWS signature verification with the key bound to its algorithm (RS/PS/ES/EdDSA, no HMAC JWKs).
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // TLS: the healthcheck's HTTPS probe, in Tools (already in the graph through async-http-client).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Tests only: the certificates the TLS tests make in-process.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        // libmicrohttpd as Debian ships it (pkg-config finds the multiarch .pc file).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // The Redis link on SwiftNIO (RESP2, pipelining, TLS, ACL, Sentinel): connections, a node client (a pool of
        // multiplexed connections behind a circuit breaker), the Sentinel watch and the invalidation subscriber.
        // RedisTier's only way to Redis.
        .target(
            name: "Redis",
            dependencies: [
                "Breaker", "Clocks", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                // The names a Redis certificate gives, read to verify --redis-tls-server-name as that name alone.
                .product(name: "X509", package: "swift-certificates"),
                // Insecure.SHA1: a script's digest for EVALSHA.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Time: the wall clock for dates, `Duration` as seconds and milliseconds, monotonic readings of any
        // `Clock<Duration>` with the timers over them, and work that blocks a thread.
        .target(name: "Clocks", swiftSettings: strict),
        // One circuit-breaker state machine, configured per dependency (each upstream, Redis).
        .target(name: "Breaker", swiftSettings: strict),
        // glibc's <malloc.h> (mallopt, malloc_trim, mallinfo2): the service bounds what the allocator keeps.
        .systemLibrary(name: "CMalloc"),
        // GnuTLS's one-shot SHA-256 (`gnutls_hash_fast`; the library libmicrohttpd and the TLS check link already): a
        // read's digest checks with no hasher allocated.
        .systemLibrary(name: "CDigest"),
        // prctl(2) (variadic in C): the service makes itself not dumpable when it holds secrets.
        .systemLibrary(name: "CProcess"),
        // Non-variadic C wrappers for what Swift cannot call directly.
        // GnuTLS (libmicrohttpd's TLS library, libgnutls28-dev) checks a certificate and key before a TLS daemon starts.
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"], linkerSettings: [.linkedLibrary("gnutls")]),
        // The only Swift module that touches libmicrohttpd (UnicacheApp calls only glibc's malloc controls through
        // CMalloc).
        .target(
            name: "MicroHTTPServer",
            dependencies: [
                "CMicroHTTPDShim", "CMicroHTTPD", "HTTPRouting", "Clocks",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // System.coreCount: the CPUs a container's cgroup quota and cpuset allow.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // Pure Swift: request/response values, router, problem+json.
        .target(name: "HTTPRouting", swiftSettings: strict),
        // Who may read what (CONTRACT §8): protected mode, bearer JWTs, key sets, remembered tokens. No cache, no C.
        .target(
            name: "Access",
            dependencies: [
                "HTTPRouting", "Clocks", .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                // NIOLockedValueBox: a pthread lock ThreadSanitizer understands on Linux (Synchronization.Mutex it does not).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // Key ring and AES-256-GCM seal/open of values at rest (CONTRACT §9); used by the tiers through the core's codec.
        .target(name: "Sealing", dependencies: [.product(name: "Crypto", package: "swift-crypto")], swiftSettings: strict),
        // Pure Swift, no HTTP, no C, no JSON: the cache core (a body-dependent lifetime is the app's `Expiry`).
        .target(
            name: "UnifiedCache",
            dependencies: [
                "Sealing", "Clocks", "CDigest",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // The upstream gate (CONTRACT §7): budgets, 429 pause, circuit breaker, concurrency cap, as a Fetcher
        // decorator; the cache core knows only the refusal it reports.
        .target(
            name: "UpstreamGate",
            dependencies: ["UnifiedCache", "Breaker", "Clocks", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: strict
        ),
        // The disk tier, plugged into UnifiedCache's second-tier hook.
        .target(
            name: "DiskTier",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "Clocks", "UnifiedCache", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // `make bench-efficiency`: replays synthetic traces through a running unicache and prints its hit ratios
        // beside LRU's and the optimum's (docs/eviction.md).
        .executableTarget(
            name: "efficiency-bench",
            dependencies: [
                "EfficiencyTraces", "UnifiedCache", .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Benchmarks/EfficiencyBench", swiftSettings: strict
        ),
        // Its synthetic traces, which the policies' tests replay too.
        .target(name: "EfficiencyTraces", dependencies: ["UnifiedCache"], path: "Benchmarks/EfficiencyTraces", swiftSettings: strict),
        // Child process for DiskTierTests' SIGKILL crash test: stores entries in a loop.
        .executableTarget(
            name: "disktier-crash-writer",
            dependencies: ["Clocks", "DiskTier", "UnifiedCache", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The fleet's shared tier on Redis, plugged into UnifiedCache's shared-tier hook: the fleet protocol (keys,
        // scripts, the invalidation log and channel), nothing of the wire.
        .target(
            name: "RedisTier",
            dependencies: [
                "Redis", "UnifiedCache", "UpstreamGate", "Clocks", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // The demo upstream (`--demo`): deterministic synthetic data for every namespace, a Fetcher like any other.
        .target(name: "DemoUpstream", dependencies: ["UnifiedCache", "Clocks"], swiftSettings: strict),
        // `--log-level` and `--log-format`: the swift-log bootstrap, one JSON object per line, whole-line writes.
        .target(
            name: "JSONLogging",
            dependencies: [
                "Clocks", "HTTPRouting", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // The operator's tools beside the service: `unicache healthcheck` (one GET over a blocking socket, HTTPS with a
        // pinned certificate, swift-nio-ssl) and `unicache top` (reading /stats and /metrics with the same client, and
        // drawing the frame).
        .target(
            name: "Tools",
            dependencies: [
                "HTTPRouting", "Clocks",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // The flags of `serve`, `healthcheck` and `top` and their environment variables, read into settings (one type
        // per concern), with a one-line error naming the flag and the form it takes; the read-through namespaces as the
        // flags see them (`ResourceCatalog`). No route, no fetcher, no wiring.
        .target(
            name: "Settings",
            dependencies: [
                "Access", "Clocks", "HTTPRouting", "JSONLogging", "MicroHTTPServer", "Redis", "Sealing", "Tools",
                "UnifiedCache", "UpstreamGate", .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // Generated by scripts/embed-openapi.sh, nothing else in it: openapi.yaml as a raw string for GET /openapi.yaml.
        .target(name: "OpenAPISpec", swiftSettings: strict),
        // The upstreams over HTTP (async-http-client, one client for the service): each domain's fetcher (paths from
        // `--upstream-path`, headers, trace context, Retry-After) and the JWKS URL's key source.
        .target(
            name: "UpstreamHTTP",
            dependencies: [
                "Access", "Clocks", "HTTPRouting", "Settings", "UnifiedCache",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // NIOCore and NIOPosix: only to tell a connection that never reached the upstream by its error type.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // Resource table (and the body-reading freshness rules), upstream fetchers, admin and stats routes, and the one
        // place that wires the service.
        .target(
            name: "UnicacheApp",
            dependencies: [
                "CMalloc", "CProcess", "Clocks", "Settings", "UpstreamHTTP", "UnifiedCache", "UpstreamGate", "DiskTier",
                "RedisTier", "Redis", "HTTPRouting", "MicroHTTPServer", "Access", "DemoUpstream", "JSONLogging", "OpenAPISpec",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "unicache",
            dependencies: ["UnicacheApp", "Settings", "Clocks", "JSONLogging", "Tools", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict,
            // Resident memory at start-up (docs/benchmarks.md, Under pressure): linked by the toolchain's lld, the
            // relative relocations packed (RELR, which Debian 12's glibc 2.36 applies) and no symbol exported, the
            // loader reads 50 KiB of relocations and no dynamic symbol table, where it read 3.2 MiB and 2.4 MiB.
            linkerSettings: [
                .unsafeFlags([
                    "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                ])
            ]
        ),
        // The Swift server of scripts/bench-http.sh (sync and async routes over MicroHTTPServer).
        .executableTarget(
            name: "HTTPBenchServer",
            dependencies: [
                "MicroHTTPServer", "HTTPRouting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Benchmarks/HTTPBenchServer",
            swiftSettings: strict
        ),
        // `make bench-http`'s cost of an access decision per algorithm: first verification and remembered token.
        .executableTarget(
            name: "access-bench",
            dependencies: [
                "Access", "AccessTestSupport", "Clocks", "HTTPRouting", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/AccessBench",
            swiftSettings: strict
        ),

        // Starts a real redis-server on a free loopback port for the tests that need one (never shipped): servers
        // stopped on every path, a TLS-only server from TLSTestSupport's test CA, a command of the test's own, and a
        // fake peer for what a real server never does (an endless reply, a silent or lying Sentinel).
        .target(
            name: "RedisTestSupport",
            dependencies: [
                "Redis", "TestSupport", "TLSTestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/RedisTestSupport", swiftSettings: strict),
        // The tests' kit (never shipped): a latch, signals, bounded polling, temporary folders, a capturing log handler, a
        // manual clock, a thread for blocking calls, a scope that stops what a test started.
        .target(
            name: "TestSupport",
            dependencies: [
                "Clocks", "ClocksTesting", "TestParallelism",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/TestSupport", swiftSettings: strict),
        // How many tests run at once (four per CPU unless SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH says), set before
        // main: a constructor in C, linked into the test bundle through TestSupport.
        .target(name: "TestParallelism", path: "Tests/TestParallelism"),
        // The manual clocks (a monotonic one whose sleepers wake when the test moves it, a wall clock set by hand),
        // apart from TestSupport so that a benchmark can use them without Swift Testing (TestSupport re-exports them).
        .target(
            name: "ClocksTesting",
            dependencies: ["Clocks", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            path: "Tests/ClocksTesting", swiftSettings: strict),
        // A seeded random generator, so that randomised tests replay from their seed.
        .target(name: "SeededRandom", dependencies: ["UnifiedCache"], path: "Tests/SeededRandom", swiftSettings: strict),
        // Certificates made in-process (self-signed, or a test CA and what it signs) and a keep-alive HTTPS client,
        // for the TLS tests (never shipped).
        .target(
            name: "TLSTestSupport",
            dependencies: [
                "TestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/TLSTestSupport", swiftSettings: strict),
        // The Redis module against real redis-servers the tests start (plain, TLS from a test CA, ACL users, Sentinel
        // groups) and fake peers for what a real server never does.
        .testTarget(
            name: "RedisTests",
            dependencies: [
                "Redis", "RedisTestSupport", "TestSupport", "TLSTestSupport", "Breaker", "ClocksTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // The RedisTier types against a real redis-server the tests start: the log, catch-up, resets.
        .testTarget(
            name: "RedisTierTests",
            dependencies: [
                "RedisTier", "Redis", "RedisTestSupport", "Sealing", "TestSupport", "UnifiedCache", "UpstreamGate",
                "ClocksTesting", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ClocksTests",
            dependencies: ["Clocks", "TestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: strict),
        .testTarget(name: "BreakerTests", dependencies: ["Breaker", "UpstreamGate", "Redis"], swiftSettings: strict),
        .testTarget(name: "HTTPRoutingTests", dependencies: ["HTTPRouting"], swiftSettings: strict),
        // Real keys of every accepted algorithm and the tokens they sign, for the tests of §8 (never shipped).
        .target(
            name: "AccessTestSupport",
            dependencies: [
                "Access", "Clocks", "ClocksTesting", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/AccessTestSupport", swiftSettings: strict
        ),
        .testTarget(
            name: "AccessTests",
            dependencies: [
                "Access", "AccessTestSupport", "Clocks", "HTTPRouting", "TestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "SealingTests", dependencies: ["Sealing", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "DemoUpstreamTests",
            dependencies: ["DemoUpstream", "UnifiedCache", "Clocks", "TestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MicroHTTPServerTests",
            dependencies: [
                "MicroHTTPServer", "HTTPRouting", "TLSTestSupport", "TestSupport", "CMicroHTTPD",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UnifiedCacheTests",
            dependencies: [
                "UnifiedCache", "Clocks", "UpstreamGate", "SeededRandom", "Sealing", "TestSupport", "EfficiencyTraces",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UpstreamGateTests",
            dependencies: [
                "UpstreamGate", "UnifiedCache", "Breaker", "SeededRandom", "TestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DiskTierTests",
            dependencies: ["DiskTier", "UnifiedCache", "Clocks", "Sealing", "TestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "UnicacheAppTests",
            dependencies: [
                "UnicacheApp", "Settings", "UpstreamHTTP", "UnifiedCache", "Clocks", "UpstreamGate", "DiskTier", "HTTPRouting", "MicroHTTPServer", "Redis",
                "RedisTier", "RedisTestSupport", "TLSTestSupport", "TestSupport", "Sealing",
                "Access", "AccessTestSupport", "JSONLogging", "Tools", "OpenAPISpec",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ]
)

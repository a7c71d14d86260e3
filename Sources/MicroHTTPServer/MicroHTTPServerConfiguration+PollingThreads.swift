import CMicroHTTPDShim
import NIOCore

extension MicroHTTPServerConfiguration {
    /// The polling threads MHD is started with: at least one, and no more than connections (a thread beyond that
    /// would never have one).
    var effectivePollingThreads: Int { min(max(1, pollingThreads), max(1, maxConnections)) }

    /// How many CPUs this process may use: its scheduler affinity mask as `nproc` counts it (`taskset`), and no
    /// more than swift-nio's `System.coreCount` allows (a container's cgroup CPU quota, Docker's `--cpus`, and
    /// cpuset, `--cpuset-cpus`). At least 1.
    public static func availableProcessors() -> Int {
        max(1, min(Int(unicache_available_processors()), System.coreCount))
    }
}

import CMicroHTTPDShim

extension MicroHTTPServerConfiguration {
    /// The polling threads MHD is started with: at least one, and no more than connections (MHD splits the
    /// connection limit evenly among its threads; a thread whose share is 0 would never accept).
    var effectivePollingThreads: Int { min(max(1, pollingThreads), max(1, maxConnections)) }

    /// How many CPUs this process may run on, counted as `nproc` does: the scheduler affinity mask, so
    /// `taskset` and Docker's `--cpuset-cpus` are honoured (a `--cpus` quota is not). At least 1.
    public static func availableProcessors() -> Int {
        Int(unicache_available_processors())
    }
}

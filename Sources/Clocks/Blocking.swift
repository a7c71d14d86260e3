import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Work that blocks a thread (file walks, a command-line loop's pause), kept off the tasks' cooperative pool.
public enum Blocking {
    /// Runs `work` on a thread of its own (a dispatch queue named `label`) and returns its result to the awaiting
    /// task, which suspends meanwhile instead of holding one of the pool's threads.
    public static func run<Result: Sendable>(
        label: String, _ work: @escaping @Sendable () -> Result
    ) async -> Result {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: label).async { continuation.resume(returning: work()) }
        }
    }

    /// Blocks the calling thread for `duration` (not at all when it is not positive): a synchronous command's pause,
    /// never a task's.
    public static func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, microseconds) = duration.secondsAndMicroseconds
        var request = timespec(tv_sec: .init(seconds), tv_nsec: .init(microseconds * 1000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

import CHiredis
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The POSIX pieces RedisClient needs besides hiredis: a pthread lock with a condition variable,
// joinable threads, a wake-up pipe and poll(2). Kept here so the unsafe code stays in two files
// (this one and Hiredis.swift).

/// A value guarded by a pthread mutex, with a condition variable for threads that wait on it: the
/// repository's one lock a thread can block on until a predicate holds (the pool's workers wait for a job
/// or shutdown; `shutdown` and `stop` wait for the threads to be joined). Everywhere else a plain lock is
/// NIOLockedValueBox; NIO's ConditionLock waits only for one integer value, not a predicate.
///
/// A pthread lock rather than `Synchronization.Mutex`: on Linux ThreadSanitizer does not see
/// Mutex's futex and would report false races.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read or written while `mutex` is held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Blocks the calling thread until `ready` holds (re-checked after every `broadcast`/`signal`),
    /// then runs `body` under the same lock hold.
    package func withLock<Result>(
        waitingUntil ready: (Value) -> Bool,
        _ body: (inout Value) -> Result
    ) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(value) {
            pthread_cond_wait(condition, mutex)
        }
        return body(&value)
    }

    /// Wakes one thread blocked in `withLock(waitingUntil:_:)`.
    package func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread blocked in `withLock(waitingUntil:_:)`.
    package func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// A joinable POSIX thread running a Swift closure, with SIGPIPE blocked.
package struct JoinableThread: Sendable {
    // pthread_t is an integer on Linux; it only names the thread, it owns nothing.
    private let handle: pthread_t

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a thread named `name` (what `top -H` and `ps -L` show operators; a name over 15 bytes is refused
    /// and the thread keeps its creator's); returns the error number when the system refuses a thread.
    package static func start(
        name: String, _ run: @escaping @Sendable () -> Void
    ) -> Result<JoinableThread, ThreadStartError> {
        let body = Unmanaged.passRetained(Body {
            #if os(Linux)
            _ = pthread_setname_np(pthread_self(), name)
            #endif
            run()
        }).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, { raw in
            guard let raw else { return nil }
            // hiredis writes with write(2): a peer that closed would raise SIGPIPE and kill the
            // process. Blocked on this thread, the write fails with EPIPE instead.
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, body)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(body).release()
            return .failure(ThreadStartError(message: "cannot start a thread: \(errorDescription(status))"))
        }
        return .success(JoinableThread(handle: handle))
    }

    private init(handle: pthread_t) { self.handle = handle }

    /// Whether the caller runs on this thread (joining it from itself would deadlock).
    package var isCurrent: Bool { pthread_equal(pthread_self(), handle) != 0 }

    /// Puts the calling thread under Linux's `SCHED_BATCH` policy: waking it never preempts the thread that woke it
    /// (an HTTP thread queueing commands goes on queueing until it waits, and the worker then takes them as one
    /// batch, instead of taking each as soon as it is queued when both share a CPU). Best effort: elsewhere, or if
    /// refused, nothing changes.
    package static func preferBatchScheduling() {
        #if os(Linux)
        var parameters = sched_param()
        _ = sched_setscheduler(0, 3 /* SCHED_BATCH, <linux/sched.h>; Glibc's module does not export it */, &parameters)
        #endif
    }

    /// Waits for the thread to finish; called from the thread itself it detaches it instead.
    package func join() {
        if isCurrent {
            pthread_detach(handle)
        } else {
            pthread_join(handle, nil)
        }
    }

    /// Lets the thread end on its own (its resources are then freed when it does).
    package func detach() {
        pthread_detach(handle)
    }
}

package struct ThreadStartError: Error, Sendable {
    package let message: String
}

/// The text of an errno value.
func errorDescription(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// A pipe whose read end becomes readable, for good, once `wake()` was called: lets stop()
/// interrupt a thread blocked in poll(2).
final class WakeUpPipe: Sendable {
    let readDescriptor: Int32
    private let writeDescriptor: Int32

    init?() {
        guard let (readEnd, writeEnd) = closeOnExecSocketPair() else { return nil }
        _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)
        readDescriptor = readEnd
        writeDescriptor = writeEnd
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    /// Makes the read end readable (never drained, so every later poll sees it too).
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }
}

/// A connected pair of Unix stream sockets, both close-on-exec from the start (pipe2 is not
/// visible from Swift's Glibc module): a pipe no spawned process can inherit.
package func closeOnExecSocketPair() -> (Int32, Int32)? {
    var descriptors: [Int32] = [-1, -1]
    #if canImport(Glibc)
    let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
    #else
    let type = SOCK_STREAM
    #endif
    guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else { return nil }
    return (descriptors[0], descriptors[1])
}

/// What poll(2) saw.
struct PollResult: Sendable {
    var woken = false
    var readable = false
    var writable = false
    /// Error or hang-up on the socket (reading then reports the reason).
    var failed = false
}

/// Waits until `socket` is readable (or writable, when asked), `wakeUp` was woken, or `timeout`
/// passed. Retries on EINTR with the remaining time.
func pollSocket(
    _ socket: Int32, forWriting: Bool, wakeUp: WakeUpPipe, timeout: Duration
) -> PollResult {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    var descriptors = [
        pollfd(fd: socket, events: Int16(POLLIN) | (forWriting ? Int16(POLLOUT) : 0), revents: 0),
        pollfd(fd: wakeUp.readDescriptor, events: Int16(POLLIN), revents: 0),
    ]
    while true {
        let remaining = clock.now.duration(to: deadline)
        let status = poll(&descriptors, nfds_t(descriptors.count), milliseconds(remaining))
        if status < 0 {
            if errno == EINTR { continue }
            return PollResult(failed: true)
        }
        var result = PollResult()
        result.woken = descriptors[1].revents != 0
        let events = descriptors[0].revents
        result.readable = events & Int16(POLLIN) != 0
        result.writable = events & Int16(POLLOUT) != 0
        result.failed = events & (Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)) != 0
        return result
    }
}

/// Waits until `wakeUp` was woken (true) or `timeout` passed (false).
func waitForWakeUp(_ wakeUp: WakeUpPipe, timeout: Duration) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    var descriptor = pollfd(fd: wakeUp.readDescriptor, events: Int16(POLLIN), revents: 0)
    while true {
        let remaining = clock.now.duration(to: deadline)
        let status = poll(&descriptor, 1, milliseconds(remaining))
        if status < 0 && errno == EINTR { continue }
        return status > 0
    }
}

/// Whole milliseconds for poll(2), rounded up so a wait never ends before its deadline.
func milliseconds(_ duration: Duration) -> Int32 {
    if duration <= .zero { return 0 }
    let (seconds, attoseconds) = duration.components
    let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return Int32(clamping: total)
}

/// A Duration as a timeval, at least one millisecond (a zero SO_RCVTIMEO would mean "forever").
func makeTimeval(_ duration: Duration) -> timeval {
    let (seconds, attoseconds) = max(duration, .milliseconds(1)).components
    var value = timeval()
    value.tv_sec = numericCast(seconds)
    value.tv_usec = numericCast(attoseconds / 1_000_000_000_000)
    return value
}

extension Duration {
    /// "50 ms", "1.5 s": for messages.
    var shortDescription: String {
        let (seconds, attoseconds) = components
        let totalMilliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if totalMilliseconds < 1000 { return "\(totalMilliseconds) ms" }
        if totalMilliseconds % 1000 == 0 { return "\(totalMilliseconds / 1000) s" }
        return "\(Double(totalMilliseconds) / 1000) s"
    }
}

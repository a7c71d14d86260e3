#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on a new detached POSIX thread (a test's blocking reads and waits on a child process); false when
/// the system refuses a thread.
func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    var handle = pthread_t()
    let status = pthread_create(&handle, nil, { raw in
        guard let raw else { return nil }
        Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
        return nil
    }, context)
    guard status == 0 else {
        Unmanaged<Body>.fromOpaque(context).release()
        return false
    }
    pthread_detach(handle)
    return true
}

/// A connected pair of Unix stream sockets, both close-on-exec from the start (pipe2 is not
/// visible from Swift's Glibc module): a pipe no spawned process can inherit.
func closeOnExecSocketPair() -> (Int32, Int32)? {
    var descriptors: [Int32] = [-1, -1]
    #if canImport(Glibc)
    let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
    #else
    let type = SOCK_STREAM
    #endif
    guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else { return nil }
    return (descriptors[0], descriptors[1])
}

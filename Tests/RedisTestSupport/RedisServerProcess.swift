import NIOConcurrencyHelpers
import Redis

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a test's redis-server could not be started.
public struct RedisProcessError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A real `redis-server` on a free loopback port, for tests. Started with no persistence and with
/// DEBUG allowed from loopback (`DEBUG SLEEP` simulates a slow server).
public final class RedisServerProcess: Sendable {
    public let port: Int
    public let password: String?
    /// Its working directory (`--dir`), where `SAVE` writes its dump; `nil`: the test process's.
    public let directory: String?
    private let executable: String
    /// The command line after the executable (the same on `restart()`), and the output line that says it is ready.
    private let arguments: [String]
    private let readyMarker: String
    private let child: NIOLockedValueBox<ChildProcess>

    /// How long a server may take to say "Ready to accept connections" (a bound, not a wait).
    static let readinessBound = Duration.seconds(20)

    private init(
        port: Int, password: String?, directory: String?, executable: String, arguments: [String], readyMarker: String,
        child: ChildProcess
    ) {
        self.port = port
        self.password = password
        self.directory = directory
        self.executable = executable
        self.arguments = arguments
        self.readyMarker = readyMarker
        self.child = NIOLockedValueBox(child)
    }

    deinit {
        // A failing test must never leak a server; the monitor thread reaps it.
        child.withLockedValue { $0 }.signal(SIGKILL)
    }

    /// Starts `redis-server` (at /usr/bin/redis-server or on PATH) on a free loopback port and
    /// returns once it accepts connections. Throws when redis-server is missing or never gets ready.
    /// `directory`: its working directory (`--dir`: Redis 7 refuses to change it at run time), where `SAVE` writes.
    /// `extraArguments`: more configuration after the standard command line, e.g. `--user NAME on >PASSWORD …` ACL
    /// rules (kept for `restart()`).
    public static func start(
        password: String? = nil, directory: String? = nil, extraArguments: [String] = []
    ) async throws -> RedisServerProcess {
        try await start(password: password, directory: directory) { port in
            standardArguments(port: port, password: password, directory: directory) + extraArguments
        }
    }

    /// Starts `redis-server` with the command line `arguments(port)` makes for a free loopback port (a TLS-only
    /// server, a replica, `--sentinel` with a config file…) and returns once its output shows `readyMarker`.
    public static func start(
        password: String? = nil, directory: String? = nil, readyMarker: String = "Ready to accept connections",
        arguments: (Int) throws -> [String]
    ) async throws -> RedisServerProcess {
        let executable = try findExecutable()
        var lastError = RedisProcessError("redis-server did not start")
        // Another process may take the free port before redis-server binds it: then try another.
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            let commandLine = try arguments(port)
            let child = try ChildProcess.spawn(executable, arguments: commandLine, readyMarker: readyMarker)
            do throws(RedisProcessError) {
                try await child.waitUntilReady(within: readinessBound)
                return RedisServerProcess(
                    port: port, password: password, directory: directory, executable: executable,
                    arguments: commandLine, readyMarker: readyMarker, child: child)
            } catch {
                child.signal(SIGKILL)
                await child.waitForExit()
                lastError = error
                guard error.message.contains("Address already in use") else { throw error }
            }
        }
        throw lastError
    }

    /// The last `limit` bytes of what the current process wrote (its log, for a failing test's message).
    public func output(last limit: Int = 4000) -> String {
        String(child.withLockedValue { $0 }.outputText.suffix(limit))
    }

    /// The current process id (a new one after `restart()`).
    public var pid: Int32 { child.withLockedValue { $0.pid } }

    /// 127.0.0.1, this port, the password if any, database 0.
    public var endpoint: RedisEndpoint {
        RedisEndpoint(host: "127.0.0.1", port: port, password: password)
    }

    /// SIGKILL and wait for the exit (the port is then refused).
    public func kill() async {
        let current = child.withLockedValue { $0 }
        current.signal(SIGKILL)
        await current.waitForExit()
    }

    /// SIGSTOP: the server stops answering but its sockets stay open (a silent server).
    public func suspend() {
        child.withLockedValue { $0 }.signal(SIGSTOP)
    }

    /// SIGCONT after `suspend()`.
    public func resume() {
        child.withLockedValue { $0 }.signal(SIGCONT)
    }

    /// Starts a fresh, empty redis-server on the same port (after `kill()` or `stop()`), returns
    /// once it accepts connections.
    public func restart() async throws {
        let previous = child.withLockedValue { $0 }
        previous.signal(SIGKILL)
        await previous.waitForExit()
        let next = try ChildProcess.spawn(executable, arguments: arguments, readyMarker: readyMarker)
        child.withLockedValue { $0 = next }
        do {
            try await next.waitUntilReady(within: Self.readinessBound)
        } catch {
            next.signal(SIGKILL)
            throw error
        }
    }

    /// SIGTERM (SIGKILL after 5 s), then waits for the exit. Idempotent.
    public func stop() async {
        let current = child.withLockedValue { $0 }
        current.signal(SIGCONT)  // a suspended server cannot handle SIGTERM
        current.signal(SIGTERM)
        if await !current.waitForExit(within: .seconds(5)) { await current.waitForExit() }
    }

    /// The command line `start(password:directory:)` uses: no persistence, loopback only, DEBUG from loopback.
    public static func standardArguments(port: Int, password: String? = nil, directory: String? = nil) -> [String] {
        var arguments = [
            "--save", "", "--appendonly", "no", "--bind", "127.0.0.1", "--port", String(port),
            "--daemonize", "no", "--enable-debug-command", "local", "--loglevel", "notice",
        ]
        if let password { arguments += ["--requirepass", password] }
        if let directory { arguments += ["--dir", directory] }
        return arguments
    }

    private static func findExecutable() throws(RedisProcessError) -> String {
        var candidates = ["/usr/bin/redis-server"]
        if let path = getenv("PATH") {
            candidates += String(cString: path).split(separator: ":").map { "\($0)/redis-server" }
        }
        for candidate in candidates where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw RedisProcessError("redis-server not found at /usr/bin/redis-server or on PATH (apt-get install redis-server)")
    }

    /// Binds 127.0.0.1:0, reads the port the kernel chose, closes the socket.
    private static func freeLoopbackPort() throws(RedisProcessError) -> Int {
        let reserved = try ReservedPort()
        defer { reserved.release() }
        return reserved.port
    }
}

/// One spawned redis-server: a thread reads its output (to see readiness), another reaps it.
final class ChildProcess: Sendable {
    let pid: Int32
    private let readyMarker: [UInt8]
    private let state = NIOLockedValueBox(State())

    private struct State: Sendable {
        var output: [UInt8] = []
        var readiness: Readiness = .pending
        var readinessWaiters: [CheckedContinuation<Void, Never>] = []
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private enum Readiness: Sendable {
        case pending
        case ready
        case failed(String)
    }

    private init(pid: Int32, readyMarker: String) {
        self.pid = pid
        self.readyMarker = Array(readyMarker.utf8)
    }

    static func spawn(_ executable: String, arguments: [String], readyMarker: String) throws(RedisProcessError) -> ChildProcess {
        // Close-on-exec from the start, so no other spawned server inherits the write end.
        guard let (readEnd, writeEnd) = closeOnExecSocketPair() else {
            throw RedisProcessError("socketpair(): \(String(cString: strerror(errno)))")
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let environment: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in environment { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
        close(writeEnd)
        guard status == 0 else {
            close(readEnd)
            throw RedisProcessError("cannot start \(executable): \(String(cString: strerror(status)))")
        }

        let child = ChildProcess(pid: pid, readyMarker: readyMarker)
        // Blocking read(2) and waitpid(2): each on a thread of its own, never on the cooperative pool.
        guard startDetachedThread({ child.readOutput(readEnd) }), startDetachedThread({ child.reap() }) else {
            _ = kill(pid, SIGKILL)
            throw RedisProcessError("cannot start the threads watching redis-server")
        }
        return child
    }

    func signal(_ signal: Int32) {
        let alive = state.withLockedValue { !$0.exited }
        if alive { _ = kill(pid, signal) }
    }

    /// Returns once the output said "Ready to accept connections"; throws with the output when the
    /// process exited first or `bound` passed.
    func waitUntilReady(within bound: Duration) async throws(RedisProcessError) {
        let timer = Task { [self] in
            try? await Task.sleep(for: bound)
            if !Task.isCancelled { settle(.failed("redis-server was not ready within \(bound)")) }
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            let settled = state.withLockedValue { state -> Bool in
                if case .pending = state.readiness {
                    state.readinessWaiters.append(continuation)
                    return false
                }
                return true
            }
            if settled { continuation.resume() }
        }
        let (readiness, output) = state.withLockedValue { ($0.readiness, $0.output) }
        if case .failed(let reason) = readiness {
            let text = String(decoding: output.suffix(2000), as: UTF8.self)
            throw RedisProcessError("\(reason); its output:\n\(text)")
        }
    }

    /// The last 64 KiB of what the process wrote (what has been read of it so far).
    var outputText: String {
        String(decoding: state.withLockedValue { $0.output }, as: UTF8.self)
    }

    /// Waits for the exit at most `bound`; past it, sends SIGKILL and returns false (the exit then follows).
    func waitForExit(within bound: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitForExit()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: bound)
                return false
            }
            let first = await group.next() ?? false
            if !first { signal(SIGKILL) }
            group.cancelAll()
            return first
        }
    }

    func waitForExit() async {
        await withCheckedContinuation { continuation in
            let exited = state.withLockedValue { state -> Bool in
                if !state.exited { state.exitWaiters.append(continuation) }
                return state.exited
            }
            if exited { continuation.resume() }
        }
    }

    private func settle(_ readiness: Readiness) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            guard case .pending = state.readiness else { return [] }
            state.readiness = readiness
            defer { state.readinessWaiters.removeAll() }
            return state.readinessWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func readOutput(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            let sawMarker = state.withLockedValue { state -> Bool in
                state.output += buffer[0..<count]
                if state.output.count > 64 * 1024 { state.output.removeFirst(state.output.count - 64 * 1024) }
                return state.output.firstRange(of: readyMarker) != nil
            }
            if sawMarker { settle(.ready) }
        }
        close(descriptor)
        settle(.failed("redis-server closed its output before it was ready"))
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        settle(.failed("redis-server exited before it was ready"))
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.exited = true
            defer { state.exitWaiters.removeAll() }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

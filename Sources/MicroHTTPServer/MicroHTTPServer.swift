import NIOConcurrencyHelpers
import CMicroHTTPD
import CMicroHTTPDShim
import HTTPRouting
import Logging
import ServiceLifecycle

/// An HTTP/1.1 server: libmicrohttpd (internal polling thread, or a pool of them; epoll) in front of an
/// `HTTPResponder`.
///
/// `start()` binds and returns the real port; `run()` serves async work until graceful shutdown, then
/// stops accepting, lets in-flight requests finish (bounded by `shutdownTimeout`) and stops the daemon.
public final class MicroHTTPServer: Service, Sendable {
    enum Phase {
        case idle
        case listening(DaemonHandle, port: Int)
        /// Not accepting connections; the open ones are served on.
        case draining(DaemonHandle)
        case stopped
    }

    let core: ServerCore
    let phase = NIOLockedValueBox(Phase.idle)
    /// The options MHD's logger reads for the daemon's lifetime.
    let options: DaemonOptions

    public var configuration: MicroHTTPServerConfiguration { core.configuration }

    /// A server of `responder` on `configuration`, whose request deadlines and drain at shutdown are read on
    /// `ticker` (the process's monotonic clock; a test's manual clock moves them by hand).
    public init(
        configuration: MicroHTTPServerConfiguration, responder: any HTTPResponder, ticker: any Clock<Duration>,
        logger: Logger
    ) {
        core = ServerCore(responder: responder, configuration: configuration, ticker: ticker, logger: logger)
        options = DaemonOptions(configuration: configuration, core: core)
    }

    deinit {
        core.deadlines.cancel()
        // Normally run() has stopped the daemon. If start() was called without run(), stop it here,
        // unless async requests are still suspended (stopping would abort): then keep the core alive.
        phase.withLockedValue { phase in
            switch phase {
            case .listening(let daemon, _), .draining(let daemon):
                if core.pending.count == 0 {
                    unicache_mhd_stop(daemon.pointer)
                } else {
                    _ = Unmanaged.passRetained(core)  // deliberate leak: MHD still points at it
                    _ = Unmanaged.passRetained(options)
                }
            case .idle, .stopped:
                break
            }
        }
    }

    /// Binds and starts serving; returns the port actually bound. Calling it again returns the same port.
    @discardableResult
    public func start() throws(MicroHTTPServerError) -> Int {
        let configuration = core.configuration
        guard (0...65_535).contains(configuration.port) else { throw .invalidPort(configuration.port) }
        let result: Result<Int, MicroHTTPServerError> = phase.withLockedValue { phase in
            switch phase {
            case .listening(_, let port): return .success(port)
            case .draining, .stopped: return .failure(.stopped)
            case .idle: break
            }
            let limit = FileDescriptorLimit.raiseToHardLimit()
            var error: Int32 = 0
            var systemError: Int32 = 0
            // MHD_USE_ERROR_LOG: without it MHD never calls the logger the shim installs.
            let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
                | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
            let daemon = unicache_mhd_start(
                flags, configuration.host, UInt16(configuration.port), options.pointer,
                { cls, _, _, method, version, uploadData, uploadDataSize, conCls in
                    MHDCallbacks.access(cls, method, version, uploadData, uploadDataSize, conCls)
                },
                Unmanaged.passUnretained(core).toOpaque(), &error, &systemError)
            guard let daemon else {
                if error == Int32(UNICACHE_MHD_BAD_HOST) { return .failure(.invalidHost(configuration.host)) }
                if error == Int32(UNICACHE_MHD_TLS_UNAVAILABLE) { return .failure(.tlsUnavailable) }
                return .failure(.startFailed(host: configuration.host, port: configuration.port, errno: systemError))
            }
            let port = Int(unicache_mhd_port(daemon))
            phase = .listening(DaemonHandle(pointer: daemon), port: port)
            core.deadlines.start()
            let scheme = configuration.tls == nil ? "http" : "https"
            core.logger.info("listening on \(scheme)://\(authority(host: configuration.host, port: port))", metadata: [
                "maxConnections": "\(configuration.maxConnections)",
                "pollingThreads": "\(configuration.effectivePollingThreads)",
                "openFileLimit": "\(limit.map(String.init) ?? "unknown")",
            ])
            return .success(port)
        }
        return try result.get()
    }

    /// The bound port while listening.
    public var port: Int? {
        phase.withLockedValue { phase in
            if case .listening(_, let port) = phase { return port }
            return nil
        }
    }

    /// Requests MHD has started and not yet completed (for tests and shutdown).
    var openRequestCount: Int { core.openRequests.count }
}

/// The shim's running daemon. `@unchecked Sendable`: only used under the server's phase lock (start/drain/stop).
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

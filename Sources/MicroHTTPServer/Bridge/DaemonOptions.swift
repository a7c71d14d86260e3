import CMicroHTTPD
import CMicroHTTPDShim
import Clocks
import HTTPRouting

#if canImport(Glibc)
import Glibc
#endif

/// The C options struct handed to the shim; MHD's logger reads it for the daemon's lifetime.
///
/// `@unchecked Sendable`: the pointee is written once in init and only read afterwards (by MHD).
final class DaemonOptions: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<unicache_mhd_options>
    /// C copies of the TLS certificate chain and key (MHD reads them while it starts); the key is wiped in deinit.
    private let certificatePEM: UnsafeMutablePointer<CChar>?
    private let keyPEM: UnsafeMutablePointer<CChar>?
    /// The problem+json bodies the shim answers with in libmicrohttpd's place (400, 413, 431), C copies.
    private let problems: [UnsafeMutablePointer<CChar>?]

    init(configuration: MicroHTTPServerConfiguration, core: ServerCore) {
        let cls = Unmanaged.passUnretained(core).toOpaque()
        let idleSeconds = configuration.idleTimeout.wholeSecondsRoundedUp
        let memoryLimit = max(4096, configuration.connectionMemoryLimit)
        let headerBudget = MicroHTTPServerConfiguration.requestHeaderBudget(memoryLimit: memoryLimit)
        certificatePEM = configuration.tls.flatMap { strdup($0.certificateChainPEM) }
        keyPEM = configuration.tls.flatMap { strdup($0.privateKeyPEM) }
        // What libmicrohttpd 0.9.75 would answer with its head sent twice, for a request whose complete headers it
        // refuses (error_answers.h): a Content-Length that is not a number, one beyond 64 bits, too many cookies; the
        // 431 is also the shim's own for a request over the header budget.
        problems = [
            Problem.invalidContentLength, Problem.contentTooLarge(limit: configuration.maxBodyBytes),
            Problem.headerFieldsTooLarge(limit: headerBudget),
        ].map { strdup($0.json) }
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: unicache_mhd_options(
            connection_limit: UInt32(clamping: configuration.maxConnections),
            per_ip_connection_limit: UInt32(clamping: configuration.maxConnectionsPerIP),
            connection_timeout_seconds: UInt32(clamping: max(1, idleSeconds)),
            header_timeout_ms: configuration.headerTimeout.wholeMillisecondsRoundedUp,
            header_stall_ms: configuration.headerStall.wholeMillisecondsRoundedUp,
            connection_memory_limit: memoryLimit,
            request_header_budget: headerBudget,
            // MHD's own strict mode answers a missing Host with an HTML page; RequestFraming checks it
            // and answers problem+json instead. Malformed header lines are still rejected by MHD.
            strict_for_client: 0,
            polling_threads: UInt32(clamping: configuration.effectivePollingThreads),
            completed: { cls, _, conCls, _ in MHDCallbacks.requestCompleted(cls, conCls) },
            completed_cls: cls,
            uri_log: { cls, uri, connection in MHDCallbacks.requestStarted(cls, uri, connection) },
            uri_log_cls: cls,
            log: { cls, message in MHDCallbacks.log(cls, message) },
            log_cls: cls,
            tls_certificate_pem: certificatePEM,
            tls_key_pem: keyPEM,
            bad_request_problem: problems[0],
            content_too_large_problem: problems[1],
            header_fields_too_large_problem: problems[2]
        ))
    }

    deinit {
        if let keyPEM { explicit_bzero(keyPEM, strlen(keyPEM)) }
        free(keyPEM)
        free(certificatePEM)
        for problem in problems { free(problem) }
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

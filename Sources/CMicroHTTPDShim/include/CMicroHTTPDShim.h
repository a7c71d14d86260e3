#pragma once
#include "../../CMicroHTTPD/CMicroHTTPD.h"

/* Non-variadic wrappers around libmicrohttpd for Swift. Every symbol is prefixed unicache_mhd_. */

/** Receives one message of the shim's or (prefixed "libmicrohttpd: ") of MHD's, formatted, without a trailing newline. */
typedef void (*unicache_mhd_log_callback)(void *cls, const char *message);

/** Called before the headers are parsed with the raw request target; returns the per-request context. The target
    is the callback's to copy: once it returns, MHD sees no query (the shim ends the text after its `?`). */
typedef void *(*unicache_mhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/** The daemon options we set (all limits explicit). */
struct unicache_mhd_options {
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit;
    unsigned int connection_timeout_seconds;
    /** A request whose line and headers are not complete this long after its first byte is closed (0: never). */
    uint64_t header_timeout_ms;
    /** At the connection limit, with none idle, a request whose line and headers have had no byte this long may be
        closed to admit a waiting connection, the longest stalled first (0: never). */
    uint64_t header_stall_ms;
    size_t connection_memory_limit;
    /** The most a request's line and headers may hold of connection_memory_limit (their bytes, 64 per header field
        and cookie), leaving room for its answer's head; more is answered 431 by the shim (0: no check). */
    size_t request_header_budget;
    int strict_for_client;
    /** Polling threads: 1 = one internal thread; more = MHD's thread pool (a connection stays on one thread). */
    unsigned int polling_threads;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
    unicache_mhd_uri_log_callback uri_log;
    void *uri_log_cls;
    unicache_mhd_log_callback log;
    void *log_cls;
    /** HTTPS only (TLS 1.2 and 1.3, unicache_mhd_tls_priorities) with this PEM certificate chain and private key,
        NUL-terminated, read only while the daemon starts; both NULL: plain HTTP. Check them first (tls.h). */
    const char *tls_certificate_pem;
    const char *tls_key_pem;
    /** The problem+json bodies (NUL-terminated, kept for the daemon's lifetime) the shim answers with in place of
        libmicrohttpd's own 400, 413 and 431 for a request whose complete headers it refuses, which 0.9.75 would
        answer with its head sent twice (error_answers.h); NULL leaves that status to MHD. */
    const char *bad_request_problem;
    const char *content_too_large_problem;
    const char *header_fields_too_large_problem;
};

/** Error codes of unicache_mhd_start_daemon. */
enum {
    UNICACHE_MHD_OK = 0,
    UNICACHE_MHD_BAD_HOST = 1,
    UNICACHE_MHD_START_FAILED = 2,
    /** TLS was asked for and this libmicrohttpd is built without it. */
    UNICACHE_MHD_TLS_UNAVAILABLE = 3
};

/** Verdicts of unicache_mhd_tls_check. */
enum {
    UNICACHE_MHD_TLS_OK = 0,
    /** libmicrohttpd is built without TLS (MHD_FEATURE_TLS). */
    UNICACHE_MHD_TLS_UNSUPPORTED = 1,
    /** The certificate chain is not PEM GnuTLS can read (or holds no certificate). */
    UNICACHE_MHD_TLS_BAD_CERTIFICATE = 2,
    /** The private key is not an unencrypted PEM key GnuTLS can read. */
    UNICACHE_MHD_TLS_BAD_KEY = 3,
    /** Both read, but the key is not the certificate's (or GnuTLS refuses the pair for another reason). */
    UNICACHE_MHD_TLS_MISMATCH = 4
};

/** The GnuTLS priority string of a TLS daemon: GnuTLS's defaults, limited to TLS 1.3 and 1.2. */
extern const char *const unicache_mhd_tls_priorities;

/**
 * Checks a PEM certificate chain and private key (NUL-terminated) as libmicrohttpd will load them (GnuTLS's
 * gnutls_certificate_set_x509_key_mem2, which also checks that the key is the certificate's), and the priority
 * string. Returns a UNICACHE_MHD_TLS_ verdict; on failure writes GnuTLS's reason (never key material) into
 * reason[reason_size].
 */
int unicache_mhd_tls_check(const char *certificate_pem, const char *key_pem, char *reason, size_t reason_size);

/**
 * A running daemon: MHD's polling threads, and an acceptor thread of the shim. With a pool of polling threads
 * the acceptor accepts and hands each connection to MHD, which spreads them evenly; with one, MHD listens itself.
 * Either way the acceptor closes connections whose request line and headers are overdue and, at the connection
 * limit, the connections idle the longest (else the requests stalled the longest) to admit new ones.
 */
struct unicache_mhd_server;

/**
 * Starts a daemon bound to host:port (host is an IPv4/IPv6 literal or a resolvable name; port 0 = any).
 * Returns NULL and sets *error on failure (and *system_error to the errno of the failing step, or 0).
 */
struct unicache_mhd_server *unicache_mhd_start(unsigned int flags,
                                               const char *host,
                                               uint16_t port,
                                               const struct unicache_mhd_options *options,
                                               MHD_AccessHandlerCallback handler,
                                               void *handler_cls,
                                               int *error,
                                               int *system_error);

/** The port the server actually listens on (0 if unknown). */
uint16_t unicache_mhd_port(const struct unicache_mhd_server *server);

/** Stops accepting connections; open ones are served on. Calling it again does nothing. */
void unicache_mhd_stop_accepting(struct unicache_mhd_server *server);

/** Stops the daemon (closing every connection), closes the listening socket and frees the server. */
void unicache_mhd_stop(struct unicache_mhd_server *server);

/** Copies the client's IP address (network order) into bytes[16]; returns 4 (IPv4), 16 (IPv6) or -1 (unknown). */
int unicache_mhd_client_address(struct MHD_Connection *connection, uint8_t *bytes);

/** CPUs this process may run on (its affinity mask, as `nproc` counts them); at least 1. */
unsigned int unicache_available_processors(void);

/**
 * ThreadSanitizer cannot see inside Synchronization.Mutex on Linux (its lock is not instrumented), so
 * MicroHTTPServer announces each lock acquire/release on the lock's address. No-ops without TSan.
 */
void unicache_tsan_acquire(void *address);
void unicache_tsan_release(void *address);

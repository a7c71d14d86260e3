/* sched_getaffinity and CPU_COUNT are GNU extensions. */
#define _GNU_SOURCE
#include "CMicroHTTPDShim.h"
#include "acceptor.h"
#include "connections.h"
#include "error_answers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The service parses the query from the raw target it has just copied. libmicrohttpd 0.9.75 would parse it too,
   right after the URI log callback, into a record of the connection's memory pool per parameter (56 bytes): past
   ~110 parameters in 8 KiB the pool runs out, MHD queues its 431, then overwrites the connection's state as if the
   line had been fine, and the request is never answered (the client waits for the idle timeout). Ending the text
   right after the `?` leaves MHD nothing to parse. `uri` points into MHD's own writable read buffer (MHD writes a
   NUL over the `?` itself next), NUL-terminated before the HTTP version. */
static void hide_query(const char *uri) {
    char *question = uri == NULL ? NULL : strchr(uri, '?');
    if (question != NULL && question[1] != '\0') question[1] = '\0';
}

/* The service percent-decodes the target it copied in the URI log callback (HTTPRouting) and never reads the URL MHD
   hands the access handler; MHD would decode that URL in place for no reader (about 300 instructions a request for a
   30-byte path). It is left as it came. */
static size_t keep_escapes(void *cls, struct MHD_Connection *connection, char *url) {
    (void)cls;
    (void)connection;
    return strlen(url);
}

/* The request callbacks pass through the shim, which keeps each connection's phase (connections.h) for the
   header deadline and for draining idle connections; cls is the options (or the server for the handler). */
static void *unicache_mhd_uri_log_trampoline(void *cls, const char *uri, struct MHD_Connection *connection) {
    const struct unicache_mhd_options *options = cls;
    unicache_connection_request_line(connection);
    void *context = options->uri_log(options->uri_log_cls, uri, connection);
    hide_query(uri);
    return context;
}

static void unicache_mhd_completed_trampoline(void *cls, struct MHD_Connection *connection, void **con_cls,
                                              enum MHD_RequestTerminationCode code) {
    const struct unicache_mhd_options *options = cls;
    unicache_connection_request_done(connection);
    options->completed(options->completed_cls, connection, con_cls, code);
}

struct unicache_mhd_server {
    struct MHD_Daemon *daemon;
    const struct unicache_mhd_options *options;
    struct unicache_acceptor *acceptor;
    /* A pool of polling threads, fed by the acceptor; else MHD listens itself. */
    int pool;
    /* MHD's listening socket once quiesced (closed only after MHD_stop_daemon); else -1. */
    int quiesced_fd;
    MHD_AccessHandlerCallback handler;
    void *handler_cls;
    uint16_t port;
};

static void log_message(const struct unicache_mhd_options *options, const char *message) {
    options->log(options->log_cls, message);
}

/* MHD's logger is variadic: format here, hand Swift a plain string. An error answer MHD is about to queue for a
   request whose headers it is parsing would go out with its head twice: the shim answers first (error_answers.h).
   cls is the server. */
static void unicache_mhd_log_trampoline(void *cls, const char *format, va_list arguments) {
    const struct unicache_mhd_server *server = cls;
    unsigned int status = unicache_error_answer_status(format, arguments);
    struct MHD_Connection *parsing = status == 0 ? NULL : unicache_acceptor_parsing_headers(server->acceptor);
    static const char prefix[] = "libmicrohttpd: ";
    char message[512];
    memcpy(message, prefix, sizeof prefix);
    vsnprintf(message + sizeof prefix - 1, sizeof message - (sizeof prefix - 1), format, arguments);
    size_t length = strlen(message);
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r')) {
        message[--length] = '\0';
    }
    log_message(server->options, message);
    if (parsing != NULL && unicache_error_answer_send(server->options, parsing, status, 0)) {
        snprintf(message, sizeof message,
                 "answered %u with the service's problem in place of libmicrohttpd's (whose head would go out twice) "
                 "and closed the connection", status);
        log_message(server->options, message);
    }
}

static enum MHD_Result unicache_mhd_access_trampoline(void *cls, struct MHD_Connection *connection,
                                                      const char *url, const char *method, const char *version,
                                                      const char *upload_data, size_t *upload_data_size,
                                                      void **con_cls) {
    const struct unicache_mhd_server *server = cls;
    /* The first call of a request comes once its headers are complete: one whose answer's head would not fit in
       what is left of the connection's memory is answered 431 here (error_answers.h), and closed. */
    if (unicache_connection_headers_complete(connection)
        && unicache_error_answer_if_too_large(server->options, connection, method)) {
        log_message(server->options, "answered 431: the request's line and headers leave no room for an answer");
        return MHD_NO;
    }
    return server->handler(server->handler_cls, connection, url, method, version, upload_data, upload_data_size,
                           con_cls);
}

static unsigned int times_saturating(unsigned int a, unsigned int b) {
    return b != 0 && a > UINT_MAX / b ? UINT_MAX : a * b;
}

struct unicache_mhd_server *unicache_mhd_start(unsigned int flags,
                                               const char *host,
                                               uint16_t port,
                                               const struct unicache_mhd_options *options,
                                               MHD_AccessHandlerCallback handler,
                                               void *handler_cls,
                                               int *error,
                                               int *system_error) {
    *error = UNICACHE_MHD_START_FAILED;
    *system_error = 0;
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    struct addrinfo *found = NULL;
    if (getaddrinfo(host, NULL, &hints, &found) != 0 || found == NULL) {
        *error = UNICACHE_MHD_BAD_HOST;
        return NULL;
    }
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    memcpy(&address, found->ai_addr, found->ai_addrlen);
    freeaddrinfo(found);
    if (address.ss_family == AF_INET6) {
        ((struct sockaddr_in6 *)&address)->sin6_port = htons(port);
        flags |= MHD_USE_IPv6;
    } else {
        ((struct sockaddr_in *)&address)->sin_port = htons(port);
    }

    /* TLS through MHD itself (GnuTLS), on either path: MHD_add_connection sets up a TLS session for each
       connection the acceptor hands over to a TLS daemon, as MHD's own accept does. */
    int tls = options->tls_certificate_pem != NULL && options->tls_key_pem != NULL;
    if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        *error = UNICACHE_MHD_TLS_UNAVAILABLE;
        return NULL;
    }
    struct MHD_OptionItem tls_options[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)options->tls_certificate_pem},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)options->tls_key_pem},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)unicache_mhd_tls_priorities},
        {MHD_OPTION_END, 0, NULL},
    };
    if (tls) flags |= MHD_USE_TLS;

    struct unicache_mhd_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        *system_error = errno;
        return NULL;
    }
    server->options = options;
    server->handler = handler;
    server->handler_cls = handler_cls;
    server->quiesced_fd = -1;
    unsigned int threads = options->polling_threads > 1 ? options->polling_threads : 1;
    /* A pool is fed by the acceptor; one polling thread accepts for itself, watched by the acceptor. */
    server->pool = threads > 1;
    server->acceptor = server->pool ? unicache_acceptor_listen(&address, options, system_error)
                                    : unicache_acceptor_watch(options, system_error);
    if (server->acceptor == NULL) {
        free(server);
        return NULL;
    }

    /* The logger comes first so that start-up errors reach it. Its cls is the server, whose `options` the caller
       keeps alive for the daemon's lifetime. */
    server->daemon = MHD_start_daemon(
        flags | (server->pool ? MHD_USE_NO_LISTEN_SOCKET : 0), port, NULL, NULL, unicache_mhd_access_trampoline,
        server,
        MHD_OPTION_EXTERNAL_LOGGER, unicache_mhd_log_trampoline, (void *)server,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        /* A pool's acceptor keeps the limit, and MHD's (per thread) must never refuse (see acceptor.c), even
           counting the connections it has announced closed (which frees the acceptor's slot) but not yet
           forgotten. One polling thread keeps it itself: at the limit it leaves new ones in the backlog. */
        MHD_OPTION_CONNECTION_LIMIT, server->pool ? times_saturating(options->connection_limit, 2 * threads)
                                                  : options->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, options->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, options->connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options->connection_memory_limit,
        MHD_OPTION_STRICT_FOR_CLIENT, options->strict_for_client,
        /* 0 and 1 both mean the one internal polling thread. */
        MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0u,
        MHD_OPTION_NOTIFY_COMPLETED, unicache_mhd_completed_trampoline, (void *)options,
        MHD_OPTION_URI_LOG_CALLBACK, unicache_mhd_uri_log_trampoline, (void *)options,
        MHD_OPTION_UNESCAPE_CALLBACK, keep_escapes, NULL,
        MHD_OPTION_NOTIFY_CONNECTION, unicache_acceptor_notified, (void *)server->acceptor,
        /* Without TLS the array is skipped: it starts with its end. */
        MHD_OPTION_ARRAY, tls ? tls_options : &tls_options[3],
        MHD_OPTION_END);
    /* MHD may fail without setting errno: a NULL daemon is a failure whatever errno says. */
    int started = server->daemon != NULL;
    int failure = !started ? errno : unicache_acceptor_start(server->acceptor, server->daemon);
    if (!started || failure != 0) {
        *system_error = failure;
        if (server->daemon != NULL) MHD_stop_daemon(server->daemon);
        unicache_acceptor_free(server->acceptor);
        free(server);
        return NULL;
    }
    server->port = unicache_acceptor_port(server->acceptor);
    *error = UNICACHE_MHD_OK;
    return server;
}

uint16_t unicache_mhd_port(const struct unicache_mhd_server *server) {
    return server->port;
}

void unicache_mhd_stop_accepting(struct unicache_mhd_server *server) {
    unicache_acceptor_stop(server->acceptor);
    if (!server->pool && server->quiesced_fd < 0) server->quiesced_fd = MHD_quiesce_daemon(server->daemon);
}

void unicache_mhd_stop(struct unicache_mhd_server *server) {
    unicache_mhd_stop_accepting(server);
    MHD_stop_daemon(server->daemon);
    unicache_acceptor_free(server->acceptor);
    /* MHD_quiesce_daemon hands its listening socket over, to be closed only after the stop. */
    if (server->quiesced_fd >= 0) close(server->quiesced_fd);
    free(server);
}

int unicache_mhd_client_address(struct MHD_Connection *connection, uint8_t *bytes) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        memcpy(bytes, &((const struct sockaddr_in *)address)->sin_addr, 4);
        return 4;
    }
    if (address->sa_family == AF_INET6) {
        memcpy(bytes, &((const struct sockaddr_in6 *)address)->sin6_addr, 16);
        return 16;
    }
    return -1;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNICACHE_TSAN 1
#endif
#endif

#ifdef UNICACHE_TSAN
void __tsan_acquire(void *address);
void __tsan_release(void *address);
void unicache_tsan_acquire(void *address) { __tsan_acquire(address); }
void unicache_tsan_release(void *address) { __tsan_release(address); }
#else
void unicache_tsan_acquire(void *address) { (void)address; }
void unicache_tsan_release(void *address) { (void)address; }
#endif

unsigned int unicache_available_processors(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int count = CPU_COUNT(&set);
    return count > 0 ? (unsigned int)count : 1;
}

/* sched_getaffinity and CPU_COUNT are GNU extensions. */
#define _GNU_SOURCE
#include "CMicroHTTPDShim.h"
#include "acceptor.h"

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

/* MHD's logger is variadic: format here, hand Swift a plain string. */
static void unicache_mhd_log_trampoline(void *cls, const char *format, va_list arguments) {
    const struct unicache_mhd_options *options = cls;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    size_t length = strlen(message);
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r')) {
        message[--length] = '\0';
    }
    options->log(options->log_cls, message);
}

struct unicache_mhd_server {
    struct MHD_Daemon *daemon;
    /* With a pool of polling threads; NULL when MHD listens itself. */
    struct unicache_acceptor *acceptor;
    /* MHD's listening socket once quiesced (closed only after MHD_stop_daemon); else -1. */
    int quiesced_fd;
    uint16_t port;
};

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

    struct unicache_mhd_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        *system_error = errno;
        return NULL;
    }
    server->quiesced_fd = -1;
    /* One polling thread accepts for itself; a pool is fed by the acceptor. */
    int pool = options->polling_threads > 1;
    if (pool) {
        server->acceptor = unicache_acceptor_listen(&address, options, system_error);
        if (server->acceptor == NULL) {
            free(server);
            return NULL;
        }
        flags |= MHD_USE_NO_LISTEN_SOCKET;
    }

    /* The logger comes first so that start-up errors reach it. Its cls is `options`, which the caller
       keeps alive for the daemon's lifetime. */
    server->daemon = MHD_start_daemon(
        flags, port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_EXTERNAL_LOGGER, unicache_mhd_log_trampoline, (void *)options,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        /* The acceptor keeps the limit; MHD's share per thread must never refuse (see acceptor.c). */
        MHD_OPTION_CONNECTION_LIMIT, pool ? times_saturating(options->connection_limit, options->polling_threads)
                                          : options->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, options->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, options->connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options->connection_memory_limit,
        MHD_OPTION_STRICT_FOR_CLIENT, options->strict_for_client,
        /* 0 and 1 both mean the one internal polling thread. */
        MHD_OPTION_THREAD_POOL_SIZE, pool ? options->polling_threads : 0u,
        MHD_OPTION_NOTIFY_COMPLETED, options->completed, options->completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, options->uri_log, options->uri_log_cls,
        MHD_OPTION_NOTIFY_CONNECTION, pool ? unicache_acceptor_notified : NULL, (void *)server->acceptor,
        MHD_OPTION_END);
    /* MHD may fail without setting errno: a NULL daemon is a failure whatever errno says. */
    int started = server->daemon != NULL;
    int failure = !started ? errno : pool ? unicache_acceptor_start(server->acceptor, server->daemon) : 0;
    if (!started || failure != 0) {
        *system_error = failure;
        if (server->daemon != NULL) MHD_stop_daemon(server->daemon);
        if (pool) unicache_acceptor_free(server->acceptor);
        free(server);
        return NULL;
    }
    if (pool) {
        server->port = unicache_acceptor_port(server->acceptor);
    } else {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
        server->port = info == NULL ? 0 : info->port;
    }
    *error = UNICACHE_MHD_OK;
    return server;
}

uint16_t unicache_mhd_port(const struct unicache_mhd_server *server) {
    return server->port;
}

void unicache_mhd_stop_accepting(struct unicache_mhd_server *server) {
    if (server->acceptor != NULL) {
        unicache_acceptor_stop(server->acceptor);
    } else if (server->quiesced_fd < 0) {
        server->quiesced_fd = MHD_quiesce_daemon(server->daemon);
    }
}

void unicache_mhd_stop(struct unicache_mhd_server *server) {
    unicache_mhd_stop_accepting(server);
    MHD_stop_daemon(server->daemon);
    if (server->acceptor != NULL) unicache_acceptor_free(server->acceptor);
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

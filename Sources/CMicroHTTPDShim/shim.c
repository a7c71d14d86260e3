/* sched_getaffinity and CPU_COUNT are GNU extensions. */
#define _GNU_SOURCE
#include "CMicroHTTPDShim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sched.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct unicache_log_target {
    unicache_mhd_log_callback callback;
    void *cls;
};

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
    const struct unicache_mhd_options *options;
    uint16_t port;
    /* Ours with the acceptor; MHD's once quiesced (closed only after MHD_stop_daemon); else -1. */
    int listen_fd;
    /* The acceptor thread runs (start and stop happen on the caller's thread, under its lock). */
    int accepting;
    pthread_t acceptor;
    /* The acceptor's own count of open connections, and its stop flag. */
    pthread_mutex_t lock;
    pthread_cond_t room;
    unsigned int open;
    int stopping;
};

static void unicache_log(const struct unicache_mhd_options *options, const char *format, ...) {
    char message[512];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    options->log(options->log_cls, message);
}

static void unicache_release_slot(struct unicache_mhd_server *server) {
    pthread_mutex_lock(&server->lock);
    server->open--;
    pthread_cond_signal(&server->room);
    pthread_mutex_unlock(&server->lock);
}

/* MHD tells when a connection it set up closes. (One it fails to set up for lack of memory is never
   announced and keeps its slot.) */
static void unicache_connection_notified(void *cls, struct MHD_Connection *connection, void **socket_context,
                                         enum MHD_ConnectionNotificationCode code) {
    (void)connection;
    (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) unicache_release_slot(cls);
}

/* Accepts until stopped and hands each connection to MHD, which places it on polling thread
   `fd % threads`: an even split, where MHD's own listening lets whichever thread wakes first take
   batches of ten. The acceptor keeps the connection limit itself (at the limit, new connections wait
   in the backlog, as with MHD's own listening); MHD's limit is set out of reach because 0.9.75 leaves a
   polling thread's lock held when a handed-over connection meets that limit (the thread then hangs). */
static void *unicache_accept_loop(void *argument) {
    struct unicache_mhd_server *server = argument;
    int backing_off = 0;
    for (;;) {
        pthread_mutex_lock(&server->lock);
        while (server->open >= server->options->connection_limit && !server->stopping) {
            pthread_cond_wait(&server->room, &server->lock);
        }
        int stopping = server->stopping;
        if (!stopping) server->open++;
        pthread_mutex_unlock(&server->lock);
        if (stopping) return NULL;

        struct sockaddr_storage address;
        socklen_t length = sizeof address;
        int fd = accept4(server->listen_fd, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            backing_off = 0;
            /* On MHD_NO (per-IP limit, no memory) MHD has closed the socket. */
            if (MHD_add_connection(server->daemon, fd, (struct sockaddr *)&address, length) != MHD_YES) {
                unicache_release_slot(server);
            }
            continue;
        }
        int failure = errno;
        unicache_release_slot(server);
        switch (failure) {
        case EINTR: case EAGAIN: case ECONNABORTED: case EPROTO: case EPERM: case ENETDOWN: case ENOPROTOOPT:
        case EHOSTDOWN: case ENONET: case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH:
            continue;  /* the connection's problem, not the listener's (accept(2)) */
        case EINVAL:
            continue;  /* shut down by unicache_mhd_stop_accepting: the stop flag is set */
        default:
            /* Out of descriptors or memory: leave the backlog waiting a moment rather than spin. */
            if (!backing_off) {
                char text[128];
                unicache_log(server->options, "accept failed: %s; retrying every 10 ms",
                             strerror_r(failure, text, sizeof text));
            }
            backing_off = 1;
            poll(NULL, 0, 10);
        }
    }
}

static unsigned int unicache_times_saturating(unsigned int a, unsigned int b) {
    return b != 0 && a > UINT_MAX / b ? UINT_MAX : a * b;
}

static void unicache_free(struct unicache_mhd_server *server) {
    pthread_cond_destroy(&server->room);
    pthread_mutex_destroy(&server->lock);
    free(server);
}

static int unicache_listen(const struct sockaddr_storage *address, int *system_error) {
    socklen_t length = address->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int fd = socket(address->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    if (fd >= 0
        && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0
        && (address->ss_family != AF_INET6 || setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) == 0)
        && bind(fd, (const struct sockaddr *)address, length) == 0
        && listen(fd, SOMAXCONN) == 0) {
        return fd;
    }
    *system_error = errno;
    if (fd >= 0) close(fd);
    return -1;
}

static uint16_t unicache_socket_port(int fd) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return 0;
    return ntohs(address.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&address)->sin6_port
                                               : ((struct sockaddr_in *)&address)->sin_port);
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
    server->options = options;
    server->listen_fd = -1;
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->room, NULL);
    /* One polling thread accepts for itself; a pool is fed by the acceptor. */
    int acceptor = options->polling_threads > 1;
    if (acceptor) {
        server->listen_fd = unicache_listen(&address, system_error);
        if (server->listen_fd < 0) {
            unicache_free(server);
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
        /* With the acceptor every polling thread could take them all: MHD's split never refuses. */
        MHD_OPTION_CONNECTION_LIMIT, acceptor ? unicache_times_saturating(options->connection_limit, options->polling_threads)
                                              : options->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, options->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, options->connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options->connection_memory_limit,
        MHD_OPTION_STRICT_FOR_CLIENT, options->strict_for_client,
        /* 0 and 1 both mean the one internal polling thread. */
        MHD_OPTION_THREAD_POOL_SIZE, acceptor ? options->polling_threads : 0u,
        MHD_OPTION_NOTIFY_COMPLETED, options->completed, options->completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, options->uri_log, options->uri_log_cls,
        MHD_OPTION_NOTIFY_CONNECTION, acceptor ? unicache_connection_notified : NULL, (void *)server,
        MHD_OPTION_END);
    if (server->daemon == NULL) {
        *system_error = errno;
        if (acceptor) close(server->listen_fd);
        unicache_free(server);
        return NULL;
    }
    if (acceptor) {
        server->port = unicache_socket_port(server->listen_fd);
        int failure = pthread_create(&server->acceptor, NULL, unicache_accept_loop, server);
        if (failure != 0) {
            MHD_stop_daemon(server->daemon);
            close(server->listen_fd);
            unicache_free(server);
            *system_error = failure;
            return NULL;
        }
        server->accepting = 1;
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
    if (server->accepting) {
        pthread_mutex_lock(&server->lock);
        server->stopping = 1;
        pthread_cond_signal(&server->room);
        pthread_mutex_unlock(&server->lock);
        /* Wakes a blocked accept4 (EINVAL) and refuses what waits in the backlog. */
        shutdown(server->listen_fd, SHUT_RDWR);
        pthread_join(server->acceptor, NULL);
        server->accepting = 0;
    } else if (server->listen_fd < 0) {
        server->listen_fd = MHD_quiesce_daemon(server->daemon);
    }
}

void unicache_mhd_stop(struct unicache_mhd_server *server) {
    unicache_mhd_stop_accepting(server);
    MHD_stop_daemon(server->daemon);
    /* MHD_quiesce_daemon hands its listen socket over, to be closed only after the stop. */
    if (server->listen_fd >= 0) close(server->listen_fd);
    unicache_free(server);
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

/* sched_getaffinity and CPU_COUNT are GNU extensions. */
#define _GNU_SOURCE
#include "CMicroHTTPDShim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

struct MHD_Daemon *unicache_mhd_start_daemon(unsigned int flags,
                                             const char *host,
                                             uint16_t port,
                                             const struct unicache_mhd_options *options,
                                             MHD_AccessHandlerCallback handler,
                                             void *handler_cls,
                                             int *error,
                                             int *system_error) {
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    struct addrinfo *found = NULL;
    if (getaddrinfo(host, NULL, &hints, &found) != 0 || found == NULL) {
        *error = UNICACHE_MHD_BAD_HOST;
        *system_error = 0;
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

    /* The logger comes first so that start-up errors reach it. Its cls is `options`, which the caller
       keeps alive for the daemon's lifetime. */
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_EXTERNAL_LOGGER, unicache_mhd_log_trampoline, (void *)options,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        MHD_OPTION_CONNECTION_LIMIT, options->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, options->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, options->connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options->connection_memory_limit,
        MHD_OPTION_STRICT_FOR_CLIENT, options->strict_for_client,
        /* 0 and 1 both mean the one internal polling thread. */
        MHD_OPTION_THREAD_POOL_SIZE, options->polling_threads > 1 ? options->polling_threads : 0u,
        MHD_OPTION_NOTIFY_COMPLETED, options->completed, options->completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, options->uri_log, options->uri_log_cls,
        MHD_OPTION_END);
    *system_error = daemon == NULL ? errno : 0;
    *error = daemon == NULL ? UNICACHE_MHD_START_FAILED : UNICACHE_MHD_OK;
    return daemon;
}

uint16_t unicache_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
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

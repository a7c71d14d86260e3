/* strerror_r returning the message, accept4. */
#define _GNU_SOURCE
#include "acceptor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct unicache_acceptor {
    int fd;
    const struct unicache_mhd_options *options;
    struct MHD_Daemon *daemon;
    pthread_t thread;
    /* The thread runs (start and stop are called under the server's lock). */
    int running;
    /* Open connections (the acceptor keeps --max-connections itself), and the stop flag. */
    pthread_mutex_t lock;
    pthread_cond_t room;
    unsigned int open;
    int stopping;
};

struct unicache_acceptor *unicache_acceptor_listen(const struct sockaddr_storage *address,
                                                   const struct unicache_mhd_options *options,
                                                   int *system_error) {
    socklen_t length = address->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int fd = socket(address->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    /* As MHD sets up its own listening socket: address reuse, IPv6 only for an IPv6 address. */
    if (fd < 0
        || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0
        || (address->ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0)
        || bind(fd, (const struct sockaddr *)address, length) != 0
        || listen(fd, SOMAXCONN) != 0) {
        *system_error = errno;
        if (fd >= 0) close(fd);
        return NULL;
    }
    struct unicache_acceptor *acceptor = calloc(1, sizeof *acceptor);
    if (acceptor == NULL) {
        *system_error = errno;
        close(fd);
        return NULL;
    }
    acceptor->fd = fd;
    acceptor->options = options;
    pthread_mutex_init(&acceptor->lock, NULL);
    pthread_cond_init(&acceptor->room, NULL);
    return acceptor;
}

uint16_t unicache_acceptor_port(const struct unicache_acceptor *acceptor) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(acceptor->fd, (struct sockaddr *)&address, &length) != 0) return 0;
    return ntohs(address.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&address)->sin6_port
                                               : ((struct sockaddr_in *)&address)->sin_port);
}

static void release_slot(struct unicache_acceptor *acceptor) {
    pthread_mutex_lock(&acceptor->lock);
    acceptor->open--;
    pthread_cond_signal(&acceptor->room);
    pthread_mutex_unlock(&acceptor->lock);
}

/* (A connection MHD fails to set up for lack of memory is never announced and keeps its slot.) */
void unicache_acceptor_notified(void *cls, struct MHD_Connection *connection, void **socket_context,
                                enum MHD_ConnectionNotificationCode code) {
    (void)connection;
    (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) release_slot(cls);
}

static void log_accept_failure(const struct unicache_acceptor *acceptor, int failure) {
    char text[128];
    char message[256];
    snprintf(message, sizeof message, "accept failed: %s; retrying every 10 ms",
             strerror_r(failure, text, sizeof text));
    acceptor->options->log(acceptor->options->log_cls, message);
}

/* Takes a slot (waiting at the limit: new connections then wait in the backlog, as with MHD's own
   listening), accepts, hands over. MHD's own limit is set out of reach: 0.9.75 leaves a polling thread's
   lock held when a handed-over connection meets it (new_connection_process_), and that thread hangs. */
static void *accept_loop(void *argument) {
    struct unicache_acceptor *acceptor = argument;
    int backing_off = 0;
    for (;;) {
        pthread_mutex_lock(&acceptor->lock);
        while (acceptor->open >= acceptor->options->connection_limit && !acceptor->stopping) {
            pthread_cond_wait(&acceptor->room, &acceptor->lock);
        }
        int stopping = acceptor->stopping;
        if (!stopping) acceptor->open++;
        pthread_mutex_unlock(&acceptor->lock);
        if (stopping) return NULL;

        struct sockaddr_storage address;
        socklen_t length = sizeof address;
        int fd = accept4(acceptor->fd, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            backing_off = 0;
            /* On MHD_NO (per-IP limit, no memory) MHD has closed the socket. */
            if (MHD_add_connection(acceptor->daemon, fd, (struct sockaddr *)&address, length) != MHD_YES) {
                release_slot(acceptor);
            }
            continue;
        }
        int failure = errno;
        release_slot(acceptor);
        switch (failure) {
        case EINTR: case EAGAIN: case ECONNABORTED: case EPROTO: case EPERM: case ENETDOWN: case ENOPROTOOPT:
        case EHOSTDOWN: case ENONET: case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH:
            continue;  /* the connection's problem, not the listener's (accept(2)) */
        case EINVAL:
            continue;  /* shut down by unicache_acceptor_stop, which has set the stop flag */
        default:
            /* Out of descriptors or memory: leave the backlog waiting a moment rather than spin. */
            if (!backing_off) log_accept_failure(acceptor, failure);
            backing_off = 1;
            poll(NULL, 0, 10);
        }
    }
}

int unicache_acceptor_start(struct unicache_acceptor *acceptor, struct MHD_Daemon *daemon) {
    acceptor->daemon = daemon;
    int failure = pthread_create(&acceptor->thread, NULL, accept_loop, acceptor);
    acceptor->running = failure == 0;
    return failure;
}

void unicache_acceptor_stop(struct unicache_acceptor *acceptor) {
    if (!acceptor->running) return;
    pthread_mutex_lock(&acceptor->lock);
    acceptor->stopping = 1;
    pthread_cond_signal(&acceptor->room);
    pthread_mutex_unlock(&acceptor->lock);
    /* Wakes a blocked accept4 (EINVAL) and refuses what waits in the backlog. */
    shutdown(acceptor->fd, SHUT_RDWR);
    pthread_join(acceptor->thread, NULL);
    acceptor->running = 0;
}

void unicache_acceptor_free(struct unicache_acceptor *acceptor) {
    unicache_acceptor_stop(acceptor);
    close(acceptor->fd);
    pthread_cond_destroy(&acceptor->room);
    pthread_mutex_destroy(&acceptor->lock);
    free(acceptor);
}

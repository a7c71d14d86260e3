/* strerror_r returning the message, accept4. */
#define _GNU_SOURCE
#include "acceptor.h"
#include "connections.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
/* linux/tcp.h, as connections.c: tcp_info of a listening socket (its backlog). */
#include <linux/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct unicache_acceptor {
    /* The listening socket: the acceptor's own, or (watching) MHD's. */
    int fd;
    /* 1: accepts and hands each connection to MHD (a pool of polling threads); 0: MHD accepts (one polling
       thread, no hop between threads per connection) and the thread only watches. */
    int accepts;
    const struct unicache_mhd_options *options;
    struct MHD_Daemon *daemon;
    pthread_t thread;
    /* The thread runs (start and stop are called under the server's lock). */
    int running;
    /* Open connections, against --max-connections, and the stop flag. `changed` is signalled at the stop and
       only around the limit (a connection taken at it, or closed from it), so that no connection wakes the thread. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned int open;
    /* Slots freed so far (a drained connection's close shows as one more). */
    unsigned long released;
    int stopping;
    /* Accepting: the polling threads, and how many connections each was dealt (only the thread reads them). */
    unsigned int threads;
    unsigned long *dealt;
    /* Every connection MHD serves, for the header deadline and for draining idle ones at the limit. */
    struct unicache_connections connections;
};

static struct unicache_acceptor *acceptor_create(int fd, int accepts, const struct unicache_mhd_options *options) {
    struct unicache_acceptor *acceptor = calloc(1, sizeof *acceptor);
    if (acceptor == NULL) return NULL;
    acceptor->fd = fd;
    acceptor->accepts = accepts;
    acceptor->options = options;
    acceptor->threads = options->polling_threads > 1 ? options->polling_threads : 1;
    acceptor->dealt = calloc(acceptor->threads, sizeof *acceptor->dealt);
    if (acceptor->dealt == NULL) {
        free(acceptor);
        return NULL;
    }
    pthread_mutex_init(&acceptor->lock, NULL);
    /* Timed waits count on the monotonic clock, as the header deadlines do. */
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&acceptor->changed, &attributes);
    pthread_condattr_destroy(&attributes);
    unicache_connections_init(&acceptor->connections, options->header_timeout_ms, options->header_stall_ms);
    return acceptor;
}

struct unicache_acceptor *unicache_acceptor_listen(const struct sockaddr_storage *address,
                                                   const struct unicache_mhd_options *options,
                                                   int *system_error) {
    socklen_t length = address->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    /* Non-blocking: the thread waits in poll, which also times the header deadlines. */
    int fd = socket(address->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
    struct unicache_acceptor *acceptor = acceptor_create(fd, 1, options);
    if (acceptor == NULL) {
        *system_error = errno;
        close(fd);
    }
    return acceptor;
}

struct unicache_acceptor *unicache_acceptor_watch(const struct unicache_mhd_options *options, int *system_error) {
    struct unicache_acceptor *acceptor = acceptor_create(-1, 0, options);
    if (acceptor == NULL) *system_error = errno;
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
    acceptor->released++;
    if (acceptor->open-- >= acceptor->options->connection_limit) pthread_cond_signal(&acceptor->changed);
    pthread_mutex_unlock(&acceptor->lock);
}

/* (A connection MHD fails to set up for lack of memory is never announced and keeps its slot.) */
void unicache_acceptor_notified(void *cls, struct MHD_Connection *connection, void **socket_context,
                                enum MHD_ConnectionNotificationCode code) {
    struct unicache_acceptor *acceptor = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        unicache_connections_opened(&acceptor->connections, connection, socket_context);
        if (acceptor->accepts) return;  /* its slot was taken before accepting */
        pthread_mutex_lock(&acceptor->lock);
        if (++acceptor->open >= acceptor->options->connection_limit) pthread_cond_signal(&acceptor->changed);
        pthread_mutex_unlock(&acceptor->lock);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        unicache_connections_closed(&acceptor->connections, socket_context);
        release_slot(acceptor);
    }
}

static void log_message(const struct unicache_acceptor *acceptor, const char *message) {
    acceptor->options->log(acceptor->options->log_cls, message);
}

static void log_accept_failure(const struct unicache_acceptor *acceptor, int failure) {
    char text[128];
    char message[256];
    snprintf(message, sizeof message, "accept failed: %s; retrying every 10 ms",
             strerror_r(failure, text, sizeof text));
    log_message(acceptor, message);
}

/* Milliseconds of CLOCK_MONOTONIC, the clock of this thread's waits (its condition variable's; the connections'
   phases are stamped on their own, coarser clock). */
static uint64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/* Header deadlines are checked every tenth of the timeout (10 ms to 1 s), so kept to within about that. */
static uint64_t check_interval_ms(uint64_t header_timeout_ms) {
    uint64_t interval = header_timeout_ms / 10;
    return interval < 10 ? 10 : interval > 1000 ? 1000 : interval;
}

static void enforce_header_timeout(struct unicache_acceptor *acceptor) {
    unsigned int closed = unicache_connections_enforce_header_timeout(&acceptor->connections);
    if (closed == 0) return;
    char message[200];
    snprintf(message, sizeof message,
             "header timeout: closed %u connection(s) whose request line and headers were not complete %llu ms "
             "after the first byte", closed, (unsigned long long)acceptor->connections.header_timeout_ms);
    log_message(acceptor, message);
}

/* Waits until `until` (ms of CLOCK_MONOTONIC) at most, or the stop, or the open connections reaching the limit. */
static void wait_for_the_limit(struct unicache_acceptor *acceptor, uint64_t until) {
    struct timespec deadline = {.tv_sec = (time_t)(until / 1000), .tv_nsec = (long)(until % 1000) * 1000000};
    pthread_mutex_lock(&acceptor->lock);
    while (!acceptor->stopping && acceptor->open < acceptor->options->connection_limit) {
        if (pthread_cond_timedwait(&acceptor->changed, &acceptor->lock, &deadline) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&acceptor->lock);
}

/* How many connections wait in the listen backlog (a listening socket's TCP_INFO says: tcpi_unacked); at least 1,
   since the poll saw one. */
static unsigned int backlog_length(const struct unicache_acceptor *acceptor) {
    struct tcp_info info;
    socklen_t length = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(acceptor->fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 || info.tcpi_unacked == 0) return 1;
    return info.tcpi_unacked;
}

/* At the limit with connections waiting in the backlog: closes as many connections idle the longest or, when
   none is idle, requests stalled the longest (connections.h), and waits (up to 100 ms) for a slot to be freed
   (watching, MHD takes it at once for the next connection in its backlog). With none to close, new connections
   wait in the backlog, and some are looked for again. */
static void drain_for(struct unicache_acceptor *acceptor, uint64_t now) {
    pthread_mutex_lock(&acceptor->lock);
    unsigned long released = acceptor->released;
    pthread_mutex_unlock(&acceptor->lock);
    unsigned int stalled = 0;
    unsigned int closed = unicache_connections_drain(&acceptor->connections, backlog_length(acceptor), &stalled);
    if (closed > 0) {
        char message[200];
        snprintf(message, sizeof message,
                 "at the connection limit: closed %u idle connection(s) and %u request(s) stalled %llu ms or more "
                 "to admit new ones", closed - stalled, stalled,
                 (unsigned long long)acceptor->connections.stall_ms);
        log_message(acceptor, message);
    }
    uint64_t until = now + 100;
    struct timespec deadline = {.tv_sec = (time_t)(until / 1000), .tv_nsec = (long)(until % 1000) * 1000000};
    pthread_mutex_lock(&acceptor->lock);
    while (!acceptor->stopping && acceptor->released == released) {
        if (pthread_cond_timedwait(&acceptor->changed, &acceptor->lock, &deadline) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&acceptor->lock);
}

/* MHD 0.9.75 gives a connection handed over to a pool to the polling thread its descriptor's number picks (number
   modulo threads, MHD_add_connection), and accept takes the lowest free number: the split follows the holes in the
   process's descriptor table. Holes all of one residue (descriptors opened and closed in pairs, as a client and a
   server in one process do) put every new connection on one thread, and its answers late. So the acceptor deals
   connections evenly: one stays where its number puts it while that thread has been dealt no more than any other,
   else it is moved (F_DUPFD) to the lowest free number at or above fd + 1, 2, 4, 8, … that picks the thread dealt
   fewest. Past the table's top every number is free: a move takes one try in a table without such holes and a few
   (doubling) in one full of them. Where the descriptor limit leaves no such number it stays where it is. */
static int deal(struct unicache_acceptor *acceptor, int fd) {
    unsigned int threads = acceptor->threads;
    unsigned int wanted = (unsigned int)fd % threads;
    for (unsigned int thread = 0; thread < threads; thread++) {
        if (acceptor->dealt[thread] < acceptor->dealt[wanted]) wanted = thread;
    }
    for (unsigned int step = 1; (unsigned int)fd % threads != wanted && step < (1u << 24); step *= 2) {
        /* The first number at or above fd + step that picks `wanted`. */
        unsigned int start = (unsigned int)fd + step;
        start += (wanted + threads - start % threads) % threads;
        if (start > INT_MAX) break;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, (int)start);
        if (moved < 0) break;  /* EINVAL or EMFILE: no free number there under the limit */
        if ((unsigned int)moved % threads == wanted) {
            close(fd);
            fd = moved;
        } else {
            close(moved);
        }
    }
    acceptor->dealt[(unsigned int)fd % threads]++;
    return fd;
}

/* Accepts one connection and hands it over. MHD's own limit is set out of reach: 0.9.75 leaves a polling thread's
   lock held when a handed-over connection meets it (new_connection_process_), and that thread hangs. */
static void accept_one(struct unicache_acceptor *acceptor, int *backing_off) {
    pthread_mutex_lock(&acceptor->lock);
    acceptor->open++;
    pthread_mutex_unlock(&acceptor->lock);
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    int fd = accept4(acceptor->fd, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
        *backing_off = 0;
        fd = deal(acceptor, fd);
        /* On MHD_NO (per-IP limit, no memory) MHD has closed the socket. */
        if (MHD_add_connection(acceptor->daemon, fd, (struct sockaddr *)&address, length) != MHD_YES) {
            release_slot(acceptor);
        }
        return;
    }
    int failure = errno;
    release_slot(acceptor);
    switch (failure) {
    case EINTR: case EAGAIN: case ECONNABORTED: case EPROTO: case EPERM: case ENETDOWN: case ENOPROTOOPT:
    case EHOSTDOWN: case ENONET: case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH:
        return;  /* the connection's problem, not the listener's (accept(2)) */
    case EINVAL:
        return;  /* shut down by unicache_acceptor_stop, which has set the stop flag */
    default:
        /* Out of descriptors or memory: leave the backlog waiting a moment rather than spin. */
        if (!*backing_off) log_accept_failure(acceptor, failure);
        *backing_off = 1;
        poll(NULL, 0, 10);
    }
}

/* Checks the header deadlines, and waits for what needs the thread: a connection in the backlog when it accepts
   (only once one is free when at the limit, as with MHD's own listening), or, at the limit, a connection waiting
   in the backlog, to drain an idle one for it. */
static void *run(void *argument) {
    struct unicache_acceptor *acceptor = argument;
    const uint64_t interval = check_interval_ms(acceptor->connections.header_timeout_ms);
    uint64_t next_check = now_ms() + interval;
    int backing_off = 0;
    for (;;) {
        uint64_t now = now_ms();
        if (now >= next_check) {
            enforce_header_timeout(acceptor);
            next_check = now + interval;
        }
        pthread_mutex_lock(&acceptor->lock);
        int stopping = acceptor->stopping;
        int full = acceptor->open >= acceptor->options->connection_limit;
        pthread_mutex_unlock(&acceptor->lock);
        if (stopping) return NULL;
        if (!full && !acceptor->accepts) {
            wait_for_the_limit(acceptor, next_check);  /* MHD accepts */
            continue;
        }
        /* At the limit, look again every 100 ms: a connection may have fallen idle meanwhile. */
        uint64_t until = full && now + 100 < next_check ? now + 100 : next_check;
        struct pollfd listening = {.fd = acceptor->fd, .events = POLLIN};
        if (poll(&listening, 1, (int)(until - now)) <= 0) continue;  /* time to look again, or EINTR */
        if (full) {
            drain_for(acceptor, now);
        } else {
            accept_one(acceptor, &backing_off);
        }
    }
}

struct MHD_Connection *unicache_acceptor_parsing_headers(struct unicache_acceptor *acceptor) {
    return unicache_connections_parsing_headers(&acceptor->connections);
}

int unicache_acceptor_start(struct unicache_acceptor *acceptor, struct MHD_Daemon *daemon) {
    acceptor->daemon = daemon;
    if (!acceptor->accepts) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
        acceptor->fd = info == NULL ? -1 : info->listen_fd;
    }
    int failure = pthread_create(&acceptor->thread, NULL, run, acceptor);
    acceptor->running = failure == 0;
    return failure;
}

void unicache_acceptor_stop(struct unicache_acceptor *acceptor) {
    if (!acceptor->running) return;
    pthread_mutex_lock(&acceptor->lock);
    acceptor->stopping = 1;
    pthread_cond_signal(&acceptor->changed);
    pthread_mutex_unlock(&acceptor->lock);
    /* Its own socket: wakes the poll (POLLHUP) and refuses what waits in the backlog. MHD's: the poll ends
       within 100 ms, and MHD's listening is stopped by MHD_quiesce_daemon. */
    if (acceptor->accepts) shutdown(acceptor->fd, SHUT_RDWR);
    pthread_join(acceptor->thread, NULL);
    acceptor->running = 0;
}

void unicache_acceptor_free(struct unicache_acceptor *acceptor) {
    unicache_acceptor_stop(acceptor);
    if (acceptor->accepts) close(acceptor->fd);
    pthread_cond_destroy(&acceptor->changed);
    pthread_mutex_destroy(&acceptor->lock);
    unicache_connections_destroy(&acceptor->connections);
    free(acceptor->dealt);
    free(acceptor);
}

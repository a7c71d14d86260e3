#define _GNU_SOURCE
#include "connections.h"

#include <linux/sockios.h>
/* linux/tcp.h, not netinet/tcp.h: glibc's struct tcp_info stops before tcpi_bytes_received. */
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

/* What a connection is doing. The phase and the time it began share one word, so that the polling thread and
   the acceptor's thread each replace both at once, without a lock on the request path. */
enum phase {
    IDLE_NEW = 0,   /* connected, no byte seen yet; since: when MHD took it */
    IDLE_KEPT = 1,  /* kept alive, no byte of a next request seen yet; since: when the last request was done */
    STARTED = 2,    /* a request's line and headers are arriving; since: its first byte (or a bit later) */
    BUSY = 3        /* its headers are complete: no header deadline, never drained */
};

#define PHASE(word) ((enum phase)((word) & 3u))
#define SINCE(word) ((word) >> 2)

static uint64_t phase_word(enum phase phase, uint64_t since) {
    return since << 2 | (uint64_t)phase;
}

struct unicache_connection {
    _Atomic uint64_t phase;
    /* The polling thread that last gave it a request line (a connection stays on one). */
    _Atomic(pthread_t) owner;
    /* Set when it opens. */
    struct MHD_Connection *connection;
    /* The rest under the list's lock. */
    int fd;
    /* Shut down by the shim; MHD has yet to notice and close it. */
    int closing;
    struct unicache_connection *previous;
    struct unicache_connection *next;
};

/* The kernel keeps the time of the last data segment in jiffies (1–10 ms) and we compare it with
   CLOCK_MONOTONIC: within two jiffies of a request's end, bytes count as that request's. */
static const uint64_t jiffy_ms = 10;

/* CLOCK_MONOTONIC as of the kernel's last tick (a jiffy behind at most, as the kernel's segment times are), read
   in a few nanoseconds where the precise clock costs about 20; two stamps a request. Everything this file compares
   is read from it. */
static uint64_t coarse_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/* When a phase begins: the coarse time a jiffy on, so never before the moment itself. A phase's age read against
   coarse_ms() is then never more than it is: a header deadline is never early (at most a jiffy and a check late),
   and a segment counts as arriving after a request's end only if it really did. */
static uint64_t stamp_ms(void) {
    return coarse_ms() + jiffy_ms;
}

void unicache_connections_init(struct unicache_connections *connections, uint64_t header_timeout_ms,
                               uint64_t stall_ms) {
    memset(connections, 0, sizeof *connections);
    pthread_mutex_init(&connections->lock, NULL);
    connections->header_timeout_ms = header_timeout_ms;
    connections->stall_ms = stall_ms;
}

void unicache_connections_destroy(struct unicache_connections *connections) {
    /* MHD has announced every connection's close by now (the daemon is stopped). */
    pthread_mutex_destroy(&connections->lock);
}

void unicache_connections_opened(struct unicache_connections *connections, struct MHD_Connection *connection,
                                 void **socket_context) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    /* Without a record (no memory) the connection is simply not watched. */
    struct unicache_connection *record = info == NULL ? NULL : calloc(1, sizeof *record);
    *socket_context = record;
    if (record == NULL) return;
    record->fd = info->connect_fd;
    record->connection = connection;
    atomic_init(&record->phase, phase_word(IDLE_NEW, stamp_ms()));
    pthread_mutex_lock(&connections->lock);
    record->previous = connections->tail;
    if (connections->tail != NULL) connections->tail->next = record;
    else connections->head = record;
    connections->tail = record;
    connections->count++;
    pthread_mutex_unlock(&connections->lock);
}

void unicache_connections_closed(struct unicache_connections *connections, void **socket_context) {
    struct unicache_connection *record = *socket_context;
    *socket_context = NULL;
    if (record == NULL) return;
    pthread_mutex_lock(&connections->lock);
    if (record->previous != NULL) record->previous->next = record->next;
    else connections->head = record->next;
    if (record->next != NULL) record->next->previous = record->previous;
    else connections->tail = record->previous;
    connections->count--;
    pthread_mutex_unlock(&connections->lock);
    free(record);
}

/* The record MHD keeps as the connection's socket context (NULL when it is not watched). */
static struct unicache_connection *record_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

void unicache_connection_request_line(struct MHD_Connection *connection) {
    struct unicache_connection *record = record_of(connection);
    if (record == NULL) return;
    atomic_store_explicit(&record->owner, pthread_self(), memory_order_relaxed);
    uint64_t seen = atomic_load_explicit(&record->phase, memory_order_relaxed);
    if (PHASE(seen) == STARTED) return;  /* the acceptor saw its first bytes earlier */
    /* Fails only if the acceptor's thread marked it STARTED meanwhile, which is as good. */
    atomic_compare_exchange_strong_explicit(&record->phase, &seen, phase_word(STARTED, stamp_ms()),
                                            memory_order_relaxed, memory_order_relaxed);
}

int unicache_connection_headers_complete(struct MHD_Connection *connection) {
    struct unicache_connection *record = record_of(connection);
    if (record == NULL) return 0;
    if (PHASE(atomic_load_explicit(&record->phase, memory_order_relaxed)) == BUSY) return 0;
    atomic_store_explicit(&record->phase, phase_word(BUSY, 0), memory_order_relaxed);
    return 1;
}

void unicache_connection_request_done(struct MHD_Connection *connection) {
    struct unicache_connection *record = record_of(connection);
    if (record == NULL) return;
    atomic_store_explicit(&record->phase, phase_word(IDLE_KEPT, stamp_ms()), memory_order_relaxed);
}

struct MHD_Connection *unicache_connections_parsing_headers(struct unicache_connections *connections) {
    pthread_t self = pthread_self();
    struct MHD_Connection *found = NULL;
    pthread_mutex_lock(&connections->lock);
    for (struct unicache_connection *record = connections->head; record != NULL; record = record->next) {
        /* Another thread's connection is never asked about: MHD changes it meanwhile. */
        if (PHASE(atomic_load_explicit(&record->phase, memory_order_relaxed)) != STARTED
            || !pthread_equal(atomic_load_explicit(&record->owner, memory_order_relaxed), self)) {
            continue;
        }
        /* The header size is known from MHD's state HEADERS_RECEIVED on; the status once an answer is queued. */
        if (MHD_get_connection_info(record->connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) != NULL
            && MHD_get_connection_info(record->connection, MHD_CONNECTION_INFO_HTTP_STATUS) == NULL) {
            found = record->connection;
            break;
        }
    }
    pthread_mutex_unlock(&connections->lock);
    return found;
}

/* When the latest data segment reached the connection, rounded up by a jiffy: no earlier than the byte it
   carried, so a time counted from it is never early (and at most a check late). Nor earlier than the phase's
   start: bytes that waited in the listen backlog (or behind the last request) count from when MHD took them up,
   as nginx starts its header timer at accept. Fills *info; 0 when the kernel does not say. Under the list's lock
   (the descriptor). */
static int latest_data(const struct unicache_connection *record, uint64_t word, uint64_t now, struct tcp_info *info,
                       socklen_t *length, uint64_t *latest) {
    *length = sizeof *info;
    memset(info, 0, sizeof *info);
    if (getsockopt(record->fd, IPPROTO_TCP, TCP_INFO, info, length) != 0) return 0;
    uint64_t arrived = now > info->tcpi_last_data_recv ? now - info->tcpi_last_data_recv : 0;
    *latest = arrived + jiffy_ms < now ? arrived + jiffy_ms : now;
    if (*latest < SINCE(word)) *latest = SINCE(word);
    return 1;
}

/* Whether bytes of a request have reached an idle connection although MHD has not seen its line complete:
   bytes waiting unread, any byte ever on a new connection, or a data segment after the last request's end.
   *latest is when the latest data segment arrived (latest_data). Under the list's lock (the descriptor). */
static int request_arriving(const struct unicache_connection *record, uint64_t word, uint64_t now,
                            uint64_t *latest) {
    struct tcp_info info;
    socklen_t length;
    if (!latest_data(record, word, now, &info, &length, latest)) return 0;
    int unread = 0;
    if (ioctl(record->fd, SIOCINQ, &unread) == 0 && unread > 0) return 1;
    if (PHASE(word) == IDLE_NEW) {
        return length >= offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received
            && info.tcpi_bytes_received > 0;
    }
    uint64_t arrived = now > info.tcpi_last_data_recv ? now - info.tcpi_last_data_recv : 0;
    return arrived > SINCE(word) + 2 * jiffy_ms;
}

/* An idle connection is idle still (returns 1), or is marked STARTED from its latest bytes (returns 0). */
static int still_idle(struct unicache_connection *record, uint64_t word, uint64_t now) {
    uint64_t latest = 0;
    if (!request_arriving(record, word, now, &latest)) return 1;
    /* Fails only if its polling thread moved it on meanwhile: not idle either way. */
    atomic_compare_exchange_strong_explicit(&record->phase, &word, phase_word(STARTED, latest),
                                            memory_order_relaxed, memory_order_relaxed);
    return 0;
}

/* MHD sees the end of input on its polling thread and closes the connection as if the client had. The
   descriptor is the connection's own: MHD closes it only after unregistering, which waits for the lock. */
static void close_connection(struct unicache_connection *record) {
    shutdown(record->fd, SHUT_RDWR);
    record->closing = 1;
}

unsigned int unicache_connections_enforce_header_timeout(struct unicache_connections *connections) {
    unsigned int closed = 0;
    if (connections->header_timeout_ms == 0) return 0;
    uint64_t now = coarse_ms();
    pthread_mutex_lock(&connections->lock);
    for (struct unicache_connection *record = connections->head; record != NULL; record = record->next) {
        if (record->closing) continue;
        uint64_t word = atomic_load_explicit(&record->phase, memory_order_relaxed);
        enum phase phase = PHASE(word);
        if ((phase == IDLE_NEW || phase == IDLE_KEPT) && !still_idle(record, word, now)) {
            word = atomic_load_explicit(&record->phase, memory_order_relaxed);
            phase = PHASE(word);
        }
        if (phase == STARTED && now >= SINCE(word) + connections->header_timeout_ms) {
            close_connection(record);
            closed++;
        }
    }
    pthread_mutex_unlock(&connections->lock);
    return closed;
}

/* A connection that may be closed to admit a new one. */
struct candidate {
    struct unicache_connection *record;
    /* 1: idle; 0: a request under way that has stalled. */
    int idle;
    /* Since when it has been idle, or has had no byte. */
    uint64_t since;
    /* Its place in the list (connecting order), to break ties. */
    unsigned int order;
};

/* Idle ones first; of either kind the longest idle or stalled first; of equals the one connected first. */
static int candidate_order(const void *left, const void *right) {
    const struct candidate *a = left;
    const struct candidate *b = right;
    if (a->idle != b->idle) return b->idle - a->idle;
    if (a->since != b->since) return a->since < b->since ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Whether a record may be closed to admit a new one, and how it ranks: idle (after a look at its socket, which
   may show a request arriving and mark it STARTED), or a request under way with no byte for stall_ms. */
static int drainable(struct unicache_connection *record, uint64_t now, uint64_t stall_ms, struct candidate *found) {
    uint64_t word = atomic_load_explicit(&record->phase, memory_order_relaxed);
    if (PHASE(word) == IDLE_NEW || PHASE(word) == IDLE_KEPT) {
        if (still_idle(record, word, now)) {
            found->idle = 1;
            found->since = SINCE(word);
            return 1;
        }
        word = atomic_load_explicit(&record->phase, memory_order_relaxed);
    }
    if (PHASE(word) != STARTED || stall_ms == 0) return 0;
    struct tcp_info info;
    socklen_t length;
    uint64_t latest = 0;
    if (!latest_data(record, word, now, &info, &length, &latest) || now < latest + stall_ms) return 0;
    found->idle = 0;
    found->since = latest;
    return 1;
}

unsigned int unicache_connections_drain(struct unicache_connections *connections, unsigned int waiting,
                                        unsigned int *stalled) {
    unsigned int closed = 0;
    uint64_t now = coarse_ms();
    *stalled = 0;
    pthread_mutex_lock(&connections->lock);
    /* A connection shut down here that MHD has not closed yet frees a slot soon: one fewer to close (under
       ThreadSanitizer a close took over 100 ms to be noticed, and a second idle one was drained for nothing). */
    unsigned int pending = 0;
    for (struct unicache_connection *record = connections->head; record != NULL; record = record->next) {
        pending += record->closing != 0;
    }
    struct candidate *candidates = NULL;
    if (waiting > pending && connections->count > 0) {
        candidates = malloc(connections->count * sizeof *candidates);
    }
    if (candidates == NULL) {
        pthread_mutex_unlock(&connections->lock);
        return 0;
    }
    unsigned int count = 0;
    unsigned int order = 0;
    for (struct unicache_connection *record = connections->head; record != NULL; record = record->next, order++) {
        if (record->closing || count == connections->count) continue;
        candidates[count].record = record;
        candidates[count].order = order;
        if (drainable(record, now, connections->stall_ms, &candidates[count])) count++;
    }
    qsort(candidates, count, sizeof *candidates, candidate_order);
    for (unsigned int index = 0; index < count && closed < waiting - pending; index++) {
        close_connection(candidates[index].record);
        closed++;
        *stalled += !candidates[index].idle;
    }
    pthread_mutex_unlock(&connections->lock);
    free(candidates);
    return closed;
}

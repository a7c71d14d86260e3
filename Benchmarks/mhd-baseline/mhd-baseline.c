/*
 * The raw libmicrohttpd baseline for scripts/bench-http.sh: serves a fixed ~1 KB JSON body from memory
 * on every path, with the same threading mode as MicroHTTPServer (internal polling thread + epoll) and
 * the response queued on the second access-handler call, as a well-written C server would.
 * With CERT and KEY (PEM files) it serves HTTPS with unicache's TLS settings: MHD_USE_TLS, the PEM in memory,
 * and the same GnuTLS priority string (TLS 1.3 and 1.2 only; see unicache_mhd_tls_priorities in the shim).
 * MHD_BASELINE_HOLD=SECONDS (scripts/bench-stampede.py --raw): the stampede's baseline. Every request is suspended
 * (MHD_suspend_connection, as unicache parks the requests of a key being loaded) until SECONDS after the first one of
 * a batch; then the hold ends and all are resumed and answered. At that moment it prints `released COUNT AT` on
 * standard output (AT: CLOCK_MONOTONIC seconds, the clock the stampede client and the script's upstream read).
 * MHD_BASELINE_THREADS=N: a pool of N polling threads (unicache's --polling-threads; default one).
 * MHD_BASELINE_HANDOFF (scripts/bench-threads.sh; `redis` also in scripts/bench-shared.sh, at one client): what a
 * shared hit's hand-off costs libmicrohttpd and the kernel by themselves, with none of unicache's code. Every request
 * is suspended, then resumed: `self` at once, on the polling thread; `thread` by a second thread, woken through an
 * eventfd it waits on with epoll (as a SwiftNIO event loop waits), which takes the requests handed over meanwhile in
 * one batch; `redis` as `thread`, but the second thread first sends a `GET` of each request's path to the redis-server
 * on 127.0.0.1:MHD_BASELINE_REDIS_PORT (one write per batch, pipelined) and resumes each request when its reply has
 * been read, as unicache's Redis client does. `loop`: as `redis`, but with no second thread: libmicrohttpd runs without
 * its own (MHD_run, its epoll descriptor watched beside the Redis socket by one epoll loop on the main thread), and the
 * polling thread itself writes the `GET`s queued by one MHD_run (one write, pipelined), reads the replies and resumes
 * the requests: the floor of a shared hit whose Redis connection lives on the polling thread, with no wake-up of
 * another thread either way. The second thread is SCHED_BATCH: waking, it waits for the polling thread to sleep instead
 * of preempting it, as unicache's event loop is never seen to preempt (make bench-threads: involuntary switches 0.00).
 * As an ordinary thread it preempted the polling thread on 0.3 (`redis`) to 0.9 (`thread`) of the requests, each
 * hand-over a batch of one, and the hand-off cost about twice as much.
 * MHD_BASELINE_SPIN_NS=N (scripts/bench-http.sh, baseline-spin): every answer is queued after N nanoseconds of a loop
 * that reads CLOCK_MONOTONIC and touches no memory: user time a server's own code would spend, with none of its cache
 * misses, allocations or atomics; what such a server gets against the baseline on the same machine.
 * Usage: mhd-baseline PORT [CERT KEY]
 */
#define _GNU_SOURCE /* SCHED_BATCH */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The same as unicache_mhd_tls_priorities (Sources/CMicroHTTPDShim/tls.c). */
/* The service's priorities (Sources/CMicroHTTPDShim/tls.c): ECDHE + AEAD only in TLS 1.2, no SHA-1 signatures. */
static const char tls_priorities[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-CIPHER-ALL:+AES-256-GCM:"
    "+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:-SIGN-DSA-SHA1";

/* The whole file, NUL-terminated (MHD reads PEM as a C string); exits on failure. */
static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        perror(path);
        exit(1);
    }
    size_t capacity = 1 << 16, length = 0;
    char *text = malloc(capacity);
    size_t count;
    while (text != NULL && (count = fread(text + length, 1, capacity - 1 - length, file)) > 0) {
        length += count;
        if (length == capacity - 1) text = realloc(text, capacity *= 2);
    }
    fclose(file);
    if (text == NULL) exit(1);
    text[length] = '\0';
    return text;
}

#define PADDING 1000

static char body[64 + PADDING];
static size_t body_length;
static int first_call_marker;
/* MHD_BASELINE_SPIN_NS: nanoseconds spent before each answer (0: none). */
static long spin_nanoseconds;
/* MHD_BASELINE_RESPONSE=once: one response made at start-up and queued for every request (MHD counts its
   references), the stack's limit; otherwise a response is made and destroyed per request. */
static struct MHD_Response *shared_response;

/* MHD_BASELINE_HOLD: the connections of the batch being held, resumed together by hold_loop. */
#define HOLD_LIMIT 65536
static struct {
    pthread_mutex_t lock;
    pthread_cond_t started;
    double seconds;
    double first_at; /* CLOCK_MONOTONIC of the batch's first request; 0 while no batch is held */
    size_t count;
    struct MHD_Connection *held[HOLD_LIMIT];
} hold = {.lock = PTHREAD_MUTEX_INITIALIZER, .started = PTHREAD_COND_INITIALIZER};
static int resumed_marker;

static double monotonic_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Parks a request of the current batch (starting one if none is held); returns 0 when the batch is full. */
static int hold_connection(struct MHD_Connection *connection) {
    pthread_mutex_lock(&hold.lock);
    int parked = hold.count < HOLD_LIMIT;
    if (parked) {
        if (hold.first_at == 0) {
            hold.first_at = monotonic_now();
            pthread_cond_signal(&hold.started);
        }
        hold.held[hold.count++] = connection;
        MHD_suspend_connection(connection);
    }
    pthread_mutex_unlock(&hold.lock);
    return parked;
}

/* Waits for a batch, lets it wait hold.seconds from its first request, then resumes every connection in it. */
static void *hold_loop(void *unused) {
    (void)unused;
    static struct MHD_Connection *releasing[HOLD_LIMIT];
    for (;;) {
        pthread_mutex_lock(&hold.lock);
        while (hold.first_at == 0) pthread_cond_wait(&hold.started, &hold.lock);
        double end = hold.first_at + hold.seconds;
        pthread_mutex_unlock(&hold.lock);
        double left = end - monotonic_now();
        if (left > 0) {
            struct timespec pause = {.tv_sec = (time_t)left, .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
            nanosleep(&pause, NULL);
        }
        pthread_mutex_lock(&hold.lock);
        size_t count = hold.count;
        memcpy(releasing, hold.held, count * sizeof *releasing);
        hold.count = 0;
        hold.first_at = 0;
        double released_at = monotonic_now();
        pthread_mutex_unlock(&hold.lock);
        for (size_t i = 0; i < count; i++) MHD_resume_connection(releasing[i]);
        printf("released %zu %.6f\n", count, released_at);
        fflush(stdout);
    }
    return NULL;
}

/* MHD_BASELINE_HANDOFF: the requests handed to the second thread and not yet taken, each with its path. */
enum handoff_mode { HANDOFF_NONE, HANDOFF_SELF, HANDOFF_THREAD, HANDOFF_REDIS, HANDOFF_LOOP };
#define HANDOFF_LIMIT 4096
#define HANDOFF_KEY 96
static struct {
    pthread_mutex_t lock;
    enum handoff_mode mode;
    int wake_fd, epoll_fd, redis_fd;
    int scheduled; /* the wake-up for what is handed over is written */
    size_t count;
    struct MHD_Connection *handed[HANDOFF_LIMIT];
    char keys[HANDOFF_LIMIT][HANDOFF_KEY];
} handoff = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1, .redis_fd = -1};

/* The requests whose `GET`s were sent, oldest first, waiting for their replies, and the replies read so far. */
struct pending_gets {
    char replies[1 << 20];
    size_t buffered, first, count;
    struct MHD_Connection *waiting[HANDOFF_LIMIT];
};

/* Appends a `GET` of `key` to `commands` (at `*length`) and the request to what waits for its reply. */
static void queue_get(struct pending_gets *gets, char *commands, size_t *length, struct MHD_Connection *connection,
                      const char *key) {
    if (gets->count == HANDOFF_LIMIT) abort(); /* more than the benchmark's clients */
    *length += (size_t)sprintf(commands + *length, "*2\r\n$3\r\nGET\r\n$%zu\r\n%s\r\n", strlen(key), key);
    gets->waiting[(gets->first + gets->count++) % HANDOFF_LIMIT] = connection;
}

/* MHD_BASELINE_HANDOFF=loop: the polling thread's own `GET`s, written after each MHD_run, and what waits for them. */
static struct {
    char commands[HANDOFF_LIMIT * (HANDOFF_KEY + 32)];
    size_t length;
    struct pending_gets gets;
} loop;

/* On the polling thread: suspends the request and hands it over (or resumes it at once). */
static void hand_off(struct MHD_Connection *connection, const char *url) {
    MHD_suspend_connection(connection);
    if (handoff.mode == HANDOFF_SELF) {
        MHD_resume_connection(connection);
        return;
    }
    if (handoff.mode == HANDOFF_LOOP) {
        queue_get(&loop.gets, loop.commands, &loop.length, connection, url);
        return;
    }
    pthread_mutex_lock(&handoff.lock);
    if (handoff.count == HANDOFF_LIMIT) abort(); /* more than the benchmark's clients */
    handoff.handed[handoff.count] = connection;
    snprintf(handoff.keys[handoff.count++], HANDOFF_KEY, "%s", url);
    int wake = !handoff.scheduled;
    handoff.scheduled = 1;
    pthread_mutex_unlock(&handoff.lock);
    uint64_t one = 1;
    if (wake && write(handoff.wake_fd, &one, sizeof one) != sizeof one) abort();
}

/* The length of the RESP reply at the start of `bytes`, or 0 while it is incomplete (a bulk string or a line). */
static size_t reply_length(const char *bytes, size_t count) {
    const char *end = memchr(bytes, '\n', count);
    if (end == NULL) return 0;
    size_t line = (size_t)(end - bytes) + 1;
    if (bytes[0] != '$') return line;
    long length = atol(bytes + 1);
    size_t total = length < 0 ? line : line + (size_t)length + 2;
    return total <= count ? total : 0;
}

/* Reads what redis-server sent and resumes the request of each whole reply; exits if it went away. */
static void read_replies(struct pending_gets *gets) {
    ssize_t got = read(handoff.redis_fd, gets->replies + gets->buffered, sizeof gets->replies - gets->buffered);
    if (got <= 0) abort(); /* redis-server went away */
    gets->buffered += (size_t)got;
    size_t used = 0, length;
    while (used < gets->buffered && (length = reply_length(gets->replies + used, gets->buffered - used)) > 0) {
        used += length;
        if (gets->count == 0) abort(); /* a reply nothing asked for */
        MHD_resume_connection(gets->waiting[gets->first]);
        gets->first = (gets->first + 1) % HANDOFF_LIMIT;
        gets->count--;
    }
    memmove(gets->replies, gets->replies + used, gets->buffered - used);
    gets->buffered -= used;
}

/* The second thread: takes what was handed over in one batch and resumes it, after its `GET`s' replies with redis. */
static void *handoff_loop(void *unused) {
    (void)unused;
    static struct MHD_Connection *batch[HANDOFF_LIMIT];
    static char keys[HANDOFF_LIMIT][HANDOFF_KEY], commands[HANDOFF_LIMIT * (HANDOFF_KEY + 32)];
    static struct pending_gets gets;
    struct sched_param none = {0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
    for (;;) {
        struct epoll_event events[2];
        int ready = epoll_wait(handoff.epoll_fd, events, 2, -1);
        for (int e = 0; e < ready; e++) {
            if (events[e].data.fd != handoff.wake_fd) {
                read_replies(&gets);
                continue;
            }
            uint64_t value;
            if (read(handoff.wake_fd, &value, sizeof value) != sizeof value) continue;
            pthread_mutex_lock(&handoff.lock);
            size_t count = handoff.count;
            memcpy(batch, handoff.handed, count * sizeof *batch);
            if (handoff.mode == HANDOFF_REDIS) memcpy(keys, handoff.keys, count * sizeof *keys);
            handoff.count = 0;
            handoff.scheduled = 0;
            pthread_mutex_unlock(&handoff.lock);
            if (handoff.mode != HANDOFF_REDIS) {
                for (size_t i = 0; i < count; i++) MHD_resume_connection(batch[i]);
                continue;
            }
            size_t length = 0;
            for (size_t i = 0; i < count; i++) queue_get(&gets, commands, &length, batch[i], keys[i]);
            if (write(handoff.redis_fd, commands, length) != (ssize_t)length) abort();
        }
    }
    return NULL;
}

/* MHD_BASELINE_HANDOFF=loop: the one thread, libmicrohttpd's epoll descriptor and the Redis socket in one epoll set. */
static void run_loop(struct MHD_Daemon *daemon) {
    int epoll_fd = epoll_create1(0);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    struct epoll_event mhd = {.events = EPOLLIN, .data.fd = info ? info->epoll_fd : -1};
    struct epoll_event redis = {.events = EPOLLIN, .data.fd = handoff.redis_fd};
    if (epoll_fd < 0 || info == NULL || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, mhd.data.fd, &mhd) != 0
        || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, handoff.redis_fd, &redis) != 0) {
        perror("mhd-baseline: loop");
        exit(1);
    }
    for (;;) {
        MHD_UNSIGNED_LONG_LONG timeout;
        int wait = MHD_get_timeout(daemon, &timeout) == MHD_YES ? (int)timeout : -1;
        struct epoll_event events[2];
        int ready = epoll_wait(epoll_fd, events, 2, wait);
        for (int e = 0; e < ready; e++) {
            if (events[e].data.fd == handoff.redis_fd) read_replies(&loop.gets);
        }
        MHD_run(daemon);
        if (loop.length > 0 && write(handoff.redis_fd, loop.commands, loop.length) != (ssize_t)loop.length) abort();
        loop.length = 0;
    }
}

/* Connects to the redis-server on 127.0.0.1:MHD_BASELINE_REDIS_PORT (watched by `epoll_fd` unless it is -1). */
static void connect_redis(int epoll_fd) {
    const char *port = getenv("MHD_BASELINE_REDIS_PORT");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(port ? atoi(port) : 6379))};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    handoff.redis_fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    struct epoll_event readable = {.events = EPOLLIN, .data.fd = handoff.redis_fd};
    if (handoff.redis_fd < 0 || connect(handoff.redis_fd, (struct sockaddr *)&address, sizeof address) != 0
        || setsockopt(handoff.redis_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0
        || (epoll_fd >= 0 && epoll_ctl(epoll_fd, EPOLL_CTL_ADD, handoff.redis_fd, &readable) != 0)) {
        perror("mhd-baseline: redis-server");
        exit(1);
    }
}

/* Starts the second thread (and connects to redis-server) for MHD_BASELINE_HANDOFF; exits on failure. */
static void start_handoff(const char *mode) {
    handoff.mode = strcmp(mode, "self") == 0     ? HANDOFF_SELF
                   : strcmp(mode, "thread") == 0 ? HANDOFF_THREAD
                   : strcmp(mode, "redis") == 0  ? HANDOFF_REDIS
                   : strcmp(mode, "loop") == 0   ? HANDOFF_LOOP
                                                 : HANDOFF_NONE;
    if (handoff.mode == HANDOFF_NONE) {
        fprintf(stderr, "mhd-baseline: MHD_BASELINE_HANDOFF is self, thread, redis or loop\n");
        exit(1);
    }
    if (handoff.mode == HANDOFF_SELF) return;
    if (handoff.mode == HANDOFF_LOOP) {
        connect_redis(-1);
        return;
    }
    handoff.wake_fd = eventfd(0, EFD_NONBLOCK);
    handoff.epoll_fd = epoll_create1(0);
    struct epoll_event wake = {.events = EPOLLIN, .data.fd = handoff.wake_fd};
    if (handoff.wake_fd < 0 || handoff.epoll_fd < 0
        || epoll_ctl(handoff.epoll_fd, EPOLL_CTL_ADD, handoff.wake_fd, &wake) != 0) {
        perror("mhd-baseline: eventfd");
        exit(1);
    }
    if (handoff.mode == HANDOFF_REDIS) connect_redis(handoff.epoll_fd);
    pthread_t thread;
    if (pthread_create(&thread, NULL, handoff_loop, NULL) != 0) {
        fprintf(stderr, "mhd-baseline: cannot start the hand-off thread\n");
        exit(1);
    }
}

/* Reads the monotonic clock (vDSO, no system call) until NANOSECONDS have passed. */
static void spin(long nanoseconds) {
    double end = monotonic_now() + (double)nanoseconds / 1e9;
    while (monotonic_now() < end) continue;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **con_cls) {
    (void)cls; (void)method; (void)version; (void)upload_data;
    if (*con_cls == NULL) {            /* first call: headers only */
        *con_cls = &first_call_marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {      /* discard any body */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (hold.seconds > 0 && *con_cls != &resumed_marker) {
        *con_cls = &resumed_marker; /* called again once resumed: answered then */
        if (hold_connection(connection)) return MHD_YES;
    }
    if (handoff.mode != HANDOFF_NONE && *con_cls != &resumed_marker) {
        *con_cls = &resumed_marker; /* called again once resumed: answered then */
        hand_off(connection, url);
        return MHD_YES;
    }
    if (spin_nanoseconds > 0) spin(spin_nanoseconds);
    if (shared_response != NULL) return MHD_queue_response(connection, MHD_HTTP_OK, shared_response);
    struct MHD_Response *response =
        MHD_create_response_from_buffer(body_length, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(response, "Content-Type", "application/json");
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

int main(int argc, char **argv) {
    unsigned port = argc > 1 ? (unsigned)atoi(argv[1]) : 8090;
    int offset = snprintf(body, sizeof body, "{\"status\":\"ok\",\"padding\":\"");
    memset(body + offset, 'a', PADDING);
    offset += PADDING;
    offset += snprintf(body + offset, sizeof body - (size_t)offset, "\"}");
    body_length = (size_t)offset;
    const char *mode = getenv("MHD_BASELINE_RESPONSE");
    if (mode != NULL && strcmp(mode, "once") == 0) {
        shared_response = MHD_create_response_from_buffer(body_length, body, MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(shared_response, "Content-Type", "application/json");
    }

    const char *hold_seconds = getenv("MHD_BASELINE_HOLD");
    hold.seconds = hold_seconds != NULL ? atof(hold_seconds) : 0;
    const char *threads_text = getenv("MHD_BASELINE_THREADS");
    unsigned threads = threads_text != NULL ? (unsigned)atoi(threads_text) : 1;
    const char *spin_text = getenv("MHD_BASELINE_SPIN_NS");
    spin_nanoseconds = spin_text != NULL ? atol(spin_text) : 0;
    const char *handoff_mode = getenv("MHD_BASELINE_HANDOFF");
    if (handoff_mode != NULL) start_handoff(handoff_mode);
    pthread_t hold_thread;
    if (hold.seconds > 0 && pthread_create(&hold_thread, NULL, hold_loop, NULL) != 0) {
        fprintf(stderr, "mhd-baseline: cannot start the hold thread\n");
        return 1;
    }

    int tls = argc > 3;
    struct MHD_OptionItem tls_options[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, tls ? read_file(argv[2]) : NULL},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? read_file(argv[3]) : NULL},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls_priorities},
        {MHD_OPTION_END, 0, NULL},
    };
    unsigned own_thread = handoff.mode == HANDOFF_LOOP ? 0 : MHD_USE_INTERNAL_POLLING_THREAD;
    struct MHD_Daemon *daemon = MHD_start_daemon(
        own_thread | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0)
            | (hold.seconds > 0 || handoff.mode != HANDOFF_NONE ? MHD_ALLOW_SUSPEND_RESUME : 0), (uint16_t)port,
        NULL, NULL, handle, NULL,
        MHD_OPTION_CONNECTION_LIMIT, 4096u,
        /* 0 and 1 both mean the one internal polling thread. */
        MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0u,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_ARRAY, tls ? tls_options : &tls_options[3],
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "mhd-baseline: cannot start on port %u\n", port);
        return 1;
    }
    fprintf(stderr, "mhd-baseline: listening on %s://127.0.0.1:%u (%zu-byte body)\n", tls ? "https" : "http", port,
            body_length);
    if (handoff.mode == HANDOFF_LOOP) run_loop(daemon); /* until killed */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    int received;
    sigwait(&signals, &received);
    MHD_stop_daemon(daemon);
    return 0;
}

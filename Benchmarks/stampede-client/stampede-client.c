/*
 * The client side of scripts/bench-stampede.py: opens N connections to 127.0.0.1:PORT, sends one
 * `GET PATH` on each (keep-alive, as HTTP clients and gateways do; `close` as 4th argument sends
 * `Connection: close`), then polls epoll every 100 us until every answer is complete (headers and
 * Content-Length bytes of body) and prints, per connection, the CLOCK_MONOTONIC time its answer was
 * complete (seconds), its status code, X-Cache value and size in bytes (headers and body). One thread, no per-request work beyond read():
 * the figures are the server's, not the client's.
 * PORT may be a comma-separated list (a fleet): connection i goes to the (i mod count)th port.
 * Usage: stampede-client PORT[,PORT...] PATH N [close]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct answer {
    int fd;
    size_t length;   /* bytes received */
    size_t kept;     /* of which kept in head */
    size_t expected; /* header bytes + Content-Length, once the headers are in; 0 before */
    char head[1024]; /* the first bytes: status line and headers */
    double ended;
};

/* Sets answer->expected once the header block is complete. */
static void parse_head(struct answer *answer) {
    const char *end = strstr(answer->head, "\r\n\r\n");
    if (end == NULL) return;
    size_t body = 0;
    const char *field = strcasestr(answer->head, "\r\nContent-Length:");
    if (field != NULL && field < end) body = strtoul(field + 17, NULL, 10);
    answer->expected = (size_t)(end + 4 - answer->head) + body;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "close") == 0)) {
        fprintf(stderr, "usage: stampede-client PORT[,PORT...] PATH N [close]\n");
        return 2;
    }
    int ports[16];
    int port_count = 0;
    for (char *field = strtok(argv[1], ","); field != NULL && port_count < 16; field = strtok(NULL, ","))
        ports[port_count++] = atoi(field);
    if (port_count == 0) {
        fprintf(stderr, "stampede-client: no port\n");
        return 2;
    }
    const char *path = argv[2];
    int count = atoi(argv[3]);
    struct answer *answers = calloc((size_t)count, sizeof *answers);
    int epoll = epoll_create1(0);
    char request[512];
    int request_length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", path,
                                  argc == 5 ? "Connection: close\r\n" : "");
    struct sockaddr_in address = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);

    for (int i = 0; i < count; i++) {
        address.sin_port = htons((uint16_t)ports[i % port_count]);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
            fprintf(stderr, "stampede-client: connect %d: %s\n", i, strerror(errno));
            return 1;
        }
        answers[i].fd = fd;
        /* Edge-triggered: one read per readiness (the buffer is larger than any answer), no EPOLL_CTL_DEL
           per answer; the client spends as few syscalls as it can, for it shares the CPUs with the server. */
        struct epoll_event event = {.events = EPOLLIN | EPOLLET, .data.u32 = (uint32_t)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
    }
    for (int i = 0; i < count; i++) {
        if (write(answers[i].fd, request, (size_t)request_length) != request_length) {
            fprintf(stderr, "stampede-client: write %d: %s\n", i, strerror(errno));
            return 1;
        }
    }
    int open = count;
    struct epoll_event events[256];
    char buffer[65536];
    double deadline = now() + 30;
    while (open > 0) {
        int ready = epoll_wait(epoll, events, 256, 0);
        if (ready == 0) {
            if (now() > deadline) {
                fprintf(stderr, "stampede-client: %d answers missing after 30 s\n", open);
                return 1;
            }
            /* Polls instead of sleeping in epoll_wait: a sleeping client makes every answer the server sends on
               loopback pay for waking it (an IPI between the 2 vCPUs), which a client on another machine never
               costs the server (measured: ~1.5-2 ms more on 1,000 answers). An answer is seen at most 100 us
               late, which can only make the figure worse. */
            struct timespec pause = {.tv_sec = 0, .tv_nsec = 100000};
            nanosleep(&pause, NULL);
            continue;
        }
        if (ready < 0) {
            perror("stampede-client: epoll_wait");
            return 1;
        }
        for (int e = 0; e < ready; e++) {
            struct answer *answer = &answers[events[e].data.u32];
            ssize_t n = read(answer->fd, buffer, sizeof buffer);
            if (n < 0 && errno == EAGAIN) continue;
            if (n == (ssize_t)sizeof buffer) {
                /* Edge-triggered epoll would not report the rest. */
                fprintf(stderr, "stampede-client: an answer is larger than the %zu-byte buffer\n", sizeof buffer);
                return 1;
            }
            if (n > 0) {
                size_t room = sizeof answer->head - 1 - answer->kept;
                size_t copy = (size_t)n < room ? (size_t)n : room;
                memcpy(answer->head + answer->kept, buffer, copy);
                answer->kept += copy;
                answer->head[answer->kept] = '\0';
                if (answer->expected == 0) parse_head(answer);
                answer->length += (size_t)n;
                if (answer->expected == 0 || answer->length < answer->expected) continue;
            } else if (answer->expected == 0 || answer->length < answer->expected) {
                fprintf(stderr, "stampede-client: connection %u ended before its answer\n", events[e].data.u32);
                return 1;
            }
            if (answer->ended == 0) {
                answer->ended = now();
                open--;
            }
        }
    }
    for (int i = 0; i < count; i++) {
        int status = 0;
        sscanf(answers[i].head, "HTTP/1.%*d %d", &status);
        char cache[32] = "-";
        const char *header = strcasestr(answers[i].head, "\r\nX-Cache:");
        if (header != NULL) sscanf(header + 10, " %31[A-Z]", cache);
        printf("%.6f %d %s %zu\n", answers[i].ended, status, cache, answers[i].length);
        close(answers[i].fd);
    }
    return 0;
}

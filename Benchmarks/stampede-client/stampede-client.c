/*
 * The client side of scripts/bench-stampede.py: opens N connections to 127.0.0.1:PORT, sends one
 * `GET PATH` (Connection: close) on each, then waits with epoll until every answer has ended and prints,
 * per connection, the CLOCK_MONOTONIC time its answer ended (seconds), its status code and X-Cache value.
 * One thread, no per-request work beyond read(): the figures are the server's, not the client's.
 * Usage: stampede-client PORT PATH N
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
    size_t length;
    char head[1024]; /* the first bytes: status line and headers */
    double ended;
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: stampede-client PORT PATH N\n");
        return 2;
    }
    int port = atoi(argv[1]);
    const char *path = argv[2];
    int count = atoi(argv[3]);
    struct answer *answers = calloc((size_t)count, sizeof *answers);
    int epoll = epoll_create1(0);
    char request[512];
    int request_length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);

    for (int i = 0; i < count; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
            fprintf(stderr, "stampede-client: connect %d: %s\n", i, strerror(errno));
            return 1;
        }
        answers[i].fd = fd;
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
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
    while (open > 0) {
        int ready = epoll_wait(epoll, events, 256, 30000);
        if (ready <= 0) {
            fprintf(stderr, "stampede-client: %d answers missing after 30 s\n", open);
            return 1;
        }
        for (int e = 0; e < ready; e++) {
            struct answer *answer = &answers[events[e].data.u32];
            ssize_t n = read(answer->fd, buffer, sizeof buffer);
            if (n > 0) {
                size_t room = sizeof answer->head - 1 - answer->length;
                size_t copy = (size_t)n < room ? (size_t)n : room;
                memcpy(answer->head + answer->length, buffer, copy);
                answer->length += copy;
                continue;
            }
            answer->ended = now();
            close(answer->fd);
            open--;
        }
    }
    for (int i = 0; i < count; i++) {
        int status = 0;
        sscanf(answers[i].head, "HTTP/1.%*d %d", &status);
        char cache[32] = "-";
        const char *header = strcasestr(answers[i].head, "\r\nX-Cache:");
        if (header != NULL) sscanf(header + 10, " %31[A-Z]", cache);
        printf("%.6f %d %s\n", answers[i].ended, status, cache);
    }
    return 0;
}

/*
 * The raw libmicrohttpd baseline for scripts/bench-http.sh: serves a fixed ~1 KB JSON body from memory
 * on every path, with the same threading mode as MicroHTTPServer (internal polling thread + epoll) and
 * the response queued on the second access-handler call, as a well-written C server would.
 * Usage: mhd-baseline PORT
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PADDING 1000

static char body[64 + PADDING];
static size_t body_length;
static int first_call_marker;

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **con_cls) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    if (*con_cls == NULL) {            /* first call: headers only */
        *con_cls = &first_call_marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {      /* discard any body */
        *upload_data_size = 0;
        return MHD_YES;
    }
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

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, handle, NULL,
        MHD_OPTION_CONNECTION_LIMIT, 4096u,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "mhd-baseline: cannot start on port %u\n", port);
        return 1;
    }
    fprintf(stderr, "mhd-baseline: listening on http://127.0.0.1:%u (%zu-byte body)\n", port, body_length);
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

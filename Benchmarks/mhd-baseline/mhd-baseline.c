/*
 * The raw libmicrohttpd baseline for scripts/bench-http.sh: serves a fixed ~1 KB JSON body from memory
 * on every path, with the same threading mode as MicroHTTPServer (internal polling thread + epoll) and
 * the response queued on the second access-handler call, as a well-written C server would.
 * With CERT and KEY (PEM files) it serves HTTPS with unicache's TLS settings: MHD_USE_TLS, the PEM in memory,
 * and the same GnuTLS priority string (TLS 1.3 and 1.2 only; see unicache_mhd_tls_priorities in the shim).
 * Usage: mhd-baseline PORT [CERT KEY]
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
/* MHD_BASELINE_RESPONSE=once: one response made at start-up and queued for every request (MHD counts its
   references), the stack's limit; otherwise a response is made and destroyed per request. */
static struct MHD_Response *shared_response;

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

    int tls = argc > 3;
    struct MHD_OptionItem tls_options[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, tls ? read_file(argv[2]) : NULL},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? read_file(argv[3]) : NULL},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls_priorities},
        {MHD_OPTION_END, 0, NULL},
    };
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0), (uint16_t)port,
        NULL, NULL, handle, NULL,
        MHD_OPTION_CONNECTION_LIMIT, 4096u,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_ARRAY, tls ? tls_options : &tls_options[3],
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "mhd-baseline: cannot start on port %u\n", port);
        return 1;
    }
    fprintf(stderr, "mhd-baseline: listening on %s://127.0.0.1:%u (%zu-byte body)\n", tls ? "https" : "http", port,
            body_length);
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

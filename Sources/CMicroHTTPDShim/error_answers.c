#include "error_answers.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* MHD_DLOG's format in transmit_error_response_len() (connection.c), word for word: MHD passes its formats as
   they are (no translation: its _() is the identity). */
static const char error_format[] =
    "Error processing request (HTTP response code is %u ('%s')). Closing connection.\n";

unsigned int unicache_error_answer_status(const char *format, va_list arguments) {
    if (format == NULL || strcmp(format, error_format) != 0) return 0;
    va_list copy;
    va_copy(copy, arguments);
    unsigned int status = va_arg(copy, unsigned int);
    va_end(copy);
    return status;
}

/* RFC 9110's IMF-fixdate of now, as MHD's own answers carry (no locale: names spelled out here). */
static void http_date(char *text, size_t size) {
    static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    snprintf(text, size, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[utc.tm_wday % 7], utc.tm_mday,
             months[utc.tm_mon % 12], utc.tm_year + 1900, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

/* The socket is non-blocking and this is the first answer on it since the last one went out whole: a short
   answer fits its send buffer unless the client reads nothing; what does not fit is dropped (the socket closes). */
static void send_all(struct MHD_Connection *connection, int fd, const char *bytes, size_t length) {
    const union MHD_ConnectionInfo *tls = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    while (length > 0) {
        ssize_t sent = tls != NULL ? gnutls_record_send((gnutls_session_t)tls->tls_session, bytes, length)
                                   : send(fd, bytes, length, MSG_NOSIGNAL);
        if (sent > 0) {
            bytes += sent;
            length -= (size_t)sent;
        } else if (!(tls != NULL ? sent == GNUTLS_E_INTERRUPTED : sent < 0 && errno == EINTR)) {
            return;
        }
    }
}

/* The client's X-Request-ID when it is one the service takes (1–128 visible ASCII characters), to echo as the
   service does; NULL otherwise (the id the service would make is made in Swift, and no request log line would carry
   it: these requests never reach the service). */
static const char *client_request_id(struct MHD_Connection *connection, size_t *length) {
    const char *value = NULL;
    if (MHD_lookup_connection_value_n(connection, MHD_HEADER_KIND, "X-Request-ID", strlen("X-Request-ID"), &value,
                                      length) != MHD_YES || value == NULL || *length < 1 || *length > 128) {
        return NULL;
    }
    for (size_t index = 0; index < *length; index++) {
        if (value[index] < 0x21 || value[index] > 0x7E) return NULL;
    }
    return value;
}

int unicache_error_answer_send(const struct unicache_mhd_options *options, struct MHD_Connection *connection,
                               unsigned int status, int head_only) {
    const char *reason = NULL;
    const char *body = NULL;
    switch (status) {
    case 400: reason = "Bad Request"; body = options->bad_request_problem; break;
    case 413: reason = "Content Too Large"; body = options->content_too_large_problem; break;
    case 431: reason = "Request Header Fields Too Large"; body = options->header_fields_too_large_problem; break;
    default: break;
    }
    const union MHD_ConnectionInfo *socket = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (body == NULL || socket == NULL) return 0;
    char date[40];
    http_date(date, sizeof date);
    size_t id_length = 0;
    const char *id = client_request_id(connection, &id_length);
    char answer[2048];
    int length = snprintf(answer, sizeof answer,
                          "HTTP/1.1 %u %s\r\nDate: %s\r\nConnection: close\r\n"
                          "Content-Type: application/problem+json\r\n%s%.*s%sContent-Length: %zu\r\n\r\n%s",
                          status, reason, date, id != NULL ? "X-Request-ID: " : "", (int)id_length,
                          id != NULL ? id : "", id != NULL ? "\r\n" : "", strlen(body), head_only ? "" : body);
    if (length < 0 || (size_t)length >= sizeof answer) return 0;
    send_all(connection, socket->connect_fd, answer, (size_t)length);
    shutdown(socket->connect_fd, SHUT_WR);
    return 1;
}

/* What a request's line and headers hold of its connection's memory pool once they are complete: their bytes, a
   record for each header field and cookie (56 bytes, 64 as the pool aligns them; a query parameter would take one
   too, but MHD sees none: shim.c), and the copy of the Cookie header MHD parses cookies from. */
static size_t request_memory(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *size = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    int records = MHD_get_connection_values_n(connection, MHD_HEADER_KIND | MHD_COOKIE_KIND | MHD_GET_ARGUMENT_KIND,
                                              NULL, NULL);
    const char *cookie = NULL;
    size_t cookie_length = 0;
    size_t cookie_copy = 0;
    if (MHD_lookup_connection_value_n(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE,
                                      strlen(MHD_HTTP_HEADER_COOKIE), &cookie, &cookie_length) == MHD_YES) {
        cookie_copy = (cookie_length + 1 + 15) / 16 * 16;
    }
    return (size == NULL ? 0 : size->header_size) + 64 * (size_t)(records > 0 ? records : 0) + cookie_copy;
}

int unicache_error_answer_if_too_large(const struct unicache_mhd_options *options, struct MHD_Connection *connection,
                                       const char *method) {
    if (options->request_header_budget == 0 || request_memory(connection) <= options->request_header_budget) return 0;
    return unicache_error_answer_send(options, connection, 431, method != NULL && strcmp(method, "HEAD") == 0);
}

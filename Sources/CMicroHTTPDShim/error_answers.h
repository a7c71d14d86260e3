#pragma once
/* Answers the shim sends itself, problem+json of the service's (private to the shim), where libmicrohttpd 0.9.75
   would send none or a broken one.

   A request whose line and headers leave too little of the connection's memory pool for its answer's status line
   and headers: MHD builds that head in the pool, and when it does not fit closes the connection without a byte
   ("failed to create response header"). MHD itself refuses only what does not fit at all (its 414 or 431), so a
   request within a few hundred bytes of the limit, or with ~110 short header fields (each field spends a 64-byte
   record of the pool), was never answered. The shim measures what a request holds when its headers are complete,
   before the service sees it, and answers 431 itself past `request_header_budget`.

   libmicrohttpd 0.9.75 sends the status line and headers of its own error answer twice, then the body once, for a
   request whose complete headers it refuses: a Content-Length that is not a number or is beyond 64 bits (400,
   413), or more cookies than the connection's memory holds (431). parse_connection_headers() queues the answer
   (transmit_error_response_len(), which builds its head into the write buffer and moves the connection on to
   sending it), and MHD_connection_handle_idle() then sets the connection's state as if the headers had been
   fine; the access handler is skipped (an answer is queued) and the head is built a second time behind the first.
   No option of 0.9.75 avoids it and the access handler never sees the request. What the shim does see is MHD's
   log line, on the connection's polling thread, right before the answer is queued ("Error processing request
   (HTTP response code is %u ..."): there it sends the service's problem+json for that status itself and shuts
   the socket for writing, so that MHD's answer fails to go out (it logs "Failed to send the response headers")
   and the connection closes. */
#include "include/CMicroHTTPDShim.h"
#include <stdarg.h>

/** On the access handler's first call of a request (`method` its method): when its line and headers hold more of
    the connection's memory than `options->request_header_budget`, answers 431 as `unicache_error_answer_send` does
    (without the body for HEAD) and returns 1 (the caller then closes the connection); else 0. */
int unicache_error_answer_if_too_large(const struct unicache_mhd_options *options, struct MHD_Connection *connection,
                                       const char *method);

/** The status MHD is about to answer with when `format` (and `arguments`, read from a copy) is its log line for an
    error answer; 0 otherwise. */
unsigned int unicache_error_answer_status(const char *format, va_list arguments);

/** Sends `status`'s problem from `options` on `connection` (over TLS when it is a TLS connection) with
    `Connection: close`, its body unless `head_only`, and shuts the socket for writing. Returns 0 when it has no
    problem for `status` and left the answer to MHD. On the connection's polling thread. (MHD's log line does not
    say the request's method: a HEAD request answered from it gets the body too, and the connection closes.) */
int unicache_error_answer_send(const struct unicache_mhd_options *options, struct MHD_Connection *connection,
                               unsigned int status, int head_only);

#pragma once
/* The daemon's open connections as the shim sees them (private to the shim): for each, whether it is idle
   (connected, no request in progress) or has started a request whose line and headers are not complete yet.
   libmicrohttpd 0.9.75 has neither defence this serves: a header deadline from a request's first byte (its
   connection timeout restarts with every byte, so a client trickling one byte at a time holds a slot for
   ever; nginx's client_header_timeout) and closing idle connections at the connection limit to admit new
   ones (nginx's ngx_drain_connections), or, with none idle, the requests stalled the longest (no byte for a
   while: a flood trickling bytes holds every slot, each under way). The acceptor's thread calls both; MHD's
   callbacks keep the states. */
#include "include/CMicroHTTPDShim.h"
#include <pthread.h>

struct unicache_connection;

struct unicache_connections {
    /* Guards the list and every record's `fd` and `closing`; MHD unregisters a connection (NOTIFY_CLOSED)
       under it before it closes the descriptor, so a descriptor read under it is the connection's own. */
    pthread_mutex_t lock;
    struct unicache_connection *head;
    struct unicache_connection *tail;
    /* Records in the list. */
    unsigned int count;
    uint64_t header_timeout_ms;
    /* At the limit, a request under way with no byte for this long may be closed to admit a new one (0: never). */
    uint64_t stall_ms;
};

void unicache_connections_init(struct unicache_connections *connections, uint64_t header_timeout_ms,
                               uint64_t stall_ms);
void unicache_connections_destroy(struct unicache_connections *connections);

/* On the connection's polling thread (MHD_OPTION_NOTIFY_CONNECTION). */
void unicache_connections_opened(struct unicache_connections *connections, struct MHD_Connection *connection,
                                 void **socket_context);
void unicache_connections_closed(struct unicache_connections *connections, void **socket_context);

/* On the connection's polling thread, per request: the request line is complete (URI log callback), the
   headers are (the access handler's first call), the request is done (MHD_OPTION_NOTIFY_COMPLETED). */
void unicache_connection_request_line(struct MHD_Connection *connection);
/** Returns 1 on the request's first call (its headers have just completed), 0 on later ones or when the connection
    is not watched. */
int unicache_connection_headers_complete(struct MHD_Connection *connection);
void unicache_connection_request_done(struct MHD_Connection *connection);

/** On a polling thread: the connection of this thread whose headers MHD has all but not yet handed to the access
    handler, and which has no answer queued (MHD is parsing them: parse_connection_headers); NULL when none. At most
    one can be: MHD goes on from the end of a request's headers to the handler in the same step. */
struct MHD_Connection *unicache_connections_parsing_headers(struct unicache_connections *connections);

/** Closes every connection whose request line and headers are overdue; returns how many it closed. */
unsigned int unicache_connections_enforce_header_timeout(struct unicache_connections *connections);

/** At the limit, with `waiting` connections in the listen backlog: closes as many (fewer the ones it closed before
    that MHD has yet to notice), idle connections first, the idle the longest first, then requests under way that
    have had no byte for stall_ms, the longest stalled first (the least progress for the longest). Returns how many
    it closed; *stalled says how many of them were requests under way. */
unsigned int unicache_connections_drain(struct unicache_connections *connections, unsigned int waiting,
                                        unsigned int *stalled);

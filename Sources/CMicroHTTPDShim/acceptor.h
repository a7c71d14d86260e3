#pragma once
/* The shim's acceptor (private to the shim), a thread beside MHD's polling threads. With a pool of them it accepts
   and hands each connection to MHD, which places it on thread `fd % threads`, an even split (MHD's own listening
   lets whichever thread wakes first accept up to ten at a time: a burst of 1,000 split up to 94/6). With one, MHD
   accepts (no hop between threads per connection) and the acceptor only watches. Either way it keeps admission:
   --max-connections, the connections idle the longest (else the requests stalled the longest) closed to admit new
   ones at the limit, and connections whose request line and headers are overdue closed (connections.h). */
#include "include/CMicroHTTPDShim.h"
#include <sys/socket.h>

struct unicache_acceptor;

/** Binds and listens on `address`, to accept; NULL with *system_error set on failure. `options` is kept. */
struct unicache_acceptor *unicache_acceptor_listen(const struct sockaddr_storage *address,
                                                   const struct unicache_mhd_options *options,
                                                   int *system_error);

/** An acceptor that leaves accepting to MHD (started without MHD_USE_NO_LISTEN_SOCKET); NULL on failure. */
struct unicache_acceptor *unicache_acceptor_watch(const struct unicache_mhd_options *options, int *system_error);

/** The port of the listening socket (MHD's once started, when watching; 0 if unknown). */
uint16_t unicache_acceptor_port(const struct unicache_acceptor *acceptor);

/** For MHD_OPTION_NOTIFY_CONNECTION with the acceptor as cls: records a connection; a closed one frees its slot. */
void unicache_acceptor_notified(void *cls, struct MHD_Connection *connection, void **socket_context,
                                enum MHD_ConnectionNotificationCode code);

/** On a polling thread: the connection whose complete headers MHD is parsing there (connections.h), or NULL. */
struct MHD_Connection *unicache_acceptor_parsing_headers(struct unicache_acceptor *acceptor);

/** Starts the thread for `daemon`; 0 or the pthread_create error. */
int unicache_acceptor_start(struct unicache_acceptor *acceptor, struct MHD_Daemon *daemon);

/** Stops the thread; an accepting one refuses what waits in its backlog. Calling it again does nothing. */
void unicache_acceptor_stop(struct unicache_acceptor *acceptor);

/** Stops the thread if needed, closes its own socket and frees the acceptor. */
void unicache_acceptor_free(struct unicache_acceptor *acceptor);

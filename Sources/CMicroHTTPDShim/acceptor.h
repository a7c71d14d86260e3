#pragma once
/* The shim's acceptor (private to the shim): with a pool of polling threads it accepts on its own thread and
   hands each connection to MHD, which places it on thread `fd % threads`, an even split. MHD's own listening
   lets whichever thread wakes first accept up to ten at a time (a burst of 1,000 split up to 94/6). */
#include "include/CMicroHTTPDShim.h"
#include <sys/socket.h>

struct unicache_acceptor;

/** Binds and listens on `address`; NULL with *system_error set on failure. `options` is kept (limit, logger). */
struct unicache_acceptor *unicache_acceptor_listen(const struct sockaddr_storage *address,
                                                   const struct unicache_mhd_options *options,
                                                   int *system_error);

/** The port the acceptor listens on (0 if unknown). */
uint16_t unicache_acceptor_port(const struct unicache_acceptor *acceptor);

/** For MHD_OPTION_NOTIFY_CONNECTION with the acceptor as cls: a closed connection frees its slot. */
void unicache_acceptor_notified(void *cls, struct MHD_Connection *connection, void **socket_context,
                                enum MHD_ConnectionNotificationCode code);

/** Starts accepting for `daemon` (started with MHD_USE_NO_LISTEN_SOCKET); 0 or the pthread_create error. */
int unicache_acceptor_start(struct unicache_acceptor *acceptor, struct MHD_Daemon *daemon);

/** Stops accepting; what waits in the backlog is refused. Calling it again does nothing. */
void unicache_acceptor_stop(struct unicache_acceptor *acceptor);

/** Stops accepting if needed, closes the socket and frees the acceptor. */
void unicache_acceptor_free(struct unicache_acceptor *acceptor);

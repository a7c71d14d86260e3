// hiredis 0.14 as Debian ships it (libhiredis-dev, /usr/include/hiredis).
#include <hiredis/hiredis.h>

#if defined(__linux__)
#include <pthread.h>
// Naming RedisClient's threads: a GNU extension that Glibc's Swift module leaves out (glibc has the symbol).
extern int pthread_setname_np(pthread_t thread, const char *name);
#endif

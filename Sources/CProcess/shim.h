// prctl(2) is variadic, which Swift does not import: a non-variadic wrapper for the one call the service makes.
#include <sys/prctl.h>

/// PR_SET_DUMPABLE 0: no core dump, and /proc/PID/* owned by root (CONTRACT §8.9). Returns prctl's result.
static inline int unicache_process_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

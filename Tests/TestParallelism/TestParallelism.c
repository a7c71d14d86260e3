#include "TestParallelism.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WIDTH_VARIABLE "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"

/* Swift Testing starts every test of the process at once by default: hundreds of tasks queue on Swift's cooperative
   pool (one thread per CPU), which runs them first come, first served, so each await of every test waits behind the
   whole suite's CPU-bound work. On two loaded CPUs that held one-line unit tests past a minute and the live servers'
   answers past their clients' timeouts. Four tests per CPU keep the pool's queue short and the CPUs busy while the
   live tests wait on sockets and child processes. Set before main, unless the variable is already set (then it
   wins); Swift Testing reads it when the run starts. */
__attribute__((constructor)) static void limit_test_parallelism(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char width[32];
    snprintf(width, sizeof width, "%ld", 4 * (cpus > 0 ? cpus : 1));
    setenv(WIDTH_VARIABLE, width, 0);
}

int unicache_test_parallelism_width(void) {
    const char *width = getenv(WIDTH_VARIABLE);
    return width ? atoi(width) : 0;
}

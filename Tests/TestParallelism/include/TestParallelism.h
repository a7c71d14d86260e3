#ifndef UNICACHE_TEST_PARALLELISM_H
#define UNICACHE_TEST_PARALLELISM_H

/* How many tests Swift Testing runs at once in this process: SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH, as
   given, or four per CPU, set before main (see TestParallelism.c). */
int unicache_test_parallelism_width(void);

#endif

// glibc's malloc tuning (mallopt, malloc_trim, mallinfo2), which Swift's Glibc module does not import.
#include <malloc.h>

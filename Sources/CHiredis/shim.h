// hiredis 0.14 as Debian ships it (libhiredis-dev, /usr/include/hiredis).
#include <hiredis/hiredis.h>

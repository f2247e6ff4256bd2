/* errors.c - the message of a failure, which every other kernel file reports with;
 * it calls nothing of the kernel, so that the files above it call in one direction. */
#include "springsim.h"

#include <stdarg.h>
#include <stdio.h>

ss_status ss_fail(ss_system *sys, ss_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(sys->error, sizeof sys->error, fmt, args);
    va_end(args);
    return status;
}

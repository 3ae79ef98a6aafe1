/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h — the one printf-style log call of the libraries: they never print
 * (docs/STYLE.md), they format a line and hand it to the sink the program
 * gave them (podkerneld writes "podkerneld: LINE" to stderr).
 */
#ifndef PODKERNEL_KERNEL_LIB_LOG_H
#define PODKERNEL_KERNEL_LIB_LOG_H

#include <limits.h>

/* A program's sink for one log line (without a newline) at a verbosity level. */
typedef void pk_log_fn(void *arg, int level, const char *msg);

/* No verbosity limit: every line goes to the sink, which filters. */
#define PK_LOG_ALL INT_MAX

/*
 * Format a line (at most 1023 bytes, longer is cut) and give it to fn(arg,
 * level, line) when fn is set and level is at most verbosity; nothing is
 * formatted otherwise.
 */
void pk_logf(pk_log_fn *fn, void *arg, int verbosity, int level, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif

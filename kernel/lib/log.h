/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h — the one printf-style log call of the libraries: they never print
 * (docs/STYLE.md), they format a line and hand it to the sink the program
 * gave them.  The programs write each line with pk_log_format_line(): an RFC
 * 3339 timestamp, a level and the message, as text or as one JSON object.
 *
 * A message may end in key=value fields ("request verb=get code=200"): text
 * keeps them as written, JSON makes each a member.  Values with a space, a
 * quote or a backslash are written quoted (pk_log_quote()).
 */
#ifndef PODKERNEL_KERNEL_LIB_LOG_H
#define PODKERNEL_KERNEL_LIB_LOG_H

#include <limits.h>
#include <stddef.h>
#include <time.h>

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

enum pk_log_format { PK_LOG_TEXT, PK_LOG_JSON };

/* "text" or "json"; -EINVAL otherwise. */
int pk_log_format_parse(const char *name, enum pk_log_format *ret);

/* The level's name: 0 "error", 1 and 2 "info", 3 and more "debug". */
const char *pk_log_level_name(int level);

/*
 * One line for PROG's log, newline included, into out (at most outlen bytes,
 * NUL-terminated; a longer line is cut, still a whole line and, for JSON,
 * still valid JSON):
 *   text: 2026-12-07T02:42:46.123Z info podkerneld: MSG
 *   json:
 * {"ts":"2026-12-07T02:42:46.123Z","level":"info","logger":"podkerneld","msg":"request","verb":"get"}
 * The trailing key=value fields of MSG become members in JSON.  Returns the
 * length written.
 */
size_t pk_log_format_line(enum pk_log_format fmt, const char *prog, int level,
			  const struct timespec *when, const char *msg, char *out, size_t outlen);

/* WHEN as RFC 3339 UTC with milliseconds ("2026-12-07T02:42:46.123Z"); 25 bytes suffice. */
void pk_log_timestamp(const struct timespec *when, char *out, size_t outlen);

/* VALUE as a field value: as is, or "quoted" with \" and \\ when it must be. */
const char *pk_log_quote(const char *value, char *buf, size_t buflen);

/*
 * Words a user understands for a negative errno in an object's message or a
 * log line about one ("not found" for -ENOENT, not "No such file or
 * directory"); strerror() text for the rest.
 */
const char *pk_errno_text(int err);

#endif

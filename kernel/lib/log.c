/* SPDX-License-Identifier: Apache-2.0 */
/* log.c — a library's log line, formatted for its program's sink. */
#include <stdarg.h>
#include <stdio.h>

#include "kernel/lib/log.h"

void pk_logf(pk_log_fn *fn, void *arg, int verbosity, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!fn || level > verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(arg, level, msg);
}

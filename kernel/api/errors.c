/* SPDX-License-Identifier: Apache-2.0 */
/*
 * errors.c — growable lists of user-facing error messages.
 *
 * Decoders and validators append one formatted line per problem
 * ("spec.x: Invalid value: ...") and let the caller decide where the lines go.
 * Allocation failure while adding a message is not reported: the message is
 * dropped, but a placeholder keeps the count honest so that "no errors" is
 * never claimed falsely.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"

static char oom_msg[] = "out of memory while reporting an error";

static void errors_push(struct pk_errors *errs, char *msg)
{
	if (errs->n == errs->cap) {
		size_t cap = errs->cap ? errs->cap * 2 : 8;
		char **m = realloc(errs->msg, cap * sizeof(*m));

		if (!m) {
			if (msg != oom_msg)
				free(msg);
			return;
		}
		errs->msg = m;
		errs->cap = cap;
	}
	errs->msg[errs->n++] = msg;
}

void pk_errors_add(struct pk_errors *errs, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int r;

	if (!errs)
		return;
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	errors_push(errs, r < 0 ? oom_msg : msg);
}

void pk_errors_clear(struct pk_errors *errs)
{
	if (!errs)
		return;
	for (size_t i = 0; i < errs->n; i++)
		if (errs->msg[i] != oom_msg)
			free(errs->msg[i]);
	free(errs->msg);
	errs->msg = NULL;
	errs->n = errs->cap = 0;
}

void pk_errors_print(const struct pk_errors *errs, FILE *f, const char *prefix)
{
	if (!errs || !f)
		return;
	for (size_t i = 0; i < errs->n; i++) {
		if (prefix && *prefix)
			fprintf(f, "%s: %s\n", prefix, errs->msg[i]);
		else
			fprintf(f, "%s\n", errs->msg[i]);
	}
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_log.c — libFuzzer target for the log line (kernel/lib/log.c): any
 * bytes as a message, with its trailing key=value fields, into a line of
 * any room from 128 bytes up.  A line is always one whole line (one
 * newline, at its end, within the room); a JSON line always parses as an
 * object with ts, level, logger and msg strings.  Crashes, sanitizer
 * reports and broken invariants (an abort) are findings.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/log.h"

static void check_line(const char *line, size_t len, size_t room)
{
	if (len >= room || strlen(line) != len || len == 0 || line[len - 1] != '\n' ||
	    memchr(line, '\n', len - 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct timespec when = {.tv_sec = 1796611283, .tv_nsec = 123456789};
	size_t room = 128 + (size ? data[0] * 16u : 0);
	char *msg = malloc(size + 1), *out = malloc(room);
	const char *keys[] = {"ts", "level", "logger", "msg"};

	if (!msg || !out)
		abort();
	memcpy(msg, data, size);
	msg[size] = '\0';
	size_t len =
	    pk_log_format_line(PK_LOG_TEXT, "fuzz", size ? data[0] % 4 : 1, &when, msg, out, room);
	check_line(out, len, room);
	len = pk_log_format_line(PK_LOG_JSON, "fuzz", size ? data[size - 1] % 4 : 1, &when, msg,
				 out, room);
	check_line(out, len, room);
	json_t *o = json_loads(out, 0, NULL);
	if (!json_is_object(o))
		abort();
	for (size_t i = 0; i < 4; i++)
		if (!json_is_string(json_object_get(o, keys[i])))
			abort();
	json_decref(o);
	char q[64];
	const char *v = pk_log_quote(msg, q, sizeof(q));
	if (!v || strlen(v) >= (v == q ? sizeof(q) : size + 1))
		abort();
	free(msg);
	free(out);
	return 0;
}

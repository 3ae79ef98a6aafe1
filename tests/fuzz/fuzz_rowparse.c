/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_rowparse.c — libFuzzer target for the store's row parser
 * (kernel/store/rowparse.c): any bytes as a stored body.  pk_row_parse()
 * must answer exactly what json_loadb(body, len, 0, NULL) answers: both
 * refuse, or both give trees whose compact dumps, members in their order,
 * are the same bytes.  Crashes, leaks, sanitizer reports and a difference
 * (an abort) are findings.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store-internal.h"

static char *dump(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *got = pk_row_parse((const char *)data, size);
	json_t *want = json_loadb((const char *)data, size, 0, NULL);

	if (!got != !want)
		abort();
	if (got) {
		char *a = dump(got), *b = dump(want);

		if (!a || !b || strcmp(a, b) != 0)
			abort();
		free(a);
		free(b);
	}
	json_decref(got);
	json_decref(want);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * patch_fuzz.h — what the patch engines' libFuzzer targets share
 * (fuzz_patch_json.c, fuzz_patch_merge.c, fuzz_patch_strategic.c): the input
 * is a target object and a patch separated by a NUL byte (without one, the
 * whole input patches a fixed Pod).  The patch is applied by one engine of
 * kernel/store/patch.c.  The target must come back unchanged; a refused
 * patch must say why and return nothing; an applied one must not be larger
 * than the engines' bound lets it grow.  Crashes, leaks, sanitizer reports
 * and broken invariants (an abort) are findings.
 */
#ifndef PODKERNEL_TESTS_FUZZ_PATCH_FUZZ_H
#define PODKERNEL_TESTS_FUZZ_PATCH_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store.h"

static const char fuzz_pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":"
    "\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"ports\":[{"
    "\"containerPort\":80}]},{\"name\":\"d\",\"image\":\"j\"}],\"tolerations\":[{\"key\":"
    "\"k\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";

static int fuzz_patch(const uint8_t *data, size_t size, enum pk_patch_type type)
{
	const uint8_t *nul = memchr(data, 0, size);
	json_t *target = nul ? json_loadb((const char *)data, (size_t)(nul - data), 0, NULL)
			     : json_loads(fuzz_pod, 0, NULL);
	const char *ptext = nul ? (const char *)nul + 1 : (const char *)data;
	size_t plen = nul ? size - (size_t)(nul - data) - 1 : size;
	json_t *patch = json_loadb(ptext, plen, 0, NULL);
	json_t *before = target ? json_deep_copy(target) : NULL;
	json_t *out = NULL;
	char err[512] = "";

	if (target && patch) {
		int r = pk_patch_apply(target, type, patch, &out, err, sizeof(err));

		if (!json_equal(target, before))
			abort(); /* the target is the caller's */
		if (r < 0 && (out || !*err))
			abort();
		if (r == 0 && !out)
			abort();
		if (r == 0) {
			char *text = json_dumps(out, JSON_COMPACT);

			/* the engines stop at PK_STORE_OBJECT_MAX, escapes not counted
			 * (at most six bytes for one) */
			if (!text || strlen(text) > 6 * (size_t)PK_STORE_OBJECT_MAX)
				abort();
			free(text);
		}
	}
	json_decref(out);
	json_decref(before);
	json_decref(patch);
	json_decref(target);
	return 0;
}

#endif

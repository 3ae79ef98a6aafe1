/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_jsonpath.c — libFuzzer target for podctl's JSONPath templates
 * (`-o jsonpath=`, `-o custom-columns=`): the input's first line is the
 * template, the rest a JSON document (a fixed pod list when it is not JSON).
 * A rejected template must come with a message and no parse result; an
 * accepted one is printed and its values found, both of which must succeed
 * or fail with a message.  Crashes, leaks, sanitizer reports and broken
 * invariants (an abort) are findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podctl/podctl-internal.h"

static const char fixed[] =
    "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"1\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"n\":2}]}},"
    "{\"metadata\":{\"name\":\"b\"},\"status\":{\"phase\":\"Pending\",\"n\":1.5,\"ok\":true}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t tlen = nl ? (size_t)(nl - (const char *)data) : size;
	char *tmpl = strndup((const char *)data, tlen), err[512] = "";
	json_t *doc = nl ? json_loadb(nl + 1, size - tlen - 1, JSON_DECODE_ANY, NULL) : NULL;
	struct podctl_jsonpath *jp;

	if (!tmpl)
		return 0;
	if (!doc)
		doc = json_loads(fixed, 0, NULL);
	jp = podctl_jsonpath_parse(tmpl, err, sizeof(err));
	if (!jp) {
		if (!err[0])
			abort();
	} else {
		FILE *f = fopen("/dev/null", "w");
		json_t *vals;

		err[0] = '\0';
		if (podctl_jsonpath_print(jp, doc, f, err, sizeof(err)) < 0 && !err[0])
			abort();
		fclose(f);
		err[0] = '\0';
		vals = podctl_jsonpath_find(jp, doc, err, sizeof(err));
		if (!vals && !err[0])
			abort();
		free(podctl_column_text(vals));
		json_decref(vals);
		podctl_jsonpath_free(jp);
	}
	free(podctl_relaxed_path(tmpl));
	json_decref(doc);
	free(tmpl);
	return 0;
}

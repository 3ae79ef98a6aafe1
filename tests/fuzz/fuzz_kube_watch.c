/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_kube_watch.c — libFuzzer target for what attach mode's client
 * decodes from a cluster (kernel/kube/informer.c): every line of the input
 * as a watch event, and the whole input as a list page.  A decoded event
 * must carry what the informer relies on (an object with a name and a
 * resourceVersion, a bookmark's resourceVersion, an error's Status); a
 * decoded list must be an array of named objects.  Crashes, leaks, sanitizer
 * reports and broken invariants (an abort) are findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kube/kube.h"

static void one_line(const char *p, size_t n)
{
	struct kube_watch_event ev;
	int r = kube_watch_decode(p, n, &ev);

	if (r < 0) {
		if (ev.line || ev.type != KUBE_WATCH_BLANK)
			abort();
		return;
	}
	switch (ev.type) {
	case KUBE_WATCH_BLANK:
		if (ev.line)
			abort();
		break;
	case KUBE_WATCH_ERROR:
		if (!json_is_object(ev.object))
			abort();
		break;
	case KUBE_WATCH_BOOKMARK:
		if (!ev.rv)
			abort();
		break;
	default:
		if (!ev.rv || !json_is_object(ev.object) ||
		    !json_string_value(
			json_object_get(json_object_get(ev.object, "metadata"), "name")))
			abort();
		break;
	}
	kube_watch_event_clear(&ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	json_t *ans = json_loadb(p, size, 0, NULL);
	const json_t *items = NULL, *it;
	const char *rv = NULL, *cont = NULL;
	size_t i;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		one_line(p, n);
		p += n + 1;
	}
	if (kube_list_decode(ans, &items, &rv, &cont) == 0) {
		if (!rv || (items && !json_is_array(items)) || (cont && !*cont))
			abort();
		json_array_foreach(items, i, it)
		{
			if (!json_string_value(
				json_object_get(json_object_get(it, "metadata"), "name")))
				abort();
		}
	}
	json_decref(ans);
	return 0;
}

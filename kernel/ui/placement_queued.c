/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement_queued.c — the placement map's queued workloads: each Job or
 * JobSet queued in a LocalQueue (label kueue.x-k8s.io/queue-name) and not
 * admitted yet, with its position in its ClusterQueue (ranked at each
 * render from the queue-order annotations of the queued Jobs, JobSets and
 * pods, wb_queue_positions_of), the pending reason the queue controller
 * wrote on it and what it waits for, read from that reason: quota (the resource, flavor,
 * ClusterQueue and how much more), placement (the scheduling core's explanation), its turn
 * (StrictFIFO), or something else that keeps it out (a queue that does
 * not exist, a namespace not selected).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/ui/ui-internal.h"

#define LABEL_QUEUE "kueue.x-k8s.io/queue-name"
#define ANN_ADMISSION "queue.podkernel.dev/admission"
#define ANN_PENDING "queue.podkernel.dev/pending-reason"

static bool finished(const json_t *obj)
{
	size_t i;
	json_t *c;

	json_array_foreach(pk_get(obj, "status.conditions"), i, c)
	{
		const char *t = pk_get_string(c, "type"), *s = pk_get_string(c, "status");

		if (t && s && strcmp(s, "True") == 0 &&
		    (strcmp(t, "Complete") == 0 || strcmp(t, "Completed") == 0 ||
		     strcmp(t, "Failed") == 0))
			return true;
	}
	return false;
}

/* The quota reason's parts into e: "insufficient unused quota for R in flavor F of ClusterQueue CQ,
 * N more needed". */
static void quota_parts(json_t *e, const char *reason)
{
	char res[256], flavor[256], cq[256], more[64];

	if (sscanf(reason,
		   "insufficient unused quota for %255s in flavor %255s of ClusterQueue %255[^,], "
		   "%63s more needed",
		   res, flavor, cq, more) != 4)
		return;
	json_object_set_new(e, "resource", json_string(res));
	json_object_set_new(e, "flavor", json_string(flavor));
	json_object_set_new(e, "clusterQueue", json_string(cq));
	json_object_set_new(e, "more", json_string(more));
}

static const char *wait_of(const char *reason)
{
	if (!reason)
		return "queue";
	if (strncmp(reason, "insufficient unused quota", 25) == 0)
		return "quota";
	if (strncmp(reason, "pod ", 4) == 0 || strncmp(reason, "cannot be placed", 16) == 0 ||
	    strncmp(reason, "placement", 9) == 0 || strncmp(reason, "Topology ", 9) == 0)
		return "placement";
	if (strncmp(reason, "StrictFIFO", 10) == 0)
		return "order";
	return "inadmissible";
}

json_t *ui_queued_entry(enum pk_kind kind, const json_t *obj)
{
	const char *queue =
	    json_string_value(json_object_get(pk_get(obj, "metadata.labels"), LABEL_QUEUE));
	const json_t *ann = pk_get(obj, "metadata.annotations");
	const char *reason = json_string_value(json_object_get(ann, ANN_PENDING));
	json_t *e;

	if ((kind != PK_KIND_JOB && kind != PK_KIND_JOBSET) || !queue ||
	    json_object_get(ann, ANN_ADMISSION) || finished(obj))
		return NULL;
	e = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:s}", "kind", pk_kind_to_string(kind), "namespace",
		      pk_namespace(obj), "name", pk_name(obj), "localQueue", queue, "position",
		      json_null(), "reason", ui_str_or_null(reason), "wait", wait_of(reason));
	if (e && reason)
		quota_parts(e, reason);
	return e;
}

static int cmp_queued(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *fields[] = {"namespace", "localQueue"};
	json_int_t px, py;
	int c;

	for (size_t i = 0; i < 2; i++)
		if ((c = strcmp(pk_get_string(x, fields[i]) ?: "",
				pk_get_string(y, fields[i]) ?: "")))
			return c;
	px = json_is_integer(json_object_get(x, "position"))
		 ? json_integer_value(json_object_get(x, "position"))
		 : INT64_MAX;
	py = json_is_integer(json_object_get(y, "position"))
		 ? json_integer_value(json_object_get(y, "position"))
		 : INT64_MAX;
	if (px != py)
		return px < py ? -1 : 1;
	return strcmp(pk_get_string(x, "name") ?: "", pk_get_string(y, "name") ?: "");
}

json_t *ui_queued_json(const json_t *queued, const json_t *orders)
{
	size_t n = json_object_size(queued), k = 0;
	json_t **v = calloc(n + 1, sizeof(*v)), *out = json_array(), *e;
	json_t *positions = wb_queue_positions_of(orders);
	const char *key;

	if (!v || !out || !positions) {
		free(v);
		json_decref(out);
		json_decref(positions);
		return NULL;
	}
	json_object_foreach((json_t *)queued, key, e)
	{
		json_t *pos = json_object_get(positions, key), *c = json_copy(e);

		if (c && pos)
			json_object_set(c, "position", pos);
		if (c)
			v[k++] = c;
	}
	qsort(v, k, sizeof(*v), cmp_queued);
	for (size_t i = 0; i < k; i++)
		json_array_append_new(out, v[i]);
	free(v);
	json_decref(positions);
	return out;
}

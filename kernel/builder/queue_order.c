/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue_order.c — a pending workload's position in its ClusterQueue,
 * computed where it is read.
 *
 * The queue controller writes on each pending Job, JobSet or queued pod the
 * annotation queue.podkernel.dev/queue-order: "CQ PRIORITY CREATED
 * KIND/NAMESPACE/NAME", its ClusterQueue and the keys Kueue orders a queue
 * by (the workload's priority, higher first; its creationTimestamp, "-"
 * when it has none; then namespace and name; KIND/NAME is the workload's:
 * a pod of a pod group names its root group).  The value changes only when
 * the workload itself or its queue does, so nothing is written on the
 * workloads behind one that is admitted.  A reader that has the pending
 * objects of a ClusterQueue ranks them: a workload's position is one more
 * than the number of distinct workloads of its ClusterQueue before it (the
 * pods of one root group share a value, and a position), as Kueue's
 * visibility API serves positions from its queues rather than from the
 * objects.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"

/* s after buf's len characters, within n (a NUL after them); the length it would have. */
static size_t put(char *buf, size_t n, size_t len, const char *s)
{
	size_t k = s ? strlen(s) : 0;

	if (len < n)
		memcpy(buf + len, s ? s : "", k < n - len ? k : n - len);
	return len + k;
}

/*
 * Joined piece by piece: it is written for every pending workload a pass
 * visits, and a format is most of what it costs (the same text as
 * "%s %" PRId64 " %s %s/%s/%s").
 */
int wb_queue_order_format(char *buf, size_t n, const char *cq, int64_t priority,
			  const char *created, const char *kind, const char *ns, const char *name)
{
	char prio[24], *p = prio + sizeof(prio);
	uint64_t v = priority < 0 ? -(uint64_t)priority : (uint64_t)priority;
	size_t len;

	if (n == 0)
		return -ENAMETOOLONG;
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	if (priority < 0)
		*--p = '-';
	len = put(buf, n, 0, cq);
	len = put(buf, n, len, " ");
	len = put(buf, n, len, p);
	len = put(buf, n, len, " ");
	len = put(buf, n, len, created && *created ? created : "-");
	len = put(buf, n, len, " ");
	len = put(buf, n, len, kind);
	len = put(buf, n, len, "/");
	len = put(buf, n, len, ns ? ns : "");
	len = put(buf, n, len, "/");
	len = put(buf, n, len, name);
	buf[len < n ? len : n - 1] = '\0';
	return len >= n ? -ENAMETOOLONG : 0;
}

/* One queue-order value, parsed: pointers into a copy (text). */
struct order {
	char *text, *cq, *created, *workload;
	int64_t priority;
	const char *key; /* the object's "Kind/ns/name" */
};

static bool parse(const char *value, struct order *o)
{
	char *save = NULL, *prio, *end;

	o->text = strdup(value);
	if (!o->text)
		return false;
	o->cq = strtok_r(o->text, " ", &save);
	prio = strtok_r(NULL, " ", &save);
	o->created = strtok_r(NULL, " ", &save);
	o->workload = strtok_r(NULL, " ", &save);
	if (!o->cq || !prio || !o->created || !o->workload || strtok_r(NULL, " ", &save))
		return false;
	o->priority = strtoll(prio, &end, 10);
	if (*end)
		return false;
	if (strcmp(o->created, "-") == 0)
		o->created = "";
	return true;
}

/* "Kind/ns/name": namespace, then name, then kind, as the queue orders ties. */
static int cmp_workload(const char *a, const char *b)
{
	const char *sa = strchr(a, '/'), *sb = strchr(b, '/');
	int c;

	if (!sa || !sb)
		return strcmp(a, b);
	c = strcmp(sa + 1, sb + 1);
	return c ? c : strcmp(a, b);
}

/* Kueue's queue order: ClusterQueue, higher priority, older, then namespace and name. */
static int cmp_order(const void *x, const void *y)
{
	const struct order *a = x, *b = y;
	int c = strcmp(a->cq, b->cq);

	if (c == 0)
		c = (a->priority < b->priority) - (a->priority > b->priority);
	if (c == 0)
		c = strcmp(a->created, b->created);
	return c ? c : cmp_workload(a->workload, b->workload);
}

json_t *wb_queue_positions_of(const json_t *orders)
{
	size_t n = json_object_size(orders), k = 0;
	struct order *v = calloc(n ? n : 1, sizeof(*v));
	json_t *out = json_object(), *val;
	const char *key;
	int64_t pos = 0;

	if (!v || !out)
		goto fail;
	json_object_foreach((json_t *)orders, key, val)
	{
		if (!json_is_string(val))
			continue;
		v[k].key = key;
		if (parse(json_string_value(val), &v[k]))
			k++;
		else
			free(v[k].text);
	}
	qsort(v, k, sizeof(*v), cmp_order);
	for (size_t i = 0; i < k; i++) {
		if (i == 0 || strcmp(v[i].cq, v[i - 1].cq) != 0)
			pos = 0;
		if (i == 0 || cmp_order(&v[i], &v[i - 1]) != 0)
			pos++; /* a new workload (the pods of one share a value) */
		if (json_object_set_new(out, v[i].key, json_integer(pos)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < k; i++)
		free(v[i].text);
	free(v);
	return out;
fail:
	for (size_t i = 0; v && i < k; i++)
		free(v[i].text);
	free(v);
	json_decref(out);
	return NULL;
}

const char *wb_queue_order(const json_t *obj)
{
	return json_string_value(
	    json_object_get(pk_get(obj, "metadata.annotations"), WB_ANNOTATION_QUEUE_ORDER));
}

json_t *wb_queue_positions(const json_t *objects)
{
	json_t *orders = json_object(), *o, *out;
	size_t i;

	if (!orders)
		return NULL;
	json_array_foreach((json_t *)objects, i, o)
	{
		const char *v = wb_queue_order(o);
		char key[800];

		if (!v)
			continue;
		pk_obj_key(key, sizeof(key),
			   pk_type_by_kind(json_string_value(json_object_get(o, "kind"))),
			   pk_namespace(o), pk_name(o));
		if (json_object_set_new(orders, key, json_string(v)) < 0) {
			json_decref(orders);
			return NULL;
		}
	}
	out = wb_queue_positions_of(orders);
	json_decref(orders);
	return out;
}

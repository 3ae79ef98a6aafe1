/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement_entries.c — what the placement map keeps of a Node and a Pod,
 * as C structs drawn once from the object when it changes.
 *
 * An entry is one allocation (the struct and its arrays; a pod's name is
 * kept in it too), and every other string in it is interned in the map's pool: a node's name is
 * shared by the node and every pod on it, a namespace, a label key, a
 * resource name or a topology level's value by all who carry them.  Two
 * entries of the same content therefore hold the same pointers, and
 * telling whether an update changed anything compares pointers.  Entries
 * are immutable once built (an update builds a new one); the map counts
 * their users under its lock, so a render holds the entries it lays out
 * without the lock and the loop thread never waits for a layout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance.h"
#include "kernel/ui/ui-internal.h"
#include "topology/topology.h"

/* Label key prefixes shown with a host. */
static const char *const shown_labels[] = {
    TOPO_LABEL_LEVEL_PREFIX, "accelerator.podkernel.dev/",	 "numa.podkernel.dev/",
    TOPO_LABEL_HOSTNAME,     "node.kubernetes.io/instance-type",
};

#define ENTRY_ARRAY_MAX 256 /* labels, resources or taints kept per entry */

static bool label_shown(const char *key)
{
	for (size_t i = 0; i < sizeof(shown_labels) / sizeof(shown_labels[0]); i++)
		if (strncmp(key, shown_labels[i], strlen(shown_labels[i])) == 0)
			return true;
	return false;
}

/* A quantity (string or number) in milli-units; -1 when unreadable. */
static int64_t milli_of(const json_t *v)
{
	int64_t m;

	if (json_is_integer(v))
		return json_integer_value(v) * 1000;
	if (json_is_real(v))
		return (int64_t)(json_real_value(v) * 1000);
	return json_is_string(v) && topo_quantity_parse(json_string_value(v), &m) == 0 ? m : -1;
}

/* ---- building --------------------------------------------------------------------------- */

/* Resources gathered while building an entry (then copied into it, in name order). */
struct res_acc {
	struct ui_res r[ENTRY_ARRAY_MAX];
	size_t n;
};

static void res_add(struct res_acc *a, const char *name, int64_t milli)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->r[i].name, name) == 0) {
			a->r[i].milli += milli;
			return;
		}
	if (a->n < ENTRY_ARRAY_MAX)
		a->r[a->n++] = (struct ui_res){.name = name, .milli = milli};
}

static void res_add_quantities(struct res_acc *a, const json_t *q)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)q, k, v)
	{
		int64_t m = milli_of(v);

		if (m >= 0)
			res_add(a, k, m);
	}
}

static int res_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ui_res *)a)->name, ((const struct ui_res *)b)->name);
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ui_label *)a)->key, ((const struct ui_label *)b)->key);
}

/* Intern every string of the resources (names borrowed from the object until now). */
static bool res_intern(struct pk_map *pool, struct ui_res *r, size_t n)
{
	bool ok = true;

	qsort(r, n, sizeof(*r), res_cmp);
	for (size_t i = 0; i < n; i++)
		ok &= (r[i].name = pk_intern(pool, r[i].name)) != NULL;
	return ok;
}

static bool node_unreachable(const json_t *node)
{
	json_t *taints = pk_get(node, "spec.taints"), *t, *ready;
	size_t i;

	json_array_foreach(taints, i, t)
	{
		const char *key = json_string_value(json_object_get(t, "key"));

		if (key && strcmp(key, PK_TAINT_UNREACHABLE) == 0)
			return true;
	}
	ready = pk_condition_get(node, "Ready");
	return ready && json_string_value(json_object_get(ready, "status")) &&
	       strcmp(json_string_value(json_object_get(ready, "status")), "Unknown") == 0;
}

/* The taints a person should see: all but the cordon's and the unreachable one
 * (drawn as their own states), as "key=value:Effect"; interned. */
static size_t node_taints(struct pk_map *pool, const json_t *node, const char **out, bool *ok)
{
	json_t *t;
	size_t i, n = 0;

	json_array_foreach(pk_get(node, "spec.taints"), i, t)
	{
		const char *key = json_string_value(json_object_get(t, "key"));
		const char *val = json_string_value(json_object_get(t, "value"));
		const char *eff = json_string_value(json_object_get(t, "effect"));
		char text[512];

		if (!key || strcmp(key, PK_TAINT_UNREACHABLE) == 0 ||
		    strcmp(key, "node.kubernetes.io/unschedulable") == 0 || n == ENTRY_ARRAY_MAX)
			continue;
		snprintf(text, sizeof(text), "%s%s%s:%s", key, val && *val ? "=" : "",
			 val ? val : "", eff ? eff : "");
		*ok &= (out[n++] = pk_intern(pool, text)) != NULL;
	}
	return n;
}

struct ui_node *ui_node_new(struct pk_map *pool, const json_t *node)
{
	struct ui_label labels[ENTRY_ARRAY_MAX];
	const char *taints[ENTRY_ARRAY_MAX];
	struct res_acc alloc = {.n = 0};
	size_t nl = 0, nt;
	const char *k;
	json_t *v;
	bool ok = true;

	json_object_foreach(pk_get(node, "metadata.labels"), k, v)
	{
		if (json_is_string(v) && label_shown(k) && nl < ENTRY_ARRAY_MAX)
			labels[nl++] = (struct ui_label){pk_intern(pool, k),
							 pk_intern(pool, json_string_value(v))};
		ok &= nl == 0 || (labels[nl - 1].key && labels[nl - 1].value);
	}
	if (ok)
		qsort(labels, nl, sizeof(*labels), label_cmp);
	res_add_quantities(&alloc, pk_get(node, "status.allocatable"));
	ok &= res_intern(pool, alloc.r, alloc.n);
	nt = node_taints(pool, node, taints, &ok);

	struct ui_node *e = calloc(1, sizeof(*e) + nl * sizeof(*labels) +
					  alloc.n * sizeof(*alloc.r) + nt * sizeof(*taints));
	const char *name = pk_intern(pool, pk_name(node));
	if (e) {
		e->labels = (struct ui_label *)(e + 1);
		e->alloc = (struct ui_res *)(e->labels + nl);
		e->taints = (const char **)(e->alloc + alloc.n);
		memcpy(e->labels, labels, nl * sizeof(*labels));
		memcpy(e->alloc, alloc.r, alloc.n * sizeof(*alloc.r));
		memcpy(e->taints, taints, nt * sizeof(*taints));
		e->nlabels = nl, e->nalloc = alloc.n, e->ntaints = nt;
		e->name = name;
		e->cordoned = json_is_true(pk_get(node, "spec.unschedulable"));
		e->unreachable = node_unreachable(node);
		e->refs = 1;
	}
	if (!e || !ok || !name) {
		/* what was interned goes with the entry (a partial one is never kept) */
		struct ui_node tmp = {.labels = labels,
				      .nlabels = nl,
				      .alloc = alloc.r,
				      .nalloc = alloc.n,
				      .taints = taints,
				      .ntaints = nt,
				      .name = name};
		ui_node_strings_drop(pool, &tmp);
		free(e);
		return NULL;
	}
	return e;
}

struct ui_pod *ui_pod_new(struct pk_map *pool, const json_t *pod)
{
	const char *node = pk_get_string(pod, "spec.nodeName");
	const char *phase = pk_get_string(pod, "status.phase");
	json_t *ann = pk_get(pod, "metadata.annotations"), *c;
	const char *group = pk_pod_group_name(pod);
	const char *coords = json_string_value(json_object_get(ann, TOPO_ANN_SLICE_COORDS));
	const char *worker = json_string_value(json_object_get(ann, TOPO_ANN_WORKER_ID));
	struct res_acc req = {.n = 0};
	bool done = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
	bool ok = true;
	size_t i;

	if (node && (!*node || done))
		node = NULL;
	json_array_foreach(pk_get(pod, "spec.containers"), i, c)
	    res_add_quantities(&req, pk_get(c, "resources.requests"));

	/* never NULL for a pod: a tree whose kind says otherwise is taken as one in "default" */
	const char *name = pk_name(pod), *ns = pk_namespace(pod) ? pk_namespace(pod) : "default";
	size_t klen = strlen(ns) + strlen(name) + 2;
	/* "ns/name" is the pod's own (kept inline, the map's key): sharing it would save nothing */
	struct ui_pod *e = calloc(1, sizeof(*e) + req.n * sizeof(*req.r) + klen);
	if (!e)
		return NULL;
	memcpy(ui_pod_req(e), req.r, req.n * sizeof(*req.r));
	e->nreq = req.n;
	snprintf((char *)ui_pod_key(e), klen, "%s/%s", ns, name);
	ok &= res_intern(pool, ui_pod_req(e), e->nreq);
	ok &= (e->ns = pk_intern(pool, ns)) != NULL;
	ok &= !node || (e->node = pk_intern(pool, node)) != NULL;
	ok &= !group || (e->group = pk_intern(pool, group)) != NULL;
	ok &= !coords || (e->coords = pk_intern(pool, coords)) != NULL;
	ok &= !worker || (e->worker = pk_intern(pool, worker)) != NULL;
	e->done = done;
	e->refs = 1;
	if (!ok) {
		ui_pod_put(pool, e);
		return NULL;
	}
	return e;
}

/* The strings of a group but its key, interned (NULL stays NULL); false on ENOMEM. */
static bool group_intern(struct pk_map *pool, const char **s)
{
	return !*s || (*s = pk_intern(pool, *s)) != NULL;
}

struct ui_group *ui_group_new(struct pk_map *pool, enum pk_kind kind, const json_t *g)
{
	bool composite = kind == PK_KIND_COMPOSITE_POD_GROUP;
	json_t *cond = pk_condition_get(g, composite ? "CompositePodGroupInitiallyScheduled"
						     : "PodGroupInitiallyScheduled");
	json_t *ann = pk_get(g, "metadata.annotations");
	const char *parent = pk_get_string(g, "spec.parentCompositePodGroupName");
	const char *ns = pk_namespace(g), *name = pk_name(g);
	size_t nslen = strlen(ns);
	struct ui_group *e = calloc(1, sizeof(*e) + nslen + strlen(name) + 2);
	bool ok = true;

	if (!e)
		return NULL;
	sprintf(e->key, "%s/%s", ns, name);
	e->name = e->key + nslen + 1;
	e->kind = pk_kind_to_string(kind);
	e->ns = ns;
	e->parent = parent && *parent ? parent : NULL;
	e->slice_shape = json_string_value(json_object_get(ann, TOPO_ANN_SLICE_SHAPE));
	e->status = json_string_value(json_object_get(cond, "status"));
	e->reason = json_string_value(json_object_get(cond, "reason"));
	e->message = json_string_value(json_object_get(cond, "message"));
	e->refs = 1;
	/* interned one by one: a failure leaves the rest NULL for the put */
	const char **strs[] = {&e->ns,	   &e->parent, &e->slice_shape,
			       &e->status, &e->reason, &e->message};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		if (!ok)
			*strs[i] = NULL;
		else
			ok = group_intern(pool, strs[i]);
	}
	if (!ok) {
		ui_group_put(pool, e);
		return NULL;
	}
	return e;
}

/* ---- comparing and freeing ----------------------------------------------------------------- */

bool ui_node_equal(const struct ui_node *a, const struct ui_node *b)
{
	return a->name == b->name && a->cordoned == b->cordoned &&
	       a->unreachable == b->unreachable && a->nlabels == b->nlabels &&
	       a->nalloc == b->nalloc && a->ntaints == b->ntaints &&
	       memcmp(a->labels, b->labels, a->nlabels * sizeof(*a->labels)) == 0 &&
	       memcmp(a->alloc, b->alloc, a->nalloc * sizeof(*a->alloc)) == 0 &&
	       memcmp(a->taints, b->taints, a->ntaints * sizeof(*a->taints)) == 0;
}

bool ui_pod_equal(const struct ui_pod *a, const struct ui_pod *b)
{
	return strcmp(ui_pod_key(a), ui_pod_key(b)) == 0 && a->ns == b->ns && a->node == b->node &&
	       a->group == b->group && a->coords == b->coords && a->worker == b->worker &&
	       a->done == b->done && a->nreq == b->nreq &&
	       memcmp(ui_pod_req(a), ui_pod_req(b), a->nreq * sizeof(struct ui_res)) == 0;
}

bool ui_group_equal(const struct ui_group *a, const struct ui_group *b)
{
	return a->kind == b->kind && strcmp(a->key, b->key) == 0 && a->ns == b->ns &&
	       a->parent == b->parent && a->slice_shape == b->slice_shape &&
	       a->status == b->status && a->reason == b->reason && a->message == b->message;
}

void ui_group_put(struct pk_map *pool, struct ui_group *e)
{
	if (!e || --e->refs > 0)
		return;
	pk_unintern(pool, e->ns);
	pk_unintern(pool, e->parent);
	pk_unintern(pool, e->slice_shape);
	pk_unintern(pool, e->status);
	pk_unintern(pool, e->reason);
	pk_unintern(pool, e->message);
	free(e);
}

void ui_node_strings_drop(struct pk_map *pool, const struct ui_node *e)
{
	for (size_t i = 0; i < e->nlabels; i++) {
		pk_unintern(pool, e->labels[i].key);
		pk_unintern(pool, e->labels[i].value);
	}
	for (size_t i = 0; i < e->nalloc; i++)
		pk_unintern(pool, e->alloc[i].name);
	for (size_t i = 0; i < e->ntaints; i++)
		pk_unintern(pool, e->taints[i]);
	pk_unintern(pool, e->name);
}

void ui_node_put(struct pk_map *pool, struct ui_node *e)
{
	if (!e || --e->refs > 0)
		return;
	ui_node_strings_drop(pool, e);
	free(e);
}

void ui_pod_put(struct pk_map *pool, struct ui_pod *e)
{
	if (!e || --e->refs > 0)
		return;
	for (size_t i = 0; i < e->nreq; i++)
		pk_unintern(pool, ui_pod_req(e)[i].name);
	pk_unintern(pool, e->ns);
	pk_unintern(pool, e->node);
	pk_unintern(pool, e->group);
	pk_unintern(pool, e->coords);
	pk_unintern(pool, e->worker);
	free(e);
}

/* ---- reading ----------------------------------------------------------------------------- */

const char *ui_node_label(const struct ui_node *n, const char *key)
{
	for (size_t i = 0; i < n->nlabels; i++)
		if (strcmp(n->labels[i].key, key) == 0)
			return n->labels[i].value;
	return NULL;
}

int64_t ui_res_get(const struct ui_res *r, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].name, name) == 0)
			return r[i].milli;
	return 0;
}

json_t *ui_res_json(const struct ui_res *r, size_t n)
{
	json_t *out = json_object();

	for (size_t i = 0; out && i < n; i++)
		json_object_set_new(out, r[i].name, json_integer(r[i].milli));
	return out;
}

json_t *ui_node_labels_json(const struct ui_node *n)
{
	json_t *out = json_object();

	for (size_t i = 0; out && i < n->nlabels; i++)
		json_object_set_new(out, n->labels[i].key, json_string(n->labels[i].value));
	return out;
}

json_t *ui_node_taints_json(const struct ui_node *n)
{
	json_t *out = json_array();

	for (size_t i = 0; out && i < n->ntaints; i++)
		json_array_append_new(out, json_string(n->taints[i]));
	return out;
}

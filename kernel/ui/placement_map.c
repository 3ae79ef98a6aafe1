/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement_map.c — the placement map's view: what it keeps of each
 * object, how the scheduling loop feeds it (its hooks), the /ui/ answers,
 * and the per-node detail.
 *
 * It keeps only what the map shows: per Node, Pod and group a typed entry
 * (placement_entries.c) drawn once when the object changes, its strings
 * shared; no JSON of any of them.  A Node keeps the labels a person asks about
 * (topology, accelerator, NUMA, host name), whether it is cordoned
 * (spec.unschedulable) and whether it is unreachable (the
 * node.kubernetes.io/unreachable taint the appliance writes after a lost
 * heartbeat, as the node lifecycle controller does in a Kubernetes cluster,
 * or Ready=Unknown); a Pod its node (only while it holds it: not after
 * Succeeded/Failed), group and slice annotations; a group its parent, slice
 * shape and InitiallyScheduled condition.  An update that changes nothing
 * of this leaves the generation alone, so pollers get "unchanged" answers
 * while the cluster is quiet.
 *
 * The loop thread writes, HTTP threads read; one mutex guards the tables,
 * the entries' user counts and strings, and the cached document of the last
 * generation rendered.  A render takes the entries under the mutex (one more
 * user each: they are immutable) and lays them out without it: the
 * scheduling loop waits for the taking only.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/appliance/appliance.h"
#include "kernel/builder/builder.h"
#include "kernel/ui/ui-internal.h"
#include "topology/topology.h"

struct pk_ui_map {
	pthread_mutex_t lock;
	struct pk_map nodes;  /* name -> struct ui_node * */
	struct pk_map pods;   /* "ns/name" -> struct ui_pod * */
	struct pk_map groups; /* "ns/name" -> struct ui_group * */
	struct pk_map pool;   /* the entries' strings (placement_entries.c) */
	json_t *queued;	      /* "Kind/ns/name" -> queued workload (placement_queued.c) */
	json_t *orders; /* "Kind/ns/name" -> its queue-order annotation: Jobs, JobSets, pods */
	uint64_t generation;
	time_t changed; /* when generation last grew: the time of the data */
	char *cache;	/* document of cache_gen */
	size_t cache_len;
	uint64_t cache_gen;
};

int pk_ui_map_new(struct pk_ui_map **ret)
{
	struct pk_ui_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->queued = json_object();
	m->orders = json_object();
	if (!m->queued || !m->orders) {
		json_decref(m->queued);
		json_decref(m->orders);
		free(m);
		return -ENOMEM;
	}
	pthread_mutex_init(&m->lock, NULL);
	/* each table's keys are its entries' own strings (entry_key()) */
	m->nodes.borrow_keys = m->pods.borrow_keys = m->groups.borrow_keys = true;
	/*
	 * Generations start from the clock (microseconds, below 2^53 so the page's
	 * numbers stay exact): a page polling with ?since= across a restart of
	 * podkerneld cannot meet its old generation again.
	 */
	m->generation = (uint64_t)time(NULL) * 1000000u;
	m->changed = time(NULL);
	*ret = m;
	return 0;
}

/* Drop every entry (under the lock, or alone). */
static void entries_clear(struct pk_ui_map *m)
{
	void *e;

	for (size_t i = 0; pk_map_next(&m->nodes, &i, NULL, &e);)
		ui_node_put(&m->pool, e);
	for (size_t i = 0; pk_map_next(&m->pods, &i, NULL, &e);)
		ui_pod_put(&m->pool, e);
	for (size_t i = 0; pk_map_next(&m->groups, &i, NULL, &e);)
		ui_group_put(&m->pool, e);
	pk_map_free(&m->nodes);
	pk_map_free(&m->pods);
	pk_map_free(&m->groups);
}

void pk_ui_map_free(struct pk_ui_map *m)
{
	if (!m)
		return;
	entries_clear(m);
	pk_map_free(&m->pool);
	json_decref(m->queued);
	json_decref(m->orders);
	free(m->cache);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void pk_ui_map_clear(struct pk_ui_map *m)
{
	pthread_mutex_lock(&m->lock);
	entries_clear(m);
	json_object_clear(m->queued);
	json_object_clear(m->orders);
	m->generation++;
	m->changed = time(NULL);
	pthread_mutex_unlock(&m->lock);
}

uint64_t pk_ui_map_generation(struct pk_ui_map *m)
{
	uint64_t g;

	pthread_mutex_lock(&m->lock);
	g = m->generation;
	pthread_mutex_unlock(&m->lock);
	return g;
}

/* ---- what is kept of each kind ---------------------------------------------------- */

/* The key of obj in its kind's table: "name" for a Node, "ns/name" else. */
static void key_of(enum pk_kind kind, const json_t *obj, char *key, size_t keylen)
{
	const char *ns = pk_namespace(obj);

	if (kind == PK_KIND_NODE)
		snprintf(key, keylen, "%s", pk_name(obj));
	else /* as the entries spell it (ui_pod_new()) */
		snprintf(key, keylen, "%s/%s", ns ? ns : "default", pk_name(obj));
}

static void bump(struct pk_ui_map *m)
{
	m->generation++;
	m->changed = time(NULL);
}

/* The table of a kind of entry, NULL for other kinds. */
static struct pk_map *table_of(struct pk_ui_map *m, enum pk_kind kind)
{
	switch (kind) {
	case PK_KIND_NODE:
		return &m->nodes;
	case PK_KIND_POD:
		return &m->pods;
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		return &m->groups;
	default:
		return NULL;
	}
}

static void entry_put(struct pk_ui_map *m, enum pk_kind kind, void *e)
{
	if (kind == PK_KIND_NODE)
		ui_node_put(&m->pool, e);
	else if (kind == PK_KIND_POD)
		ui_pod_put(&m->pool, e);
	else
		ui_group_put(&m->pool, e);
}

/* The string an entry is kept under in its table (the table borrows it). */
static const char *entry_key(enum pk_kind kind, const void *e)
{
	if (kind == PK_KIND_NODE)
		return ((const struct ui_node *)e)->name;
	if (kind == PK_KIND_POD)
		return ui_pod_key(e);
	return ((const struct ui_group *)e)->key;
}

static bool entry_equal(enum pk_kind kind, const void *a, const void *b)
{
	if (kind == PK_KIND_NODE)
		return ui_node_equal(a, b);
	if (kind == PK_KIND_POD)
		return ui_pod_equal(a, b);
	return ui_group_equal(a, b);
}

/* A Node's, Pod's or group's entry in place of the one under key (locked). */
static int entry_update(struct pk_ui_map *m, enum pk_kind kind, const json_t *obj, const char *key)
{
	struct pk_map *table = table_of(m, kind);
	void *old = pk_map_get(table, key);
	void *e = kind == PK_KIND_NODE	? (void *)ui_node_new(&m->pool, obj)
		  : kind == PK_KIND_POD ? (void *)ui_pod_new(&m->pool, obj)
					: (void *)ui_group_new(&m->pool, kind, obj);

	if (!e)
		return -ENOMEM;
	if (old && entry_equal(kind, old, e)) {
		old = e; /* nothing the map shows changed: the new one goes */
	} else if (pk_map_put(table, entry_key(kind, e), e) < 0) {
		entry_put(m, kind, e);
		return -ENOMEM;
	} else {
		bump(m);
	}
	entry_put(m, kind, old);
	return 0;
}

/*
 * A pending Job's, JobSet's or pod's queue order (the positions are ranked
 * from them at each render), none once admitted or gone (order NULL); under
 * the lock.
 */
static int order_update(struct pk_ui_map *m, const char *key, const char *order)
{
	const char *had = json_string_value(json_object_get(m->orders, key));

	if (!order && json_object_del(m->orders, key) == 0) {
		bump(m);
	} else if (order && !(had && strcmp(had, order) == 0)) {
		if (json_object_set_new(m->orders, key, json_string(order)) < 0)
			return -ENOMEM;
		bump(m);
	}
	return 0;
}

/* A Job's or JobSet's entry while it waits in a queue, none once admitted (or gone). */
static int queued_update(struct pk_ui_map *m, enum pk_kind kind, const json_t *obj)
{
	json_t *e = ui_queued_entry(kind, obj);
	char key[600];
	int r = 0;

	pk_obj_key(key, sizeof(key), pk_type_of(kind), pk_namespace(obj), pk_name(obj));
	pthread_mutex_lock(&m->lock);
	r = order_update(m, key, e ? wb_queue_order(obj) : NULL);
	if (!e && json_object_del(m->queued, key) == 0) {
		bump(m);
	} else if (e && !json_equal(json_object_get(m->queued, key), e)) {
		r = json_object_set(m->queued, key, e) < 0 ? -ENOMEM : r;
		bump(m);
	}
	pthread_mutex_unlock(&m->lock);
	json_decref(e);
	return r;
}

int pk_ui_map_update(struct pk_ui_map *m, const struct pk_type *type, const json_t *obj)
{
	enum pk_kind kind = type ? type->pk : PK_KIND_UNKNOWN;
	char key[512];
	int r = 0;

	if (!m || !obj || !pk_name(obj))
		return 0;
	key_of(kind, obj, key, sizeof(key));
	if (table_of(m, kind)) {
		char okey[600];

		snprintf(okey, sizeof(okey), "Pod/%s", key);
		pthread_mutex_lock(&m->lock);
		r = entry_update(m, kind, obj, key);
		if (r == 0 && kind == PK_KIND_POD) /* a queued pod takes a place in its queue */
			r = order_update(m, okey, wb_queue_order(obj));
		pthread_mutex_unlock(&m->lock);
		return r;
	}
	if (kind == PK_KIND_JOB || kind == PK_KIND_JOBSET)
		return queued_update(m, kind, obj);
	return 0;
}

void pk_ui_map_remove(struct pk_ui_map *m, const struct pk_type *type, const json_t *obj)
{
	enum pk_kind kind = type ? type->pk : PK_KIND_UNKNOWN;
	char key[512];
	void *e;

	if (!m || !obj || !pk_name(obj))
		return;
	key_of(kind, obj, key, sizeof(key));
	pthread_mutex_lock(&m->lock);
	switch (kind) {
	case PK_KIND_NODE:
	case PK_KIND_POD:
		e = pk_map_get(kind == PK_KIND_NODE ? &m->nodes : &m->pods, key);
		if (!e)
			break;
		pk_map_del(kind == PK_KIND_NODE ? &m->nodes : &m->pods, key);
		if (kind == PK_KIND_NODE) {
			ui_node_put(&m->pool, e);
		} else {
			char okey[600];

			snprintf(okey, sizeof(okey), "Pod/%s", key);
			json_object_del(m->orders, okey);
			ui_pod_put(&m->pool, e);
		}
		bump(m);
		break;
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		e = pk_map_take(&m->groups, key);
		if (e) {
			ui_group_put(&m->pool, e);
			bump(m);
		}
		break;
	case PK_KIND_JOB:
	case PK_KIND_JOBSET: {
		char qkey[600];

		snprintf(qkey, sizeof(qkey), "%s/%s", pk_kind_to_string(kind), key);
		json_object_del(m->orders, qkey);
		if (json_object_del(m->queued, qkey) == 0)
			bump(m);
		break;
	}
	default:
		break;
	}
	pthread_mutex_unlock(&m->lock);
}

void pk_ui_map_event(struct pk_ui_map *m, enum pk_event_type type, const struct pk_type *kind,
		     const json_t *obj)
{
	if (type == PK_EVENT_DELETED)
		pk_ui_map_remove(m, kind, obj);
	else
		pk_ui_map_update(m, kind, obj);
}

/* ---- fed by the scheduling loop ------------------------------------------------------- */

/* Every listing starts from nothing: what left the source meanwhile goes. */
static void hook_list_begin(void *arg)
{
	pk_ui_map_clear(arg);
}

/* Kinds arrive as the source names them; Jobs and JobSets count while queued; Leases are ignored.
 */
static void hook_listed(void *arg, const struct pk_type *kind, const json_t *obj, int64_t now_ms)
{
	(void)now_ms;
	pk_ui_map_update(arg, kind, obj);
}

/*
 * Every event, whatever the loop made of it: the loop's own bindings and
 * conditions come back as skips for the scheduler, yet they are what the
 * map shows.
 */
static void hook_event(void *arg, const struct pk_source_event *ev, const struct ap_decision *d)
{
	(void)d;
	pk_ui_map_event(arg, ev->type, ev->kind, ev->object);
}

const struct pk_appliance_hooks pk_ui_map_hooks = {
    .list_begin = hook_list_begin,
    .listed = hook_listed,
    .event = hook_event,
};

/* ---- documents ------------------------------------------------------------------------ */

static char *unchanged_doc(uint64_t generation)
{
	json_t *doc = json_pack("{s:s,s:s,s:I,s:b}", "kind", "PlacementMap", "apiVersion",
				"podkernel.dev/v1alpha1", "generation", (json_int_t)generation,
				"unchanged", 1);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

	json_decref(doc);
	return text;
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp((*(struct ui_node *const *)a)->name, (*(struct ui_node *const *)b)->name);
}

static int pod_cmp(const void *a, const void *b)
{
	const struct ui_pod *x = *(struct ui_pod *const *)a, *y = *(struct ui_pod *const *)b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : strcmp(ui_pod_name(x), ui_pod_name(y));
}

/*
 * What a render lays out, taken under the lock: the entries (one more user
 * each: they are never changed in place, an update replaces one), so the
 * layout runs without the lock and the loop thread waits only for this.
 */
static int view_take(struct pk_ui_map *m, struct ui_view *v)
{
	void *e;
	size_t i, n;

	*v = (struct ui_view){
	    .nodes = calloc(m->nodes.live + 1, sizeof(*v->nodes)),
	    .pods = calloc(m->pods.live + 1, sizeof(*v->pods)),
	    .groups = calloc(m->groups.live + 1, sizeof(*v->groups)),
	    .queued = json_copy(m->queued),
	    .orders = json_copy(m->orders),
	};
	if (!v->nodes || !v->pods || !v->groups || !v->queued || !v->orders)
		return -ENOMEM;
	for (i = 0, n = 0; pk_map_next(&m->nodes, &i, NULL, &e); n++)
		((struct ui_node *)(v->nodes[n] = e))->refs++;
	v->nnodes = n;
	for (i = 0, n = 0; pk_map_next(&m->pods, &i, NULL, &e); n++)
		((struct ui_pod *)(v->pods[n] = e))->refs++;
	v->npods = n;
	for (i = 0, n = 0; pk_map_next(&m->groups, &i, NULL, &e); n++)
		((struct ui_group *)(v->groups[n] = e))->refs++;
	v->ngroups = n;
	return 0;
}

static void view_release(struct pk_ui_map *m, struct ui_view *v)
{
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < v->nnodes; i++)
		ui_node_put(&m->pool, v->nodes[i]);
	for (size_t i = 0; i < v->npods; i++)
		ui_pod_put(&m->pool, v->pods[i]);
	for (size_t i = 0; i < v->ngroups; i++)
		ui_group_put(&m->pool, v->groups[i]);
	pthread_mutex_unlock(&m->lock);
	free(v->nodes);
	free(v->pods);
	free(v->groups);
	json_decref(v->queued);
	json_decref(v->orders);
}

/* Lay the view out, in name order whatever the order of the tables. */
static int view_layout(struct ui_view *v, uint64_t gen, json_t **ret)
{
	qsort(v->nodes, v->nnodes, sizeof(*v->nodes), node_cmp);
	qsort(v->pods, v->npods, sizeof(*v->pods), pod_cmp);
	return ui_map_layout(v, gen, ret);
}

/* The document of generation gen, laid out without the lock. */
static int render_unlocked(struct pk_ui_map *m, struct ui_view *v, uint64_t gen, time_t changed,
			   char **ret_text)
{
	json_t *doc = NULL;
	int r = view_layout(v, gen, &doc);
	char when[32];
	struct tm tm;

	/* the time of the data: when the last change it shows happened (UTC) */
	if (r == 0 && gmtime_r(&changed, &tm) &&
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		json_object_set_new(doc, "time", json_string(when));
	view_release(m, v);
	*ret_text = r == 0 ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return r < 0 ? r : *ret_text ? 0 : -ENOMEM;
}

int pk_ui_map_render(struct pk_ui_map *m, uint64_t since, char **ret_json, size_t *ret_len)
{
	struct ui_view v;
	char *text = NULL;
	uint64_t gen;
	time_t changed;
	int r;

	pthread_mutex_lock(&m->lock);
	gen = m->generation;
	changed = m->changed;
	if (since == gen && since != 0) {
		pthread_mutex_unlock(&m->lock);
		text = unchanged_doc(gen);
		r = text ? 0 : -ENOMEM;
		goto out;
	}
	if (m->cache && m->cache_gen == gen) {
		text = strndup(m->cache, m->cache_len);
		pthread_mutex_unlock(&m->lock);
		r = text ? 0 : -ENOMEM;
		goto out;
	}
	r = view_take(m, &v);
	pthread_mutex_unlock(&m->lock);
	if (r < 0) {
		view_release(m, &v);
		goto out;
	}
	r = render_unlocked(m, &v, gen, changed, &text);
	if (r == 0) {
		char *keep = strdup(text);

		pthread_mutex_lock(&m->lock);
		if (keep && (!m->cache || m->cache_gen < gen)) {
			free(m->cache);
			m->cache = keep;
			m->cache_len = strlen(keep);
			m->cache_gen = gen;
			keep = NULL;
		}
		pthread_mutex_unlock(&m->lock);
		free(keep);
	}
out:
	if (r < 0)
		return r;
	*ret_json = text;
	*ret_len = strlen(text);
	return 0;
}

/* Pods on the node, with their group and the group's root (locked). */
static json_t *node_pods(struct pk_ui_map *m, const char *name)
{
	json_t *out = json_array();
	struct ui_pod *p;
	void *e;

	for (size_t i = 0; pk_map_next(&m->pods, &i, NULL, &e);) {
		p = e;
		const struct ui_group *g = NULL, *root = NULL;
		char gkey[512];

		if (!p->node || strcmp(p->node, name) != 0)
			continue;
		if (p->group) {
			snprintf(gkey, sizeof(gkey), "%s/%s", p->ns, p->group);
			g = pk_map_get(&m->groups, gkey);
			/* the root: follow parents (bounded: a cycle is invalid anyway) */
			root = g;
			for (int d = 0; d < 16 && root && root->parent; d++) {
				const struct ui_group *up;

				snprintf(gkey, sizeof(gkey), "%s/%s", p->ns, root->parent);
				if (!(up = pk_map_get(&m->groups, gkey)))
					break;
				root = up;
			}
		}
		json_array_append_new(
		    out,
		    json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "namespace", p->ns, "name",
			      ui_pod_name(p), "group", ui_str_or_null(p->group), "groupKind",
			      ui_str_or_null(g ? g->kind : NULL), "root",
			      ui_str_or_null(root ? root->name : NULL), "rootKind",
			      ui_str_or_null(root ? root->kind : NULL), "sliceCoords",
			      ui_str_or_null(p->coords), "workerId", ui_str_or_null(p->worker)));
	}
	return out;
}

/* What the pods bound to the node request, resource -> milli-units (locked). */
static json_t *node_requested(struct pk_ui_map *m, const char *name)
{
	json_t *out = json_object();
	struct ui_pod *p;
	void *e;

	for (size_t i = 0; pk_map_next(&m->pods, &i, NULL, &e);) {
		p = e;
		if (!p->node || strcmp(p->node, name) != 0)
			continue;
		for (size_t j = 0; j < p->nreq; j++) {
			const char *k = ui_pod_req(p)[j].name;

			json_object_set_new(
			    out, k,
			    json_integer(json_integer_value(json_object_get(out, k)) +
					 ui_pod_req(p)[j].milli));
		}
	}
	return out;
}

int pk_ui_map_pods(struct pk_ui_map *m, const char *text, size_t max, json_t **ret)
{
	json_t *items = json_array();
	const char *key;
	struct ui_pod *p;
	void *e;
	size_t n = 0;

	if (!items)
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; pk_map_next(&m->pods, &i, &key, &e);) {
		p = e;
		if (!strstr(key, text))
			continue;
		if (++n > max)
			break;
		json_array_append_new(items,
				      json_pack("{s:s,s:s,s:o,s:o}", "namespace", p->ns, "name",
						ui_pod_name(p), "node", ui_str_or_null(p->node),
						"group", ui_str_or_null(p->group)));
	}
	pthread_mutex_unlock(&m->lock);
	*ret = json_pack("{s:s,s:s,s:o,s:b}", "kind", "PlacementPodList", "apiVersion",
			 "podkernel.dev/v1alpha1", "items", items, "truncated", n > max);
	return *ret ? 0 : -ENOMEM;
}

int pk_ui_map_node(struct pk_ui_map *m, const char *name, json_t **ret)
{
	struct ui_node *n;
	json_t *doc = NULL, *pods;

	pthread_mutex_lock(&m->lock);
	n = pk_map_get(&m->nodes, name);
	if (n) {
		pods = node_pods(m, name);
		doc = json_pack("{s:s,s:s,s:s,s:o,s:b,s:b,s:s,s:o}", "kind", "PlacementNode",
				"apiVersion", "podkernel.dev/v1alpha1", "name", name, "labels",
				ui_node_labels_json(n), "cordoned", n->cordoned, "unreachable",
				n->unreachable, "state",
				n->unreachable		? "unreachable"
				: n->cordoned		? "cordoned"
				: json_array_size(pods) ? "busy"
							: "free",
				"pods", pods);
		if (doc) {
			json_object_set_new(doc, "allocatable", ui_res_json(n->alloc, n->nalloc));
			json_object_set_new(doc, "taints", ui_node_taints_json(n));
			json_object_set_new(doc, "requested", node_requested(m, name));
		}
	}
	pthread_mutex_unlock(&m->lock);
	if (!n)
		return -ENOENT;
	if (!doc)
		return -ENOMEM;
	*ret = doc;
	return 0;
}

/* ---- the /ui/ hook ---------------------------------------------------------------------- */

static const char *query(const struct pk_request *req, const char *key)
{
	for (size_t i = 0; i < req->nargs; i++)
		if (req->args[i].key && strcmp(req->args[i].key, key) == 0)
			return req->args[i].value ? req->args[i].value : "";
	return NULL;
}

static int respond_doc(struct pk_response *resp, int status, json_t *doc)
{
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

	json_decref(doc);
	if (!text)
		return -ENOMEM;
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = text;
	resp->body_len = strlen(text);
	return 0;
}

static int serve_api(struct pk_ui_map *m, const struct pk_request *req, struct pk_response *resp)
{
	const char *node = query(req, "node"), *since = query(req, "since"),
		   *pod = query(req, "pod");
	uint64_t gen = 0;
	char *end;
	json_t *doc = NULL;
	int r;

	if (node) {
		r = pk_ui_map_node(m, node, &doc);
		if (r == -ENOENT)
			return respond_doc(resp, 404,
					   json_pack("{s:s,s:s,s:s,s:s,s:i}", "kind", "Status",
						     "status", "Failure", "reason", "NotFound",
						     "message", "no such node in the placement map",
						     "code", 404));
		return r < 0 ? r : respond_doc(resp, 200, doc);
	}
	if (pod) {
		if (!*pod)
			return respond_doc(
			    resp, 400,
			    json_pack("{s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "status",
				      "Failure", "reason", "BadRequest", "message",
				      "pod: expected part of a pod's name", "code", 400));
		r = pk_ui_map_pods(m, pod, PK_UI_MAP_POD_MATCHES, &doc);
		return r < 0 ? r : respond_doc(resp, 200, doc);
	}
	if (since) {
		gen = strtoull(since, &end, 10);
		if (!*since || *end)
			return respond_doc(
			    resp, 400,
			    json_pack("{s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "status",
				      "Failure", "reason", "BadRequest", "message",
				      "since: expected a generation number", "code", 400));
	}
	r = pk_ui_map_render(m, gen, &resp->body, &resp->body_len);
	if (r < 0)
		return r;
	resp->status = 200;
	resp->content_type = "application/json";
	return 0;
}

int pk_ui_map_serve(void *arg, const struct pk_request *req, struct pk_response *resp)
{
	struct pk_ui_map *m = arg;
	const char *path = req->path;

	if (!m)
		return -ENOENT;
	if (strcmp(path, "/ui/api/placement") == 0)
		return serve_api(m, req, resp);
	if (strcmp(path, "/ui") == 0 || strcmp(path, "/ui/") == 0)
		path = "/ui/index.html";
	for (size_t i = 0; i < ui_nassets; i++) {
		if (strcmp(ui_assets[i].path, path) != 0)
			continue;
		resp->body = malloc(ui_assets[i].len + 1);
		if (!resp->body)
			return -ENOMEM;
		memcpy(resp->body, ui_assets[i].data, ui_assets[i].len);
		resp->body_len = ui_assets[i].len;
		resp->status = 200;
		resp->content_type = ui_assets[i].content_type;
		return 0;
	}
	return -ENOENT;
}

/* Accelerators held by bound pods, per namespace: ns -> milli-units. */
static json_t *namespace_accelerators(const struct ui_view *v)
{
	json_t *out = json_object();

	for (size_t i = 0; out && i < v->npods; i++) {
		const struct ui_pod *p = v->pods[i];
		long long n = ui_res_accelerators(ui_pod_req(p), p->nreq);

		if (!p->node)
			continue; /* not bound, or finished */
		json_object_set_new(
		    out, p->ns, json_integer(json_integer_value(json_object_get(out, p->ns)) + n));
	}
	return out;
}

static void domain_lines(FILE *f, const json_t *doc)
{
	size_t i;
	json_t *d;

	fprintf(f, "# HELP podkernel_domain_accelerators Accelerators per topology domain, "
		   "allocated or free.\n"
		   "# TYPE podkernel_domain_accelerators gauge\n");
	json_array_foreach(json_object_get(doc, "domains"), i, d)
	{
		const char *name = json_string_value(json_object_get(d, "name"));
		json_t *c = json_object_get(d, "counts");
		json_int_t all = json_integer_value(json_object_get(c, "accelerators"));
		json_int_t used = json_integer_value(json_object_get(c, "acceleratorsAllocated"));

		fprintf(f,
			"podkernel_domain_accelerators{domain=\"%s\",state=\"allocated\"} "
			"%" JSON_INTEGER_FORMAT "\n"
			"podkernel_domain_accelerators{domain=\"%s\",state=\"free\"} "
			"%" JSON_INTEGER_FORMAT "\n",
			name, used, name, all - used);
	}
}

void pk_ui_map_metrics(struct pk_ui_map *m, FILE *f)
{
	struct ui_view v;
	json_t *doc = NULL, *per_ns = NULL, *val;
	const char *ns;
	int r;

	pthread_mutex_lock(&m->lock);
	r = view_take(m, &v);
	pthread_mutex_unlock(&m->lock);
	if (r == 0) {
		per_ns = namespace_accelerators(&v);
		if (view_layout(&v, 0, &doc) == 0)
			domain_lines(f, doc);
	}
	view_release(m, &v);
	fprintf(f, "# HELP podkernel_namespace_accelerators_allocated Accelerators requested by "
		   "the bound pods of a namespace.\n"
		   "# TYPE podkernel_namespace_accelerators_allocated gauge\n");
	json_object_foreach(per_ns, ns, val)
	    fprintf(f, "podkernel_namespace_accelerators_allocated{namespace=\"%s\"} %lld\n", ns,
		    (long long)json_integer_value(val) / 1000);
	json_decref(doc);
	json_decref(per_ns);
}

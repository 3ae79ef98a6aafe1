/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement_map.c — the placement map's view: what it keeps of each
 * object, how the scheduling loop feeds it (its hooks), the /ui/ answers,
 * and the per-node detail.
 *
 * Three jansson maps hold only what the map shows (see ui.h): a Node keeps
 * the labels a person asks about (topology, accelerator, NUMA, host name),
 * whether it is cordoned (spec.unschedulable) and whether it is
 * unreachable (the node.kubernetes.io/unreachable taint the appliance
 * writes after a lost heartbeat, as the node lifecycle controller does in
 * a Kubernetes cluster, or Ready=Unknown); a Pod its node (only while it
 * holds it: not after Succeeded/Failed), group and slice annotations; a
 * group its parent, slice shape and InitiallyScheduled condition.  An
 * update that changes nothing of this leaves the generation alone, so
 * pollers get "unchanged" answers while the cluster is quiet.
 *
 * The loop thread writes, HTTP threads read; one mutex guards the maps and
 * the cached document of the last generation rendered.  A render copies the
 * three maps under the mutex (shallow: entries are immutable and shared) and
 * lays them out without it: the scheduling loop waits for the copies only.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/appliance/appliance.h"
#include "kernel/ui/ui-internal.h"
#include "topology/topology.h"

struct pk_ui_map {
	pthread_mutex_t lock;
	json_t *nodes, *pods, *groups;
	uint64_t generation;
	time_t changed; /* when generation last grew: the time of the data */
	char *cache;	/* document of cache_gen */
	size_t cache_len;
	uint64_t cache_gen;
};

/* Label key prefixes shown with a host. */
static const char *const shown_labels[] = {
    TOPO_LABEL_LEVEL_PREFIX, "accelerator.podkernel.dev/",	 "numa.podkernel.dev/",
    TOPO_LABEL_HOSTNAME,     "node.kubernetes.io/instance-type",
};

int pk_ui_map_new(struct pk_ui_map **ret)
{
	struct pk_ui_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->nodes = json_object();
	m->pods = json_object();
	m->groups = json_object();
	if (!m->nodes || !m->pods || !m->groups) {
		json_decref(m->nodes);
		json_decref(m->pods);
		json_decref(m->groups);
		free(m);
		return -ENOMEM;
	}
	pthread_mutex_init(&m->lock, NULL);
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

void pk_ui_map_free(struct pk_ui_map *m)
{
	if (!m)
		return;
	json_decref(m->nodes);
	json_decref(m->pods);
	json_decref(m->groups);
	free(m->cache);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void pk_ui_map_clear(struct pk_ui_map *m)
{
	pthread_mutex_lock(&m->lock);
	json_object_clear(m->nodes);
	json_object_clear(m->pods);
	json_object_clear(m->groups);
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

static bool label_shown(const char *key)
{
	for (size_t i = 0; i < sizeof(shown_labels) / sizeof(shown_labels[0]); i++)
		if (strncmp(key, shown_labels[i], strlen(shown_labels[i])) == 0)
			return true;
	return false;
}

static bool node_unreachable(const json_t *node)
{
	json_t *taints = pk_get(node, "spec.taints"), *t, *ready;
	size_t i;

	json_array_foreach(taints, i, t)
	{
		const char *key = json_string_value(json_object_get(t, "key"));

		if (key && strcmp(key, PK_APPLIANCE_TAINT_UNREACHABLE) == 0)
			return true;
	}
	ready = pk_condition_get(node, "Ready");
	return ready && json_string_value(json_object_get(ready, "status")) &&
	       strcmp(json_string_value(json_object_get(ready, "status")), "Unknown") == 0;
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

/* resource -> milli-units of an object of quantities (allocatable, requests). */
static json_t *quantities(const json_t *q, json_t *into)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)q, k, v)
	{
		int64_t m = milli_of(v);

		if (m >= 0)
			json_object_set_new(
			    into, k,
			    json_integer(json_integer_value(json_object_get(into, k)) + m));
	}
	return into;
}

/* The taints a person should see: all but the cordon's and the unreachable one
 * (drawn as their own states), as "key=value:Effect". */
static json_t *node_taints(const json_t *node)
{
	json_t *out = json_array(), *t;
	size_t i;

	json_array_foreach(pk_get(node, "spec.taints"), i, t)
	{
		const char *key = json_string_value(json_object_get(t, "key"));
		const char *val = json_string_value(json_object_get(t, "value"));
		const char *eff = json_string_value(json_object_get(t, "effect"));
		char text[512];

		if (!key || strcmp(key, PK_APPLIANCE_TAINT_UNREACHABLE) == 0 ||
		    strcmp(key, "node.kubernetes.io/unschedulable") == 0)
			continue;
		snprintf(text, sizeof(text), "%s%s%s:%s", key, val && *val ? "=" : "",
			 val ? val : "", eff ? eff : "");
		json_array_append_new(out, json_string(text));
	}
	return out;
}

static json_t *node_entry(const json_t *node)
{
	json_t *labels = json_object(), *v;
	const char *k;

	json_object_foreach(pk_get(node, "metadata.labels"), k,
			    v) if (json_is_string(v) && label_shown(k))
	    json_object_set(labels, k, v);
	return json_pack("[o,b,b,o,o]", labels, json_is_true(pk_get(node, "spec.unschedulable")),
			 node_unreachable(node),
			 quantities(pk_get(node, "status.allocatable"), json_object()),
			 node_taints(node));
}

/* What the pod's containers request, resource -> milli-units. */
static json_t *pod_requests(const json_t *pod)
{
	json_t *out = json_object(), *c;
	size_t i;

	json_array_foreach(pk_get(pod, "spec.containers"), i, c)
	    quantities(pk_get(c, "resources.requests"), out);
	return out;
}

static json_t *pod_entry(const json_t *pod)
{
	const char *node = pk_get_string(pod, "spec.nodeName");
	const char *phase = pk_get_string(pod, "status.phase");
	json_t *ann = pk_get(pod, "metadata.annotations");
	bool done = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);

	if (node && (!*node || done))
		node = NULL;
	return json_pack(
	    "[o,o,o,o,s,o,b]", ui_str_or_null(node), ui_str_or_null(pk_pod_group_name(pod)),
	    ui_str_or_null(json_string_value(json_object_get(ann, TOPO_ANN_SLICE_COORDS))),
	    ui_str_or_null(json_string_value(json_object_get(ann, TOPO_ANN_WORKER_ID))),
	    pk_namespace(pod), pod_requests(pod), done);
}

static json_t *group_entry(enum pk_kind kind, const json_t *g)
{
	bool composite = kind == PK_KIND_COMPOSITE_POD_GROUP;
	json_t *cond = pk_condition_get(g, composite ? "CompositePodGroupInitiallyScheduled"
						     : "PodGroupInitiallyScheduled");
	json_t *ann = pk_get(g, "metadata.annotations");
	const char *parent = pk_get_string(g, "spec.parentCompositePodGroupName");

	return json_pack(
	    "{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "kind", pk_kind_to_string(kind), "namespace",
	    pk_namespace(g), "name", pk_name(g), "parent",
	    ui_str_or_null(parent && *parent ? parent : NULL), "sliceShape",
	    ui_str_or_null(json_string_value(json_object_get(ann, TOPO_ANN_SLICE_SHAPE))), "status",
	    ui_str_or_null(json_string_value(json_object_get(cond, "status"))), "reason",
	    ui_str_or_null(json_string_value(json_object_get(cond, "reason"))), "message",
	    ui_str_or_null(json_string_value(json_object_get(cond, "message"))));
}

/* The table and key of obj's kind; false for kinds the map does not keep. */
static bool table_of(struct pk_ui_map *m, enum pk_kind kind, const json_t *obj, json_t **ret_table,
		     char *key, size_t keylen)
{
	switch (kind) {
	case PK_KIND_NODE:
		*ret_table = m->nodes;
		snprintf(key, keylen, "%s", pk_name(obj));
		return true;
	case PK_KIND_POD:
		*ret_table = m->pods;
		break;
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		*ret_table = m->groups;
		break;
	default:
		return false;
	}
	snprintf(key, keylen, "%s/%s", pk_namespace(obj), pk_name(obj));
	return true;
}

int pk_ui_map_update(struct pk_ui_map *m, enum pk_kind kind, const json_t *obj)
{
	char key[512];
	json_t *table, *e;
	int r = 0;

	if (!m || !obj || !pk_name(obj) || !table_of(m, kind, obj, &table, key, sizeof(key)))
		return 0;
	e = table == m->nodes  ? node_entry(obj)
	    : table == m->pods ? pod_entry(obj)
			       : group_entry(kind, obj);
	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	if (!json_equal(json_object_get(table, key), e)) {
		r = json_object_set(table, key, e) < 0 ? -ENOMEM : 0;
		m->generation++;
		m->changed = time(NULL);
	}
	pthread_mutex_unlock(&m->lock);
	json_decref(e);
	return r;
}

void pk_ui_map_remove(struct pk_ui_map *m, enum pk_kind kind, const json_t *obj)
{
	char key[512];
	json_t *table;

	if (!m || !obj || !pk_name(obj) || !table_of(m, kind, obj, &table, key, sizeof(key)))
		return;
	pthread_mutex_lock(&m->lock);
	if (json_object_del(table, key) == 0) {
		m->generation++;
		m->changed = time(NULL);
	}
	pthread_mutex_unlock(&m->lock);
}

void pk_ui_map_event(struct pk_ui_map *m, enum pk_event_type type, enum pk_kind kind,
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

/* Kinds arrive as the source names them; other kinds (Leases, Jobs) are ignored. */
static void hook_listed(void *arg, const char *kind, const json_t *obj, int64_t now_ms)
{
	(void)now_ms;
	pk_ui_map_update(arg, pk_kind_from_string(kind), obj);
}

/*
 * Every event, whatever the loop made of it: the loop's own bindings and
 * conditions come back as skips for the scheduler, yet they are what the
 * map shows.
 */
static void hook_event(void *arg, const struct pk_store_event *ev, const struct ap_decision *d)
{
	(void)d;
	pk_ui_map_event(arg, ev->type, ev->kind ? ev->kind->pk : PK_KIND_UNKNOWN, ev->object);
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

/*
 * The document of generation gen from shallow copies of the tables, made
 * under the lock: entries are never changed in place (an update replaces
 * one), and jansson's reference counts are atomic, so the layout runs
 * without the lock and the loop thread waits only for the copies.
 */
static int render_unlocked(json_t *nodes, json_t *pods, json_t *groups, uint64_t gen,
			   time_t changed, char **ret_text)
{
	json_t *doc = NULL;
	int r = nodes && pods && groups ? ui_map_layout(nodes, pods, groups, gen, &doc) : -ENOMEM;
	char when[32];
	struct tm tm;

	/* the time of the data: when the last change it shows happened (UTC) */
	if (r == 0 && gmtime_r(&changed, &tm) &&
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		json_object_set_new(doc, "time", json_string(when));

	json_decref(nodes);
	json_decref(pods);
	json_decref(groups);
	*ret_text = r == 0 ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return r < 0 ? r : *ret_text ? 0 : -ENOMEM;
}

int pk_ui_map_render(struct pk_ui_map *m, uint64_t since, char **ret_json, size_t *ret_len)
{
	json_t *nodes, *pods, *groups;
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
	nodes = json_copy(m->nodes);
	pods = json_copy(m->pods);
	groups = json_copy(m->groups);
	pthread_mutex_unlock(&m->lock);
	r = render_unlocked(nodes, pods, groups, gen, changed, &text);
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

/* Pods on the node, with their group and the group's root. */
static json_t *node_pods(struct pk_ui_map *m, const char *name)
{
	json_t *out = json_array(), *p;
	const char *key;

	json_object_foreach(m->pods, key, p)
	{
		const char *node = json_string_value(json_array_get(p, 0));
		const char *group = json_string_value(json_array_get(p, 1));
		const char *ns = json_string_value(json_array_get(p, 4));
		json_t *g = NULL, *root = NULL;
		char gkey[512];

		if (!node || strcmp(node, name) != 0)
			continue;
		if (group) {
			snprintf(gkey, sizeof(gkey), "%s/%s", ns, group);
			g = json_object_get(m->groups, gkey);
			/* the root: follow parents (bounded: a cycle is invalid anyway) */
			root = g;
			for (int d = 0; d < 16 && root; d++) {
				const char *parent =
				    json_string_value(json_object_get(root, "parent"));
				json_t *up;

				snprintf(gkey, sizeof(gkey), "%s/%s", ns, parent ? parent : "");
				up = parent ? json_object_get(m->groups, gkey) : NULL;
				if (!up)
					break;
				root = up;
			}
		}
		json_array_append_new(
		    out,
		    json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "namespace", ns, "name",
			      strchr(key, '/') + 1, "group", ui_str_or_null(group), "groupKind",
			      json_incref(g ? json_object_get(g, "kind") : json_null()), "root",
			      json_incref(root ? json_object_get(root, "name") : json_null()),
			      "rootKind",
			      json_incref(root ? json_object_get(root, "kind") : json_null()),
			      "sliceCoords", json_incref(json_array_get(p, 2)), "workerId",
			      json_incref(json_array_get(p, 3))));
	}
	return out;
}

/* What the pods bound to the node request, resource -> milli-units. */
static json_t *node_requested(struct pk_ui_map *m, const char *name)
{
	json_t *out = json_object(), *p;
	const char *key;

	json_object_foreach(m->pods, key, p)
	{
		const char *node = json_string_value(json_array_get(p, 0));
		const char *k;
		json_t *v;

		if (!node || strcmp(node, name) != 0)
			continue;
		json_object_foreach(json_array_get(p, 5), k, v)
		    json_object_set_new(out, k,
					json_integer(json_integer_value(json_object_get(out, k)) +
						     json_integer_value(v)));
	}
	return out;
}

int pk_ui_map_pods(struct pk_ui_map *m, const char *text, size_t max, json_t **ret)
{
	json_t *items = json_array(), *p;
	const char *key;
	size_t n = 0;

	if (!items)
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	json_object_foreach(m->pods, key, p)
	{
		if (!strstr(key, text))
			continue;
		if (++n > max)
			break;
		json_array_append_new(
		    items, json_pack("{s:O,s:s,s:O,s:O}", "namespace", json_array_get(p, 4), "name",
				     strchr(key, '/') + 1, "node", json_array_get(p, 0), "group",
				     json_array_get(p, 1)));
	}
	pthread_mutex_unlock(&m->lock);
	*ret = json_pack("{s:s,s:s,s:o,s:b}", "kind", "PlacementPodList", "apiVersion",
			 "podkernel.dev/v1alpha1", "items", items, "truncated", n > max);
	return *ret ? 0 : -ENOMEM;
}

int pk_ui_map_node(struct pk_ui_map *m, const char *name, json_t **ret)
{
	json_t *n, *doc = NULL, *pods;

	pthread_mutex_lock(&m->lock);
	n = json_object_get(m->nodes, name);
	if (n) {
		bool cordoned = json_is_true(json_array_get(n, 1));
		bool unreachable = json_is_true(json_array_get(n, 2));

		pods = node_pods(m, name);
		doc = json_pack("{s:s,s:s,s:s,s:O,s:b,s:b,s:s,s:o}", "kind", "PlacementNode",
				"apiVersion", "podkernel.dev/v1alpha1", "name", name, "labels",
				json_array_get(n, 0), "cordoned", cordoned, "unreachable",
				unreachable, "state",
				unreachable		? "unreachable"
				: cordoned		? "cordoned"
				: json_array_size(pods) ? "busy"
							: "free",
				"pods", pods);
		if (doc) {
			json_object_set(doc, "allocatable", json_array_get(n, 3));
			json_object_set(doc, "taints", json_array_get(n, 4));
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
static json_t *namespace_accelerators(const json_t *pods)
{
	json_t *out = json_object(), *p;
	const char *key;

	json_object_foreach((json_t *)pods, key, p)
	{
		const char *ns = json_string_value(json_array_get(p, 4));
		long long n = ui_accelerators(json_array_get(p, 5));

		if (!ns || !json_is_string(json_array_get(p, 0)))
			continue; /* not bound, or finished */
		json_object_set_new(out, ns,
				    json_integer(json_integer_value(json_object_get(out, ns)) + n));
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
	json_t *nodes, *pods, *groups, *doc = NULL, *per_ns, *v;
	const char *ns;

	pthread_mutex_lock(&m->lock);
	nodes = json_copy(m->nodes);
	pods = json_copy(m->pods);
	groups = json_copy(m->groups);
	pthread_mutex_unlock(&m->lock);
	per_ns = pods ? namespace_accelerators(pods) : NULL;
	if (nodes && pods && groups && ui_map_layout(nodes, pods, groups, 0, &doc) == 0)
		domain_lines(f, doc);
	fprintf(f, "# HELP podkernel_namespace_accelerators_allocated Accelerators requested by "
		   "the bound pods of a namespace.\n"
		   "# TYPE podkernel_namespace_accelerators_allocated gauge\n");
	json_object_foreach(per_ns, ns, v)
	    fprintf(f, "podkernel_namespace_accelerators_allocated{namespace=\"%s\"} %lld\n", ns,
		    (long long)json_integer_value(v) / 1000);
	json_decref(doc);
	json_decref(per_ns);
	json_decref(nodes);
	json_decref(pods);
	json_decref(groups);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodes.c — simulated nodes from a board file, and what happens to a node
 * that stops reporting.
 *
 * --simulate-board creates the Nodes `podctl board nodes FILE` prints (the
 * same code, kernel/api/board_nodes.c), annotated PK_ANN_SIMULATED so the
 * heartbeat rule leaves them alone; existing Nodes are kept.  The board's
 * DRA drivers' ResourceSlices (spec.dra) are created with them.
 *
 * Unreachable node (no write for the grace period): the Node gets the taint
 * node.kubernetes.io/unreachable:NoExecute and the condition Ready=False
 * (reason NodeStatusUnknown), so nothing new lands there.  Every pod bound
 * to it is evicted together with its disruption unit: the subtree of the
 * highest ancestor group whose disruptionMode is `all` (the same indivisible
 * unit preemption uses, KEP-6012), or the pod alone when no ancestor is
 * `all`.  Evicted pods get DisruptionTarget (reason DeletionByTaintManager)
 * and are deleted, all in one transaction, each only if it is still the pod
 * that was listed (its resourceVersion; one changed since is read again and
 * evicted if it is still the same pod, by uid); their Job controllers are
 * asked to recreate them, and the scheduler places the new pods under the
 * rules for their (already scheduled) groups.  When the node reports again the taint goes and Ready
 * turns True.  A deleted Node's pods are evicted the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/controllers/controllers-internal.h"

/*
 * Objects of a board per batch (one transaction each): a batch holds its
 * objects' copies and serialised rows until its commit, and the heap keeps
 * that peak (bench_appliance's registered 16,384 hosts: 22.5 KiB per node
 * in one batch, 7.3 with 512, 6.9 with 64 as with one create each).
 */
#define CTL_BOARD_BATCH 64

/* Create objects [from, from + CTL_BOARD_BATCH) of nodes in one batch; counts into *created. */
static int register_some(struct pk_ctl *ctl, json_t *nodes, size_t from, const char *path,
			 size_t *created, char *why, size_t whylen)
{
	const struct pk_write_result *res = NULL;
	size_t nres = 0, i;
	int r = pk_writer_batch_begin(ctl->writer);

	for (i = from; r == 0 && i < json_array_size(nodes) && i < from + CTL_BOARD_BATCH; i++) {
		json_t *n = json_array_get(nodes, i);

		pk_set(n, "metadata.annotations", json_pack("{s:s}", PK_ANN_SIMULATED, path));
		r = pk_writer_create(ctl->writer, pk_type_of(pk_kind_of(n)), n);
	}
	if (r == 0)
		r = ctl_commit(ctl, &res, &nres);
	for (i = 0; r == 0 && i < nres; i++) {
		if (res[i].error == 0)
			(*created)++;
		else if (res[i].error != -EEXIST)
			r = res[i].error;
	}
	if (r < 0 && i > 0 && i <= nres && res[i - 1].message)
		snprintf(why, whylen, " (%s %s: %s)", res[i - 1].kind->kind, res[i - 1].name,
			 res[i - 1].message);
	return r;
}

int ctl_register_board(struct pk_ctl *ctl, const char *path, char *err, size_t errlen)
{
	struct topo_board *b = topo_board_new();
	json_t *nodes = NULL, *slices = NULL;
	size_t created = 0;
	char why[400] = "";
	int r;

	if (!b)
		return -ENOMEM;
	r = topo_board_load_file(b, path, err, errlen);
	if (r == 0)
		r = pk_board_nodes_json(b, 0, &nodes);
	if (r == 0)
		r = pk_board_slices_json(b, 0, &slices);
	topo_board_free(b);
	if (r == 0 && json_array_extend(nodes, slices) < 0)
		r = -ENOMEM;
	json_decref(slices);
	if (r < 0) {
		json_decref(nodes);
		return r == -ENOMEM ? r : -EINVAL;
	}
	for (size_t from = 0; r == 0 && from < json_array_size(nodes); from += CTL_BOARD_BATCH)
		r = register_some(ctl, nodes, from, path, &created, why, sizeof(why));
	ctl_log(ctl, 1, "appliance: board %s: %zu simulated nodes and ResourceSlices, %zu new",
		path, json_array_size(nodes), created);
	json_decref(nodes);
	if (r < 0 && err && errlen)
		snprintf(err, errlen, "%s: registering nodes: %s%s", path, pk_write_strerror(r),
			 why);
	return r;
}

/*
 * Apply fn to a fresh copy of Node name and write it (its status with
 * status) under the Node's resourceVersion, reading it again on a conflict.
 */
static int edit_node(struct pk_ctl *ctl, const char *name, bool status,
		     int (*fn)(json_t *node, void *arg), void *arg)
{
	int r = -EIO;

	for (int attempt = 0; attempt < 3; attempt++) {
		json_t *node = NULL, *out = NULL;
		struct pk_write_ref ref;

		r = pk_store_get(ctl->store, &pk_type_node, NULL, name, &node);
		if (r < 0)
			return r;
		ref = ctl_ref_of(&pk_type_node, node);
		r = fn(node, arg);
		if (r == 0 && status)
			r = ctl_status(ctl, &ref, json_object_get(node, "status"), &out);
		else if (r == 0)
			r = ctl_replace(ctl, &ref, node, &out);
		json_decref(node);
		if (r == 0) {
			/* An own write is no heartbeat: the loop takes it as seen. */
			if (out)
				pk_appliance_wrote(ctl->app, &pk_type_node, out);
			json_decref(out);
			return 0;
		}
		if (r != -PK_WRITE_ECONFLICT)
			break;
	}
	return r;
}

static int add_taint(json_t *node, void *arg)
{
	json_t *taints = pk_get(node, "spec.taints"), *t;
	size_t i;
	char now[32];

	(void)arg;
	json_array_foreach(taints, i, t)
	{
		const char *key = json_string_value(json_object_get(t, "key"));

		if (key && strcmp(key, PK_TAINT_UNREACHABLE) == 0)
			return 0;
	}
	if (!json_is_array(taints)) {
		taints = json_array();
		if (pk_set(node, "spec.taints", taints) < 0)
			return -ENOMEM;
	}
	pk_time_format(time(NULL), now);
	return json_array_append_new(taints, json_pack("{s:s,s:s,s:s}", "key", PK_TAINT_UNREACHABLE,
						       "effect", "NoExecute", "timeAdded", now)) < 0
		   ? -ENOMEM
		   : 0;
}

static int remove_taint(json_t *node, void *arg)
{
	json_t *taints = pk_get(node, "spec.taints");

	(void)arg;
	for (size_t i = json_array_size(taints); i-- > 0;) {
		const char *key =
		    json_string_value(json_object_get(json_array_get(taints, i), "key"));

		if (key && strcmp(key, PK_TAINT_UNREACHABLE) == 0)
			json_array_remove(taints, i);
	}
	return 0;
}

static int set_ready(json_t *node, void *arg)
{
	bool ready = arg != NULL;

	return pk_condition_set(
	    node, "Ready", ready ? "True" : "False", ready ? "NodeReported" : "NodeStatusUnknown",
	    ready ? "podagent reports again"
		  : "podagent stopped reporting: no heartbeat within the grace period",
	    time(NULL));
}

/* The group object a pod or group names, or NULL. */
static json_t *get_group(struct pk_ctl *ctl, const char *ns, const char *name,
			 const char **ret_kind)
{
	json_t *g = NULL;

	if (pk_store_get(ctl->store, &pk_type_pod_group, ns, name, &g) == 0) {
		*ret_kind = "PodGroup";
		return g;
	}
	if (pk_store_get(ctl->store, &pk_type_composite_pod_group, ns, name, &g) == 0) {
		*ret_kind = "CompositePodGroup";
		return g;
	}
	return NULL;
}

/* The walk over stored groups: every group read stays in held until the end. */
struct store_walk {
	struct pk_ctl *ctl;
	const char *ns;
	json_t *held;
};

static json_t *hold_group(struct store_walk *w, const char *name)
{
	const char *kind = NULL;
	json_t *g = name && *name ? get_group(w->ctl, w->ns, name, &kind) : NULL;

	if (g && json_array_append_new(w->held, g) < 0)
		return NULL;
	return g;
}

static void *store_up(void *arg, void *group)
{
	return hold_group(arg, pk_get_string(group, "spec.parentCompositePodGroupName"));
}

static bool store_is_all(void *arg, const void *group)
{
	(void)arg;
	return pk_get(group, "spec.disruptionMode.all") != NULL;
}

/* Name of the highest ancestor group (from pod's group up) with disruptionMode all. */
static char *disruption_unit(struct pk_ctl *ctl, const json_t *pod)
{
	struct store_walk w = {.ctl = ctl, .ns = pk_namespace(pod), .held = json_array()};
	const struct pk_group_walk walk = {.up = store_up, .is_all = store_is_all, .arg = &w};
	json_t *first, *unit;
	char *name = NULL;

	if (!w.held)
		return NULL;
	first = hold_group(&w, pk_pod_group_name(pod));
	unit = first ? pk_disruption_unit(first, &walk) : NULL;
	if (unit)
		name = strdup(pk_name(unit));
	json_decref(w.held);
	return name;
}

/* Whether group name lies in the subtree of root (parents followed in store). */
static bool in_subtree(struct pk_ctl *ctl, const char *ns, const char *group, const char *root)
{
	char cur[256];

	snprintf(cur, sizeof(cur), "%s", group);
	for (int depth = 0; depth < PK_HIERARCHY_WALK_MAX; depth++) {
		const char *kind = NULL;
		json_t *g;

		if (strcmp(cur, root) == 0)
			return true;
		g = get_group(ctl, ns, cur, &kind);
		const char *parent =
		    g ? pk_get_string(g, "spec.parentCompositePodGroupName") : NULL;

		if (!parent) {
			json_decref(g);
			return false;
		}
		snprintf(cur, sizeof(cur), "%s", parent);
		json_decref(g);
	}
	return false;
}

/*
 * One eviction: the pod as it was listed, under its resourceVersion and uid
 * (kernel/write/writer.h).  The write is refused when the stored pod
 * changed since it was listed (a status write, or a pod deleted and created
 * again under the same name, perhaps elsewhere).  A refused pod is read
 * again and, if it is still the pod the node's loss is about (the same uid:
 * a bound pod never moves), evicted under its new version; a pod replaced
 * meanwhile is spared.  A pod still changing after EVICT_ATTEMPTS - 1 tries
 * is evicted by its uid alone, so a lost node never keeps a pod.  The write
 * sets the pod's DisruptionTarget condition and deletes it.
 */
#define EVICT_ATTEMPTS 4

/* Pods to evict, each once (by namespace/name). */
struct evict_set {
	json_t **pods; /* references */
	size_t n, cap;
	struct pk_map seen; /* "ns/name" */
};

static void evict_set_free(struct evict_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		json_decref(s->pods[i]);
	free(s->pods);
	pk_map_free(&s->seen);
	memset(s, 0, sizeof(*s));
}

/* Queue pod's eviction (once per namespace/name); -ENOMEM. */
static int evict_add(struct evict_set *s, json_t *pod)
{
	char key[600];

	snprintf(key, sizeof(key), "%s/%s", pk_namespace(pod), pk_name(pod));
	if (pk_map_get(&s->seen, key))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		json_t **v = realloc(s->pods, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->pods = v;
		s->cap = cap;
	}
	if (pk_map_put(&s->seen, key, pod) < 0)
		return -ENOMEM;
	s->pods[s->n++] = json_incref(pod);
	return 0;
}

/*
 * A refused eviction: the stored pod (cur, else read) goes into retry when
 * it is the same pod (uid), changed since it was listed.
 */
static int evict_refused(struct pk_ctl *ctl, const json_t *listed, const json_t *cur_in,
			 struct evict_set *retry, const char *node, const char *why)
{
	const char *ns = pk_namespace(listed), *name = pk_name(listed),
		   *uid = pk_get_string(listed, "metadata.uid") ?: "";
	json_t *cur = json_incref((json_t *)cur_in);
	int r = cur ? 0 : pk_store_get(ctl->store, &pk_type_pod, ns, name, &cur);

	if (r == -ENOENT)
		return 0; /* gone meanwhile: nothing to evict */
	if (r < 0)
		return r;
	if (strcmp(pk_get_string(cur, "metadata.uid") ?: "", uid) != 0) {
		ctl_log(ctl, 2, "pod %s/%s: not evicted, replaced since node %s %s", ns, name, node,
			why);
		r = 0;
	} else {
		CTL_COUNT(ctl, eviction_conflicts);
		ctl_log(ctl, 2,
			"pod %s/%s: changed since it was listed, evicted at its new version", ns,
			name);
		r = evict_add(retry, cur);
	}
	json_decref(cur);
	return r;
}

/*
 * Every queued eviction in one batch (under each pod's resourceVersion
 * unless by_uid; always under its uid); returns how many were made.  The
 * pods refused for a change since they were listed go into retry.
 */
static int evict_commit(struct pk_ctl *ctl, const struct evict_set *set, struct evict_set *retry,
			bool by_uid, const char *node, const char *why)
{
	const struct pk_write_result *res = NULL;
	char msg[512];
	size_t n = 0;
	int r = pk_writer_batch_begin(ctl->writer), done = 0;

	snprintf(msg, sizeof(msg), "node %s %s", node, why);
	for (size_t i = 0; r == 0 && i < set->n; i++) {
		struct pk_write_ref ref = ctl_ref_of(&pk_type_pod, set->pods[i]);

		if (by_uid)
			ref.rv = 0;
		r = pk_writer_set_condition(ctl->writer, &ref, "DisruptionTarget", "True",
					    "DeletionByTaintManager", msg);
		if (r == 0)
			r = pk_writer_evict(ctl->writer, &ref);
	}
	if (r == 0 && set->n)
		r = ctl_commit(ctl, &res, &n);
	/* items are in the set's order: one per pod */
	for (size_t i = 0; r == 0 && i < n && i < set->n; i++) {
		if (res[i].error == 0) {
			done++;
			CTL_COUNT(ctl, evictions);
			ctl_log(ctl, 2, "evicted pod %s/%s: %s", res[i].ns, res[i].name, msg);
			ctl_reconcile_owner_of(ctl, res[i].object ? res[i].object : set->pods[i]);
		} else if (res[i].error == -PK_WRITE_ECONFLICT) {
			r = evict_refused(ctl, set->pods[i], res[i].object, retry, node, why);
		}
	}
	return r < 0 ? r : done;
}

int ctl_evict_pods(struct pk_ctl *ctl, const json_t *pods, const char *node, const char *why)
{
	struct evict_set set = {0};
	json_t *p;
	size_t i;
	int r = 0, done = 0;

	json_array_foreach(pods, i, p) if (r == 0) r = evict_add(&set, p);
	for (int attempt = 1; r == 0 && attempt <= EVICT_ATTEMPTS && set.n > 0; attempt++) {
		struct evict_set retry = {0};
		bool by_uid = attempt == EVICT_ATTEMPTS;

		if (by_uid)
			ctl_log(
			    ctl, 1,
			    "node %s: %zu pods still changing after %d attempts; evicted by uid",
			    node, set.n, EVICT_ATTEMPTS - 1);
		r = evict_commit(ctl, &set, &retry, by_uid, node, why);
		if (r >= 0) {
			done += r;
			r = 0;
		}
		evict_set_free(&set);
		set = retry;
	}
	evict_set_free(&set);
	return r < 0 ? r : done;
}

/* The pods of the disruption units (namespace/root group keys) of units, into victims. */
static void add_unit_pods(struct pk_ctl *ctl, const struct pk_map *units, json_t *victims,
			  const char *node)
{
	const char *key;
	json_t *all, *p;
	size_t i;

	for (size_t at = 0; pk_map_next(units, &at, &key, NULL);) {
		const char *slash = strchr(key, '/');
		char ns[256];

		if (!slash || (size_t)(slash - key) >= sizeof(ns))
			continue;
		snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
		all = NULL;
		if (pk_store_list(ctl->store, &pk_type_pod, ns, NULL, &all, NULL, NULL) < 0)
			continue;
		json_array_foreach(all, i, p)
		{
			const char *g = pk_pod_group_name(p);

			if (g && in_subtree(ctl, ns, g, slash + 1))
				json_array_append(victims, p);
		}
		json_decref(all);
		ctl_log(ctl, 1, "node %s: disruption unit %s (disruptionMode all) evicted whole",
			node, key);
	}
}

static int evict_node_pods(struct pk_ctl *ctl, const char *node, const char *why)
{
	struct pk_selector *sel = NULL;
	struct pk_map units = {0}; /* "namespace/root group" of the `all` units hit */
	char expr[300], err[128];
	json_t *pods = NULL, *p, *victims = json_array();
	size_t i;
	int r = victims ? 0 : -ENOMEM;

	snprintf(expr, sizeof(expr), "spec.nodeName=%s", node);
	if (r == 0)
		r = pk_selector_parse(expr, true, &sel, err, sizeof(err));
	if (r == 0) {
		struct pk_store_list_opts o = {.fields = sel};

		r = pk_store_list(ctl->store, &pk_type_pod, NULL, &o, &pods, NULL, NULL);
	}
	pk_selector_free(sel);
	json_array_foreach(pods, i, p)
	{
		char *unit = r == 0 ? disruption_unit(ctl, p) : NULL;
		char key[600];

		if (unit) {
			snprintf(key, sizeof(key), "%s/%s", pk_namespace(p), unit);
			if (pk_map_put(&units, key, NULL) < 0)
				r = -ENOMEM;
			free(unit);
		}
		json_array_append(victims, p);
	}
	json_decref(pods);
	/* Whole disruption units: every pod of the `all` subtree goes with it. */
	if (r == 0)
		add_unit_pods(ctl, &units, victims, node);
	pk_map_free(&units);
	if (r == 0)
		r = ctl_evict_pods(ctl, victims, node, why);
	json_decref(victims);
	return r < 0 ? r : 0;
}

int ctl_node_unreachable(struct pk_ctl *ctl, const char *name)
{
	int r = edit_node(ctl, name, false, add_taint, NULL);

	if (r == 0)
		r = edit_node(ctl, name, true, set_ready, NULL);
	CTL_COUNT(ctl, nodes_unreachable);
	ctl_log(ctl, 1,
		"node %s: no heartbeat for %lld ms: tainted %s:NoExecute, evicting its pods", name,
		(long long)ctl->grace_ms, PK_TAINT_UNREACHABLE);
	if (r < 0)
		ctl_log(ctl, 1, "node %s: marking unreachable: %s", name, strerror(-r));
	return evict_node_pods(ctl, name, "is unreachable");
}

int ctl_node_deleted(struct pk_ctl *ctl, const char *name)
{
	ctl_log(ctl, 1, "node %s deleted: evicting its pods", name);
	return evict_node_pods(ctl, name, "was deleted");
}

int ctl_node_recovered(struct pk_ctl *ctl, const char *name)
{
	int r = edit_node(ctl, name, false, remove_taint, NULL);

	if (r == 0)
		r = edit_node(ctl, name, true, set_ready, ctl);
	CTL_COUNT(ctl, nodes_recovered);
	ctl_log(ctl, 1, "node %s: reporting again: taint removed, Ready", name);
	return r;
}

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

int ctl_register_board(struct pk_ctl *ctl, const char *path, char *err, size_t errlen)
{
	struct topo_board *b = topo_board_new();
	json_t *nodes = NULL, *slices = NULL, *n;
	size_t i, created = 0;
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
	json_array_foreach(nodes, i, n)
	{
		struct pk_errors errs = {0};

		pk_set(n, "metadata.annotations", json_pack("{s:s}", PK_ANN_SIMULATED, path));
		r = pk_store_create(ctl->store, n, &errs, NULL);
		pk_errors_clear(&errs);
		if (r == 0)
			created++;
		else if (r != -EEXIST)
			break;
		r = 0;
	}
	ctl_log(ctl, 1, "appliance: board %s: %zu simulated nodes and ResourceSlices, %zu new",
		path, json_array_size(nodes), created);
	json_decref(nodes);
	if (r < 0 && err && errlen)
		snprintf(err, errlen, "%s: registering nodes: %s", path, strerror(-r));
	return r;
}

/* Apply fn to a fresh copy of Node name and write it (sub), retrying conflicts. */
static int edit_node(struct pk_ctl *ctl, const char *name, enum pk_store_sub sub,
		     int (*fn)(json_t *node, void *arg), void *arg)
{
	int r = -EIO;

	for (int attempt = 0; attempt < 3; attempt++) {
		json_t *node = NULL, *out = NULL;
		struct pk_errors errs = {0};

		r = pk_store_get(ctl->store, "Node", NULL, name, &node);
		if (r < 0)
			return r;
		r = fn(node, arg);
		if (r == 0)
			r = pk_store_update(ctl->store, node, sub, &errs, &out);
		json_decref(node);
		pk_errors_clear(&errs);
		if (r == 0) {
			/* An own write is no heartbeat: the loop takes it as seen. */
			pk_appliance_wrote(ctl->app, PK_KIND_NODE, out);
			json_decref(out);
			return 0;
		}
		if (r != -PK_STORE_ECONFLICT)
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

		if (key && strcmp(key, PK_APPLIANCE_TAINT_UNREACHABLE) == 0)
			return 0;
	}
	if (!json_is_array(taints)) {
		taints = json_array();
		if (pk_set(node, "spec.taints", taints) < 0)
			return -ENOMEM;
	}
	pk_time_format(time(NULL), now);
	return json_array_append_new(taints, json_pack("{s:s,s:s,s:s}", "key",
						       PK_APPLIANCE_TAINT_UNREACHABLE, "effect",
						       "NoExecute", "timeAdded", now)) < 0
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

		if (key && strcmp(key, PK_APPLIANCE_TAINT_UNREACHABLE) == 0)
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

	if (pk_store_get(ctl->store, "PodGroup", ns, name, &g) == 0) {
		*ret_kind = "PodGroup";
		return g;
	}
	if (pk_store_get(ctl->store, "CompositePodGroup", ns, name, &g) == 0) {
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
 * One eviction: the pod as it was listed, under its resourceVersion.  The
 * edit is refused when the stored pod changed since it was listed (a status
 * write, or a pod deleted and created again under the same name, perhaps
 * elsewhere).  A refused pod is read again and, if it is still the pod the
 * node's loss is about (the same uid: a bound pod never moves), evicted
 * under its new version; a pod replaced meanwhile is spared.  A pod still
 * changing after EVICT_ATTEMPTS - 1 tries is evicted by its uid alone, so a
 * lost node never keeps a pod.  In the write's own transaction the edit
 * checks the uid once more, sets the pod's DisruptionTarget condition and
 * deletes it.
 */
#define EVICT_ATTEMPTS 4

struct evict_arg {
	char *uid;
	char msg[512];
};

static int evict_apply(json_t *pod, void *arg)
{
	const struct evict_arg *a = arg;

	if (strcmp(pk_get_string(pod, "metadata.uid") ?: "", a->uid) != 0)
		return -PK_STORE_ECONFLICT;
	return pk_condition_set(pod, "DisruptionTarget", "True", "DeletionByTaintManager", a->msg,
				time(NULL));
}

/* Queue pod's eviction into the (ns/name keyed) set of edits to make. */
static int evict_add(json_t *set, json_t *pod)
{
	char key[512];

	snprintf(key, sizeof(key), "%s/%s", pk_namespace(pod), pk_name(pod));
	return json_object_get(set, key) ? 0 : json_object_set(set, key, pod);
}

/*
 * A refused eviction: the stored pod goes into retry when it is the same pod
 * (its uid), changed since it was listed.
 */
static int evict_refused(struct pk_ctl *ctl, const struct pk_store_edit *e,
			 const struct evict_arg *a, json_t *retry, const char *node,
			 const char *why)
{
	json_t *cur = NULL;
	int r = 0;

	if (e->object) /* a stale version: the batch hands back the stored pod */
		cur = json_incref(e->object);
	else
		r = pk_store_get(ctl->store, "Pod", e->ns, e->name, &cur);
	if (r == -ENOENT)
		return 0; /* gone meanwhile: nothing to evict */
	if (r < 0)
		return r;
	if (strcmp(pk_get_string(cur, "metadata.uid") ?: "", a->uid) != 0) {
		ctl_log(ctl, 2, "pod %s/%s: not evicted, replaced since node %s %s", e->ns, e->name,
			node, why);
		r = 0;
	} else {
		CTL_COUNT(ctl, eviction_conflicts);
		ctl_log(ctl, 2,
			"pod %s/%s: changed since it was listed, evicted at its new version", e->ns,
			e->name);
		r = evict_add(retry, cur);
	}
	json_decref(cur);
	return r;
}

/*
 * Every queued eviction in one transaction (under each pod's resourceVersion
 * unless by_uid); returns how many were made.  The pods refused for a change
 * since they were listed go into retry.
 */
static int evict_commit(struct pk_ctl *ctl, json_t *set, json_t *retry, bool by_uid,
			const char *node, const char *why)
{
	size_t n = json_object_size(set), i = 0;
	struct pk_store_edit *e = calloc(n ? n : 1, sizeof(*e));
	struct evict_arg *a = calloc(n ? n : 1, sizeof(*a));
	const char *key, *rv;
	json_t *pod;
	int r = -ENOMEM, done = 0;

	if (!e || !a)
		goto out;
	json_object_foreach(set, key, pod)
	{
		rv = pk_get_string(pod, "metadata.resourceVersion");
		a[i].uid = strdup(pk_get_string(pod, "metadata.uid") ?: "");
		snprintf(a[i].msg, sizeof(a[i].msg), "node %s %s", node, why);
		e[i] = (struct pk_store_edit){.kind = "Pod",
					      .ns = pk_namespace(pod),
					      .name = pk_name(pod),
					      .precondition_rv =
						  rv && !by_uid ? strtoull(rv, NULL, 10) : 0,
					      .apply = evict_apply,
					      .arg = &a[i],
					      .delete_after = true};
		if (!a[i++].uid)
			goto out;
	}
	r = n ? pk_store_edit_batch(ctl->store, e, n) : 0;
	for (i = 0; r == 0 && i < n; i++) {
		if (e[i].rc == 0) {
			done++;
			CTL_COUNT(ctl, evictions);
			ctl_log(ctl, 2, "evicted pod %s/%s: %s", e[i].ns, e[i].name, a[i].msg);
			ctl_reconcile_owner_of(ctl, e[i].object);
		} else if (e[i].rc == -PK_STORE_ECONFLICT) {
			r = evict_refused(ctl, &e[i], &a[i], retry, node, why);
		}
	}
out:
	for (i = 0; e && i < n; i++)
		json_decref(e[i].object);
	for (i = 0; a && i < n; i++)
		free(a[i].uid);
	free(e);
	free(a);
	return r < 0 ? r : done;
}

int ctl_evict_pods(struct pk_ctl *ctl, const json_t *pods, const char *node, const char *why)
{
	json_t *set = json_object(), *p;
	size_t i;
	int r = set ? 0 : -ENOMEM, done = 0;

	json_array_foreach(pods, i, p) if (r == 0) r = evict_add(set, p);
	for (int attempt = 1; r == 0 && attempt <= EVICT_ATTEMPTS && json_object_size(set) > 0;
	     attempt++) {
		json_t *retry = json_object();
		bool by_uid = attempt == EVICT_ATTEMPTS;

		if (by_uid)
			ctl_log(
			    ctl, 1,
			    "node %s: %zu pods still changing after %d attempts; evicted by uid",
			    node, json_object_size(set), EVICT_ATTEMPTS - 1);
		r = retry ? evict_commit(ctl, set, retry, by_uid, node, why) : -ENOMEM;
		if (r >= 0) {
			done += r;
			r = 0;
		}
		json_decref(set);
		set = retry;
	}
	json_decref(set);
	return r < 0 ? r : done;
}

static int evict_node_pods(struct pk_ctl *ctl, const char *node, const char *why)
{
	struct pk_selector *sel = NULL;
	char expr[300], err[128];
	json_t *pods = NULL, *p, *units = json_object(), *victims = json_array();
	size_t i;
	int r;

	if (!units || !victims) {
		json_decref(units);
		json_decref(victims);
		return -ENOMEM;
	}
	snprintf(expr, sizeof(expr), "spec.nodeName=%s", node);
	r = pk_selector_parse(expr, true, &sel, err, sizeof(err));
	if (r == 0) {
		struct pk_store_list_opts o = {.fields = sel};

		r = pk_store_list(ctl->store, "Pod", NULL, &o, &pods, NULL, NULL);
	}
	pk_selector_free(sel);
	if (r < 0) {
		json_decref(units);
		json_decref(victims);
		return r;
	}
	json_array_foreach(pods, i, p)
	{
		char *unit = disruption_unit(ctl, p);
		char key[512];

		if (unit) {
			snprintf(key, sizeof(key), "%s/%s", pk_namespace(p), unit);
			json_object_set_new(units, key, json_pack("[s,s]", pk_namespace(p), unit));
			free(unit);
		}
		json_array_append(victims, p);
	}
	json_decref(pods);
	/* Whole disruption units: every pod of the `all` subtree goes with it. */
	const char *key;
	json_t *u;

	json_object_foreach(units, key, u)
	{
		const char *ns = json_string_value(json_array_get(u, 0));
		const char *root = json_string_value(json_array_get(u, 1));
		json_t *all = NULL;

		if (pk_store_list(ctl->store, "Pod", ns, NULL, &all, NULL, NULL) < 0)
			continue;
		json_array_foreach(all, i, p)
		{
			const char *g = pk_pod_group_name(p);

			if (g && in_subtree(ctl, ns, g, root))
				json_array_append(victims, p);
		}
		json_decref(all);
		ctl_log(ctl, 1, "node %s: disruption unit %s/%s (disruptionMode all) evicted whole",
			node, ns, root);
	}
	json_decref(units);
	r = ctl_evict_pods(ctl, victims, node, why);
	json_decref(victims);
	return r < 0 ? r : 0;
}

int ctl_node_unreachable(struct pk_ctl *ctl, const char *name)
{
	int r = edit_node(ctl, name, PK_SUB_MAIN, add_taint, NULL);

	if (r == 0)
		r = edit_node(ctl, name, PK_SUB_STATUS, set_ready, NULL);
	CTL_COUNT(ctl, nodes_unreachable);
	ctl_log(ctl, 1,
		"node %s: no heartbeat for %lld ms: tainted %s:NoExecute, evicting its pods", name,
		(long long)ctl->grace_ms, PK_APPLIANCE_TAINT_UNREACHABLE);
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
	int r = edit_node(ctl, name, PK_SUB_MAIN, remove_taint, NULL);

	if (r == 0)
		r = edit_node(ctl, name, PK_SUB_STATUS, set_ready, ctl);
	CTL_COUNT(ctl, nodes_recovered);
	ctl_log(ctl, 1, "node %s: reporting again: taint removed, Ready", name);
	return r;
}

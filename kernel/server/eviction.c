/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eviction.c — pods/NAME/eviction (policy/v1 Eviction), gang-aware.
 *
 * The pod's disruption unit is the subtree of its highest ancestor group with
 * disruptionMode `all` (the walk of kernel/api); without one the pod is its
 * own unit.  A unit is evicted whole or not at all: every PodDisruptionBudget
 * of the namespace that selects a pod of the unit is counted over the
 * namespace's pods, and the eviction is refused with 429 TooManyRequests
 * (kube-apiserver's answer, its message naming the unit and the budget) when
 * taking the unit's healthy pods would leave a budget below its desired
 * healthy pods, or an unhealthy pod goes while the budget is short
 * (unhealthyPodEvictionPolicy IfHealthyBudget).  Pods that are Pending,
 * terminal or already being deleted pass without a budget, as upstream.  A pod
 * that more than one budget selects is 500, as upstream.
 *
 * A granted eviction first writes each budget's status under its
 * resourceVersion, the unit's pods named in status.disruptedPods (a
 * concurrent eviction that counted from the same version conflicts and
 * counts again), then gives every pod of the unit DisruptionTarget (reason
 * EvictionByEvictionAPI) and deletes it, in one batch with an Event.  A
 * refusal is an Event too (Warning EvictionBlocked, one per pod, its count
 * raised on each retry).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"
#include "kernel/store/store.h"
#include "kernel/write/writer.h"

#define EVICT_ATTEMPTS 5
#define UNIT_PODS_MAX 100000

struct evict {
	struct pk_store *store;
	const char *ns, *name;
	json_t *pod;	   /* the pod asked for */
	json_t *unit;	   /* the group heading its unit, NULL: the pod alone */
	const char *ukind; /* PodGroup or CompositePodGroup */
	json_t *pods;	   /* the unit's pods that go */
	json_t *budgets;   /* every budget of the namespace */
	json_t *all;	   /* every pod of the namespace */
	enum {
		EVICT_ALLOWED,
		EVICT_BLOCKED,	   /* a budget refuses: 429 */
		EVICT_UNSUPPORTED, /* two budgets over one pod, too many budgets: 500 */
	} refusal;
	char why[1024]; /* the refusal's message */
};

/* ---- the unit ------------------------------------------------------------- */
static json_t *get_group(struct pk_store *st, const char *ns, const char *name,
			 const char **ret_kind)
{
	json_t *g = NULL;

	if (pk_store_get(st, &pk_type_pod_group, ns, name, &g) == 0) {
		*ret_kind = "PodGroup";
		return g;
	}
	if (pk_store_get(st, &pk_type_composite_pod_group, ns, name, &g) == 0) {
		*ret_kind = "CompositePodGroup";
		return g;
	}
	return NULL;
}

struct walk {
	struct evict *e;
	json_t *held; /* every group read, until the walk ends */
};

static json_t *hold(struct walk *w, const char *name)
{
	const char *kind = NULL;
	json_t *g = name && *name ? get_group(w->e->store, w->e->ns, name, &kind) : NULL;

	if (g && json_array_append_new(w->held, g) < 0)
		return NULL;
	return g;
}

static void *walk_up(void *arg, void *group)
{
	return hold(arg, pk_get_string(group, "spec.parentCompositePodGroupName"));
}

static bool walk_is_all(void *arg, const void *group)
{
	(void)arg;
	return pk_get(group, "spec.disruptionMode.all") != NULL;
}

/* e->unit: the group heading the pod's unit, if it has one. */
static int find_unit(struct evict *e)
{
	struct walk w = {.e = e, .held = json_array()};
	const struct pk_group_walk walk = {.up = walk_up, .is_all = walk_is_all, .arg = &w};
	json_t *first, *unit;

	if (!w.held)
		return -ENOMEM;
	first = hold(&w, pk_pod_group_name(e->pod));
	unit = first ? pk_disruption_unit(first, &walk) : NULL;
	if (unit) {
		const char *kind = NULL;

		e->unit = get_group(e->store, e->ns, pk_name(unit), &kind);
		e->ukind = kind;
	}
	json_decref(w.held);
	return 0;
}

/* Whether group lies in the subtree of the unit's head (parents followed). */
static bool in_unit(struct evict *e, const char *group)
{
	char cur[256];

	snprintf(cur, sizeof(cur), "%s", group);
	for (int depth = 0; depth < PK_HIERARCHY_WALK_MAX; depth++) {
		const char *kind = NULL, *parent;
		json_t *g;

		if (strcmp(cur, pk_name(e->unit)) == 0)
			return true;
		g = get_group(e->store, e->ns, cur, &kind);
		parent = g ? pk_get_string(g, "spec.parentCompositePodGroupName") : NULL;
		if (parent)
			snprintf(cur, sizeof(cur), "%s", parent);
		json_decref(g);
		if (!parent)
			return false;
	}
	return false;
}

/* e->pods: the pod, or every pod of its unit not already being deleted. */
static int unit_pods(struct evict *e)
{
	json_t *p;
	size_t i;

	e->pods = json_array();
	if (!e->pods)
		return -ENOMEM;
	if (!e->unit)
		return json_array_append(e->pods, e->pod);
	json_array_foreach(e->all, i, p)
	{
		const char *g = pk_pod_group_name(p);

		if (strcmp(pk_name(p), e->name) == 0) {
			json_array_append(e->pods, p);
			continue;
		}
		if (!g || pk_get(p, "metadata.deletionTimestamp") || !in_unit(e, g))
			continue;
		if (json_array_size(e->pods) >= UNIT_PODS_MAX)
			return -E2BIG;
		json_array_append(e->pods, p);
	}
	return 0;
}

/* ---- budgets ------------------------------------------------------------- */
/* Pending, terminal or being deleted: evicted without a budget, as upstream. */
static bool ignores_budget(const json_t *pod)
{
	const char *phase = pk_get_string(pod, "status.phase");

	return pk_pod_terminal(pod) || !phase || strcmp(phase, "Pending") == 0 ||
	       pk_get(pod, "metadata.deletionTimestamp");
}

static void unit_text(const struct evict *e, char *buf, size_t len)
{
	if (e->unit)
		snprintf(buf, len, "its disruption unit, %s %s/%s (disruptionMode all, %zu pods)",
			 e->ukind, e->ns, pk_name(e->unit), json_array_size(e->pods));
	else
		snprintf(buf, len, "the pod alone");
}

/* How many budgets select pod (stops at 2). */
static int budgets_of(const struct evict *e, const json_t *pod)
{
	json_t *b;
	size_t i;
	int n = 0;

	json_array_foreach(e->budgets, i, b) if (n < 2 && pk_budget_selects(b, pod)) n++;
	return n;
}

/*
 * One budget against the unit: true when it refuses (e->why set); else it
 * lets the unit go, *ret_take of its healthy pods.
 */
static bool budget_refuses(struct evict *e, const json_t *pdb, const struct pk_budget *b,
			   int *ret_take)
{
	const json_t *disrupted = pk_get(pdb, "status.disruptedPods");
	int take = 0, unhealthy = 0;
	json_t *p;
	size_t i;
	char unit[512];

	json_array_foreach(e->pods, i, p)
	{
		if (ignores_budget(p) || !pk_budget_selects(pdb, p))
			continue;
		if (pk_pod_disruption_healthy(p) && !json_object_get(disrupted, pk_name(p)))
			take++;
		else
			unhealthy++;
	}
	*ret_take = take;
	unit_text(e, unit, sizeof(unit));
	if (take > 0 && b->current_healthy - take < b->desired_healthy) {
		snprintf(
		    e->why, sizeof(e->why),
		    "Cannot evict pod as it would violate the pod's disruption budget. The "
		    "disruption budget %s needs %d healthy pods and has %d currently; evicting "
		    "pod %s evicts %s, %d of them healthy under the budget, whole or not at all.",
		    pk_name(pdb), b->desired_healthy, b->current_healthy, e->name, unit, take);
		return true;
	}
	if (unhealthy > 0 && !pk_budget_always_allow(pdb) &&
	    b->current_healthy < b->desired_healthy) {
		snprintf(e->why, sizeof(e->why),
			 "Cannot evict pod as it would violate the pod's disruption budget. The "
			 "disruption budget %s needs %d healthy pods and has %d currently "
			 "(unhealthyPodEvictionPolicy IfHealthyBudget); evicting pod %s evicts %s.",
			 pk_name(pdb), b->desired_healthy, b->current_healthy, e->name, unit);
		return true;
	}
	return false;
}

/* Set a budget's new status (apply of a MODIFY edit). */
static int set_status(json_t *obj, void *arg)
{
	return json_object_set(obj, "status", arg) < 0 ? -ENOMEM : 0;
}

/* A budget's status after the unit goes: its pods in disruptedPods. */
static json_t *status_after(const struct evict *e, const json_t *pdb, struct pk_budget b, int take)
{
	json_t *disrupted = json_deep_copy(pk_get(pdb, "status.disruptedPods")), *p, *st;
	char ts[32];
	size_t i;

	if (!json_is_object(disrupted)) {
		json_decref(disrupted);
		disrupted = json_object();
	}
	pk_time_format((int64_t)time(NULL), ts);
	json_array_foreach(e->pods, i, p) if (!ignores_budget(p) && pk_budget_selects(pdb, p))
	    json_object_set_new(disrupted, pk_name(p), json_string(ts));
	b.current_healthy -= take;
	b.allowed =
	    b.current_healthy - b.desired_healthy > 0 ? b.current_healthy - b.desired_healthy : 0;
	st = pk_budget_status(pdb, &b, disrupted);
	json_decref(disrupted);
	return st;
}

/*
 * Check every budget that selects a pod of the unit: when all let it go,
 * their status edits are written (-PK_STORE_ECONFLICT: one changed
 * meanwhile, count again); when one refuses, e->refusal and e->why say why.
 * 0 or -errno.
 */
static int check_budgets(struct evict *e, bool dry_run)
{
	struct pk_store_edit edits[64];
	json_t *stats[64], *b, *p;
	size_t i, n = 0;
	int r = 0;

	json_array_foreach(e->pods, i, p) if (!ignores_budget(p) && budgets_of(e, p) > 1)
	{
		snprintf(e->why, sizeof(e->why),
			 "This pod has more than one PodDisruptionBudget, which the eviction "
			 "subresource does not support.");
		e->refusal = EVICT_UNSUPPORTED;
		return 0;
	}
	json_array_foreach(e->budgets, i, b)
	{
		struct pk_budget cnt;
		int take = 0;
		bool hits = false;
		size_t j;

		json_array_foreach(e->pods, j, p) hits |=
		    !ignores_budget(p) && pk_budget_selects(b, p);
		if (!hits)
			continue;
		if (n == ELEMENTSOF(edits)) {
			snprintf(e->why, sizeof(e->why),
				 "More than %zu PodDisruptionBudgets select the pods of %s's "
				 "disruption unit.",
				 ELEMENTSOF(edits), e->name);
			e->refusal = EVICT_UNSUPPORTED;
			break;
		}
		if ((r = pk_budget_count(b, e->all, &cnt)) < 0)
			break;
		if (budget_refuses(e, b, &cnt, &take)) {
			e->refusal = EVICT_BLOCKED;
			break;
		}
		const char *rv = pk_get_string(b, "metadata.resourceVersion");
		stats[n] = status_after(e, b, cnt, take);
		edits[n] = (struct pk_store_edit){
		    .op = PK_STORE_EDIT_MODIFY,
		    .kind = &pk_type_pod_disruption_budget,
		    .ns = e->ns,
		    .name = pk_name(b),
		    .precondition_rv = rv ? strtoull(rv, NULL, 10) : 0,
		    .apply = set_status,
		    .arg = stats[n],
		};
		n++;
	}
	if (r == 0 && e->refusal == EVICT_ALLOWED && n > 0 && !dry_run) {
		r = pk_store_edit_batch(e->store, edits, n);
		for (i = 0; r == 0 && i < n; i++)
			if (edits[i].rc < 0)
				r = edits[i].rc == -ENOENT ? -PK_STORE_ECONFLICT : edits[i].rc;
	}
	for (i = 0; i < n; i++) {
		json_decref(stats[i]);
		json_decref(edits[i].object);
	}
	return r;
}

/* ---- the writes ---------------------------------------------------------- */
static json_t *event_new(const struct evict *e, const char *name, const char *type,
			 const char *reason, const char *note)
{
	char ts[32];

	pk_time_format((int64_t)time(NULL), ts);
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s},"
			 "s:s,s:s,s:i,s:s,s:s,s:s}",
			 "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace",
			 e->ns, "involvedObject", "kind", "Pod", "apiVersion", "v1", "namespace",
			 e->ns, "name", e->name, "uid", pk_get_string(e->pod, "metadata.uid") ?: "",
			 "reason", reason, "message", note, "type", type, "source", "component",
			 "podkerneld", "firstTimestamp", ts, "lastTimestamp", ts, "count", 1,
			 "reportingComponent", "podkerneld", "reportingInstance", "podkerneld",
			 "action", "Evict");
}

static struct pk_write_ref event_ref(const json_t *ev)
{
	return (struct pk_write_ref){
	    .kind = &pk_type_event, .ns = pk_namespace(ev), .name = pk_name(ev)};
}

/*
 * Commit w's batch: the result of the pod asked for (name) decides, as the
 * store says it (a precondition: -PK_STORE_ECONFLICT); the others' (a unit's
 * other pods gone meanwhile, its Event) are fine either way.
 */
static int commit_for(struct pk_writer *w, const char *name)
{
	const struct pk_write_result *res = NULL;
	size_t n = 0;
	int r = pk_writer_batch_commit(w, &res, &n);

	for (size_t i = 0; r == 0 && i < n; i++)
		if (res[i].kind == &pk_type_pod && strcmp(res[i].name, name) == 0 &&
		    res[i].error < 0)
			r = res[i].error == -PK_WRITE_ECONFLICT ? -PK_STORE_ECONFLICT
								: res[i].error;
	return r;
}

/* A refusal's Event: one per pod, its count raised on each retry; through the write path. */
static void note_refusal(const struct evict *e)
{
	char name[300], ts[32];
	struct pk_writer *w = NULL;
	json_t *ev = NULL, *old = NULL, *c;
	struct pk_write_ref ref;

	snprintf(name, sizeof(name), "%.240s.eviction-blocked", e->name);
	if (pk_store_get(e->store, &pk_type_event, e->ns, name, &old) == 0) {
		c = pk_get(old, "count");
		pk_time_format((int64_t)time(NULL), ts);
		ev = json_deep_copy(old);
		if (ev &&
		    (json_object_set_new(
			 ev, "count",
			 json_integer((json_is_integer(c) ? json_integer_value(c) : 1) + 1)) < 0 ||
		     json_object_set_new(ev, "lastTimestamp", json_string(ts)) < 0 ||
		     json_object_set_new(ev, "message", json_string(e->why)) < 0)) {
			json_decref(ev);
			ev = NULL;
		}
	} else {
		ev = event_new(e, name, "Warning", "EvictionBlocked", e->why);
	}
	ref = event_ref(ev);
	/* a repeat under the resourceVersion read: a concurrent one is not counted twice */
	if (old && pk_get_string(old, "metadata.resourceVersion"))
		ref.rv = strtoull(pk_get_string(old, "metadata.resourceVersion"), NULL, 10);
	if (ev && pk_writer_store_new(e->store, &w) == 0 && pk_writer_batch_begin(w) == 0 &&
	    (old ? pk_writer_replace(w, &ref, ev) : pk_writer_create(w, &pk_type_event, ev)) == 0)
		commit_for(w, "");
	pk_writer_free(w);
	json_decref(ev);
	json_decref(old);
}

/*
 * Every pod of the unit DisruptionTarget and deleted, the Event with them:
 * one batch of the write path (one transaction of the store).  The pod
 * asked for carries the request's preconditions, the others their uid.
 */
static int evict_pods(struct evict *e, const struct pk_store_write_opts *wo)
{
	struct pk_writer *w = NULL;
	json_t *p, *ev = NULL;
	char note[1024], unit[512], name[300];
	size_t i;
	int r = pk_writer_store_new(e->store, &w);

	if (r == 0)
		r = pk_writer_batch_begin(w);
	json_array_foreach(r == 0 ? e->pods : NULL, i, p)
	{
		bool asked = strcmp(pk_name(p), e->name) == 0;
		const char *rv = asked ? wo->precondition_rv : NULL;
		struct pk_write_ref ref = {
		    .kind = &pk_type_pod,
		    .ns = e->ns,
		    .name = pk_name(p),
		    .rv = rv ? strtoull(rv, NULL, 10) : 0,
		    .uid = asked && wo->precondition_uid ? wo->precondition_uid
							 : pk_get_string(p, "metadata.uid"),
		};

		r = pk_writer_set_condition(w, &ref, "DisruptionTarget", "True",
					    "EvictionByEvictionAPI", "Eviction API: evicting");
		if (r == 0)
			r = pk_writer_evict(w, &ref);
		if (r < 0)
			break;
	}
	if (r == 0 && e->unit) {
		unit_text(e, unit, sizeof(unit));
		snprintf(note, sizeof(note), "Evicted through the eviction subresource with %s",
			 unit);
		snprintf(name, sizeof(name), "%.230s.%llx", e->name,
			 (unsigned long long)time(NULL));
		ev = event_new(e, name, "Normal", "EvictedWithUnit", note);
		r = ev ? pk_writer_create(w, &pk_type_event, ev) : -ENOMEM;
	}
	if (r == 0)
		r = commit_for(w, e->name);
	pk_writer_free(w);
	json_decref(ev);
	return r;
}

/* ---- the request --------------------------------------------------------- */
static void evict_clear(struct evict *e)
{
	json_decref(e->pod);
	json_decref(e->unit);
	json_decref(e->pods);
	json_decref(e->budgets);
	json_decref(e->all);
	*e = (struct evict){.store = e->store, .ns = e->ns, .name = e->name};
}

/* Read the pod, its unit, the namespace's pods and budgets. */
static int evict_read(struct evict *e)
{
	int r = pk_store_get(e->store, &pk_type_pod, e->ns, e->name, &e->pod);

	if (r == 0)
		r = pk_store_list(e->store, &pk_type_pod_disruption_budget, e->ns, NULL,
				  &e->budgets, NULL, NULL);
	if (r == 0)
		r = pk_store_list(e->store, &pk_type_pod, e->ns, NULL, &e->all, NULL, NULL);
	if (r == 0)
		r = find_unit(e);
	if (r == 0)
		r = unit_pods(e);
	return r;
}

static void respond_refused(struct pk_response *resp, const struct evict *e, int code,
			    const char *reason, const char *cause)
{
	json_t *st =
	    json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:{s:s,s:s,s:[{s:s,s:s}]},s:i}", "kind", "Status",
		      "apiVersion", "v1", "metadata", "status", "Failure", "message", e->why,
		      "reason", reason, "details", "name", e->name, "kind", "pods", "causes",
		      "reason", cause, "message", e->why, "code", code);

	pk_srv_respond_json(resp, code, st);
	/* no Retry-After, as kube-apiserver: kubectl drain sees the refusal at once and
	 * retries it itself */
	resp->no_retry_after = true;
}

int pk_srv_evict(struct pk_store *store, const char *ns, const char *name,
		 const struct pk_store_write_opts *wo, struct pk_response *resp)
{
	struct evict e = {.store = store, .ns = ns, .name = name};
	int r = 0;

	for (int attempt = 0; attempt < EVICT_ATTEMPTS; attempt++) {
		evict_clear(&e);
		r = evict_read(&e);
		if (r == 0)
			r = check_budgets(&e, wo->dry_run);
		if (r != -PK_STORE_ECONFLICT)
			break;
	}
	if (r == 0 && e.refusal == EVICT_BLOCKED) {
		respond_refused(resp, &e, 429, "TooManyRequests", "DisruptionBudget");
		if (!wo->dry_run)
			note_refusal(&e);
	} else if (r == 0 && e.refusal == EVICT_UNSUPPORTED) {
		respond_refused(resp, &e, 500, "InternalError", "DisruptionBudget");
	} else if (r == 0) {
		if (!wo->dry_run)
			r = evict_pods(&e, wo);
		if (r == 0)
			pk_srv_respond_json(resp, 201,
					    json_pack("{s:s,s:s,s:{},s:s,s:i}", "kind", "Status",
						      "apiVersion", "v1", "metadata", "status",
						      "Success", "code", 201));
	}
	evict_clear(&e);
	return r;
}

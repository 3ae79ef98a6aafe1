/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preempt.c — workload preemption at the root of a hierarchy.
 *
 * Victims are preemption units of lower priority than the preemptor root,
 * outside its hierarchy: for a running pod, the highest ancestor group (its
 * own PodGroup included) with disruptionMode `all` makes the unit — every
 * running pod of that subtree goes together — otherwise the pod alone.  A
 * unit is eligible only when all its pods have lower priority.
 *
 * Choice of victims (kube-scheduler's "remove all, then reprieve"): assume
 * every eligible unit removed and run the strategy; if the root still does
 * not fit, preemption cannot help and nothing happens.  Otherwise give units
 * back one at a time — highest priority first, then the largest, then the
 * oldest — keeping a
 * unit only when the root still fits without it.  What is left is a victim
 * set in which every unit is needed.  A root with a single pod to place does
 * this per node, as kube-scheduler's SelectVictimsOnNode: only the units on
 * one node are removed and reprieved, and the node whose victims have the
 * lowest top priority (then sum of priorities, then count) wins (a
 * standalone pod must pass every filter on that node; a group's one pod
 * must let its root be placed).  A gang's members may need room on many
 * nodes at once, so its units are removed cluster-wide, and when that leaves
 * the gang without the pods its required pod affinity asks for, once more
 * with those kept.  Victims get DisruptionTarget (reason
 * PreemptionByScheduler) on their pods and, for `all` units, on the groups of
 * the unit; then they are deleted.  The preemptor is scheduled in a later
 * cycle (never in the same cycle as the preemption).  At most
 * SC_PREEMPT_MAX_UNITS units, the lowest-priority ones, are considered
 * cluster-wide (every unit, node by node).
 * A root with a pending pod whose preemptionPolicy is Never preempts nothing.
 * The simulated removal of victims goes through the snapshot, so it frees
 * their host ports and their counts in the affinity and spread index too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-result.h"
#include "kernel/sched/sched-snapshot.h"

/* Units considered per preemption: each costs one placement simulation. */
#define SC_PREEMPT_MAX_UNITS 256

struct unit {
	struct sc_group *group; /* `all` unit, or NULL for a single pod */
	struct sc_vec pods;
	int32_t prio; /* highest priority among its pods */
	bool victim;  /* currently removed in the simulation */
	bool decided; /* reprieved for good */
};

static void collect_running(struct sc_group *g, int depth, struct sc_vec *out)
{
	if (depth > PK_HIERARCHY_WALK_MAX)
		return;
	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];

		if (p->node >= 0 && !p->deleting)
			sc_vec_push(out, p);
	}
	for (size_t i = 0; i < g->children.n; i++)
		collect_running(g->children.v[i], depth + 1, out);
}

/* A group of the forest that exists: stored, and not a pod's implicit group. */
static bool real_group(const struct sc_group *g)
{
	return g && !g->implicit && g->present;
}

static void *forest_up(void *arg, void *group)
{
	struct sc_group *g = group;

	(void)arg;
	return g->spec.parent_key && real_group(g->parent) ? g->parent : NULL;
}

static bool forest_is_all(void *arg, const void *group)
{
	(void)arg;
	return ((const struct sc_group *)group)->spec.disruption == PK_DISRUPTION_ALL;
}

static struct sc_group *unit_group(struct sc_pod *p)
{
	const struct pk_group_walk walk = {.up = forest_up, .is_all = forest_is_all};

	return real_group(p->group) ? pk_disruption_unit(p->group, &walk) : NULL;
}

static void units_free(struct unit *u, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sc_vec_free(&u[i].pods);
	free(u);
}

/* Units of lower priority than prio, outside root's hierarchy. */
static int build_units(struct pk_sched *s, struct sc_group *root, int32_t prio, struct unit **ret,
		       size_t *ret_n)
{
	struct sc_vec *pods = &s->forest.all_pods;
	struct unit *u = calloc(pods->n + 1, sizeof(*u));
	struct pk_map by_group = {0}, taken = {0};
	size_t n = 0;

	if (!u)
		return -ENOMEM;
	for (size_t i = 0; i < pods->n; i++) {
		struct sc_pod *p = pods->v[i];
		struct sc_group *ug;

		struct sc_group *top;

		if (p->node < 0 || p->deleting || !p->group || pk_map_get(&taken, p->key))
			continue;
		top = sc_group_root(p->group, NULL, 0);
		if (top == root)
			continue;
		/* Without a root (missing ancestor, cycle) a pod is its own unit. */
		ug = top ? unit_group(p) : NULL;
		if (ug) {
			if (pk_map_get(&by_group, ug->key))
				continue;
			pk_map_put(&by_group, ug->key, ug);
			u[n].group = ug;
			collect_running(ug, 0, &u[n].pods);
		} else {
			sc_vec_push(&u[n].pods, p);
		}
		for (size_t k = 0; k < u[n].pods.n; k++)
			pk_map_put(&taken, ((struct sc_pod *)u[n].pods.v[k])->key, u[n].pods.v[k]);
		u[n].prio = INT32_MIN;
		for (size_t k = 0; k < u[n].pods.n; k++) {
			int32_t pp = sc_pod_priority(s, u[n].pods.v[k]);

			if (pp > u[n].prio)
				u[n].prio = pp;
		}
		if (u[n].pods.n && u[n].prio < prio)
			n++;
		else
			sc_vec_free(&u[n].pods);
	}
	pk_map_free(&by_group);
	pk_map_free(&taken);
	*ret = u;
	*ret_n = n;
	return 0;
}

/*
 * A total order (units are disjoint, so their first pods' seq differ): the
 * ranking does not depend on the order of the forest's pods.
 */
static int unit_cmp(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->pods.n != y->pods.n)
		return x->pods.n > y->pods.n ? -1 : 1;
	/* Older units are reprieved first: the newest work is preempted. */
	uint64_t sx = ((const struct sc_pod *)x->pods.v[0])->seq;
	uint64_t sy = ((const struct sc_pod *)y->pods.v[0])->seq;

	return sx < sy ? -1 : sx > sy;
}

/* Does the root fit with the units marked victim removed? */
static bool fits(struct sc_ctx *ctx, struct sc_group *root, struct unit *u, size_t n, bool need_new)
{
	struct sc_snapshot *snap = ctx->snap;
	size_t mark = sc_snapshot_mark(snap);
	enum sc_status st;
	bool ok;

	for (size_t i = 0; i < n; i++)
		if (u[i].victim)
			for (size_t k = 0; k < u[i].pods.n; k++)
				sc_snapshot_assume_removed(snap, u[i].pods.v[k]);
	ctx->placed = 0;
	st = ctx->s->ops->place_root(ctx, root);
	ok = st == SC_SUCCESS && (!need_new || ctx->placed > 0);
	sc_snapshot_revert(snap, mark);
	ctx->placed = 0;
	return ok;
}

/* A pending pod of g's subtree with preemptionPolicy: Never, or NULL. */
static const struct sc_pod *never_preempts(const struct sc_group *g, int depth)
{
	if (depth > PK_HIERARCHY_WALK_MAX)
		return NULL;
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (p->cons && p->cons->never_preempt && sc_pod_pending(p))
			return p;
	}
	for (size_t i = 0; i < g->children.n; i++) {
		const struct sc_pod *p = never_preempts(g->children.v[i], depth + 1);

		if (p)
			return p;
	}
	return NULL;
}

/* The one pending pod of g's subtree; NULL when none or more than one. */
static const struct sc_pod *single_pending(const struct sc_group *g, int depth, int *count)
{
	const struct sc_pod *one = NULL;

	if (depth > PK_HIERARCHY_WALK_MAX)
		return NULL;
	for (size_t i = 0; i < g->pods.n && *count < 2; i++)
		if (sc_pod_pending(g->pods.v[i])) {
			one = g->pods.v[i];
			++*count;
		}
	for (size_t i = 0; i < g->children.n && *count < 2; i++) {
		const struct sc_pod *p = single_pending(g->children.v[i], depth + 1, count);

		one = p ? p : one;
	}
	return *count == 1 ? one : NULL;
}

static bool unit_on_node(const struct unit *u, int node)
{
	for (size_t k = 0; k < u->pods.n; k++)
		if (((const struct sc_pod *)u->pods.v[k])->node == node)
			return true;
	return false;
}

/* A node's victims, as kube-scheduler's pickOneNodeForPreemption weighs them. */
struct node_cost {
	int32_t top;  /* the highest victim priority */
	int64_t sum;  /* of the victims' priorities */
	size_t pods;  /* victims */
	uint64_t seq; /* the newest victim (latest start: preempted first) */
	bool ok;      /* the root fits with them gone */
};

static bool cheaper(const struct node_cost *a, const struct node_cost *b)
{
	if (!b->ok)
		return a->ok;
	if (!a->ok)
		return false;
	if (a->top != b->top)
		return a->top < b->top;
	if (a->sum != b->sum)
		return a->sum < b->sum;
	if (a->pods != b->pods)
		return a->pods < b->pods;
	return a->seq > b->seq;
}

/*
 * Does a standalone pod pass every filter on node with the units marked
 * victim removed?  (The filter kube-scheduler runs per candidate node.)
 */
static bool fits_on(struct sc_ctx *ctx, const struct sc_pod *pod, int node, struct unit *u,
		    size_t n)
{
	struct sc_snapshot *snap = ctx->snap;
	size_t mark = sc_snapshot_mark(snap);
	bool ok;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; u[i].victim && k < u[i].pods.n; k++)
			sc_snapshot_assume_removed(snap, u[i].pods.v[k]);
	ok = sc_filter(snap, pod, snap->nodes[node], NULL) == SC_FIT;
	sc_snapshot_revert(snap, mark);
	return ok;
}

/* Does root fit with the units marked victim removed: a standalone pod on node, else anywhere? */
static bool fits_node(struct sc_ctx *ctx, struct sc_group *root, const struct sc_pod *pod, int node,
		      struct unit *u, size_t n, bool need_new)
{
	return root->implicit ? fits_on(ctx, pod, node, u, n) : fits(ctx, root, u, n, need_new);
}

/*
 * SelectVictimsOnNode: every unit with a pod on node removed; if the root
 * then fits, units are given back, highest priority first, while it still
 * fits.  u[i].victim says what is left; the cost goes to ret.
 */
static void victims_on_node(struct sc_ctx *ctx, struct sc_group *root, const struct sc_pod *pod,
			    struct unit *u, size_t n, int node, bool need_new,
			    struct node_cost *ret)
{
	struct pk_sched *s = ctx->s;
	bool any = false;

	*ret = (struct node_cost){.top = INT32_MIN};
	for (size_t i = 0; i < n; i++)
		any |= u[i].victim = unit_on_node(&u[i], node);
	if (!any || !fits_node(ctx, root, pod, node, u, n, need_new)) {
		for (size_t i = 0; i < n; i++)
			u[i].victim = false;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!u[i].victim)
			continue;
		u[i].victim = false;
		if (!fits_node(ctx, root, pod, node, u, n, need_new))
			u[i].victim = true;
	}
	ret->ok = true;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; u[i].victim && k < u[i].pods.n; k++) {
			const struct sc_pod *p = u[i].pods.v[k];
			int32_t pp = sc_pod_priority(s, p);

			ret->top = pp > ret->top ? pp : ret->top;
			ret->sum += pp;
			ret->pods++;
			ret->seq = p->seq > ret->seq ? p->seq : ret->seq;
		}
}

/*
 * A root with one pod to place preempts as kube-scheduler does: victims are
 * chosen per node (victims_on_node) on up to SC_PREEMPT_MAX_NODES nodes
 * that pass the pod's static filters and hold a unit, and the node whose
 * victims cost least wins.  False when no node makes room (u[].victim all
 * clear).
 */
#define SC_PREEMPT_MAX_NODES 100

static bool victims_per_node(struct sc_ctx *ctx, struct sc_group *root, const struct sc_pod *pod,
			     struct unit *u, size_t n, bool need_new)
{
	const struct sc_snapshot *snap = ctx->snap;
	struct node_cost best = {0}, c;
	int best_node = -1, tried = 0;
	bool *held = calloc(snap->nnodes + 1, sizeof(*held));

	if (!held)
		return false;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < u[i].pods.n; k++) {
			int nd = ((const struct sc_pod *)u[i].pods.v[k])->node;

			if (nd >= 0 && (size_t)nd < snap->nnodes)
				held[nd] = true;
		}
	for (size_t nd = 0; nd < snap->nnodes && tried < SC_PREEMPT_MAX_NODES; nd++) {
		if (!held[nd] || sc_filter_static(pod, snap->nodes[nd]) != SC_FIT)
			continue;
		tried++;
		victims_on_node(ctx, root, pod, u, n, (int)nd, need_new, &c);
		if (cheaper(&c, &best)) {
			best = c;
			best_node = (int)nd;
		}
	}
	free(held);
	for (size_t i = 0; i < n; i++)
		u[i].victim = false;
	if (best_node < 0)
		return false;
	victims_on_node(ctx, root, pod, u, n, best_node, need_new, &c);
	return c.ok;
}

/* Does a pending pod of g's subtree need a pod of unit u by its required pod affinity? */
static bool affinity_target(const struct pk_sched *s, const struct sc_group *g,
			    const struct unit *u, int depth)
{
	if (depth > PK_HIERARCHY_WALK_MAX)
		return false;
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		for (size_t k = 0; sc_pod_pending(p) && k < u->pods.n; k++)
			if (sc_interpod_target(&s->snap.terms, p, u->pods.v[k]))
				return true;
	}
	for (size_t i = 0; i < g->children.n; i++)
		if (affinity_target(s, g->children.v[i], u, depth + 1))
			return true;
	return false;
}

/*
 * Remove every unit, then give them back one by one (a gang's victims).
 * When the root does not fit with every unit gone, it is tried again with
 * the units its members' required pod affinity asks for kept: removing
 * those can only hurt it.
 */
static bool victims_cluster_wide(struct sc_ctx *ctx, struct sc_group *root, struct unit *u,
				 size_t n, bool need_new)
{
	bool kept = false;

	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		u[i].victim = true;
	if (!fits(ctx, root, u, n, need_new)) {
		for (size_t i = 0; i < n; i++)
			if (affinity_target(ctx->s, root, &u[i], 0))
				u[i].victim = false, kept = true;
		if (!kept || !fits(ctx, root, u, n, need_new))
			return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (!u[i].victim)
			continue;
		u[i].victim = false;
		if (!fits(ctx, root, u, n, need_new))
			u[i].victim = true;
	}
	return true;
}

/* The victims' pods leave the scheduler for good (the plugins let go of them first). */
static void delete_victims(struct pk_sched *s, struct unit *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!u[i].victim)
			continue;
		for (size_t k = 0; k < u[i].pods.n; k++) {
			struct sc_pod *p = u[i].pods.v[k];
			char *key = strdup(p->key);

			sc_cons_pod_gone(s, p);
			if (key)
				sc_forest_remove_pod(s, key);
			free(key);
		}
	}
}

int sc_preempt(struct sc_ctx *ctx, struct sc_group *root)
{
	struct pk_sched *s = ctx->s;
	int32_t prio = sc_root_priority(s, root);
	bool need_new = root->scheduled, tracing = ctx->tracing;
	struct unit *u = NULL;
	size_t n = 0, nvictims = 0;
	int r, npending = 0;
	char msg[320];
	const struct sc_pod *one = single_pending(root, 0, &npending);

	const struct sc_pod *never = never_preempts(root, 0);

	if (never) {
		sc_trace(ctx, "no preemption for %s %s: pod %s has preemptionPolicy Never",
			 sc_group_kind(root), root->key, never->key);
		return 0;
	}
	if (!sc_victim_floor_below(s, prio)) {
		sc_trace(ctx, "preemption for %s %s (priority %d): no lower-priority victims",
			 sc_group_kind(root), root->key, prio);
		return 0;
	}
	r = build_units(s, root, prio, &u, &n);
	if (r < 0)
		return r;
	qsort(u, n, sizeof(*u), unit_cmp);
	if (!one && n > SC_PREEMPT_MAX_UNITS) {
		/* Keep the lowest-priority units (the end of the order). */
		for (size_t i = 0; i < n - SC_PREEMPT_MAX_UNITS; i++)
			sc_vec_free(&u[i].pods);
		memmove(u, u + (n - SC_PREEMPT_MAX_UNITS), SC_PREEMPT_MAX_UNITS * sizeof(*u));
		n = SC_PREEMPT_MAX_UNITS;
	}
	ctx->tracing = false;
	if (!(one ? victims_per_node(ctx, root, one, u, n, need_new)
		  : victims_cluster_wide(ctx, root, u, n, need_new))) {
		ctx->tracing = tracing;
		sc_trace(ctx, "preemption for %s %s (priority %d): %s", sc_group_kind(root),
			 root->key, prio,
			 !n    ? "no lower-priority victims"
			 : one ? "no node where removing lower-priority victims makes room"
			       : "no set of lower-priority victims makes room");
		units_free(u, n);
		return 0;
	}
	ctx->tracing = tracing;
	snprintf(msg, sizeof(msg), "preempted by %s %s (priority %d)", sc_group_kind(root),
		 root->key, prio);
	for (size_t i = 0; i < n; i++) {
		if (!u[i].victim)
			continue;
		nvictims++;
		if (u[i].group) {
			struct sc_vec groups = {0};

			sc_vec_push(&groups, u[i].group);
			for (size_t k = 0; k < groups.n && k < 4096; k++) {
				struct sc_group *g = groups.v[k];

				if (!g->disrupted) {
					sc_result_condition(ctx->res,
							    g->composite
								? PK_KIND_COMPOSITE_POD_GROUP
								: PK_KIND_POD_GROUP,
							    g->ns, g->name, "DisruptionTarget",
							    "True", "PreemptionByScheduler", msg);
					g->disrupted = true;
				}
				for (size_t c = 0; c < g->children.n; c++)
					sc_vec_push(&groups, g->children.v[c]);
			}
			sc_vec_free(&groups);
		}
		for (size_t k = 0; k < u[i].pods.n; k++) {
			struct sc_pod *p = u[i].pods.v[k];

			sc_trace(ctx, "preempting pod %s (priority %d) for %s %s", p->key,
				 sc_pod_priority(s, p), sc_group_kind(root), root->key);
			sc_result_condition(ctx->res, PK_KIND_POD, p->ns, p->name,
					    "DisruptionTarget", "True", "PreemptionByScheduler",
					    msg);
			sc_result_preempt(ctx->res, p);
			ctx->res->preempted++;
		}
	}
	delete_victims(s, u, n); /* last: units hold pointers to them */
	sc_trace(ctx, "preemption for %s %s (priority %d): %zu of %zu lower-priority units evicted",
		 sc_group_kind(root), root->key, prio, nvictims, n);
	units_free(u, n);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_flavor.c — Kueue's flavor assignment: which flavor of each of a
 * ClusterQueue's resource groups a workload takes, as Kueue's flavor
 * assigner picks it under the ClusterQueue's spec.flavorFungibility.
 *
 * A group the workload asks nothing of gets "-".  Otherwise its flavors are
 * tried in the order listed; one whose nodeTaints the pods do not tolerate
 * is passed over, as is one the caller skips (its nodes did not place the
 * workload).  Of the others, in Kueue's terms:
 *
 *   fit            every covered resource the workload asks for is within
 *                  what the ClusterQueue's nominal quota has left: taken;
 *   fit borrowing  within what it may take from its cohort as well:
 *                  whenCanBorrow MayStopSearch (the default; v1beta1's
 *                  Borrow) takes it, TryNextFlavor goes on and takes it
 *                  only when no later flavor fits without borrowing;
 *   no fit         whenCanPreempt TryNextFlavor (the default) goes on; when
 *                  no flavor fits, the group is pinned, for the caller's
 *                  preemption (queues_preempt.c), to the flavor Kueue's
 *                  flavor assigner prefers: of those where preempting makes
 *                  room, one where every victim is another ClusterQueue's
 *                  (reclaim) over one where some is its own (preempt), then
 *                  one where it does not borrow once they are gone, the
 *                  first of equals; MayStopSearch (v1beta1's Preempt) stops
 *                  at the first flavor where preempting makes room (when
 *                  whenCanBorrow is TryNextFlavor, without borrowing after
 *                  it) and pins the group to it for that preemption.
 *
 * Of the flavors that borrow, TryNextFlavor takes the one that borrows
 * least far up the cohort tree (Kueue's borrowing height, the first of
 * equals).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/queues-internal.h"
#include "topology/topology.h"

/* A ClusterQueue's spec.flavorFungibility: go on past a flavor that borrows, that preempts. */
struct fungibility {
	bool borrow_next, preempt_next;
};

static struct fungibility fungibility_of(const json_t *cq)
{
	const json_t *ff = ctl_at(cq, "spec", "flavorFungibility");
	const char *b = pk_get_string(ff, "whenCanBorrow"),
		   *p = pk_get_string(ff, "whenCanPreempt");

	return (struct fungibility){.borrow_next = b && strcmp(b, "TryNextFlavor") == 0,
				    .preempt_next = !p || strcmp(p, "MayStopSearch") != 0};
}

enum fit { FIT_UNTOLERATED, FIT_NONE, FIT_BORROWING, FIT };

/*
 * why: "insufficient unused quota for RES in flavor F of ClusterQueue CQ, Q
 * more needed", truncated to n as snprintf would; joined without a format,
 * as it is written for every workload that does not fit.
 */
static void short_of(char *why, size_t n, const char *res, const char *f, const char *cq,
		     const char *q)
{
	const char *parts[] = {"insufficient unused quota for ",
			       res,
			       " in flavor ",
			       f,
			       " of ClusterQueue ",
			       cq,
			       ", ",
			       q,
			       " more needed"};
	size_t len = 0;

	if (n == 0)
		return;
	for (size_t i = 0; i < sizeof(parts) / sizeof(*parts) && len < n - 1; i++) {
		size_t k = strlen(parts[i] ? parts[i] : "(null)");

		k = k < n - 1 - len ? k : n - 1 - len;
		memcpy(why + len, parts[i] ? parts[i] : "(null)", k);
		len += k;
	}
	why[len] = '\0';
}

/*
 * How w fits flavor fname of group in cq; why: the last resource short, or
 * the taint; *ret_height how far up the cohort tree it borrows (the most of
 * its resources).
 */
static enum fit flavor_fit(struct q_state *s, const struct q_workload *w, const char *cq,
			   const json_t *group, const char *fname, int *ret_height, char *why,
			   size_t n)
{
	const json_t *fobj = json_object_get(s->flavors, fname), *v;
	const json_t *cqu = json_object_get(s->usage, cq);
	const json_t *covered = json_object_get(group, "coveredResources");
	enum fit fit = FIT;
	const char *res;

	*ret_height = 0;
	if (w->kind == PK_KIND_POD ? !q_pods_tolerated(w, fobj, why, n)
				   : !q_flavor_tolerated(w->obj, w->kind, fobj, why, n))
		return FIT_UNTOLERATED;
	json_object_foreach(w->requests, res, v)
	{
		int64_t want = json_integer_value(v), more;
		char q[64];

		if (want <= 0 || !q_covers_in(covered, res))
			continue;
		more = want - q_tree_available(s->tree, cq, fname, res);
		if (more <= 0) {
			int h = q_tree_borrow_height(s->tree, cq, fname, res, want);

			if (fit == FIT && q_milli_at(cqu, fname, res) + want >
					      q_tree_nominal(s->tree, cq, fname, res))
				fit = FIT_BORROWING;
			*ret_height = h > *ret_height ? h : *ret_height;
			continue;
		}
		fit = FIT_NONE;
		topo_quantity_format(more, pk_board_quantity_format(res), q, sizeof(q));
		short_of(why, n, res, fname, cq, q);
	}
	return fit;
}

bool q_within_nominal(struct q_state *s, const struct q_workload *w, const char *cq,
		      const json_t *flavors)
{
	const json_t *groups = ctl_at(json_object_get(s->cqs, cq), "spec", "resourceGroups"), *g;
	const char *res;
	json_t *x;
	size_t i;

	json_object_foreach(w->requests, res, x) json_array_foreach(groups, i, g)
	{
		const char *f = json_string_value(json_array_get(flavors, i));

		if (q_covers(g, res) && f && strcmp(f, "-") != 0 &&
		    q_milli_at(q_sub(s->usage, cq), f, res) + json_integer_value(x) >
			q_tree_nominal(s->tree, cq, f, res))
			return false;
	}
	return true;
}

/* How preempting makes room in a flavor, Kueue's preemption modes, worst first. */
enum preempt_mode { PM_NONE, PM_PREEMPT, PM_RECLAIM };

/*
 * How preempting makes room for w in cq with group g pinned to flavor f
 * (Kueue's SimulatePreemption): PM_RECLAIM when every victim is another
 * ClusterQueue's of the cohort, PM_PREEMPT when one is cq's own, PM_NONE
 * when no victims make room; *ret_borrows whether w borrows once they are
 * gone.  The accounts are left as they were.
 */
static enum preempt_mode preempt_mode(struct q_state *s, struct q_workload *w, const char *cq,
				      const struct q_pick *pick, size_t g, size_t f,
				      bool *ret_borrows)
{
	struct q_pick pinned = *pick;
	struct q_victim *c = NULL;
	enum preempt_mode mode = PM_NONE;
	size_t nc = 0;
	json_t *flavors;

	pinned.probe = false;
	pinned.pin[g] = (int)f + 1;
	flavors = q_preempt_plan(s, w, cq, &pinned, &c, &nc);
	if (flavors) {
		mode = PM_RECLAIM;
		for (size_t j = 0; j < nc; j++)
			if (!c[j].kept && !c[j].reclaim)
				mode = PM_PREEMPT;
		*ret_borrows = !q_within_nominal(s, w, cq, flavors);
		q_preempt_undo(s, c, nc);
	}
	free(c);
	json_decref(flavors);
	return mode;
}

/*
 * Whether preempting makes room for w in cq with group g pinned to flavor
 * f (and, borrow_next, without borrowing after it).
 */
static bool preempts_in(struct q_state *s, struct q_workload *w, const char *cq,
			const struct q_pick *pick, size_t g, size_t f, bool borrow_next)
{
	bool borrows = false;

	return preempt_mode(s, w, cq, pick, g, f, &borrows) != PM_NONE &&
	       (!borrow_next || !borrows);
}

/*
 * whenCanPreempt TryNextFlavor, when no flavor of group g fits: of the
 * flavors that need preemption (bits of need), the one Kueue's flavor
 * assigner prefers (isPreferred): reclaiming from other ClusterQueues of
 * the cohort over preempting in cq, then not borrowing over borrowing
 * once the victims are gone, the first of equals; -1 when preempting makes
 * room in none.
 */
static int best_preempt(struct q_state *s, struct q_workload *w, const char *cq,
			const struct q_pick *pick, size_t g, uint64_t need)
{
	int best = -1, best_rank = 0;

	for (size_t f = 0; f < Q_MAX_FLAVORS; f++) {
		bool borrows = false;
		enum preempt_mode mode;
		int rank;

		if (!(need >> f & 1))
			continue;
		mode = preempt_mode(s, w, cq, pick, g, f, &borrows);
		rank = (int)mode * 2 + !borrows;
		if (mode != PM_NONE && rank > best_rank) {
			best = (int)f;
			best_rank = rank;
		}
	}
	return best;
}

/*
 * The flavor (index) group g of cq gives w, or -1 and why; *ret_preempt
 * when the search stopped at a flavor where it must preempt.
 */
static int group_pick(struct q_state *s, struct q_workload *w, const char *cq, size_t g,
		      const json_t *group, struct q_pick *pick, bool *ret_preempt, char *why,
		      size_t n)
{
	struct fungibility ff = fungibility_of(json_object_get(s->cqs, cq));
	int borrowing = -1, lowest = 0;
	uint64_t need = 0; /* the flavors that do not fit */
	size_t f;
	json_t *flavor;

	CTL_ARRAY_EACH(json_object_get(group, "flavors"), f, flavor)
	{
		const char *fname = pk_get_string(flavor, "name");
		enum fit fit;
		int height;

		if (!fname || f >= Q_MAX_FLAVORS || (pick->pin[g] && pick->pin[g] != (int)f + 1) ||
		    (pick->skip[g] >> f & 1))
			continue;
		fit = flavor_fit(s, w, cq, group, fname, &height, why, n);
		if (fit == FIT || (fit == FIT_BORROWING && !ff.borrow_next))
			return (int)f;
		if (fit == FIT_BORROWING && (borrowing < 0 || height < lowest)) {
			borrowing = (int)f;
			lowest = height;
		}
		if (fit == FIT_NONE && pick->probe && !ff.preempt_next &&
		    preempts_in(s, w, cq, pick, g, f, ff.borrow_next)) {
			*ret_preempt = true;
			return (int)f;
		}
		need |= fit == FIT_NONE ? UINT64_C(1) << f : 0;
	}
	if (borrowing < 0 && need && pick->probe && ff.preempt_next &&
	    (borrowing = best_preempt(s, w, cq, pick, g, need)) >= 0)
		*ret_preempt = true;
	return borrowing;
}

/* Whether some resource w asks for is covered by no group of cq (why says which). */
static bool uncovered(const json_t *groups, const struct q_workload *w, const char *cq, char *why,
		      size_t n)
{
	const char *res;
	json_t *v;
	size_t g;

	json_object_foreach(w->requests, res, v)
	{
		bool found = false;

		for (g = 0; !found && g < json_array_size(groups); g++)
			found = q_covers(json_array_get(groups, g), res);
		if (!found && json_integer_value(v) > 0 && strcmp(res, "pods") != 0) {
			snprintf(why, n, "resource %s is not covered by ClusterQueue %s", res, cq);
			return true;
		}
	}
	return false;
}

json_t *q_assign(struct q_state *s, struct q_workload *w, const char *cq, struct q_pick *pick,
		 char *why, size_t n)
{
	const json_t *groups = ctl_at(json_object_get(s->cqs, cq), "spec", "resourceGroups"),
		     *group;
	struct q_pick none = {0};
	json_t *out, *v;
	const char *res;
	bool stopped = false;
	size_t g;

	if (!pick)
		pick = &none;
	if (uncovered(groups, w, cq, why, n) || !(out = json_array()))
		return NULL;
	json_array_foreach(groups, g, group)
	{
		bool asked = false, preempt = false;
		int f;

		json_object_foreach(w->requests, res, v) if (!asked) asked =
		    json_integer_value(v) > 0 && q_covers(group, res);
		if (!asked) {
			json_array_append_new(out, json_string("-"));
			continue;
		}
		f = g < Q_MAX_GROUPS ? group_pick(s, w, cq, g, group, pick, &preempt, why, n) : -1;
		if (f < 0) {
			json_decref(out);
			return NULL;
		}
		if (preempt) {
			pick->pin[g] = f + 1;
			stopped = true;
		}
		json_array_append_new(
		    out,
		    json_string(pk_get_string(
			json_array_get(json_object_get(group, "flavors"), (size_t)f), "name")));
	}
	if (stopped) { /* preemption in the pinned flavors, by the caller */
		json_decref(out);
		return NULL;
	}
	return out;
}

bool q_assign_skip(struct q_state *s, const char *cq, const json_t *flavors, struct q_pick *pick)
{
	const json_t *groups = ctl_at(json_object_get(s->cqs, cq), "spec", "resourceGroups"),
		     *group;
	bool more = false;
	size_t g, f;
	json_t *flavor;

	json_array_foreach(groups, g, group)
	{
		const char *took = json_string_value(json_array_get(flavors, g));
		int at = -1, left = 0;

		if (g >= Q_MAX_GROUPS || !took || strcmp(took, "-") == 0)
			continue;
		CTL_ARRAY_EACH(json_object_get(group, "flavors"), f, flavor)
		{
			const char *name = pk_get_string(flavor, "name");

			if (f >= Q_MAX_FLAVORS || !name || (pick->skip[g] >> f & 1))
				continue;
			if (strcmp(name, took) == 0)
				at = (int)f;
			else
				left++;
		}
		if (at >= 0 && left > 0) {
			pick->skip[g] |= UINT64_C(1) << at;
			more = true;
		}
	}
	memset(pick->pin, 0, sizeof(pick->pin));
	return more;
}

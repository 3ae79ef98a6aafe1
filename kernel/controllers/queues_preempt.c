/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_preempt.c — Kueue's classical preemption for quota: which admitted
 * workloads a pending one may take quota back from, as its ClusterQueue's
 * spec.preemption allows, and the fewest of them that make room.
 *
 * Candidates (Kueue's findCandidates): workloads of its own ClusterQueue of
 * lower priority (withinClusterQueue: LowerPriority), and workloads of the
 * other ClusterQueues of its cohort tree that borrow what it needs
 * (reclaimWithinCohort: Any, or LowerPriority: of lower priority only);
 * ordered other ClusterQueues first, then lower priority, then the most
 * recently created.  Which are tried, and whether the preemptor may borrow
 * once they are gone, is Kueue's getTargets: only candidates of its own
 * ClusterQueue: all of them, borrowing allowed; with borrowWithinCohort
 * (policy LowerPriority): when its ClusterQueue is not under its nominal
 * quota in what it needs, only candidates of its own ClusterQueue and those
 * of others below the threshold (its own priority, or maxPriorityThreshold
 * + 1 when lower), borrowing allowed until a candidate at or above the
 * threshold is taken; otherwise, when under its nominal quota, every
 * candidate without borrowing, and at last those of its own ClusterQueue
 * with borrowing.  Candidates are taken in order until the workload fits
 * (a ClusterQueue that stopped borrowing on the way is skipped), then each
 * one it still fits without is spared, last first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/controllers/queues-internal.h"

static const char *policy(const json_t *cq, const char *field)
{
	const char *p = json_string_value(json_object_get(ctl_at(cq, "spec", "preemption"), field));

	return p ? p : "Never";
}

/* Whether v's ClusterQueue uses more than its nominal quota of what v uses. */
static bool borrowing(struct q_state *s, const struct q_workload *v)
{
	const json_t *groups = ctl_at(json_object_get(s->cqs, v->cq), "spec", "resourceGroups"), *g;
	const char *res;
	json_t *x;
	size_t i;

	json_object_foreach(v->requests, res, x) json_array_foreach(groups, i, g)
	{
		const char *f = json_string_value(json_array_get(v->flavors, i));

		if (q_covers(g, res) && f && strcmp(f, "-") != 0 &&
		    q_milli_at(q_sub(s->usage, v->cq), f, res) >
			q_tree_nominal(s->tree, v->cq, f, res))
			return true;
	}
	return false;
}

/*
 * Whether cq is under its nominal quota in every resource w needs
 * preemption for: those of the first flavor (or the one pinned) of each
 * group that it does not fit now (Kueue's
 * queueUnderNominalInResourcesNeedingPreemption).
 */
static bool under_nominal(struct q_state *s, const struct q_workload *w, const char *cq,
			  const struct q_pick *pick)
{
	const json_t *groups = ctl_at(json_object_get(s->cqs, cq), "spec", "resourceGroups"), *g;
	const char *res;
	json_t *x;
	size_t i;

	json_array_foreach(groups, i, g)
	{
		size_t at = pick && i < Q_MAX_GROUPS && pick->pin[i] ? (size_t)pick->pin[i] - 1 : 0;
		const char *f =
		    pk_get_string(json_array_get(json_object_get(g, "flavors"), at), "name");

		json_object_foreach(w->requests, res, x)
		{
			if (!f || !q_covers(g, res) ||
			    json_integer_value(x) <= q_tree_available(s->tree, cq, f, res))
				continue;
			if (q_milli_at(q_sub(s->usage, cq), f, res) >=
			    q_tree_nominal(s->tree, cq, f, res))
				return false;
		}
	}
	return true;
}

static int cmp_victim(const void *a, const void *b)
{
	const struct q_victim *x = a, *y = b;
	int c = (int)y->reclaim - (int)x->reclaim;

	if (c == 0)
		c = (x->v->priority > y->v->priority) - (x->v->priority < y->v->priority);
	if (c == 0)
		c = -strcmp(x->v->created ? x->v->created : "", y->v->created ? y->v->created : "");
	return c;
}

static size_t candidates(struct q_state *s, const struct q_workload *w, const char *cq,
			 struct q_victim *out)
{
	const json_t *obj = json_object_get(s->cqs, cq);
	const char *within = policy(obj, "withinClusterQueue");
	const char *reclaim = policy(obj, "reclaimWithinCohort");
	size_t n = 0;

	for (size_t i = 0; i < s->nw; i++) {
		struct q_workload *v = &s->w[i];
		bool lower = v->priority < w->priority, same;

		if (!v->admitted || v == w || !v->cq || !json_object_get(s->cqs, v->cq))
			continue;
		same = strcmp(v->cq, cq) == 0;
		if (same && strcmp(within, "LowerPriority") == 0 && lower)
			out[n++] = (struct q_victim){.v = v};
		else if (!same &&
			 (strcmp(reclaim, "Any") == 0 ||
			  (strcmp(reclaim, "LowerPriority") == 0 && lower)) &&
			 q_tree_same_cohort(s->tree, cq, v->cq) && borrowing(s, v))
			out[n++] = (struct q_victim){.v = v,
						     .reclaim = true}; /* the policy first: cheap */
	}
	qsort(out, n, sizeof(*out), cmp_victim);
	return n;
}

/* How the candidates are tried: borrowing allowed, and below what priority (has_below). */
struct q_try {
	const struct q_pick *pick; /* the flavors w may take */
	bool borrow;
	bool has_below;
	int64_t below;
};

/* w's flavors as pick allows, within its nominal quota unless borrow; or NULL. */
static json_t *fits(struct q_state *s, struct q_workload *w, const char *cq,
		    const struct q_pick *pick, bool borrow)
{
	struct q_pick p = pick ? *pick : (struct q_pick){0};
	char why[512];
	json_t *f;

	p.probe = false;
	f = q_assign(s, w, cq, &p, why, sizeof(why));
	if (f && !borrow && !q_within_nominal(s, w, cq, f)) {
		json_decref(f);
		f = NULL;
	}
	return f;
}

/* Each victim (last first) that w still fits without is kept (Kueue's fillBackWorkloads). */
static json_t *fill_back(struct q_state *s, struct q_workload *w, const char *cq,
			 struct q_victim *c, size_t k, struct q_try t, json_t *flavors)
{
	for (size_t j = k; j-- > 0;) {
		json_t *again;

		if (c[j].kept)
			continue;
		q_charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, 1);
		again = fits(s, w, cq, t.pick, t.borrow);
		if (again) {
			c[j].kept = true;
			json_decref(flavors);
			flavors = again;
		} else {
			q_charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, -1);
		}
	}
	return flavors;
}

/* w's flavors once the first victims of c are gone (Kueue's minimalPreemptions), or NULL. */
static json_t *minimal(struct q_state *s, struct q_workload *w, const char *cq, struct q_victim *c,
		       size_t nc, struct q_try t, size_t *ret_n)
{
	json_t *flavors = NULL;
	size_t k;

	for (k = 0; k < nc && !flavors; k++) {
		c[k].kept = c[k].reclaim && !borrowing(s, c[k].v);
		if (c[k].kept)
			continue;
		if (c[k].reclaim && t.has_below && c[k].v->priority >= t.below)
			t.borrow = false;
		c[k].while_borrowing = c[k].reclaim && t.has_below && t.borrow;
		q_charge_sign(s, c[k].v, c[k].v->cq, c[k].v->flavors, -1);
		flavors = fits(s, w, cq, t.pick, t.borrow);
	}
	if (flavors) {
		*ret_n = k;
		return fill_back(s, w, cq, c, k, t, flavors);
	}
	for (size_t j = 0; j < k; j++)
		if (!c[j].kept)
			q_charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, 1);
	return NULL;
}

/* Keep the candidates of w's own ClusterQueue and, of others, those of priority below below. */
static size_t keep_only(struct q_victim *c, size_t n, bool others, int64_t below)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (!c[i].reclaim || (others && c[i].v->priority < below))
			c[m++] = c[i];
	return m;
}

/* Kueue's getTargets over the sorted candidates c. */
static json_t *targets(struct q_state *s, struct q_workload *w, const char *cq,
		       const struct q_pick *pick, struct q_victim *c, size_t nc, size_t *ret_n)
{
	const json_t *b = json_object_get(ctl_at(json_object_get(s->cqs, cq), "spec", "preemption"),
					  "borrowWithinCohort");
	const json_t *max = json_object_get(b, "maxPriorityThreshold");
	const char *bp = pk_get_string(b, "policy");
	struct q_try t = {.pick = pick, .borrow = true};
	size_t same = 0;
	json_t *flavors = NULL;

	for (size_t i = 0; i < nc; i++)
		same += !c[i].reclaim;
	if (nc == 0)
		return NULL;
	if (same == nc) /* none of other ClusterQueues: try borrowing */
		return minimal(s, w, cq, c, nc, t, ret_n);
	if (bp && strcmp(bp, "LowerPriority") == 0) {
		t.has_below = true;
		t.below = w->priority;
		if (json_is_integer(max) && json_integer_value(max) < t.below)
			t.below = json_integer_value(max) + 1;
		if (!under_nominal(s, w, cq, pick))
			nc = keep_only(c, nc, true, t.below);
		return minimal(s, w, cq, c, nc, t, ret_n);
	}
	if (under_nominal(s, w, cq, pick)) {
		t.borrow = false;
		flavors = minimal(s, w, cq, c, nc, t, ret_n);
		t.borrow = true;
	}
	if (!flavors)
		flavors = minimal(s, w, cq, c, keep_only(c, nc, false, 0), t, ret_n);
	return flavors;
}

/* Whether cq's spec.preemption takes no candidate at all (candidates() would find none). */
static bool takes_none(const json_t *cq)
{
	const char *within = policy(cq, "withinClusterQueue");
	const char *reclaim = policy(cq, "reclaimWithinCohort");

	return strcmp(within, "LowerPriority") != 0 && strcmp(reclaim, "Any") != 0 &&
	       strcmp(reclaim, "LowerPriority") != 0;
}

json_t *q_preempt_plan(struct q_state *s, struct q_workload *w, const char *cq,
		       const struct q_pick *pick, struct q_victim **ret_c, size_t *ret_n)
{
	struct q_victim *c =
	    takes_none(json_object_get(s->cqs, cq)) ? NULL : calloc(s->nw ? s->nw : 1, sizeof(*c));
	size_t nc = c ? candidates(s, w, cq, c) : 0;
	json_t *flavors = nc ? targets(s, w, cq, pick, c, nc, ret_n) : NULL;

	if (!flavors) {
		free(c);
		c = NULL;
		*ret_n = 0;
	}
	*ret_c = c;
	return flavors;
}

void q_preempt_undo(struct q_state *s, struct q_victim *c, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (!c[j].kept)
			q_charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, 1);
}

/* One write: the admission taken back and spec.suspend true; the workload queues again. */
static int evict_job(struct pk_ctl *ctl, struct q_workload *v)
{
	json_t *obj = json_deep_copy(v->obj);
	struct pk_write_ref ref = ctl_ref_of(pk_type_of(v->kind), v->obj);
	int r = -ENOMEM;

	if (obj && json_is_object(json_object_get(obj, "spec"))) {
		json_object_del(ctl_at(obj, "metadata", "annotations"),
				WB_ANNOTATION_QUEUE_ADMISSION);
		json_object_set_new(json_object_get(obj, "spec"), "suspend", json_true());
		r = ctl_replace(ctl, &ref, obj, NULL);
	}
	json_decref(obj);
	return r;
}

int q_evict(struct pk_ctl *ctl, struct q_workload *v, const char *reason, const char *why)
{
	int r = v->kind == PK_KIND_POD ? q_pods_evict(ctl, v) : evict_job(ctl, v);

	if (r == 0)
		ctl_record_warning(ctl, pk_type_of(pk_kind_of(v->obj)), v->obj, reason, why);
	ctl_log(ctl, r == 0 ? 2 : 1, "%s %s/%s: %s%s%s", v->kind_name, v->ns, v->name, why,
		r == 0 ? "" : ": ", r == 0 ? "" : pk_write_strerror(r));
	return r;
}

int q_preempt_commit(struct pk_ctl *ctl, struct q_state *s, const struct q_workload *w,
		     struct q_victim *c, size_t n)
{
	int r = 0;

	for (size_t j = 0; j < n; j++) {
		struct q_workload *v = c[j].v;
		char msg[700];

		if (c[j].kept)
			continue;
		snprintf(msg, sizeof(msg), "Preempted to accommodate %s %s/%s due to %s",
			 w->kind_name, w->ns, w->name,
			 !c[j].reclaim		? "prioritization in the ClusterQueue"
			 : c[j].while_borrowing ? "reclamation within the cohort while borrowing"
						: "reclamation within the cohort");
		if (r < 0 || q_evict(ctl, v, "Preempted", msg) < 0) {
			q_charge_sign(s, v, v->cq, v->flavors, 1); /* still admitted */
			r = -EAGAIN;
			continue;
		}
		v->admitted = false;
		v->preempted = true;
		q_count_both(s, v, v->cq, "admitted", -1);
		q_count_both(s, v, v->cq, "pending", 1);
	}
	return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * place_kep.c — the "kep" placement strategy: KEP-6012's recursive
 * algorithm (groupRecursiveSchedulingPlacementAlgorithm), greedy and without
 * backtracking across siblings.
 *
 * A group is evaluated within a scope (a list of node indices, the whole
 * cluster at the root).  Without a topology key it is evaluated in its
 * parent's scope.  With a key K, each distinct value of node label K inside
 * the scope is a candidate domain (in value order); candidates that cannot
 * hold every already-bound pod of the subtree are skipped.  Each
 * remaining candidate is evaluated by recursing into the group's children
 * restricted to that domain, then reverted.  Feasible (Success) candidates are
 * scored, the best is evaluated again and kept.
 *
 * Score (higher wins): first the number of pods newly placed in the subtree
 * (greedy), then the packing ratio — the largest, over resources, of what the
 * placement takes divided by what the domain had free — so a placement that
 * fills a small domain beats one that dents a large domain and large domains
 * stay whole; ties go to the first domain in value order.  A candidate that
 * places every pending pod and fills its domain exactly cannot be beaten, so
 * the search stops there; once every pending pod is placed, a later candidate
 * whose packing ratio cannot exceed the best one's (bounded by what the
 * subtree wants over what the candidate has free) is skipped.  Both give the
 * same choice as evaluating every candidate.
 *
 * Leaves place their pending pods in order, each on the node of the scope
 * where it packs tightest (first node on ties), and consult PlacementFeasible
 * after every pod; composites do the same over their children.  Unschedulable
 * or UnschedulableAndUnresolvable aborts the group and reverts its
 * assumptions.  Children that are not admissible count as UU up front
 * (pre-simulation check) and are never simulated.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-snapshot.h"

static enum sc_status eval_group(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				 size_t n);

#define SC_WHY_LIST 3 /* failed candidates named in a group's message */

/* ---- leaves ---------------------------------------------------------------- */

/* Tightest-packing node of the scope for pod, or -1 with its misfits set. */
static int pick_node(void *arg, struct sc_pod *pod, const int *nodes, size_t n)
{
	struct sc_ctx *ctx = arg;
	const struct sc_snapshot *snap = ctx->snap;
	int best = -1, counts[_SC_MISFIT_MAX] = {0}, short_of[SC_MAX_RES] = {0};
	int64_t bnum = 0, bden = 1, bpref = 0;
	bool scores = sc_cons_scores(pod), skipped = false;
	/* the whole cluster in index order: blocks where nothing fits are skipped */
	bool blocks =
	    n == snap->nnodes && nodes == ctx->s->all_nodes && sc_snapshot_blocks(ctx->snap) == 0;
	int rr[SC_MAX_RES], nrr = 0;

	for (int r = 0; r < snap->nres; r++)
		if (pod->req[r] > 0)
			rr[nrr++] = r;
	for (size_t i = 0; i < n; i++) {
		const struct sc_node *node = snap->nodes[nodes[i]];
		int res = 0;
		enum sc_misfit m;

		if (blocks && i % SC_NODE_BLOCK == 0) {
			size_t b = sc_next_block(ctx->snap, i / SC_NODE_BLOCK, pod, rr, nrr);

			skipped |= b != i / SC_NODE_BLOCK;
			if (b * SC_NODE_BLOCK >= n)
				break;
			i = b * SC_NODE_BLOCK;
			node = snap->nodes[nodes[i]];
		}
		m = sc_filter(snap, pod, node, &res);

		if (m != SC_FIT) {
			counts[m]++;
			if (m == SC_MISFIT_RESOURCES)
				short_of[res]++;
			continue;
		}
		int64_t num = 0, den = 1,
			pref = scores ? sc_cons_score(ctx->snap, pod, nodes[i]) : 0;

		/* Tightness: the fullest requested resource after placing the pod. */
		for (int r = 0; r < snap->nres; r++)
			if (pod->req[r] > 0 && node->alloc[r] > 0 &&
			    sc_frac_cmp(sc_add(node->used[r], pod->req[r]), node->alloc[r], num,
					den) > 0) {
				num = sc_add(node->used[r], pod->req[r]);
				den = node->alloc[r];
			}

		/* The pod's preferences first (plugin.h), then tightness. */
		if (best < 0 || pref > bpref ||
		    (pref == bpref && sc_frac_cmp(num, den, bnum, bden) > 0)) {
			best = nodes[i];
			bnum = num;
			bden = den;
			bpref = pref;
			if (num == den && !scores)
				break; /* fills the node exactly: nothing packs tighter */
		}
	}
	if (best < 0 && skipped) { /* every node counted in the message */
		memset(counts, 0, sizeof(counts));
		memset(short_of, 0, sizeof(short_of));
		for (size_t i = 0; i < n; i++) {
			int res = 0;
			enum sc_misfit m = sc_filter(snap, pod, snap->nodes[nodes[i]], &res);

			counts[m]++;
			if (m == SC_MISFIT_RESOURCES)
				short_of[res]++;
		}
		counts[SC_FIT] = 0;
	}
	if (best < 0) /* the message is built only if someone asks (sc_pod_why) */
		sc_pod_set_misfits(pod, n, counts, short_of);
	return best;
}

static enum sc_status eval_leaf(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	const struct sc_leaf_pick pick = {.node = pick_node, .arg = ctx};

	return sc_place_leaf(ctx, g, nodes, n, &pick);
}

/* ---- composites ----------------------------------------------------------- */

static enum sc_status eval_composite(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				     size_t n)
{
	/* KEP-6012's counts over the child groups (sc_feasible() in sched-place.h): the
	 * minimum, placed, not tried yet, Unschedulable, UnschedulableAndUnresolvable */
	int M = sc_group_min(g), S = 0, R, U = 0, UU;
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	enum sc_status st;
	bool *adm = calloc(g->children.n + 1, sizeof(bool));
	const struct sc_group *failed = NULL;

	if (!adm)
		return SC_UNRESOLVABLE;
	UU = sc_admit_children(ctx, g, adm, &failed);
	R = (int)g->children.n - UU;
	st = sc_feasible(M, S, R, U, UU);
	ctx->depth++;
	for (size_t i = 0; i < g->children.n && st < SC_UNSCHEDULABLE; i++) {
		struct sc_group *c = g->children.v[i];
		enum sc_status cst;

		if (!adm[i])
			continue;
		R--;
		cst = eval_group(ctx, c, nodes, n);
		if (cst == SC_SUCCESS) {
			S++;
		} else {
			if (cst == SC_UNSCHEDULABLE)
				U++;
			else
				UU++;
			failed = c;
		}
		st = sc_feasible(M, S, R, U, UU);
	}
	ctx->depth--;
	free(adm);
	if (st >= SC_UNSCHEDULABLE) {
		sc_snapshot_revert(ctx->snap, mark);
		ctx->placed = placed0;
		sc_record_composite_failure(ctx, g, st, M, S, R, U, UU, failed);
	} else {
		sc_record(ctx, g, st, M, S, R, U, UU, SC_WHY_TEXT, NULL, NULL);
	}
	sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=%d UU=%d -> %s", sc_group_kind(g), g->key, M, S, R,
		 U, UU, sc_status_to_string(st));
	return st;
}

static enum sc_status eval_in(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	return g->composite ? eval_composite(ctx, g, nodes, n) : eval_leaf(ctx, g, nodes, n);
}

/* ---- topology: every candidate domain, scored -------------------------------- */

/* Sum of the requests of every pending pod of the subtree. */
static void pending_requests(const struct sc_group *g, int depth, int64_t sum[SC_MAX_RES])
{
	if (depth > PK_HIERARCHY_WALK_MAX)
		return;
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (sc_pod_pending(p))
			for (int r = 0; r < SC_MAX_RES; r++)
				sum[r] = sc_add(sum[r], p->req[r]);
	}
	for (size_t i = 0; i < g->children.n; i++)
		pending_requests(g->children.v[i], depth + 1, sum);
}

struct score {
	size_t placed;
	int64_t num, den; /* packing ratio */
};

static int score_cmp(const struct score *a, const struct score *b)
{
	if (a->placed != b->placed)
		return a->placed > b->placed ? 1 : -1;
	return sc_frac_cmp(a->num, a->den, b->num, b->den);
}

/*
 * Could a candidate with free space free_ score strictly above best?  Its
 * packing ratio is at most max over resources of min(want, free) / free,
 * since it cannot take more than the subtree wants nor more than is free.
 * Skipping it when not gives the same choice as evaluating it (ties go to
 * the earlier domain), only faster.
 */
static bool can_beat(const struct score *best, const int64_t *want, const int64_t *free_, int nres)
{
	for (int r = 0; r < nres; r++) {
		int64_t take = want[r] < free_[r] ? want[r] : free_[r];

		if (free_[r] > 0 && sc_frac_cmp(take, free_[r], best->num, best->den) > 0)
			return true;
	}
	return false;
}

/* Score of the assumptions made since mark, against the domain's free space. */
static void score_of(const struct sc_snapshot *snap, size_t mark, const int64_t *free_,
		     size_t placed, struct score *ret)
{
	int64_t take[SC_MAX_RES] = {0};

	for (size_t i = mark; i < snap->nlog; i++)
		if (snap->log[i].op == SC_UNDO_ASSUME)
			for (int r = 0; r < snap->nres; r++)
				take[r] = sc_add(take[r], snap->log[i].pod->req[r]);
	*ret = (struct score){.placed = placed, .num = 0, .den = 1};
	for (int r = 0; r < snap->nres; r++)
		if (free_[r] > 0 && sc_frac_cmp(take[r], free_[r], ret->num, ret->den) > 0) {
			ret->num = take[r];
			ret->den = free_[r];
		}
}

/* One topology search: the group, its scope by domain, the best so far. */
struct topo_search {
	struct sc_ctx *ctx;
	struct sc_group *g;
	struct sc_part *part;
	struct sc_buckets b;
	int bdom;     /* domain of the subtree's running pods (sc_bound_domain) */
	size_t total; /* pending pods of the subtree */
	int64_t want[SC_MAX_RES];
	int best; /* bucket index of the best candidate, -1 none */
	struct score bscore;
	enum sc_status st;
	size_t ncand, nfailed;
	struct sc_buf why; /* the first failed candidates, for the message */
};

/* Free space of the k-th candidate: the domain's aggregate when it is whole. */
static void candidate_free(const struct topo_search *ts, int k, int64_t free_[SC_MAX_RES])
{
	const struct sc_snapshot *snap = ts->ctx->snap;
	int d = ts->b.dom ? ts->b.dom[k] : k;
	const int *dn = ts->b.order + ts->b.start[k];
	size_t dnn = (size_t)(ts->b.start[k + 1] - ts->b.start[k]);

	memset(free_, 0, SC_MAX_RES * sizeof(int64_t));
	if (dnn == (size_t)ts->part->dom_size[d]) {
		memcpy(free_, ts->part->free[d], SC_MAX_RES * sizeof(int64_t));
		return;
	}
	for (size_t i = 0; i < dnn; i++)
		for (int r = 0; r < snap->nres; r++)
			free_[r] = sc_add(free_[r], sc_sub(snap->nodes[dn[i]]->alloc[r],
							   snap->nodes[dn[i]]->used[r]));
}

/* A candidate that failed: remembered for the message while none succeeded. */
static void candidate_failed(struct topo_search *ts, const char *value, const char *what)
{
	if (ts->nfailed++ < SC_WHY_LIST)
		sc_buf_printf(&ts->why, "%s%s: %s", ts->why.n ? "; " : "", value, what);
}

/*
 * Evaluate the k-th candidate.  Returns true when it scored perfectly: its
 * evaluation is kept and the search ends; otherwise it is reverted.
 */
static bool candidate_eval(struct topo_search *ts, int k)
{
	struct sc_ctx *ctx = ts->ctx;
	struct sc_snapshot *snap = ctx->snap;
	int d = ts->b.dom ? ts->b.dom[k] : k;
	const char *value = ts->part->values[d];
	const int *dn = ts->b.order + ts->b.start[k];
	size_t dnn = (size_t)(ts->b.start[k + 1] - ts->b.start[k]);
	int64_t free_[SC_MAX_RES];
	struct score sc;
	enum sc_status cst;

	if (!dnn)
		return false;
	ts->ncand++;
	sc_stat(ctx, PK_SCHED_STAT_GENERATED, 1);
	if (ts->bdom == -1 || (ts->bdom >= 0 && ts->bdom != d)) {
		sc_trace(ctx, "candidate %s: skipped, running pods of the subtree are elsewhere",
			 value);
		candidate_failed(ts, value, "running pods elsewhere");
		return false;
	}
	candidate_free(ts, k, free_);
	if (ts->best >= 0 && ts->bscore.placed == ts->total &&
	    !can_beat(&ts->bscore, ts->want, free_, snap->nres)) {
		sc_trace(ctx, "candidate %s: skipped, cannot score above %s", value,
			 ts->part->values[ts->b.dom ? ts->b.dom[ts->best] : ts->best]);
		return false;
	}
	size_t mark = sc_snapshot_mark(snap), placed0 = ctx->placed;

	sc_trace(ctx, "candidate %s (%zu nodes):", value, dnn);
	sc_stat(ctx, PK_SCHED_STAT_EVALUATED, 1);
	ctx->depth++;
	cst = eval_in(ctx, ts->g, dn, dnn);
	ctx->depth--;
	if (cst != SC_SUCCESS) {
		sc_trace(ctx, "candidate %s: infeasible (%s)", value, sc_status_to_string(cst));
		if (ts->best < 0) {
			const char *w =
			    ts->nfailed < SC_WHY_LIST ? sc_group_why(snap, ts->g) : NULL;

			candidate_failed(ts, value, w ? w : sc_status_to_string(cst));
		}
		if (cst == SC_UNSCHEDULABLE)
			ts->st = SC_UNSCHEDULABLE;
		return false;
	}
	score_of(snap, mark, free_, ctx->placed - placed0, &sc);
	sc_trace(ctx, "candidate %s: feasible, score placed=%zu packing=%.3f", value, sc.placed,
		 sc.den ? (double)sc.num / (double)sc.den : 0.0);
	if (ts->best < 0 || score_cmp(&sc, &ts->bscore) > 0) {
		ts->best = k;
		ts->bscore = sc;
		if (sc.placed == ts->total && sc.num == sc.den)
			return true; /* nothing can score higher: keep this evaluation */
	}
	sc_snapshot_revert(snap, mark);
	ctx->placed = placed0;
	return false;
}

/* Evaluate the chosen candidate again and keep it. */
static enum sc_status topo_choose(struct topo_search *ts)
{
	struct sc_ctx *ctx = ts->ctx;
	int k = ts->best, d = ts->b.dom ? ts->b.dom[k] : k;
	enum sc_status st;

	sc_trace(ctx, "%s %s: chosen %s=%s, placed=%zu packing=%.3f", sc_group_kind(ts->g),
		 ts->g->key, ts->g->spec.topo_key, ts->part->values[d], ts->bscore.placed,
		 ts->bscore.den ? (double)ts->bscore.num / (double)ts->bscore.den : 0.0);
	ctx->depth++;
	st = eval_in(ctx, ts->g, ts->b.order + ts->b.start[k],
		     (size_t)(ts->b.start[k + 1] - ts->b.start[k]));
	ctx->depth--;
	return st;
}

/* Evaluate the home bucket k; kept (true) when all pending pods fit there. */
static bool home_eval(struct topo_search *ts, int k)
{
	struct sc_ctx *ctx = ts->ctx;
	const int *dn = ts->b.order + ts->b.start[k];
	size_t dnn = (size_t)(ts->b.start[k + 1] - ts->b.start[k]);
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	enum sc_status cst;

	if (!dnn)
		return false;
	sc_stat(ctx, PK_SCHED_STAT_EVALUATED, 1);
	ctx->depth++;
	cst = eval_in(ctx, ts->g, dn, dnn);
	ctx->depth--;
	if (cst == SC_SUCCESS && ctx->placed - placed0 == ts->total) {
		sc_trace(ctx, "%s %s: repaired in its home domain %s=%s", sc_group_kind(ts->g),
			 ts->g->key, ts->g->spec.topo_key,
			 ts->part->values[ts->b.dom ? ts->b.dom[k] : k]);
		ts->best = k;
		return true;
	}
	sc_trace(ctx, "%s %s: home domain has no room (%s), re-placed whole", sc_group_kind(ts->g),
		 ts->g->key, sc_status_to_string(cst));
	sc_snapshot_revert(ctx->snap, mark);
	ctx->placed = placed0;
	return false;
}

/* No candidate succeeded: say which were tried and why they failed. */
static void topo_fail(struct topo_search *ts)
{
	struct sc_group *g = ts->g;
	struct sc_buf msg = {0};

	if (!ts->ncand)
		sc_buf_printf(&msg, "no node in scope has label %s", g->spec.topo_key);
	else
		sc_buf_printf(&msg, "no feasible %s domain among %zu candidates (%s%s)",
			      g->spec.topo_key, ts->ncand, ts->why.s ? ts->why.s : "",
			      ts->nfailed > SC_WHY_LIST ? "; ..." : "");
	sc_record(ts->ctx, g, ts->st, g->eval.M, g->eval.S, g->eval.R, g->eval.U, g->eval.UU,
		  SC_WHY_TEXT, NULL, msg.s);
	sc_trace(ts->ctx, "%s %s: %s -> %s", sc_group_kind(g), g->key, msg.s ? msg.s : "",
		 sc_status_to_string(ts->st));
	sc_buf_free(&msg);
}

static enum sc_status eval_topo(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	struct topo_search ts = {.ctx = ctx, .g = g, .best = -1, .st = SC_UNRESOLVABLE};
	double t0 = sc_stat_clock(ctx);
	bool perfect = false;

	ts.part = sc_snapshot_part(ctx->snap, g->spec.topo_key);
	if (!ts.part || sc_buckets_of(ctx->snap, ts.part, nodes, n, &ts.b) < 0)
		return SC_UNRESOLVABLE;
	ts.bdom = sc_bound_domain(ts.part, g, 0, -2);
	ts.total = sc_count_pending(g, 0);
	pending_requests(g, 0, ts.want);
	sc_trace(ctx, "%s %s: topology %s, candidates in scope of %zu nodes:", sc_group_kind(g),
		 g->key, g->spec.topo_key, n);
	int home_k = sc_home_bucket(ts.part, &ts.b, g, ts.bdom);
	ctx->depth++;
	perfect = home_k >= 0 && home_eval(&ts, home_k);
	for (int k = 0; k < ts.b.nd && !perfect; k++)
		if (k != home_k)
			perfect = candidate_eval(&ts, k);
	ctx->depth--;
	if (perfect) {
		sc_trace(ctx, "%s %s: chosen %s=%s (perfect score)", sc_group_kind(g), g->key,
			 g->spec.topo_key, ts.part->values[ts.b.dom ? ts.b.dom[ts.best] : ts.best]);
		ts.st = SC_SUCCESS;
	} else if (ts.best >= 0) {
		ts.st = topo_choose(&ts);
	} else {
		topo_fail(&ts);
	}
	if (ts.st == SC_SUCCESS)
		sc_note_pick(ctx, g, ts.part->values[ts.b.dom ? ts.b.dom[ts.best] : ts.best],
			     ts.bdom, home_k >= 0 && home_k == ts.best);
	sc_stat(ctx, PK_SCHED_STAT_SEARCH, sc_stat_clock(ctx) - t0);
	sc_buf_free(&ts.why);
	sc_buckets_free(&ts.b);
	return ts.st;
}

static enum sc_status eval_group(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	sc_group_sort(g);
	if (g->spec.topo_key)
		return eval_topo(ctx, g, nodes, n);
	return eval_in(ctx, g, nodes, n);
}

static enum sc_status kep_place_root(struct sc_ctx *ctx, struct sc_group *root)
{
	const int *all = sc_all_nodes(ctx->s);

	if (!all)
		return SC_UNRESOLVABLE;
	return eval_group(ctx, root, all, ctx->snap->nnodes);
}

const struct pk_placement_ops sc_kep_ops = {
    .name = "kep",
    .description = "KEP-6012 recursive placement: greedy, no sibling backtracking, "
		   "every candidate domain evaluated and scored",
    .place_root = kep_place_root,
};

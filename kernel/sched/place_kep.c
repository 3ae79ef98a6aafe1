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

#include "kernel/sched/sched-internal.h"

static enum sc_status eval_group(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				 size_t n);

#define SC_WHY_LIST 3 /* failed candidates named in a group's message */

/* a/b > c/d for non-negative values with positive denominators. */

void sc_record(struct sc_ctx *ctx, struct sc_group *g, enum sc_status st, int M, int S,
			int R, int U, int UU, enum sc_why kind, struct sc_pod *pod, const char *why)
{
	g->stamp = ctx->stamp;
	g->status = st;
	g->M = M;
	g->S = S;
	g->R = R;
	g->U = U;
	g->UU = UU;
	g->why_kind = kind;
	g->why_pod = pod;
	free(g->why);
	g->why = sc_strdup(why);
}

static void record(struct sc_ctx *ctx, struct sc_group *g, enum sc_status st, int M, int S, int R,
		   int U, int UU, const char *why)
{
	sc_record(ctx, g, st, M, S, R, U, UU, SC_WHY_TEXT, NULL, why);
}

const char *sc_pod_why(const struct sc_snapshot *snap, struct sc_pod *pod)
{
	struct sc_buf b = {0};

	if (pod->why || !pod->misfit_set)
		return pod->why;
	sc_buf_printf(&b, "0/%zu nodes fit", pod->scope_n);
	for (int m = 1; m < _SC_MISFIT_MAX; m++) {
		if (!pod->misfit[m])
			continue;
		if (m == SC_MISFIT_RESOURCES) {
			for (int r = 0; r < snap->nres; r++)
				if (pod->short_of[r])
					sc_buf_printf(&b, ", %d insufficient %s", pod->short_of[r],
						      snap->res_name[r]);
		} else {
			sc_buf_printf(&b, ", %d %s", pod->misfit[m], sc_misfit_to_string(m));
		}
	}
	if (!pod->scope_n)
		sc_buf_printf(&b, " (empty domain)");
	pod->why = b.s;
	return pod->why;
}

const char *sc_group_why(const struct sc_snapshot *snap, struct sc_group *g)
{
	const char *pw = g->why_pod ? sc_pod_why(snap, g->why_pod) : NULL;
	char *s = NULL;
	int n = -1;

	if (g->why || g->why_kind == SC_WHY_TEXT)
		return g->why;
	switch (g->why_kind) {
	case SC_WHY_PRESIM:
		n = asprintf(&s, "%d of minCount %d pods exist", g->S + g->R, g->M);
		break;
	case SC_WHY_LEAF:
		n = asprintf(&s, "%d of minCount %d pods placed, %d unschedulable: %s", g->S, g->M,
			     g->U, pw ? pw : "no pods");
		break;
	case SC_WHY_POD:
		n = pw ? asprintf(&s, "%s", pw) : -1;
		break;
	default:
		break;
	}
	g->why = n >= 0 ? s : NULL;
	return g->why;
}

bool sc_pod_pending(const struct sc_pod *p)
{
	return p->node < 0 && !p->node_name && !p->deleting && !p->preempted;
}

bool sc_pod_running(const struct sc_pod *p)
{
	return (p->node >= 0 || p->node_name) && !p->deleting && !p->sim_removed;
}

/* Tightest-packing node of the scope for pod, or -1 with pod->why set. */
static int pick_node(struct sc_ctx *ctx, struct sc_pod *pod, const int *nodes, size_t n)
{
	const struct sc_snapshot *snap = ctx->snap;
	int best = -1, counts[_SC_MISFIT_MAX] = {0}, short_of[SC_MAX_RES] = {0};
	int64_t bnum = 0, bden = 1;
	for (size_t i = 0; i < n; i++) {
		const struct sc_node *node = snap->nodes[nodes[i]];
		int res = 0;
		enum sc_misfit m = sc_filter(snap, pod, node, &res);

		if (m != SC_FIT) {
			counts[m]++;
			if (m == SC_MISFIT_RESOURCES)
				short_of[res]++;
			continue;
		}
		int64_t num = 0, den = 1;

		/* Tightness: the fullest requested resource after placing the pod. */
		for (int r = 0; r < snap->nres; r++)
			if (pod->req[r] > 0 && node->alloc[r] > 0 &&
			    sc_frac_cmp(sc_add(node->used[r], pod->req[r]), node->alloc[r], num, den) > 0) {
				num = sc_add(node->used[r], pod->req[r]);
				den = node->alloc[r];
			}

		if (best < 0 || sc_frac_cmp(num, den, bnum, bden) > 0) {
			best = nodes[i];
			bnum = num;
			bden = den;
			if (num == den)
				break; /* fills the node exactly: nothing packs tighter */
		}
	}
	if (best >= 0)
		return best;
	/* The message is built only if someone asks (sc_pod_why). */
	free(pod->why);
	pod->why = NULL;
	pod->misfit_set = true;
	pod->scope_n = n;
	memcpy(pod->misfit, counts, sizeof(pod->misfit));
	memcpy(pod->short_of, short_of, sizeof(pod->short_of));
	return -1;
}

static enum sc_status eval_leaf(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	int M = sc_group_min(g), S = 0, R = 0, U = 0;
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	enum sc_status st;
	struct sc_pod *last_failed = NULL;

	if (g->has_slice)
		return sc_slice_place_leaf(ctx, g, nodes, n);
	st = sc_leaf_presim(ctx, g, &S, &R);
	if (st >= SC_UNSCHEDULABLE)
		return st;
	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];
		int node;

		if (!sc_pod_pending(p))
			continue;
		R--;
		node = pick_node(ctx, p, nodes, n);
		if (node >= 0 && sc_snapshot_assume(ctx->snap, p, node) == 0) {
			S++;
			ctx->placed++;
		} else {
			U++;
			last_failed = p;
		}
		st = sc_feasible(M, S, R, U, 0);
		if (st >= SC_UNSCHEDULABLE)
			break;
	}
	st = sc_feasible(M, S, R, U, 0);
	if (st >= SC_UNSCHEDULABLE) {
		sc_snapshot_revert(ctx->snap, mark);
		ctx->placed = placed0;
		sc_record(ctx, g, st, M, S, R, U, 0, SC_WHY_LEAF, last_failed, NULL);
	} else {
		sc_record(ctx, g, st, M, S, R, U, 0, U ? SC_WHY_POD : SC_WHY_TEXT, last_failed,
			    NULL);
	}
	sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=%d UU=0 -> %s", sc_group_kind(g), g->key, M, S, R, U,
		 sc_status_to_string(st));
	return st;
}

static enum sc_status eval_composite(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				     size_t n)
{
	int M = sc_group_min(g), S = 0, R = 0, U = 0, UU = 0;
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	enum sc_status st;
	bool *adm = calloc(g->children.n + 1, sizeof(bool));
	const struct sc_group *failed = NULL;

	if (!adm)
		return SC_UNRESOLVABLE;
	for (size_t i = 0; i < g->children.n; i++) {
		struct sc_group *c = g->children.v[i];
		struct sc_buf why = {0};

		adm[i] = sc_group_admissible(c, 0, &why);
		if (adm[i]) {
			R++;
		} else {
			UU++;
			record(ctx, c, SC_UNRESOLVABLE, sc_group_min(c), 0, 0, 0, 0,
			       why.s ? why.s : "not admissible");
			sc_trace(ctx, "%s %s: not admissible (%s) -> UU", sc_group_kind(c), c->key,
				 why.s ? why.s : "");
			failed = failed ? failed : c;
		}
		sc_buf_free(&why);
	}
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
		char why[512];

		sc_snapshot_revert(ctx->snap, mark);
		ctx->placed = placed0;
		const char *fw = failed ? sc_group_why(ctx->snap, (struct sc_group *)failed) : NULL;

		snprintf(why, sizeof(why), "%d of minGroupCount %d child groups placed%s%s%s%s%s",
			 S, M, failed ? "; " : "", failed ? sc_group_kind(failed) : "",
			 failed ? " " : "", failed ? failed->key : "", fw ? ": " : "");
		if (fw)
			strncat(why, fw, sizeof(why) - strlen(why) - 1);
		record(ctx, g, st, M, S, R, U, UU, why);
	} else {
		record(ctx, g, st, M, S, R, U, UU, NULL);
	}
	sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=%d UU=%d -> %s", sc_group_kind(g), g->key, M, S, R,
		 U, UU, sc_status_to_string(st));
	return st;
}

static enum sc_status eval_in(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	return g->composite ? eval_composite(ctx, g, nodes, n) : eval_leaf(ctx, g, nodes, n);
}

/* Domain of the key holding every running pod of the subtree: -2 none, -1 conflict. */
int sc_bound_domain(const struct sc_part *part, const struct sc_group *g, int depth, int dom)
{
	if (depth > 8)
		return dom;
	for (size_t i = 0; i < g->pods.n && dom != -1; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (!sc_pod_running(p) || p->node < 0)
			continue;
		int d = part->node_dom[p->node];

		dom = (dom == -2 || dom == d) && d >= 0 ? d : -1;
	}
	for (size_t i = 0; i < g->children.n && dom != -1; i++)
		dom = sc_bound_domain(part, g->children.v[i], depth + 1, dom);
	return dom;
}

static size_t count_pending(const struct sc_group *g, int depth)
{
	size_t n = 0;

	if (depth > 8)
		return 0;
	for (size_t i = 0; i < g->pods.n; i++)
		n += sc_pod_pending(g->pods.v[i]);
	for (size_t i = 0; i < g->children.n; i++)
		n += count_pending(g->children.v[i], depth + 1);
	return n;
}

/* Sum of the requests of every pending pod of the subtree. */
static void pending_requests(const struct sc_group *g, int depth, int64_t sum[SC_MAX_RES])
{
	if (depth > 8)
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

/*
 * Counting sort of the scope by domain of part: candidate d is
 * order[start[d] .. start[d + 1]).  Nodes without the label are left out.
 */
static int bucket_scope(const struct sc_part *part, const int *nodes, size_t n, int **ret_start,
			int **ret_order)
{
	int *start = calloc((size_t)part->ndom + 2, sizeof(int));
	int *fill = calloc((size_t)part->ndom + 1, sizeof(int));
	int *order = malloc((n + 1) * sizeof(int));

	if (!start || !fill || !order) {
		free(start);
		free(fill);
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (part->node_dom[nodes[i]] >= 0)
			start[part->node_dom[nodes[i]] + 1]++;
	for (int d = 0; d < part->ndom; d++)
		start[d + 1] += start[d];
	for (size_t i = 0; i < n; i++) {
		int d = part->node_dom[nodes[i]];

		if (d >= 0)
			order[start[d] + fill[d]++] = nodes[i];
	}
	free(fill);
	*ret_start = start;
	*ret_order = order;
	return 0;
}

static enum sc_status eval_topo(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	struct sc_snapshot *snap = ctx->snap;
	struct sc_part *part = sc_snapshot_part(snap, g->topo_key);
	int *start = NULL, *order = NULL, bdom, best = -1;
	struct score bscore = {0};
	enum sc_status st = SC_UNRESOLVABLE;
	size_t total = count_pending(g, 0), ncand = 0, nfailed = 0;
	int64_t want[SC_MAX_RES] = {0};
	struct sc_buf why = {0};
	double t0 = sc_stat_clock(ctx);

	if (!part || bucket_scope(part, nodes, n, &start, &order) < 0)
		return SC_UNRESOLVABLE;
	bdom = sc_bound_domain(part, g, 0, -2);
	pending_requests(g, 0, want);
	sc_trace(ctx, "%s %s: topology %s, candidates in scope of %zu nodes:", sc_group_kind(g),
		 g->key, g->topo_key, n);
	ctx->depth++;
	for (int d = 0; d < part->ndom; d++) {
		const int *dn = order + start[d];
		size_t dnn = (size_t)(start[d + 1] - start[d]);
		int64_t free_[SC_MAX_RES] = {0};
		enum sc_status cst;

		if (!dnn)
			continue;
		ncand++;
		sc_stat(ctx, PK_SCHED_STAT_GENERATED, 1);
		if (bdom == -1 || (bdom >= 0 && bdom != d)) {
			sc_trace(ctx,
				 "candidate %s: skipped, running pods of the subtree are elsewhere",
				 part->values[d]);
			if (nfailed++ < SC_WHY_LIST)
				sc_buf_printf(&why, "%s%s: running pods elsewhere",
					      why.n ? "; " : "", part->values[d]);
			continue;
		}
		if (dnn == (size_t)part->dom_size[d]) /* the whole domain: use its aggregate */
			memcpy(free_, part->free[d], sizeof(free_));
		else
			for (size_t i = 0; i < dnn; i++)
				for (int r = 0; r < snap->nres; r++)
					free_[r] =
					    sc_add(free_[r], sc_sub(snap->nodes[dn[i]]->alloc[r],
								    snap->nodes[dn[i]]->used[r]));
		if (best >= 0 && bscore.placed == total &&
		    !can_beat(&bscore, want, free_, snap->nres)) {
			sc_trace(ctx, "candidate %s: skipped, cannot score above %s",
				 part->values[d], part->values[best]);
			continue;
		}
		size_t mark = sc_snapshot_mark(snap), placed0 = ctx->placed;

		sc_trace(ctx, "candidate %s (%zu nodes):", part->values[d], dnn);
		sc_stat(ctx, PK_SCHED_STAT_EVALUATED, 1);
		ctx->depth++;
		cst = eval_in(ctx, g, dn, dnn);
		ctx->depth--;
		if (cst != SC_SUCCESS) {
			sc_trace(ctx, "candidate %s: infeasible (%s)", part->values[d],
				 sc_status_to_string(cst));
			if (best < 0 && nfailed++ < SC_WHY_LIST) {
				const char *w = sc_group_why(snap, g);

				sc_buf_printf(&why, "%s%s: %s", why.n ? "; " : "", part->values[d],
					      w ? w : sc_status_to_string(cst));
			}
			if (cst == SC_UNSCHEDULABLE)
				st = SC_UNSCHEDULABLE;
			continue;
		}
		struct score sc;

		score_of(snap, mark, free_, ctx->placed - placed0, &sc);
		sc_trace(ctx, "candidate %s: feasible, score placed=%zu packing=%.3f",
			 part->values[d], sc.placed,
			 sc.den ? (double)sc.num / (double)sc.den : 0.0);
		if (best < 0 || score_cmp(&sc, &bscore) > 0) {
			best = d;
			bscore = sc;
			if (sc.placed == total && sc.num == sc.den) {
				/* Nothing can score higher: keep this evaluation as is. */
				ctx->depth--;
				sc_trace(ctx, "%s %s: chosen %s=%s (perfect score)",
					 sc_group_kind(g), g->key, g->topo_key, part->values[d]);
				st = SC_SUCCESS;
				goto out;
			}
		}
		sc_snapshot_revert(snap, mark);
		ctx->placed = placed0;
	}
	ctx->depth--;
	if (best >= 0) {
		const int *dn = order + start[best];
		size_t dnn = (size_t)(start[best + 1] - start[best]);

		sc_trace(ctx, "%s %s: chosen %s=%s, placed=%zu packing=%.3f", sc_group_kind(g),
			 g->key, g->topo_key, part->values[best], bscore.placed,
			 bscore.den ? (double)bscore.num / (double)bscore.den : 0.0);
		ctx->depth++;
		st = eval_in(ctx, g, dn, dnn);
		ctx->depth--;
	} else {
		struct sc_buf msg = {0};

		if (!ncand)
			sc_buf_printf(&msg, "no node in scope has label %s", g->topo_key);
		else
			sc_buf_printf(&msg, "no feasible %s domain among %zu candidates (%s%s)",
				      g->topo_key, ncand, why.s ? why.s : "",
				      nfailed > SC_WHY_LIST ? "; ..." : "");
		record(ctx, g, st, g->M, g->S, g->R, g->U, g->UU, msg.s);
		sc_trace(ctx, "%s %s: %s -> %s", sc_group_kind(g), g->key, msg.s ? msg.s : "",
			 sc_status_to_string(st));
		sc_buf_free(&msg);
	}
out:
	sc_stat(ctx, PK_SCHED_STAT_SEARCH, sc_stat_clock(ctx) - t0);
	sc_buf_free(&why);
	free(start);
	free(order);
	return st;
}

static enum sc_status eval_group(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n)
{
	sc_group_sort(g);
	if (g->topo_key)
		return eval_topo(ctx, g, nodes, n);
	return eval_in(ctx, g, nodes, n);
}

static enum sc_status kep_place_root(struct sc_ctx *ctx, struct sc_group *root)
{
	size_t n = ctx->snap->nnodes;
	int *all = malloc((n + 1) * sizeof(int));
	enum sc_status st;

	if (!all)
		return SC_UNRESOLVABLE;
	for (size_t i = 0; i < n; i++)
		all[i] = (int)i;
	st = eval_group(ctx, root, all, n);
	free(all);
	return st;
}

const struct pk_placement_ops sc_kep_ops = {
    .name = "kep",
    .description = "KEP-6012 recursive placement: greedy, no sibling backtracking, "
		   "every candidate domain evaluated and scored",
    .place_root = kep_place_root,
};

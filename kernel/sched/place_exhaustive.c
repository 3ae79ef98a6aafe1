/* SPDX-License-Identifier: Apache-2.0 */
/*
 * place_exhaustive.c — "exhaustive", a test-only placement strategy: the
 * oracle the property tests and bench_placement compare the others with.  It
 * is not in the strategy table (podctl does not list it); it is found by name.
 *
 * It enumerates every assignment of the root's pending pods to nodes (or to
 * no node), depth first, with capacity charged through the snapshot's
 * assumptions, and keeps the best valid one: the root reaches Success first,
 * then the most pods placed.  Valid means KEP-6012's rules: a leaf succeeds
 * with minCount running-or-placed pods, a composite with minGroupCount
 * succeeding admissible children, a group that does not succeed places
 * nothing, and every pod of a group with a topology key (running pods too)
 * sits in one domain of that key.  Topology is checked incrementally as pods
 * are placed; identical pods of one leaf are placed in non-decreasing node
 * order (they are interchangeable), and a branch that cannot beat the best
 * is cut.  Instances beyond EX_MAX_PODS pending pods or EX_MAX_NODES nodes
 * are refused (UnschedulableAndUnresolvable), as are TPU slice groups (their
 * hosts must form a box), and EX_MAX_STEPS bounds the
 * search (the trace says when it was hit).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-snapshot.h"

#define EX_MAX_PODS 14
#define EX_MAX_NODES 16
#define EX_MAX_GROUPS 64
#define EX_MAX_STEPS 20000000L

struct ex_group {
	struct sc_group *g;
	int parent;
	struct sc_part *part; /* of topo_key, or NULL */
	int dom, cnt;	      /* domain holding the subtree's pods, how many */
	bool adm, broken;
	int running, assumed; /* pods of this leaf */
	bool ok;
	int sub; /* pods assumed in the subtree (evaluation) */
};

struct ex {
	struct sc_ctx *ctx;
	struct ex_group gr[EX_MAX_GROUPS];
	int ng;
	struct sc_pod *pods[EX_MAX_PODS];
	int pg[EX_MAX_PODS];
	bool same[EX_MAX_PODS]; /* interchangeable with the previous pod */
	int np, nn;
	int choice[EX_MAX_PODS], best[EX_MAX_PODS];
	bool best_ok;
	int best_placed;
	long steps;
	bool truncated;
};

static int collect(struct ex *x, struct sc_group *g, int parent, bool adm, int depth)
{
	struct sc_buf why = {0};
	int me;

	if (depth > PK_HIERARCHY_WALK_MAX || x->ng >= EX_MAX_GROUPS || g->spec.has_slice)
		return -E2BIG; /* a slice's box is not among the assignments searched */
	sc_group_sort(g);
	me = x->ng++;
	x->gr[me] = (struct ex_group){.g = g, .parent = parent, .dom = -1};
	x->gr[me].adm = adm && (parent < 0 || sc_group_admissible(g, 0, &why));
	sc_buf_free(&why);
	if (g->spec.topo_key) {
		x->gr[me].part = sc_snapshot_part(x->ctx->snap, g->spec.topo_key);
		if (!x->gr[me].part)
			return -ENOMEM;
	}
	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];

		if (sc_pod_running(p)) {
			x->gr[me].running++;
			if (p->node < 0)
				continue;
			for (int a = me; a >= 0; a = x->gr[a].parent) {
				struct ex_group *e = &x->gr[a];
				int d;

				if (!e->part)
					continue;
				d = e->part->node_dom[p->node];
				if (d < 0 || (e->cnt && e->dom != d))
					e->broken = true;
				e->dom = d;
				e->cnt++;
			}
		} else if (sc_pod_pending(p) && x->gr[me].adm) {
			if (x->np >= EX_MAX_PODS)
				return -E2BIG;
			x->pods[x->np] = p;
			x->pg[x->np] = me;
			x->same[x->np] = x->np > 0 && x->pg[x->np - 1] == me &&
					 memcmp(x->pods[x->np - 1]->req, p->req,
						SC_MAX_RES * sizeof(*p->req)) == 0 &&
					 !p->nsel && !p->nterms && !p->ntols &&
					 !x->pods[x->np - 1]->nsel && !x->pods[x->np - 1]->nterms &&
					 !x->pods[x->np - 1]->ntols;
			x->np++;
		}
	}
	for (size_t i = 0; i < g->children.n; i++) {
		int r = collect(x, g->children.v[i], me, x->gr[me].adm, depth + 1);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Statuses of the current assignment; false when it is not valid. */
static bool evaluate(struct ex *x)
{
	for (int i = x->ng - 1; i >= 0; i--) {
		struct ex_group *e = &x->gr[i];
		int S = 0;

		e->sub += e->assumed;
		if (!e->g->composite) {
			S = e->running + e->assumed;
		} else {
			for (int c = i + 1; c < x->ng; c++)
				if (x->gr[c].parent == i && x->gr[c].ok)
					S++;
		}
		e->ok = e->adm && !e->broken && S >= sc_group_min(e->g);
		if (!e->ok && e->sub)
			return false;
		if (e->parent >= 0)
			x->gr[e->parent].sub += e->sub;
	}
	return true;
}

static void visit(struct ex *x, int i, int placed)
{
	struct sc_snapshot *snap = x->ctx->snap;

	if (++x->steps > EX_MAX_STEPS) {
		x->truncated = true;
		return;
	}
	if (x->best_ok && placed + (x->np - i) <= x->best_placed)
		return; /* cannot beat the best */
	if (i == x->np) {
		bool valid;

		for (int g = 0; g < x->ng; g++)
			x->gr[g].sub = 0;
		valid = evaluate(x);
		if (valid && ((x->gr[0].ok && !x->best_ok) ||
			      (x->gr[0].ok == x->best_ok && placed > x->best_placed))) {
			x->best_ok = x->gr[0].ok;
			x->best_placed = placed;
			memcpy(x->best, x->choice, sizeof(x->best));
		}
		return;
	}
	struct sc_pod *p = x->pods[i];
	int lo = x->same[i] ? x->choice[i - 1] : 0;

	for (int c = lo; c <= x->nn && !x->truncated; c++) {
		x->choice[i] = c;
		if (c == x->nn) {
			visit(x, i + 1, placed);
			break;
		}
		if (sc_filter(snap, p, snap->nodes[c], NULL) != SC_FIT)
			continue;
		int a, bad = 0;

		for (a = x->pg[i]; a >= 0; a = x->gr[a].parent) {
			struct ex_group *e = &x->gr[a];

			if (e->part) {
				int d = e->part->node_dom[c];

				if (d < 0 || (e->cnt && e->dom != d)) {
					bad = 1;
					break;
				}
			}
		}
		if (bad)
			continue;
		size_t mark = sc_snapshot_mark(snap);

		if (sc_snapshot_assume(snap, p, c) < 0)
			continue;
		int saved[EX_MAX_GROUPS];

		for (a = x->pg[i]; a >= 0; a = x->gr[a].parent) {
			struct ex_group *e = &x->gr[a];

			saved[a] = e->dom;
			if (e->part) {
				e->dom = e->part->node_dom[c];
				e->cnt++;
			}
		}
		x->gr[x->pg[i]].assumed++;
		visit(x, i + 1, placed + 1);
		x->gr[x->pg[i]].assumed--;
		for (a = x->pg[i]; a >= 0; a = x->gr[a].parent) {
			struct ex_group *e = &x->gr[a];

			if (e->part) {
				e->cnt--;
				e->dom = saved[a];
			}
		}
		sc_snapshot_revert(snap, mark);
	}
}

static enum sc_status ex_place_root(struct sc_ctx *ctx, struct sc_group *root)
{
	struct ex *x = calloc(1, sizeof(*x));
	enum sc_status st;
	int r;

	if (!x)
		return SC_UNRESOLVABLE;
	x->ctx = ctx;
	x->nn = (int)ctx->snap->nnodes;
	r = x->nn > EX_MAX_NODES ? -E2BIG : collect(x, root, -1, true, 0);
	if (r < 0) {
		sc_record(ctx, root, SC_UNRESOLVABLE, sc_group_min(root), 0, 0, 0, 0, SC_WHY_TEXT,
			  NULL, "instance too large for the exhaustive search (or a TPU slice)");
		sc_trace(ctx, "exhaustive: instance too large (%d pods, %d nodes)", x->np, x->nn);
		free(x);
		return SC_UNRESOLVABLE;
	}
	visit(x, 0, 0);
	sc_trace(ctx, "exhaustive: %ld steps%s, best: root %s, %d pods placed", x->steps,
		 x->truncated ? " (step limit hit)" : "", x->best_ok ? "Success" : "fails",
		 x->best_placed);
	if (x->best_ok)
		for (int i = 0; i < x->np; i++)
			if (x->best[i] < x->nn &&
			    sc_snapshot_assume(ctx->snap, x->pods[i], x->best[i]) == 0) {
				x->gr[x->pg[i]].assumed++;
				ctx->placed++;
			}
	for (int g = 0; g < x->ng; g++)
		x->gr[g].sub = 0;
	evaluate(x);
	for (int g = 0; g < x->ng; g++) {
		struct ex_group *e = &x->gr[g];
		int S = e->g->composite ? 0 : e->running + e->assumed;

		if (e->g->composite)
			for (int c = g + 1; c < x->ng; c++)
				S += x->gr[c].parent == g && x->gr[c].ok;
		sc_record(ctx, e->g, e->ok && x->best_ok ? SC_SUCCESS : SC_UNSCHEDULABLE,
			  sc_group_min(e->g), S, 0, 0, 0, SC_WHY_TEXT, NULL,
			  e->ok && x->best_ok ? NULL : "no valid assignment found exhaustively");
	}
	st = x->best_ok ? SC_SUCCESS : SC_UNSCHEDULABLE;
	free(x);
	return st;
}

const struct pk_placement_ops sc_exhaustive_ops = {
    .name = "exhaustive",
    .description = "test-only oracle: every assignment of a small root's pods",
    .place_root = ex_place_root,
};

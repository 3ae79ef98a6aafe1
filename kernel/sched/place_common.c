/* SPDX-License-Identifier: Apache-2.0 */
/*
 * place_common.c — what every placement strategy uses, kept out of any one
 * strategy's file (as Slurm keeps plugins/topology/common/).
 *
 * A strategy evaluates groups within scopes (lists of node indices) and
 * records each evaluation on the group (sc_record); the failure messages are
 * built only when someone reads them (sc_pod_why, sc_group_why).  The scope
 * of a group with a topology key is split into its candidate domains by the
 * snapshot's counting sort (sc_buckets_of).  A leaf places its pending pods
 * in order with the shared loop of sc_place_leaf, the strategy choosing each
 * pod's node through a callback (a slice-shape leaf goes to the snapshot's
 * extension that places slices, slice.c); a composite first sets aside the
 * children that are not admissible (sc_admit_children) and, when it fails,
 * says which child failed and why (sc_record_composite_failure).  The
 * PlacementFeasible rule itself is feasible.c's, below this file: it records
 * and traces nothing, so the leaf's pre-simulation check, which does, is
 * here (sc_leaf_presim).
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

/* ---- recording an evaluation and its message ---------------------------- */

/* M, S, R, U, UU: KEP-6012's counts of g's children (sc_feasible() in sched-place.h). */
void sc_record(struct sc_ctx *ctx, struct sc_group *g, enum sc_status st, int M, int S, int R,
	       int U, int UU, enum sc_why kind, struct sc_pod *pod, const char *why)
{
	g->eval.stamp = ctx->stamp;
	g->eval.status = st;
	g->eval.M = M;
	g->eval.S = S;
	g->eval.R = R;
	g->eval.U = U;
	g->eval.UU = UU;
	g->eval.why_kind = kind;
	g->eval.why_pod = pod;
	free(g->eval.why);
	g->eval.why = sc_strdup(why);
}

const char *sc_pod_why(const struct sc_snapshot *snap, struct sc_pod *pod)
{
	struct sc_pod_fail *f = pod->cycle.fail;
	struct sc_buf b = {0};

	if (sc_cons_refusal(pod))
		return sc_cons_refusal(pod);
	if (!f || f->why)
		return f ? f->why : NULL;
	sc_buf_printf(&b, "0/%zu nodes fit", f->scope_n);
	for (int m = 1; m < _SC_MISFIT_MAX; m++) {
		if (!f->misfit[m])
			continue;
		if (m == SC_MISFIT_RESOURCES) {
			for (int r = 0; r < snap->nres; r++)
				if (f->short_of[r])
					sc_buf_printf(&b, ", %d insufficient %s", f->short_of[r],
						      snap->res_name[r]);
		} else {
			sc_buf_printf(&b, ", %d %s", f->misfit[m], sc_misfit_to_string(m));
		}
	}
	if (!f->scope_n)
		sc_buf_printf(&b, " (empty domain)");
	sc_cons_why(pod, &b);
	f->why = b.s;
	return f->why;
}

const char *sc_group_why(const struct sc_snapshot *snap, struct sc_group *g)
{
	const char *pw = g->eval.why_pod ? sc_pod_why(snap, g->eval.why_pod) : NULL;
	char *s = NULL;
	int n = -1;

	if (g->eval.why || g->eval.why_kind == SC_WHY_TEXT)
		return g->eval.why;
	switch (g->eval.why_kind) {
	case SC_WHY_PRESIM:
		n = asprintf(&s, "%d of minCount %d pods exist", g->eval.S + g->eval.R, g->eval.M);
		break;
	case SC_WHY_LEAF:
		n = asprintf(&s, "%d of minCount %d pods placed, %d unschedulable: %s", g->eval.S,
			     g->eval.M, g->eval.U, pw ? pw : "no pods");
		break;
	case SC_WHY_POD:
		n = pw ? asprintf(&s, "%s", pw) : -1;
		break;
	default:
		break;
	}
	g->eval.why = n >= 0 ? s : NULL;
	return g->eval.why;
}

void sc_pod_set_misfits(struct sc_pod *pod, size_t scope_n, const int *counts, const int *short_of)
{
	struct sc_pod_fail *f = pod->cycle.fail;

	if (!f && !(f = pod->cycle.fail = calloc(1, sizeof(*f))))
		return; /* no record: the failure is told without its counts */
	free(f->why);
	f->why = NULL;
	f->scope_n = scope_n;
	memcpy(f->misfit, counts, sizeof(f->misfit));
	memcpy(f->short_of, short_of, sizeof(f->short_of));
}

/* ---- pods and subtrees ---------------------------------------------------- */

bool sc_pod_pending(const struct sc_pod *p)
{
	return p->node < 0 && !p->node_name && !p->deleting && !p->preempted && sc_cons_admits(p);
}

bool sc_pod_running(const struct sc_pod *p)
{
	return (p->node >= 0 || p->node_name) && !p->deleting && !p->cycle.sim_removed;
}

int sc_bound_domain(const struct sc_part *part, const struct sc_group *g, int depth, int dom)
{
	if (depth > PK_HIERARCHY_WALK_MAX)
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

size_t sc_count_pending(const struct sc_group *g, int depth)
{
	size_t n = 0;

	if (depth > PK_HIERARCHY_WALK_MAX)
		return 0;
	for (size_t i = 0; i < g->pods.n; i++)
		n += sc_pod_pending(g->pods.v[i]);
	for (size_t i = 0; i < g->children.n; i++)
		n += sc_count_pending(g->children.v[i], depth + 1);
	return n;
}

int sc_home_bucket(const struct sc_part *part, const struct sc_buckets *b, const struct sc_group *g,
		   int bdom)
{
	const char *home = g->home ? g->home : g->spec.home;

	if (!home || bdom != -2)
		return -1;
	for (int k = 0; k < b->nd; k++) {
		int d = b->dom ? b->dom[k] : k;

		if (strcmp(part->values[d], home) == 0)
			return k;
	}
	return -1;
}

void sc_note_pick(struct sc_ctx *ctx, struct sc_group *g, const char *value, int bdom,
		  bool home_chosen)
{
	bool placed_before = g->home || g->spec.home;

	free(g->pick);
	g->pick = strdup(value);
	g->pick_stamp = ctx->stamp;
	g->pick_repair = SC_REPAIR_NONE;
	if (placed_before && bdom == -2)
		g->pick_repair = home_chosen ? SC_REPAIR_IN_PLACE : SC_REPAIR_WHOLE;
}

/* ---- the leaf loop ----------------------------------------------------------- */

enum sc_status sc_leaf_presim(struct sc_ctx *ctx, struct sc_group *g, int *ret_S, int *ret_R)
{
	int M = sc_group_min(g), S = 0, R = 0, UU = 0;
	enum sc_status st;
	struct sc_pod *refused = NULL;

	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];

		if (sc_pod_running(p)) {
			S++;
		} else if (sc_pod_pending(p)) {
			R++;
		} else if (sc_cons_refusal(p) && p->node < 0 && !p->node_name && !p->deleting) {
			UU++; /* a field not implemented or not parsed, or a claim held */
			if (!refused)
				refused = p;
		}
	}
	st = sc_feasible(M, S, R, 0, UU);
	if (st >= SC_UNSCHEDULABLE && refused) {
		st = SC_UNRESOLVABLE;
		sc_record(ctx, g, st, M, S, R, 0, UU, SC_WHY_POD, refused, NULL);
		sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=0 UU=%d -> %s (%s)", sc_group_kind(g),
			 g->key, M, S, R, UU, sc_status_to_string(st), sc_cons_refusal(refused));
	} else if (st >= SC_UNSCHEDULABLE) {
		sc_record(ctx, g, st, M, S, R, 0, 0, SC_WHY_PRESIM, NULL, NULL);
		sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=0 UU=0 -> %s (pre-simulation: %s)",
			 sc_group_kind(g), g->key, M, S, R, sc_status_to_string(st),
			 ctx->tracing ? sc_group_why(ctx->snap, g) : "");
	}
	*ret_S = S;
	*ret_R = R;
	return st;
}

/* A slice-shape leaf goes to the snapshot's extension that places them. */
static enum sc_status ext_place_leaf(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				     size_t n)
{
	const struct sc_snapshot *snap = ctx->snap;

	for (int i = 0; i < snap->next; i++)
		if (snap->ext[i].ops->place_leaf)
			return snap->ext[i].ops->place_leaf(ctx, g, nodes, n);
	sc_record(ctx, g, SC_UNRESOLVABLE, sc_group_min(g), 0, 0, 0, 0, SC_WHY_TEXT, NULL,
		  "no slice placement registered");
	return SC_UNRESOLVABLE;
}

/* Passes over a leaf's failed pods while the one before placed some (bounded). */
#define SC_LEAF_PASSES 8
/* Domains of a required pod affinity key a failed leaf is tried in, one by one. */
#define SC_LEAF_DOMAINS 32

/* A leaf's counts as its pods are tried (KEP-6012's, sc_feasible() in sched-place.h). */
struct leaf_try {
	int S; /* pods placed (running, or placed in this attempt) */
	int R; /* pods not tried yet */
	int U; /* pods that did not fit (a failed pod always counts here) */
	struct sc_pod *last_failed;
};

/*
 * One attempt at g's pending pods on nodes, in order; a pod that does not
 * fit is tried again in a later pass when pods after it were placed (a
 * member whose required affinity a later member satisfies).  Unless a pod
 * with required pod affinity failed, this is the one pass of old, which
 * stops as soon as minCount is out of reach.
 */
static enum sc_status leaf_attempt(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				   size_t n, const struct sc_leaf_pick *pick, int M,
				   struct leaf_try *t)
{
	bool waits = false; /* a pod with required pod affinity failed: others may help it */

	for (int pass = 0; pass < SC_LEAF_PASSES; pass++) {
		bool failed = false, progress = false;

		t->U = 0;
		for (size_t i = 0; i < g->pods.n && !(pick->minimum_only && t->S >= M); i++) {
			struct sc_pod *p = g->pods.v[i];
			int node;

			if (!sc_pod_pending(p) || p->cycle.assumed >= 0)
				continue;
			if (pass == 0)
				t->R--;
			node = pick->node(pick->arg, p, nodes, n);
			if (node >= 0 && sc_snapshot_assume(ctx->snap, p, node) == 0) {
				t->S++;
				ctx->placed++;
				progress = progress || failed || pass > 0;
			} else {
				t->U++;
				t->last_failed = p;
				failed = true;
				waits = waits || sc_interpod_affinity_key(p) != NULL;
			}
			if (pass == 0 && !waits &&
			    sc_feasible(M, t->S, t->R, t->U, 0) >= SC_UNSCHEDULABLE)
				break;
		}
		if (!t->U || !waits || !progress || (pick->minimum_only && t->S >= M))
			break;
	}
	return sc_feasible(M, t->S, t->R, t->U, 0);
}

/* The required pod affinity key of a pending pod of g, or NULL. */
static const char *leaf_affinity_key(const struct sc_group *g)
{
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];
		const char *k = sc_pod_pending(p) ? sc_interpod_affinity_key(p) : NULL;

		if (k)
			return k;
	}
	return NULL;
}

/*
 * A leaf whose members need each other (required pod affinity) may be
 * locked out by its first member's choice: try it again within each domain
 * of the affinity's topology key in turn (the first SC_LEAF_DOMAINS values
 * in node order), as a unit.  SC_SUCCESS or SC_WAIT leaves the placement
 * assumed and t set; else everything is reverted.
 */
static enum sc_status leaf_by_domain(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				     size_t n, const struct sc_leaf_pick *pick, int M,
				     const struct leaf_try *start, struct leaf_try *t)
{
	const char *key = leaf_affinity_key(g), *seen[SC_LEAF_DOMAINS];
	size_t nseen = 0, mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	int *sub = key ? malloc(n * sizeof(*sub)) : NULL;
	enum sc_status st = SC_UNSCHEDULABLE;

	for (size_t i = 0; sub && i < n && nseen < SC_LEAF_DOMAINS && st >= SC_UNSCHEDULABLE; i++) {
		const char *v = sc_node_label(ctx->snap->nodes[nodes[i]], key);
		size_t m = 0, k;

		for (k = 0; v && k < nseen && strcmp(seen[k], v) != 0; k++)
			;
		if (!v || k < nseen)
			continue;
		seen[nseen++] = v;
		for (size_t j = i; j < n; j++) {
			const char *w = sc_node_label(ctx->snap->nodes[nodes[j]], key);

			if (w && strcmp(w, v) == 0)
				sub[m++] = nodes[j];
		}
		*t = *start;
		st = leaf_attempt(ctx, g, sub, m, pick, M, t);
		sc_trace(ctx, "%s %s: within %s=%s: %s", sc_group_kind(g), g->key, key, v,
			 sc_status_to_string(st));
		if (st >= SC_UNSCHEDULABLE) {
			sc_snapshot_revert(ctx->snap, mark);
			ctx->placed = placed0;
		}
	}
	free(sub);
	return st;
}

enum sc_status sc_place_leaf(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n,
			     const struct sc_leaf_pick *pick)
{
	int M = sc_group_min(g);
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	enum sc_status st;
	struct leaf_try start = {0}, t, byd;

	if (g->spec.has_slice)
		return ext_place_leaf(ctx, g, nodes, n);
	st = sc_leaf_presim(ctx, g, &start.S, &start.R);
	if (st >= SC_UNSCHEDULABLE)
		return st;
	t = start;
	st = leaf_attempt(ctx, g, nodes, n, pick, M, &t);
	if (st >= SC_UNSCHEDULABLE) {
		sc_snapshot_revert(ctx->snap, mark);
		ctx->placed = placed0;
		if (leaf_by_domain(ctx, g, nodes, n, pick, M, &start, &byd) < SC_UNSCHEDULABLE)
			t = byd, st = sc_feasible(M, t.S, t.R, t.U, 0);
	}
	if (st >= SC_UNSCHEDULABLE)
		sc_record(ctx, g, st, M, t.S, t.R, t.U, 0, SC_WHY_LEAF, t.last_failed, NULL);
	else
		sc_record(ctx, g, st, M, t.S, t.R, t.U, 0, t.U ? SC_WHY_POD : SC_WHY_TEXT,
			  t.last_failed, NULL);
	sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=%d UU=0 -> %s%s", sc_group_kind(g), g->key, M, t.S,
		 t.R, t.U, sc_status_to_string(st), pick->minimum_only ? " (minimum)" : "");
	return st;
}

/* ---- composites ------------------------------------------------------------------ */

int sc_admit_children(struct sc_ctx *ctx, struct sc_group *g, bool *ret_adm,
		      const struct sc_group **ret_failed)
{
	int UU = 0;

	for (size_t i = 0; i < g->children.n; i++) {
		struct sc_group *c = g->children.v[i];
		struct sc_buf why = {0};

		ret_adm[i] = sc_group_admissible(c, 0, &why);
		if (!ret_adm[i]) {
			UU++;
			sc_record(ctx, c, SC_UNRESOLVABLE, sc_group_min(c), 0, 0, 0, 0, SC_WHY_TEXT,
				  NULL, why.s ? why.s : "not admissible");
			sc_trace(ctx, "%s %s: not admissible (%s) -> UU", sc_group_kind(c), c->key,
				 why.s ? why.s : "");
			if (!*ret_failed)
				*ret_failed = c;
		}
		sc_buf_free(&why);
	}
	return UU;
}

void sc_record_composite_failure(struct sc_ctx *ctx, struct sc_group *g, enum sc_status st, int M,
				 int S, int R, int U, int UU, const struct sc_group *failed)
{
	const char *fw = failed ? sc_group_why(ctx->snap, (struct sc_group *)failed) : NULL;
	char why[512];

	snprintf(why, sizeof(why), "%d of minGroupCount %d child groups placed%s%s%s%s%s", S, M,
		 failed ? "; " : "", failed ? sc_group_kind(failed) : "", failed ? " " : "",
		 failed ? failed->key : "", fw ? ": " : "");
	if (fw)
		strncat(why, fw, sizeof(why) - strlen(why) - 1);
	sc_record(ctx, g, st, M, S, R, U, UU, SC_WHY_TEXT, NULL, why);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * place_fit.c — the "fit" placement strategy (the default): KEP-6012's
 * statuses and PlacementFeasible at every level, with a search that finds
 * placements the KEP's greedy creation-order pass misses, and stops early.
 *
 * Minimums first.  The hierarchy is evaluated with every leaf placing only
 * the pods its minCount still needs (running pods count); once the root is
 * Success, a second pass places every extra pending pod greedily inside the
 * domains already chosen.  A large optional gang can no longer take the
 * slots a sibling's minimum needs (KEP "resource stealing").
 *
 * Largest first, with bounded backtracking.  A composite evaluates its
 * admissible children by decreasing dominant share of what their minimums
 * request (ties in creation order).  When PlacementFeasible says the
 * composite can no longer succeed, it backtracks chronologically: the latest
 * placed child with a topology key moves to its next candidate domain and
 * every later child is evaluated again.  Every candidate simulation costs one
 * unit of a budget of FIT_BUDGET per root; when it runs out the search stops
 * with the best found so far and the explain trace says so.
 *
 * Best-first candidates.  A group with a topology key ranks the domains of
 * its scope from the partition summaries alone (free capacity per resource
 * and per domain, kept by the snapshot on every assume and revert): domains
 * whose free capacity cannot hold the minimums are pruned without
 * simulating a pod; the rest are ordered by (holds every pending pod, fewest
 * scarce resources left idle, fewest untouched coarser domains broken,
 * tightest packing, natural value order) and simulated in that order; the
 * first feasible one is taken.  Only the first is found by a linear scan; the
 * ranking is sorted only when a second candidate is needed.
 *
 * Nodes.  A pod goes on the node of its scope with the fewest scarce
 * resources (anything but pods, cpu, memory, ephemeral-storage) it would
 * leave idle, then the fewest accelerators stranded for the workload seen
 * (strand.c), then the fewest untouched domains (of the keys in use) it
 * would break, weighted by their size (Slurm-like fragmentation cost), then
 * the tightest packing, then the first node.
 *
 * Never worse than the KEP.  When this search does not reach Success the
 * root is evaluated again with the KEP algorithm (place_kep.c) and its result
 * stands, so statuses and messages of failures are the KEP's.  When it
 * succeeds but leaves extra pods pending, the KEP pass runs too and the
 * placement that binds more pods stands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/macro.h"
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-snapshot.h"
#include "kernel/sched/sched-strand.h"

#define FIT_BUDGET 4096 /* candidate simulations per root */
/*
 * A standalone pod with placement constraints in a scope of more than
 * FIT_SAMPLE_SCOPE nodes takes the best of the first FIT_SAMPLE_NODES nodes
 * that pass every filter, starting where the previous such pod stopped
 * (kube-scheduler's percentageOfNodesToScore and its rotating start): its
 * filters cost more than capacity tests, and a pod outside a gang has no
 * sibling its choice could hurt.  A pod of a gang always sees every node.
 */
#define FIT_SAMPLE_SCOPE 1024
#define FIT_SAMPLE_NODES 16

struct fit {
	struct sc_ctx *ctx;
	long budget;
	bool exhausted;
	size_t unplaced; /* pending pods the extras pass found no node for */
	bool scarce[SC_MAX_RES];
	bool have_total;
	int64_t total[SC_MAX_RES]; /* free over the cluster, for dominant shares (lazy) */
	struct sc_part *parts[16]; /* partitions of the keys in use */
	size_t nparts;
	const struct sc_strand *strand; /* the workload profile's classes (strand.c) */
};

static enum sc_status eval_group(struct fit *f, struct sc_group *g, const int *nodes, size_t n,
				 int start, int *ret_rank);

/* ---- demand ------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sum over resources of the k smallest of vals[0..n) per resource (vals[i][r]). */
static void sum_smallest(int64_t (*vals)[SC_MAX_RES], size_t n, size_t k, int nres, int64_t *out)
{
	int64_t *col = malloc((n + 1) * sizeof(int64_t));

	if (!col)
		return; /* a lower bound of zero prunes nothing */
	for (int r = 0; r < nres; r++) {
		for (size_t i = 0; i < n; i++)
			col[i] = vals[i][r];
		qsort(col, n, sizeof(int64_t), cmp_i64);
		for (size_t i = 0; i < k && i < n; i++)
			out[r] = sc_add(out[r], col[i]);
	}
	free(col);
}

/*
 * What g's subtree still requests: all pending pods (full) or a lower bound
 * of what its minimums need (min).  Added into need.
 */
static void group_need(const struct sc_snapshot *snap, const struct sc_group *g, bool min,
		       int depth, int64_t *need)
{
	if (depth > PK_HIERARCHY_WALK_MAX)
		return;
	if (!g->composite) {
		size_t pend = 0, k;
		int running = 0, M = sc_group_min(g);
		bool same = true;
		const struct sc_pod *first = NULL;

		for (size_t i = 0; i < g->pods.n; i++) {
			const struct sc_pod *p = g->pods.v[i];

			if (sc_pod_running(p)) {
				running++;
			} else if (sc_pod_pending(p) && p->cycle.assumed < 0) {
				pend++;
				if (!first)
					first = p;
				else if (memcmp(first->req, p->req, sizeof(p->req)) != 0)
					same = false;
			}
		}
		if (!pend)
			return;
		k = !min ? pend : M > running ? (size_t)(M - running) : 0;
		if (k > pend)
			k = pend;
		if (!k)
			return;
		if (same || k == pend) {
			for (size_t i = 0; i < g->pods.n; i++) {
				const struct sc_pod *p = g->pods.v[i];

				if (!same && !(sc_pod_pending(p) && p->cycle.assumed < 0))
					continue;
				if (same && p != first)
					continue;
				for (int r = 0; r < snap->nres; r++)
					need[r] = sc_add(need[r],
							 same ? (int64_t)((uint64_t)p->req[r] * k)
							      : p->req[r]);
			}
			return;
		}
		int64_t(*vals)[SC_MAX_RES] = calloc(pend, sizeof(*vals));
		size_t j = 0;

		if (!vals)
			return;
		for (size_t i = 0; i < g->pods.n; i++) {
			const struct sc_pod *p = g->pods.v[i];

			if (sc_pod_pending(p) && p->cycle.assumed < 0)
				memcpy(vals[j++], p->req, sizeof(p->req));
		}
		sum_smallest(vals, pend, k, snap->nres, need);
		free(vals);
		return;
	}
	size_t nc = g->children.n;
	int M = sc_group_min(g);

	if (!min || (size_t)M >= nc) {
		for (size_t i = 0; i < nc; i++)
			group_need(snap, g->children.v[i], min, depth + 1, need);
		return;
	}
	if (M <= 0)
		return;
	int64_t(*vals)[SC_MAX_RES] = calloc(nc, sizeof(*vals));

	if (!vals)
		return;
	for (size_t i = 0; i < nc; i++)
		group_need(snap, g->children.v[i], true, depth + 1, vals[i]);
	sum_smallest(vals, nc, (size_t)M, snap->nres, need);
	free(vals);
}

static bool covers(const int64_t *free_, const int64_t *need, int nres)
{
	for (int r = 0; r < nres; r++)
		if (need[r] > 0 && free_[r] < need[r])
			return false;
	return true;
}

/* ---- nodes -------------------------------------------------------------- */

struct node_score {
	int64_t pref;	  /* the constraint plugins' score (preferences) */
	int waste;	  /* scarce resources the pod would leave idle on the node */
	double strand;	  /* devices it would strand for the workload (strand.c) */
	int64_t frag;	  /* sizes of the untouched domains the pod would break */
	int64_t num, den; /* packing: fullest requested resource after the pod */
};

static int node_score_cmp(const struct node_score *a, const struct node_score *b)
{
	if (a->pref != b->pref)
		return a->pref > b->pref ? 1 : -1;
	if (a->waste != b->waste)
		return a->waste < b->waste ? 1 : -1;
	if (a->strand < b->strand - 1e-9 || a->strand > b->strand + 1e-9)
		return a->strand < b->strand ? 1 : -1;
	if (a->frag != b->frag)
		return a->frag < b->frag ? 1 : -1;
	return sc_frac_cmp(a->num, a->den, b->num, b->den);
}

static int scarce_waste(const struct fit *f, const struct sc_pod *pod, const int64_t *free_,
			int nres)
{
	int w = 0;

	for (int r = 1; r < nres; r++)
		if (f->scarce[r] && pod->req[r] <= 0 && free_[r] > 0)
			w++;
	return w;
}

/* The resource part of sc_filter over the pod's requested resources rr[0..nrr). */
static bool fits_resources(const struct sc_snapshot *snap, const struct sc_pod *pod,
			   const struct sc_node *node, const int *rr, int nrr)
{
	if (node->ndevs && !sc_devices_fit(snap, pod, node))
		return false;
	for (int j = 0; j < nrr; j++) {
		int r = rr[j];
		int64_t after;

		if (node->used[r] < 0 ||
		    __builtin_add_overflow(node->used[r], pod->req[r], &after) ||
		    after > node->alloc[r])
			return false;
	}
	return true;
}

/* One pod's node search: the best node considered so far. */
struct node_pick {
	const struct fit *f;
	struct sc_pod *pod;
	int rr[SC_MAX_RES], nrr;
	bool scores;
	int best;
	struct node_score bs;
	size_t feasible;
};

/* Consider node for np's pod; true when nothing can score higher. */
static bool consider(struct node_pick *np, int idx)
{
	const struct fit *f = np->f;
	const struct sc_snapshot *snap = f->ctx->snap;
	const struct sc_node *node = snap->nodes[idx];
	const struct sc_pod *pod = np->pod;
	struct node_score sc = {.num = 0, .den = 1};
	int64_t free_[SC_MAX_RES];

	if (!fits_resources(snap, pod, node, np->rr, np->nrr) ||
	    sc_filter_static(pod, node) != SC_FIT ||
	    sc_cons_filter(f->ctx->snap, pod, idx) != SC_FIT)
		return false;
	for (int r = 0; r < snap->nres; r++)
		free_[r] = sc_sub(node->alloc[r], node->used[r]);
	sc.waste = scarce_waste(f, pod, free_, snap->nres);
	if (np->scores)
		sc.pref = sc_cons_score(f->ctx->snap, pod, idx);
	np->feasible++;
	if (np->best >= 0 &&
	    (sc.pref < np->bs.pref || (sc.pref == np->bs.pref && sc.waste > np->bs.waste)))
		return false; /* lexicographic: no need to score the rest */
	sc.strand = sc_strand_score(f->strand, node, pod, free_);
	for (size_t k = 0; k < f->nparts; k++) {
		int d = f->parts[k]->node_dom[idx];

		if (d >= 0 && f->parts[k]->used_pods[d] == 0)
			sc.frag += f->parts[k]->dom_size[d];
	}
	for (int r = 0; r < snap->nres; r++)
		if (pod->req[r] > 0 && node->alloc[r] > 0 &&
		    sc_frac_cmp(sc_add(node->used[r], pod->req[r]), node->alloc[r], sc.num,
				sc.den) > 0) {
			sc.num = sc_add(node->used[r], pod->req[r]);
			sc.den = node->alloc[r];
		}
	if (np->best < 0 || node_score_cmp(&sc, &np->bs) > 0) {
		np->best = idx;
		np->bs = sc;
		/*
		 * Nothing scores higher, or only by lowering stranding: good
		 * enough for a pod of a gang, whose domain is chosen already.
		 * A standalone pod's node is the whole choice: it stops early
		 * only where no placement strands anything.
		 */
		if (!np->scores && !sc.waste && !sc.frag && sc.num == sc.den &&
		    (sc_strand_flat(f->strand) ||
		     (sc.strand <= 1e-9 && pod->group && !pod->group->implicit)))
			return true;
	}
	return false;
}

/*
 * A sampled whole-cluster scan of a pod with a hard spread constraint:
 * domains the constraint rules out are skipped without looking at their
 * nodes, the others are scanned from a rotating domain until
 * FIT_SAMPLE_NODES nodes pass.  False when the pod gives no such hint.
 */
static bool pick_by_domain(struct node_pick *np, size_t n)
{
	struct sc_snapshot *snap = np->f->ctx->snap;
	size_t *next = &np->f->ctx->s->sample_next;
	struct sc_part *part;
	int nd, start;

	if (n != snap->nnodes || !(part = sc_spread_hint(snap, np->pod)) || !part->ndom)
		return false;
	nd = part->ndom;
	start = (int)(*next % (size_t)nd);
	for (int k = 0; k < nd; k++) {
		int d = (start + k) % nd;

		if (!sc_spread_dom_allowed(snap, np->pod, d))
			continue;
		for (int i = part->start[d]; i < part->start[d + 1]; i++)
			if (consider(np, part->order[i]))
				break;
		if (np->feasible >= FIT_SAMPLE_NODES) {
			*next = (size_t)d + 1;
			break;
		}
	}
	/* nodes without the key never pass a hard constraint: nothing missed */
	return true;
}

/*
 * Best node of the scope for pod, or -1 with the pod's misfit counts set.
 * Nodes are tested on capacity first (the cheap test that fails most often
 * in a busy scope), then on the static filters and the constraint plugins;
 * only when no node fits are the misfits classified again in sc_filter's
 * order, for the message.
 */
static int pick_node(void *arg, struct sc_pod *pod, const int *nodes, size_t n)
{
	const struct fit *f = arg;
	const struct sc_snapshot *snap = f->ctx->snap;
	struct node_pick np = {.f = f, .pod = pod, .scores = sc_cons_scores(pod), .best = -1};
	int counts[_SC_MISFIT_MAX] = {0}, short_of[SC_MAX_RES] = {0};
	size_t *next = &f->ctx->s->sample_next, start = 0;
	bool sample = pod->cons && pod->group && pod->group->implicit && n > FIT_SAMPLE_SCOPE;

	for (int r = 0; r < snap->nres; r++)
		if (pod->req[r] > 0)
			np.rr[np.nrr++] = r;
	/* the whole cluster in index order: blocks where nothing fits are skipped */
	bool blocks = !sample && n == snap->nnodes && nodes == f->ctx->s->all_nodes &&
		      sc_snapshot_blocks(f->ctx->snap) == 0;

	if (!sample || !pick_by_domain(&np, n)) {
		if (sample)
			start = *next % n;
		for (size_t j = 0; j < n; j++) {
			size_t i = sample ? (start + j) % n : j;

			if (sample && np.feasible >= FIT_SAMPLE_NODES) {
				*next = i; /* the next pod starts where this one stopped */
				break;
			}
			if (blocks && j % SC_NODE_BLOCK == 0) { /* not sampled: i is j */
				size_t b = sc_next_block(f->ctx->snap, j / SC_NODE_BLOCK, pod,
							 np.rr, np.nrr);

				if (b * SC_NODE_BLOCK >= n)
					break;
				i = j = b * SC_NODE_BLOCK;
			}
			if (consider(&np, nodes[i]))
				break;
		}
	}
	if (np.best >= 0)
		return np.best;
	for (size_t i = 0; i < n; i++) {
		int res = 0;
		enum sc_misfit m = sc_filter(snap, pod, snap->nodes[nodes[i]], &res);

		counts[m]++;
		if (m == SC_MISFIT_RESOURCES)
			short_of[res]++;
	}
	counts[SC_FIT] = 0;
	sc_pod_set_misfits(pod, n, counts, short_of);
	return -1;
}

/* ---- leaves and composites (minimums) ---------------------------------- */

static enum sc_status eval_leaf(struct fit *f, struct sc_group *g, const int *nodes, size_t n)
{
	const struct sc_leaf_pick pick = {.node = pick_node, .arg = f, .minimum_only = true};

	return sc_place_leaf(f->ctx, g, nodes, n, &pick);
}

struct child {
	struct sc_group *g;
	int64_t share_num, share_den; /* dominant share of the minimum's request */
	size_t pos;		      /* creation order */
	/* search state */
	size_t mark, placed0;
	int S0, U0, UU0;
	int start, chosen; /* candidate rank to start from; rank taken, -1 failed */
};

static int child_cmp(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	int c = sc_frac_cmp(x->share_num, x->share_den, y->share_num, y->share_den);

	if (c)
		return -c; /* larger first */
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void cluster_total(struct fit *f)
{
	const struct sc_snapshot *snap = f->ctx->snap;

	f->have_total = true;
	if (f->nparts && f->parts[0]->ndom) { /* from a summary when there is one */
		for (int d = 0; d < f->parts[0]->ndom; d++)
			for (int r = 0; r < snap->nres; r++)
				f->total[r] = sc_add(f->total[r], f->parts[0]->free[d][r]);
		return;
	}
	for (size_t i = 0; i < snap->nnodes; i++)
		for (int r = 0; r < snap->nres; r++)
			f->total[r] = sc_add(
			    f->total[r], sc_sub(snap->nodes[i]->alloc[r], snap->nodes[i]->used[r]));
}

static void child_share(struct fit *f, struct child *c)
{
	int64_t need[SC_MAX_RES] = {0};
	const struct sc_snapshot *snap = f->ctx->snap;

	if (!f->have_total)
		cluster_total(f);
	group_need(snap, c->g, true, 0, need);
	c->share_num = 0;
	c->share_den = 1;
	for (int r = 0; r < snap->nres; r++)
		if (f->total[r] > 0 && need[r] > 0 &&
		    sc_frac_cmp(need[r], f->total[r], c->share_num, c->share_den) > 0) {
			c->share_num = need[r];
			c->share_den = f->total[r];
		}
}

/* One composite's search: its admissible children in evaluation order, the counts. */
struct comp_search {
	struct fit *f;
	struct sc_group *g;
	const int *nodes;
	size_t n;
	struct child *ch;
	size_t k, i; /* admissible children; the next one to evaluate */
	/* KEP-6012's counts over the child groups (sc_feasible() in sched-place.h): the
	 * minimum, placed, Unschedulable, UnschedulableAndUnresolvable */
	int M, S, U, UU;
	int bestS, bU, bUU; /* the best infeasible state met, for the message */
	const struct sc_group *failed;
	long tries;
};

/* The admissible children, largest dominant share first (ties in creation order). */
static int children_order(struct comp_search *cs)
{
	struct sc_group *g = cs->g;
	bool *adm = calloc(g->children.n + 1, sizeof(bool));

	cs->ch = calloc(g->children.n + 1, sizeof(*cs->ch));
	if (!adm || !cs->ch) {
		free(adm);
		free(cs->ch);
		return -ENOMEM;
	}
	cs->UU = sc_admit_children(cs->f->ctx, g, adm, &cs->failed);
	for (size_t j = 0; j < g->children.n; j++)
		if (adm[j])
			cs->ch[cs->k++] = (struct child){.g = g->children.v[j], .pos = j};
	free(adm);
	if (cs->k > 1) {
		for (size_t j = 0; j < cs->k; j++)
			child_share(cs->f, &cs->ch[j]);
		qsort(cs->ch, cs->k, sizeof(*cs->ch), child_cmp);
	}
	return 0;
}

/* Evaluate the next child from its starting candidate. */
static void child_eval(struct comp_search *cs)
{
	struct sc_ctx *ctx = cs->f->ctx;
	struct child *c = &cs->ch[cs->i++];
	enum sc_status cst;

	c->mark = sc_snapshot_mark(ctx->snap);
	c->placed0 = ctx->placed;
	c->S0 = cs->S;
	c->U0 = cs->U;
	c->UU0 = cs->UU;
	cst = eval_group(cs->f, c->g, cs->nodes, cs->n, c->start, &c->chosen);
	if (cst == SC_SUCCESS) {
		cs->S++;
		return;
	}
	c->chosen = -1;
	if (cst == SC_UNSCHEDULABLE)
		cs->U++;
	else
		cs->UU++;
	cs->failed = c->g;
}

/*
 * The composite cannot succeed any more: remember the best state met, then
 * move the latest placed child with a topology key to its next candidate
 * domain and start every later child over.  False when there is no such
 * child or the budget is spent.
 */
static bool backtrack(struct comp_search *cs)
{
	struct fit *f = cs->f;
	struct sc_ctx *ctx = f->ctx;
	size_t j = cs->i;

	if (cs->S > cs->bestS) {
		cs->bestS = cs->S;
		cs->bU = cs->U;
		cs->bUU = cs->UU;
	}
	while (j > 0 && !(cs->ch[j - 1].chosen >= 0 && cs->ch[j - 1].g->spec.topo_key))
		j--;
	if (j == 0)
		return false;
	if (f->budget <= 0) {
		if (!f->exhausted)
			sc_trace(ctx,
				 "%s %s: search budget of %d candidate evaluations "
				 "exhausted; best found: %d of %d child groups",
				 sc_group_kind(cs->g), cs->g->key, FIT_BUDGET, cs->bestS, cs->M);
		f->exhausted = true;
		return false;
	}
	j--;
	cs->tries++;
	sc_snapshot_revert(ctx->snap, cs->ch[j].mark);
	ctx->placed = cs->ch[j].placed0;
	cs->S = cs->ch[j].S0;
	cs->U = cs->ch[j].U0;
	cs->UU = cs->ch[j].UU0;
	cs->ch[j].start = cs->ch[j].chosen + 1;
	for (size_t l = j + 1; l < cs->k; l++)
		cs->ch[l].start = 0;
	sc_trace(ctx, "%s %s: backtrack: %s %s tries its candidate #%d", sc_group_kind(cs->g),
		 cs->g->key, sc_group_kind(cs->ch[j].g), cs->ch[j].g->key, cs->ch[j].start + 1);
	cs->i = j;
	return true;
}

static enum sc_status eval_composite(struct fit *f, struct sc_group *g, const int *nodes, size_t n)
{
	struct sc_ctx *ctx = f->ctx;
	struct comp_search cs = {
	    .f = f, .g = g, .nodes = nodes, .n = n, .M = sc_group_min(g), .bestS = -1};
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	enum sc_status st;

	if (children_order(&cs) < 0)
		return SC_UNRESOLVABLE;
	ctx->depth++;
	for (;;) {
		st = sc_feasible(cs.M, cs.S, (int)(cs.k - cs.i), cs.U, cs.UU);
		if (cs.i < cs.k && st < SC_UNSCHEDULABLE)
			child_eval(&cs);
		else if (st == SC_SUCCESS || !backtrack(&cs))
			break; /* every child tried, nothing left to reach, or no way back */
	}
	ctx->depth--;
	free(cs.ch);
	if (st >= SC_UNSCHEDULABLE) {
		if (cs.bestS > cs.S) {
			cs.S = cs.bestS;
			cs.U = cs.bU;
			cs.UU = cs.bUU;
		}
		sc_snapshot_revert(ctx->snap, mark);
		ctx->placed = placed0;
		sc_record_composite_failure(ctx, g, st, cs.M, cs.S, 0, cs.U, cs.UU, cs.failed);
	} else {
		sc_record(ctx, g, st, cs.M, cs.S, 0, cs.U, cs.UU, SC_WHY_TEXT, NULL, NULL);
	}
	sc_trace(ctx, "%s %s: M=%d S=%d R=0 U=%d UU=%d -> %s%s", sc_group_kind(g), g->key, cs.M,
		 cs.S, cs.U, cs.UU, sc_status_to_string(st),
		 cs.tries ? " (after backtracking)" : "");
	return st;
}

static enum sc_status eval_in(struct fit *f, struct sc_group *g, const int *nodes, size_t n)
{
	return g->composite ? eval_composite(f, g, nodes, n) : eval_leaf(f, g, nodes, n);
}

/* ---- topology: best-first candidates ----------------------------------- */

/* fit's own state of a group (sc_group.strat): the domain of its topology
 * key that its last successful evaluation chose. */
struct fit_group {
	int dom;
};

/* The chosen domain, or -1 when none was recorded. */
static int fit_dom(const struct sc_group *g)
{
	const struct fit_group *fg = g->strat.state;

	return fg ? fg->dom : -1;
}

static void fit_set_dom(struct sc_group *g, int d)
{
	struct fit_group *fg = g->strat.state;

	if (!fg) {
		fg = malloc(sizeof(*fg));
		if (!fg)
			return; /* extend() then fails with -ENOMEM */
		g->strat.state = fg;
		g->strat.free = free;
	}
	fg->dom = d;
}

struct cand {
	int d, k; /* domain, and its index in the buckets */
	bool full;
	int waste;
	int64_t frag;
	int64_t num, den;
};

/*
 * A domain's rank (the file's opening): holds every pending pod, fewest
 * scarce resources left idle, fewest coarser domains broken, tightest packing.
 */
static int cand_rank_cmp(const struct cand *x, const struct cand *y)
{
	if (x->full != y->full)
		return x->full ? -1 : 1;
	if (x->waste != y->waste)
		return x->waste < y->waste ? -1 : 1;
	if (x->frag != y->frag)
		return x->frag < y->frag ? -1 : 1;
	return -sc_frac_cmp(x->num, x->den, y->num, y->den);
}

/* The rank, ties broken by domain order (qsort's comparator). */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int c = cand_rank_cmp(x, y);

	if (c)
		return c;
	return x->d < y->d ? -1 : x->d > y->d;
}

/* One topology evaluation's candidate list, built in domain order. */
struct cands {
	struct fit *f;
	struct sc_group *g;
	struct sc_part *part;
	struct sc_buckets bk;
	int bdom;
	int64_t need_min[SC_MAX_RES], need_full[SC_MAX_RES];
	/* resources the subtree requests; scarce ones it does not */
	int need_r[SC_MAX_RES], nneed, idle_r[SC_MAX_RES], nidle;
	bool same_need; /* need_full == need_min: every candidate holds all */
	struct cand *v; /* &one for the best alone, else heap (every domain) */
	struct cand one, *heap;
	size_t n, nscope, npruned;
	struct sc_buf why;
};

static bool cand_perfect(const struct cand *c)
{
	return c->full && !c->waste && !c->frag && c->num == c->den;
}

static void cands_prepare(struct cands *cs)
{
	const struct sc_snapshot *snap = cs->f->ctx->snap;

	cs->same_need = memcmp(cs->need_min, cs->need_full, sizeof(cs->need_min)) == 0;
	for (int r = 0; r < snap->nres; r++) {
		if (cs->need_full[r] > 0)
			cs->need_r[cs->nneed++] = r;
		else if (r > 0 && cs->f->scarce[r])
			cs->idle_r[cs->nidle++] = r;
	}
}

/*
 * Rank domain d (the k-th of the buckets, nodes dn, free capacity free_)
 * into *c.  False when it cannot hold the minimums (*why_r: the resource).
 * With best set, stop as soon as the candidate is known to rank below it
 * (then *c is incomplete and ranks below best).
 */
static bool cand_make(const struct cands *cs, int d, int k, const int *dn, const int64_t *free_,
		      const struct cand *best, struct cand *c, int *why_r)
{
	struct sc_part *part = cs->part;
	int nres = cs->f->ctx->snap->nres, j;

	for (j = 0; j < cs->nneed; j++)
		if (free_[cs->need_r[j]] < cs->need_min[cs->need_r[j]]) {
			*why_r = cs->need_r[j];
			return false;
		}
	*c = (struct cand){.d = d, .k = k, .num = 0, .den = 1};
	c->full = cs->same_need || covers(free_, cs->need_full, nres);
	if (best && best->full && !c->full)
		return true;
	for (j = 0; j < cs->nidle; j++)
		c->waste += free_[cs->idle_r[j]] > 0;
	if (best && best->full == c->full && c->waste > best->waste)
		return true;
	for (size_t i = 0; i < cs->f->nparts; i++) {
		struct sc_part *p = cs->f->parts[i];
		int pd = p->node_dom[dn[0]];

		if (p != part && p->ndom < part->ndom && pd >= 0 && p->used_pods[pd] == 0)
			c->frag += p->dom_size[pd];
	}
	if (best && best->full == c->full && best->waste == c->waste && c->frag > best->frag)
		return true;
	for (j = 0; j < cs->nneed; j++) {
		int r = cs->need_r[j];
		int64_t take = cs->need_full[r] < free_[r] ? cs->need_full[r] : free_[r];

		if (free_[r] > 0 && take > 0 && sc_frac_cmp(take, free_[r], c->num, c->den) > 0) {
			c->num = take;
			c->den = free_[r];
		}
	}
	return true;
}

/*
 * Scan every domain of the scope.  best_only (the first pass): keep only the
 * best candidate, stop at one nothing can outrank (it holds every pending
 * pod, idles no scarce resource, breaks no untouched domain and fills a
 * resource exactly: the first such is the best), and drop a candidate as
 * soon as it is known to rank below the best.  Otherwise list every domain
 * that can hold the minimums, and say why the others cannot.
 */
static void cands_scan(struct cands *cs, bool best_only)
{
	const struct sc_snapshot *snap = cs->f->ctx->snap;
	struct sc_part *part = cs->part;
	int nres = snap->nres;
	struct cand best = {0};
	bool have = false;
	int64_t sum[SC_MAX_RES];

	cs->n = cs->nscope = cs->npruned = 0;
	sc_buf_free(&cs->why);
	cs->v = &cs->one;
	if (!best_only) {
		if (!cs->heap)
			cs->heap = malloc(((size_t)cs->bk.nd + 1) * sizeof(*cs->heap));
		if (!cs->heap)
			return; /* no candidate: the group fails, nothing is corrupted */
		cs->v = cs->heap;
	}
	for (int k = 0; k < cs->bk.nd; k++) {
		int d = cs->bk.dom ? cs->bk.dom[k] : k, why_r = 0;
		const int *dn = cs->bk.order + cs->bk.start[k];
		size_t dnn = (size_t)(cs->bk.start[k + 1] - cs->bk.start[k]);
		const int64_t *free_ = sum;
		struct cand c;

		if (!dnn)
			continue;
		cs->nscope++;
		if (cs->bdom == -1 || (cs->bdom >= 0 && cs->bdom != d)) {
			if (!best_only && cs->npruned++ < 3)
				sc_buf_printf(&cs->why, "%s%s: running pods elsewhere",
					      cs->why.n ? "; " : "", part->values[d]);
			continue;
		}
		if (dnn == (size_t)part->dom_size[d]) {
			free_ = part->free[d]; /* the whole domain: its summary */
		} else {
			memset(sum, 0, sizeof(sum));
			for (size_t i = 0; i < dnn; i++)
				for (int r = 0; r < nres; r++)
					sum[r] =
					    sc_add(sum[r], sc_sub(snap->nodes[dn[i]]->alloc[r],
								  snap->nodes[dn[i]]->used[r]));
		}
		if (!cand_make(cs, d, k, dn, free_, best_only && have ? &best : NULL, &c, &why_r)) {
			if (!best_only && cs->npruned++ < 3)
				sc_buf_printf(&cs->why, "%s%s: insufficient free %s",
					      cs->why.n ? "; " : "", part->values[d],
					      snap->res_name[why_r]);
			continue;
		}
		if (!best_only) {
			cs->v[cs->n++] = c;
			continue;
		}
		if (!have || cand_cmp(&c, &best) < 0) {
			best = c;
			have = true;
			if (cand_perfect(&c))
				break;
		}
	}
	if (best_only && have)
		cs->v[cs->n++] = best;
}

struct best_search {
	struct cands *cs;
	struct cand best;
	bool have;
	size_t visited; /* domains ranked */
};

/*
 * Branch and bound over the partition's capacity index, domains in value
 * order: a subtree is skipped when its per-resource maxima cannot hold the
 * minimums, or when the best rank any of its domains could reach (holds all
 * if the maxima cover every pending pod, at least as many idle scarce
 * resources as its minima show, no fragmentation, and the packing of the
 * smallest positive free capacity that still holds the minimums; a domain
 * with nothing free of a resource scores nothing on it) does not beat the
 * best found so far: every domain in it comes later in value order, so a tie
 * loses.  The result is the first domain in value order among the best
 * ranked, exactly what the linear scan finds.
 */
static void best_dfs(struct best_search *bs, int i)
{
	struct cands *cs = bs->cs;
	struct sc_part *part = cs->part;
	const int64_t *mn = sc_tmin(part, i), *mx = sc_tmax(part, i);
	int j;

	if (bs->have && cand_perfect(&bs->best))
		return;
	for (j = 0; j < cs->nneed; j++)
		if (mx[cs->need_r[j]] < cs->need_min[cs->need_r[j]])
			return;
	if (i >= part->tleaves) {
		int d = i - part->tleaves, why_r;
		struct cand c;

		if (d >= part->ndom || part->start[d + 1] == part->start[d])
			return;
		bs->visited++;
		if (cand_make(cs, d, d, part->order + part->start[d], part->free[d],
			      bs->have ? &bs->best : NULL, &c, &why_r) &&
		    (!bs->have || cand_cmp(&c, &bs->best) < 0)) {
			bs->best = c;
			bs->have = true;
		}
		return;
	}
	if (bs->have) {
		struct cand ub = {.num = 0, .den = 1};

		ub.full = cs->same_need || covers(mx, cs->need_full, cs->f->ctx->snap->nres);
		for (j = 0; j < cs->nidle; j++)
			ub.waste += mn[cs->idle_r[j]] > 0;
		const int64_t *ps = sc_tpos(part, i);

		/* Domains with no free r score nothing on r: the positive minimum. */
		for (j = 0; j < cs->nneed; j++) {
			int r = cs->need_r[j];
			int64_t x = ps[r] > cs->need_min[r] ? ps[r] : cs->need_min[r];

			if (x <= cs->need_full[r]) {
				ub.num = ub.den = 1;
				break;
			}
			if (sc_frac_cmp(cs->need_full[r], x, ub.num, ub.den) > 0) {
				ub.num = cs->need_full[r];
				ub.den = x;
			}
		}
		if (cand_rank_cmp(&ub, &bs->best) >= 0)
			return;
	}
	best_dfs(bs, 2 * i);
	best_dfs(bs, 2 * i + 1);
}

/* The best candidate of a whole-cluster scope through the index; false: no index. */
static bool cands_best_indexed(struct cands *cs)
{
	struct best_search bs = {.cs = cs};
	const struct sc_snapshot *snap = cs->f->ctx->snap;

	if (cs->bk.dom || cs->bdom != -2 || sc_part_index(snap, cs->part) < 0)
		return false;
	cs->n = cs->npruned = 0;
	sc_buf_free(&cs->why);
	cs->v = &cs->one;
	best_dfs(&bs, 1);
	cs->nscope = bs.visited;
	if (bs.have)
		cs->v[cs->n++] = bs.best;
	return true;
}

/* No candidate fit: record and trace why; the status it ends with. */
static enum sc_status topo_failed(struct sc_ctx *ctx, struct sc_group *g, const struct cands *cs,
				  int start_rank, enum sc_status st)
{
	struct sc_buf msg = {0};

	if (!cs->nscope)
		sc_buf_printf(&msg, "no node in scope has label %s", g->spec.topo_key);
	else
		sc_buf_printf(&msg, "no feasible %s domain among %zu candidates (%s%s)",
			      g->spec.topo_key, cs->nscope, cs->why.s ? cs->why.s : "",
			      cs->npruned > 3 ? "; ..." : "");
	if (start_rank > 0 && st == SC_UNRESOLVABLE)
		st = SC_UNSCHEDULABLE; /* an earlier candidate did fit */
	sc_record(ctx, g, st, sc_group_min(g), g->eval.stamp == ctx->stamp ? g->eval.S : 0, 0,
		  g->eval.stamp == ctx->stamp ? g->eval.U : 0,
		  g->eval.stamp == ctx->stamp ? g->eval.UU : 0, SC_WHY_TEXT, NULL, msg.s);
	sc_trace(ctx, "%s %s: %s -> %s", sc_group_kind(g), g->key, msg.s ? msg.s : "",
		 sc_status_to_string(st));
	sc_buf_free(&msg);
	return st;
}

/* Repair: the home domain (bucket k) first, kept when every pending pod fits there. */
static bool home_first(struct fit *f, struct sc_group *g, const struct cands *cs, int k)
{
	struct sc_ctx *ctx = f->ctx;
	int d = cs->bk.dom ? cs->bk.dom[k] : k;
	const int *dn = cs->bk.order + cs->bk.start[k];
	size_t dnn = (size_t)(cs->bk.start[k + 1] - cs->bk.start[k]);
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	size_t want = sc_count_pending(g, 0);
	enum sc_status cst;

	if (!dnn || f->budget <= 0)
		return false;
	f->budget--;
	sc_stat(ctx, PK_SCHED_STAT_EVALUATED, 1);
	ctx->depth++;
	cst = eval_in(f, g, dn, dnn);
	ctx->depth--;
	if (cst == SC_SUCCESS && ctx->placed - placed0 == want) {
		fit_set_dom(g, d);
		sc_note_pick(ctx, g, cs->part->values[d], cs->bdom, true);
		sc_trace(ctx, "%s %s: repaired in its home domain %s=%s", sc_group_kind(g), g->key,
			 g->spec.topo_key, cs->part->values[d]);
		return true;
	}
	sc_trace(ctx, "%s %s: home domain %s=%s has no room (%s): placed whole", sc_group_kind(g),
		 g->key, g->spec.topo_key, cs->part->values[d], sc_status_to_string(cst));
	sc_snapshot_revert(ctx->snap, mark);
	ctx->placed = placed0;
	return false;
}

/*
 * One candidate domain of the ranking: the group placed in it (kept), or
 * the snapshot as it was and the reason noted (the first three).
 */
static enum sc_status try_cand(struct fit *f, struct sc_group *g, struct cands *cs,
			       const struct cand *c, size_t rank)
{
	struct sc_ctx *ctx = f->ctx;
	struct sc_part *part = cs->part;
	const int *dn = cs->bk.order + cs->bk.start[c->k];
	size_t dnn = (size_t)(cs->bk.start[c->k + 1] - cs->bk.start[c->k]);
	size_t mark = sc_snapshot_mark(ctx->snap), placed0 = ctx->placed;
	enum sc_status cst;

	sc_trace(ctx,
		 "candidate %s (#%zu, %zu nodes, %s, scarce idle %d, breaks %lld, "
		 "packing %.3f):",
		 part->values[c->d], rank + 1, dnn, c->full ? "holds all" : "holds minimums",
		 c->waste, (long long)c->frag, c->den ? (double)c->num / (double)c->den : 0);
	ctx->depth++;
	cst = eval_in(f, g, dn, dnn);
	ctx->depth--;
	if (cst == SC_SUCCESS) {
		fit_set_dom(g, c->d);
		sc_note_pick(ctx, g, part->values[c->d], cs->bdom, false);
		return cst;
	}
	sc_snapshot_revert(ctx->snap, mark);
	ctx->placed = placed0;
	if (cs->npruned++ < 3) {
		const char *w = sc_group_why(ctx->snap, g);

		sc_buf_printf(&cs->why, "%s%s: %s", cs->why.n ? "; " : "", part->values[c->d],
			      w ? w : sc_status_to_string(cst));
	}
	sc_trace(ctx, "candidate %s: infeasible (%s)", part->values[c->d],
		 sc_status_to_string(cst));
	return cst;
}

static enum sc_status eval_topo(struct fit *f, struct sc_group *g, const int *nodes, size_t n,
				int start_rank, int *ret_rank)
{
	struct sc_ctx *ctx = f->ctx;
	struct sc_snapshot *snap = ctx->snap;
	struct sc_part *part = sc_snapshot_part(snap, g->spec.topo_key);
	struct cands cs = {.f = f, .g = g, .part = part};
	bool sorted = false;
	size_t ncand;
	enum sc_status st = SC_UNRESOLVABLE;
	double t0 = sc_stat_clock(ctx);

	if (!part || sc_buckets_of(snap, part, nodes, n, &cs.bk) < 0)
		return SC_UNRESOLVABLE;
	cs.v = &cs.one;
	cs.bdom = sc_bound_domain(part, g, 0, -2);
	group_need(snap, g, true, 0, cs.need_min);
	group_need(snap, g, false, 0, cs.need_full);
	cands_prepare(&cs);
	/* First the best alone; the full ranking only if it fails (or for an
	 * alternative), in the same total order. */
	if (start_rank > 0 || !cands_best_indexed(&cs))
		cands_scan(&cs, start_rank == 0);
	if (start_rank > 0 || !cs.n) {
		if (start_rank == 0)
			cands_scan(&cs, false); /* nothing fits: say why */
		qsort(cs.v, cs.n, sizeof(*cs.v), cand_cmp);
		sorted = true;
	}
	ncand = cs.n;
	int home_k = sc_home_bucket(part, &cs.bk, g, cs.bdom), off = home_k >= 0;
	if (home_k >= 0 && start_rank == 0 && home_first(f, g, &cs, home_k)) {
		*ret_rank = 0;
		st = SC_SUCCESS;
		goto out;
	}
	sc_stat(ctx, PK_SCHED_STAT_GENERATED, (double)cs.nscope);
	sc_trace(ctx, "%s %s: topology %s, scope of %zu nodes, %zu of %d domains scanned, %s",
		 sc_group_kind(g), g->key, g->spec.topo_key, n, cs.nscope, cs.bk.nd,
		 sorted ? "ranked" : "best first");
	ctx->depth++;
	/* with a home, rank 0 is the home and rank r the ranking's r - 1 */
	for (size_t rank = (size_t)(start_rank > off ? start_rank - off : 0);; rank++) {
		struct cand *c;

		if (rank >= 1 && !sorted) {
			cands_scan(&cs, false); /* every domain, ranked; [0] is the same best */
			qsort(cs.v, cs.n, sizeof(*cs.v), cand_cmp);
			ncand = cs.n;
			sorted = true;
		}
		if (rank >= ncand)
			break;
		c = &cs.v[rank];
		if (off && c->k == home_k)
			continue; /* tried first */
		if (f->budget <= 0) {
			if (!f->exhausted)
				sc_trace(ctx, "search budget of %d candidate evaluations exhausted",
					 FIT_BUDGET);
			f->exhausted = true;
			break;
		}
		f->budget--;
		sc_stat(ctx, PK_SCHED_STAT_EVALUATED, 1);
		enum sc_status cst = try_cand(f, g, &cs, c, rank);

		if (cst == SC_SUCCESS) {
			*ret_rank = (int)rank + off;
			ctx->depth--;
			sc_trace(ctx, "%s %s: chosen %s=%s", sc_group_kind(g), g->key,
				 g->spec.topo_key, part->values[c->d]);
			st = SC_SUCCESS;
			goto out;
		}
		if (cst == SC_UNSCHEDULABLE)
			st = SC_UNSCHEDULABLE;
	}
	ctx->depth--;
	st = topo_failed(ctx, g, &cs, start_rank, st);
out:
	sc_stat(ctx, PK_SCHED_STAT_SEARCH, sc_stat_clock(ctx) - t0);
	sc_buf_free(&cs.why);
	free(cs.heap);
	sc_buckets_free(&cs.bk);
	return st;
}

static enum sc_status eval_group(struct fit *f, struct sc_group *g, const int *nodes, size_t n,
				 int start, int *ret_rank)
{
	sc_group_sort(g);
	*ret_rank = 0;
	if (g->spec.topo_key)
		return eval_topo(f, g, nodes, n, start, ret_rank);
	if (start > 0)
		return SC_UNSCHEDULABLE; /* one way only */
	return eval_in(f, g, nodes, n);
}

/* ---- extras ------------------------------------------------------------- */

/* Place every remaining pending pod of a Success subtree in its chosen domains. */
static int extend(struct fit *f, struct sc_group *g, const int *nodes, size_t n, int depth)
{
	struct sc_ctx *ctx = f->ctx;
	struct sc_snapshot *snap = ctx->snap;
	int *sub = NULL;
	int r = 0;

	if (depth > PK_HIERARCHY_WALK_MAX || g->eval.stamp != ctx->stamp ||
	    g->eval.status != SC_SUCCESS)
		return 0;
	if (g->spec.topo_key) {
		struct sc_part *part = sc_snapshot_part(snap, g->spec.topo_key);
		int dom = fit_dom(g);
		size_t m = 0;

		if (!part || dom < 0 || dom >= part->ndom)
			return -ENOMEM;
		if (n == snap->nnodes) { /* the whole cluster: the partition's own list */
			nodes = part->order + part->start[dom];
			n = (size_t)(part->start[dom + 1] - part->start[dom]);
		} else {
			sub = malloc((n + 1) * sizeof(int));
			if (!sub)
				return -ENOMEM;
			for (size_t i = 0; i < n; i++)
				if (part->node_dom[nodes[i]] == dom)
					sub[m++] = nodes[i];
			nodes = sub;
			n = m;
		}
	}
	if (g->composite) {
		for (size_t i = 0; i < g->children.n && r == 0; i++)
			r = extend(f, g->children.v[i], nodes, n, depth + 1);
		free(sub);
		return r;
	}
	int extra = 0, U = g->eval.U;
	struct sc_pod *last_failed = g->eval.why_pod;

	if (g->spec.has_slice) {
		free(sub);
		return 0; /* a slice is its box: no pod beyond it */
	}

	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];
		int node;

		if (!sc_pod_pending(p) || p->cycle.assumed >= 0)
			continue;
		node = pick_node(f, p, nodes, n);
		if (node >= 0 && sc_snapshot_assume(snap, p, node) == 0) {
			extra++;
			ctx->placed++;
		} else {
			U++;
			last_failed = p;
			f->unplaced++;
		}
	}
	if (extra || U != g->eval.U) {
		sc_record(ctx, g, SC_SUCCESS, g->eval.M, g->eval.S + extra, 0, U, 0,
			  U ? SC_WHY_POD : SC_WHY_TEXT, last_failed, NULL);
		sc_trace(ctx, "%s %s: %d extra pods placed, %d not placed", sc_group_kind(g),
			 g->key, extra, U);
	}
	free(sub);
	return 0;
}

static bool is_scarce(const char *name)
{
	static const char *const common[] = {"pods", "cpu", "memory", "ephemeral-storage"};

	if (PK_STRING_TABLE_FIND(common, name) >= 0)
		return false;
	return strncmp(name, "hugepages-", 10) != 0;
}

/* What the fit strategy keeps from cycle to cycle (pk_sched's ops_state). */
struct fit_cache {
	bool scarce[SC_MAX_RES]; /* for the first scarce_nres resource ids */
	int scarce_nres;
};

/* Which resources are scarce: names are interned once, so classified once. */
static void classify_scarce(struct fit *f)
{
	const struct sc_snapshot *snap = f->ctx->snap;
	struct fit_cache local = {0}, *c = f->ctx->s->ops == &sc_fit_ops && f->ctx->s->ops_state
					       ? f->ctx->s->ops_state
					       : &local;

	for (int r = c->scarce_nres; r < snap->nres; r++) {
		c->scarce[r] = r > 0 && is_scarce(snap->res_name[r]);
		c->scarce_nres = r + 1;
	}
	memcpy(f->scarce, c->scarce, sizeof(f->scarce));
}

/* One fit search of a root: minimums, then the extra pods. */
static enum sc_status fit_search(struct sc_ctx *ctx, struct sc_group *root, struct fit *f)
{
	struct sc_snapshot *snap = ctx->snap;
	const int *all = sc_all_nodes(ctx->s);
	int rank = 0;
	enum sc_status st;

	if (!all)
		return SC_UNRESOLVABLE;
	classify_scarce(f);
	f->strand = sc_strand_prepare(&ctx->s->profile, snap);
	for (size_t i = 0; i < ctx->s->topo_keys.n && f->nparts < 16; i++) {
		struct sc_part *p = sc_snapshot_part(snap, ctx->s->topo_keys.v[i]);

		if (p)
			f->parts[f->nparts++] = p;
	}
	st = eval_group(f, root, all, snap->nnodes, 0, &rank);
	if (st == SC_SUCCESS) {
		sc_trace(ctx, "%s %s: minimums placed; extra pods:", sc_group_kind(root),
			 root->key);
		if (extend(f, root, all, snap->nnodes, 0) < 0)
			st = SC_UNRESOLVABLE;
	}
	return st;
}

/*
 * The domains were chosen for the minimums, from capacity summaries that can
 * promise more than the nodes hold; when the extras then leave pods pending,
 * the KEP's pass (which scores candidates by the pods they take) may place
 * more.  The placement with more pods stands, so a pod is never left pending
 * (and later a victim preempted for it) where the KEP would have placed it.
 */
static enum sc_status fit_or_kep(struct sc_ctx *ctx, struct sc_group *root, size_t mark,
				 size_t placed0, size_t fit_placed)
{
	struct sc_snapshot *snap = ctx->snap;
	struct fit again = {.ctx = ctx, .budget = FIT_BUDGET};
	enum sc_status st;

	sc_snapshot_revert(snap, mark);
	ctx->placed = placed0;
	sc_trace(ctx, "%s %s: fit left pods pending; KEP pass to compare:", sc_group_kind(root),
		 root->key);
	st = sc_kep_ops.place_root(ctx, root);
	if (st == SC_SUCCESS && ctx->placed - placed0 > fit_placed) {
		sc_trace(ctx, "%s %s: the KEP pass places %zu pods, fit %zu: KEP placement stands",
			 sc_group_kind(root), root->key, ctx->placed - placed0, fit_placed);
		return st;
	}
	sc_snapshot_revert(snap, mark);
	ctx->placed = placed0;
	sc_trace(ctx, "%s %s: fit placement stands (%zu pods); fit again:", sc_group_kind(root),
		 root->key, fit_placed);
	return fit_search(ctx, root, &again);
}

static enum sc_status fit_place_root(struct sc_ctx *ctx, struct sc_group *root)
{
	struct sc_snapshot *snap = ctx->snap;
	struct fit f = {.ctx = ctx, .budget = FIT_BUDGET};
	size_t mark = sc_snapshot_mark(snap), placed0 = ctx->placed;
	enum sc_status st = fit_search(ctx, root, &f);

	if (st == SC_SUCCESS && f.unplaced > 0)
		return fit_or_kep(ctx, root, mark, placed0, ctx->placed - placed0);
	if (st != SC_SUCCESS) {
		sc_snapshot_revert(snap, mark);
		ctx->placed = placed0;
		sc_trace(ctx, "%s %s: fit search found no placement%s; KEP greedy pass:",
			 sc_group_kind(root), root->key, f.exhausted ? " within its budget" : "");
		st = sc_kep_ops.place_root(ctx, root);
	} else if (f.exhausted) {
		sc_trace(ctx, "%s %s: placed with the best found before the budget ran out",
			 sc_group_kind(root), root->key);
	}
	return st;
}

const struct pk_placement_ops sc_fit_ops = {
    .name = "fit",
    .description = "minimums first, largest siblings first with bounded backtracking, "
		   "best-first candidate domains pruned by capacity summaries, scarce-resource, "
		   "stranding and fragmentation aware node choice; never worse than kep",
    .place_root = fit_place_root,
    .state_size = sizeof(struct fit_cache),
};

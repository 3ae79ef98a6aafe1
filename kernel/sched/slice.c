/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slice.c — TPU slices: a PodGroup whose slice-shape annotation asks for a
 * box of chips ("4x4x8") gets a box of hosts that is connected by the
 * torus' links, not just any hosts with the same label.
 *
 * Geometry comes from the node labels the agents and `podctl board nodes`
 * publish (topology.h: torus, torus-shape, cube-shape, host-shape,
 * wraparound, coords).  The index keeps one occupancy grid per torus
 * (topology/occupancy.c: a cell per host with a count of pods, and a
 * summed-area table for box queries).  A cell counts as busy while a pod is
 * bound or assumed on its node, and for good when its host is missing (no
 * node with those coordinates) or cordoned.  The index is an extension of
 * the snapshot (sc_slices_register): its charge() hears of every pod the
 * snapshot adds to or takes from a node, so assume, revert, bind and
 * preemption's simulated removals all keep the grids exact; the table is
 * refreshed lazily by the next query.
 *
 * Placement of a slice leaf in a scope of nodes: for every torus with nodes
 * in scope whose board tiles the shape into exactly minCount hosts, the best
 * free box over the shape's rotations (fewest free cubes broken, then fewest
 * free hosts left touching it; ties to the torus first in
 * natural order, then the earlier rotation and origin).  Cells outside the
 * scope, and cells whose node fails the pods' filters, are blocked in a
 * private copy of that torus' grid and the torus searched again.  A torus's
 * unrestricted answer is cached until its grid changes.  The pods then take
 * the box's hosts in worker order (x fastest, then y, then z, in the frame of
 * the requested shape); running pods of the group must lie in the box and
 * keep their hosts.  When nothing fits, the message names the largest free
 * box of the torus that has the largest one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-slice.h"
#include "kernel/sched/sched-snapshot.h"

/* ---- the index ---------------------------------------------------------------- */

static void slices_free(struct sc_slices *sl)
{
	if (!sl)
		return;
	for (int i = 0; i < sl->nt; i++) {
		free(sl->t[i].name);
		free(sl->t[i].cell_node);
		topo_occ_free(sl->t[i].occ);
	}
	free(sl->t);
	free(sl->node_torus);
	free(sl->node_cell);
	free(sl->blocked);
	free(sl->mark);
	free(sl->scope);
	free(sl);
}

static const char *label_of(const char *key, void *arg)
{
	return sc_node_label(arg, key);
}

/* What one node says about its torus; false when it is not a slice host. */
static bool node_geo(const struct sc_node *n, struct topo_torus_host *g)
{
	return !n->removed && topo_torus_host_parse(label_of, (void *)n, g) == 0;
}

static int torus_init(struct sc_torus *t, const struct topo_torus_host *g)
{
	struct topo_shape cube;
	int64_t cells;

	t->name = strdup(g->torus);
	t->chips = g->chips;
	t->host = g->host;
	t->wrap = g->wrap;
	for (int a = 0; a < TOPO_DIMS; a++) {
		t->grid.dim[a] = g->chips.dim[a] / g->host.dim[a];
		cube.dim[a] = g->has_cube ? g->cube.dim[a] / g->host.dim[a] : 1;
	}
	t->occ = topo_occ_new(&t->grid, g->has_cube ? &cube : NULL, g->wrap);
	cells = topo_shape_volume(&t->grid);
	t->cell_node = t->occ ? malloc((size_t)cells * sizeof(int)) : NULL;
	if (!t->name || !t->occ || !t->cell_node)
		return -ENOMEM;
	for (int64_t i = 0; i < cells; i++)
		t->cell_node[i] = -1;
	return 0;
}

static bool same_torus(const struct sc_torus *t, const struct topo_torus_host *g)
{
	return !memcmp(&t->chips, &g->chips, sizeof(t->chips)) &&
	       !memcmp(&t->host, &g->host, sizeof(t->host)) && t->wrap == g->wrap;
}

/* Natural order of torus names (ss2 before ss10), like the partitions. */
static int torus_cmp(const void *a, const void *b)
{
	return strverscmp(((const struct sc_torus *)a)->name, ((const struct sc_torus *)b)->name);
}

/* Map every slice host to its torus and cell; tori sorted by name. */
static int slices_map(const struct sc_snapshot *snap, struct sc_slices *sl)
{
	struct pk_map by_name = {0};
	struct topo_torus_host *geo = calloc(snap->nnodes + 1, sizeof(*geo));
	bool *ok = calloc(snap->nnodes + 1, sizeof(bool));
	int r = geo && ok ? 0 : -ENOMEM;

	/* Hostile labels: tori may hold a few missing hosts, not millions. */
	int64_t budget = 4 * (int64_t)snap->nnodes + TOPO_TORUS_MAX_CHIPS;

	for (size_t i = 0; r == 0 && i < snap->nnodes; i++) {
		if (!(ok[i] = node_geo(snap->nodes[i], &geo[i])) ||
		    pk_map_get(&by_name, geo[i].torus))
			continue;
		int64_t cells = topo_shape_volume(&geo[i].chips) / topo_shape_volume(&geo[i].host);

		if (cells > budget) {
			ok[i] = false; /* its nodes are no slice hosts */
			continue;
		}
		budget -= cells;
		struct sc_torus *v = realloc(sl->t, (size_t)(sl->nt + 1) * sizeof(*v));

		if (!v) {
			r = -ENOMEM;
			break;
		}
		sl->t = v;
		memset(&sl->t[sl->nt], 0, sizeof(sl->t[0]));
		r = torus_init(&sl->t[sl->nt], &geo[i]);
		sl->nt++;
		if (r == 0)
			r = pk_map_put(&by_name, geo[i].torus, (void *)1);
	}
	if (r == 0 && sl->nt > 1)
		qsort(sl->t, (size_t)sl->nt, sizeof(sl->t[0]), torus_cmp);
	for (int k = 0; r == 0 && k < sl->nt; k++)
		r = pk_map_put(&by_name, sl->t[k].name, (void *)(intptr_t)(k + 1));
	for (size_t i = 0; r == 0 && i < snap->nnodes; i++) {
		intptr_t k = ok[i] ? (intptr_t)pk_map_get(&by_name, geo[i].torus) - 1 : -1;
		struct sc_torus *t = k >= 0 ? &sl->t[k] : NULL;
		int64_t c = t ? topo_coord_index(&t->grid, &geo[i].cell) : -1;

		/* A node that disagrees with its torus' first node, or takes a
		 * cell already taken, is no slice host. */
		if (!t || !same_torus(t, &geo[i]) || t->cell_node[c] >= 0)
			continue;
		t->cell_node[c] = (int)i;
		t->nlive++;
		sl->node_torus[i] = (int)k;
		sl->node_cell[i] = (int)c;
		sl->blocked[i] = snap->nodes[i]->unschedulable;
	}
	pk_map_free(&by_name);
	free(geo);
	free(ok);
	return r;
}

/* What a cell's count must be: pods on its node, plus one if it is out of use. */
static int cell_count(const struct sc_snapshot *snap, const struct sc_slices *sl,
		      const struct sc_torus *t, int64_t c)
{
	int node = t->cell_node[c];

	if (node < 0)
		return 1;
	return (int)(snap->nodes[node]->used[SC_RES_PODS] / 1000) + (sl->blocked[node] ? 1 : 0);
}

static struct sc_slices *slices_build(const struct sc_snapshot *snap)
{
	struct sc_slices *sl = calloc(1, sizeof(*sl));
	size_t n = snap->nnodes + 1;

	if (!sl)
		return NULL;
	sl->nnodes = snap->nnodes;
	sl->node_torus = malloc(n * sizeof(int));
	sl->node_cell = malloc(n * sizeof(int));
	sl->blocked = calloc(n, sizeof(bool));
	sl->mark = calloc(n, 1);
	if (!sl->node_torus || !sl->node_cell || !sl->blocked || !sl->mark)
		goto fail;
	for (size_t i = 0; i < n; i++)
		sl->node_torus[i] = sl->node_cell[i] = -1;
	if (slices_map(snap, sl) < 0)
		goto fail;
	sl->scope = calloc((size_t)sl->nt + 1, sizeof(int));
	if (!sl->scope)
		goto fail;
	for (int k = 0; k < sl->nt; k++) {
		struct sc_torus *t = &sl->t[k];

		for (int64_t c = 0; c < topo_shape_volume(&t->grid); c++) {
			struct topo_coord cc;

			topo_coord_of_index(&t->grid, c, &cc);
			topo_occ_add(t->occ, &cc, cell_count(snap, sl, t, c));
		}
	}
	return sl;
fail:
	slices_free(sl);
	return NULL;
}

static const struct sc_snap_ext_ops slice_ext_ops;

struct sc_slices *sc_snapshot_slices(struct sc_snapshot *snap)
{
	void **state = sc_snapshot_ext_state(snap, &slice_ext_ops);

	if (!state)
		return NULL;
	if (!*state)
		*state = slices_build(snap);
	return *state;
}

static void slices_charge(void *state, int node, int sign)
{
	struct sc_slices *sl = state;
	struct sc_torus *t;
	struct topo_coord c;

	if (node < 0 || (size_t)node >= sl->nnodes || sl->node_torus[node] < 0)
		return;
	t = &sl->t[sl->node_torus[node]];
	topo_coord_of_index(&t->grid, sl->node_cell[node], &c);
	topo_occ_add(t->occ, &c, sign);
}

static int slices_check(const struct sc_snapshot *snap, const void *state, char *why, size_t whylen)
{
	const struct sc_slices *sl = state;

	if (sl->nnodes != snap->nnodes) {
		snprintf(why, whylen, "slice index: built for %zu nodes, snapshot has %zu",
			 sl->nnodes, snap->nnodes);
		return -EUCLEAN;
	}
	for (int k = 0; k < sl->nt; k++) {
		const struct sc_torus *t = &sl->t[k];
		char w[160];
		int r = topo_occ_check(t->occ, w, sizeof(w));

		if (r < 0) {
			snprintf(why, whylen, "slice index, torus %s: %s", t->name, w);
			return r;
		}
		if (k && strverscmp(sl->t[k - 1].name, t->name) >= 0) {
			snprintf(why, whylen, "slice index: tori %s, %s out of order",
				 sl->t[k - 1].name, t->name);
			return -EUCLEAN;
		}
		for (int64_t c = 0; c < topo_shape_volume(&t->grid); c++) {
			struct topo_coord cc;
			int node = t->cell_node[c], want = cell_count(snap, sl, t, c);

			topo_coord_of_index(&t->grid, c, &cc);
			if (topo_occ_count(t->occ, &cc) != want) {
				snprintf(
				    why, whylen,
				    "slice index, torus %s: cell %d.%d.%d (node %s) counts %d, "
				    "pods and state say %d",
				    t->name, cc.c[0], cc.c[1], cc.c[2],
				    node >= 0 ? snap->nodes[node]->name : "missing",
				    topo_occ_count(t->occ, &cc), want);
				return -EUCLEAN;
			}
			if (node >= 0 && (sl->node_torus[node] != k || sl->node_cell[node] != c)) {
				snprintf(why, whylen, "slice index: node %s maps back wrong",
					 snap->nodes[node]->name);
				return -EUCLEAN;
			}
		}
	}
	for (size_t i = 0; i < sl->nnodes; i++)
		if (sl->mark[i]) {
			snprintf(why, whylen, "slice index: scope mark left on node %s",
				 snap->nodes[i]->name);
			return -EUCLEAN;
		}
	return 0;
}

static bool slice_pod_annotations(const struct sc_pod *pod, char *coords, size_t clen, char *worker,
				  size_t wlen)
{
	if (!pod->group || !pod->group->spec.has_slice || pod->cycle.slice_worker < 0)
		return false;
	snprintf(coords, clen, "%d.%d.%d", pod->cycle.slice_at.c[0], pod->cycle.slice_at.c[1],
		 pod->cycle.slice_at.c[2]);
	snprintf(worker, wlen, "%d", pod->cycle.slice_worker);
	return true;
}

/* ---- placement ---------------------------------------------------------------- */

/* One torus's part in a placement. */
struct tcand {
	int found; /* 1: box; 0: no free box; -1: not a candidate (see why) */
	struct topo_box box;
	struct topo_box_rank rank;
	struct topo_occ *own; /* private grid when cells are blocked or freed */
	size_t nrot;
	struct topo_rotation rot[6];
	struct topo_shape ext[6]; /* rotations in cells */
};

struct slice_place {
	struct sc_ctx *ctx;
	struct sc_group *g;
	struct sc_slices *sl;
	int M, S, R;
	struct tcand *tc;
	int run_torus;	   /* torus of the group's running pods, -1 none */
	int64_t *run_cell; /* their cells */
	struct sc_pod **run_pod;
	bool strict; /* running pods must keep their worker ids and coordinates */
	int nrun;
	int blocked; /* hosts blocked because a pod's filters failed there */
	bool all;    /* the scope is the whole cluster (no node marks) */
	struct sc_buf why;
	int nwhy;
};

static void say(struct slice_place *sp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct slice_place *sp, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (sp->nwhy++ >= 3)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sc_buf_printf(&sp->why, "%s%s", sp->why.n ? "; " : "", line);
}

static bool box_has(const struct topo_shape *grid, const struct topo_box *b, int64_t cell)
{
	struct topo_coord c;

	topo_coord_of_index(grid, cell, &c);
	for (int a = 0; a < TOPO_DIMS; a++)
		if ((c.c[a] - b->origin.c[a] + grid->dim[a]) % grid->dim[a] >= b->ext.dim[a])
			return false;
	return true;
}

static bool holds_running(const struct topo_box *b, void *arg)
{
	const struct slice_place *sp = arg;
	const struct topo_shape *grid = &sp->sl->t[sp->run_torus].grid;

	for (int i = 0; i < sp->nrun; i++)
		if (!box_has(grid, b, sp->run_cell[i]))
			return false;
	return true;
}

/* The private grid of torus k, made on first need. */
static struct topo_occ *own_grid(struct slice_place *sp, int k)
{
	struct tcand *c = &sp->tc[k];

	if (!c->own)
		c->own = topo_occ_dup(sp->sl->t[k].occ);
	return c->own;
}

/* Can torus k hold the slice?  Fills its rotations; -1 with a reason if not. */
static int torus_admit(struct slice_place *sp, int k)
{
	struct sc_torus *t = &sp->sl->t[k];
	struct tcand *c = &sp->tc[k];
	const struct topo_shape *s = &sp->g->spec.slice;
	int64_t hosts = topo_shape_volume(s) / topo_shape_volume(&t->host);
	char sb[48], hb[48];

	c->found = -1;
	topo_shape_format(s, sb, sizeof(sb));
	topo_shape_format(&t->host, hb, sizeof(hb));
	c->nrot = (size_t)topo_slice_rotations(s, &t->host, &t->chips, c->rot);
	if (!c->nrot) {
		char tb[48];

		topo_shape_format(&t->chips, tb, sizeof(tb));
		say(sp,
		    "superslice %s: %s does not tile into whole %s hosts inside %s in any rotation",
		    t->name, sb, hb, tb);
		return -1;
	}
	if (hosts != sp->M) {
		say(sp, "superslice %s: %s is %lld hosts of %s but minCount is %d", t->name, sb,
		    (long long)hosts, hb, sp->M);
		return -1;
	}
	for (size_t r = 0; r < c->nrot; r++)
		for (int a = 0; a < TOPO_DIMS; a++)
			c->ext[r].dim[a] = c->rot[r].ext.dim[a] / t->host.dim[a];
	c->found = 0;
	return 0;
}

/* Private grid for a torus the scope covers only in part, or holding our pods. */
static int torus_restrict(struct slice_place *sp, int k)
{
	struct sc_torus *t = &sp->sl->t[k];
	struct topo_occ *o;
	int64_t cells = topo_shape_volume(&t->grid);

	if (sp->sl->scope[k] == t->nlive && k != sp->run_torus)
		return 0;
	if (!(o = own_grid(sp, k)))
		return -ENOMEM;
	for (int64_t i = 0; i < cells; i++) {
		struct topo_coord cc;
		int node = t->cell_node[i];

		topo_coord_of_index(&t->grid, i, &cc);
		if (node >= 0 && !sp->all && !sp->sl->mark[node])
			topo_occ_add(o, &cc, 1); /* outside the scope */
	}
	for (int i = 0; k == sp->run_torus && i < sp->nrun; i++) {
		struct topo_coord cc;

		topo_coord_of_index(&t->grid, sp->run_cell[i], &cc);
		topo_occ_add(o, &cc, -1); /* our own pod's host is ours to use */
	}
	return 0;
}

static int64_t box_cell(const struct sc_torus *t, const struct tcand *c, const struct topo_box *b,
			int w, struct topo_coord *ret_at);

/*
 * holds_running, and every running pod that knows its place in the slice
 * (annotations of an earlier placement) is at that place in this box: its
 * worker id names its host, its slice coordinates match.
 */
static bool keeps_running(const struct topo_box *b, void *arg)
{
	const struct slice_place *sp = arg;
	const struct sc_torus *t = &sp->sl->t[sp->run_torus];

	if (!holds_running(b, arg))
		return false;
	for (int i = 0; i < sp->nrun; i++) {
		const struct sc_pod *p = sp->run_pod[i];
		struct topo_coord at;

		if (p->cycle.slice_worker < 0)
			continue;
		if (p->cycle.slice_worker >= sp->M ||
		    box_cell(t, &sp->tc[sp->run_torus], b, p->cycle.slice_worker, &at) !=
			sp->run_cell[i] ||
		    memcmp(&at, &p->cycle.slice_at, sizeof(at)) != 0)
			return false;
	}
	return true;
}

/* The best box of torus k (cached in the torus when unrestricted). */
static int torus_search(struct slice_place *sp, int k)
{
	struct sc_torus *t = &sp->sl->t[k];
	struct tcand *c = &sp->tc[k];
	bool shared = !c->own;
	int r;

	if (shared && t->cvalid && t->cver == topo_occ_version(t->occ) && t->cn == c->nrot &&
	    !memcmp(t->cext, c->ext, c->nrot * sizeof(c->ext[0]))) {
		c->found = t->cfound;
		c->box = t->cbox;
		c->rank = t->crank;
		return 0;
	}
	if (k == sp->run_torus) {
		/* Keep the running pods' places if a box allows it, else just hold them. */
		sp->strict = true;
		r = topo_occ_find_box(c->own, c->ext, c->nrot, TOPO_BOX_BEST, keeps_running, sp,
				      &c->box, &c->rank);
		if (r == 0) {
			sp->strict = false;
			r = topo_occ_find_box(c->own, c->ext, c->nrot, TOPO_BOX_BEST, holds_running,
					      sp, &c->box, &c->rank);
		}
	} else {
		r = topo_occ_find_box(shared ? t->occ : c->own, c->ext, c->nrot, TOPO_BOX_BEST,
				      NULL, NULL, &c->box, &c->rank);
	}
	if (r < 0)
		return r;
	c->found = r;
	if (shared) {
		t->cvalid = true;
		t->cver = topo_occ_version(t->occ);
		t->cn = c->nrot;
		memcpy(t->cext, c->ext, c->nrot * sizeof(c->ext[0]));
		t->cfound = r;
		t->cbox = c->box;
		t->crank = c->rank;
	}
	return 0;
}

/* Index of the rotation a box was found with. */
static size_t rot_of(const struct tcand *c, const struct topo_box *b)
{
	for (size_t r = 0; r < c->nrot; r++)
		if (!memcmp(&c->ext[r], &b->ext, sizeof(b->ext)))
			return r;
	return 0;
}

/*
 * The cell at rank w of the box, and the chip position of its host in the
 * frame of the requested shape: slice axis rot.axis[a] runs along torus axis a.
 */
static int64_t box_cell(const struct sc_torus *t, const struct tcand *c, const struct topo_box *b,
			int w, struct topo_coord *ret_at)
{
	const struct topo_rotation *rot = &c->rot[rot_of(c, b)];
	struct topo_shape hs; /* host extents in the slice frame */
	struct topo_coord h, cell;
	int n[TOPO_DIMS];

	for (int a = 0; a < TOPO_DIMS; a++)
		hs.dim[rot->axis[a]] = t->host.dim[a];
	for (int a = 0; a < TOPO_DIMS; a++)
		n[rot->axis[a]] = b->ext.dim[a];
	h.c[0] = w % n[0];
	h.c[1] = (w / n[0]) % n[1];
	h.c[2] = w / (n[0] * n[1]);
	for (int a = 0; a < TOPO_DIMS; a++) {
		cell.c[a] = (b->origin.c[a] + h.c[rot->axis[a]]) % t->grid.dim[a];
		ret_at->c[rot->axis[a]] = h.c[rot->axis[a]] * hs.dim[rot->axis[a]];
	}
	return topo_coord_index(&t->grid, &cell);
}

static bool is_run_cell(const struct slice_place *sp, int k, int64_t cell)
{
	for (int i = 0; k == sp->run_torus && i < sp->nrun; i++)
		if (sp->run_cell[i] == cell)
			return true;
	return false;
}

/*
 * Put the pending pods on the hosts of torus k's box, in worker order.  When
 * a pod's filters fail on a host, undo, block that host in the torus's
 * private grid (the pods of a slice are alike) and answer 0: search again.
 */
static int box_try(struct slice_place *sp, int k, struct sc_pod **pods, int npods,
		   char *last_misfit, size_t mlen)
{
	struct sc_ctx *ctx = sp->ctx;
	struct sc_snapshot *snap = ctx->snap;
	struct sc_torus *t = &sp->sl->t[k];
	struct tcand *c = &sp->tc[k];
	size_t mark = sc_snapshot_mark(snap), placed0 = ctx->placed;
	int pi = 0;

	for (int w = 0; w < sp->M && pi < npods; w++) {
		struct topo_coord at, cc;
		int64_t cell = box_cell(t, c, &c->box, w, &at);
		int node = t->cell_node[cell], res = 0;
		struct sc_pod *p = pods[pi];
		enum sc_misfit m;

		if (is_run_cell(sp, k, cell))
			continue; /* a running pod of the group holds this host */
		m = node >= 0 ? sc_filter(snap, p, snap->nodes[node], &res) : SC_MISFIT_REMOVED;
		if (m == SC_FIT && sc_snapshot_assume(snap, p, node) == 0) {
			p->cycle.slice_worker = w;
			p->cycle.slice_at = at;
			ctx->placed++;
			pi++;
			continue;
		}
		sc_snapshot_revert(snap, mark);
		ctx->placed = placed0;
		snprintf(last_misfit, mlen, "node %s: %s%s%s",
			 node >= 0 ? snap->nodes[node]->name : "(missing)", sc_misfit_to_string(m),
			 m == SC_MISFIT_RESOURCES ? " " : "",
			 m == SC_MISFIT_RESOURCES ? snap->res_name[res] : "");
		if (!own_grid(sp, k))
			return -ENOMEM;
		topo_coord_of_index(&t->grid, cell, &cc);
		topo_occ_add(c->own, &cc, 1);
		sp->blocked++;
		return 0;
	}
	return 1;
}

/* The torus holding the best box (rank, then torus order), or -1. */
static int best_torus(const struct slice_place *sp)
{
	int best = -1;

	for (int k = 0; k < sp->sl->nt; k++)
		if (sp->tc[k].found == 1 &&
		    (best < 0 || topo_box_rank_cmp(&sp->tc[k].rank, &sp->tc[best].rank) < 0))
			best = k;
	return best;
}

/* The running pods of the group: one torus, their cells.  -EINVAL with why. */
static int collect_running(struct slice_place *sp)
{
	const struct sc_group *g = sp->g;

	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];
		int k;

		if (!sc_pod_running(p))
			continue;
		k = p->node >= 0 ? sp->sl->node_torus[p->node] : -1;
		if (k < 0) {
			say(sp, "running pod %s is on %s, not a host of a torus", p->key,
			    p->node_name ? p->node_name : "an unknown node");
			return -EINVAL;
		}
		if (sp->run_torus >= 0 && k != sp->run_torus) {
			say(sp, "running pods of the slice are in superslices %s and %s",
			    sp->sl->t[sp->run_torus].name, sp->sl->t[k].name);
			return -EINVAL;
		}
		sp->run_torus = k;
		sp->run_pod[sp->nrun] = (struct sc_pod *)p;
		sp->run_cell[sp->nrun++] = sp->sl->node_cell[p->node];
	}
	return 0;
}

/* Admit, restrict and search every torus with nodes in scope. */
static int search_tori(struct slice_place *sp, const int *nodes, size_t n, int *ret_inscope,
		       int *ret_admitted)
{
	struct sc_slices *sl = sp->sl;
	bool all = sp->all = n == sp->ctx->snap->nnodes;
	int admitted = 0, inscope = 0, r = 0;

	for (int k = 0; k < sl->nt; k++)
		sl->scope[k] = all ? sl->t[k].nlive : 0;
	for (size_t i = 0; !all && i < n; i++)
		if (sl->node_torus[nodes[i]] >= 0) {
			sl->mark[nodes[i]] = 1;
			sl->scope[sl->node_torus[nodes[i]]]++;
		}
	for (int k = 0; k < sl->nt && r == 0; k++) {
		sp->tc[k].found = -1;
		if (!sl->scope[k] || (sp->run_torus >= 0 && k != sp->run_torus))
			continue;
		inscope++;
		if (torus_admit(sp, k) < 0)
			continue;
		admitted++;
		r = torus_restrict(sp, k);
		if (r == 0)
			r = torus_search(sp, k);
	}
	for (size_t i = 0; !all && i < n; i++)
		sl->mark[nodes[i]] = 0;
	*ret_inscope = inscope;
	*ret_admitted = admitted;
	return r;
}

/* "largest free box in superslice ss1 is 4x4x2" over the admitted tori. */
static void say_largest(struct slice_place *sp, struct sc_buf *msg)
{
	int64_t best = -1;
	int bk = -1;
	struct topo_box bb = {0};

	for (int k = 0; k < sp->sl->nt; k++) {
		struct topo_box b;
		struct topo_occ *o = sp->tc[k].own ? sp->tc[k].own : sp->sl->t[k].occ;
		int64_t v;

		if (sp->tc[k].found < 0)
			continue;
		v = topo_occ_largest_free_box(o, &b) == 1 ? topo_shape_volume(&b.ext) : 0;
		if (v > best) {
			best = v;
			bk = k;
			bb = b;
		}
	}
	if (bk < 0)
		return;
	if (best == 0) {
		sc_buf_printf(msg, "; superslice %s has no free host", sp->sl->t[bk].name);
		return;
	}
	const struct sc_torus *t = &sp->sl->t[bk];

	sc_buf_printf(msg, "; largest free box in superslice %s is %dx%dx%d", t->name,
		      bb.ext.dim[0] * t->host.dim[0], bb.ext.dim[1] * t->host.dim[1],
		      bb.ext.dim[2] * t->host.dim[2]);
}

static enum sc_status slice_fail(struct slice_place *sp, enum sc_status st, const char *msg)
{
	struct sc_group *g = sp->g;

	sc_record(sp->ctx, g, st, sp->M, sp->S, sp->R, 0, 0, SC_WHY_TEXT, NULL, msg);
	sc_trace(sp->ctx, "%s %s: slice: %s -> %s", sc_group_kind(g), g->key, msg,
		 sc_status_to_string(st));
	return st;
}

static enum sc_status slice_failed(struct slice_place *sp, int admitted, const char *misfit)
{
	struct sc_buf msg = {0};
	char sb[48];
	enum sc_status st;

	topo_shape_format(&sp->g->spec.slice, sb, sizeof(sb));
	if (!admitted) {
		sc_buf_printf(&msg, "no superslice in scope can hold a %s slice%s%s", sb,
			      sp->why.n ? ": " : "", sp->why.n ? sp->why.s : "");
		st = SC_UNRESOLVABLE;
	} else {
		sc_buf_printf(&msg, "no free %s box in any rotation in %d superslice%s%s", sb,
			      admitted, admitted == 1 ? "" : "s",
			      sp->run_torus >= 0 ? " around the slice's running pods" : "");
		say_largest(sp, &msg);
		if (sp->blocked)
			sc_buf_printf(&msg, "; %d free host%s failed the pods' filters (%s)",
				      sp->blocked, sp->blocked == 1 ? "" : "s", misfit);
		st = SC_UNSCHEDULABLE;
	}
	st = slice_fail(sp, st, msg.s ? msg.s : "no slice");
	sc_buf_free(&msg);
	return st;
}

static enum sc_status slice_placed(struct slice_place *sp, int k, int placed)
{
	const struct sc_torus *t = &sp->sl->t[k];
	const struct tcand *c = &sp->tc[k];
	struct sc_group *g = sp->g;
	int S = sp->S + placed, R = sp->R - placed;

	sc_record(sp->ctx, g, SC_SUCCESS, sp->M, S, R, 0, 0, SC_WHY_TEXT, NULL, NULL);
	sc_trace(sp->ctx,
		 "%s %s: slice %dx%dx%d: box %dx%dx%d at chip %d.%d.%d of superslice %s "
		 "(breaks %lld, exposes %lld%s); M=%d S=%d R=%d -> Success",
		 sc_group_kind(g), g->key, g->spec.slice.dim[0], g->spec.slice.dim[1],
		 g->spec.slice.dim[2], c->box.ext.dim[0] * t->host.dim[0],
		 c->box.ext.dim[1] * t->host.dim[1], c->box.ext.dim[2] * t->host.dim[2],
		 c->box.origin.c[0] * t->host.dim[0], c->box.origin.c[1] * t->host.dim[1],
		 c->box.origin.c[2] * t->host.dim[2], t->name, (long long)c->rank.broken,
		 (long long)c->rank.exposed,
		 sp->nrun ? (sp->strict ? ", running pods keep their places"
					: ", around the running pods")
			  : "",
		 sp->M, S, R);
	return SC_SUCCESS;
}

/* Choose a box, check the pods' filters on its hosts, assume the pods. */
static enum sc_status slice_choose(struct slice_place *sp, struct sc_pod **pods, int npods,
				   int admitted)
{
	char misfit[160] = "";

	for (;;) {
		int k = best_torus(sp), r;

		if (k < 0 || sp->blocked > SLICE_FILTER_RETRIES)
			return slice_failed(sp, admitted, misfit);
		r = box_try(sp, k, pods, npods, misfit, sizeof(misfit));
		if (r == 1)
			return slice_placed(sp, k, npods);
		if (r < 0 || torus_search(sp, k) < 0)
			return slice_fail(sp, SC_UNRESOLVABLE, "out of memory");
	}
}

static enum sc_status slice_place_leaf(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				       size_t n)
{
	struct slice_place sp = {.ctx = ctx, .g = g, .M = sc_group_min(g), .run_torus = -1};
	struct sc_pod **pods = NULL;
	int npods = 0, admitted = 0, inscope = 0;
	enum sc_status st = sc_leaf_presim(ctx, g, &sp.S, &sp.R);

	if (st >= SC_UNSCHEDULABLE)
		return st;
	if (sp.S >= sp.M) {
		sc_record(ctx, g, SC_SUCCESS, sp.M, sp.S, sp.R, 0, 0, SC_WHY_TEXT, NULL, NULL);
		return SC_SUCCESS;
	}
	if (g->spec.slice_bad)
		return slice_fail(&sp, SC_UNRESOLVABLE,
				  "the " TOPO_ANN_SLICE_SHAPE " annotation is not AxBxC");
	sp.sl = sc_snapshot_slices(ctx->snap);
	if (!sp.sl)
		return slice_fail(&sp, SC_UNRESOLVABLE, "out of memory");
	sp.tc = calloc((size_t)sp.sl->nt + 1, sizeof(*sp.tc));
	sp.run_cell = calloc((size_t)sp.S + 1, sizeof(int64_t));
	sp.run_pod = calloc((size_t)sp.S + 1, sizeof(*sp.run_pod));
	pods = calloc((size_t)sp.M + 1, sizeof(*pods));
	if (!sp.tc || !sp.run_cell || !sp.run_pod || !pods) {
		st = slice_fail(&sp, SC_UNRESOLVABLE, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < g->pods.n && sp.S + npods < sp.M; i++) {
		struct sc_pod *p = g->pods.v[i];

		if (sc_pod_pending(p) && p->cycle.assumed < 0)
			pods[npods++] = p;
	}
	if (collect_running(&sp) < 0) {
		st = slice_fail(&sp, SC_UNRESOLVABLE, sp.why.s);
		goto out;
	}
	if (search_tori(&sp, nodes, n, &inscope, &admitted) < 0)
		st = slice_fail(&sp, SC_UNRESOLVABLE, "out of memory");
	else if (!inscope)
		st = slice_fail(&sp, SC_UNRESOLVABLE,
				"no node in scope carries the torus labels (" TOPO_LABEL_TORUS
				", " TOPO_LABEL_COORDS ", ...)");
	else
		st = slice_choose(&sp, pods, npods, admitted);
out:
	for (int k = 0; sp.tc && k < sp.sl->nt; k++)
		topo_occ_free(sp.tc[k].own);
	free(sp.tc);
	free(sp.run_cell);
	free(sp.run_pod);
	free(pods);
	sc_buf_free(&sp.why);
	return st;
}

static void slices_free_state(void *state)
{
	slices_free(state);
}

static const struct sc_snap_ext_ops slice_ext_ops = {
    .name = "slice",
    .charge = slices_charge,
    .check = slices_check,
    .free = slices_free_state,
    .place_leaf = slice_place_leaf,
    .bind_annotations = slice_pod_annotations,
};

int sc_slices_register(struct sc_snapshot *snap)
{
	return sc_snapshot_register_ext(snap, &slice_ext_ops);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * occupancy.c — which hosts of one torus are busy, and where a free box of
 * hosts fits: the index behind slice placement.
 *
 * The grid holds one cell per host and a count of users per cell.  Beside it
 * a 3-D summed-area table S(x, y, z) = busy cells in [0,x) x [0,y) x [0,z)
 * answers "how many busy cells in this box" with eight lookups.  Along
 * wrapping axes the table covers the grid twice over, so a box that crosses
 * the seam is one contiguous range of the doubled grid and costs no more.  A
 * change of a count only marks the table stale (and keeps the busy totals of
 * the grid and of its blocks exact); the next query rebuilds it in one pass,
 * so a scheduling cycle that assumes a whole slice pays one rebuild.
 *
 * The searches walk box origins in raster order, rejecting an origin whose
 * first or last cell is busy before asking the table.  TOPO_BOX_BEST ranks
 * every free box (struct topo_box_rank: free blocks broken, then free cells
 * left touching it) and stops early at one nothing can outrank;
 * TOPO_BOX_FIRST takes the first (the baseline `make bench` compares with).
 * The largest free box walks box extents as a staircase: for a fixed x
 * extent, the largest z extent that fits can only shrink as y grows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"

#define OCC_MAX_CELLS (1 << 24)

struct topo_occ {
	struct topo_shape grid;
	bool wrap;
	bool has_block;
	struct topo_shape block, bgrid; /* cells per block, blocks per axis */
	int64_t ncells, nblocks, nbusy;
	int32_t *count; /* users per cell */
	int32_t *bbusy; /* busy cells per block */
	int sx, sy, sz; /* summed-area table dimensions (extended grid + 1) */
	int32_t *sat;
	int *seg[TOPO_DIMS][2]; /* per axis: blocks a box meets, cells in each */
	bool stale;		/* the table lags the counts */
	uint64_t version;
	/* the largest free box, valid while lfb_version == version */
	bool lfb_ok;
	uint64_t lfb_version;
	int lfb_found;
	struct topo_box lfb;
};

static int64_t cell_index(const struct topo_shape *g, int x, int y, int z)
{
	return x + (int64_t)g->dim[0] * (y + (int64_t)g->dim[1] * z);
}

static int64_t block_of(const struct topo_occ *o, const struct topo_coord *c)
{
	if (!o->has_block)
		return 0;
	return cell_index(&o->bgrid, c->c[0] / o->block.dim[0], c->c[1] / o->block.dim[1],
			  c->c[2] / o->block.dim[2]);
}

struct topo_occ *topo_occ_new(const struct topo_shape *grid, const struct topo_shape *block,
			      bool wrap)
{
	struct topo_occ *o;
	int64_t cells = 1, satn;

	if (!grid)
		return NULL;
	for (int a = 0; a < TOPO_DIMS; a++) {
		if (grid->dim[a] < 1 || grid->dim[a] > OCC_MAX_CELLS)
			return NULL;
		if (block && (block->dim[a] < 1 || grid->dim[a] % block->dim[a]))
			return NULL;
		cells *= grid->dim[a];
		if (cells > OCC_MAX_CELLS)
			return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->grid = *grid;
	o->wrap = wrap;
	o->ncells = cells;
	o->nblocks = 1;
	if (block) {
		o->has_block = true;
		o->block = *block;
		for (int a = 0; a < TOPO_DIMS; a++)
			o->bgrid.dim[a] = grid->dim[a] / block->dim[a];
		o->nblocks = topo_shape_volume(&o->bgrid);
	}
	o->sx = (wrap ? 2 : 1) * grid->dim[0] + 1;
	o->sy = (wrap ? 2 : 1) * grid->dim[1] + 1;
	o->sz = (wrap ? 2 : 1) * grid->dim[2] + 1;
	satn = (int64_t)o->sx * o->sy * o->sz;
	for (int a = 0; a < TOPO_DIMS; a++)
		for (int k = 0; k < 2; k++)
			if (!(o->seg[a][k] = malloc(((size_t)o->bgrid.dim[a] + 1) * sizeof(int)))) {
				topo_occ_free(o);
				return NULL;
			}
	o->count = calloc((size_t)cells, sizeof(int32_t));
	o->bbusy = calloc((size_t)o->nblocks, sizeof(int32_t));
	o->sat = calloc((size_t)satn, sizeof(int32_t)); /* all free: all zero */
	if (!o->count || !o->bbusy || !o->sat) {
		topo_occ_free(o);
		return NULL;
	}
	return o;
}

void topo_occ_free(struct topo_occ *o)
{
	if (!o)
		return;
	free(o->count);
	free(o->bbusy);
	free(o->sat);
	for (int a = 0; a < TOPO_DIMS; a++)
		for (int k = 0; k < 2; k++)
			free(o->seg[a][k]);
	free(o);
}

struct topo_occ *topo_occ_dup(const struct topo_occ *src)
{
	struct topo_occ *o =
	    topo_occ_new(&src->grid, src->has_block ? &src->block : NULL, src->wrap);

	if (!o)
		return NULL;
	memcpy(o->count, src->count, (size_t)src->ncells * sizeof(int32_t));
	memcpy(o->bbusy, src->bbusy, (size_t)src->nblocks * sizeof(int32_t));
	memcpy(o->sat, src->sat, (size_t)o->sx * o->sy * o->sz * sizeof(int32_t));
	o->nbusy = src->nbusy;
	o->stale = src->stale;
	o->version = src->version;
	return o;
}

const struct topo_shape *topo_occ_grid(const struct topo_occ *o)
{
	return &o->grid;
}

bool topo_occ_wrap(const struct topo_occ *o)
{
	return o->wrap;
}

int topo_occ_add(struct topo_occ *o, const struct topo_coord *c, int delta)
{
	int64_t i;
	bool was, is;

	if (!topo_coord_in(&o->grid, c))
		return -EINVAL;
	i = topo_coord_index(&o->grid, c);
	was = o->count[i] > 0;
	o->count[i] += delta;
	is = o->count[i] > 0;
	if (was != is) {
		int d = is ? 1 : -1;

		o->nbusy += d;
		o->bbusy[block_of(o, c)] += d;
		o->stale = true;
		o->version++;
	}
	return 0;
}

int topo_occ_count(const struct topo_occ *o, const struct topo_coord *c)
{
	return topo_coord_in(&o->grid, c) ? o->count[topo_coord_index(&o->grid, c)] : 0;
}

int64_t topo_occ_busy_cells(const struct topo_occ *o)
{
	return o->nbusy;
}

uint64_t topo_occ_version(const struct topo_occ *o)
{
	return o->version;
}

/* ---- the summed-area table ------------------------------------------------ */

static inline int64_t sat_at(const struct topo_occ *o, int x, int y, int z)
{
	return ((int64_t)z * o->sy + y) * o->sx + x;
}

/* One pass over the extended grid; cell (x, y, z) of it is cell (x mod g, ...). */
static void sat_fill(const struct topo_occ *o, int32_t *s)
{
	const int gx = o->grid.dim[0], gy = o->grid.dim[1], gz = o->grid.dim[2];

	memset(s, 0, (size_t)o->sx * o->sy * sizeof(int32_t)); /* the z = 0 plane */
	for (int z = 1; z < o->sz; z++) {
		memset(s + sat_at(o, 0, 0, z), 0, (size_t)o->sx * sizeof(int32_t));
		for (int y = 1; y < o->sy; y++) {
			const int32_t *row =
			    o->count + cell_index(&o->grid, 0, (y - 1) % gy, (z - 1) % gz);
			int32_t *p = s + sat_at(o, 0, y, z);
			const int32_t *py = s + sat_at(o, 0, y - 1, z);
			const int32_t *pz = s + sat_at(o, 0, y, z - 1);
			const int32_t *pyz = s + sat_at(o, 0, y - 1, z - 1);

			p[0] = 0;
			for (int x = 1, cx = 0; x < o->sx; x++, cx = cx + 1 == gx ? 0 : cx + 1)
				p[x] = (row[cx] > 0) + py[x] + pz[x] + p[x - 1] - pyz[x] -
				       py[x - 1] - pz[x - 1] + pyz[x - 1];
		}
	}
}

static void refresh(struct topo_occ *o)
{
	if (!o->stale)
		return;
	sat_fill(o, o->sat);
	o->stale = false;
}

/* Busy cells of [x0,x1) x [y0,y1) x [z0,z1) of the extended grid. */
static inline int64_t sat_box(const struct topo_occ *o, int x0, int y0, int z0, int x1, int y1,
			      int z1)
{
	const int32_t *s = o->sat;

	return (int64_t)s[sat_at(o, x1, y1, z1)] - s[sat_at(o, x0, y1, z1)] -
	       s[sat_at(o, x1, y0, z1)] - s[sat_at(o, x1, y1, z0)] + s[sat_at(o, x0, y0, z1)] +
	       s[sat_at(o, x0, y1, z0)] + s[sat_at(o, x1, y0, z0)] - s[sat_at(o, x0, y0, z0)];
}

static inline int64_t box_busy(const struct topo_occ *o, const struct topo_coord *c,
			       const struct topo_shape *e)
{
	return sat_box(o, c->c[0], c->c[1], c->c[2], c->c[0] + e->dim[0], c->c[1] + e->dim[1],
		       c->c[2] + e->dim[2]);
}

static bool box_valid(const struct topo_occ *o, const struct topo_box *b)
{
	for (int a = 0; a < TOPO_DIMS; a++) {
		if (b->ext.dim[a] < 1 || b->ext.dim[a] > o->grid.dim[a] || b->origin.c[a] < 0 ||
		    b->origin.c[a] >= o->grid.dim[a])
			return false;
		if (!o->wrap && b->origin.c[a] + b->ext.dim[a] > o->grid.dim[a])
			return false;
	}
	return true;
}

int64_t topo_occ_box_busy(struct topo_occ *o, const struct topo_box *b)
{
	if (!box_valid(o, b))
		return -EINVAL;
	refresh(o);
	return box_busy(o, &b->origin, &b->ext);
}

/* ---- ranking ----------------------------------------------------------------- */

int topo_box_rank_cmp(const struct topo_box_rank *a, const struct topo_box_rank *b)
{
	if (a->broken != b->broken)
		return a->broken < b->broken ? -1 : 1;
	if (a->exposed != b->exposed)
		return a->exposed < b->exposed ? -1 : 1;
	return 0;
}

/* Free cells touching the faces of a box (its own cells excluded). */
static int64_t exposed_of(const struct topo_occ *o, const struct topo_box *b)
{
	int64_t exposed = 0;

	for (int a = 0; a < TOPO_DIMS; a++) {
		int g = o->grid.dim[a], lo = b->origin.c[a], hi = lo + b->ext.dim[a];
		int64_t area = (int64_t)b->ext.dim[(a + 1) % 3] * b->ext.dim[(a + 2) % 3];
		struct topo_coord s = b->origin;
		struct topo_shape se = b->ext;

		if (o->wrap && b->ext.dim[a] == g)
			continue; /* the box closes on itself along a */
		se.dim[a] = 1;
		if (o->wrap || lo > 0) { /* else the torus face */
			s.c[a] = lo > 0 ? lo - 1 : g - 1;
			exposed += area - box_busy(o, &s, &se);
		}
		if (o->wrap || hi < g) {
			s.c[a] = hi < g ? hi : hi - g;
			exposed += area - box_busy(o, &s, &se);
		}
	}
	return exposed;
}

/* Blocks a box meets along axis a: block number and cells covered, ring order. */
static int axis_segments(const struct topo_occ *o, const struct topo_box *b, int a, int *blk,
			 int *len)
{
	int n = 0, g = o->grid.dim[a], bs = o->block.dim[a];

	for (int i = 0; i < b->ext.dim[a];) {
		int pos = (b->origin.c[a] + i) % g, k = pos / bs;
		int l = bs - pos % bs < b->ext.dim[a] - i ? bs - pos % bs : b->ext.dim[a] - i;

		if (n && blk[0] == k) {
			len[0] += l; /* wrapped back into the first block */
		} else {	     /* each other block once: n stays within bgrid */
			blk[n] = k;
			len[n++] = l;
		}
		i += l;
	}
	return n;
}

static int64_t broken_of(const struct topo_occ *o, const struct topo_box *b)
{
	int64_t broken = 0, bcells;
	int n[TOPO_DIMS], *blk[TOPO_DIMS], *len[TOPO_DIMS];

	if (o->nbusy == 0 && topo_shape_volume(&b->ext) < o->ncells)
		broken += o->ncells;
	if (!o->has_block)
		return broken;
	bcells = topo_shape_volume(&o->block);
	for (int a = 0; a < TOPO_DIMS; a++) {
		blk[a] = o->seg[a][0];
		len[a] = o->seg[a][1];
		n[a] = axis_segments(o, b, a, blk[a], len[a]);
	}
	for (int k = 0; k < n[2]; k++)
		for (int j = 0; j < n[1]; j++)
			for (int i = 0; i < n[0]; i++) {
				int64_t bi = cell_index(&o->bgrid, blk[0][i], blk[1][j], blk[2][k]);
				bool whole = len[0][i] == o->block.dim[0] &&
					     len[1][j] == o->block.dim[1] &&
					     len[2][k] == o->block.dim[2];

				if (o->bbusy[bi] == 0 && !whole)
					broken += bcells;
			}
	return broken;
}

void topo_occ_box_rank(struct topo_occ *o, const struct topo_box *b, struct topo_box_rank *ret)
{
	refresh(o);
	ret->broken = broken_of(o, b);
	ret->exposed = exposed_of(o, b);
}

/* ---- searches ------------------------------------------------------------------ */

struct search {
	struct topo_occ *o;
	enum topo_box_policy policy;
	bool (*accept)(const struct topo_box *, void *);
	void *arg;
	bool have;
	struct topo_box best;
	struct topo_box_rank rank;
	bool done; /* nothing can outrank best */
};

static void search_extent(struct search *s, const struct topo_shape *e)
{
	struct topo_occ *o = s->o;
	const struct topo_shape *g = &o->grid;
	int lim[TOPO_DIMS];
	struct topo_box b = {.ext = *e};

	for (int a = 0; a < TOPO_DIMS; a++)
		lim[a] =
		    o->wrap ? (e->dim[a] == g->dim[a] ? 1 : g->dim[a]) : g->dim[a] - e->dim[a] + 1;
	for (int z = 0; z < lim[2]; z++)
		for (int y = 0; y < lim[1]; y++) {
			/* the far corner's row, without a division per origin */
			int fy = y + e->dim[1] - 1, fz = z + e->dim[2] - 1;
			const int32_t *near = o->count + cell_index(g, 0, y, z), *far;

			fy -= fy >= g->dim[1] ? g->dim[1] : 0;
			fz -= fz >= g->dim[2] ? g->dim[2] : 0;
			far = o->count + cell_index(g, 0, fy, fz);
			for (int x = 0, fx = e->dim[0] - 1; x < lim[0];
			     x++, fx = fx + 1 == g->dim[0] ? 0 : fx + 1) {
				struct topo_box_rank r;

				if (near[x] > 0 || far[fx] > 0)
					continue;
				b.origin = (struct topo_coord){{x, y, z}};
				if (box_busy(o, &b.origin, e) != 0)
					continue;
				if (s->accept && !s->accept(&b, s->arg))
					continue;
				if (s->policy == TOPO_BOX_FIRST) {
					s->best = b;
					s->have = s->done = true;
					return;
				}
				r.broken = broken_of(o, &b);
				if (s->have && r.broken > s->rank.broken)
					continue;
				r.exposed = exposed_of(o, &b);
				if (!s->have || topo_box_rank_cmp(&r, &s->rank) < 0) {
					s->best = b;
					s->rank = r;
					s->have = true;
					if (r.broken == 0 && r.exposed == 0) {
						s->done = true; /* nothing ranks higher */
						return;
					}
				}
			}
		}
}

int topo_occ_find_box(struct topo_occ *o, const struct topo_shape *exts, size_t n,
		      enum topo_box_policy policy,
		      bool (*accept)(const struct topo_box *box, void *arg), void *arg,
		      struct topo_box *ret_box, struct topo_box_rank *ret_rank)
{
	struct search s = {.o = o, .policy = policy, .accept = accept, .arg = arg};

	if (!o || (!exts && n))
		return -EINVAL;
	for (size_t k = 0; k < n; k++)
		for (int a = 0; a < TOPO_DIMS; a++)
			if (exts[k].dim[a] < 1 || exts[k].dim[a] > o->grid.dim[a])
				return -EINVAL;
	refresh(o);
	for (size_t k = 0; k < n && !s.done; k++)
		if (topo_shape_volume(&exts[k]) <= o->ncells - o->nbusy)
			search_extent(&s, &exts[k]);
	if (!s.have)
		return 0;
	if (ret_rank) {
		if (policy == TOPO_BOX_FIRST)
			topo_occ_box_rank(o, &s.best, &s.rank);
		*ret_rank = s.rank;
	}
	if (ret_box)
		*ret_box = s.best;
	return 1;
}

static bool fits_somewhere(struct topo_occ *o, int ex, int ey, int ez, struct topo_box *ret)
{
	struct search s = {.o = o, .policy = TOPO_BOX_FIRST};
	struct topo_shape e = {{ex, ey, ez}};

	if ((int64_t)ex * ey * ez > o->ncells - o->nbusy)
		return false;
	search_extent(&s, &e);
	if (s.have)
		*ret = s.best;
	return s.have;
}

int topo_occ_largest_free_box(struct topo_occ *o, struct topo_box *ret_box)
{
	const struct topo_shape *g = &o->grid;
	int64_t best = 0;
	struct topo_box b, bb = {0};

	if (o->lfb_ok && o->lfb_version == o->version) {
		if (o->lfb_found && ret_box)
			*ret_box = o->lfb;
		return o->lfb_found;
	}
	refresh(o);
	for (int ex = 1; ex <= g->dim[0]; ex++) {
		int ez = g->dim[2], ey;

		if ((int64_t)ex * g->dim[1] * g->dim[2] <= best)
			continue;
		for (ey = 1; ey <= g->dim[1]; ey++) {
			while (ez >= 1 && !fits_somewhere(o, ex, ey, ez, &b))
				ez--;
			if (ez == 0)
				break;
			if ((int64_t)ex * ey * ez > best) {
				best = (int64_t)ex * ey * ez;
				bb = b;
			}
		}
		if (ey == 1)
			break; /* not even ex x 1 x 1 fits: no wider box does */
	}
	o->lfb_ok = true;
	o->lfb_version = o->version;
	o->lfb_found = best > 0;
	o->lfb = bb;
	if (best > 0 && ret_box)
		*ret_box = bb;
	return best > 0;
}

/* ---- cover and check ----------------------------------------------------------- */

static bool cover_cell(const struct topo_occ *o, const unsigned char *taken, bool busy, int x,
		       int y, int z)
{
	int64_t i = cell_index(&o->grid, x, y, z);

	return !taken[i] && (o->count[i] > 0) == busy;
}

static bool cover_row(const struct topo_occ *o, const unsigned char *taken, bool busy, int x0,
		      int ex, int y0, int ey, int z)
{
	for (int y = y0; y < y0 + ey; y++)
		for (int x = x0; x < x0 + ex; x++)
			if (!cover_cell(o, taken, busy, x, y, z))
				return false;
	return true;
}

int topo_occ_cover(const struct topo_occ *o, bool busy,
		   int (*fn)(const struct topo_box *box, void *arg), void *arg)
{
	const struct topo_shape *g = &o->grid;
	unsigned char *taken = calloc((size_t)o->ncells, 1);
	int r = 0;

	if (!taken)
		return -ENOMEM;
	for (int z = 0; z < g->dim[2] && !r; z++)
		for (int y = 0; y < g->dim[1] && !r; y++)
			for (int x = 0; x < g->dim[0] && !r; x++) {
				struct topo_box b = {.origin = {{x, y, z}}, .ext = {{1, 1, 1}}};

				if (!cover_cell(o, taken, busy, x, y, z))
					continue;
				while (x + b.ext.dim[0] < g->dim[0] &&
				       cover_cell(o, taken, busy, x + b.ext.dim[0], y, z))
					b.ext.dim[0]++;
				while (y + b.ext.dim[1] < g->dim[1] &&
				       cover_row(o, taken, busy, x, b.ext.dim[0], y + b.ext.dim[1],
						 1, z))
					b.ext.dim[1]++;
				while (z + b.ext.dim[2] < g->dim[2] &&
				       cover_row(o, taken, busy, x, b.ext.dim[0], y, b.ext.dim[1],
						 z + b.ext.dim[2]))
					b.ext.dim[2]++;
				for (int k = z; k < z + b.ext.dim[2]; k++)
					for (int j = y; j < y + b.ext.dim[1]; j++)
						memset(taken + cell_index(g, x, j, k), 1,
						       (size_t)b.ext.dim[0]);
				r = fn(&b, arg);
			}
	free(taken);
	return r;
}

static int fail(char *why, size_t whylen, const char *msg, int64_t a, int64_t b)
{
	if (why)
		snprintf(why, whylen, msg, (long long)a, (long long)b);
	return -EUCLEAN;
}

int topo_occ_check(const struct topo_occ *o, char *why, size_t whylen)
{
	int64_t busy = 0;
	int32_t *bb = calloc((size_t)o->nblocks, sizeof(int32_t)), *s = NULL;
	int r = 0;

	if (!bb)
		return -ENOMEM;
	for (int64_t i = 0; i < o->ncells && !r; i++) {
		struct topo_coord c;

		if (o->count[i] < 0) {
			r = fail(why, whylen, "cell %lld has a negative count %lld", i,
				 o->count[i]);
			break;
		}
		topo_coord_of_index(&o->grid, i, &c);
		if (o->count[i] > 0) {
			busy++;
			bb[block_of(o, &c)]++;
		}
	}
	if (!r && busy != o->nbusy)
		r = fail(why, whylen, "%lld busy cells counted as %lld", busy, o->nbusy);
	for (int64_t k = 0; k < o->nblocks && !r; k++)
		if (bb[k] != o->bbusy[k])
			r = fail(why, whylen, "block %lld: busy count is wrong (%lld)", k,
				 o->bbusy[k]);
	if (!r && !o->stale) {
		size_t n = (size_t)o->sx * o->sy * o->sz;

		s = malloc(n * sizeof(int32_t));
		if (!s)
			r = -ENOMEM;
		else
			sat_fill(o, s);
		for (size_t i = 0; s && i < n && !r; i++)
			if (s[i] != o->sat[i])
				r = fail(why, whylen, "summed-area entry %lld is %lld, not fresh",
					 (int64_t)i, o->sat[i]);
	}
	free(s);
	free(bb);
	return r;
}

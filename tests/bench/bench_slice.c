/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_slice.c — TPU slice placement (kernel/sched/slice.c on the torus
 * occupancy index of topology/occupancy.c):
 *
 *   quality   1,000 generated fragmented superslices of the tpu-superslice
 *             board (8x8x16 chips, 2x2x1 hosts, 4x4x4 cubes, wraparound):
 *             2-8 running jobs as random boxes plus random busy hosts, then
 *             6 slice requests of mixed shapes from 2x2x1 to 8x8x16 placed
 *             one after the other, each placed if any box fits.  Slices
 *             placed by the index's fragmentation-aware choice (the one the
 *             scheduler makes), by first fit (first rotation, first origin
 *             in raster order), and by an exhaustive search over every box
 *             of every request (the most any sequence of choices places).
 *   speed     a 4x4x8 slice (32 pods, one per host) through pk_sched_cycle
 *             on 256 superslices (65,536 hosts) where a random half of
 *             every superslice's cubes is busy (the pods of one running
 *             PodGroup per superslice): median over runs of the
 *             time from the first cycle to the idle one, each run starting
 *             from the same cluster, next to one linear pass over the
 *             snapshot (the floor) measured in the same run.
 */
#define BENCH_NAME "bench_slice"
#include "tests/bench/bench_common.h"

#define RUNS 41
#define INSTANCES 1000
#define REQUESTS 6
#define DFS_BUDGET 200000 /* search nodes per instance */

/* ---- quality ---------------------------------------------------------------- */

static const char *const shapes[] = {"2x2x1", "2x2x2", "2x4x2", "2x2x4", "4x4x2", "4x4x4",
				     "2x4x8", "4x4x8", "4x8x8", "8x8x8", "8x8x16"};
static const int weights[] = {8, 8, 6, 6, 5, 4, 3, 3, 2, 1, 1};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

struct world {
	struct topo_shape chips, host, cube, grid;
};

static int pick_shape(unsigned *seed)
{
	int total = 0, r;

	for (size_t i = 0; i < NSHAPES; i++)
		total += weights[i];
	r = (int)(rand_r(seed) % (unsigned)total);
	for (size_t i = 0; i < NSHAPES; i++)
		if ((r -= weights[i]) < 0)
			return (int)i;
	return 0;
}

static void box_mark(struct topo_occ *o, const struct topo_box *b, int delta)
{
	const struct topo_shape *g = topo_occ_grid(o);

	for (int z = 0; z < b->ext.dim[2]; z++)
		for (int y = 0; y < b->ext.dim[1]; y++)
			for (int x = 0; x < b->ext.dim[0]; x++) {
				struct topo_coord c = {{(b->origin.c[0] + x) % g->dim[0],
							(b->origin.c[1] + y) % g->dim[1],
							(b->origin.c[2] + z) % g->dim[2]}};

				topo_occ_add(o, &c, delta);
			}
}

/* The rotations of a shape in cells. */
static size_t exts_of(const struct world *w, int shape, struct topo_shape ext[6])
{
	struct topo_shape s;
	struct topo_rotation rot[6];
	size_t n;

	topo_shape_parse(shapes[shape], &s);
	n = (size_t)topo_slice_rotations(&s, &w->host, &w->chips, rot);
	for (size_t k = 0; k < n; k++)
		for (int a = 0; a < TOPO_DIMS; a++)
			ext[k].dim[a] = rot[k].ext.dim[a] / w->host.dim[a];
	return n;
}

struct cand {
	struct topo_box box;
	struct topo_box_rank rank;
	int order;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int c = topo_box_rank_cmp(&x->rank, &y->rank);

	return c ? c : x->order - y->order;
}

/* Every free box of a request, best ranked first. */
static size_t free_boxes(struct topo_occ *o, const struct topo_shape *ext, size_t next,
			 struct cand *out)
{
	const struct topo_shape *g = topo_occ_grid(o);
	size_t n = 0;

	for (size_t k = 0; k < next; k++)
		for (int z = 0; z < (ext[k].dim[2] == g->dim[2] ? 1 : g->dim[2]); z++)
			for (int y = 0; y < (ext[k].dim[1] == g->dim[1] ? 1 : g->dim[1]); y++)
				for (int x = 0; x < (ext[k].dim[0] == g->dim[0] ? 1 : g->dim[0]);
				     x++) {
					struct topo_box b = {.origin = {{x, y, z}}, .ext = ext[k]};

					if (topo_occ_box_busy(o, &b) != 0)
						continue;
					out[n].box = b;
					out[n].order = (int)n;
					topo_occ_box_rank(o, &b, &out[n].rank);
					n++;
				}
	qsort(out, n, sizeof(*out), cand_cmp);
	return n;
}

struct dfs {
	const struct world *w;
	struct topo_occ *o;
	struct topo_shape ext[REQUESTS][6];
	size_t next[REQUESTS];
	int best;
	long nodes;
	bool truncated;
};

static bool fits_now(struct dfs *d, int i)
{
	return topo_occ_find_box(d->o, d->ext[i], d->next[i], TOPO_BOX_FIRST, NULL, NULL, NULL,
				 NULL) == 1;
}

/* Most requests i.. placeable (a request that fits must be placed). */
static void dfs(struct dfs *d, int i, int placed)
{
	int ub = placed;
	struct cand *c;
	size_t n;

	if (++d->nodes > DFS_BUDGET) {
		d->truncated = true;
		return;
	}
	for (int j = i; j < REQUESTS; j++)
		ub += fits_now(
		    d, j); /* the grid only fills: a request that does not fit now never will */
	if (ub <= d->best)
		return;
	if (i == REQUESTS) {
		d->best = placed;
		return;
	}
	c = malloc(1536 * sizeof(*c));
	if (!c)
		die("malloc", -ENOMEM);
	n = free_boxes(d->o, d->ext[i], d->next[i], c);
	if (!n)
		dfs(d, i + 1, placed);
	for (size_t k = 0; k < n && d->best < ub && !d->truncated; k++) {
		box_mark(d->o, &c[k].box, 1);
		dfs(d, i + 1, placed + 1);
		box_mark(d->o, &c[k].box, -1);
	}
	free(c);
}

static int greedy(struct topo_occ *o, struct dfs *d, enum topo_box_policy policy)
{
	int placed = 0;

	for (int i = 0; i < REQUESTS; i++) {
		struct topo_box b;

		if (topo_occ_find_box(o, d->ext[i], d->next[i], policy, NULL, NULL, &b, NULL) ==
		    1) {
			box_mark(o, &b, 1);
			placed++;
		}
	}
	return placed;
}

/* Running jobs as random boxes, then random busy hosts. */
static void fragment(struct topo_occ *o, const struct world *w, unsigned *seed)
{
	int jobs = 2 + (int)(rand_r(seed) % 7), pct = (int)(rand_r(seed) % 11);
	const struct topo_shape *g = &w->grid;

	for (int j = 0; j < jobs; j++) {
		struct topo_shape ext[6];
		size_t n = exts_of(w, (int)(rand_r(seed) % 8), ext);
		struct topo_box b = {.ext = ext[rand_r(seed) % n]};

		for (int a = 0; a < TOPO_DIMS; a++)
			b.origin.c[a] = (int)(rand_r(seed) % (unsigned)g->dim[a]);
		if (topo_occ_box_busy(o, &b) == 0)
			box_mark(o, &b, 1);
	}
	for (int64_t i = 0; i < topo_shape_volume(g); i++) {
		struct topo_coord c;

		topo_coord_of_index(g, i, &c);
		if ((int)(rand_r(seed) % 100) < pct)
			topo_occ_add(o, &c, 1);
	}
}

static void bench_quality(int instances)
{
	struct world w;
	struct topo_shape cubecells;
	long sum_best = 0, sum_first = 0, sum_exh = 0, nodes = 0;
	int truncated = 0, below = 0;
	unsigned seed = 7;
	double t0 = now_ms();

	topo_shape_parse("8x8x16", &w.chips);
	topo_shape_parse("2x2x1", &w.host);
	topo_shape_parse("4x4x4", &w.cube);
	for (int a = 0; a < TOPO_DIMS; a++) {
		w.grid.dim[a] = w.chips.dim[a] / w.host.dim[a];
		cubecells.dim[a] = w.cube.dim[a] / w.host.dim[a];
	}
	for (int inst = 0; inst < instances; inst++) {
		struct topo_occ *base = topo_occ_new(&w.grid, &cubecells, true), *o;
		struct dfs d = {.w = &w};
		int best, first;

		if (!base)
			die("topo_occ_new", -ENOMEM);
		fragment(base, &w, &seed);
		for (int i = 0; i < REQUESTS; i++)
			d.next[i] = exts_of(&w, pick_shape(&seed), d.ext[i]);
		if (!(o = topo_occ_dup(base)))
			die("topo_occ_dup", -ENOMEM);
		best = greedy(o, &d, TOPO_BOX_BEST);
		topo_occ_free(o);
		if (!(o = topo_occ_dup(base)))
			die("topo_occ_dup", -ENOMEM);
		first = greedy(o, &d, TOPO_BOX_FIRST);
		topo_occ_free(o);
		d.o = base;
		d.best = 0;
		dfs(&d, 0, 0);
		if (d.best < best)
			d.best = best; /* a truncated search still found at least this */
		truncated += d.truncated;
		below += best < d.best;
		nodes += d.nodes;
		sum_best += best;
		sum_first += first;
		sum_exh += d.best;
		topo_occ_free(base);
	}
	printf("quality  %d fragmented superslices, %d requests each (%ld slices placed by the "
	       "exhaustive search, %d searches cut at %d nodes, %.1f s)\n",
	       instances, REQUESTS, sum_exh, truncated, DFS_BUDGET, (now_ms() - t0) / 1e3);
	printf("  index (fragmentation-aware) %5ld slices  %6.2f%% of exhaustive  (%d instances "
	       "below it)\n",
	       sum_best, 100.0 * (double)sum_best / (double)(sum_exh ? sum_exh : 1), below);
	printf("  first fit                   %5ld slices  %6.2f%% of exhaustive\n", sum_first,
	       100.0 * (double)sum_first / (double)(sum_exh ? sum_exh : 1));
	(void)nodes;
}

/* ---- speed -------------------------------------------------------------------- */

static json_t *pod(const char *name, const char *grp, const char *node)
{
	json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:s, s:s}}}]}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
			      "namespace", "bench", "spec", "containers", "name", "c", "resources",
			      "requests", "google.com/tpu", "4", "cpu", "8");

	if (grp)
		json_object_set_new(json_object_get(p, "spec"), "schedulingGroup",
				    json_pack("{s:s}", "podGroupName", grp));
	if (node)
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
	return p;
}

static json_t *slice_group(const char *name, const char *shape, int min)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:{s:{s:i}}}}", "apiVersion",
			 "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name", name,
			 "namespace", "bench", "annotations", TOPO_ANN_SLICE_SHAPE, shape, "spec",
			 "schedulingPolicy", "gang", "minCount", min);
}

static void add_slice(struct pk_sched *s, const char *name)
{
	add(s, slice_group(name, "4x4x8", 32));
	for (int i = 0; i < 32; i++) {
		char p[48];

		snprintf(p, sizeof(p), "%s-%d", name, i);
		add(s, pod(p, name, NULL));
	}
}

static void remove_slice(struct pk_sched *s, const char *name)
{
	for (int i = 0; i < 32; i++) {
		char p[48];

		snprintf(p, sizeof(p), "%s-%d", name, i);
		pk_sched_remove(s, &pk_type_pod, "bench", p);
	}
	pk_sched_remove(s, &pk_type_pod_group, "bench", name);
}

static void bench_speed(const struct topo_board *b, int superslices, int runs)
{
	struct pk_sched *s = cluster(b, superslices, NULL);
	int64_t per_ss = topo_board_host_count(b, 1), per_cube = topo_board_host_count(b, 1) / 16;
	double t[RUNS], f[RUNS], t0;
	unsigned seed = 11;
	long busy = 0;

	/* A random half of the 16 cubes of every superslice is busy, with the pods
	 * of one running PodGroup per superslice (standalone pods would make
	 * 32,768 queue roots, whose ordering is not what this measures). */
	for (int i = 0; i < superslices; i++) {
		int cubes[16];
		char grp[32];

		snprintf(grp, sizeof(grp), "running-%d", i);
		add(s,
		    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{}}}}", "apiVersion",
			      "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name",
			      grp, "namespace", "bench", "spec", "schedulingPolicy", "basic"));

		for (int c = 0; c < 16; c++)
			cubes[c] = c;
		for (int c = 15; c > 0; c--) {
			int j = (int)(rand_r(&seed) % (unsigned)(c + 1)), tmp = cubes[c];

			cubes[c] = cubes[j];
			cubes[j] = tmp;
		}
		for (int c = 0; c < 8; c++)
			for (int64_t h = 0; h < per_cube; h++) {
				struct topo_host host;
				char p[48];

				if (topo_board_host(b, superslices,
						    i * per_ss + cubes[c] * per_cube + h,
						    &host) < 0)
					die("topo_board_host", -EINVAL);
				snprintf(p, sizeof(p), "busy-%ld", busy++);
				add(s, pod(p, grp, host.name));
			}
	}
	t0 = now_ms();
	add_slice(s, "warm");
	if (run_cycles(s) != 32)
		die("warm-up slice not placed", -EINVAL);
	printf("speed    first slice (builds the index of %d tori): %.1f ms\n", superslices,
	       now_ms() - t0);
	remove_slice(s, "warm");
	for (int run = 0; run < runs; run++) {
		size_t bound;

		add_slice(s, "slice");
		f[run] = linear_pass(s);
		t0 = now_ms();
		bound = run_cycles(s);
		t[run] = now_ms() - t0;
		if (bound != 32) {
			fprintf(stderr, BENCH_NAME ": slice bound %zu of 32 pods\n", bound);
			exit(1);
		}
		remove_slice(s, "slice");
	}
	double tm = median(t, runs), fm = median(f, runs);

	printf("speed    4x4x8 slice, %d superslices (%lld hosts, half the cubes busy): "
	       "%.3f ms median (target 1 ms), %.1fx floor (%.3f ms), %ld KiB peak RSS\n",
	       superslices, (long long)topo_board_host_count(b, superslices), tm,
	       fm > 0 ? tm / fm : 0.0, fm, peak_rss_kb());
	pk_sched_free(s);
}

/*
 * The same search without the per-torus cache: every torus's grid searched
 * for the best 4x4x8 box, as on the first slice after the index is built
 * (or after every torus changed).
 */
static void bench_cold(int superslices, int runs)
{
	struct topo_shape grid = {{4, 4, 16}}, cube = {{2, 2, 4}},
			  ext[3] = {{{2, 2, 8}}, {{2, 4, 4}}, {{4, 2, 4}}};
	struct topo_occ **o = calloc((size_t)superslices, sizeof(*o));
	double t[RUNS];
	unsigned seed = 11;

	if (!o)
		die("calloc", -ENOMEM);
	for (int i = 0; i < superslices; i++) {
		int cubes[16];

		if (!(o[i] = topo_occ_new(&grid, &cube, true)))
			die("topo_occ_new", -ENOMEM);
		for (int c = 0; c < 16; c++)
			cubes[c] = c;
		for (int c = 15; c > 0; c--) {
			int j = (int)(rand_r(&seed) % (unsigned)(c + 1)), tmp = cubes[c];

			cubes[c] = cubes[j];
			cubes[j] = tmp;
		}
		for (int c = 0; c < 8; c++)
			for (int h = 0; h < 16; h++) {
				struct topo_coord cc = {{(cubes[c] % 2) * 2 + h % 2,
							 (cubes[c] / 2 % 2) * 2 + h / 2 % 2,
							 (cubes[c] / 4) * 4 + h / 4}};

				topo_occ_add(o[i], &cc, 1);
			}
	}
	for (int run = 0; run < runs; run++) {
		struct topo_box b;
		struct topo_box_rank r, best = {0};
		bool have = false;
		double t0 = now_ms();

		for (int i = 0; i < superslices; i++) {
			topo_occ_add(o[i], &(struct topo_coord){{0, 0, 0}},
				     1); /* a change: no cache */
			topo_occ_add(o[i], &(struct topo_coord){{0, 0, 0}}, -1);
			if (topo_occ_find_box(o[i], ext, 3, TOPO_BOX_BEST, NULL, NULL, &b, &r) ==
				1 &&
			    (!have || topo_box_rank_cmp(&r, &best) < 0)) {
				best = r;
				have = true;
			}
		}
		t[run] = now_ms() - t0;
		if (!have)
			die("no box", -EINVAL);
	}
	printf("speed    the same search with every torus changed (no cache): %.3f ms median\n",
	       median(t, runs));
	for (int i = 0; i < superslices; i++)
		topo_occ_free(o[i]);
	free(o);
}

int main(int argc, char **argv)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX];
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	const char *only = getenv("BENCH_ONLY");
	int r;

	if (!b)
		die("topo_board_new", -ENOMEM);
	r = topo_board_load_file(b, PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml", err,
				 sizeof(err));
	if (r < 0) {
		fprintf(stderr, BENCH_NAME ": %s\n", err);
		return 1;
	}
	printf("bench_slice: TPU slices on board %s, medians\n", topo_board_name(b));
	if (!only || strcmp(only, "quality") == 0)
		bench_quality(quick ? 100 : INSTANCES);
	if (!only || strcmp(only, "speed") == 0)
		bench_speed(b, quick ? 16 : 256, quick ? 5 : RUNS);
	if (!only || strcmp(only, "speed") == 0)
		bench_cold(quick ? 16 : 256, quick ? 5 : RUNS);
	topo_board_free(b);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of topology/occupancy.c and the slice rotations of torus.c:
 * box counts, the best and first free box, the largest free box and the
 * cover, each against a brute force over random grids, with and without
 * wraparound; the fragmentation rank on hand-made cases; the checker.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"

static struct topo_shape sh(int x, int y, int z)
{
	return (struct topo_shape){{x, y, z}};
}

static struct topo_coord at(int x, int y, int z)
{
	return (struct topo_coord){{x, y, z}};
}

static bool brute_busy(const struct topo_occ *o, const struct topo_coord *c)
{
	return topo_occ_count(o, c) > 0;
}

static int64_t brute_box(const struct topo_occ *o, const struct topo_box *b)
{
	const struct topo_shape *g = topo_occ_grid(o);
	int64_t n = 0;

	for (int z = 0; z < b->ext.dim[2]; z++)
		for (int y = 0; y < b->ext.dim[1]; y++)
			for (int x = 0; x < b->ext.dim[0]; x++) {
				struct topo_coord c = at((b->origin.c[0] + x) % g->dim[0],
							 (b->origin.c[1] + y) % g->dim[1],
							 (b->origin.c[2] + z) % g->dim[2]);

				n += brute_busy(o, &c);
			}
	return n;
}

static struct topo_occ *random_grid(unsigned *seed, bool wrap, int pct)
{
	struct topo_shape g = sh(1 + (int)(rand_r(seed) % 4) * 2, 1 + (int)(rand_r(seed) % 2) * 2,
				 2 + (int)(rand_r(seed) % 3) * 2);
	struct topo_shape blk = sh(g.dim[0] % 2 ? 1 : 2, g.dim[1] % 2 ? 1 : 2, 2);
	struct topo_occ *o = topo_occ_new(&g, &blk, wrap);

	ck_assert_ptr_nonnull(o);
	for (int64_t i = 0; i < topo_shape_volume(&g); i++) {
		struct topo_coord c;

		topo_coord_of_index(&g, i, &c);
		if ((int)(rand_r(seed) % 100) < pct)
			ck_assert_int_eq(topo_occ_add(o, &c, 1 + (int)(rand_r(seed) % 2)), 0);
	}
	return o;
}

static bool origin_ok(const struct topo_occ *o, const struct topo_box *b)
{
	const struct topo_shape *g = topo_occ_grid(o);

	for (int a = 0; a < TOPO_DIMS; a++) {
		if (topo_occ_wrap(o) && b->ext.dim[a] == g->dim[a] && b->origin.c[a])
			return false;
		if (!topo_occ_wrap(o) && b->origin.c[a] + b->ext.dim[a] > g->dim[a])
			return false;
	}
	return true;
}

START_TEST(box_counts)
{
	unsigned seed = 1;

	for (int round = 0; round < 200; round++) {
		struct topo_occ *o = random_grid(&seed, round % 2, 30);
		const struct topo_shape *g = topo_occ_grid(o);
		char why[256];

		for (int k = 0; k < 50; k++) {
			struct topo_box b;
			int64_t want;

			for (int a = 0; a < TOPO_DIMS; a++) {
				b.ext.dim[a] = 1 + (int)(rand_r(&seed) % (unsigned)g->dim[a]);
				b.origin.c[a] = (int)(rand_r(&seed) % (unsigned)g->dim[a]);
			}
			want = brute_box(o, &b);
			if (!topo_occ_wrap(o) && !origin_ok(o, &b))
				ck_assert_int_eq(topo_occ_box_busy(o, &b), -EINVAL);
			else
				ck_assert_int_eq(topo_occ_box_busy(o, &b), want);
			/* a change in between: the table is refreshed lazily */
			struct topo_coord c = at((int)(rand_r(&seed) % (unsigned)g->dim[0]), 0, 0);

			topo_occ_add(o, &c, topo_occ_count(o, &c) > 0 ? -topo_occ_count(o, &c) : 1);
		}
		ck_assert_msg(topo_occ_check(o, why, sizeof(why)) == 0, "%s", why);
		topo_occ_free(o);
	}
}
END_TEST

/* Every free box of the extents, best first by (rank, extent, raster order). */
static int brute_best(struct topo_occ *o, const struct topo_shape *ext, size_t n, bool first,
		      struct topo_box *ret, struct topo_box_rank *ret_rank)
{
	const struct topo_shape *g = topo_occ_grid(o);
	bool have = false;

	for (size_t k = 0; k < n; k++)
		for (int z = 0; z < g->dim[2]; z++)
			for (int y = 0; y < g->dim[1]; y++)
				for (int x = 0; x < g->dim[0]; x++) {
					struct topo_box b = {.origin = at(x, y, z), .ext = ext[k]};
					struct topo_box_rank r;

					if (!origin_ok(o, &b) || brute_box(o, &b))
						continue;
					if (first) {
						*ret = b;
						return 1;
					}
					topo_occ_box_rank(o, &b, &r);
					if (!have || topo_box_rank_cmp(&r, ret_rank) < 0) {
						*ret = b;
						*ret_rank = r;
						have = true;
					}
				}
	return have;
}

START_TEST(best_and_first_match_brute_force)
{
	unsigned seed = 2;

	for (int round = 0; round < 300; round++) {
		struct topo_occ *o = random_grid(&seed, round % 2, 20 + round % 40);
		const struct topo_shape *g = topo_occ_grid(o);
		struct topo_shape ext[2];
		struct topo_box b, wb = {0};
		struct topo_box_rank r, wr = {0};
		int got, want;

		for (int k = 0; k < 2; k++)
			for (int a = 0; a < TOPO_DIMS; a++)
				ext[k].dim[a] = 1 + (int)(rand_r(&seed) % (unsigned)g->dim[a]);
		for (int first = 0; first < 2; first++) {
			want = brute_best(o, ext, 2, first, &wb, &wr);
			got = topo_occ_find_box(o, ext, 2, first ? TOPO_BOX_FIRST : TOPO_BOX_BEST,
						NULL, NULL, &b, &r);
			ck_assert_int_eq(got, want);
			if (!got)
				continue;
			ck_assert_int_eq(brute_box(o, &b), 0);
			if (first) {
				ck_assert(!memcmp(&b, &wb, sizeof(b)));
			} else {
				/* early stop may take an equally ranked box found first */
				ck_assert_msg(
				    topo_box_rank_cmp(&r, &wr) == 0,
				    "round %d grid %dx%dx%d wrap %d: got %d.%d.%d %dx%dx%d "
				    "(%lld, %lld), want %d.%d.%d %dx%dx%d (%lld, %lld)",
				    round, g->dim[0], g->dim[1], g->dim[2], topo_occ_wrap(o),
				    b.origin.c[0], b.origin.c[1], b.origin.c[2], b.ext.dim[0],
				    b.ext.dim[1], b.ext.dim[2], (long long)r.broken,
				    (long long)r.exposed, wb.origin.c[0], wb.origin.c[1],
				    wb.origin.c[2], wb.ext.dim[0], wb.ext.dim[1], wb.ext.dim[2],
				    (long long)wr.broken, (long long)wr.exposed);
				topo_occ_box_rank(o, &b, &wr);
				ck_assert_int_eq(topo_box_rank_cmp(&r, &wr), 0);
			}
		}
		topo_occ_free(o);
	}
}
END_TEST

START_TEST(wraparound_crosses_the_seam)
{
	struct topo_shape g = sh(4, 1, 1), e = sh(2, 1, 1);
	struct topo_occ *w = topo_occ_new(&g, NULL, true), *n = topo_occ_new(&g, NULL, false);
	struct topo_box b;

	topo_occ_add(w, &(struct topo_coord){{1, 0, 0}}, 1);
	topo_occ_add(w, &(struct topo_coord){{2, 0, 0}}, 1);
	topo_occ_add(n, &(struct topo_coord){{1, 0, 0}}, 1);
	topo_occ_add(n, &(struct topo_coord){{2, 0, 0}}, 1);
	ck_assert_int_eq(topo_occ_find_box(w, &e, 1, TOPO_BOX_BEST, NULL, NULL, &b, NULL), 1);
	ck_assert_int_eq(b.origin.c[0], 3); /* cells 3 and 0 */
	ck_assert_int_eq(topo_occ_find_box(n, &e, 1, TOPO_BOX_BEST, NULL, NULL, &b, NULL), 0);
	ck_assert_int_eq(topo_occ_largest_free_box(n, &b), 1);
	ck_assert_int_eq(b.ext.dim[0], 1);
	ck_assert_int_eq(topo_occ_largest_free_box(w, &b), 1);
	ck_assert_int_eq(b.ext.dim[0], 2);
	topo_occ_free(w);
	topo_occ_free(n);
}
END_TEST

START_TEST(fragmentation_keeps_free_cubes)
{
	/* Two cubes of 2x2x2 cells along z; one cell of the upper cube is busy.
	 * A 2x2x1 box goes into the used cube, not the free one. */
	struct topo_shape g = sh(2, 2, 4), cube = sh(2, 2, 2), e = sh(2, 2, 1);
	struct topo_occ *o = topo_occ_new(&g, &cube, false);
	struct topo_box b;
	struct topo_box_rank r;

	topo_occ_add(o, &(struct topo_coord){{1, 1, 3}}, 1);
	ck_assert_int_eq(topo_occ_find_box(o, &e, 1, TOPO_BOX_BEST, NULL, NULL, &b, &r), 1);
	ck_assert_int_eq(b.origin.c[2], 2);
	ck_assert_int_eq(r.broken, 0);
	/* first fit takes the free cube */
	ck_assert_int_eq(topo_occ_find_box(o, &e, 1, TOPO_BOX_FIRST, NULL, NULL, &b, &r), 1);
	ck_assert_int_eq(b.origin.c[2], 0);
	ck_assert_int_eq(r.broken, 8);
	/* a whole cube breaks nothing; in an empty torus the torus itself is broken */
	topo_occ_add(o, &(struct topo_coord){{1, 1, 3}}, -1);
	b = (struct topo_box){.origin = at(0, 0, 2), .ext = sh(2, 2, 2)};
	topo_occ_box_rank(o, &b, &r);
	ck_assert_int_eq(r.broken, 16);
	topo_occ_add(o, &(struct topo_coord){{0, 0, 1}}, 1);
	topo_occ_box_rank(o, &b, &r);
	ck_assert_int_eq(r.broken, 0);
	ck_assert_int_eq(r.exposed, 3); /* torus faces x, y, top; 3 free of 4 below */
	topo_occ_free(o);
}
END_TEST

static bool accept_x1(const struct topo_box *b, void *arg)
{
	(void)arg;
	return b->origin.c[0] == 1;
}

START_TEST(accept_vetoes)
{
	struct topo_shape g = sh(4, 1, 1), e = sh(1, 1, 1);
	struct topo_occ *o = topo_occ_new(&g, NULL, true);
	struct topo_box b;

	ck_assert_int_eq(topo_occ_find_box(o, &e, 1, TOPO_BOX_FIRST, accept_x1, NULL, &b, NULL), 1);
	ck_assert_int_eq(b.origin.c[0], 1);
	topo_occ_add(o, &(struct topo_coord){{1, 0, 0}}, 1);
	ck_assert_int_eq(topo_occ_find_box(o, &e, 1, TOPO_BOX_BEST, accept_x1, NULL, &b, NULL), 0);
	e = sh(5, 1, 1);
	ck_assert_int_eq(topo_occ_find_box(o, &e, 1, TOPO_BOX_BEST, NULL, NULL, &b, NULL), -EINVAL);
	topo_occ_free(o);
}
END_TEST

START_TEST(largest_free_box_matches_brute_force)
{
	unsigned seed = 3;

	for (int round = 0; round < 150; round++) {
		struct topo_occ *o = random_grid(&seed, round % 2, 10 + round % 50);
		const struct topo_shape *g = topo_occ_grid(o);
		int64_t best = 0;
		struct topo_box b;

		for (int ez = 1; ez <= g->dim[2]; ez++)
			for (int ey = 1; ey <= g->dim[1]; ey++)
				for (int ex = 1; ex <= g->dim[0]; ex++) {
					struct topo_shape e = sh(ex, ey, ez);
					struct topo_box w;

					if ((int64_t)ex * ey * ez > best &&
					    brute_best(o, &e, 1, true, &w, NULL))
						best = (int64_t)ex * ey * ez;
				}
		if (!best) {
			ck_assert_int_eq(topo_occ_largest_free_box(o, &b), 0);
		} else {
			ck_assert_int_eq(topo_occ_largest_free_box(o, &b), 1);
			ck_assert_int_eq(topo_shape_volume(&b.ext), best);
			ck_assert_int_eq(brute_box(o, &b), 0);
			ck_assert_int_eq(topo_occ_largest_free_box(o, &b), 1); /* cached */
		}
		topo_occ_free(o);
	}
}
END_TEST

struct cover {
	unsigned char *seen;
	const struct topo_shape *g;
	bool busy;
	const struct topo_occ *o;
	int boxes;
};

static int cover_fn(const struct topo_box *b, void *arg)
{
	struct cover *c = arg;

	c->boxes++;
	for (int z = 0; z < b->ext.dim[2]; z++)
		for (int y = 0; y < b->ext.dim[1]; y++)
			for (int x = 0; x < b->ext.dim[0]; x++) {
				struct topo_coord p =
				    at(b->origin.c[0] + x, b->origin.c[1] + y, b->origin.c[2] + z);
				int64_t i = topo_coord_index(c->g, &p);

				ck_assert(topo_coord_in(c->g, &p));
				ck_assert(!c->seen[i]);
				ck_assert(brute_busy(c->o, &p) == c->busy);
				c->seen[i] = 1;
			}
	return 0;
}

START_TEST(cover_partitions_the_cells)
{
	unsigned seed = 4;

	for (int round = 0; round < 100; round++) {
		struct topo_occ *o = random_grid(&seed, round % 2, 40);
		const struct topo_shape *g = topo_occ_grid(o);
		unsigned char seen[512] = {0};

		for (int busy = 0; busy < 2; busy++) {
			struct cover c = {.seen = seen, .g = g, .busy = busy, .o = o};

			ck_assert_int_eq(topo_occ_cover(o, busy, cover_fn, &c), 0);
		}
		for (int64_t i = 0; i < topo_shape_volume(g); i++)
			ck_assert(seen[i]);
		topo_occ_free(o);
	}
}
END_TEST

START_TEST(rotations)
{
	struct topo_shape host = sh(2, 2, 1), torus = sh(8, 8, 16);
	struct topo_rotation r[6];
	struct topo_shape s;

	topo_shape_parse("4x4x8", &s);
	ck_assert_int_eq(topo_slice_rotations(&s, &host, &torus, r), 3);
	ck_assert_int_eq(r[0].ext.dim[2], 8); /* identity first */
	topo_shape_parse("3x2x1", &s);
	ck_assert_int_eq(topo_slice_rotations(&s, &host, &torus, r), 0); /* 3 tiles no host */
	topo_shape_parse("2x1x2", &s);
	ck_assert_int_eq(topo_slice_rotations(&s, &host, &torus, r), 1); /* only as 2x2x1 */
	ck_assert_int_eq(r[0].ext.dim[2], 1);
	ck_assert_int_eq(r[0].axis[0], 0);
	ck_assert_int_eq(r[0].axis[1], 2);
	ck_assert_int_eq(r[0].axis[2], 1);
	topo_shape_parse("8x8x32", &s);
	ck_assert_int_eq(topo_slice_rotations(&s, &host, &torus, r), 0); /* too big */
	topo_shape_parse("2x4x8", &s);
	ck_assert_int_eq(topo_slice_rotations(&s, &host, &torus, r), 6);
}
END_TEST

START_TEST(bad_arguments)
{
	struct topo_shape g = sh(4, 4, 4), bad = sh(0, 1, 1), odd = sh(3, 1, 1);

	ck_assert_ptr_null(topo_occ_new(&bad, NULL, true));
	ck_assert_ptr_null(topo_occ_new(&g, &odd, true));
	ck_assert_ptr_null(topo_occ_new(NULL, NULL, true));
	struct topo_occ *o = topo_occ_new(&g, NULL, false), *d;

	ck_assert_int_eq(topo_occ_add(o, &(struct topo_coord){{4, 0, 0}}, 1), -EINVAL);
	ck_assert_int_eq(topo_occ_add(o, &(struct topo_coord){{3, 3, 3}}, 2), 0);
	ck_assert_int_eq(topo_occ_busy_cells(o), 1);
	d = topo_occ_dup(o);
	ck_assert_int_eq(topo_occ_count(d, &(struct topo_coord){{3, 3, 3}}), 2);
	ck_assert_int_eq(topo_occ_version(d), topo_occ_version(o));
	topo_occ_add(d, &(struct topo_coord){{3, 3, 3}}, -2);
	ck_assert_int_eq(topo_occ_busy_cells(o), 1);
	ck_assert_int_eq(topo_occ_busy_cells(d), 0);
	topo_occ_free(o);
	topo_occ_free(d);
	topo_occ_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("occupancy");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, box_counts);
	tcase_add_test(tc, best_and_first_match_brute_force);
	tcase_add_test(tc, wraparound_crosses_the_seam);
	tcase_add_test(tc, fragmentation_keeps_free_cubes);
	tcase_add_test(tc, accept_vetoes);
	tcase_add_test(tc, largest_free_box_matches_brute_force);
	tcase_add_test(tc, cover_partitions_the_cells);
	tcase_add_test(tc, rotations);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

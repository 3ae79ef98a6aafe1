/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of topology/torus.c: shapes, indices, neighbours, blocks, sub-cuboids. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "topology/topology.h"

static struct topo_shape shape(const char *s)
{
	struct topo_shape sh;

	ck_assert_int_eq(topo_shape_parse(s, &sh), 0);
	return sh;
}

static struct topo_coord xyz(int x, int y, int z)
{
	return (struct topo_coord){{x, y, z}};
}

START_TEST(parse_format)
{
	struct topo_shape s = shape("8x8x16"), keep = {{9, 9, 9}};
	char buf[32];
	static const char *bad[] = {"", "4x4", "4x4x4x4", "0x4x4", "4x4x", "x4x4", "4X4X4",
				    "-1x2x2", "4x4x4 ", "99999999x1x1", "4x4xa", NULL};

	ck_assert_int_eq(s.dim[0], 8);
	ck_assert_int_eq(s.dim[2], 16);
	ck_assert_int_eq(topo_shape_volume(&s), 1024);
	ck_assert_int_eq(topo_shape_format(&s, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "8x8x16");
	ck_assert_int_eq(topo_shape_format(&s, buf, 6), -ENOSPC);
	for (size_t i = 0; bad[i]; i++) {
		ck_assert_msg(topo_shape_parse(bad[i], &keep) == -EINVAL, "'%s' accepted", bad[i]);
		ck_assert_int_eq(keep.dim[0], 9);
	}
}
END_TEST

START_TEST(divides)
{
	struct topo_shape host = shape("2x2x1"), cube = shape("4x4x4"), ss = shape("8x8x16");
	struct topo_shape odd = shape("3x2x1");

	ck_assert(topo_shape_divides(&host, &cube));
	ck_assert(topo_shape_divides(&cube, &ss));
	ck_assert(topo_shape_divides(&host, &ss));
	ck_assert(!topo_shape_divides(&cube, &host));
	ck_assert(!topo_shape_divides(&odd, &cube));
}
END_TEST

START_TEST(index_round_trip)
{
	struct topo_shape s = shape("8x8x16");
	struct topo_coord c = xyz(3, 5, 11), back;

	ck_assert_int_eq(topo_coord_index(&s, &c), 3 + 8 * (5 + 8 * 11));
	for (int64_t i = 0; i < topo_shape_volume(&s); i++) {
		topo_coord_of_index(&s, i, &back);
		ck_assert(topo_coord_in(&s, &back));
		ck_assert_int_eq(topo_coord_index(&s, &back), i);
	}
	topo_coord_of_index(&s, 1, &back);
	ck_assert_int_eq(back.c[0], 1); /* x fastest */
	c = xyz(8, 0, 0);
	ck_assert(!topo_coord_in(&s, &c));
	c = xyz(0, -1, 0);
	ck_assert(!topo_coord_in(&s, &c));
}
END_TEST

static bool has(const struct topo_coord *list, int n, struct topo_coord c)
{
	for (int i = 0; i < n; i++)
		if (memcmp(&list[i], &c, sizeof(c)) == 0)
			return true;
	return false;
}

START_TEST(neighbors_cube)
{
	struct topo_shape s = shape("4x4x4");
	struct topo_coord nb[6], corner = xyz(0, 0, 0), mid = xyz(1, 2, 1);

	ck_assert_int_eq(topo_torus_neighbors(&s, false, &corner, nb), 3);
	ck_assert(has(nb, 3, xyz(1, 0, 0)));
	ck_assert(has(nb, 3, xyz(0, 1, 0)));
	ck_assert(has(nb, 3, xyz(0, 0, 1)));
	ck_assert_int_eq(topo_torus_neighbors(&s, true, &corner, nb), 6);
	ck_assert(has(nb, 6, xyz(3, 0, 0)));
	ck_assert(has(nb, 6, xyz(0, 3, 0)));
	ck_assert(has(nb, 6, xyz(0, 0, 3)));
	ck_assert_int_eq(topo_torus_neighbors(&s, false, &mid, nb), 6);
	ck_assert(has(nb, 6, xyz(1, 3, 1)));
	ck_assert(has(nb, 6, xyz(1, 2, 0)));
}
END_TEST

START_TEST(neighbors_small_dims)
{
	struct topo_shape s = shape("2x2x1");
	struct topo_shape line = shape("1x1x1");
	struct topo_coord nb[6], c = xyz(0, 1, 0);

	/* Size 2 wraps onto the same chip: counted once.  Size 1: no link. */
	ck_assert_int_eq(topo_torus_neighbors(&s, true, &c, nb), 2);
	ck_assert(has(nb, 2, xyz(1, 1, 0)));
	ck_assert(has(nb, 2, xyz(0, 0, 0)));
	ck_assert_int_eq(topo_torus_neighbors(&s, false, &c, nb), 2);
	ck_assert_int_eq(topo_torus_neighbors(&line, true, &c, nb), 0);
	/* No chip is its own neighbour, whatever the shape. */
	static const char *shapes[] = {"1x2x3", "2x1x1", "3x3x1", "2x2x2", "1x1x5", NULL};
	for (size_t k = 0; shapes[k]; k++) {
		struct topo_shape sh = shape(shapes[k]);

		for (int64_t i = 0; i < topo_shape_volume(&sh); i++) {
			struct topo_coord cc;
			int n;

			topo_coord_of_index(&sh, i, &cc);
			for (int w = 0; w < 2; w++) {
				n = topo_torus_neighbors(&sh, w, &cc, nb);
				ck_assert(!has(nb, n, cc));
				for (int a = 0; a < n; a++)
					for (int b = a + 1; b < n; b++)
						ck_assert(memcmp(&nb[a], &nb[b], sizeof(nb[a])));
			}
		}
	}
}
END_TEST

START_TEST(neighbors_symmetric)
{
	struct topo_shape s = shape("4x2x3");

	for (int w = 0; w < 2; w++)
		for (int64_t i = 0; i < topo_shape_volume(&s); i++) {
			struct topo_coord c, nb[6], back[6];
			int n;

			topo_coord_of_index(&s, i, &c);
			n = topo_torus_neighbors(&s, w, &c, nb);
			for (int k = 0; k < n; k++) {
				int m = topo_torus_neighbors(&s, w, &nb[k], back);

				ck_assert(has(back, m, c));
			}
		}
}
END_TEST

START_TEST(block)
{
	struct topo_shape host = shape("2x2x1"), cube = shape("4x4x4");
	struct topo_coord c = xyz(5, 2, 13), b;

	topo_coord_block(&c, &host, &b);
	ck_assert_int_eq(b.c[0], 2);
	ck_assert_int_eq(b.c[1], 1);
	ck_assert_int_eq(b.c[2], 13);
	topo_coord_block(&c, &cube, &b);
	ck_assert_int_eq(b.c[0], 1);
	ck_assert_int_eq(b.c[1], 0);
	ck_assert_int_eq(b.c[2], 3);
}
END_TEST

struct collect {
	struct topo_coord o[512];
	int n;
	int stop_at;
};

static int collect_fn(const struct topo_coord *origin, void *arg)
{
	struct collect *c = arg;

	c->o[c->n++] = *origin;
	return c->n == c->stop_at ? 7 : 0;
}

START_TEST(subcuboids)
{
	struct topo_shape ss = shape("8x8x16"), cube = shape("4x4x4"), one = shape("1x1x1");
	struct topo_shape big = shape("9x1x1"), zero = {{0, 1, 1}};
	struct collect c = {.n = 0};

	/* Tiling: 2*2*4 cubes. */
	ck_assert_int_eq(topo_subcuboids_foreach(&ss, &cube, &cube, collect_fn, &c), 0);
	ck_assert_int_eq(c.n, 16);
	ck_assert(has(c.o, c.n, xyz(4, 4, 12)));
	ck_assert(!has(c.o, c.n, xyz(4, 4, 14)));
	/* Every offset: 5*5*13. */
	c.n = 0;
	ck_assert_int_eq(topo_subcuboids_foreach(&ss, &cube, &one, collect_fn, &c), 0);
	ck_assert_int_eq(c.n, 5 * 5 * 13);
	/* Early stop returns fn's value. */
	c.n = 0;
	c.stop_at = 3;
	ck_assert_int_eq(topo_subcuboids_foreach(&ss, &cube, &cube, collect_fn, &c), 7);
	ck_assert_int_eq(c.n, 3);
	ck_assert_int_eq(topo_subcuboids_foreach(&ss, &big, &one, collect_fn, &c), -EINVAL);
	ck_assert_int_eq(topo_subcuboids_foreach(&ss, &cube, &zero, collect_fn, &c), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("torus");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, parse_format);
	tcase_add_test(tc, divides);
	tcase_add_test(tc, index_round_trip);
	tcase_add_test(tc, neighbors_cube);
	tcase_add_test(tc, neighbors_small_dims);
	tcase_add_test(tc, neighbors_symmetric);
	tcase_add_test(tc, block);
	tcase_add_test(tc, subcuboids);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

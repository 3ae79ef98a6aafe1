/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of topology/torus.c: shapes, indices, blocks. */
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
	static const char *bad[] = {"",	     "4x4",    "4x4x4x4", "0x4x4",	  "4x4x",  "x4x4",
				    "4X4X4", "-1x2x2", "4x4x4 ",  "99999999x1x1", "4x4xa", NULL};

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

int main(void)
{
	Suite *s = suite_create("torus");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, parse_format);
	tcase_add_test(tc, divides);
	tcase_add_test(tc, index_round_trip);
	tcase_add_test(tc, block);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

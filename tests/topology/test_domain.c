/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of topology/domain.c: domain trees from labelled nodes. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/domain_internal.h"

#define SS "topology.podkernel.dev/superslice"
#define CUBE "topology.podkernel.dev/cube"
#define HOST "kubernetes.io/hostname"

static const char *const levels[] = {SS, CUBE, HOST};

static void check_tree(const struct topo_domain_tree *t)
{
	char why[256] = "";

	ck_assert_msg(topo_domain_tree_check(t, why, sizeof(why)) == 0, "%s", why);
}

static void add(struct topo_domain_tree *t, int idx, const char *ss, const char *cube,
		const char *host)
{
	const char *keys[4] = {"other", SS, CUBE, HOST};
	const char *vals[4] = {"x", ss, cube, host};
	const char *k[4], *v[4];
	size_t n = 0;

	for (int i = 0; i < 4; i++)
		if (vals[i]) {
			k[n] = keys[i];
			v[n++] = vals[i];
		}
	ck_assert_int_eq(topo_domain_tree_add_node(t, idx, k, v, n), 0);
}

/* Two superslices, two cubes each, two hosts per cube; added interleaved. */
static struct topo_domain_tree *sample(void)
{
	struct topo_domain_tree *t = topo_domain_tree_new(levels, 3);
	char host[48], cube[48], ss[48];
	int idx = 0;

	ck_assert_ptr_nonnull(t);
	for (int h = 0; h < 2; h++)
		for (int s = 1; s >= 0; s--)
			for (int c = 0; c < 2; c++) {
				snprintf(ss, sizeof(ss), "ss%d", s);
				snprintf(cube, sizeof(cube), "ss%d-c%d", s, c);
				snprintf(host, sizeof(host), "h-%d-%d-%d", s, c, h);
				add(t, idx++, ss, cube, host);
			}
	return t;
}

START_TEST(build_and_query)
{
	struct topo_domain_tree *t = sample();
	int ss1, c, h;

	check_tree(t); /* before build: nothing numbered, still consistent */
	ck_assert_uint_eq(topo_domain_count(t), 0);
	ck_assert_int_eq(topo_domain_tree_build(t), 0);
	check_tree(t);
	ck_assert_uint_eq(topo_domain_count(t), 1 + 2 + 4 + 8);
	ck_assert_uint_eq(topo_domain_level_count(t), 3);
	ck_assert_int_eq(topo_domain_level(t, 0), -1);
	ck_assert_ptr_null(topo_domain_value(t, 0));
	ck_assert_uint_eq(topo_domain_node_count(t, 0), 8);
	/* First-seen order: ss1 was seen first. */
	ck_assert_uint_eq(topo_domain_level_size(t, 0), 2);
	ss1 = topo_domain_level_domain(t, 0, 0);
	ck_assert_str_eq(topo_domain_value(t, ss1), "ss1");
	ck_assert_int_eq(topo_domain_find(t, 0, "ss1"), ss1);
	ck_assert_int_eq(topo_domain_parent(t, ss1), 0);
	ck_assert_uint_eq(topo_domain_child_count(t, ss1), 2);
	c = topo_domain_child(t, ss1, 1);
	ck_assert_str_eq(topo_domain_value(t, c), "ss1-c1");
	ck_assert_int_eq(topo_domain_level(t, c), 1);
	ck_assert_uint_eq(topo_domain_node_count(t, c), 2);
	ck_assert_uint_eq(topo_domain_node_count(t, ss1), 4);
	/* Nodes of ss1-c1 are caller indices 1 and 5. */
	ck_assert_int_eq(topo_domain_node(t, c, 0), 1);
	ck_assert_int_eq(topo_domain_node(t, c, 1), 5);
	ck_assert_int_eq(topo_domain_node(t, c, 2), -1);
	h = topo_domain_node_domain(t, 5, 2);
	ck_assert_str_eq(topo_domain_value(t, h), "h-1-1-1");
	ck_assert_int_eq(topo_domain_parent(t, h), c);
	ck_assert_int_eq(topo_domain_node_domain(t, 5, 1), c);
	ck_assert_int_eq(topo_domain_node_domain(t, 5, 0), ss1);
	ck_assert_int_eq(topo_domain_node_domain(t, 5, 3), -1);
	ck_assert_int_eq(topo_domain_node_domain(t, 99, 0), -1);
	ck_assert_int_eq(topo_domain_find(t, 1, "nope"), -1);
	ck_assert_int_eq(topo_domain_find(t, 7, "ss1"), -1);
	/* Levels are dense, contiguous ranges. */
	for (int l = 0; l < 3; l++)
		for (size_t i = 0; i < topo_domain_level_size(t, l); i++) {
			int d = topo_domain_level_domain(t, l, i);

			ck_assert_int_eq(topo_domain_level(t, d), l);
			if (i)
				ck_assert_int_eq(d, topo_domain_level_domain(t, l, i - 1) + 1);
		}
	ck_assert_int_eq(topo_domain_tree_add_node(t, 100, NULL, NULL, 0), -EBUSY);
	ck_assert_int_eq(topo_domain_tree_build(t), -EBUSY);
	topo_domain_tree_free(t);
}
END_TEST

START_TEST(missing_labels)
{
	struct topo_domain_tree *t = topo_domain_tree_new(levels, 3);
	int ss0;

	add(t, 0, "ss0", "ss0-c0", "a");
	add(t, 1, "ss0", NULL, "b");  /* no cube: stops at the superslice */
	add(t, 2, NULL, "ss0-c0", "c"); /* no superslice: in no domain at all */
	add(t, 4, "ss0", "", "d");   /* empty value counts as missing */
	ck_assert_int_eq(topo_domain_tree_build(t), 0);
	check_tree(t);
	ss0 = topo_domain_find(t, 0, "ss0");
	ck_assert_uint_eq(topo_domain_node_count(t, 0), 4);
	ck_assert_uint_eq(topo_domain_node_count(t, ss0), 3);
	ck_assert_int_eq(topo_domain_node_domain(t, 1, 0), ss0);
	ck_assert_int_eq(topo_domain_node_domain(t, 1, 1), -1);
	ck_assert_int_eq(topo_domain_node_domain(t, 1, 2), -1);
	ck_assert_int_eq(topo_domain_node_domain(t, 2, 0), -1);
	ck_assert_int_eq(topo_domain_node_domain(t, 3, 0), -1); /* never added */
	ck_assert_uint_eq(topo_domain_count(t), 4);
	topo_domain_tree_free(t);
}
END_TEST

START_TEST(same_value_two_parents)
{
	const char *const lv[] = {"rack", "slot"};
	struct topo_domain_tree *t = topo_domain_tree_new(lv, 2);
	const char *k[] = {"rack", "slot"};
	const char *v1[] = {"r0", "s0"}, *v2[] = {"r1", "s0"}, *v3[] = {"r0", "s0"};

	ck_assert_int_eq(topo_domain_tree_add_node(t, 0, k, v1, 2), 0);
	ck_assert_int_eq(topo_domain_tree_add_node(t, 1, k, v2, 2), 0);
	ck_assert_int_eq(topo_domain_tree_add_node(t, 2, k, v3, 2), 0);
	ck_assert_int_eq(topo_domain_tree_add_node(t, 2, k, v3, 2), -EEXIST);
	ck_assert_int_eq(topo_domain_tree_add_node(t, -1, k, v3, 2), -EINVAL);
	ck_assert_int_eq(topo_domain_tree_build(t), 0);
	check_tree(t);
	/* "s0" under r0 and under r1 are two domains. */
	ck_assert_uint_eq(topo_domain_level_size(t, 1), 2);
	ck_assert_int_eq(topo_domain_node_domain(t, 0, 1), topo_domain_node_domain(t, 2, 1));
	ck_assert_int_ne(topo_domain_node_domain(t, 0, 1), topo_domain_node_domain(t, 1, 1));
	/* find returns the first in level order. */
	ck_assert_int_eq(topo_domain_find(t, 1, "s0"), topo_domain_level_domain(t, 1, 0));
	topo_domain_tree_free(t);
}
END_TEST

START_TEST(empty_and_bad)
{
	struct topo_domain_tree *t = topo_domain_tree_new(NULL, 0);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(topo_domain_tree_add_node(t, 0, NULL, NULL, 0), 0);
	ck_assert_int_eq(topo_domain_tree_build(t), 0);
	check_tree(t);
	ck_assert_uint_eq(topo_domain_count(t), 1);
	ck_assert_uint_eq(topo_domain_node_count(t, 0), 1);
	ck_assert_int_eq(topo_domain_child(t, 0, 0), -1);
	ck_assert_int_eq(topo_domain_level_domain(t, 0, 0), -1);
	ck_assert_int_eq(topo_domain_level(t, 5), -1);
	topo_domain_tree_free(t);
	topo_domain_tree_free(NULL);
	ck_assert_ptr_null(topo_domain_tree_new(NULL, 2));
	ck_assert_int_ne(topo_domain_tree_check(NULL, NULL, 0), 0);
}
END_TEST

START_TEST(large)
{
	/* 4 blocks x 16 racks x 64 hosts, added rack-major but blocks interleaved. */
	const char *const lv[] = {"block", "rack", HOST};
	struct topo_domain_tree *t = topo_domain_tree_new(lv, 3);
	const char *k[] = {"block", "rack", HOST};
	char b[16], r[32], h[48];
	const char *v[] = {b, r, h};
	int idx = 0;

	for (int hh = 0; hh < 64; hh++)
		for (int rr = 0; rr < 16; rr++)
			for (int bb = 0; bb < 4; bb++) {
				snprintf(b, sizeof(b), "b%d", bb);
				snprintf(r, sizeof(r), "b%d-r%d", bb, rr);
				snprintf(h, sizeof(h), "n%d-%d-%d", bb, rr, hh);
				ck_assert_int_eq(topo_domain_tree_add_node(t, idx++, k, v, 3), 0);
			}
	ck_assert_int_eq(topo_domain_tree_build(t), 0);
	check_tree(t);
	ck_assert_uint_eq(topo_domain_count(t), 1 + 4 + 64 + 4096);
	for (size_t i = 0; i < topo_domain_level_size(t, 1); i++)
		ck_assert_uint_eq(topo_domain_node_count(t, topo_domain_level_domain(t, 1, i)), 64);
	topo_domain_tree_free(t);
}
END_TEST

/* Each corruption of a sound tree must be caught by the checker. */
START_TEST(checker_catches_corruption)
{
	char why[256];

	for (int k = 0; k < 8; k++) {
		struct topo_domain_tree *t = sample();
		int c;

		ck_assert_int_eq(topo_domain_tree_build(t), 0);
		check_tree(t);
		c = topo_domain_level_domain(t, 1, 1);
		switch (k) {
		case 0: t->dom[c].parent = 0; break;                /* cube under the root */
		case 1: t->dom[c].level = 2; break;                 /* wrong level */
		case 2: t->dom[0].node_count--; break;              /* root lost a node */
		case 3: t->perm[0] = t->perm[1]; break;             /* node listed twice */
		case 4: t->attach[3] = c; break;                    /* node moved up a level */
		case 5: t->level_size[2]--; break;                  /* level ranges disagree */
		case 6: free(t->dom[c].value);                      /* sibling name clash */
			t->dom[c].value = strdup(t->dom[c - 1].value);
			break;
		case 7: t->dom[c].child_count = 0; break;           /* children dropped */
		}
		why[0] = '\0';
		ck_assert_msg(topo_domain_tree_check(t, why, sizeof(why)) == -EUCLEAN,
			      "corruption %d not caught", k);
		ck_assert_msg(why[0], "corruption %d: no reason given", k);
		topo_domain_tree_free(t);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("domain");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, build_and_query);
	tcase_add_test(tc, missing_labels);
	tcase_add_test(tc, same_value_two_parents);
	tcase_add_test(tc, empty_and_bad);
	tcase_add_test(tc, large);
	tcase_add_test(tc, checker_catches_corruption);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

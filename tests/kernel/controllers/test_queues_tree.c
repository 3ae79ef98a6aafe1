/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queues_tree.c — quota shared in cohorts (kernel/controllers/queues_tree.c),
 * on Kueue's documentation examples: two ClusterQueues in a cohort borrow
 * each other's unused quota, up to a borrowingLimit, and only what the
 * lender's lendingLimit lends; a Cohort's own quota is shared by its
 * subtree, and a hierarchy's borrowing limits hold at each level; a cycle of
 * Cohorts admits nothing.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/controllers/controllers-internal.h"

#define CPU(n) ((int64_t)(n)*1000)

/* A ClusterQueue or Cohort (kind) with one flavor "default" of cpu quota; limits < 0: none. */
static void add(json_t *map, const char *name, const char *parent_key, const char *parent,
		int nominal, int borrowing, int lending)
{
	json_t *res = json_pack("{s:s,s:I}", "name", "cpu", "nominalQuota", (json_int_t)nominal);
	json_t *o;

	if (borrowing >= 0)
		json_object_set_new(res, "borrowingLimit", json_integer(borrowing));
	if (lending >= 0)
		json_object_set_new(res, "lendingLimit", json_integer(lending));
	o = json_pack("{s:{s:s},s:{s:[{s:[s],s:[{s:s,s:[o]}]}]}}", "metadata", "name", name, "spec",
		      "resourceGroups", "coveredResources", "cpu", "flavors", "name", "default",
		      "resources", res);
	if (parent)
		json_object_set_new(json_object_get(o, "spec"), parent_key, json_string(parent));
	json_object_set_new(map, name, o);
}

static json_t *cqs, *cohorts;
static struct q_tree *tree;

static void setup(void)
{
	cqs = json_object();
	cohorts = json_object();
	tree = NULL;
}

static void teardown(void)
{
	q_tree_free(tree);
	json_decref(cqs);
	json_decref(cohorts);
}

static void build(void)
{
	ck_assert_int_eq(q_tree_new(cqs, cohorts, &tree), 0);
}

static int64_t avail(const char *cq)
{
	return q_tree_available(tree, cq, "default", "cpu");
}

/* Without a cohort, what is left of the nominal quota. */
START_TEST(nominal_quota_alone)
{
	add(cqs, "a", NULL, NULL, 9, -1, -1);
	build();
	ck_assert_int_eq(avail("a"), CPU(9));
	q_tree_charge(tree, "a", "default", "cpu", CPU(9));
	ck_assert_int_eq(avail("a"), 0);
}
END_TEST

/*
 * Kueue's borrowingLimit example: team-a (9 CPUs, borrowingLimit 1) and
 * team-b (12) in one cohort: team-a takes at most 10, team-b all of 21 while
 * team-a is idle, and only its own 12 plus what team-a leaves when not.
 */
START_TEST(borrowing_up_to_the_limit)
{
	add(cqs, "team-a", "cohortName", "team-ab", 9, 1, -1);
	add(cqs, "team-b", "cohortName", "team-ab", 12, -1, -1);
	build();
	ck_assert_int_eq(avail("team-a"), CPU(10));
	ck_assert_int_eq(avail("team-b"), CPU(21));
	q_tree_charge(tree, "team-a", "default", "cpu", CPU(10));
	ck_assert_int_eq(avail("team-a"), 0);
	ck_assert_int_eq(avail("team-b"), CPU(11));
	q_tree_charge(tree, "team-a", "default", "cpu", -CPU(10));
	q_tree_charge(tree, "team-b", "default", "cpu", CPU(15));
	ck_assert_int_eq(avail("team-a"), CPU(6)); /* 3 of its own are borrowed */
}
END_TEST

/*
 * Kueue's lendingLimit example: team-a (9 CPUs, lendingLimit 1) lends only
 * 1 to team-b (12): team-b takes at most 13, and team-a keeps 8 whatever
 * team-b does.
 */
START_TEST(lending_down_to_the_limit)
{
	add(cqs, "team-a", "cohortName", "team-ab", 9, -1, 1);
	add(cqs, "team-b", "cohortName", "team-ab", 12, -1, -1);
	build();
	ck_assert_int_eq(avail("team-b"), CPU(13));
	ck_assert_int_eq(avail("team-a"), CPU(21));
	q_tree_charge(tree, "team-b", "default", "cpu", CPU(13));
	ck_assert_int_eq(avail("team-a"), CPU(8));
	ck_assert_int_eq(avail("team-b"), 0);
}
END_TEST

/*
 * Hierarchical cohorts: a root Cohort with 10 CPUs of its own, a child
 * Cohort that may borrow at most 4 from it, a ClusterQueue of 2 under the
 * child: 6 in all; a sibling ClusterQueue under the root sees the root's
 * 10 and the child's queue's unused 2.
 */
START_TEST(cohort_quota_and_hierarchy)
{
	add(cohorts, "root", NULL, NULL, 10, -1, -1);
	add(cohorts, "child", "parentName", "root", 0, 4, -1);
	add(cqs, "leaf", "cohortName", "child", 2, -1, -1);
	add(cqs, "sibling", "cohortName", "root", 0, -1, -1);
	build();
	ck_assert_int_eq(avail("leaf"), CPU(6));
	ck_assert_int_eq(avail("sibling"), CPU(12));
	q_tree_charge(tree, "sibling", "default", "cpu", CPU(9));
	ck_assert_int_eq(avail("leaf"), CPU(3));
}
END_TEST

START_TEST(cohort_cycle_admits_nothing)
{
	char why[200];

	add(cohorts, "x", "parentName", "y", 10, -1, -1);
	add(cohorts, "y", "parentName", "x", 10, -1, -1);
	add(cqs, "q", "cohortName", "x", 1, -1, -1);
	add(cqs, "free", NULL, NULL, 1, -1, -1);
	build();
	ck_assert(q_tree_in_cycle(tree, "q", why, sizeof(why)));
	ck_assert_str_eq(why, "the parents of Cohort x form a cycle");
	ck_assert(!q_tree_in_cycle(tree, "free", why, sizeof(why)));
}
END_TEST

/* Random charges of ClusterQueues a to d, in a cohort tree with limits. */
static void random_charges(struct q_tree *t, unsigned *seed, int n)
{
	static const char *const names[] = {"a", "b", "c", "d"};

	for (int i = 0; i < n; i++)
		q_tree_charge(t, names[rand_r(seed) % 4], "default", "cpu",
			      CPU(rand_r(seed) % 7) - CPU(2));
}

/*
 * A tree kept for the next pass (q_tree_reuse: the queue cache keeps it
 * while no ClusterQueue or Cohort changed) answers as a new one over the
 * same specs after any charges, whatever the pass before charged.
 */
START_TEST(kept_tree_is_a_new_one)
{
	static const char *const names[] = {"a", "b", "c", "d"};
	unsigned seed = 0x7ee + (unsigned)_i;

	add(cohorts, "root", NULL, NULL, 10, -1, -1);
	add(cohorts, "ab", "parentName", "root", 2, 4, 1);
	add(cqs, "a", "cohortName", "ab", 9, 1, -1);
	add(cqs, "b", "cohortName", "ab", 12, -1, 3);
	add(cqs, "c", "cohortName", "root", 5, 2, 2);
	add(cqs, "d", NULL, NULL, 6, -1, -1);
	build();
	for (int pass = 0; pass < 20; pass++) {
		struct q_tree *fresh = NULL;
		unsigned same = seed;
		int n = 1 + rand_r(&seed) % 12;

		ck_assert_int_eq(q_tree_reuse(tree, cqs, cohorts), 0);
		ck_assert_int_eq(q_tree_new(cqs, cohorts, &fresh), 0);
		ck_assert(q_tree_equal(tree, fresh));
		same = seed;
		random_charges(tree, &seed, n);
		random_charges(fresh, &same, n);
		ck_assert(q_tree_equal(tree, fresh));
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(avail(names[i]),
					 q_tree_available(fresh, names[i], "default", "cpu"));
		q_tree_free(fresh);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-queues-tree");
	TCase *tc = tcase_create("tree");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nominal_quota_alone);
	tcase_add_test(tc, borrowing_up_to_the_limit);
	tcase_add_test(tc, lending_down_to_the_limit);
	tcase_add_test(tc, cohort_quota_and_hierarchy);
	tcase_add_test(tc, cohort_cycle_admits_nothing);
	tcase_add_loop_test(tc, kept_tree_is_a_new_one, 0, 4);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_feasible.c — kernel/sched/feasible.c and the counts the "kep"
 * strategy feeds it: the PlacementFeasible table at its boundaries, the
 * KEP's inadmissible-child numbers, leaf counting (a failed pod is U, never
 * UU), the pre-simulation check, and that a failed subtree leaves nothing
 * assumed.
 */
#include <check.h>
#include <stdlib.h>

#include "helpers.h"

START_TEST(test_table)
{
	/* M S R U UU -> status */
	const int rows[][6] = {
	    {2, 2, 0, 0, 0, SC_SUCCESS},
	    {2, 3, 0, 1, 1, SC_SUCCESS},
	    {2, 1, 1, 0, 0, SC_WAIT},
	    {2, 0, 2, 0, 1, SC_WAIT}, /* KEP: CPG-1 failed UU, PG-2 and PG-3 untried */
	    {2, 1, 0, 1, 0, SC_UNSCHEDULABLE},
	    {5, 3, 1, 1, 0, SC_UNSCHEDULABLE},
	    {2, 1, 0, 0, 0, SC_UNRESOLVABLE}, /* KEP: CPG-1 with one child */
	    {2, 0, 0, 1, 1, SC_UNRESOLVABLE},
	    {0, 0, 0, 0, 0, SC_SUCCESS},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(sc_feasible(rows[i][0], rows[i][1], rows[i][2], rows[i][3],
					  rows[i][4]) == (enum sc_status)rows[i][5],
			      "row %zu", i);
	ck_assert_str_eq(sc_status_to_string(SC_UNRESOLVABLE), "UnschedulableAndUnresolvable");
}
END_TEST

START_TEST(test_group_min)
{
	struct pk_sched *s = new_sched();

	add_group(s, false, "gang", NULL, 3, NULL);
	add_group(s, false, "basic", NULL, -1, NULL);
	ck_assert_int_eq(sc_group_min(find_group(s, "gang")), 3);
	ck_assert_int_eq(sc_group_min(find_group(s, "basic")), 0); /* no pods: nothing required */
	add_pod(s, "p", "1", "basic", NULL, 0);
	ck_assert_int_eq(sc_group_min(find_group(s, "basic")), 1);
	pk_sched_free(s);
}
END_TEST

/* Run one cycle on a fresh root and return the result. */
static struct pk_sched_result *one_cycle(struct pk_sched *s)
{
	struct pk_sched_result *res = NULL;

	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	return res;
}

START_TEST(test_leaf_counts)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;
	struct sc_group *g;

	add_node(s, "n0", "1", "");
	add_node(s, "n1", "1", "");
	add_node(s, "n2", "1", "");
	add_group(s, false, "pg", NULL, 5, NULL);
	for (int i = 0; i < 8; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", i);
		/* p1 can never fit anywhere: it counts in U like a capacity failure. */
		add_pod(s, name, i == 1 ? "64" : "1", "pg", NULL, 0);
	}
	res = one_cycle(s);
	g = find_group(s, "pg");
	/* p0 placed, p1 U, p2 p3 placed, p4..p6 U: after p6 S+R = 3+1 < 5 -> abort. */
	ck_assert_int_eq(g->eval.status, SC_UNSCHEDULABLE);
	ck_assert_int_eq(g->eval.S, 3);
	ck_assert_int_eq(g->eval.U, 4);
	ck_assert_int_eq(g->eval.R, 1);
	ck_assert_int_eq(g->eval.UU, 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	ck_assert_uint_eq(res->bound, 0);
	ck_assert_uint_eq(s->snap.nlog, 0);
	for (size_t i = 0; i < s->snap.nnodes; i++)
		ck_assert_int_eq(s->snap.nodes[i]->used[SC_RES_PODS], 0);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

static size_t traced_pods;
static void count_pod_lines(void *arg, const char *line)
{
	(void)arg;
	if (strstr(line, "PodGroup default/pg-11: M="))
		traced_pods++;
}

START_TEST(test_presimulation_skip)
{
	struct pk_sched_opts o = {.check = true, .trace = count_pod_lines};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res;
	struct sc_group *root, *cpg1;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		add_node(s, name, "8", "");
	}
	add_group(s, true, "root", NULL, 2, NULL);
	add_group(s, true, "cpg-1", "root", 2, NULL);
	add_group(s, false, "pg-11", "cpg-1", 2, NULL);
	add_group(s, false, "pg-2", "root", 1, NULL);
	add_group(s, false, "pg-3", "root", 1, NULL);
	add_pod(s, "a", "1", "pg-11", NULL, 0);
	add_pod(s, "b", "1", "pg-11", NULL, 0);
	add_pod(s, "c", "1", "pg-2", NULL, 0);
	add_pod(s, "d", "1", "pg-3", NULL, 0);
	traced_pods = 0;
	res = one_cycle(s);
	root = find_group(s, "root");
	cpg1 = find_group(s, "cpg-1");
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 2);
	ck_assert_int_eq(cpg1->eval.status, SC_UNRESOLVABLE);
	ck_assert_int_eq(root->eval.S, 2);
	ck_assert_int_eq(root->eval.UU, 1);
	ck_assert_uint_eq(traced_pods, 0); /* PG-11 was never simulated */
	ck_assert_int_eq(find_pod(s, "a")->node, -1);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-feasible");
	TCase *tc = tcase_create("feasible");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_group_min);
	tcase_add_test(tc, test_leaf_counts);
	tcase_add_test(tc, test_presimulation_skip);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

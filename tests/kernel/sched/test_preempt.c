/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_preempt.c — kernel/sched/preempt.c: preemption units (the highest
 * `all` ancestor takes its whole subtree, otherwise the pod alone), only
 * lower priorities, a minimal victim set, no binding in the preempting
 * cycle, and no preemption when it cannot help.
 */
#include <check.h>
#include <stdlib.h>

#include "helpers.h"

static struct pk_sched_result *cycle(struct pk_sched *s)
{
	struct pk_sched_result *res = NULL;

	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	return res;
}

static bool has_action(const struct pk_sched_result *res, enum pk_sched_action_kind a,
		       enum pk_kind kind, const char *name, const char *type)
{
	for (size_t i = 0; i < res->nactions; i++) {
		const struct pk_sched_action *x = &res->actions[i];

		if (x->action == a && x->kind->pk == kind && strcmp(x->name, name) == 0 &&
		    (!type || (x->type && strcmp(x->type, type) == 0)))
			return true;
	}
	return false;
}

static void add_preemptor(struct pk_sched *s, int pods, int priority)
{
	json_t *g = group_obj(false, "urgent", NULL, pods, NULL, "urgent");

	json_object_set_new(json_object_get(g, "spec"), "priority", json_integer(priority));
	add_obj(s, g);
	for (int i = 0; i < pods; i++) {
		char name[16];

		snprintf(name, sizeof(name), "hi-%d", i);
		add_pod(s, name, "1", "urgent", NULL, priority);
	}
}

START_TEST(test_highest_all_ancestor_is_the_unit)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;

	add_node(s, "n0", "1", "");
	add_node(s, "n1", "1", "");
	add_node(s, "n2", "1", "");
	add_obj(s, group_obj(true, "svc", NULL, 2, "all", "svc"));
	add_obj(s, group_obj(false, "svc-a", "svc", 1, "all", "svc"));
	add_obj(s, group_obj(false, "svc-b", "svc", 1, "all", "svc"));
	add_pod(s, "a", "1", "svc-a", "n0", 1);
	add_pod(s, "b", "1", "svc-b", "n1", 1);
	add_preemptor(s, 2, 100);
	res = cycle(s);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	ck_assert_uint_eq(res->bound, 0);     /* never bind and preempt in one cycle */
	ck_assert_uint_eq(res->preempted, 2); /* one pod would do; the unit is all of svc */
	ck_assert(has_action(res, PK_SCHED_PREEMPT, PK_KIND_POD, "a", NULL));
	ck_assert(has_action(res, PK_SCHED_PREEMPT, PK_KIND_POD, "b", NULL));
	ck_assert(has_action(res, PK_SCHED_CONDITION, PK_KIND_POD, "a", "DisruptionTarget"));
	ck_assert(has_action(res, PK_SCHED_CONDITION, PK_KIND_COMPOSITE_POD_GROUP, "svc",
			     "DisruptionTarget"));
	ck_assert(
	    has_action(res, PK_SCHED_CONDITION, PK_KIND_POD_GROUP, "svc-b", "DisruptionTarget"));
	ck_assert_ptr_null(find_pod(s, "a"));
	pk_sched_result_free(res);
	res = cycle(s);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 2);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_single_pods_minimal_set)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;

	for (int i = 0; i < 4; i++) {
		char node[8], pod[8];

		snprintf(node, sizeof(node), "n%d", i);
		snprintf(pod, sizeof(pod), "low%d", i);
		add_node(s, node, "1", "");
		/* low0 has a higher priority than the others: it is kept. */
		add_pod(s, pod, "1", NULL, node, i == 0 ? 50 : 1);
	}
	add_preemptor(s, 1, 100);
	res = cycle(s);
	ck_assert_uint_eq(res->preempted, 1);
	ck_assert(!has_action(res, PK_SCHED_PREEMPT, PK_KIND_POD, "low0", NULL));
	/* Equal priorities: the newest is preempted. */
	ck_assert(has_action(res, PK_SCHED_PREEMPT, PK_KIND_POD, "low3", NULL));
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_no_equal_or_higher_victims)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;

	add_node(s, "n0", "1", "");
	add_pod(s, "peer", "1", NULL, "n0", 100);
	add_preemptor(s, 1, 100);
	res = cycle(s);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	ck_assert_uint_eq(res->preempted, 0);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * The victim floor: once a preemption found no lower-priority pod, a pod
 * bound later by the scheduler itself is still found as a victim.
 */
START_TEST(test_victim_bound_after_a_failed_preemption)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;

	add_node(s, "n", "4", "");
	add_pod(s, "a", "2", NULL, "n", 100);
	add_pod(s, "first", "3", NULL, NULL, 100);
	res = cycle(s);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	ck_assert_uint_eq(res->preempted, 0); /* nothing ranks below 100 */
	pk_sched_result_free(res);
	add_pod(s, "low", "2", NULL, NULL, 1);
	res = cycle(s);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	pk_sched_result_free(res);
	add_pod(s, "second", "2", NULL, NULL, 50);
	res = cycle(s);
	ck_assert_str_eq(res->root, "Pod default/second");
	ck_assert_uint_eq(res->preempted, 1);
	ck_assert(has_action(res, PK_SCHED_PREEMPT, PK_KIND_POD, "low", NULL));
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/* A bound pod under a cyclic hierarchy has a priority (its chain is walked boundedly). */
START_TEST(test_victim_under_a_cycle)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;

	add_node(s, "n", "1", "");
	add_obj(s, group_obj(true, "a", "b", 1, NULL, "w"));
	add_obj(s, group_obj(true, "b", "a", 1, NULL, "w"));
	add_obj(s, group_obj(false, "leaf", "a", 1, NULL, "w"));
	json_t *stuck = pod_obj("stuck", "1", "leaf", "n", 0);

	json_object_del(json_object_get(stuck, "spec"), "priority"); /* inherited: walk the chain */
	add_obj(s, stuck);
	add_pod(s, "urgent", "1", NULL, NULL, 100);
	res = cycle(s);
	ck_assert_str_eq(res->root, "Pod default/urgent");
	ck_assert_uint_eq(res->preempted, 1);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_no_preemption_when_useless)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;

	add_node(s, "n0", "1", "");
	add_node(s, "n1", "1", "");
	add_pod(s, "low", "1", NULL, "n0", 1);
	add_preemptor(s, 3, 100); /* three pods, two nodes: evicting cannot help */
	res = cycle(s);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	ck_assert_uint_eq(res->preempted, 0);
	ck_assert_ptr_nonnull(find_pod(s, "low"));
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_rootless_victims_are_single)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res;

	/* Bound pods of a hierarchy on a parent cycle: each is its own unit. */
	add_node(s, "n0", "1", "");
	add_node(s, "n1", "1", "");
	add_obj(s, group_obj(true, "a", "b", 1, "all", "loop"));
	add_obj(s, group_obj(true, "b", "a", 1, "all", "loop"));
	add_obj(s, group_obj(false, "leaf-a", "a", 1, "all", "loop"));
	add_obj(s, group_obj(false, "leaf-b", "b", 1, "all", "loop"));
	add_pod(s, "x", "1", "leaf-a", "n0", 1);
	add_pod(s, "y", "1", "leaf-b", "n1", 1);
	add_preemptor(s, 1, 100);
	res = cycle(s);
	ck_assert_uint_eq(res->preempted, 1);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-preempt");
	TCase *tc = tcase_create("preempt");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_highest_all_ancestor_is_the_unit);
	tcase_add_test(tc, test_single_pods_minimal_set);
	tcase_add_test(tc, test_no_equal_or_higher_victims);
	tcase_add_test(tc, test_no_preemption_when_useless);
	tcase_add_test(tc, test_victim_bound_after_a_failed_preemption);
	tcase_add_test(tc, test_victim_under_a_cycle);
	tcase_add_test(tc, test_rootless_victims_are_single);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hierarchy.c — kernel/sched/hierarchy.c: runtime validation of a
 * popped hierarchy.  A valid four-level tree passes; each violation is found
 * and named; and an invalid root marks every group Invalid and binds nothing.
 */
#include <check.h>
#include <stdlib.h>

#include "helpers.h"

static int validate(struct pk_sched *s, const char *root, char *why, size_t len)
{
	return sc_hierarchy_validate(s, find_group(s, root), why, len);
}

static void set_spec(struct pk_sched *s, json_t *g, const char *key, json_t *v)
{
	json_object_set_new(json_object_get(g, "spec"), key, v);
	add_obj(s, g);
}

START_TEST(test_valid_four_levels)
{
	struct pk_sched *s = new_sched();
	char why[256] = "";

	add_group(s, true, "l1", NULL, 1, "all");
	add_group(s, true, "l2", "l1", 1, "all");
	add_group(s, true, "l3", "l2", 1, "all");
	add_group(s, false, "l4", "l3", 1, "all");
	ck_assert_int_eq(validate(s, "l1", why, sizeof(why)), 0);
	/* A fifth level is one too many. */
	add_group(s, true, "l4", "l3", 1, "all");
	add_group(s, false, "l5", "l4", 1, "all");
	ck_assert_int_eq(validate(s, "l1", why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "depth over 4: PodGroup default/l5 is at level 5"));
	pk_sched_free(s);
}
END_TEST

START_TEST(test_violations)
{
	char why[256];
	struct pk_sched *s;
	struct sc_group *g;

	s = new_sched();
	add_group(s, true, "r", NULL, 1, NULL);
	add_obj(s, group_obj(false, "c", "r", 1, NULL, "other"));
	ck_assert_int_eq(validate(s, "r", why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "two Workloads"));
	pk_sched_free(s);

	s = new_sched();
	set_spec(s, group_obj(true, "r", NULL, 1, NULL, NULL), "priority", json_integer(10));
	set_spec(s, group_obj(false, "c", "r", 1, NULL, NULL), "priority", json_integer(20));
	ck_assert_int_eq(validate(s, "r", why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "priority divergence"));
	pk_sched_free(s);

	/* Same value through a PriorityClass is not a divergence. */
	s = new_sched();
	add_obj(s, json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion", "scheduling.k8s.io/v1",
			     "kind", "PriorityClass", "metadata", "name", "ten", "value", 10));
	set_spec(s, group_obj(true, "r", NULL, 1, NULL, NULL), "priority", json_integer(10));
	set_spec(s, group_obj(false, "c", "r", 1, NULL, NULL), "priorityClassName",
		 json_string("ten"));
	ck_assert_int_eq(validate(s, "r", why, sizeof(why)), 0);
	pk_sched_free(s);

	s = new_sched();
	add_group(s, true, "r", NULL, 1, NULL);
	add_group(s, false, "c", "r", -1, NULL);
	ck_assert_int_eq(validate(s, "r", why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "gang parent with basic child"));
	pk_sched_free(s);

	s = new_sched();
	add_group(s, true, "r", NULL, 1, "all");
	add_group(s, false, "c", "r", 1, "single");
	ck_assert_int_eq(validate(s, "r", why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "all parent with single child"));
	pk_sched_free(s);

	/* A basic parent may have gang children; single parents any child. */
	s = new_sched();
	add_group(s, true, "r", NULL, -1, NULL);
	add_group(s, false, "c", "r", 2, "all");
	ck_assert_int_eq(validate(s, "r", why, sizeof(why)), 0);
	pk_sched_free(s);

	/*
	 * PodGroups and CompositePodGroups are separate resources: a child
	 * naming PodGroup "leafparent" as its parent waits for a
	 * CompositePodGroup of that name, and a pod naming "r" belongs to
	 * PodGroup r, never to CompositePodGroup r.
	 */
	s = new_sched();
	add_group(s, false, "leafparent", NULL, 1, NULL);
	add_group(s, false, "c", "leafparent", 1, NULL);
	ck_assert_int_eq(validate(s, "leafparent", why, sizeof(why)), 0);
	g = sc_forest_group(&s->forest, "default/leafparent", false, false);
	ck_assert_int_eq(g->children.n, 0);
	g = sc_forest_group(&s->forest, "default/leafparent", true, false);
	ck_assert(g && !g->present && g->children.n == 1); /* a placeholder */
	ck_assert_ptr_null(sc_group_root(find_group(s, "c"), why, sizeof(why)));
	ck_assert_int_eq(pk_sched_check(s, why, sizeof(why)), 0);
	pk_sched_free(s);

	s = new_sched();
	add_group(s, true, "r", NULL, 1, NULL);
	add_pod(s, "p", "1", "r", NULL, 0);
	g = sc_forest_group(&s->forest, "default/r", true, false);
	ck_assert(g && g->present && g->pods.n == 0);
	ck_assert_int_eq(sc_hierarchy_validate(s, g, why, sizeof(why)), 0);
	g = sc_forest_group(&s->forest, "default/r", false, false);
	ck_assert(g && !g->present && g->pods.n == 1);
	ck_assert_int_eq(pk_sched_check(s, why, sizeof(why)), 0);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_invalid_root_marks_all)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res = NULL;
	size_t groups = 0, pods = 0;

	add_node(s, "n", "8", "");
	add_group(s, true, "r", NULL, 1, "all");
	add_group(s, true, "m", "r", 1, "all");
	add_group(s, false, "c", "m", 1, "single");
	add_pod(s, "p", "1", "c", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_INVALID);
	ck_assert_uint_eq(res->bound, 0);
	for (size_t i = 0; i < res->nactions; i++) {
		const struct pk_sched_action *a = &res->actions[i];

		ck_assert_int_eq(a->action, PK_SCHED_CONDITION);
		if (a->kind->pk == PK_KIND_POD) {
			pods++;
			ck_assert_str_eq(a->reason, "Unschedulable");
		} else {
			groups++;
			ck_assert_str_eq(a->reason, "Invalid");
			ck_assert_str_eq(a->status, "False");
			ck_assert_ptr_nonnull(strstr(a->message, "CompositePodGroup default/m has "
								 "disruptionMode all"));
		}
	}
	ck_assert_uint_eq(groups, 3);
	ck_assert_uint_eq(pods, 1);
	pk_sched_result_free(res);
	/* Parked until the hierarchy changes. */
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	pk_sched_result_free(res);
	add_group(s, false, "c", "m", 1, "all");
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-hierarchy");
	TCase *tc = tcase_create("hierarchy");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_valid_four_levels);
	tcase_add_test(tc, test_violations);
	tcase_add_test(tc, test_invalid_root_marks_all);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

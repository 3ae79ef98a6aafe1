/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_budgets.c — the standalone budget controller follows which namespaces
 * hold PodDisruptionBudgets: a budget's status is counted again after a pod
 * of its namespace changes, also after another budget of that namespace was
 * deleted and a new one made, and a namespace whose only budget went counts
 * nothing.
 */
#include "standalone_fixture.h"

static void pod(const char *ns, const char *name)
{
	char text[512];

	snprintf(
	    text, sizeof(text),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	    "\"namespace\":\"%s\",\"labels\":{\"app\":\"a\"}},\"spec\":{\"containers\":"
	    "[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
	    name, ns);
	create_json(text);
}

static void budget(const char *name)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
		 "{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{\"minAvailable\":1,"
		 "\"selector\":{\"matchLabels\":{\"app\":\"a\"}}}}",
		 name);
	create_json(text);
}

static bool expects(const json_t *o, const void *arg)
{
	const json_t *v = o ? pk_get(o, "status.expectedPods") : NULL;

	return v && json_integer_value(v) == *(const int *)arg;
}

START_TEST(budgets_counted_where_they_are)
{
	int one = 1, two = 2, three = 3;

	pod("default", "p0");
	pod("other", "q0"); /* a namespace without budgets */
	budget("b");
	ck_assert(wait_for("PodDisruptionBudget", "b", expects, &one));
	pod("default", "p1");
	ck_assert(wait_for("PodDisruptionBudget", "b", expects, &two));
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod_disruption_budget, "default", "b",
					      NULL, NULL, NULL),
			 0);
	pod("other", "q1");
	budget("c");
	ck_assert(wait_for("PodDisruptionBudget", "c", expects, &two));
	pod("default", "p2");
	ck_assert(wait_for("PodDisruptionBudget", "c", expects, &three));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-budgets");
	TCase *tc = tcase_create("budgets");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, budgets_counted_where_they_are);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

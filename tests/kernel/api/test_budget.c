/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodDisruptionBudget arithmetic and validation (kernel/api/budget.c):
 * int and percent bounds rounded as upstream, healthy pods (Running, Ready,
 * not deleting, not in disruptedPods), selectors with expressions, and the
 * field paths of refusals.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"

static json_t *pod(const char *name, const char *app, const char *phase, bool ready)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s,s:[{s:s,s:s}]}}", "apiVersion", "v1",
			 "kind", "Pod", "metadata", "name", name, "namespace", "default", "labels",
			 "app", app, "status", "phase", phase, "conditions", "type", "Ready",
			 "status", ready ? "True" : "False");
}

static json_t *pods(void)
{
	json_t *a = json_array();

	json_array_append_new(a, pod("a", "svc", "Running", true));
	json_array_append_new(a, pod("b", "svc", "Running", true));
	json_array_append_new(a, pod("c", "svc", "Running", false));
	json_array_append_new(a, pod("d", "svc", "Succeeded", false));
	json_array_append_new(a, pod("e", "other", "Running", true));
	return a;
}

static struct pk_budget count(const char *spec_json)
{
	json_error_t err;
	json_t *spec = json_loads(spec_json, 0, &err), *all = pods();
	json_t *pdb = json_pack("{s:{s:s,s:s},s:o}", "metadata", "name", "x", "namespace",
				"default", "spec", spec);
	struct pk_budget b;

	ck_assert_int_eq(pk_budget_count(pdb, all, &b), 0);
	json_decref(pdb);
	json_decref(all);
	return b;
}

START_TEST(test_counts)
{
	const char *sel = "\"selector\": {\"matchLabels\": {\"app\": \"svc\"}}";
	char spec[256];
	struct pk_budget b;

	snprintf(spec, sizeof(spec), "{\"minAvailable\": 1, %s}", sel);
	b = count(spec);
	ck_assert_int_eq(b.expected, 3); /* the Succeeded pod is not expected */
	ck_assert_int_eq(b.current_healthy, 2);
	ck_assert_int_eq(b.desired_healthy, 1);
	ck_assert_int_eq(b.allowed, 1);
	snprintf(spec, sizeof(spec), "{\"minAvailable\": \"50%%\", %s}", sel);
	ck_assert_int_eq(count(spec).desired_healthy, 2); /* 1.5 rounded up */
	snprintf(spec, sizeof(spec), "{\"maxUnavailable\": \"50%%\", %s}", sel);
	ck_assert_int_eq(count(spec).desired_healthy, 1); /* 3 - ceil(1.5) */
	snprintf(spec, sizeof(spec), "{\"maxUnavailable\": 5, %s}", sel);
	b = count(spec);
	ck_assert_int_eq(b.desired_healthy, 0);
	ck_assert_int_eq(b.allowed, 2);
	b = count("{\"minAvailable\": 1, \"selector\": {\"matchExpressions\": "
		  "[{\"key\": \"app\", \"operator\": \"NotIn\", \"values\": [\"svc\"]}]}}");
	ck_assert_int_eq(b.expected, 1);
	b = count("{\"minAvailable\": 1, \"selector\": {}}");
	ck_assert_int_eq(b.expected, 4);
	b = count("{\"minAvailable\": 1}"); /* a null selector picks nothing */
	ck_assert_int_eq(b.expected, 0);
}
END_TEST

START_TEST(test_disrupted_not_healthy)
{
	json_t *all = pods();
	json_t *pdb =
	    json_pack("{s:{s:s,s:s},s:{s:i,s:{s:{s:s}}},s:{s:{s:s}}}", "metadata", "name", "x",
		      "namespace", "default", "spec", "minAvailable", 1, "selector", "matchLabels",
		      "app", "svc", "status", "disruptedPods", "a", "2026-01-01T00:00:00Z");
	struct pk_budget b;

	ck_assert_int_eq(pk_budget_count(pdb, all, &b), 0);
	ck_assert_int_eq(b.current_healthy, 1);
	ck_assert_int_eq(b.allowed, 0);
	json_decref(pdb);
	json_decref(all);
}
END_TEST

static void invalid(const char *yaml, const char *want)
{
	json_t *obj = NULL;
	char err[256];
	struct pk_errors errs = {0};

	ck_assert_int_eq(pk_parse_document("t", yaml, strlen(yaml), &obj, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_validate(obj, &errs), -EINVAL);
	ck_assert_msg(errs.n > 0 && strstr(errs.msg[0], want), "got %s, want %s",
		      errs.n ? errs.msg[0] : "nothing", want);
	pk_errors_clear(&errs);
	json_decref(obj);
}

START_TEST(test_validate)
{
	const char *head = "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
			   "metadata: {name: p, namespace: default}\n";
	char y[512], err[256];
	json_t *obj = NULL;
	struct pk_errors errs = {0};

	snprintf(y, sizeof(y), "%sspec: {minAvailable: 1, maxUnavailable: 1}\n", head);
	invalid(y, "spec: Invalid value: minAvailable and maxUnavailable cannot be both set");
	snprintf(y, sizeof(y), "%sspec: {minAvailable: -1}\n", head);
	invalid(y, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0");
	snprintf(y, sizeof(y), "%sspec: {maxUnavailable: \"150%%\"}\n", head);
	invalid(y, "spec.maxUnavailable: Invalid value: \"150%\": a valid percent string");
	snprintf(y, sizeof(y), "%sspec: {unhealthyPodEvictionPolicy: Never}\n", head);
	invalid(y, "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\"");
	snprintf(y, sizeof(y), "%sspec: {selector: {matchExpressions: [{key: a, operator: In}]}}\n",
		 head);
	invalid(y, "spec.selector.matchExpressions[0].values: Required value");
	snprintf(y, sizeof(y),
		 "%sspec: {maxUnavailable: \"10%%\", unhealthyPodEvictionPolicy: AlwaysAllow, "
		 "selector: {matchExpressions: [{key: a, operator: Exists}]}}\n",
		 head);
	ck_assert_int_eq(pk_parse_document("t", y, strlen(y), &obj, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_validate(obj, &errs), 0);
	json_decref(obj);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("budget");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_disrupted_not_healthy);
	tcase_add_test(tc, test_validate);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}

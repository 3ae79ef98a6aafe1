/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of kernel/podctl/client_text.c: the words podctl accepts for a kind,
 * the API paths it builds, and the text of its table cells.  The HTTP side
 * of the client runs against a real podkerneld in test_client.sh.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podctl/podctl-internal.h"

START_TEST(kind_words)
{
	static const struct {
		const char *word, *kind;
	} cases[] = {
	    {"pods", "Pod"},
	    {"Pod", "Pod"},
	    {"pod", "Pod"},
	    {"po", "Pod"},
	    {"PODS", "Pod"},
	    {"no", "Node"},
	    {"nodes", "Node"},
	    {"ns", "Namespace"},
	    {"pg", "PodGroup"},
	    {"podgroups", "PodGroup"},
	    {"podgroup", "PodGroup"},
	    {"cpg", "CompositePodGroup"},
	    {"CompositePodGroups", "CompositePodGroup"},
	    {"pc", "PriorityClass"},
	    {"wl", "Workload"},
	    {"jobs", "Job"},
	    {"js", "JobSet"},
	    {"leases", "Lease"},
	    {"ev", "Event"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pk_type *t = podctl_resolve_kind(cases[i].word);

		ck_assert_msg(t != NULL, "%s names no kind", cases[i].word);
		ck_assert_str_eq(t->kind, cases[i].kind);
	}
	/* events resolve to the core group's Event (the first row of the table) */
	ck_assert_str_eq(podctl_resolve_kind("events")->group, "");
	ck_assert_ptr_null(podctl_resolve_kind("nope"));
	ck_assert_ptr_null(podctl_resolve_kind(""));
	ck_assert_ptr_null(podctl_resolve_kind("p"));
}
END_TEST

START_TEST(paths)
{
	static const struct {
		const char *kind, *ns, *name, *suffix, *want;
	} cases[] = {
	    {"Pod", "default", "x", NULL, "/api/v1/namespaces/default/pods/x"},
	    {"Pod", NULL, NULL, NULL, "/api/v1/pods"},
	    {"Node", "ignored", "n1", NULL, "/api/v1/nodes/n1"},
	    {"PodGroup", "team", "g", "/status",
	     "/apis/scheduling.k8s.io/v1alpha3/namespaces/team/podgroups/g/status"},
	    {"PriorityClass", "team", NULL, NULL, "/apis/scheduling.k8s.io/v1/priorityclasses"},
	    {"JobSet", "ml", "train", NULL,
	     "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/train"},
	    {"Lease", "kube-node-lease", "h0", NULL,
	     "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/h0"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = podctl_type_path(pk_type_by_kind(cases[i].kind), cases[i].ns,
					   cases[i].name, cases[i].suffix);

		ck_assert_ptr_nonnull(p);
		ck_assert_str_eq(p, cases[i].want);
		free(p);
	}
}
END_TEST

static json_t *created_at(const char *ts)
{
	return json_pack("{s:{s:s}}", "metadata", "creationTimestamp", ts);
}

START_TEST(ages)
{
	json_t *o = created_at("2026-01-01T00:00:00Z"), *none = json_object();
	int64_t t0;
	char buf[32];

	ck_assert_int_eq(pk_time_parse("2026-01-01T00:00:00Z", &t0), 0);
	podctl_age(o, t0 + 42, buf, sizeof(buf));
	ck_assert_str_eq(buf, "42s");
	podctl_age(o, t0 + 119, buf, sizeof(buf));
	ck_assert_str_eq(buf, "119s");
	podctl_age(o, t0 + 600, buf, sizeof(buf));
	ck_assert_str_eq(buf, "10m");
	podctl_age(o, t0 + 3 * 3600 + 59, buf, sizeof(buf));
	ck_assert_str_eq(buf, "3h");
	podctl_age(o, t0 - 5, buf, sizeof(buf)); /* a clock behind the server's */
	ck_assert_str_eq(buf, "0s");
	podctl_age(none, t0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "<unknown>");
	json_decref(o);
	json_decref(none);
}
END_TEST

START_TEST(policies)
{
	json_t *gang =
	    json_loads("{\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":4}}}}", 0, NULL);
	json_t *cgang = json_loads(
	    "{\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minGroupCount\":2}}}}", 0, NULL);
	json_t *basic = json_loads("{\"spec\":{\"schedulingPolicy\":{\"basic\":{}}}}", 0, NULL);
	char buf[32];

	podctl_policy_text(gang, buf, sizeof(buf));
	ck_assert_str_eq(buf, "gang(4)");
	podctl_policy_text(cgang, buf, sizeof(buf));
	ck_assert_str_eq(buf, "gang(2)");
	podctl_policy_text(basic, buf, sizeof(buf));
	ck_assert_str_eq(buf, "basic");
	json_decref(gang);
	json_decref(cgang);
	json_decref(basic);
}
END_TEST

START_TEST(quantities)
{
	json_t *pod =
	    json_loads("{\"spec\":{\"containers\":["
		       "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}},"
		       "{\"resources\":{\"requests\":{\"cpu\":\"500m\"}}},{}]}}",
		       0, NULL);
	char buf[32];

	ck_assert_int_eq(podctl_quantity_milli("2"), 2000);
	ck_assert_int_eq(podctl_quantity_milli("500m"), 500);
	ck_assert_int_eq(podctl_quantity_milli("1k"), 1000000);
	ck_assert_int_eq(podctl_quantity_milli("4Gi"), 4LL * 1073741824 * 1000);
	ck_assert_int_eq(podctl_quantity_milli("3x"), 0);
	ck_assert_int_eq(podctl_quantity_milli(NULL), 0);
	ck_assert_ptr_nonnull(pod);
	ck_assert_int_eq(podctl_pod_request(pod, "cpu"), 1500);
	ck_assert_int_eq(podctl_pod_request(pod, "memory"), 2LL * 1073741824 * 1000);
	ck_assert_int_eq(podctl_pod_request(pod, "google.com/tpu"), 0);
	podctl_fmt_qty(podctl_pod_request(pod, "memory"), "memory", buf, sizeof(buf));
	ck_assert_str_eq(buf, "2Gi");
	podctl_fmt_qty(1500, "cpu", buf, sizeof(buf));
	ck_assert_str_eq(buf, "1500m");
	podctl_fmt_qty(4000, "google.com/tpu", buf, sizeof(buf));
	ck_assert_str_eq(buf, "4");
	json_decref(pod);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("podctl-client-text");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, kind_words);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, ages);
	tcase_add_test(tc, policies);
	tcase_add_test(tc, quantities);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

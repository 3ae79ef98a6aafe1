/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kinds.c — the table of kinds: each served kind has one row, found by
 * its name and by its resource, with the scope the API has; and the one
 * object key, "Kind/namespace/name", with a cluster-scoped kind's namespace
 * dropped and a namespaced one's defaulted.  Kueue's v1beta1 rows: served
 * beside v1beta2, stored as it, and converted both ways as Kueue converts.
 */
#include <check.h>
#include <string.h>

#include "kernel/api/api.h"

START_TEST(test_rows)
{
	const struct pk_type *ns = pk_type_by_kind("Namespace");
	const struct pk_type *wpc = pk_type_by_kind("WorkloadPriorityClass");

	ck_assert_ptr_nonnull(ns);
	ck_assert(!ns->namespaced);
	ck_assert_ptr_eq(&pk_type_namespace, ns);
	ck_assert_ptr_eq(pk_type_by_resource("", "namespaces"), ns);
	ck_assert_ptr_nonnull(wpc);
	ck_assert_str_eq(wpc->api_version, "kueue.x-k8s.io/v1beta2");
	ck_assert(!wpc->namespaced);
	ck_assert_ptr_eq(pk_type_by_resource("kueue.x-k8s.io", "workloadpriorityclasses"), wpc);
	ck_assert_ptr_eq(&pk_type_pod, pk_type_by_kind("Pod"));
	/* every typed view has one row (Event two: core/v1's, first, and
	 * events.k8s.io/v1's shape of the same resource) */
	for (int k = PK_KIND_UNKNOWN + 1; k < _PK_KIND_MAX; k++) {
		int rows = 0;

		for (const struct pk_type *const *p_t = pk_types, *t; (t = *p_t); p_t++)
			rows += t->pk == (enum pk_kind)k;
		ck_assert_msg(rows == (k == PK_KIND_EVENT ? 2 : 1), "kind %d has %d rows", k, rows);
	}
	ck_assert_str_eq(pk_type_event.api_version, "v1");
	ck_assert_ptr_eq(pk_type_of(PK_KIND_EVENT), &pk_type_event);
	ck_assert_ptr_eq(pk_type_stored(pk_type_by_resource("events.k8s.io", "events")),
			 &pk_type_event);
	ck_assert_ptr_null(pk_type_by_kind("Deployment"));
	/* kubectl explain has something to say of every kind */
	for (const struct pk_type *const *p_t = pk_types, *t; (t = *p_t); p_t++)
		ck_assert_msg(t->description && *t->description, "%s has no description", t->kind);
	/* stored as given: Namespace and Event only */
	for (const struct pk_type *const *p_t = pk_types, *t; (t = *p_t); p_t++)
		ck_assert_msg(t->validate || strcmp(t->kind, "Namespace") == 0 ||
				  strcmp(t->kind, "Event") == 0,
			      "%s is not validated", t->kind);
}
END_TEST

START_TEST(test_kueue_v1beta1)
{
	const struct pk_type *cq = pk_type_by_version("kueue.x-k8s.io", "v1beta1", "clusterqueues");
	const struct pk_type *lq = pk_type_by_version("kueue.x-k8s.io", "v1beta1", "localqueues");
	struct pk_errors errs = {0};
	char buf[256];

	ck_assert_ptr_nonnull(cq);
	ck_assert_ptr_nonnull(lq);
	ck_assert_ptr_eq(pk_type_stored(cq), pk_type_by_kind("ClusterQueue"));
	ck_assert_ptr_eq(pk_type_by_version("kueue.x-k8s.io", "v1beta2", "clusterqueues"),
			 pk_type_by_kind("ClusterQueue"));
	ck_assert_ptr_null(pk_type_by_version("kueue.x-k8s.io", "v1alpha1", "clusterqueues"));
	for (size_t i = 0; pk_type_served(i); i++)
		if (strcmp(pk_type_served(i)->group, "kueue.x-k8s.io") == 0 &&
		    !pk_type_served(i)->conversion)
			ck_assert_ptr_nonnull(pk_type_by_version("kueue.x-k8s.io", "v1beta1",
								 pk_type_served(i)->plural));

	json_t *in = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
				"\"ClusterQueue\",\"spec\":{\"cohort\":\"c\",\"flavorFungibility\":"
				"{\"whenCanBorrow\":\"Borrow\"}},\"status\":{"
				"\"pendingWorkloadsStatus\":{}}}",
				0, NULL);
	json_t *st = pk_convert_to_storage(cq, in, &errs);
	ck_assert_uint_eq(errs.n, 0);
	ck_assert_str_eq(pk_get_string(st, "apiVersion"), "kueue.x-k8s.io/v1beta2");
	ck_assert_str_eq(pk_get_string(st, "spec.cohortName"), "c");
	ck_assert_ptr_null(pk_get(st, "spec.cohort"));
	ck_assert_str_eq(pk_get_string(st, "spec.flavorFungibility.whenCanBorrow"),
			 "MayStopSearch");
	ck_assert_ptr_null(pk_get(st, "status.pendingWorkloadsStatus"));
	json_t *back = pk_convert_from_storage(cq, st);
	ck_assert_str_eq(pk_get_string(back, "apiVersion"), "kueue.x-k8s.io/v1beta1");
	ck_assert_str_eq(pk_get_string(back, "spec.cohort"), "c");
	ck_assert_ptr_null(pk_get(back, "spec.cohortName"));
	ck_assert_str_eq(pk_convert_message(cq, "spec.cohortName: Invalid value", buf, sizeof(buf)),
			 "spec.cohort: Invalid value");
	ck_assert_str_eq(pk_convert_message(cq, "spec.cohortNames: x", buf, sizeof(buf)),
			 "spec.cohortNames: x");
	json_decref(in);
	json_decref(st);
	json_decref(back);

	/*
	 * flavorFungibility as Kueue's conversion test (clusterqueue_conversion_test.go):
	 * v1beta1's Preempt and Borrow become MayStopSearch, TryNextFlavor stays, and
	 * both come back to v1beta1 as stored
	 */
	in = json_loads("{\"spec\":{\"flavorFungibility\":{\"whenCanBorrow\":\"TryNextFlavor\","
			"\"whenCanPreempt\":\"Preempt\"}}}",
			0, NULL);
	st = pk_convert_to_storage(cq, in, &errs);
	ck_assert_uint_eq(errs.n, 0);
	ck_assert_str_eq(pk_get_string(st, "spec.flavorFungibility.whenCanBorrow"),
			 "TryNextFlavor");
	ck_assert_str_eq(pk_get_string(st, "spec.flavorFungibility.whenCanPreempt"),
			 "MayStopSearch");
	back = pk_convert_from_storage(cq, st);
	ck_assert_str_eq(pk_get_string(back, "spec.flavorFungibility.whenCanBorrow"),
			 "TryNextFlavor");
	ck_assert_str_eq(pk_get_string(back, "spec.flavorFungibility.whenCanPreempt"),
			 "MayStopSearch");
	json_decref(in);
	json_decref(st);
	json_decref(back);

	/* admission checks: Kueue's strategy, refused by the v1beta1 path */
	in = json_loads("{\"spec\":{\"admissionChecks\":[\"a\"]}}", 0, NULL);
	st = pk_convert_to_storage(cq, in, &errs);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert(strncmp(errs.msg[0], "spec.admissionChecks: Forbidden", 31) == 0);
	ck_assert_str_eq(pk_get_string(st, "spec.admissionChecksStrategy.admissionChecks[0].name"),
			 "a");
	pk_errors_clear(&errs);
	json_decref(in);
	json_decref(st);

	/* a LocalQueue's status.flavorsUsage is v1beta1's flavorUsage */
	in = json_loads("{\"status\":{\"flavorsUsage\":[],\"pendingWorkloads\":1}}", 0, NULL);
	back = pk_convert_from_storage(lq, in);
	ck_assert_ptr_nonnull(pk_get(back, "status.flavorUsage"));
	ck_assert_ptr_null(pk_get(back, "status.flavorsUsage"));
	st = pk_convert_to_storage(lq, back, &errs);
	ck_assert(json_equal(st, in));
	json_decref(in);
	json_decref(st);
	json_decref(back);
}
END_TEST

START_TEST(test_obj_key)
{
	char buf[64];
	const struct pk_type *pod = pk_type_by_kind("Pod"), *node = pk_type_by_kind("Node");

	ck_assert_str_eq(pk_obj_key(buf, sizeof(buf), pod, "team", "p"), "Pod/team/p");
	ck_assert_str_eq(pk_obj_key(buf, sizeof(buf), pod, "", "p"), "Pod/default/p");
	ck_assert_str_eq(pk_obj_key(buf, sizeof(buf), pod, NULL, "p"), "Pod/default/p");
	ck_assert_str_eq(pk_obj_key(buf, sizeof(buf), node, "team", "n1"), "Node//n1");
	ck_assert_str_eq(pk_obj_key(buf, sizeof(buf), pk_type_by_kind("Namespace"), NULL, "a"),
			 "Namespace//a");
	ck_assert_ptr_null(pk_obj_key(buf, 10, pod, "team", "a-long-name"));
	/* "Pod/team/p" and its NUL fit in 11 bytes, not in 10 */
	ck_assert_str_eq(pk_obj_key(buf, 11, pod, "team", "p"), "Pod/team/p");
	ck_assert_ptr_null(pk_obj_key(buf, 10, pod, "team", "p"));
	ck_assert_str_eq(pk_obj_key(buf, sizeof(buf), NULL, NULL, NULL), "/default/");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kinds");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_obj_key);
	tcase_add_test(tc, test_kueue_v1beta1);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}

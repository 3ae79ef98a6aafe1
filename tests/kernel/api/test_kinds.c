/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kinds.c — the table of kinds: each served kind has one row, found by
 * its name and by its resource, with the scope the API has; and the one
 * object key, "Kind/namespace/name", with a cluster-scoped kind's namespace
 * dropped and a namespaced one's defaulted.
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
	ck_assert_ptr_eq(pk_type_of(PK_KIND_NAMESPACE), ns);
	ck_assert_ptr_eq(pk_type_by_resource("", "namespaces"), ns);
	ck_assert_ptr_nonnull(wpc);
	ck_assert_str_eq(wpc->api_version, "kueue.x-k8s.io/v1beta2");
	ck_assert(!wpc->namespaced);
	ck_assert_ptr_eq(pk_type_by_resource("kueue.x-k8s.io", "workloadpriorityclasses"), wpc);
	ck_assert_ptr_eq(pk_type_of(PK_KIND_POD), pk_type_by_kind("Pod"));
	/* every typed view has exactly one row */
	for (int k = PK_KIND_UNKNOWN + 1; k < _PK_KIND_MAX; k++) {
		int rows = 0;

		for (const struct pk_type *t = pk_types; t->kind; t++)
			rows += t->pk == (enum pk_kind)k;
		ck_assert_msg(rows == 1, "kind %d has %d rows", k, rows);
	}
	ck_assert_ptr_null(pk_type_by_kind("Deployment"));
	/* kubectl explain has something to say of every kind */
	for (const struct pk_type *t = pk_types; t->kind; t++)
		ck_assert_msg(t->description && *t->description, "%s has no description", t->kind);
	/* stored as given: Namespace and Event only */
	for (const struct pk_type *t = pk_types; t->kind; t++)
		ck_assert_msg(t->validate || strcmp(t->kind, "Namespace") == 0 ||
				  strcmp(t->kind, "Event") == 0,
			      "%s is not validated", t->kind);
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
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}

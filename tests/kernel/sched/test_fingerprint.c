/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_fingerprint.c — kernel/sched/fingerprint.c: what of an object the
 * scheduler reads, and the loop besides, as one fingerprint; that a pod
 * updated only where the scheduler does not read is not scheduled again;
 * and which kinds it reads (pk_sched_kinds, sched.c).
 */
#include <check.h>
#include <stdlib.h>

#include "kernel/sched/sched.h"

static json_t *pod(const char *name, const char *rv)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:[{s:s}]}}", "apiVersion", "v1", "kind",
			 "Pod", "metadata", "name", name, "namespace", "default", "resourceVersion",
			 rv, "spec", "containers", "name", "c");
}

static bool same(enum pk_kind k, json_t *a, json_t *b, bool loop)
{
	return pk_sched_fingerprint(pk_type_of(k), a, loop) ==
	       pk_sched_fingerprint(pk_type_of(k), b, loop);
}

START_TEST(status_and_metadata_noise_do_not_count)
{
	json_t *a = pod("p", "1"), *b = pod("p", "2");

	pk_set(b, "status.hostIP", json_string("10.0.0.1"));
	ck_assert(same(PK_KIND_POD, a, b, false));
	ck_assert(same(PK_KIND_POD, a, b, true));
	/* the phase counts for the loop (the Job controller counts it), not the scheduler */
	pk_set(b, "status.phase", json_string("Running"));
	ck_assert(same(PK_KIND_POD, a, b, false));
	ck_assert(!same(PK_KIND_POD, a, b, true));
	json_object_del(b, "status");
	/* labels count for both: selectors read them */
	pk_set(b, "metadata.labels.app", json_string("x"));
	ck_assert(!same(PK_KIND_POD, a, b, false));
	ck_assert(!same(PK_KIND_POD, a, b, true));
	json_decref(a);
	json_decref(b);
}
END_TEST

/* What the scheduler reads is read by the loop too: a change it sees, the loop sees. */
START_TEST(loop_reads_what_the_scheduler_reads)
{
	const char *paths[] = {"spec.nodeName", "metadata.creationTimestamp",
			       "metadata.deletionTimestamp", "status.resourceClaimStatuses"};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		json_t *a = pod("p", "1"), *b = pod("p", "1");

		pk_set(b, paths[i], json_string("x"));
		ck_assert_msg(!same(PK_KIND_POD, a, b, false), "%s", paths[i]);
		ck_assert_msg(!same(PK_KIND_POD, a, b, true), "%s", paths[i]);
		json_decref(a);
		json_decref(b);
	}
}
END_TEST

/* Equal values hash equal whatever their key order; the structure counts, not just the text. */
START_TEST(fingerprint_is_canonical)
{
	json_t *a = json_pack("{s:{s:s,s:{s:i,s:[s,s]}}}", "spec", "nodeName", "n", "x", "b", 1,
			      "a", "p", "q");
	json_t *b = json_pack("{s:{s:{s:[s,s],s:i},s:s}}", "spec", "x", "a", "p", "q", "b", 1,
			      "nodeName", "n");
	json_t *c = json_pack("{s:{s:s,s:{s:i,s:[s,s]}}}", "spec", "nodeName", "n", "x", "b", 1,
			      "a", "pq", "");
	json_t *d = json_pack("{s:{s:s,s:{s:i,s:[s,s]}}}", "spec", "nodeName", "n", "x", "b", 1,
			      "a", "p", "q");

	ck_assert(same(PK_KIND_POD, a, b, true));
	ck_assert(!same(PK_KIND_POD, a, c, true));
	pk_set(d, "spec.x.b", json_string("1"));
	ck_assert(!same(PK_KIND_POD, a, d, true));
	ck_assert_uint_ne(pk_sched_fingerprint(&pk_type_pod, a, true),
			  pk_sched_fingerprint(&pk_type_job, a, true));
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(d);
}
END_TEST

/* A pod added again with only its status changed is not scheduled again. */
START_TEST(status_only_update_is_not_rescheduled)
{
	struct pk_sched *s;
	struct pk_sched_result *res;
	json_t *p = pod("p", "1");

	ck_assert_int_eq(pk_sched_new(NULL, &s), 0);
	ck_assert_int_eq(pk_sched_add(s, p, NULL), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE); /* no node */
	pk_sched_result_free(res);
	pk_set(p, "status.phase", json_string("Pending"));
	ck_assert_int_eq(pk_sched_add(s, p, NULL), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 100000, &res), 0);
	ck_assert_int_ne(res->outcome, PK_SCHED_UNSCHEDULABLE); /* nothing new to try */
	pk_sched_result_free(res);
	pk_set(p, "metadata.labels.app", json_string("x"));
	ck_assert_int_eq(pk_sched_add(s, p, NULL), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 200000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE); /* tried again */
	pk_sched_result_free(res);
	pk_sched_free(s);
	json_decref(p);
}
END_TEST

/* The kinds the scheduler reads: its own and those its plugins consume, nodes first, pods last. */
START_TEST(kinds_read_in_feeding_order)
{
	const struct pk_type *const *k = pk_sched_kinds();
	size_t n = 0;

	while (k[n])
		n++;
	ck_assert_uint_ge(n, 5);
	ck_assert_ptr_eq(k[0], &pk_type_node);
	ck_assert_ptr_eq(k[n - 1], &pk_type_pod);
	ck_assert(pk_sched_reads(&pk_type_resource_claim)); /* DynamicResources' event */
	ck_assert(pk_sched_reads(&pk_type_persistent_volume_claim));
	ck_assert(pk_sched_reads(&pk_type_namespace)); /* InterPodAffinity's namespaceSelector */
	ck_assert(!pk_sched_reads(&pk_type_job));
	ck_assert(!pk_sched_reads(NULL));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-fingerprint");
	TCase *tc = tcase_create("fingerprint");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, status_and_metadata_noise_do_not_count);
	tcase_add_test(tc, loop_reads_what_the_scheduler_reads);
	tcase_add_test(tc, fingerprint_is_canonical);
	tcase_add_test(tc, status_only_update_is_not_rescheduled);
	tcase_add_test(tc, kinds_read_in_feeding_order);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

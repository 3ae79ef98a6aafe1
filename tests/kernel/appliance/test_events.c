/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_events.c — kernel/appliance/events.c: which change events requeue
 * scheduling work and the events cache (the fingerprint it keeps is tested in
 * tests/kernel/sched/test_fingerprint.c).  No store, no
 * server: objects are built here and fed in event order.  The node heartbeat
 * rule and the node-loss policy are tested in
 * tests/kernel/controllers/test_heartbeat.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance.h"

static struct ap_cache *cache;

static void setup(void)
{
	ck_assert_int_eq(ap_cache_new(&cache), 0);
}

static void teardown(void)
{
	ap_cache_free(cache);
	cache = NULL;
}

static json_t *node(const char *name, const char *rv, const char *cube, const char *tpu)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s},s:{s:s}},s:{s:{s:s}}}", "apiVersion", "v1",
			 "kind", "Node", "metadata", "name", name, "resourceVersion", rv, "labels",
			 "topology.podkernel.dev/cube", cube, "annotations", TOPO_ANN_HEARTBEAT,
			 "2026-01-01T00:00:00Z", "status", "allocatable", "google.com/tpu", tpu);
}

static json_t *pod(const char *name, const char *rv, const char *node_name)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:[{s:s}]}}", "apiVersion", "v1", "kind",
			      "Pod", "metadata", "name", name, "namespace", "default",
			      "resourceVersion", rv, "spec", "containers", "name", "c");

	if (node_name)
		pk_set(p, "spec.nodeName", json_string(node_name));
	return p;
}

static struct ap_decision classify(enum pk_event_type t, const char *kind, json_t *obj, uint64_t rv)
{
	struct ap_decision d;

	ck_assert_int_eq(ap_classify(cache, t, pk_type_by_kind(kind), obj, rv, &d), 0);
	json_decref(obj);
	return d;
}

START_TEST(new_node_is_fed_and_is_news)
{
	struct ap_decision d = classify(PK_EVENT_ADDED, "Node", node("n1", "5", "c0", "4"), 5);

	ck_assert_int_eq(d.verdict, AP_FEED);
	ck_assert(d.fresh && d.changed);
}
END_TEST

START_TEST(agent_republish_without_change_is_news_without_change)
{
	classify(PK_EVENT_ADDED, "Node", node("n1", "5", "c0", "4"), 5);
	/* podagent's periodic merge patch: new resourceVersion, same labels */
	json_t *again = node("n1", "9", "c0", "4");

	pk_set(again, "metadata.annotations.x", json_string("y"));
	struct ap_decision d = classify(PK_EVENT_MODIFIED, "Node", again, 9);

	ck_assert_int_eq(d.verdict, AP_SKIP);
	ck_assert(d.fresh && !d.changed); /* a heartbeat for the node monitor, nothing more */
}
END_TEST

START_TEST(label_or_capacity_change_requeues)
{
	classify(PK_EVENT_ADDED, "Node", node("n1", "5", "c0", "4"), 5);
	ck_assert_int_eq(classify(PK_EVENT_MODIFIED, "Node", node("n1", "6", "c1", "4"), 6).verdict,
			 AP_FEED);
	ck_assert_int_eq(classify(PK_EVENT_MODIFIED, "Node", node("n1", "7", "c1", "8"), 7).verdict,
			 AP_FEED);
}
END_TEST

START_TEST(own_write_echo_and_replays_are_skipped)
{
	json_t *bound = pod("p", "12", "n1");

	classify(PK_EVENT_ADDED, "Pod", pod("p", "10", NULL), 10);
	/* the appliance bound it and noted the store's answer */
	ck_assert_int_eq(ap_cache_note(cache, &pk_type_pod, bound), 0);
	struct ap_decision d = classify(PK_EVENT_MODIFIED, "Pod", bound, 12);

	ck_assert_int_eq(d.verdict, AP_SKIP);
	ck_assert(!d.fresh && !d.changed);
	/* a replay of an older event after a re-list */
	ck_assert_int_eq(classify(PK_EVENT_ADDED, "Pod", pod("p", "10", NULL), 10).verdict,
			 AP_SKIP);
}
END_TEST

START_TEST(status_only_pod_write_is_skipped)
{
	json_t *p = pod("p", "21", NULL);

	classify(PK_EVENT_ADDED, "Pod", pod("p", "20", NULL), 20);
	pk_condition_set(p, "PodScheduled", "False", "Unschedulable", "no", 1);
	ck_assert_int_eq(classify(PK_EVENT_MODIFIED, "Pod", p, 21).verdict, AP_SKIP);
	/* someone else bound it: the scheduler must know */
	ck_assert_int_eq(classify(PK_EVENT_MODIFIED, "Pod", pod("p", "22", "n2"), 22).verdict,
			 AP_FEED);
}
END_TEST

START_TEST(group_min_count_change_requeues)
{
	json_t *g = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:{s:{s:i}}}}", "apiVersion",
			      "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name",
			      "g", "namespace", "default", "resourceVersion", "30", "spec",
			      "schedulingPolicy", "gang", "minCount", 4);
	json_t *g2 = json_deep_copy(g);

	pk_set(g2, "spec.schedulingPolicy.gang.minCount", json_integer(2));
	ck_assert_int_eq(classify(PK_EVENT_ADDED, "PodGroup", g, 30).verdict, AP_FEED);
	ck_assert_int_eq(classify(PK_EVENT_MODIFIED, "PodGroup", g2, 31).verdict, AP_FEED);
}
END_TEST

START_TEST(deletions_remove)
{
	struct ap_decision d = classify(PK_EVENT_DELETED, "Pod", pod("victim", "40", "n1"), 40);

	ck_assert_int_eq(d.verdict, AP_REMOVE);
	ck_assert(d.fresh && d.changed);
	json_t *job = json_pack("{s:s,s:s,s:{s:s,s:s},s:{}}", "apiVersion", "batch/v1", "kind",
				"Job", "metadata", "name", "j", "namespace", "default", "spec");

	d = classify(PK_EVENT_DELETED, "Job", job, 41);
	ck_assert_int_eq(d.verdict, AP_SKIP); /* the scheduler never had it */
	ck_assert(d.changed);
	json_t *g =
	    json_pack("{s:s,s:s,s:{s:s,s:s},s:{}}", "apiVersion", "scheduling.k8s.io/v1alpha3",
		      "kind", "PodGroup", "metadata", "name", "g", "namespace", "default", "spec");

	d = classify(PK_EVENT_DELETED, "PodGroup", g, 42);
	ck_assert_int_eq(d.verdict, AP_REMOVE);
}
END_TEST

START_TEST(job_spec_change_is_a_change_status_is_not)
{
	json_t *job =
	    json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i}}", "apiVersion", "batch/v1", "kind", "Job",
		      "metadata", "name", "j", "namespace", "default", "spec", "parallelism", 2);
	json_t *status = json_deep_copy(job), *scaled = json_deep_copy(job);

	pk_set(status, "status.active", json_integer(2));
	pk_set(scaled, "spec.parallelism", json_integer(3));
	ck_assert(classify(PK_EVENT_ADDED, "Job", job, 50).changed);
	ck_assert(!classify(PK_EVENT_MODIFIED, "Job", status, 51).changed);
	ck_assert(classify(PK_EVENT_MODIFIED, "Job", scaled, 52).changed);
}
END_TEST

/* The cache table keeps every object's version through growth and deletions. */
START_TEST(cache_table_survives_churn)
{
	struct ap_cache *c = NULL;
	char name[32], rv[16];

	ck_assert_int_eq(ap_cache_new(&c), 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		snprintf(rv, sizeof(rv), "%d", i + 1);
		json_t *p = pod(name, rv, NULL);

		ck_assert_int_eq(ap_cache_note(c, &pk_type_pod, p), 0);
		json_decref(p);
	}
	ck_assert_uint_eq(ap_cache_size(c), 5000);
	for (int i = 0; i < 5000; i += 2) {
		snprintf(name, sizeof(name), "p%d", i);
		ap_cache_forget(c, &pk_type_pod, "default", name);
	}
	ck_assert_uint_eq(ap_cache_size(c), 2500);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		ck_assert_uint_eq(ap_cache_rv(c, &pk_type_pod, "default", name),
				  i % 2 ? (uint64_t)i + 1 : 0);
	}
	ck_assert_uint_eq(ap_cache_rv(c, &pk_type_node, NULL, "p1"),
			  0); /* kind is part of the key */
	ap_cache_free(c);
}
END_TEST

/* Deleted objects' records and key text are reused (the text compacted), and nothing is lost. */
START_TEST(cache_reuses_deleted_records_and_text)
{
	struct ap_cache *c = NULL;
	char name[32], rv[16];

	ck_assert_int_eq(ap_cache_new(&c), 0);
	for (int round = 0; round < 6; round++) {
		for (int i = 0; i < 4000; i++) { /* round r holds names r*1000 .. r*1000+3999 */
			snprintf(name, sizeof(name), "pod-with-a-long-name-%d", round * 1000 + i);
			snprintf(rv, sizeof(rv), "%d", round * 10000 + i + 1);
			json_t *p = pod(name, rv, NULL);

			ck_assert_int_eq(ap_cache_note(c, &pk_type_pod, p), 0);
			json_decref(p);
		}
		for (int i = 0; i < 1000; i++) { /* the oldest thousand go */
			snprintf(name, sizeof(name), "pod-with-a-long-name-%d", round * 1000 + i);
			ap_cache_forget(c, &pk_type_pod, "default", name);
		}
		ck_assert_uint_eq(ap_cache_size(c), 3000);
	}
	for (int i = 0; i < 10000; i++) { /* 6000 .. 8999 live, last noted by round 5 */
		snprintf(name, sizeof(name), "pod-with-a-long-name-%d", i);
		ck_assert_uint_eq(ap_cache_rv(c, &pk_type_pod, "default", name),
				  i < 6000 || i > 8999 ? 0 : (uint64_t)(50000 + i - 5000 + 1));
	}
	ap_cache_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("appliance-events");
	TCase *tc = tcase_create("classify");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, new_node_is_fed_and_is_news);
	tcase_add_test(tc, agent_republish_without_change_is_news_without_change);
	tcase_add_test(tc, label_or_capacity_change_requeues);
	tcase_add_test(tc, own_write_echo_and_replays_are_skipped);
	tcase_add_test(tc, status_only_pod_write_is_skipped);
	tcase_add_test(tc, group_min_count_change_requeues);
	tcase_add_test(tc, deletions_remove);
	tcase_add_test(tc, job_spec_change_is_a_change_status_is_not);
	tcase_add_test(tc, cache_table_survives_churn);
	tcase_add_test(tc, cache_reuses_deleted_records_and_text);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

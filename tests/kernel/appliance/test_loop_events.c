/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_loop_events.c — the loop's Events on a standalone appliance: a
 * binding and a pending pod explained, repeats aggregated into one Event
 * with a count, and Events expired after their TTL.
 */
#include "loop_fixture.h"

/* The store's Event about pod name with reason, waiting up to 10 s; NULL if none. */
static json_t *wait_event(const char *name, const char *reason)
{
	for (int i = 0; i < 200; i++) {
		json_t *all = NULL, *ev, *found = NULL;
		size_t k;

		ck_assert_int_eq(
		    pk_store_list(st, &pk_type_event, "default", NULL, &all, NULL, NULL), 0);
		json_array_foreach(all, k, ev)
		{
			if (!found &&
			    strcmp(pk_get_string(ev, "involvedObject.name") ?: "", name) == 0 &&
			    strcmp(pk_get_string(ev, "reason") ?: "", reason) == 0)
				found = json_incref(ev);
		}
		json_decref(all);
		if (found)
			return found;
		sleep_ms(50);
	}
	return NULL;
}

/*
 * Standalone writes the Events kube-scheduler writes in a cluster, so that
 * `kubectl describe pod` explains a pending pod and a binding.
 */
START_TEST(events_explain_bindings_and_pending_pods)
{
	json_t *lonely = pod("lonely", NULL, NULL), *ev, *p;
	char n[64], want[160];

	cluster();
	start();
	pk_set(lonely, "spec.nodeSelector", json_pack("{s:s}", "disk", "ssd"));
	create(lonely);
	create(pod("ok", NULL, NULL));
	ck_assert(wait_bound("ok"));
	ev = wait_event("ok", "Scheduled");
	ck_assert_ptr_nonnull(ev);
	snprintf(want, sizeof(want), "Successfully assigned default/ok to %s",
		 node_of("ok", n, sizeof(n)));
	ck_assert_str_eq(pk_get_string(ev, "message"), want);
	ck_assert_str_eq(pk_get_string(ev, "type"), "Normal");
	ck_assert_str_eq(pk_get_string(ev, "involvedObject.kind"), "Pod");
	p = get("Pod", "ok");
	ck_assert_str_eq(pk_get_string(ev, "involvedObject.uid"), pk_get_string(p, "metadata.uid"));
	json_decref(p);
	json_decref(ev);
	ev = wait_event("lonely", "FailedScheduling");
	ck_assert_ptr_nonnull(ev);
	ck_assert_str_eq(pk_get_string(ev, "type"), "Warning");
	ck_assert_ptr_nonnull(strstr(pk_get_string(ev, "message"), "node selector"));
	json_decref(ev);
}
END_TEST

/* The FailedScheduling Events about pod lonely: how many, and the one whose
 * message has part in it (a new reference; NULL: none). */
static json_t *failed_event(const char *part, size_t *ret_n)
{
	json_t *all = NULL, *ev, *found = NULL;
	size_t k;

	*ret_n = 0;
	ck_assert_int_eq(pk_store_list(st, &pk_type_event, "default", NULL, &all, NULL, NULL), 0);
	json_array_foreach(all, k, ev)
	{
		if (strcmp(pk_get_string(ev, "involvedObject.name") ?: "", "lonely") != 0 ||
		    strcmp(pk_get_string(ev, "reason") ?: "", "FailedScheduling") != 0)
			continue;
		(*ret_n)++;
		if (!found && strstr(pk_get_string(ev, "message") ?: "", part))
			found = json_incref(ev);
	}
	json_decref(all);
	return found;
}

/* Wait up to 10 s for n FailedScheduling Events, the one of prefix with count. */
static json_t *wait_failed(const char *part, size_t n, json_int_t count)
{
	for (int i = 0; i < 200; i++) {
		size_t got;
		json_t *ev = failed_event(part, &got);

		if (ev && got == n && json_integer_value(json_object_get(ev, "count")) == count)
			return ev;
		json_decref(ev);
		sleep_ms(50);
	}
	ck_abort_msg("no %zu FailedScheduling Events with %s counted %lld", n, part,
		     (long long)count);
	return NULL;
}

/* Set or remove node name's label disk=ssd. */
static void set_disk_label(const char *name, bool on)
{
	json_t *n = get("Node", name);

	if (on)
		pk_set(n, "metadata.labels.disk", json_string("ssd"));
	else
		json_object_del(json_object_get(json_object_get(n, "metadata"), "labels"), "disk");
	ck_assert_int_eq(pk_store_update_opts(st, n, PK_SUB_MAIN, NULL, NULL, NULL), 0);
	json_decref(n);
}

/*
 * A note repeated about the same object bumps its Event's count and
 * lastTimestamp, as client-go's correlator does, instead of making a new
 * Event (here every repeat is written: event_repeat_ms 1).  The pod's
 * message changes when its only match (tainted) loses its label, and comes
 * back when the label does.
 */
START_TEST(events_aggregate_repeats)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	struct pk_standalone_config scfg = {.event_repeat_ms = 1};
	char err[256] = "";
	json_t *lonely = pod("lonely", NULL, NULL), *first, *ev;

	cluster();
	json_t *c1 = node("c1", "cc");
	pk_set(c1, "metadata.labels.disk", json_string("ssd"));
	pk_set(c1, "spec.taints",
	       json_pack("[{s:s,s:s}]", "key", "dedicated", "effect", "NoSchedule"));
	create(c1);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, &scfg, &app, err, sizeof(err)), 0);
	pk_set(lonely, "spec.nodeSelector", json_pack("{s:s}", "disk", "ssd"));
	create(lonely);
	first = wait_failed("4 node selector mismatch", 1, 1);
	set_disk_label("c1", false);
	json_decref(wait_failed("5 node selector mismatch", 2, 1));
	set_disk_label("c1", true);
	ev = wait_failed("4 node selector mismatch", 2, 2);
	ck_assert_str_eq(pk_name(ev), pk_name(first));
	ck_assert_str_eq(pk_get_string(ev, "firstTimestamp"),
			 pk_get_string(first, "firstTimestamp"));
	ck_assert_str_eq(pk_get_string(ev, "message"), pk_get_string(first, "message"));
	json_decref(first);
	json_decref(ev);
}
END_TEST

/* Events go after the event TTL (here 1 s; kube-apiserver's default is an hour). */
START_TEST(events_expire_after_the_ttl)
{
	struct pk_appliance_config cfg = {0};
	struct pk_standalone_config scfg = {.event_ttl_ms = 1000};
	char err[256] = "";
	json_t *ev;

	cluster();
	ck_assert_int_eq(pk_standalone_start(st, &cfg, &scfg, &app, err, sizeof(err)), 0);
	create(pod("brief", NULL, NULL));
	ck_assert(wait_bound("brief"));
	ev = wait_event("brief", "Scheduled");
	ck_assert_ptr_nonnull(ev);
	for (int i = 0; i < 100; i++) {
		json_t *still = NULL;

		if (pk_store_get(st, &pk_type_event, "default", pk_name(ev), &still) == -ENOENT)
			break;
		json_decref(still);
		sleep_ms(100);
	}
	json_t *gone = NULL;

	ck_assert_int_eq(pk_store_get(st, &pk_type_event, "default", pk_name(ev), &gone), -ENOENT);
	json_decref(ev);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("appliance-loop-events");
	TCase *tc = tcase_create("events");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, events_explain_bindings_and_pending_pods);
	tcase_add_test(tc, events_expire_after_the_ttl);
	tcase_add_test(tc, events_aggregate_repeats);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_loop_behind.c — the scheduling loop against a real store when it
 * falls more than the change stream's ring behind: the store keeps what it
 * has not read (pk_store_events_since_held), so it catches up from where it
 * was and never lists everything again (podkernel_appliance_relists_total).
 */
#include <stdatomic.h>

#include "loop_fixture.h"

/* A bound pod without requests. */
static json_t *light_pod(const char *ns, const char *name, const char *app, const char *node)
{
	json_t *p =
	    json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s,s:[{s:s,s:s}]}}", "apiVersion", "v1",
		      "kind", "Pod", "metadata", "name", name, "namespace", ns, "labels", "app",
		      app, "spec", "nodeName", node, "containers", "name", "c", "image", "x");

	return p;
}

struct stall {
	atomic_int state; /* 0 running, 1 stopped in the event hook, 2 let go */
	atomic_int saw_last;
};

/* Stops the loop on the Pod "stall" until the test lets it go. */
static void stall_event(void *arg, const struct pk_source_event *ev, const struct ap_decision *d)
{
	struct stall *s = arg;
	const char *name = pk_name(ev->object);

	(void)d;
	if (strcmp(name, "stall") == 0 && atomic_load(&s->state) == 0) {
		atomic_store(&s->state, 1);
		while (atomic_load(&s->state) != 2)
			sleep_ms(5);
	}
	if (strcmp(name, "burst-last") == 0)
		atomic_store(&s->saw_last, 1);
}

static const struct pk_appliance_hooks stall_hooks = {.event = stall_event};

static void create_burst(int n)
{
	json_t *objs[500];
	int rcs[500];

	for (int i = 0; i < n;) {
		int k = 0;

		for (; k < 500 && i < n; k++, i++) {
			char name[32];

			snprintf(name, sizeof(name), i + 1 == n ? "burst-last" : "burst-%d", i);
			objs[k] = light_pod("default", name, "burst", "roomy");
		}
		ck_assert_int_eq(pk_store_create_batch(st, objs, (size_t)k, rcs), 0);
		for (int j = 0; j < k; j++) {
			ck_assert_int_eq(rcs[j], 0);
			json_decref(objs[j]);
		}
	}
}

/*
 * The loop stops in the middle of its events while more than the ring's worth
 * of writes land: it goes on from where it was (the store kept them for it)
 * and lists nothing again, while watches see the ring as before.
 */
START_TEST(loop_behind_the_ring_catches_up_without_listing)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	struct stall stall = {0};
	struct pk_store_stats s;
	char err[256] = "";

	create(json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s}}}", "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", "roomy", "status", "allocatable", "cpu", "64", "pods",
			 "100000"));
	ck_assert_int_eq(pk_appliance_config_add_hooks(&cfg, &stall_hooks, &stall), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	create(light_pod("default", "stall", "burst", "roomy"));
	for (int i = 0; i < 1000 && atomic_load(&stall.state) != 1; i++)
		sleep_ms(10);
	ck_assert_int_eq(atomic_load(&stall.state), 1);
	create_burst(PK_STORE_RING_SIZE + 500);
	pk_store_get_stats(st, &s);
	ck_assert_uint_ge(s.held_events, 500); /* the ring alone lost them */
	atomic_store(&stall.state, 2);
	for (int i = 0; i < 1000 && !atomic_load(&stall.saw_last); i++)
		sleep_ms(20);
	ck_assert(atomic_load(&stall.saw_last));
	ck_assert(wait_metric("podkernel_appliance_relists_total 0\n"));
	pk_store_get_stats(st, &s);
	ck_assert_uint_eq(s.holds_dropped, 0);
	ck_assert_uint_lt(s.held_events, 500);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("appliance-loop-behind");
	TCase *tc = tcase_create("behind");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, loop_behind_the_ring_catches_up_without_listing);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

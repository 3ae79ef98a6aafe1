/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_heartbeat.c — kernel/controllers/heartbeat.c: which Nodes are
 * monitored, Node writes and Lease renewals as heartbeats, a silent node
 * expiring once and recovering, and the node-loss policy (rate limit,
 * disruptions, a saturated server).  No store, no server: the clock is given.
 * The loop's side (which change events are heartbeats) is in
 * tests/kernel/appliance/test_events.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/controllers.h"

static json_t *node(const char *name, const char *rv, const char *cube, const char *tpu)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s},s:{s:s}},s:{s:{s:s}}}", "apiVersion", "v1",
			 "kind", "Node", "metadata", "name", name, "resourceVersion", rv, "labels",
			 "topology.podkernel.dev/cube", cube, "annotations", TOPO_ANN_HEARTBEAT,
			 "2026-01-01T00:00:00Z", "status", "allocatable", "google.com/tpu", tpu);
}

START_TEST(monitored_rule)
{
	json_t *agent = node("a", "1", "c0", "4");
	json_t *sim = node("s", "1", "c0", "4");
	json_t *plain = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Node",
				  "metadata", "name", "p");

	/* keys hold dots: no dotted-path helper here */
	json_object_set_new(pk_get(sim, "metadata.annotations"), PK_ANN_SIMULATED,
			    json_string("board"));
	ck_assert(ctl_node_monitored(agent));
	ck_assert(!ctl_node_monitored(sim));
	ck_assert(!ctl_node_monitored(plain));
	json_decref(agent);
	json_decref(sim);
	json_decref(plain);
}
END_TEST

START_TEST(silent_node_expires_once_and_recovers)
{
	struct ctl_heartbeats *h;
	json_t *names;
	bool recovered = true;

	ck_assert_int_eq(ctl_heartbeats_new(&h), 0);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "a", true, 1000, &recovered), 0);
	ck_assert(!recovered);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "sim", false, 1000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "b", true, 5000, NULL), 0);

	ck_assert_int_eq(ctl_heartbeats_expired(h, 4000, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 0); /* exactly at the grace: still fine */
	json_decref(names);
	ck_assert_int_eq(ctl_heartbeats_expired(h, 4001, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 1);
	ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "a");
	json_decref(names);
	/* reported once per outage */
	ck_assert_int_eq(ctl_heartbeats_expired(h, 6000, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 0);
	json_decref(names);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "a", true, 7000, &recovered), 0);
	ck_assert(recovered);
	/* b went silent later; sim never counts */
	ck_assert_int_eq(ctl_heartbeats_expired(h, 9000, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 1);
	ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "b");
	json_decref(names);
	ctl_heartbeat_forget(h, "b");
	ctl_heartbeats_free(h);
	ctl_heartbeats_free(NULL);
}
END_TEST

/* Leases: renewals keep a node alive; Node writes without the annotation do not. */
START_TEST(lease_renewals_are_heartbeats)
{
	struct ctl_heartbeats *h;
	json_t *names;
	bool recovered = true;

	ck_assert_int_eq(ctl_heartbeats_new(&h), 0);
	/* a Lease before its Node: not monitored until the Node exists */
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n", true, 1000, &recovered), 0);
	ck_assert(!recovered);
	ck_assert(!ctl_heartbeat_live(h, "n"));
	ck_assert_int_eq(ctl_heartbeats_expired(h, 9000, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 0);
	json_decref(names);
	/* the Node (no annotation) makes it monitored, but is no sign of life itself */
	ck_assert_int_eq(ctl_heartbeat_seen(h, "n", false, 2000, NULL), 0);
	ck_assert(ctl_heartbeat_live(h, "n"));
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n", true, 3000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "n", false, 6500, NULL), 0);
	ck_assert_int_eq(ctl_heartbeats_expired(h, 6000, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 0);
	json_decref(names);
	ck_assert_int_eq(ctl_heartbeats_expired(h, 6001, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 1);
	ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "n");
	json_decref(names);
	ck_assert(!ctl_heartbeat_live(h, "n"));
	/* the next renewal: recovered */
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n", true, 7000, &recovered), 0);
	ck_assert(recovered);
	ck_assert(ctl_heartbeat_live(h, "n"));
	/* the Lease deleted: no longer monitored (unless annotated) */
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n", false, 7100, NULL), 0);
	ck_assert(!ctl_heartbeat_live(h, "n"));
	ck_assert_int_eq(ctl_heartbeats_expired(h, 99000, 3000, &names), 0);
	ck_assert_int_eq(json_array_size(names), 0);
	json_decref(names);
	/* Node deleted, Lease stays: a Node that returns is monitored again */
	ck_assert_int_eq(ctl_heartbeat_lease(h, "m", true, 1000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "m", false, 1000, NULL), 0);
	ctl_heartbeat_forget(h, "m");
	ck_assert(!ctl_heartbeat_live(h, "m"));
	ck_assert_int_eq(ctl_heartbeat_seen(h, "m", false, 1000, NULL), 0);
	ck_assert(ctl_heartbeat_live(h, "m"));
	ctl_heartbeats_free(h);
}
END_TEST

/* ---- node-loss policy ------------------------------------------------------------- */
static const struct ctl_loss_policy policy = {
    .grace_ms = 3000,
    .rate = 0.1,
    .secondary_rate = 0.01,
    .unhealthy_share = 0.55,
    .large_cluster = 50,
};

/* n monitored nodes "n0".."n<n-1>" renewing their Leases at t. */
static struct ctl_heartbeats *nodes(int n, int64_t t)
{
	struct ctl_heartbeats *h;
	char name[16];

	ck_assert_int_eq(ctl_heartbeats_new(&h), 0);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ck_assert_int_eq(ctl_heartbeat_lease(h, name, true, t, NULL), 0);
		ck_assert_int_eq(ctl_heartbeat_seen(h, name, false, t, NULL), 0);
	}
	return h;
}

/* Nodes n<from>..n<to-1> renew at t. */
static void renew(struct ctl_heartbeats *h, int from, int to, int64_t t)
{
	char name[16];

	for (int i = from; i < to; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ck_assert_int_eq(ctl_heartbeat_lease(h, name, true, t, NULL), 0);
	}
}

static size_t lost(struct ctl_heartbeats *h, const struct ctl_loss_policy *p,
		   struct ctl_loss_limiter *lim, int64_t now, struct ctl_loss_report *rep)
{
	json_t *names = NULL;
	size_t n;

	ck_assert_int_eq(ctl_heartbeats_lost(h, p, lim, now, &names, rep), 0);
	n = json_array_size(names);
	json_decref(names);
	return n;
}

/* Silence while the server could not take every connection is no loss. */
START_TEST(no_loss_while_the_server_was_saturated)
{
	struct ctl_heartbeats *h = nodes(4, 1000);
	struct ctl_loss_policy p = policy;
	struct ctl_loss_limiter lim = {0};
	struct ctl_loss_report rep;

	ck_assert_int_eq(ctl_heartbeat_lease(h, "n1", true, 20000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n2", true, 20000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n3", true, 20000, NULL), 0);
	p.saturated_ms = 19000; /* n0 silent since 1000, but the server was full at 19000 */
	ck_assert_uint_eq(lost(h, &p, &lim, 21000, &rep), 0);
	ck_assert_int_eq(rep.state, CTL_LOSS_BLIND);
	ck_assert_uint_eq(rep.silent, 0);
	/* the grace after the saturation: now n0 had its chance */
	ck_assert_uint_eq(lost(h, &p, &lim, 22000, &rep), 0);
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n1", true, 22000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n2", true, 22000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n3", true, 22000, NULL), 0);
	ck_assert_uint_eq(lost(h, &p, &lim, 22001, &rep), 1);
	ck_assert_int_eq(rep.state, CTL_LOSS_NORMAL);
	ctl_heartbeats_free(h);
}
END_TEST

/* One node per 1/rate seconds (a bucket of one), the oldest silence first. */
START_TEST(loss_is_rate_limited)
{
	struct ctl_heartbeats *h = nodes(10, 1000);
	struct ctl_loss_limiter lim = {0};
	struct ctl_loss_report rep;
	json_t *names = NULL;

	renew(h, 3, 10, 9000); /* n0..n2 go silent; n2 first */
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n0", true, 2000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_lease(h, "n1", true, 2000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeats_lost(h, &policy, &lim, 9000, &names, &rep), 0);
	ck_assert_uint_eq(json_array_size(names), 1);
	ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "n2");
	json_decref(names);
	ck_assert_uint_eq(rep.silent, 3);
	ck_assert_uint_eq(rep.held, 2);
	renew(h, 3, 10, 18000);
	ck_assert_uint_eq(lost(h, &policy, &lim, 18000, &rep), 0); /* 9 s: no token yet */
	renew(h, 3, 10, 19000);
	ck_assert_uint_eq(lost(h, &policy, &lim, 19000, &rep), 1); /* 10 s: one */
	renew(h, 3, 10, 29000);
	ck_assert_uint_eq(lost(h, &policy, &lim, 29000, &rep), 1);
	renew(h, 3, 10, 99000);
	ck_assert_uint_eq(lost(h, &policy, &lim, 99000, &rep), 0); /* none left */
	ctl_heartbeats_free(h);
}
END_TEST

/* A large share silent at once: a disruption, not node loss. */
START_TEST(loss_stops_in_a_disruption)
{
	struct ctl_heartbeats *h = nodes(10, 1000);
	struct ctl_loss_policy p = policy;
	struct ctl_loss_limiter lim = {0};
	struct ctl_loss_report rep;

	renew(h, 6, 10, 9000); /* 6 of 10 silent */
	ck_assert_uint_eq(lost(h, &p, &lim, 9000, &rep), 0);
	ck_assert_int_eq(rep.state, CTL_LOSS_PARTIAL);
	ck_assert_uint_eq(rep.held, 6);
	/* in a large cluster, the secondary rate */
	p.large_cluster = 5;
	ck_assert_uint_eq(lost(h, &p, &lim, 9001, &rep), 1);
	renew(h, 6, 10, 59000);
	ck_assert_uint_eq(lost(h, &p, &lim, 59000, &rep), 0);
	renew(h, 6, 10, 109001);
	ck_assert_uint_eq(lost(h, &p, &lim, 109001, &rep), 1); /* 100 s later */
	/* every node silent: none, whatever the size */
	ck_assert_uint_eq(lost(h, &p, &lim, 120000, &rep), 0);
	ck_assert_int_eq(rep.state, CTL_LOSS_FULL);
	ctl_heartbeats_free(h);
	/* two of two silent are not a disruption (more than two are) */
	h = nodes(2, 1000);
	memset(&lim, 0, sizeof(lim));
	ck_assert_uint_eq(lost(h, &policy, &lim, 9000, &rep), 1);
	ck_assert_int_eq(rep.state, CTL_LOSS_NORMAL);
	ctl_heartbeats_free(h);
}
END_TEST

/* A Node podagent registered is monitored before its first Lease. */
START_TEST(agent_node_monitored_from_registration)
{
	struct ctl_heartbeats *h;
	struct ctl_loss_limiter lim = {0};
	struct ctl_loss_report rep;
	json_t *agent = json_pack("{s:{s:s,s:{s:s}}}", "metadata", "name", "a", "annotations",
				  TOPO_ANN_AGENT_OWNED, "");
	json_t *plain = json_pack("{s:{s:s}}", "metadata", "name", "p");
	json_t *sim = json_pack("{s:{s:s,s:{s:s,s:s}}}", "metadata", "name", "s", "annotations",
				TOPO_ANN_AGENT_OWNED, "", PK_ANN_SIMULATED, "board.yaml");

	ck_assert(ctl_node_agent_registered(agent));
	ck_assert(!ctl_node_agent_registered(plain));
	ck_assert(!ctl_node_agent_registered(sim));
	ck_assert_int_eq(ctl_heartbeats_new(&h), 0);
	ck_assert_int_eq(ctl_heartbeat_expect(h, "a", 1000), 0);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "a", false, 1000, NULL), 0);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "p", false, 1000, NULL), 0);
	ck_assert(ctl_heartbeat_live(h, "a"));
	ck_assert(!ctl_heartbeat_live(h, "p"));
	/* a later Node write is no heartbeat */
	ck_assert_int_eq(ctl_heartbeat_expect(h, "a", 3000), 0);
	ck_assert_int_eq(ctl_heartbeat_seen(h, "a", false, 3000, NULL), 0);
	ck_assert_uint_eq(lost(h, &policy, &lim, 4001, &rep), 1);
	ck_assert_uint_eq(rep.monitored, 1);
	/* a plain Node, then its first Lease: monitored from the Lease on */
	ck_assert_int_eq(ctl_heartbeat_lease(h, "p", true, 5000, NULL), 0);
	ck_assert(ctl_heartbeat_live(h, "p"));
	ck_assert_uint_eq(lost(h, &policy, &lim, 99000, &rep), 1);
	ctl_heartbeats_free(h);
	json_decref(agent);
	json_decref(plain);
	json_decref(sim);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-heartbeat");
	TCase *hb = tcase_create("heartbeat");
	SRunner *sr;
	int failed;

	tcase_add_test(hb, monitored_rule);
	tcase_add_test(hb, silent_node_expires_once_and_recovers);
	tcase_add_test(hb, lease_renewals_are_heartbeats);
	tcase_add_test(hb, no_loss_while_the_server_was_saturated);
	tcase_add_test(hb, loss_is_rate_limited);
	tcase_add_test(hb, loss_stops_in_a_disruption);
	tcase_add_test(hb, agent_node_monitored_from_registration);
	suite_add_tcase(s, hb);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

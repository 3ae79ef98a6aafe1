/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queue.c — kernel/sched/forest.c and queue.c: the workload forest in
 * any arrival order, root resolution (missing ancestors, cycles), root-only
 * queue ordering by priority and creation time, PreEnqueue admissibility,
 * backoff of unschedulable roots, and removal of objects.
 */
#include <check.h>
#include <stdlib.h>

#include "helpers.h"

static json_t *with_ts(json_t *obj, const char *ts)
{
	json_object_set_new(json_object_get(obj, "metadata"), "creationTimestamp", json_string(ts));
	return obj;
}

START_TEST(test_forest_any_order)
{
	struct pk_sched *s = new_sched();
	char why[256];
	struct sc_group *leaf, *root;

	add_pod(s, "p0", "1", "leaf", NULL, 0);	     /* pod before its group */
	add_group(s, false, "leaf", "mid", 2, NULL); /* child before parent */
	leaf = find_group(s, "leaf");
	ck_assert_ptr_nonnull(leaf);
	ck_assert_ptr_null(sc_group_root(leaf, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "default/mid not found"));
	add_group(s, true, "mid", "top", 1, NULL);
	ck_assert_ptr_null(sc_group_root(leaf, why, sizeof(why)));
	add_group(s, true, "top", NULL, 1, NULL);
	root = sc_group_root(leaf, why, sizeof(why));
	ck_assert_ptr_nonnull(root);
	ck_assert_str_eq(root->name, "top");
	ck_assert_uint_eq(s->forest.roots.n, 1); /* only the root is queued */
	ck_assert_int_eq(pk_sched_check(s, why, sizeof(why)), 0);
	/* Not admissible yet (1 of 2 pods); a second pod makes it so. */
	ck_assert(!sc_group_admissible(root, 0, NULL));
	add_pod(s, "p1", "1", "leaf", NULL, 0);
	ck_assert(sc_group_admissible(root, 0, NULL));
	pk_sched_free(s);
}
END_TEST

START_TEST(test_cycle_never_scheduled)
{
	struct pk_sched *s = new_sched();
	char why[256];
	struct pk_sched_result *res = NULL;

	add_node(s, "n", "8", "");
	add_group(s, true, "a", "b", 1, NULL);
	add_group(s, true, "b", "a", 1, NULL);
	add_group(s, false, "leaf", "a", 1, NULL);
	add_pod(s, "p", "1", "leaf", NULL, 0);
	ck_assert_ptr_null(sc_group_root(find_group(s, "leaf"), why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "cycle"));
	ck_assert_uint_eq(s->forest.roots.n, 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
		ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
		ck_assert_uint_eq(res->bound, 0);
		/* The first cycle reports the cycle once (a, b, leaf Invalid; the pod
		 * waits); later ones are silent. */
		ck_assert_uint_eq(res->nactions, i == 0 ? 4 : 0);
		pk_sched_result_free(res);
	}
	/* Breaking the cycle makes a root: the hierarchy is scheduled. */
	add_group(s, true, "b", NULL, 1, NULL);
	ck_assert_uint_eq(s->forest.roots.n, 1);
	size_t bound = 0;

	run_until_idle(s, &bound, NULL);
	ck_assert_uint_eq(bound, 1);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_queue_order)
{
	struct pk_sched *s = new_sched();
	struct sc_vec order = {0};
	const char *want[] = {"default/hi", "default/g-early", "default/g-b", "default/g-c",
			      "default/solo"};

	add_obj(s, with_ts(group_obj(false, "g-c", NULL, 1, NULL, "w3"), "2026-01-01T00:00:05Z"));
	add_obj(s, with_ts(group_obj(false, "g-b", NULL, 1, NULL, "w2"), "2026-01-01T00:00:05Z"));
	add_obj(s,
		with_ts(group_obj(false, "g-early", NULL, 1, NULL, "w1"), "2026-01-01T00:00:01Z"));
	json_t *hi = with_ts(group_obj(false, "hi", NULL, 1, NULL, "w4"), "2026-01-01T00:00:09Z");

	json_object_set_new(json_object_get(hi, "spec"), "priority", json_integer(50));
	add_obj(s, hi);
	add_obj(s, with_ts(pod_obj("solo", "1", NULL, NULL, 0), "2026-01-01T00:00:07Z"));
	sc_queue_order(s, &order);
	ck_assert_uint_eq(order.n, 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_str_eq(((struct sc_group *)order.v[i])->key, want[i]);
	sc_vec_free(&order);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_preenqueue)
{
	struct pk_sched *s = new_sched();
	struct sc_buf why = {0};
	struct sc_group *root;

	add_group(s, true, "root", NULL, 2, NULL);
	add_group(s, true, "cpg-1", "root", 2, NULL);
	add_group(s, false, "pg-11", "cpg-1", 2, NULL);
	add_group(s, false, "pg-2", "root", 1, NULL);
	add_pod(s, "a", "1", "pg-11", NULL, 0);
	add_pod(s, "b", "1", "pg-2", NULL, 0);
	root = find_group(s, "root");
	ck_assert(!sc_group_admissible(root, 0, &why));
	ck_assert_ptr_nonnull(strstr(why.s, "has 1 of minGroupCount 2 admissible child groups"));
	ck_assert_ptr_nonnull(strstr(why.s, "default/cpg-1"));
	sc_buf_free(&why);
	/* Running pods count too; deleting ones do not. */
	add_pod(s, "c", "1", "pg-11", "elsewhere", 0);
	ck_assert(sc_group_admissible(find_group(s, "pg-11"), 0, NULL));
	ck_assert(!sc_group_admissible(find_group(s, "cpg-1"), 0, NULL));
	add_group(s, false, "pg-12", "cpg-1", -1, NULL); /* basic: needs one pod */
	ck_assert(!sc_group_admissible(find_group(s, "pg-12"), 0, NULL));
	add_pod(s, "d", "1", "pg-12", NULL, 0);
	ck_assert(sc_group_admissible(root, 0, NULL));
	json_t *del = pod_obj("d", "1", "pg-12", NULL, 0);

	json_object_set_new(json_object_get(del, "metadata"), "deletionTimestamp",
			    json_string("2026-01-01T00:00:00Z"));
	add_obj(s, del);
	ck_assert(!sc_group_admissible(root, 0, NULL));
	pk_sched_free(s);
}
END_TEST

START_TEST(test_gated_root_says_why)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res = NULL;

	add_node(s, "n", "8", "");
	add_group(s, false, "pg", NULL, 3, NULL);
	add_pod(s, "a", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_GATED);
	ck_assert_uint_eq(res->nactions, 1);
	ck_assert_str_eq(res->actions[0].type, "PodScheduled");
	ck_assert_str_eq(res->actions[0].reason, "Unschedulable");
	ck_assert_ptr_nonnull(
	    strstr(res->actions[0].message, "PodGroup default/pg has 1 of minCount 3"));
	pk_sched_result_free(res);
	/* Nothing changed: the gated root is not looked at again. */
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	pk_sched_result_free(res);
	add_pod(s, "b", "1", "pg", NULL, 0);
	add_pod(s, "c", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 3);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * A gang filling up: each waiting pod is told why once; a new member is not
 * a reason to rewrite every earlier one (writes per arrival stay constant).
 */
START_TEST(test_gated_pods_told_once)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res = NULL;

	add_node(s, "n", "8", "");
	add_group(s, false, "pg", NULL, 4, NULL);
	add_pod(s, "a", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_uint_eq(res->nactions, 1);
	pk_sched_result_free(res);
	add_pod(s, "b", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_GATED);
	ck_assert_uint_eq(res->nactions, 1);
	ck_assert_str_eq(res->actions[0].name, "b");
	ck_assert_ptr_nonnull(strstr(res->actions[0].message, "has 2 of minCount 4"));
	pk_sched_result_free(res);
	add_pod(s, "c", "1", "pg", NULL, 0);
	add_pod(s, "d", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 4);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * gated_tell_ms: a gang being created is told why only once it has waited
 * that long without a new member.
 */
START_TEST(test_gated_pods_told_after_a_wait)
{
	struct pk_sched_opts o = {.check = true, .gated_tell_ms = 500};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	add_node(s, "n", "8", "");
	add_group(s, false, "pg", NULL, 4, NULL);
	add_pod(s, "a", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_GATED);
	ck_assert_uint_eq(res->nactions, 0);
	ck_assert(res->has_retry);
	ck_assert_int_eq(res->retry_at_ms, 500);
	pk_sched_result_free(res);
	add_pod(s, "b", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 100, &res), 0);
	ck_assert_uint_eq(res->nactions, 0);
	pk_sched_result_free(res);
	/* b came at 100: the gang is still filling, its wait starts again. */
	ck_assert_int_eq(pk_sched_cycle(s, 500, &res), 0);
	ck_assert_uint_eq(res->nactions, 0);
	ck_assert(res->has_retry);
	ck_assert_int_eq(res->retry_at_ms, 600);
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 600, &res), 0);
	ck_assert_uint_eq(res->nactions, 2); /* a and b, with the count of now */
	ck_assert_ptr_nonnull(strstr(res->actions[0].message, "has 2 of minCount 4"));
	ck_assert(!res->has_retry);
	pk_sched_result_free(res);
	add_pod(s, "c", "1", "pg", NULL, 0); /* the gang has waited: told at once */
	ck_assert_int_eq(pk_sched_cycle(s, 600, &res), 0);
	ck_assert_uint_eq(res->nactions, 1);
	ck_assert_str_eq(res->actions[0].name, "c");
	pk_sched_result_free(res);
	add_pod(s, "d", "1", "pg", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 700, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 4);
	pk_sched_result_free(res);
	/* A gang completed within the wait is never told it waited. */
	add_group(s, false, "quick", NULL, 2, NULL);
	add_pod(s, "q0", "1", "quick", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 1000, &res), 0);
	ck_assert_uint_eq(res->nactions, 0);
	pk_sched_result_free(res);
	add_pod(s, "q1", "1", "quick", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 1010, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 1600, &res), 0);
	ck_assert_uint_eq(res->nactions, 0);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * A gang whose members keep arriving within gated_tell_ms of each other is
 * told nothing: only a spell of that length without a change tells it, a
 * member seen when the wait is due (not yet picked) included.
 */
START_TEST(test_gated_pods_filling_not_told)
{
	struct pk_sched_opts o = {.check = true, .gated_tell_ms = 500};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;
	const char *names[] = {"p0", "p1", "p2", "p3", "p4", "p5"};

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	add_node(s, "n", "8", "");
	add_group(s, false, "slow", NULL, 6, NULL);
	for (int i = 0; i < 4; i++) {
		add_pod(s, names[i], "1", "slow", NULL, 0);
		ck_assert_int_eq(pk_sched_cycle(s, 2000 + 400 * i, &res), 0);
		ck_assert_int_eq(res->outcome, PK_SCHED_GATED);
		ck_assert_uint_eq(res->nactions, 0);
		ck_assert(res->has_retry);
		pk_sched_result_free(res);
		ck_assert_int_eq(pk_sched_cycle(s, 2000 + 400 * i + 300, &res), 0);
		ck_assert_uint_eq(res->nactions, 0);
		pk_sched_result_free(res);
	}
	/* p3 came at 3200; p4, before 3700, is not picked before the wait is due. */
	add_pod(s, names[4], "1", "slow", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 3700, &res), 0);
	ck_assert_uint_eq(res->nactions, 0);
	ck_assert(res->has_retry);
	ck_assert_int_eq(res->retry_at_ms, 4200);
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 4200, &res), 0);
	ck_assert_uint_eq(res->nactions, 5); /* stuck for 500 ms: each told, once */
	ck_assert_ptr_nonnull(strstr(res->actions[0].message, "has 5 of minCount 6"));
	pk_sched_result_free(res);
	add_pod(s, names[5], "1", "slow", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 4300, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 6);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * A gang waiting for members has the topology partitions its placement reads
 * built meanwhile (not after its last member); its placement reuses them.
 */
START_TEST(test_gated_gang_prepares_partitions)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res = NULL;
	json_t *g = group_obj(false, "racked", NULL, 2, NULL, NULL);
	struct sc_part *part;

	add_node(s, "n0", "4", "rack=r0");
	add_node(s, "n1", "4", "rack=r1");
	json_object_set_new(json_object_get(g, "spec"), "schedulingConstraints",
			    json_pack("{s:[{s:s}]}", "topology", "key", "rack"));
	add_obj(s, g);
	ck_assert_uint_eq(s->snap.nparts, 0);
	add_pod(s, "r-a", "1", "racked", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_GATED);
	pk_sched_result_free(res);
	ck_assert_uint_eq(s->snap.nparts, 1);
	ck_assert_str_eq(s->snap.parts[0]->key, "rack");
	ck_assert_int_eq(s->snap.parts[0]->ndom, 2);
	part = s->snap.parts[0];
	add_pod(s, "r-b", "1", "racked", NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 10, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_uint_eq(res->bound, 2);
	pk_sched_result_free(res);
	ck_assert_uint_eq(s->snap.nparts, 1);
	ck_assert_ptr_eq(s->snap.parts[0], part);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_backoff)
{
	struct pk_sched_opts o = {.check = true, .backoff_initial_ms = 100, .backoff_max_ms = 400};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	add_node(s, "n", "1", "");
	add_pod(s, "big", "2", NULL, NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 1000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	pk_sched_result_free(res);
	/* Unchanged cluster: not retried, nothing waiting. */
	ck_assert_int_eq(pk_sched_cycle(s, 5000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	ck_assert(!res->has_retry);
	pk_sched_result_free(res);
	/* A new node changes the cluster; within the backoff the root waits. */
	add_node(s, "n2", "1", "");
	ck_assert_int_eq(pk_sched_cycle(s, 1050, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	ck_assert(res->has_retry);
	ck_assert_int_eq(res->retry_at_ms, 1100);
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 1100, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	pk_sched_result_free(res);
	ck_assert_int_eq(find_group(s, "big") == NULL, 1); /* standalone: implicit group */
	add_node(s, "n3", "4", "");
	ck_assert_int_eq(pk_sched_cycle(s, 1150, &res), 0);
	ck_assert(res->has_retry);
	ck_assert_int_eq(res->retry_at_ms, 1300); /* doubled */
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 1300, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_str_eq(res->actions[0].node, "n3");
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * KEP requeueing on cluster events: a root that failed for capacity is tried
 * again when capacity may have grown (a pod removed, a node added), never
 * because capacity was taken (a binding, a bound pod arriving), and not
 * when the capacity freed leaves the cluster less free in all than it needs.
 */
START_TEST(test_binding_wakes_no_capacity_failure)
{
	struct pk_sched_opts o = {.check = true, .backoff_initial_ms = 100, .backoff_max_ms = 400};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	add_node(s, "n", "3", "");
	add_pod(s, "big", "4", NULL, NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 1000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	pk_sched_result_free(res);
	add_pod(s, "small", "1", NULL, NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 5000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	pk_sched_result_free(res);
	/* Past the backoff: the binding freed nothing, big is not tried. */
	ck_assert_int_eq(pk_sched_cycle(s, 6000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	pk_sched_result_free(res);
	add_pod(s, "elsewhere", "1", NULL, "n", 0); /* bound by someone else */
	ck_assert_int_eq(pk_sched_cycle(s, 7000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	pk_sched_result_free(res);
	/* A removed pod frees capacity, but 3 CPUs free in all cannot hold 4: not tried. */
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "small"), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 8000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	ck_assert(!res->has_retry);
	pk_sched_result_free(res);
	/* A node added: big is tried again (5 CPUs free in all, no node holds 4). */
	add_node(s, "n2", "2", "");
	ck_assert_int_eq(pk_sched_cycle(s, 9000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	ck_assert_str_eq(res->root, "Pod default/big");
	pk_sched_result_free(res);
	/* Now freed capacity wakes it (5 free in all), though no node holds it yet. */
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "elsewhere"), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 10000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * A root parked while the cluster has too little free for it misses no
 * retry: when capacity freed wakes it, the retries it would have made at the
 * changes before (each after its backoff) count, and its backoff is theirs.
 */
START_TEST(test_parked_root_replays_its_retries)
{
	struct pk_sched_opts o = {.check = true, .backoff_initial_ms = 100, .backoff_max_ms = 400};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	add_node(s, "n", "4", "");
	add_pod(s, "a", "1", NULL, "n", 0);
	add_pod(s, "b", "1", NULL, "n", 0);
	add_pod(s, "c", "1", NULL, "n", 0);
	add_pod(s, "big", "4", NULL, NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 1100, &res), 0); /* 1 free: fails, backoff to 1200 */
	ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
	pk_sched_result_free(res);
	for (int i = 0; i < 2; i++) { /* 2, then 3 free: parked, neither tried nor waited for */
		ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", i ? "b" : "a"), 0);
		ck_assert_int_eq(pk_sched_cycle(s, 1200 + 100 * i, &res), 0);
		ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
		ck_assert(!res->has_retry);
		pk_sched_result_free(res);
	}
	/*
	 * 4 free: it wakes.  Retried at 1200 (backoff 200) and at 1400 (the end
	 * of that backoff, after the change at 1300; backoff 400), it waits
	 * until 1800 as it would have.
	 */
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "c"), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 1500, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	ck_assert(res->has_retry);
	ck_assert_int_eq(res->retry_at_ms, 1800);
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 1800, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_str_eq(res->actions[0].node, "n");
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/*
 * Freed capacity wakes a parked root at its turn, with the room still there:
 * the older of two parked roots takes the 2 CPUs freed, and the younger,
 * which they would no longer hold, is not tried until more is freed.
 */
START_TEST(test_parked_root_wakes_at_its_turn)
{
	struct pk_sched_opts o = {.check = true, .backoff_initial_ms = 100, .backoff_max_ms = 400};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	add_node(s, "n", "4", "");
	add_pod(s, "x", "2", NULL, "n", 0);
	add_pod(s, "y", "2", NULL, "n", 0);
	add_pod(s, "older", "2", NULL, NULL, 0);
	add_pod(s, "younger", "2", NULL, NULL, 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pk_sched_cycle(s, 1000, &res), 0);
		ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
		ck_assert_str_eq(res->root, i ? "Pod default/younger" : "Pod default/older");
		pk_sched_result_free(res);
	}
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "x"), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 2000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_str_eq(res->root, "Pod default/older");
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 2000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	ck_assert(!res->has_retry);
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "y"), 0);
	ck_assert_int_eq(pk_sched_cycle(s, 3000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_SCHEDULED);
	ck_assert_str_eq(res->root, "Pod default/younger");
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/* ---- retries counted without the search, against each retry searched ---------------- */

/* With a statistics sink set every retry runs the strategy's search (none is counted). */
static void stat_sink(void *arg, enum pk_sched_stat stat, double value, const char *root)
{
	(void)arg, (void)stat, (void)value, (void)root;
}

struct replay_run {
	struct pk_sched *s;
	char log[1 << 16];
	size_t len;
	int bound[48]; /* pods bound of each gang */
	int64_t retry;
	size_t cycles;
};

/* Cycles at now until idle; every outcome, root and binding logged, the next retry kept. */
static void replay_round(struct replay_run *r, int64_t now)
{
	for (int i = 0; i < 200; i++) {
		struct pk_sched_result *res = NULL;
		bool idle;

		ck_assert_int_eq(pk_sched_cycle(r->s, now, &res), 0);
		r->cycles++;
		if (res->bound) /* a failed attempt is a cycle only where it is searched */
			r->len += (size_t)snprintf(r->log + r->len, sizeof(r->log) - r->len,
						   "%lld %s", (long long)now, res->root);
		for (size_t k = 0; k < res->nactions; k++) {
			const struct pk_sched_action *a = &res->actions[k];
			int gang = -1, pod = -1;

			if (a->action != PK_SCHED_BIND)
				continue;
			ck_assert_int_eq(sscanf(a->name, "g%d-%d", &gang, &pod), 2);
			r->bound[gang]++;
			r->len += (size_t)snprintf(r->log + r->len, sizeof(r->log) - r->len,
						   " %s>%s", a->name, a->node);
		}
		idle = res->nactions == 0 &&
		       (res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED);
		r->retry = res->has_retry ? res->retry_at_ms : 0;
		if (res->bound || idle)
			r->len += (size_t)snprintf(r->log + r->len, sizeof(r->log) - r->len,
						   "%s retry %lld\n", idle ? " idle" : "",
						   (long long)r->retry);
		ck_assert_uint_lt(r->len, sizeof(r->log) - 256);
		pk_sched_result_free(res);
		if (idle)
			return;
	}
	ck_abort_msg("no idle cycle");
}

/* Gang g of n pods, each of cpu CPUs (a minCount gang), created at second sec. */
static void replay_gang(struct pk_sched *s, int g, int n, int cpu, int sec)
{
	char name[32], req[8], ts[32];

	snprintf(name, sizeof(name), "g%d", g);
	snprintf(req, sizeof(req), "%d", cpu);
	snprintf(ts, sizeof(ts), "2024-01-01T00:%02d:%02dZ", sec / 60, sec % 60);
	add_obj(s, with_ts(group_obj(false, name, NULL, n, NULL, NULL), ts));
	for (int k = 0; k < n; k++) {
		char pod[32];

		snprintf(pod, sizeof(pod), "g%d-%d", g, k);
		add_obj(s, with_ts(pod_obj(pod, req, name, NULL, 0), ts));
	}
}

/*
 * An overloaded cluster (gangs of 1 to 6 pods offered faster than 4 nodes of
 * 4 CPUs finish them) replayed twice: with the retries known to fail counted
 * without the strategy's search (parked roots' retries replayed from the
 * marks, a retry at an unchanged root's turn or at its backoff's end
 * counted), and with each retry searched.  Every cycle's outcome, root,
 * binding and next retry are the same, and the queue's invariants (its
 * parks' order and least needs, the ranks they keep) hold after every cycle.
 */
START_TEST(test_counted_retries_match_searched_ones)
{
	static struct replay_run runs[2];
	uint64_t rng = 0x9e3779b97f4a7c15ULL + (uint64_t)_i;
	int64_t now = 1000;
	int ngangs = 0, sizes[48];

	for (int k = 0; k < 2; k++) {
		struct pk_sched_opts o = {.check = true,
					  .backoff_initial_ms = 100,
					  .backoff_max_ms = 800,
					  .quiet_failures = k == 0,
					  .stat = k ? stat_sink : NULL};

		memset(&runs[k], 0, sizeof(runs[k]));
		ck_assert_int_eq(pk_sched_new(&o, &runs[k].s), 0);
		for (int n = 0; n < 4; n++) {
			char name[8];

			snprintf(name, sizeof(name), "n%d", n);
			add_node(runs[k].s, name, "4", "");
		}
	}
	for (int step = 0; step < 160; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if (ngangs < 48 && rng % 4 < 2) { /* a gang arrives */
			sizes[ngangs] = 1 + (int)((rng >> 8) % 6);
			for (int k = 0; k < 2; k++)
				replay_gang(runs[k].s, ngangs, sizes[ngangs],
					    1 + (int)((rng >> 16) % 2), (int)(now / 1000));
			ngangs++;
		} else if (rng % 4 == 2) { /* the oldest running gang finishes: its pods leave */
			for (int g = 0; g < ngangs; g++) {
				if (runs[0].bound[g] < sizes[g])
					continue;
				for (int k = 0; k < 2; k++) {
					for (int p = 0; p < sizes[g]; p++) {
						char pod[32];

						snprintf(pod, sizeof(pod), "g%d-%d", g, p);
						pk_sched_remove(runs[k].s, &pk_type_pod, "default",
								pod);
					}
					runs[k].bound[g] = -1000; /* finished */
				}
				break;
			}
		}
		for (int k = 0; k < 2; k++)
			replay_round(&runs[k], now);
		ck_assert_int_eq(runs[0].retry, runs[1].retry);
		/* the next event: a retry due before it, or 50 to 850 ms on */
		int64_t next = now + 50 + (int64_t)(rng >> 24) % 800;

		while (runs[0].retry > now && runs[0].retry < next) {
			now = runs[0].retry;
			for (int k = 0; k < 2; k++)
				replay_round(&runs[k], now);
			ck_assert_int_eq(runs[0].retry, runs[1].retry);
		}
		now = next;
	}
	ck_assert_str_eq(runs[0].log, runs[1].log);
	/* the same bindings from fewer cycles: retries were counted, not searched */
	ck_assert_uint_gt(runs[0].len, 1000);
	ck_assert_uint_lt(runs[0].cycles, runs[1].cycles);
	for (int k = 0; k < 2; k++)
		pk_sched_free(runs[k].s);
}
END_TEST

/*
 * Roots parked as unschedulable sit in neither heap, so picking does not
 * look at them; a cluster event that may free capacity puts each back once.
 */
START_TEST(test_parked_roots_leave_the_heaps)
{
	struct pk_sched_opts o = {.check = true, .backoff_initial_ms = 100, .backoff_max_ms = 400};
	struct pk_sched *s = NULL;
	struct pk_sched_result *res = NULL;
	struct sc_queue *q;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	q = &s->forest.queue;
	add_node(s, "n", "2", "");
	for (int i = 0; i < 50; i++) {
		char name[16];

		snprintf(name, sizeof(name), "big-%d", i);
		add_pod(s, name, "4", NULL, NULL, 0);
	}
	for (int i = 0; i < 50; i++) {
		ck_assert_int_eq(pk_sched_cycle(s, 1000, &res), 0);
		ck_assert_int_eq(res->outcome, PK_SCHED_UNSCHEDULABLE);
		pk_sched_result_free(res);
	}
	ck_assert_int_eq(pk_sched_cycle(s, 1000, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	pk_sched_result_free(res);
	ck_assert_uint_eq(q->active.n + q->backoff.n, 0);
	/* A new pod is the only one looked at. */
	add_pod(s, "small", "1", NULL, NULL, 0);
	ck_assert_int_eq(pk_sched_cycle(s, 1001, &res), 0);
	ck_assert_str_eq(res->root, "Pod default/small");
	pk_sched_result_free(res);
	ck_assert_int_eq(pk_sched_cycle(s, 1001, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE); /* the binding woke nobody */
	pk_sched_result_free(res);
	ck_assert_uint_eq(q->active.n + q->backoff.n, 0);
	/* A node: every parked root comes back, in backoff until 1100. */
	add_node(s, "n2", "2", "");
	ck_assert_int_eq(pk_sched_cycle(s, 1002, &res), 0);
	ck_assert_int_eq(res->outcome, PK_SCHED_IDLE);
	ck_assert_int_eq(res->retry_at_ms, 1100);
	pk_sched_result_free(res);
	ck_assert_uint_eq(q->backoff.n, 50);
	ck_assert_int_eq(pk_sched_cycle(s, 1100, &res), 0);
	ck_assert_str_eq(res->root, "Pod default/big-0"); /* rank order: name */
	pk_sched_result_free(res);
	ck_assert_uint_eq(q->active.n, 49);
	pk_sched_free(s);
}
END_TEST

static void add_namespace(struct pk_sched *s, const char *name, json_t *labels)
{
	json_t *md = json_pack("{s:s}", "name", name);

	if (labels)
		json_object_set_new(md, "labels", labels);
	add_obj(s, json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "Namespace", "metadata",
			     md));
}

static enum pk_sched_outcome cycle_outcome(struct pk_sched *s, int64_t now)
{
	struct pk_sched_result *res = NULL;
	enum pk_sched_outcome out;

	ck_assert_int_eq(pk_sched_cycle(s, now, &res), 0);
	out = res->outcome;
	pk_sched_result_free(res);
	return out;
}

/*
 * A Namespace wakes roots parked for capacity only when a namespaceSelector
 * would see other labels: one made without labels (a namespace per job, as
 * the appliance reads them) or written again the same leaves them parked, so
 * their backoff does not grow and the order stays the one without
 * Namespaces (podctl simulate's).
 */
START_TEST(test_namespace_wakes_only_on_new_labels)
{
	struct pk_sched_opts o = {.check = true, .backoff_initial_ms = 100, .backoff_max_ms = 400};
	struct pk_sched *s = NULL;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	add_node(s, "n", "3", "");
	add_pod(s, "big", "4", NULL, NULL, 0);
	ck_assert_int_eq(cycle_outcome(s, 1000), PK_SCHED_UNSCHEDULABLE);
	add_namespace(s, "job-1", NULL);
	add_namespace(s, "job-2", json_object());
	add_namespace(s, "job-3",
		      json_pack("{s:s}", "kubernetes.io/metadata.name", "job-3")); /* its own */
	ck_assert_int_eq(cycle_outcome(s, 5000), PK_SCHED_IDLE);
	add_namespace(s, "team", json_pack("{s:s}", "team", "a"));
	ck_assert_int_eq(cycle_outcome(s, 6000), PK_SCHED_UNSCHEDULABLE);
	add_namespace(s, "team", json_pack("{s:s}", "team", "a")); /* the same again */
	ck_assert_int_eq(cycle_outcome(s, 7000), PK_SCHED_IDLE);
	add_namespace(s, "team", json_pack("{s:s}", "team", "b"));
	ck_assert_int_eq(cycle_outcome(s, 8000), PK_SCHED_UNSCHEDULABLE);
	add_namespace(s, "team", NULL); /* a label taken away */
	ck_assert_int_eq(cycle_outcome(s, 9000), PK_SCHED_UNSCHEDULABLE);
	add_namespace(s, "job-1", json_pack("{s:s}", "kubernetes.io/metadata.name", "other"));
	ck_assert_int_eq(cycle_outcome(s, 10000), PK_SCHED_UNSCHEDULABLE);
	ck_assert_int_eq(cycle_outcome(s, 11000), PK_SCHED_IDLE);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_remove_objects)
{
	struct pk_sched *s = new_sched();
	char why[256];

	add_node(s, "n", "4", "");
	add_pod(s, "p", "1", "leaf", "n", 0);
	add_group(s, false, "leaf", "root", 1, NULL);
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "p"), 0);
	ck_assert_int_eq(s->snap.nodes[0]->used[SC_RES_PODS], 0);
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "p"), -ENOENT);
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod_group, "default", "leaf"), 0);
	/* The placeholder of "root" went away with its last child. */
	ck_assert_ptr_null(find_group(s, "root"));
	ck_assert_uint_eq(s->forest.all_groups.n, 0);
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_node, NULL, "n"), 0);
	ck_assert_int_eq(pk_sched_check(s, why, sizeof(why)), 0);
	/* A group naming itself as parent is removed cleanly. */
	add_group(s, false, "self", "self", 1, NULL);
	ck_assert_ptr_null(sc_group_root(find_group(s, "self"), NULL, 0));
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod_group, "default", "self"), 0);
	ck_assert_uint_eq(s->forest.all_groups.n, 0);
	pk_sched_free(s);
}
END_TEST

/*
 * The appliance feeds every object it writes back through pk_sched_update:
 * status-only changes must not make the scheduler write the same conditions
 * again, so the loop goes quiet.
 */
START_TEST(test_feedback_goes_quiet)
{
	struct pk_sched *s = new_sched();
	json_t *objs = json_array();
	size_t i, quiet = 0, bound = 0;
	json_t *o;

	json_array_append_new(objs, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}}}", "apiVersion",
					      "v1", "kind", "Node", "metadata", "name", "n0",
					      "status", "allocatable", "cpu", "2"));
	json_array_append_new(objs, group_obj(false, "fits", NULL, 1, NULL, "w1"));
	json_array_append_new(objs, group_obj(false, "gated", NULL, 3, NULL, "w2"));
	json_array_append_new(objs, pod_obj("a", "1", "fits", NULL, 0));
	json_array_append_new(objs, pod_obj("b", "1", "fits", NULL, 0));
	json_array_append_new(objs, pod_obj("c", "1", "fits", NULL, 0)); /* no room: pending */
	json_array_append_new(objs, pod_obj("g", "1", "gated", NULL, 0));
	json_array_foreach(objs, i, o) ck_assert_int_eq(pk_sched_add(s, o, NULL), 0);
	for (int round = 0; round < 30; round++) {
		struct pk_sched_result *res = NULL;

		ck_assert_int_eq(pk_sched_cycle(s, round * 20000, &res), 0);
		bound += res->bound;
		ck_assert_int_eq(pk_sched_apply(objs, res, NULL, 0), 0);
		quiet = res->nactions ? 0 : quiet + 1;
		for (size_t k = 0; k < res->nactions; k++) {
			json_array_foreach(objs, i,
					   o) if (strcmp(pk_name(o), res->actions[k].name) == 0)
			    ck_assert_int_eq(pk_sched_update(s, o, NULL), 0);
		}
		pk_sched_result_free(res);
	}
	ck_assert_uint_eq(bound, 2);
	ck_assert_uint_ge(quiet, 20);
	json_decref(objs);
	pk_sched_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-queue");
	TCase *tc = tcase_create("queue");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_forest_any_order);
	tcase_add_test(tc, test_cycle_never_scheduled);
	tcase_add_test(tc, test_queue_order);
	tcase_add_test(tc, test_preenqueue);
	tcase_add_test(tc, test_gated_root_says_why);
	tcase_add_test(tc, test_gated_pods_told_once);
	tcase_add_test(tc, test_gated_pods_told_after_a_wait);
	tcase_add_test(tc, test_gated_pods_filling_not_told);
	tcase_add_test(tc, test_gated_gang_prepares_partitions);
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_binding_wakes_no_capacity_failure);
	tcase_add_test(tc, test_parked_root_replays_its_retries);
	tcase_add_test(tc, test_parked_root_wakes_at_its_turn);
	tcase_add_test(tc, test_parked_roots_leave_the_heaps);
	tcase_add_loop_test(tc, test_counted_retries_match_searched_ones, 0, 8);
	tcase_add_test(tc, test_namespace_wakes_only_on_new_labels);
	tcase_add_test(tc, test_remove_objects);
	tcase_add_test(tc, test_feedback_goes_quiet);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

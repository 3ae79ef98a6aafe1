/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_snapshot.c — kernel/sched/snapshot.c and filter.c: node filters, the
 * "pods" resource, domain partitions, the node capacity index, and the
 * revert log (random nested assume/remove sequences must come back to the
 * exact starting state, with the invariant checker run after every
 * mutation), and shares of devices.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static enum sc_misfit fit(struct pk_sched *s, const char *pod, const char *node)
{
	return sc_filter(&s->snap, find_pod(s, pod), sc_snapshot_node(&s->snap, node), NULL);
}

static void add_pod_spec(struct pk_sched *s, const char *name, const char *spec_json)
{
	json_error_t e;
	json_t *p = pod_obj(name, "1", NULL, NULL, 0);
	json_t *extra = json_loads(spec_json, 0, &e);

	ck_assert_msg(extra != NULL, "%s", e.text);
	json_object_update(json_object_get(p, "spec"), extra);
	json_decref(extra);
	add_obj(s, p);
}

/* A pod asking gpu of nvidia.com/gpu ("600m": a share of one device). */
static void add_gpu_pod(struct pk_sched *s, const char *name, const char *gpu)
{
	add_obj(s, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:s, s:{s:{s:s, s:s}}}]}}",
			     "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
			     "namespace", "default", "spec", "containers", "name", "c", "image",
			     "x", "resources", "requests", "cpu", "1", "nvidia.com/gpu", gpu));
}

/*
 * A fractional request of an extended resource is a share of one device:
 * two shares of 600m take a GPU each, so a third finds 800m free on the
 * node but no GPU with 600m; a whole GPU finds none untouched; a revert
 * gives every share back to its device.
 */
START_TEST(test_shares_per_device)
{
	struct pk_sched *s = new_sched();
	const struct sc_devs *d;
	struct sc_node *g;
	size_t mark;
	char why[256] = "";

	add_obj(s, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s}}}", "apiVersion", "v1", "kind",
			     "Node", "metadata", "name", "g", "status", "allocatable", "cpu", "8",
			     "nvidia.com/gpu", "2"));
	add_gpu_pod(s, "a", "600m");
	add_gpu_pod(s, "b", "600m");
	add_gpu_pod(s, "c", "600m");
	add_gpu_pod(s, "d", "400m");
	add_gpu_pod(s, "w", "1");
	add_gpu_pod(s, "w2", "1");
	g = sc_snapshot_node(&s->snap, "g");
	mark = sc_snapshot_mark(&s->snap);
	ck_assert_int_eq(sc_snapshot_assume(&s->snap, find_pod(s, "a"), g->index), 0);
	ck_assert_int_eq(sc_snapshot_assume(&s->snap, find_pod(s, "b"), g->index), 0);
	ck_assert_int_eq(fit(s, "c", "g"), SC_MISFIT_RESOURCES);
	ck_assert_int_eq(fit(s, "w", "g"), SC_MISFIT_RESOURCES);
	ck_assert_int_eq(fit(s, "d", "g"), SC_FIT);
	ck_assert_int_eq(sc_snapshot_assume(&s->snap, find_pod(s, "d"), g->index), 0);
	d = sc_node_devs(g, sc_res_id(&s->snap, "nvidia.com/gpu"));
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->n, 2);
	ck_assert_int_eq(d->free[0] + d->free[1], 400); /* 0 and 400: d filled a part */
	ck_assert_int_eq(sc_devs_untouched(d), 0);
	sc_snapshot_revert(&s->snap, mark);
	ck_assert_int_eq(sc_devs_untouched(d), 2);
	ck_assert_int_eq(fit(s, "w", "g"), SC_FIT);
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 0);
	/* A whole GPU taken first: a share opens the other, no whole one is left. */
	ck_assert_int_eq(sc_snapshot_assume(&s->snap, find_pod(s, "w"), g->index), 0);
	ck_assert_int_eq(sc_snapshot_assume(&s->snap, find_pod(s, "a"), g->index), 0);
	ck_assert_int_eq(fit(s, "w2", "g"), SC_MISFIT_RESOURCES);
	ck_assert_int_eq(fit(s, "d", "g"), SC_FIT);
	ck_assert_int_eq(fit(s, "b", "g"), SC_MISFIT_RESOURCES);
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, false, why, sizeof(why)),
			 0);
	((struct sc_devs *)d)->free[find_pod(s, "a")->share_dev] += 100; /* the checker sees it */
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, false, why, sizeof(why)),
			 -EUCLEAN);
	ck_assert_msg(strstr(why, "left, pods leave") != NULL, "%s", why);
	((struct sc_devs *)d)->free[find_pod(s, "a")->share_dev] -= 100;
	sc_snapshot_revert(&s->snap, mark);
	ck_assert_int_eq(sc_devs_untouched(d), 2);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_selector_and_affinity)
{
	struct pk_sched *s = new_sched();

	add_node(s, "a", "4", "accel=gpu,gen=5");
	add_node(s, "b", "4", "accel=cpu,gen=3");
	add_node(s, "c", "4", "");
	add_pod_spec(s, "sel", "{\"nodeSelector\": {\"accel\": \"gpu\"}}");
	ck_assert_int_eq(fit(s, "sel", "a"), SC_FIT);
	ck_assert_int_eq(fit(s, "sel", "b"), SC_MISFIT_SELECTOR);
	ck_assert_int_eq(fit(s, "sel", "c"), SC_MISFIT_SELECTOR);

	const char *ops[][2] = {
	    {"{\"key\": \"accel\", \"operator\": \"In\", \"values\": [\"cpu\", \"tpu\"]}", "010"},
	    {"{\"key\": \"accel\", \"operator\": \"NotIn\", \"values\": [\"cpu\"]}", "101"},
	    {"{\"key\": \"gen\", \"operator\": \"Exists\"}", "110"},
	    {"{\"key\": \"gen\", \"operator\": \"DoesNotExist\"}", "001"},
	    {"{\"key\": \"gen\", \"operator\": \"Gt\", \"values\": [\"4\"]}", "100"},
	    {"{\"key\": \"gen\", \"operator\": \"Lt\", \"values\": [\"4\"]}", "010"},
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		char name[16], spec[512];

		snprintf(name, sizeof(name), "aff%zu", i);
		snprintf(
		    spec, sizeof(spec),
		    "{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuring"
		    "Execution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [%s]}]}}}}",
		    ops[i][0]);
		add_pod_spec(s, name, spec);
		for (int n = 0; n < 3; n++) {
			const char node[2] = {(char)('a' + n), 0};
			bool want = ops[i][1][n] == '1';

			ck_assert_msg((fit(s, name, node) == SC_FIT) == want, "%s on %s", ops[i][0],
				      node);
		}
	}
	/* Terms are ORed. */
	add_pod_spec(
	    s, "or",
	    "{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution"
	    "\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"accel\", "
	    "\"operator\": \"In\", \"values\": [\"tpu\"]}]}, {\"matchExpressions\": [{\"key\": "
	    "\"gen\", \"operator\": \"In\", \"values\": [\"3\"]}]}]}}}}");
	ck_assert_int_eq(fit(s, "or", "a"), SC_MISFIT_AFFINITY);
	ck_assert_int_eq(fit(s, "or", "b"), SC_FIT);
	pk_sched_free(s);
}
END_TEST

/* Nodes share one copy of each label key and value; replacing a node drops its old ones. */
START_TEST(test_labels_interned)
{
	struct pk_sched *s = new_sched();
	struct sc_node *a, *b;

	add_node(s, "a", "1", "zone=z1,rack=r1");
	add_node(s, "b", "1", "zone=z1,rack=r2");
	a = sc_snapshot_node(&s->snap, "a");
	b = sc_snapshot_node(&s->snap, "b");
	ck_assert_ptr_eq(sc_node_label(a, "zone"), sc_node_label(b, "zone"));
	ck_assert_str_eq(sc_node_label(b, "rack"), "r2");
	ck_assert_uint_eq(s->snap.strings.live, 5); /* zone, z1, rack, r1, r2: once each */
	add_node(s, "b", "1", "zone=z2");	    /* replaced: r2 and rack's second user go */
	ck_assert_str_eq(sc_node_label(sc_snapshot_node(&s->snap, "b"), "zone"), "z2");
	ck_assert_ptr_null(sc_node_label(sc_snapshot_node(&s->snap, "b"), "rack"));
	ck_assert_str_eq(sc_node_label(sc_snapshot_node(&s->snap, "a"), "rack"), "r1");
	ck_assert_uint_eq(s->snap.strings.live, 5); /* zone, z1, rack, r1, z2 */
	pk_sched_free(s);
}
END_TEST

START_TEST(test_taints)
{
	struct pk_sched *s = new_sched();
	const char *effects[] = {"NoSchedule", "NoExecute", "PreferNoSchedule"};

	for (int i = 0; i < 3; i++) {
		char name[8];

		snprintf(name, sizeof(name), "t%d", i);
		add_obj(s, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s, s:s}]}, s:{s:{s:s}}}",
				     "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
				     "spec", "taints", "key", "k", "value", "v", "effect",
				     effects[i], "status", "allocatable", "cpu", "4"));
	}
	add_pod(s, "plain", "1", NULL, NULL, 0);
	add_pod_spec(s, "equal",
		     "{\"tolerations\": [{\"key\": \"k\", \"operator\": \"Equal\", "
		     "\"value\": \"v\", \"effect\": \"NoSchedule\"}]}");
	add_pod_spec(s, "wrongval",
		     "{\"tolerations\": [{\"key\": \"k\", \"operator\": \"Equal\", "
		     "\"value\": \"x\"}]}");
	add_pod_spec(s, "exists",
		     "{\"tolerations\": [{\"key\": \"k\", \"operator\": \"Exists\"}]}");
	add_pod_spec(s, "all", "{\"tolerations\": [{\"operator\": \"Exists\"}]}");
	ck_assert_int_eq(fit(s, "plain", "t0"), SC_MISFIT_TAINT);
	ck_assert_int_eq(fit(s, "plain", "t1"), SC_MISFIT_TAINT);
	ck_assert_int_eq(fit(s, "plain", "t2"), SC_FIT); /* PreferNoSchedule does not filter */
	ck_assert_int_eq(fit(s, "equal", "t0"), SC_FIT);
	ck_assert_int_eq(fit(s, "equal", "t1"), SC_MISFIT_TAINT); /* other effect */
	ck_assert_int_eq(fit(s, "wrongval", "t0"), SC_MISFIT_TAINT);
	ck_assert_int_eq(fit(s, "exists", "t1"), SC_FIT);
	ck_assert_int_eq(fit(s, "all", "t0"), SC_FIT);
	ck_assert_int_eq(fit(s, "all", "t1"), SC_FIT);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_resources_and_pods_count)
{
	struct pk_sched *s = new_sched();
	int res = -1;

	add_obj(s, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s, s:s}}}", "apiVersion", "v1",
			     "kind", "Node", "metadata", "name", "small", "status", "allocatable",
			     "cpu", "8", "pods", "2", "memory", "1Gi"));
	add_node(s, "cordoned", "8", "");
	add_pod(s, "r1", "1", NULL, "small", 0);
	add_pod(s, "big", "9", NULL, NULL, 0);
	add_pod(s, "ok", "1", NULL, NULL, 0);
	ck_assert_int_eq(
	    sc_filter(&s->snap, find_pod(s, "big"), sc_snapshot_node(&s->snap, "small"), &res),
	    SC_MISFIT_RESOURCES);
	ck_assert_str_eq(s->snap.res_name[res], "cpu");
	ck_assert_int_eq(fit(s, "ok", "small"), SC_FIT);
	/* A second pod reaches pods=2; a third does not fit, whatever its cpu. */
	add_pod(s, "r2", "1", NULL, "small", 0);
	ck_assert_int_eq(
	    sc_filter(&s->snap, find_pod(s, "ok"), sc_snapshot_node(&s->snap, "small"), &res),
	    SC_MISFIT_RESOURCES);
	ck_assert_int_eq(res, SC_RES_PODS);
	/* A missing resource is 0 on the node. */
	add_obj(s, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}]}}", "apiVersion",
			     "v1", "kind", "Pod", "metadata", "name", "gpu", "namespace", "default",
			     "spec", "containers", "name", "c", "resources", "requests",
			     "nvidia.com/gpu", "1"));
	ck_assert_int_eq(fit(s, "gpu", "cordoned"), SC_MISFIT_RESOURCES);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_partitions)
{
	struct pk_sched *s = new_sched();
	struct sc_part *p;

	add_node(s, "n1", "4", "rack=rack-10");
	add_node(s, "n2", "4", "rack=rack-2");
	add_node(s, "n3", "4", "rack=rack-2");
	add_node(s, "n4", "4", "");
	add_pod(s, "p", "3", NULL, "n2", 0);
	p = sc_snapshot_part(&s->snap, "rack");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->ndom, 2);
	ck_assert_str_eq(p->values[0], "rack-2"); /* natural order */
	ck_assert_str_eq(p->values[1], "rack-10");
	ck_assert_int_eq(p->node_dom[3], -1);
	ck_assert_int_eq(p->free[0][sc_res_id(&s->snap, "cpu")], 5000);
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, NULL, 0), 0);
	pk_sched_free(s);
}
END_TEST

/* Digest of everything an assumption may change. */
static uint64_t digest(const struct sc_snapshot *snap)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < snap->nnodes; i++)
		for (int r = 0; r < SC_MAX_RES; r++)
			h = (h ^ (uint64_t)snap->nodes[i]->used[r]) * 1099511628211ull;
	for (size_t k = 0; k < snap->nparts; k++)
		for (int d = 0; d < snap->parts[k]->ndom; d++)
			for (int r = 0; r < SC_MAX_RES; r++)
				h = (h ^ (uint64_t)snap->parts[k]->free[d][r]) * 1099511628211ull;
	return h;
}

/* A refreshed index's root holds the min, max and positive min over all domains. */
static void check_index_root(const struct sc_snapshot *snap, const struct sc_part *p)
{
	ck_assert_int_eq(p->ntd, 0);
	for (int r = 0; r < p->tres; r++) {
		int64_t mn = INT64_MAX, mx = INT64_MIN, pos = INT64_MAX;

		for (int d = 0; d < p->ndom; d++) {
			int64_t v = p->free[d][r];

			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			if (v > 0 && v < pos)
				pos = v;
		}
		ck_assert_int_eq(sc_tmin(p, 1)[r], mn);
		ck_assert_int_eq(sc_tmax(p, 1)[r], mx);
		ck_assert_int_eq(sc_tpos(p, 1)[r], pos);
	}
	(void)snap;
}

START_TEST(test_revert_random)
{
	struct pk_sched *s = new_sched();
	char why[256];
	unsigned seed = 12345;

	for (int i = 0; i < 16; i++) {
		char name[16], labels[64];

		snprintf(name, sizeof(name), "n%d", i);
		snprintf(labels, sizeof(labels), "rack=r%d,block=b%d", i / 4, i / 8);
		add_node(s, name, "16", labels);
	}
	for (int i = 0; i < 40; i++) {
		char name[16], node[16];

		snprintf(name, sizeof(name), "p%d", i);
		snprintf(node, sizeof(node), "n%d", i % 16);
		add_pod(s, name, "1", NULL, i < 10 ? node : NULL, 0);
	}
	ck_assert_ptr_nonnull(sc_snapshot_part(&s->snap, "rack"));
	ck_assert_ptr_nonnull(sc_snapshot_part(&s->snap, "block"));
	ck_assert_int_eq(sc_part_index(&s->snap, s->snap.parts[0]), 0); /* rack: indexed */
	for (int round = 0; round < 50; round++) {
		uint64_t start = digest(&s->snap), at_mark[8];
		size_t marks[8];
		int depth = 0;

		for (int step = 0; step < 60; step++) {
			struct sc_pod *p =
			    s->forest.all_pods.v[rand_r(&seed) % s->forest.all_pods.n];
			int op = (int)(rand_r(&seed) % 10);

			if (op == 0 && depth < 8) {
				marks[depth] = sc_snapshot_mark(&s->snap);
				at_mark[depth++] = digest(&s->snap);
			} else if (op == 1 && depth > 0) {
				depth--;
				sc_snapshot_revert(&s->snap, marks[depth]);
				ck_assert(digest(&s->snap) == at_mark[depth]);
			} else if (op == 2) {
				ck_assert_int_eq(sc_part_index(&s->snap, s->snap.parts[0]), 0);
				check_index_root(&s->snap, s->snap.parts[0]);
			} else if (p->node >= 0 && !p->cycle.sim_removed) {
				ck_assert_int_eq(sc_snapshot_assume_removed(&s->snap, p), 0);
			} else if (p->node < 0 && p->cycle.assumed < 0) {
				ck_assert_int_eq(
				    sc_snapshot_assume(&s->snap, p, (int)(rand_r(&seed) % 16)), 0);
			}
			ck_assert_msg(sc_snapshot_check(&s->snap, &s->forest.all_pods, false, why,
							sizeof(why)) == 0,
				      "%s", why);
		}
		sc_snapshot_revert(&s->snap, 0);
		ck_assert(digest(&s->snap) == start);
		ck_assert_msg(
		    sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)) == 0,
		    "%s", why);
	}
	pk_sched_free(s);
}
END_TEST

START_TEST(test_check_detects_corruption)
{
	struct pk_sched *s = new_sched();
	char why[256] = "";

	add_node(s, "n", "4", "rack=r");
	add_pod(s, "p", "1", NULL, "n", 0);
	ck_assert_ptr_nonnull(sc_snapshot_part(&s->snap, "rack"));
	s->snap.nodes[0]->used[sc_res_id(&s->snap, "cpu")] += 1;
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(why, "node n"));
	s->snap.nodes[0]->used[sc_res_id(&s->snap, "cpu")] -= 1;
	s->snap.parts[0]->free[0][0] += 1;
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(why, "partition rack"));
	s->snap.parts[0]->free[0][0] -= 1;
	ck_assert_int_eq(sc_snapshot_assume(&s->snap, find_pod(s, "p"), 0), -EINVAL); /* bound */
	pk_sched_free(s);
}
END_TEST

/* A cycle that finds a broken invariant says which (not a bare -EUCLEAN). */
START_TEST(test_cycle_reports_check_message)
{
	struct pk_sched *s = new_sched();
	struct pk_sched_result *res = NULL;

	add_node(s, "n", "4", "");
	add_pod(s, "bound", "1", NULL, "n", 0);
	add_pod(s, "pending", "1", NULL, NULL, 0);
	ck_assert_str_eq(pk_sched_check_message(s), "");
	s->snap.nodes[0]->used[sc_res_id(&s->snap, "cpu")] += 1;
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), -EUCLEAN);
	ck_assert_ptr_null(res);
	ck_assert_msg(strstr(pk_sched_check_message(s), "node n: cpu used") != NULL, "message: %s",
		      pk_sched_check_message(s));
	s->snap.nodes[0]->used[sc_res_id(&s->snap, "cpu")] -= 1;
	ck_assert_int_eq(pk_sched_cycle(s, 0, &res), 0);
	ck_assert_str_eq(pk_sched_check_message(s), "");
	pk_sched_result_free(res);
	pk_sched_free(s);
}
END_TEST

/* The capacity index follows charges lazily and the checker catches a bad node. */
START_TEST(test_capacity_index)
{
	struct pk_sched *s = new_sched();
	struct sc_part *p;
	char why[256] = "";
	int cpu;

	for (int i = 0; i < 12; i++) {
		char name[16], labels[32];

		snprintf(name, sizeof(name), "n%d", i);
		snprintf(labels, sizeof(labels), "rack=r%d", i / 2); /* 6 racks: padded to 8 */
		add_node(s, name, "4", labels);
		snprintf(name, sizeof(name), "p%d", i);
		add_pod(s, name, "1", NULL, NULL, 0);
	}
	p = sc_snapshot_part(&s->snap, "rack");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sc_part_index(&s->snap, p), 0);
	ck_assert_int_eq(p->tleaves, 8);
	cpu = sc_res_id(&s->snap, "cpu");
	check_index_root(&s->snap, p);
	/* Fill rack r5 (nodes 10, 11) with 4 pods of 1 cpu each... */
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(sc_snapshot_assume(&s->snap, s->forest.all_pods.v[i], 10 + i / 2),
				 0);
		ck_assert_int_eq(
		    sc_snapshot_check(&s->snap, &s->forest.all_pods, false, why, sizeof(why)), 0);
	}
	ck_assert_int_eq(p->ntd, 1); /* one domain charged, listed once */
	ck_assert_int_eq(sc_part_index(&s->snap, p), 0);
	check_index_root(&s->snap, p);
	ck_assert_int_eq(sc_tmin(p, 1)[cpu], 4000); /* r5 has 8 - 4 cpus left */
	ck_assert_int_eq(sc_tmax(p, 1)[cpu], 8000);
	sc_snapshot_revert(&s->snap, 0);
	ck_assert_int_eq(sc_part_index(&s->snap, p), 0);
	check_index_root(&s->snap, p);
	ck_assert_int_eq(sc_tmin(p, 1)[cpu], 8000);
	/* ...then a committed placement stays charged without a log. */
	ck_assert_int_eq(sc_snapshot_assume(&s->snap, s->forest.all_pods.v[0], 0), 0);
	sc_snapshot_commit(&s->snap);
	ck_assert_int_eq(s->snap.nlog, 0);
	ck_assert_int_eq(((struct sc_pod *)s->forest.all_pods.v[0])->node, 0);
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 0);
	ck_assert_int_eq(sc_part_index(&s->snap, p), 0);
	ck_assert_int_eq(sc_tmin(p, 1)[cpu], 7000);
	/* A corrupted inner node is reported. */
	sc_tmax(p, 2)[cpu] += 1;
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(why, "capacity index"));
	pk_sched_free(s);
}
END_TEST

/*
 * The node capacity index: whole-cluster scans skip blocks of 64 nodes, and
 * groups of 16 blocks, where no node can hold a pod; a node freed anywhere
 * is found again, and a corrupted block is reported.
 */
START_TEST(test_node_blocks)
{
	struct pk_sched *s = new_sched();
	char why[256] = "", name[16];
	int rr[1];

	for (int i = 0; i < 1100; i++) { /* 18 blocks in 2 groups */
		snprintf(name, sizeof(name), "n%04d", i);
		add_node(s, name, "4", "");
		snprintf(name, sizeof(name), "p%04d", i);
		add_pod(s, name, "4", NULL, NULL, 0);
	}
	ck_assert_int_eq(sc_snapshot_blocks(&s->snap), 0);
	ck_assert_int_eq(s->snap.nblocks, 18);
	rr[0] = sc_res_id(&s->snap, "cpu");
	ck_assert_int_eq(sc_next_block(&s->snap, 0, find_pod(s, "p0000"), rr, 1), 0);
	for (int i = 0; i < 1100; i++) { /* every node full but n1090 */
		if (i == 1090)
			continue;
		snprintf(name, sizeof(name), "p%04d", i);
		ck_assert_int_eq(sc_snapshot_assume(&s->snap, find_pod(s, name), i), 0);
	}
	sc_snapshot_commit(&s->snap);
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 0);
	ck_assert_int_eq(sc_next_block(&s->snap, 0, find_pod(s, "p1090"), rr, 1), 1090 / 64);
	ck_assert_int_eq(s->snap.smax[0][rr[0]], 0);	    /* the full group's bound tightened */
	sc_snapshot_unbind(&s->snap, find_pod(s, "p0100")); /* n0100 free again */
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 0);
	ck_assert_int_eq(sc_next_block(&s->snap, 0, find_pod(s, "p0100"), rr, 1), 100 / 64);
	/* the scheduler finds both free nodes through the index */
	run_until_idle(s, NULL, NULL);
	ck_assert_int_eq(find_pod(s, "p0100")->node, 100);
	ck_assert_int_eq(find_pod(s, "p1090")->node, 1090);
	ck_assert_int_eq(sc_next_block(&s->snap, 0, find_pod(s, "p0000"), rr, 1), 18);
	s->snap.bmax[3][rr[0]] = 4000; /* a corrupted clean block */
	ck_assert_int_eq(sc_snapshot_check(&s->snap, &s->forest.all_pods, true, why, sizeof(why)),
			 -EUCLEAN);
	ck_assert_ptr_nonnull(strstr(why, "node block 3"));
	pk_sched_free(s);
}
END_TEST

START_TEST(test_too_many_resources)
{
	struct pk_sched *s = new_sched();
	json_t *alloc = json_object(), *node;
	struct pk_errors errs = {0};

	for (int i = 0; i < SC_MAX_RES + 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "example.com/r%d", i);
		json_object_set_new(alloc, name, json_string("1"));
	}
	node = json_pack("{s:s, s:s, s:{s:s}, s:{s:o}}", "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", "wide", "status", "allocatable", alloc);
	ck_assert_int_eq(pk_sched_add(s, node, &errs), -E2BIG);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "status.allocatable"));
	pk_errors_clear(&errs);
	json_decref(node);
	ck_assert_int_eq(pk_sched_check(s, NULL, 0), 0);
	pk_sched_free(s);
}
END_TEST

START_TEST(test_huge_quantities)
{
	struct pk_sched *s = new_sched();
	size_t bound = 0;
	char why[256];

	/* Bound pods may exceed a node by any amount; sums must not overflow. */
	add_node(s, "n", "9P", "rack=r");
	add_node(s, "m", "9P", "rack=r");
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "big%d", i);
		add_pod(s, name, "9P", NULL, "n", 0);
	}
	add_pod(s, "pending", "9P", NULL, NULL, 0);
	add_pod(s, "more", "9P", NULL, NULL, 0);
	ck_assert_ptr_nonnull(sc_snapshot_part(&s->snap, "rack"));
	run_until_idle(s, &bound, NULL);
	ck_assert_uint_eq(bound, 1); /* only m has room, for one of them */
	ck_assert_int_eq(pk_sched_check(s, why, sizeof(why)), 0);
	pk_sched_free(s);
}
END_TEST

/* Pods asking the same share one request vector, others (even of the same digits) have their
 * own, and a vector outlives each of its users but the last. */
START_TEST(test_request_vectors_shared)
{
	struct pk_sched *s = new_sched();
	const int64_t *one, *ten;
	int differ = 0;

	add_pod(s, "a", "1", NULL, NULL, 0);
	add_pod(s, "b", "1", NULL, NULL, 0);
	add_pod(s, "c", "10", NULL, NULL, 0);
	add_pod(s, "d", "100m", NULL, NULL, 0);
	add_gpu_pod(s, "e", "1");
	one = find_pod(s, "a")->req;
	ten = find_pod(s, "c")->req;
	ck_assert_ptr_eq(find_pod(s, "b")->req, one);
	ck_assert_ptr_ne(ten, one);
	ck_assert_ptr_ne(find_pod(s, "d")->req, one);
	ck_assert_ptr_ne(find_pod(s, "d")->req, ten);
	ck_assert_ptr_ne(find_pod(s, "e")->req, one);
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "a"), 0);
	ck_assert_int_eq(pk_sched_remove(s, &pk_type_pod, "default", "c"), 0);
	ck_assert_ptr_eq(find_pod(s, "b")->req, one); /* still b's (read below: not freed) */
	add_pod(s, "f", "10", NULL, NULL, 0);
	add_pod(s, "g", "1", NULL, NULL, 0);
	ck_assert_ptr_eq(find_pod(s, "g")->req, one);
	ck_assert_ptr_ne(find_pod(s, "f")->req, one);
	for (int r = 0; r < SC_MAX_RES; r++) { /* the CPU differs; the pods' count does not */
		const int64_t *f = find_pod(s, "f")->req, *d = find_pod(s, "d")->req;

		if (f[r] == one[r]) {
			ck_assert_int_eq(d[r], one[r]);
			continue;
		}
		differ++;
		ck_assert_int_eq(f[r], one[r] * 10);
		ck_assert_int_eq(d[r] * 10, one[r]);
	}
	ck_assert_int_eq(differ, 1);
	pk_sched_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-snapshot");
	TCase *tc = tcase_create("snapshot");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_selector_and_affinity);
	tcase_add_test(tc, test_labels_interned);
	tcase_add_test(tc, test_taints);
	tcase_add_test(tc, test_resources_and_pods_count);
	tcase_add_test(tc, test_partitions);
	tcase_add_test(tc, test_revert_random);
	tcase_add_test(tc, test_check_detects_corruption);
	tcase_add_test(tc, test_cycle_reports_check_message);
	tcase_add_test(tc, test_capacity_index);
	tcase_add_test(tc, test_node_blocks);
	tcase_add_test(tc, test_too_many_resources);
	tcase_add_test(tc, test_huge_quantities);
	tcase_add_test(tc, test_shares_per_device);
	tcase_add_test(tc, test_request_vectors_shared);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_sim.c — kernel/sim: the CSV and object trace readers, and runs on a
 * small cluster of four 4-TPU hosts (two cubes of two): finished pods free
 * their hosts for the gang waiting on them, a node loss fails the pods on it
 * and the gang is placed again as a whole, a higher priority gang preempts,
 * a gang larger than the cluster is never placed, Jobs and JobSets of an
 * object trace run to completion, stranded accelerators are counted, a
 * seed fixes the report to the byte, and the arrival-level comparison
 * (pk_sim_levels) replays jobs in arrival order with gangs placed whole;
 * with queues, a ClusterQueue reclaiming its quota preempts the borrower,
 * which waits and runs again, and a ClusterQueue serves its LocalQueues in
 * arrival order (the scratch store runs on the virtual clock).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/controllers.h"
#include "kernel/sched/replay.h"
#include "kernel/sim/sim.h"

static json_t *cluster(void)
{
	json_t *nodes = json_array();

	for (int i = 0; i < 4; i++) {
		char name[8], cube[8];

		snprintf(name, sizeof(name), "n%d", i);
		snprintf(cube, sizeof(cube), "c%d", i / 2);
		json_array_append_new(
		    nodes,
		    json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s}},s:{s:{s:s,s:s,s:s,s:s}}}", "apiVersion",
			      "v1", "kind", "Node", "metadata", "name", name, "labels", "ex/ss",
			      "s0", "ex/cube", cube, "status", "allocatable", "cpu", "8", "memory",
			      "64Gi", "google.com/tpu", "4", "pods", "110"));
	}
	return nodes;
}

static struct pk_sim_trace *csv(const char *text)
{
	struct pk_sim_trace *t = NULL;
	char err[256] = "";
	int r = pk_sim_trace_parse_csv(text, strlen(text), &t, err, sizeof(err));

	ck_assert_msg(r == 0, "%s", err);
	return t;
}

static json_t *run_opts(struct pk_sim_opts *o, struct pk_sim_trace *t)
{
	json_t *nodes = cluster(), *rep = NULL;
	char err[256] = "";

	o->superslice_key = "ex/ss";
	o->domain_key = "ex/cube";
	ck_assert_msg(pk_sim_run(o, nodes, t, &rep, NULL, err, sizeof(err)) == 0, "%s", err);
	json_decref(nodes);
	return rep;
}

static json_t *run(const char *text)
{
	struct pk_sim_opts o = {.max_retries = -1};
	struct pk_sim_trace *t = csv(text);
	json_t *rep = run_opts(&o, t);

	pk_sim_trace_free(t);
	return rep;
}

static double num(const json_t *rep, const char *path)
{
	json_t *v = pk_get(rep, path);

	ck_assert_msg(v != NULL, "no %s", path);
	return json_number_value(v);
}

/* The queueing delay row of a gang bucket. */
static const json_t *delay(const json_t *rep, const char *gang)
{
	size_t i;
	json_t *d;

	json_array_foreach(json_object_get(rep, "queueing_delay"), i,
			   d) if (strcmp(json_string_value(json_object_get(d, "gang")), gang) ==
				  0) return d;
	ck_abort_msg("no delay row for gang %s", gang);
	return NULL;
}

START_TEST(csv_columns_by_name_unknown_ignored)
{
	struct pk_sim_trace *t =
	    csv("# a comment\r\nUser, Arrival ,duration,pods,cpu,memory,accelerators,model,"
		"priority\r\n"
		"\"a, b\",1.5,2h,3,500m,1Gi,4,tpu-v5p,-7\r\n\n,30m,1d,,,,,,\n");

	ck_assert_uint_eq(pk_sim_trace_jobs(t), 2);
	pk_sim_trace_free(t);
}
END_TEST

static void csv_rejects(const char *text, const char *want)
{
	struct pk_sim_trace *t = NULL;
	char err[256] = "";

	ck_assert_int_lt(pk_sim_trace_parse_csv(text, strlen(text), &t, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, want), "error \"%s\" lacks \"%s\"", err, want);
	ck_assert_ptr_null(t);
}

START_TEST(csv_errors_name_line_and_column)
{
	csv_rejects("arrival,duration,cpu\n0,10,1\n5,10,lots\n", "line 3: column cpu");
	csv_rejects("arrival,pods\n0,1\n", "line 1: header: the column duration is required");
	csv_rejects("arrival,duration,pods\n0,10,0\n", "line 2: column pods");
	csv_rejects("arrival,duration\n-1,10\n", "line 2: column arrival");
	csv_rejects("arrival,duration\n0,\n", "line 2: column duration: required value");
	csv_rejects("arrival,duration,model\n0,1,\"bad value!\"\n", "column model");
	csv_rejects("arrival,duration\n\"0,1\n", "unterminated quote");
	csv_rejects("", "header: missing");
}
END_TEST

/* A CSV job's pods are p<k>, k zero-padded to the width of its largest index. */
START_TEST(csv_pod_names_padded_to_the_largest_index)
{
	struct pk_sim_opts o = {.max_retries = -1};
	struct pk_sim_trace *t =
	    csv("arrival,duration,pods,accelerators,cpu\n0,100,1,0,1\n0,100,11,0,1\n");
	char *buf = NULL;
	size_t len = 0;

	o.bindings = open_memstream(&buf, &len);
	json_decref(run_opts(&o, t));
	fclose(o.bindings);
	ck_assert_msg(strstr(buf, "t0/p0 ") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "t1/p00 ") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "t1/p07 ") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "t1/p10 ") != NULL, "%s", buf);
	ck_assert_ptr_null(strstr(buf, "t1/p0 "));
	ck_assert_ptr_null(strstr(buf, "t1/p011"));
	free(buf);
	pk_sim_trace_free(t);
}
END_TEST

START_TEST(finished_pods_free_hosts_for_the_waiting_gang)
{
	/* each gang takes the whole cluster: the second waits for the first to end */
	json_t *rep = run("arrival,duration,pods,accelerators,cpu\n0,100,4,4,1\n10,50,4,4,1\n");

	ck_assert_int_eq(num(rep, "jobs.completed"), 2);
	ck_assert_int_eq(num(rep, "end"), 150);
	ck_assert_int_eq(num(delay(rep, "2-8"), "max"), 90);
	ck_assert_int_eq(num(delay(rep, "2-8"), "p50"), 0);
	ck_assert_int_eq(num(rep, "allocation.peak"), 1);
	ck_assert_int_eq(num(rep, "events.bindings"), 8);
	json_decref(rep);
}
END_TEST

START_TEST(node_loss_fails_pods_and_replaces_the_gang)
{
	struct pk_sim_node_loss loss[] = {{.at_ms = 50000, .node = "n1"}};
	struct pk_sim_opts o = {.max_retries = -1, .node_loss = loss, .nnode_loss = 1};
	struct pk_sim_trace *t = csv("arrival,duration,pods,accelerators\n0,100,2,4\n");
	json_t *rep = run_opts(&o, t);

	/* the gang of two ran on two hosts; losing n1 fails it, it starts over on the rest */
	ck_assert_int_eq(num(rep, "failures.node_loss"), 1);
	ck_assert_int_eq(num(rep, "failures.retries"), 1);
	ck_assert_int_eq(num(rep, "events.bindings"), 4);
	ck_assert_int_eq(num(rep, "jobs.completed"), 1);
	ck_assert_int_eq(num(rep, "end"), 150);
	ck_assert_int_eq(num(rep, "accelerators"), 12); /* what is left */
	json_decref(rep);
	pk_sim_trace_free(t);
}
END_TEST

/* One gang of two in one cube, a node of it lost at 50 s: the report's repairs. */
static json_t *repair_run(const char *tpus, const char *node)
{
	struct pk_sim_node_loss loss[] = {{.at_ms = 50000, .node = node}};
	struct pk_sim_opts o = {.max_retries = -1, .node_loss = loss, .nnode_loss = 1};
	char text[128];
	struct pk_sim_trace *t;
	json_t *rep;

	snprintf(text, sizeof(text),
		 "arrival,duration,pods,accelerators,topology\n0,100,2,%s,ex/cube\n", tpus);
	t = csv(text);
	rep = run_opts(&o, t);
	pk_sim_trace_free(t);
	return rep;
}

START_TEST(node_loss_repairs_in_the_same_cube)
{
	/* two 1-TPU pods in cube c0 (n0 and n1): n0 lost, n1 still holds the
	 * gang, so it is placed again in c0 */
	json_t *rep = repair_run("1", "n0");

	ck_assert_int_eq(num(rep, "failures.node_loss"), 1);
	ck_assert_int_eq(num(rep, "repairs.in_place"), 1);
	ck_assert_int_eq(num(rep, "repairs.whole"), 0);
	ck_assert_int_eq(num(rep, "jobs.completed"), 1);
	json_decref(rep);
	/* two 4-TPU pods fill c0: n1 lost, c0 has no room and c1 takes the gang whole */
	rep = repair_run("4", "n1");
	ck_assert_int_eq(num(rep, "failures.node_loss"), 1);
	ck_assert_int_eq(num(rep, "repairs.in_place"), 0);
	ck_assert_int_eq(num(rep, "repairs.whole"), 1);
	ck_assert_int_eq(num(rep, "jobs.completed"), 1);
	json_decref(rep);
}
END_TEST

START_TEST(higher_priority_gang_preempts)
{
	json_t *rep = run("arrival,duration,pods,accelerators,priority\n0,100,4,4,0\n"
			  "10,20,2,4,1000\n");

	ck_assert_int_ge(num(rep, "preemptions.jobs"), 1);
	ck_assert_int_eq(num(rep, "jobs.completed"), 2);
	ck_assert_int_eq(num(delay(rep, "2-8"), "p50"), 0);
	json_decref(rep);
}
END_TEST

static int q_open(struct pk_store *st, bool quota_first, void **ret)
{
	struct pk_queues_pass_opts o = {.quota_only = quota_first};

	return pk_queues_new(st, &o, (struct pk_queues **)ret);
}

static int q_pass(void *ctl)
{
	return pk_queues_run(ctl);
}

static void q_close(void *ctl)
{
	pk_queues_free(ctl);
}

static const struct pk_sim_queue_ops queue_ops = {.open = q_open, .pass = q_pass, .close = q_close};

/* Queue objects: cluster queues NAME:NOMINAL:COHORT:RECLAIM (tpu only), local queues NS:CQ. */
static json_t *queue_objects(const char *const *cqs, size_t ncq, const char *const *lqs, size_t nlq)
{
	json_t *o = json_array();

	json_array_append_new(o,
			      json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2",
					"kind", "ResourceFlavor", "metadata", "name", "f"));
	for (size_t i = 0; i < ncq; i++) {
		char name[16], cohort[16], reclaim[16];
		int nominal = 0;

		ck_assert_int_eq(
		    sscanf(cqs[i], "%15[^:]:%d:%15[^:]:%15s", name, &nominal, cohort, reclaim), 4);
		json_array_append_new(
		    o, json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:{},s:{s:s},s:[{s:[s],s:[{s:s,s:[{s:s,s:"
				 "i}]}]}]}}",
				 "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "ClusterQueue",
				 "metadata", "name", name, "spec", "cohortName", cohort,
				 "namespaceSelector", "preemption", "reclaimWithinCohort", reclaim,
				 "resourceGroups", "coveredResources", "google.com/tpu", "flavors",
				 "name", "f", "resources", "name", "google.com/tpu", "nominalQuota",
				 nominal));
	}
	for (size_t i = 0; i < nlq; i++) {
		char ns[16], cq[16];

		ck_assert_int_eq(sscanf(lqs[i], "%15[^:]:%15s", ns, cq), 2);
		json_array_append_new(o, json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "apiVersion",
						   "kueue.x-k8s.io/v1beta2", "kind", "LocalQueue",
						   "metadata", "name", "q", "namespace", ns, "spec",
						   "clusterQueue", cq));
	}
	return o;
}

static const json_t *local_queue(const json_t *rep, const char *name)
{
	size_t i;
	json_t *l;

	json_array_foreach(pk_get(rep, "queues.local_queues"), i,
			   l) if (strcmp(pk_get_string(l, "name"), name) == 0) return l;
	ck_abort_msg("no local queue %s", name);
	return NULL;
}

START_TEST(queue_reclaim_preempts_the_borrower)
{
	/* a borrows all 16 chips; b reclaims its 8 at 10; a waits, then runs again at 30 */
	static const char *const cqs[] = {"a:8:c:Never", "b:8:c:Any"};
	static const char *const lqs[] = {"a:a", "b:b"};
	json_t *q = queue_objects(cqs, 2, lqs, 2);
	struct pk_sim_opts o = {.max_retries = -1, .queues = q, .queue_ops = &queue_ops};
	struct pk_sim_trace *t = csv("arrival,duration,pods,accelerators,tenant\n"
				     "0,100,4,4,a\n10,20,2,4,b\n");
	json_t *rep = run_opts(&o, t);

	ck_assert_int_eq(num(rep, "queues.preempted"), 1);
	ck_assert_int_eq(num(rep, "queues.admitted"), 3);
	ck_assert_int_eq(num(rep, "queues.admitted_unplaceable"), 0);
	ck_assert_int_eq(num(rep, "jobs.completed"), 2);
	ck_assert_int_eq(num(rep, "end"), 130);
	ck_assert_int_eq(num(local_queue(rep, "b/q"), "wait_max"), 0);
	ck_assert_int_eq(num(rep, "queues.cluster_queues[0].usage[0].peak"), 16);
	json_decref(rep);
	pk_sim_trace_free(t);
	json_decref(q);
}
END_TEST

START_TEST(queue_serves_its_local_queues_in_arrival_order)
{
	/* one ClusterQueue of 8 chips for tenants z and a: z's job of 5 s goes before a's of 6 s */
	static const char *const cqs[] = {"cq:8:c:Never"};
	static const char *const lqs[] = {"a:cq", "z:cq"};
	json_t *q = queue_objects(cqs, 1, lqs, 2);
	struct pk_sim_opts o = {.max_retries = -1, .queues = q, .queue_ops = &queue_ops};
	struct pk_sim_trace *t = csv("arrival,duration,pods,accelerators,tenant\n"
				     "0,100,2,4,z\n5,100,2,4,z\n6,100,2,4,a\n");
	json_t *rep = run_opts(&o, t);

	ck_assert_int_eq(num(local_queue(rep, "z/q"), "wait_max"), 95);
	ck_assert_int_eq(num(local_queue(rep, "a/q"), "wait_max"), 194);
	ck_assert_int_eq(num(rep, "queues.tenants[0].peak_dominant_share"), 0.5);
	json_decref(rep);
	pk_sim_trace_free(t);
	json_decref(q);
}
END_TEST

START_TEST(gang_larger_than_the_cluster_is_never_placed)
{
	json_t *rep = run("arrival,duration,pods,accelerators\n0,10,5,4\n0,10,1,4\n");

	ck_assert_int_eq(num(rep, "jobs.never_placed"), 1);
	ck_assert_int_eq(num(rep, "never_placed_jobs[0].job"), 0);
	ck_assert_int_eq(num(rep, "never_placed_jobs[0].pods"), 5);
	ck_assert_int_eq(num(rep, "jobs.completed"), 1);
	json_decref(rep);
}
END_TEST

START_TEST(stranded_accelerators_on_cpu_full_hosts)
{
	/* 2 TPUs and all 8 CPUs of one host: its other 2 TPUs are stranded */
	json_t *rep = run("arrival,duration,pods,accelerators,cpu\n0,100,1,2,8\n");

	ck_assert_int_eq(num(rep, "stranded.peak_accelerators"), 2);
	ck_assert_int_eq(num(rep, "series.stranded[0]"), 2);
	json_decref(rep);
}
END_TEST

START_TEST(largest_free_box_follows_placements)
{
	json_t *rep = run("arrival,duration,pods,accelerators\n0,100,1,4\n");

	/* one pod takes a host of cube c0: the largest free cube is c1 (2 hosts) */
	ck_assert_int_eq(num(rep, "fragmentation[0].min_largest_free_box"), 2);
	ck_assert_str_eq(json_string_value(pk_get(rep, "fragmentation[0].superslice")), "s0");
	json_decref(rep);
}
END_TEST

START_TEST(object_trace_jobs_and_jobsets)
{
	const char *yaml =
	    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  annotations:\n"
	    "    sim.podkernel.dev/arrival: \"5\"\n    sim.podkernel.dev/duration: 1m\n"
	    "spec:\n  parallelism: 2\n  scheduling:\n    schedulingPolicy: {gang: {}}\n"
	    "  template:\n    spec:\n      containers: [{name: c, image: x, resources: "
	    "{requests: {google.com/tpu: \"4\"}}}]\n"
	    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\n  annotations:\n"
	    "    sim.podkernel.dev/duration: \"30\"\nspec:\n  containers: [{name: c, image: "
	    "x}]\n";
	json_t *objs = NULL, *rep;
	char err[256] = "";
	struct pk_errors errs = {0};
	struct pk_sim_trace *t = NULL;
	struct pk_sim_opts o = {.max_retries = -1};

	ck_assert_msg(pk_read_buffer("t.yaml", yaml, strlen(yaml), &objs, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(pk_sim_trace_from_objects(objs, &t, &errs), 0);
	ck_assert_uint_eq(pk_sim_trace_jobs(t), 2);
	rep = run_opts(&o, t);
	ck_assert_int_eq(num(rep, "jobs.completed"), 2);
	ck_assert_int_eq(num(rep, "end"), 65);
	ck_assert_int_eq(num(rep, "events.bindings"), 3);
	json_decref(rep);
	pk_sim_trace_free(t);
	json_decref(objs);
	pk_errors_clear(&errs);
}
END_TEST

static struct pk_sim_trace *jobset_trace(int max_restarts)
{
	char yaml[1024];
	json_t *objs = NULL;
	char err[256] = "";
	struct pk_errors errs = {0};
	struct pk_sim_trace *t = NULL;

	snprintf(yaml, sizeof(yaml),
		 "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: js\n"
		 "  annotations: {sim.podkernel.dev/duration: \"100\"}\nspec:\n"
		 "  failurePolicy: {maxRestarts: %d}\n"
		 "  scheduling: {schedulingPolicy: {gang: {}}}\n  replicatedJobs:\n"
		 "  - name: w\n    replicas: 1\n    template:\n      spec:\n"
		 "        parallelism: 2\n        template:\n          spec:\n"
		 "            containers: [{name: c, image: x, resources: {requests: "
		 "{google.com/tpu: \"4\"}}}]\n",
		 max_restarts);
	ck_assert_msg(pk_read_buffer("js.yaml", yaml, strlen(yaml), &objs, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(pk_sim_trace_from_objects(objs, &t, &errs), 0);
	json_decref(objs);
	pk_errors_clear(&errs);
	return t;
}

START_TEST(jobset_restarts_as_a_gang_up_to_max_restarts)
{
	struct pk_sim_trace *t = jobset_trace(1);
	struct pk_sim_opts o = {.max_retries = 5};
	char *buf = NULL, node[64] = "";
	size_t len = 0;
	json_t *rep;

	/* where the gang's first pod lands (the scheduler is deterministic) */
	o.bindings = open_memstream(&buf, &len);
	json_decref(run_opts(&o, t));
	fclose(o.bindings);
	o.bindings = NULL;
	ck_assert_int_eq(sscanf(buf, "%*s %63s", node), 1);
	free(buf);
	/* losing that node at 50 s fails the attempt; the JobSet restarts it whole */
	struct pk_sim_node_loss loss[] = {{.at_ms = 50000, .node = node}};

	o.node_loss = loss;
	o.nnode_loss = 1;
	rep = run_opts(&o, t);
	ck_assert_int_eq(num(rep, "failures.node_loss"), 1);
	ck_assert_int_eq(num(rep, "failures.retries"), 1);
	ck_assert_int_eq(num(rep, "events.bindings"), 4);
	ck_assert_int_eq(num(rep, "jobs.completed"), 1);
	ck_assert_int_eq(num(rep, "end"), 150);
	json_decref(rep);
	pk_sim_trace_free(t);
	/* with maxRestarts 0 (the run allows 5: the JobSet's own policy wins) it fails */
	t = jobset_trace(0);
	rep = run_opts(&o, t);
	ck_assert_int_eq(num(rep, "jobs.failed"), 1);
	ck_assert_int_eq(num(rep, "failures.retries"), 0);
	json_decref(rep);
	pk_sim_trace_free(t);
}
END_TEST

START_TEST(object_trace_bad_timing_names_the_path)
{
	json_t *objs =
	    json_pack("[{s:s,s:s,s:{s:s,s:{s:s}},s:{s:[{s:s,s:s}]}}]", "apiVersion", "v1", "kind",
		      "Pod", "metadata", "name", "p", "annotations", PK_SIM_ANN_ARRIVAL, "soon",
		      "spec", "containers", "name", "c", "image", "x");
	struct pk_errors errs = {0};
	struct pk_sim_trace *t = NULL;

	ck_assert_int_eq(pk_sim_trace_from_objects(objs, &t, &errs), -EINVAL);
	ck_assert_uint_ge(errs.n, 1);
	ck_assert_msg(strstr(errs.msg[0], "items[0].metadata.annotations[" PK_SIM_ANN_ARRIVAL "]"),
		      "%s", errs.msg[0]);
	pk_errors_clear(&errs);
	json_decref(objs);
}
END_TEST

static char *report_text(uint64_t seed)
{
	struct pk_sim_opts o = {.max_retries = -1, .seed = seed, .failure_rate = 0.4};
	struct pk_sim_trace *t = csv("arrival,duration,pods,accelerators\n0,100,2,4\n5,50,1,4\n"
				     "6,70,2,4\n20,10,1,2\n40,300,4,4\n41,5,1,1\n");
	json_t *rep = run_opts(&o, t), *runs = json_pack("[o]", rep);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(pk_sim_report_json(f, runs, NULL), 0);
	fclose(f);
	json_decref(runs);
	pk_sim_trace_free(t);
	return buf;
}

START_TEST(seed_fixes_the_report_byte_for_byte)
{
	char *a = report_text(42), *b = report_text(42), *c = report_text(7);

	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c); /* the failures drawn differ */
	free(a);
	free(b);
	free(c);
}
END_TEST

/*
 * The comparison of --levels: jobs arrive in arrival order (not file order),
 * nothing departs, a gang is placed whole or not at all, and a level the
 * trace never reaches gets the allocation after the last job.
 */
START_TEST(levels_replay_arrivals_with_nothing_departing)
{
	struct pk_sim_trace *t = csv("arrival,duration,pods,accelerators,cpu,memory\n"
				     "5,100,2,2,1,1Gi\n"   /* 4 chips, packed on one host */
				     "0,100,2,4,1,1Gi\n"   /* first: two whole hosts */
				     "9,100,3,4,1,1Gi\n"); /* three hosts: one is left */
	struct pk_sim_opts o = {.strategy = "fit"};
	const double levels[] = {0.5, 0.75, 1.5, 2.0};
	double alloc[4] = {0};
	json_t *nodes = cluster();
	char err[256] = "";

	ck_assert_msg(pk_sim_levels(&o, nodes, t, levels, 4, alloc, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_double_eq_tol(alloc[0], 0.5, 1e-9);  /* after the first arrival: 8 of 16 */
	ck_assert_double_eq_tol(alloc[1], 0.75, 1e-9); /* the 2-chip gang placed too */
	ck_assert_double_eq_tol(alloc[2], 0.75, 1e-9); /* the 3-host gang: not one pod of it */
	ck_assert_double_eq_tol(alloc[3], 0.75, 1e-9); /* never reached: after the last job */
	o.strategy = "no-such";
	ck_assert_int_eq(pk_sim_levels(&o, nodes, t, levels, 4, alloc, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no-such"));
	json_decref(nodes);
	pk_sim_trace_free(t);
}
END_TEST

static int first(void *arg, const struct pk_replay_node *cand, size_t n, const int64_t *req)
{
	(void)arg, (void)cand, (void)n, (void)req;
	return 0;
}

/* A comparison policy places single pods: a gang in its sequence is refused. */
START_TEST(levels_policy_refuses_gangs)
{
	struct pk_replay_opts o = {.resource = "google.com/tpu", .pick = first};
	json_t *nodes = cluster(),
	       *seq =
		   json_pack("[{s:s,s:s,s:{s:s,s:s},s:{s:{s:s,s:s},s:{s:{s:i}}}}]", "apiVersion",
			     "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name",
			     "g", "namespace", "t0", "spec", "workloadRef", "workloadName", "g",
			     "templateName", "g", "schedulingPolicy", "gang", "minCount", 2);
	const double levels[] = {1.0};
	double alloc[1];
	struct pk_errors errs = {0};

	ck_assert_int_eq(pk_replay_run(&o, nodes, seq, levels, 1, alloc, &errs), -EINVAL);
	ck_assert_int_eq((int)errs.n, 1);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "single pods"));
	pk_errors_clear(&errs);
	json_decref(nodes);
	json_decref(seq);
}
END_TEST

START_TEST(durations_read_as_days_and_hours)
{
	char b[64];

	pk_sim_duration(45, b, sizeof(b));
	ck_assert_str_eq(b, "45 s");
	pk_sim_duration(725, b, sizeof(b));
	ck_assert_str_eq(b, "12 min 5 s");
	pk_sim_duration(5 * 3600 + 12 * 60, b, sizeof(b));
	ck_assert_str_eq(b, "5 h 12 min");
	pk_sim_duration(2 * 86400 + 3 * 3600 + 59, b, sizeof(b));
	ck_assert_str_eq(b, "2 d 3 h");
	pk_sim_duration(-90, b, sizeof(b));
	ck_assert_str_eq(b, "-1 min 30 s");
}
END_TEST

START_TEST(html_is_self_contained)
{
	json_t *rep = run("arrival,duration,pods,accelerators\n0,100,2,4\n"),
	       *runs = json_pack("[o,O]", rep, rep);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_t *prov = json_pack("{s:s,s:s,s:i,s:[s,s]}", "version", "9.9", "trace", "t<1>.csv",
				 "seed", 7, "flags", "--board", "b.yaml");

	ck_assert_int_eq(pk_sim_report_html(f, runs, prov), 0);
	fclose(f);
	json_decref(prov);
	/* provenance, escaped; the runs overlaid with their difference; the delay CDF */
	ck_assert_ptr_nonnull(strstr(buf, "t&lt;1&gt;.csv"));
	ck_assert_ptr_nonnull(strstr(buf, "--board b.yaml"));
	ck_assert_ptr_nonnull(strstr(buf, "Runs overlaid"));
	ck_assert_ptr_nonnull(strstr(buf, "difference from the first run"));
	ck_assert_ptr_nonnull(strstr(buf, "Queueing delay distribution by gang size"));
	/* times as a person reads them: the 100 s run ends at 1 min 40 s */
	ck_assert_ptr_nonnull(strstr(buf, ">1 min 40 s</text>"));
	ck_assert_ptr_nonnull(strstr(buf, "<svg"));
	ck_assert_ptr_nonnull(strstr(buf, "<polyline"));
	ck_assert_ptr_null(strstr(buf, "<script"));
	ck_assert_ptr_null(strstr(buf, "src="));
	ck_assert_ptr_null(strstr(buf, "href="));
	ck_assert_ptr_null(strstr(buf, "url("));
	free(buf);
	json_decref(runs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("sim");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, csv_columns_by_name_unknown_ignored);
	tcase_add_test(tc, csv_errors_name_line_and_column);
	tcase_add_test(tc, csv_pod_names_padded_to_the_largest_index);
	tcase_add_test(tc, finished_pods_free_hosts_for_the_waiting_gang);
	tcase_add_test(tc, node_loss_fails_pods_and_replaces_the_gang);
	tcase_add_test(tc, node_loss_repairs_in_the_same_cube);
	tcase_add_test(tc, higher_priority_gang_preempts);
	tcase_add_test(tc, gang_larger_than_the_cluster_is_never_placed);
	tcase_add_test(tc, stranded_accelerators_on_cpu_full_hosts);
	tcase_add_test(tc, largest_free_box_follows_placements);
	tcase_add_test(tc, object_trace_jobs_and_jobsets);
	tcase_add_test(tc, object_trace_bad_timing_names_the_path);
	tcase_add_test(tc, jobset_restarts_as_a_gang_up_to_max_restarts);
	tcase_add_test(tc, seed_fixes_the_report_byte_for_byte);
	tcase_add_test(tc, html_is_self_contained);
	tcase_add_test(tc, durations_read_as_days_and_hours);
	tcase_add_test(tc, levels_replay_arrivals_with_nothing_departing);
	tcase_add_test(tc, levels_policy_refuses_gangs);
	tcase_add_test(tc, queue_reclaim_preempts_the_borrower);
	tcase_add_test(tc, queue_serves_its_local_queues_in_arrival_order);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queues_cache.c — the queue controller kept between passes
 * (pk_queues_new, kernel/controllers/queues_cache.c): a pass after one
 * unrelated change neither decodes nor tries again the pending workloads
 * (they wait for quota, nothing freed any); freeing quota tries them again
 * and admits as a fresh controller would; a change to a ClusterQueue's spec
 * tries them all; a lost change stream lists everything again, with the
 * same answers; a workload that waits for room gets no placement check
 * again until the cluster changes, and is admitted once a node makes room;
 * the workloads behind an admission are not written again; the placement
 * check after a job ended runs on the scheduler of the pass before.
 * Four nodes of 4 TPUs, ClusterQueues of 8 TPUs each.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"

#define QUEUES 2
#define PENDING 10 /* per queue, beyond the 2 admitted */

static const struct pk_store_open_opts store_opts = {.admission = wb_admission,
						     .nadmission = WB_ADMISSION_N};
static char dir[256];
static struct pk_store *st;
static struct pk_queues *q;

static void create_json(const char *text)
{
	struct pk_errors errs = {0};
	json_t *o = json_loads(text, 0, NULL);
	int r;

	ck_assert_msg(o != NULL, "not JSON: %s", text);
	r = pk_store_create(st, o, &errs, NULL);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "create: %s\n", errs.msg[i]);
	pk_errors_clear(&errs);
	json_decref(o);
	ck_assert_int_eq(r, 0);
}

static void job(const char *name, const char *queue)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
		 "\"%s\", \"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
		 "\"%s\"}}, \"spec\": {\"parallelism\": 1, \"completions\": 1, \"suspend\": true, "
		 "\"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"x\", "
		 "\"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}}}",
		 name, queue);
	create_json(buf);
}

static void cluster_queue(int i, int tpus)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\", "
		 "\"metadata\": {\"name\": \"cq%d\"}, \"spec\": {\"namespaceSelector\": {}, "
		 "\"resourceGroups\": [{\"coveredResources\": [\"google.com/tpu\"], "
		 "\"flavors\": [{\"name\": \"default-flavor\", \"resources\": [{\"name\": "
		 "\"google.com/tpu\", \"nominalQuota\": %d}]}]}]}}",
		 i, tpus);
	create_json(buf);
}

static void setup(void)
{
	char err[256], buf[512];

	snprintf(dir, sizeof(dir), "/tmp/pk-queues-cache-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, &store_opts, &st, err, sizeof(err)), 0);
	for (int i = 0; i < 4; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
			 "\"n%d\"}, \"status\": {\"allocatable\": {\"cpu\": \"8\", "
			 "\"google.com/tpu\": \"4\", \"pods\": \"110\"}}}",
			 i);
		create_json(buf);
	}
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
		    "\"metadata\": {\"name\": \"default-flavor\"}}");
	for (int i = 0; i < QUEUES; i++) {
		cluster_queue(i, 8);
		snprintf(buf, sizeof(buf),
			 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
			 "\"metadata\": {\"name\": \"lq%d\", \"namespace\": \"default\"}, "
			 "\"spec\": {\"clusterQueue\": \"cq%d\"}}",
			 i, i);
		create_json(buf);
		for (int k = 0; k < 2 + PENDING; k++) {
			char name[32], queue[16];

			snprintf(name, sizeof(name), "j%d-%02d", i, k);
			snprintf(queue, sizeof(queue), "lq%d", i);
			job(name, queue);
		}
	}
	ck_assert_int_eq(pk_queues_new(st, NULL, &q), 0);
}

static void teardown(void)
{
	char cmd[300];

	pk_queues_free(q);
	q = NULL;
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static bool is_admitted(const char *name)
{
	json_t *o = NULL;
	bool yes;

	if (pk_store_get(st, &pk_type_job, "default", name, &o) < 0)
		return false; /* deleted */
	yes = !json_is_true(pk_get(o, "spec.suspend")) &&
	      json_object_get(pk_get(o, "metadata.annotations"), "queue.podkernel.dev/admission");
	json_decref(o);
	return yes;
}

static const char *pending_reason(const char *name, char *buf, size_t n)
{
	json_t *o = NULL;

	ck_assert_int_eq(pk_store_get(st, &pk_type_job, "default", name, &o), 0);
	snprintf(buf, n, "%s",
		 json_string_value(json_object_get(pk_get(o, "metadata.annotations"),
						   "queue.podkernel.dev/pending-reason"))
		     ?: "");
	json_decref(o);
	return buf;
}

static int admitted_count(void)
{
	int n = 0;

	for (int i = 0; i < QUEUES; i++)
		for (int k = 0; k < 2 + PENDING; k++) {
			char name[32];

			snprintf(name, sizeof(name), "j%d-%02d", i, k);
			n += is_admitted(name);
		}
	return n;
}

static void label_node(void)
{
	json_t *p = json_loads("{\"metadata\": {\"labels\": {\"unrelated\": \"yes\"}}}", 0, NULL);

	ck_assert_int_eq(pk_store_patch(st, &pk_type_node, NULL, "n0", PK_PATCH_MERGE, p,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(p);
}

/* The stats after one more pass, and the difference from before it. */
static struct pk_queues_stats pass(struct pk_queues_stats *ret_delta)
{
	struct pk_queues_stats a, b;

	pk_queues_get_stats(q, &a);
	ck_assert_int_eq(pk_queues_run(q), 0);
	pk_queues_get_stats(q, &b);
	*ret_delta = (struct pk_queues_stats){.passes = b.passes - a.passes,
					      .lists = b.lists - a.lists,
					      .decodes = b.decodes - a.decodes,
					      .tries = b.tries - a.tries,
					      .placements = b.placements - a.placements,
					      .parked = b.parked - a.parked,
					      .skipped = b.skipped - a.skipped,
					      .carried = b.carried - a.carried};
	return b;
}

/* Twice: the first admits and notes, the second sees its own writes (nothing to do). */
static void settle(void)
{
	struct pk_queues_stats d;

	pass(&d);
	pass(&d);
}

START_TEST(queue_pass_after_unrelated_change_tries_nothing_again)
{
	struct pk_queues_stats d;

	pass(&d);
	ck_assert_uint_eq(d.lists, 1);
	ck_assert_uint_eq(d.decodes, QUEUES * (2 + PENDING));
	ck_assert_uint_eq(d.tries, QUEUES * (2 + PENDING));
	ck_assert_int_eq(admitted_count(), QUEUES * 2);
	pass(&d); /* its own admissions and notes come back: known as its own, no change */
	ck_assert_uint_eq(d.tries, 0);
	ck_assert_uint_eq(d.parked, 0);
	ck_assert_uint_eq(d.skipped, QUEUES * (2 + PENDING));
	create_json("{\"apiVersion\": \"coordination.k8s.io/v1\", \"kind\": \"Lease\", "
		    "\"metadata\": {\"name\": \"unrelated\", \"namespace\": \"default\"}}");
	label_node();	    /* the cluster changed, not the quota they wait for */
	job("late", "lq1"); /* a new pending workload: only it is tried */
	pass(&d);
	ck_assert_uint_eq(d.lists, 0);
	/* decoded: it, and cq1's two admitted by the first pass, as admitted (their
	 * ClusterQueue not visited since) */
	ck_assert_uint_eq(d.decodes, 1 + 2);
	ck_assert_uint_eq(d.tries, 1);
	ck_assert_uint_eq(d.parked, PENDING); /* lq1's ClusterQueue's: visited for the new one */
	ck_assert_uint_eq(d.skipped, (QUEUES - 1) * (2 + PENDING)); /* the others: not visited */
	ck_assert_int_eq(admitted_count(), QUEUES * 2);
	pass(&d); /* nothing changed at all */
	ck_assert_uint_eq(d.decodes, 0);
	ck_assert_uint_eq(d.tries, 0);
}
END_TEST

START_TEST(queue_freed_quota_tries_that_queue_again)
{
	struct pk_queues_stats d;
	char why[512];

	settle();
	ck_assert(strstr(pending_reason("j0-05", why, sizeof(why)), "insufficient unused quota"));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "j0-00", NULL, NULL, NULL), 0);
	pass(&d);
	ck_assert_uint_eq(d.decodes, 1);     /* j0-01 as admitted: cq0 not visited since */
	ck_assert_uint_eq(d.tries, PENDING); /* cq0's, not cq1's */
	ck_assert_uint_eq(d.parked, 0);
	ck_assert_uint_eq(d.skipped, 2 + PENDING); /* cq1's workloads are not visited at all */
	ck_assert(is_admitted("j0-02"));
	ck_assert(!is_admitted("j0-03"));
	ck_assert_uint_eq(d.placements, 1);
	ck_assert_uint_eq(d.carried, 1); /* on the scheduler of the pass before, fed the change */
	ck_assert_int_eq(admitted_count(), QUEUES * 2);
	/* its own admission of j0-02 comes back: cq0's pending, tried after it, stay parked */
	pass(&d);
	ck_assert_uint_eq(d.decodes, 0);
	ck_assert_uint_eq(d.tries, 0);
	ck_assert_uint_eq(d.parked, 0);
	ck_assert_uint_eq(d.skipped, (1 + PENDING) + (2 + PENDING)); /* nothing visited */
	ck_assert_int_eq(admitted_count(), QUEUES * 2);
	/* a fresh controller, listing everything, finds nothing more to admit */
	ck_assert_int_eq(pk_queues_pass(st), 0);
	ck_assert_int_eq(admitted_count(), QUEUES * 2);
}
END_TEST

/* The position of Job name, ranked from the queue orders of the Jobs (0: none). */
static json_int_t position(const char *name)
{
	json_t *items = NULL, *pos;
	char key[64];
	json_int_t n;

	ck_assert_int_eq(pk_store_list(st, &pk_type_job, NULL, NULL, &items, NULL, NULL), 0);
	pos = wb_queue_positions(items);
	ck_assert_ptr_nonnull(pos);
	snprintf(key, sizeof(key), "Job/default/%s", name);
	n = json_integer_value(json_object_get(pos, key));
	json_decref(pos);
	json_decref(items);
	return n;
}

static const char *rv_of(const char *name, char *buf, size_t n)
{
	json_t *o = NULL;

	ck_assert_int_eq(pk_store_get(st, &pk_type_job, "default", name, &o), 0);
	snprintf(buf, n, "%s", pk_get_string(o, "metadata.resourceVersion") ?: "");
	json_decref(o);
	return buf;
}

/*
 * The workloads behind an admission are not written again: their queue
 * order holds, and their position, ranked from it, moves up.  One whose
 * reason was taken away gets it back.
 */
START_TEST(queue_behind_an_admission_is_not_written_again)
{
	struct pk_queues_stats d;
	char rv[64], rv2[64], why[512];
	json_t *p;

	settle();
	ck_assert_int_eq(position("j0-02"), 1);
	ck_assert_int_eq(position("j0-05"), 4);
	ck_assert_int_eq(position("j0-00"), 0); /* admitted */
	rv_of("j0-05", rv, sizeof(rv));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "j0-00", NULL, NULL, NULL), 0);
	pass(&d);
	ck_assert(is_admitted("j0-02"));
	ck_assert_str_eq(rv_of("j0-05", rv2, sizeof(rv2)), rv);
	ck_assert_int_eq(position("j0-05"), 3);
	p = json_loads("{\"metadata\": {\"annotations\": {\"queue.podkernel.dev/pending-reason\": "
		       "null}}}",
		       0, NULL);
	ck_assert_int_eq(pk_store_patch(st, &pk_type_job, "default", "j0-05", PK_PATCH_MERGE, p,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(p);
	ck_assert_str_eq(pending_reason("j0-05", why, sizeof(why)), "");
	pass(&d);
	ck_assert(strstr(pending_reason("j0-05", why, sizeof(why)), "insufficient unused quota"));
	ck_assert_int_eq(position("j0-05"), 3);
}
END_TEST

START_TEST(queue_spec_change_tries_everything_again)
{
	struct pk_queues_stats d;

	settle();
	json_t *p = json_loads("{\"spec\": {\"resourceGroups\": [{\"coveredResources\": "
			       "[\"google.com/tpu\"], \"flavors\": [{\"name\": \"default-flavor\", "
			       "\"resources\": [{\"name\": \"google.com/tpu\", \"nominalQuota\": "
			       "12}]}]}]}}",
			       0, NULL);
	ck_assert_int_eq(pk_store_patch(st, &pk_type_cluster_queue, NULL, "cq1", PK_PATCH_MERGE, p,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(p);
	pass(&d);
	ck_assert_uint_eq(d.tries, QUEUES * PENDING);
	ck_assert(is_admitted("j1-02"));
	ck_assert(!is_admitted("j1-03"));
}
END_TEST

START_TEST(queue_lost_stream_lists_again)
{
	struct pk_queues_stats d, s;
	char buf[256];

	settle();
	/* more changes than the store's change stream holds */
	for (int i = 0; i < PK_STORE_RING_SIZE + 10; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"apiVersion\": \"coordination.k8s.io/v1\", \"kind\": \"Lease\", "
			 "\"metadata\": {\"name\": \"l%d\", \"namespace\": \"default\"}}",
			 i);
		create_json(buf);
	}
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "j1-00", NULL, NULL, NULL), 0);
	s = pass(&d);
	ck_assert_uint_eq(d.lists, 1);
	ck_assert_uint_eq(s.lists, 2);
	ck_assert_uint_eq(d.decodes, QUEUES * (2 + PENDING) - 1);
	ck_assert(is_admitted("j1-02"));
	ck_assert(!is_admitted("j1-03"));
	ck_assert_int_eq(admitted_count(), QUEUES * 2);
}
END_TEST

static const char *cq_rv(const char *cq, char *buf, size_t n)
{
	json_t *o = NULL;

	ck_assert_int_eq(pk_store_get(st, &pk_type_cluster_queue, NULL, cq, &o), 0);
	snprintf(buf, n, "%s", pk_get_string(o, "metadata.resourceVersion") ?: "");
	json_decref(o);
	return buf;
}

/* A ClusterQueue's status counts: pendingWorkloads (admitted: admittedWorkloads). */
static json_int_t cq_count(const char *cq, bool admitted)
{
	json_t *o = NULL;
	json_int_t n;

	ck_assert_int_eq(pk_store_get(st, &pk_type_cluster_queue, NULL, cq, &o), 0);
	n = json_integer_value(
	    pk_get(o, admitted ? "status.admittedWorkloads" : "status.pendingWorkloads"));
	json_decref(o);
	return n;
}

/*
 * A ClusterQueue whose inputs did not change is not visited: its workloads
 * are not read, its status is not written (and still says what it holds);
 * a change to one of its pending workloads beyond its status visits it.
 */
START_TEST(queue_unchanged_is_not_visited)
{
	struct pk_queues_stats d;
	char rv[64], rv2[64];
	json_t *p;

	settle();
	cq_rv("cq1", rv, sizeof(rv));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "j0-00", NULL, NULL, NULL), 0);
	pass(&d);
	ck_assert_uint_eq(d.skipped, 2 + PENDING);
	ck_assert_str_eq(cq_rv("cq1", rv2, sizeof(rv2)), rv);
	ck_assert_int_eq(cq_count("cq1", false), PENDING);
	ck_assert_int_eq(cq_count("cq1", true), 2);
	ck_assert_int_eq(cq_count("cq0", false), PENDING - 1);
	ck_assert_int_eq(cq_count("cq0", true), 2);
	pass(&d); /* its own admission came back: cq0 visited, then settled */
	pass(&d);
	ck_assert_uint_eq(d.skipped, QUEUES * (2 + PENDING) - 1);
	ck_assert_uint_eq(d.tries, 0);
	p = json_loads("{\"status\": {\"active\": 0}}", 0, NULL);
	ck_assert_int_eq(pk_store_patch(st, &pk_type_job, "default", "j1-05", PK_PATCH_MERGE, p,
					PK_SUB_STATUS, NULL, NULL),
			 0);
	json_decref(p);
	pass(&d); /* its status only: nothing visited */
	ck_assert_uint_eq(d.skipped, QUEUES * (2 + PENDING) - 1);
	p = json_loads("{\"spec\": {\"parallelism\": 2, \"completions\": 2}}", 0, NULL);
	ck_assert_int_eq(pk_store_patch(st, &pk_type_job, "default", "j1-05", PK_PATCH_MERGE, p,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(p);
	pass(&d); /* its spec: cq1 visited, that workload tried (the others parked still) */
	ck_assert_uint_eq(d.skipped, 2 + PENDING - 1);
	ck_assert_uint_eq(d.tries, 1);
	ck_assert_uint_eq(d.parked, PENDING - 1);
	ck_assert_int_eq(cq_count("cq1", false), PENDING);
	/* a fresh controller, visiting everything, decides the same */
	ck_assert_int_eq(pk_queues_pass(st), 0);
	ck_assert_int_eq(admitted_count(), QUEUES * 2);
	ck_assert_int_eq(cq_count("cq1", false), PENDING);
	ck_assert_int_eq(cq_count("cq0", false), PENDING - 1);
}
END_TEST

/* A random Job of this store ("" when none), of those named r<k>. */
static const char *some_job(unsigned *seed, int made, char *buf, size_t n)
{
	json_t *o = NULL;

	for (int tries = 0; tries < 8 && made > 0; tries++) {
		snprintf(buf, n, "r%d", rand_r(seed) % made);
		if (pk_store_get(st, &pk_type_job, "default", buf, &o) == 0) {
			json_decref(o);
			return buf;
		}
	}
	return NULL;
}

/* A ClusterQueue's nominal quota set to tpus (the kept quota tree then built again). */
static void set_quota(int cq, int tpus)
{
	char buf[400], name[16];
	json_t *p;

	snprintf(buf, sizeof(buf),
		 "{\"spec\": {\"resourceGroups\": [{\"coveredResources\": [\"google.com/tpu\"], "
		 "\"flavors\": [{\"name\": \"default-flavor\", \"resources\": [{\"name\": "
		 "\"google.com/tpu\", \"nominalQuota\": %d}]}]}]}}",
		 tpus);
	snprintf(name, sizeof(name), "cq%d", cq);
	p = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pk_store_patch(st, &pk_type_cluster_queue, NULL, name, PK_PATCH_MERGE, p,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(p);
}

/*
 * One random change: a Job made, deleted, resized, its status written, a
 * Node relabelled, a ClusterQueue's quota changed.
 */
static void random_change(unsigned *seed, int *made)
{
	char name[32], buf[160];
	const char *j = some_job(seed, *made, name, sizeof(name));
	int op = rand_r(seed) % 6;
	json_t *p;

	if (op == 5)
		return set_quota(rand_r(seed) % QUEUES, 4 * (1 + rand_r(seed) % 3));
	if (op == 0 || !j) {
		snprintf(name, sizeof(name), "r%d", (*made)++);
		job(name, rand_r(seed) % 2 ? "lq1" : "lq0");
		return;
	}
	if (op == 1) {
		ck_assert_int_eq(
		    pk_store_delete_opts(st, &pk_type_job, "default", j, NULL, NULL, NULL), 0);
		return;
	}
	if (op == 4)
		return label_node();
	snprintf(buf, sizeof(buf),
		 op == 2 ? "{\"spec\": {\"parallelism\": %d, \"completions\": %d}}"
			 : "{\"status\": {\"active\": %d, \"ready\": %d}}",
		 1 + rand_r(seed) % 2, 2);
	p = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(p);
	pk_store_patch(st, &pk_type_job, "default", j, PK_PATCH_MERGE, p,
		       op == 2 ? PK_SUB_MAIN : PK_SUB_STATUS, NULL, NULL); /* (may be refused) */
	json_decref(p);
}

/*
 * Random changes, each followed by the kept controller's passes until it
 * writes nothing: a fresh controller, visiting everything, then finds
 * nothing to write either (the same admissions, reasons and status).
 */
/* The kept controller's gauges (some ClusterQueues' lines from a pass before) are a fresh one's. */
static void same_gauges(int step)
{
	struct pk_queues *fresh = NULL;
	char *kept = pk_queues_gauges(q), *now;

	ck_assert_int_eq(pk_queues_new(st, NULL, &fresh), 0);
	ck_assert_int_eq(pk_queues_run(fresh), 0);
	now = pk_queues_gauges(fresh);
	ck_assert_ptr_nonnull(kept);
	ck_assert_ptr_nonnull(now);
	ck_assert_msg(strstr(kept, "kueue_cluster_queue_nominal_quota"), "step %d: no gauges",
		      step);
	ck_assert_msg(strcmp(kept, now) == 0, "step %d: kept gauges\n%s\nfresh\n%s", step, kept,
		      now);
	free(kept);
	free(now);
	pk_queues_free(fresh);
}

START_TEST(queue_kept_decides_as_a_fresh_one)
{
	unsigned seed = 0x5eed + (unsigned)_i;
	struct pk_queues_stats d;
	int made = 0;

	settle();
	for (int step = 0; step < 40; step++) {
		uint64_t rv;

		random_change(&seed, &made);
		for (int k = 0; k < 4; k++) {
			rv = pk_store_rv(st);
			pass(&d);
			if (pk_store_rv(st) == rv)
				break;
		}
		ck_assert_uint_eq(pk_store_rv(st), rv);
		ck_assert_int_eq(pk_queues_pass(st), 0);
		ck_assert_msg(pk_store_rv(st) == rv, "step %d: a fresh pass wrote %llu changes",
			      step, (unsigned long long)(pk_store_rv(st) - rv));
		same_gauges(step);
	}
	ck_assert_uint_gt(made, 0);
}
END_TEST

/* A pod bound to a Node (or, gone, deleted), named p<i>; the store's order puts it among the rest.
 */
static void bound_pod(int i, bool gone)
{
	char name[32], buf[512];
	json_t *o = NULL;

	snprintf(name, sizeof(name), "p%d", i);
	if (gone) {
		pk_store_delete_opts(st, &pk_type_pod, "default", name, NULL, NULL, NULL);
		return;
	}
	if (pk_store_get(st, &pk_type_pod, "default", name, &o) == 0) { /* a new version of it */
		json_t *p = json_loads("{\"metadata\": {\"labels\": {\"v\": \"2\"}}}", 0, NULL);

		json_decref(o);
		ck_assert_int_eq(pk_store_patch(st, &pk_type_pod, "default", name, PK_PATCH_MERGE,
						p, PK_SUB_MAIN, NULL, NULL),
				 0);
		json_decref(p);
		return;
	}
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"%s\", "
		 "\"namespace\": \"default\"}, \"spec\": {\"nodeName\": \"n%d\", \"containers\": "
		 "[{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": "
		 "\"100m\"}}}]}}",
		 name, i % 4);
	create_json(buf);
}

/*
 * The cluster's objects kept in the store's order as they change (pods
 * bound and deleted among the rest, a Node relabelled, placement checks
 * between) are, after each pass, those objects sorted afresh.
 */
START_TEST(queue_kept_order_is_a_fresh_sort)
{
	unsigned seed = 0x50f7;
	int compared = 0;

	settle();
	for (int step = 0; step < 60; step++) {
		struct pk_queues_stats d;
		int op = rand_r(&seed) % 4, i = rand_r(&seed) % 24, r;
		char name[32];

		if (op == 3)
			label_node();
		else
			bound_pod(i, op == 2);
		if (step % 10 == 0) {
			snprintf(name, sizeof(name), "k%d", step);
			job(name, "lq0");
		}
		pass(&d);
		r = pk_queues_sorted_agree(q);
		ck_assert_msg(r >= 0, "step %d: the kept order is not a fresh sort", step);
		compared += r;
	}
	ck_assert_int_gt(compared, 0);
}
END_TEST

/* A ClusterQueue of 64 TPUs, lq-big, and a Job of 5 pods of 4 TPUs: its quota fits, the 16 TPUs of
 * the four nodes do not hold it. */
static void big_job(void)
{
	char buf[1024];

	cluster_queue(9, 64);
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		    "\"metadata\": {\"name\": \"lq-big\", \"namespace\": \"default\"}, "
		    "\"spec\": {\"clusterQueue\": \"cq9\"}}");
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
		 "\"big\", \"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
		 "\"lq-big\"}}, \"spec\": {\"parallelism\": 5, \"completions\": 5, \"suspend\": "
		 "true, \"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": "
		 "\"x\", \"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}}}");
	create_json(buf);
}

START_TEST(queue_waiting_for_room_is_placed_again_only_after_a_cluster_change)
{
	struct pk_queues_stats d;
	char why[512];

	big_job();
	settle();
	ck_assert(!is_admitted("big"));
	ck_assert_msg(strstr(pending_reason("big", why, sizeof(why)), "pod "), "reason: %s", why);
	create_json("{\"apiVersion\": \"coordination.k8s.io/v1\", \"kind\": \"Lease\", "
		    "\"metadata\": {\"name\": \"unrelated\", \"namespace\": \"default\"}}");
	job("late", "lq0"); /* waits for quota: tried, and no placement check */
	pass(&d);
	ck_assert_uint_eq(d.placements, 0);
	ck_assert_uint_eq(d.tries, 1);
	label_node(); /* the cluster changed: the big one is placed again (and still waits) */
	pass(&d);
	ck_assert_uint_eq(d.placements, 1);
	ck_assert_uint_eq(d.tries, 1);
	ck_assert(!is_admitted("big"));
	create_json("{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
		    "\"n4\"}, \"status\": {\"allocatable\": {\"cpu\": \"8\", "
		    "\"google.com/tpu\": \"4\", \"pods\": \"110\"}}}");
	pass(&d); /* room for 5 pods now (the admitted Jobs have no pods here: no Job controller) */
	ck_assert_uint_eq(d.placements, 1);
	ck_assert(is_admitted("big"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controllers-queues-cache");
	TCase *tc = tcase_create("cache");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, queue_pass_after_unrelated_change_tries_nothing_again);
	tcase_add_test(tc, queue_freed_quota_tries_that_queue_again);
	tcase_add_test(tc, queue_behind_an_admission_is_not_written_again);
	tcase_add_test(tc, queue_spec_change_tries_everything_again);
	tcase_add_test(tc, queue_lost_stream_lists_again);
	tcase_add_test(tc, queue_waiting_for_room_is_placed_again_only_after_a_cluster_change);
	tcase_add_test(tc, queue_unchanged_is_not_visited);
	tcase_add_loop_test(tc, queue_kept_decides_as_a_fresh_one, 0, 4);
	tcase_add_test(tc, queue_kept_order_is_a_fresh_sort);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_jobs.c — Job and JobSet status kept by the standalone controllers
 * (kernel/controllers/controllers.c over kernel/builder/status.c) against a
 * real store, without the HTTP server: a Job runs to Complete and its
 * finished pods free the nodes a waiting gang then gets; a Job whose pods
 * keep failing is recreated up to backoffLimit and then Failed; a JobSet
 * whose Job fails restarts, every pod of the new attempt gated and placed
 * as a whole gang again, and fails for good past maxRestarts; a finished
 * JobSet's terminalState, and every object the controllers wrote uses known
 * fields of its kind's schema (JobSet's included).
 *
 * Pods are finished the way a kubelet reports it: a status write of
 * status.phase.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/appliance/appliance.h"
#include "kernel/controllers/controllers.h"
#include "kernel/builder/builder.h"
#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"
#include "standalone_fixture.h"

#define POD_SPEC                                                                                   \
	"\"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"x\", "          \
	"\"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}"

static void job(const char *name, int parallelism, int backoff)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
		 "\"%s\", \"namespace\": \"default\"}, \"spec\": {\"parallelism\": %d, "
		 "\"completions\": %d, \"backoffLimit\": %d, \"scheduling\": "
		 "{\"schedulingPolicy\": {\"gang\": {}}}, " POD_SPEC "}}",
		 name, parallelism, parallelism, backoff);
	create_json(buf);
}

/* What the controllers wrote uses fields of the kind's schema only (a client
 * sending it back under fieldValidation=Strict is not refused). */
static void known_fields(const char *kind, const char *name)
{
	json_t *o = get(kind, name), *paths = NULL;

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(pk_srv_unknown_fields(pk_type_by_kind(kind), o, false, &paths), 0);
	ck_assert_msg(json_array_size(paths) == 0, "%s %s: unknown field %s", kind, name,
		      json_string_value(json_array_get(paths, 0)));
	json_decref(paths);
	json_decref(o);
}

static bool exists(const json_t *o, const void *arg)
{
	(void)arg;
	return o != NULL;
}

static bool has_condition(const json_t *o, const void *type)
{
	json_t *c = o ? pk_condition_get(o, type) : NULL;
	const char *s = c ? json_string_value(json_object_get(c, "status")) : NULL;

	return s && strcmp(s, "True") == 0;
}

/* A new incarnation of the pod (another uid than arg) is bound. */
static bool rebound(const json_t *o, const void *old_uid)
{
	const char *uid = o ? pk_get_string(o, "metadata.uid") : NULL;

	return uid && strcmp(uid, old_uid) != 0 && pk_get_string(o, "spec.nodeName");
}

/* A new incarnation of the Job (another uid than arg). */
static bool rebound_job(const json_t *o, const void *old_uid)
{
	const char *uid = o ? pk_get_string(o, "metadata.uid") : NULL;

	return uid && strcmp(uid, old_uid) != 0;
}

static void set_phase(const char *pod, const char *phase)
{
	json_t *patch = json_pack("{s:{s:s}}", "status", "phase", phase);

	ck_assert_int_eq(pk_store_patch(st, &pk_type_pod, "default", pod, PK_PATCH_MERGE, patch,
					PK_SUB_STATUS, NULL, NULL),
			 0);
	json_decref(patch);
}

static int64_t status_int(const char *kind, const char *name, const char *path)
{
	json_t *o = get(kind, name);
	int64_t v = json_integer_value(pk_get(o, path));

	json_decref(o);
	return v;
}

/* status.active is *arg (the controller counts after it saw the bindings). */
static bool active_is(const json_t *o, const void *arg)
{
	return o && json_integer_value(pk_get(o, "status.active")) == *(const int *)arg;
}

static char *uid_of(const char *kind, const char *name)
{
	json_t *o = get(kind, name);
	char *uid = o ? strdup(pk_get_string(o, "metadata.uid")) : NULL;

	json_decref(o);
	ck_assert_ptr_nonnull(uid);
	return uid;
}

START_TEST(job_completes_and_frees_nodes_for_a_waiting_gang)
{
	job("big", 4, 0);
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "big-%d", i);
		ck_assert(wait_bound(name));
	}
	ck_assert(wait_for("Job", "big", active_is, &(int){4}));
	job("next", 2, 0); /* no room: all four nodes are taken */
	ck_assert(wait_for("Pod", "next-1", exists, NULL));
	sleep_ms(300);
	json_t *waiting = get("Pod", "next-0");

	ck_assert_ptr_nonnull(waiting);
	ck_assert(!is_bound(waiting, NULL));
	json_decref(waiting);
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "big-%d", i);
		set_phase(name, "Succeeded");
	}
	ck_assert(wait_for("Job", "big", has_condition, "Complete"));
	ck_assert_int_eq(status_int("Job", "big", "status.succeeded"), 4);
	ck_assert_int_eq(status_int("Job", "big", "status.active"), 0);
	ck_assert_int_eq(status_int("Job", "big", "status.failed"), 0);
	json_t *j = get("Job", "big");

	ck_assert_ptr_nonnull(pk_get(j, "status.completionTime"));
	json_decref(j);
	/* the finished pods stay (Succeeded) and their nodes went to the waiting gang */
	ck_assert(wait_bound("next-0"));
	ck_assert(wait_bound("next-1"));
	ck_assert(wait_for("Job", "next", active_is, &(int){2}));
}
END_TEST

START_TEST(job_fails_past_backoff_limit)
{
	job("flaky", 1, 1);
	ck_assert(wait_bound("flaky-0"));
	char *uid = uid_of("Pod", "flaky-0");

	set_phase("flaky-0", "Failed");
	/* counted, deleted, and its index created and placed again */
	ck_assert(wait_for("Pod", "flaky-0", rebound, uid));
	ck_assert_int_eq(status_int("Job", "flaky", "status.failed"), 1);
	json_t *j = get("Job", "flaky");

	ck_assert(!has_condition(j, "Failed"));
	json_decref(j);
	free(uid);
	set_phase("flaky-0", "Failed");
	ck_assert(wait_for("Job", "flaky", has_condition, "Failed"));
	ck_assert_int_eq(status_int("Job", "flaky", "status.failed"), 2);
	sleep_ms(300);
	/* a failed Job creates nothing more */
	ck_assert(wait_for("Pod", "flaky-0", is_gone, NULL));
}
END_TEST

static const char *const jobset_text =
    "{\"apiVersion\": \"jobset.x-k8s.io/v1alpha2\", \"kind\": \"JobSet\", \"metadata\": "
    "{\"name\": \"js\", \"namespace\": \"default\"}, \"spec\": {\"failurePolicy\": "
    "{\"maxRestarts\": 1}, \"scheduling\": {\"schedulingPolicy\": {\"gang\": {}}}, "
    "\"replicatedJobs\": [{\"name\": \"w\", \"replicas\": 2, \"template\": {\"spec\": "
    "{\"parallelism\": 2, \"completions\": 2, \"backoffLimit\": 0, " POD_SPEC "}}}]}}";

static const char *const js_pods[] = {"js-w-0-0", "js-w-0-1", "js-w-1-0", "js-w-1-1"};

START_TEST(jobset_restarts_as_a_gang_then_fails)
{
	char *uids[4];

	create_json(jobset_text);
	for (int i = 0; i < 4; i++) {
		ck_assert(wait_bound(js_pods[i]));
		uids[i] = uid_of("Pod", js_pods[i]);
	}
	set_phase("js-w-1-0", "Failed");
	/* the Job fails (backoffLimit 0); the JobSet restarts every Job and group */
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(wait_for("Pod", js_pods[i], rebound, uids[i]), "%s", js_pods[i]);
		free(uids[i]);
	}
	ck_assert_int_eq(status_int("JobSet", "js", "status.restarts"), 1);
	json_t *p = get("Pod", "js-w-0-0");

	ck_assert_str_eq(json_string_value(json_object_get(pk_get(p, "metadata.labels"),
							   "jobset.sigs.k8s.io/restart-attempt")),
			 "1");
	json_decref(p);
	/* the new attempt was gated as a whole and placed in one cycle */
	ck_assert(wait_for("CompositePodGroup", "js", has_condition,
			   "CompositePodGroupInitiallyScheduled"));
	/* a second failure is past maxRestarts: Failed, and what ran is deleted */
	set_phase("js-w-0-1", "Failed");
	ck_assert(wait_for("JobSet", "js", has_condition, "Failed"));
	ck_assert_int_eq(status_int("JobSet", "js", "status.restarts"), 1);
	json_t *js = get("JobSet", "js");
	ck_assert_str_eq(pk_get_string(js, "status.terminalState"), "Failed");
	ck_assert_int_eq(status_int("JobSet", "js", "status.restartsCountTowardsMax"), 1);
	json_decref(js);
	known_fields("JobSet", "js");
	ck_assert(wait_for("Pod", "js-w-1-0", is_gone, NULL));
	ck_assert(wait_for("Job", "js-w-1", is_gone, NULL));
}
END_TEST

START_TEST(jobset_completes_under_success_policy_any)
{
	json_t *o = json_loads(jobset_text, 0, NULL);
	char *text;

	pk_set(o, "spec.successPolicy", json_pack("{s:s}", "operator", "Any"));
	text = json_dumps(o, 0);
	json_decref(o);
	create_json(text);
	for (int i = 0; i < 4; i++)
		ck_assert(wait_bound(js_pods[i]));
	set_phase("js-w-1-0", "Succeeded");
	set_phase("js-w-1-1", "Succeeded");
	free(text);
	ck_assert(wait_for("JobSet", "js", has_condition, "Completed"));
	json_t *js = get("JobSet", "js");
	json_t *rs = json_array_get(pk_get(js, "status.replicatedJobsStatus"), 0);

	ck_assert_int_eq(json_integer_value(json_object_get(rs, "succeeded")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(rs, "active")), 1);
	ck_assert_str_eq(pk_get_string(js, "status.terminalState"), "Completed");
	json_decref(js);
	static const char *const written[][2] = {{"JobSet", "js"},
						 {"Job", "js-w-1"},
						 {"PodGroup", "js-w-1"},
						 {"CompositePodGroup", "js"},
						 {"CompositePodGroup", "js-w"},
						 {"Workload", "js"},
						 {"Pod", "js-w-1-0"}};
	for (size_t i = 0; i < sizeof(written) / sizeof(written[0]); i++)
		known_fields(written[i][0], written[i][1]);
}
END_TEST

/* Upstream fields the controller does not act on are refused at their path;
 * the values whose behaviour is the one built here are admitted. */
static bool create_names(const char *path, const char *value, const char *named)
{
	struct pk_errors errs = {0};
	json_t *o = json_loads(jobset_text, 0, NULL);
	json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);
	bool found = false;

	ck_assert_ptr_nonnull(v);
	pk_set(o, path, v);
	int rc = pk_store_create(st, o, &errs, NULL);
	for (size_t i = 0; i < errs.n; i++)
		found |= named && strstr(errs.msg[i], named) != NULL;
	if (rc == 0) {
		pk_store_delete_opts(st, &pk_type_jobset, "default", "js", NULL, NULL, NULL);
		found = !named;
	}
	pk_errors_clear(&errs);
	json_decref(o);
	return found;
}

static json_t *gang_job(const char *name, int min_count)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i,s:{s:{s:{s:i}}},s:{s:{s:[{s:s,s:s}]}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name,
			 "namespace", "default", "spec", "parallelism", 4, "scheduling",
			 "schedulingPolicy", "gang", "minCount", min_count, "template", "spec",
			 "containers", "name", "c", "image", "trainer");
}

/*
 * A store opened with the builder's admission rules (as podkerneld opens
 * it) checks a Job's scheduling intent on create and its update rules on
 * update.  (A store of its own: no controller writes the Job meanwhile.)
 */
static bool pods_gone(const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!wait_for("Pod", names[i], is_gone, NULL))
			return false;
	return true;
}

/*
 * A Job's pod deleted (drained, evicted) is made again at once: the
 * deletion itself wakes the Job, nothing else has to touch it.
 */
START_TEST(job_recreates_a_deleted_pod)
{
	job("drain", 2, 0);
	ck_assert(wait_bound("drain-0"));
	ck_assert(wait_bound("drain-1"));
	ck_assert(wait_for("Job", "drain", active_is, &(int){2}));
	char *uid = uid_of("Pod", "drain-1");

	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "drain-1", NULL, NULL, NULL), 0);
	ck_assert(wait_for("Pod", "drain-1", rebound, uid));
	free(uid);
}
END_TEST

/* parallelism shrinks: the pods no longer wanted go and status.active follows. */
START_TEST(job_active_follows_a_smaller_parallelism)
{
	static const char *const extra[] = {"shrink-1", "shrink-2"};
	json_t *patch = json_pack("{s:{s:i}}", "spec", "parallelism", 1);

	job("shrink", 3, 0);
	ck_assert(wait_for("Job", "shrink", active_is, &(int){3}));
	ck_assert_int_eq(pk_store_patch(st, &pk_type_job, "default", "shrink", PK_PATCH_MERGE,
					patch, PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);
	ck_assert(pods_gone(extra, 2));
	ck_assert(wait_for("Job", "shrink", active_is, &(int){1}));
	ck_assert(wait_for("Pod", "shrink-0", exists, NULL));
}
END_TEST

/* A JobSet's Job deleted is made again by its JobSet. */
START_TEST(jobset_recreates_a_deleted_job)
{
	create_json(jobset_text);
	for (int i = 0; i < 4; i++)
		ck_assert(wait_bound(js_pods[i]));
	char *uid = uid_of("Job", "js-w-1");

	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "js-w-1", NULL, NULL, NULL), 0);
	ck_assert(wait_for("Job", "js-w-1", rebound_job, uid));
	free(uid);
}
END_TEST

/* The Suspended condition is at status (arg: "True" or "False"). */
static bool suspended_is(const json_t *o, const void *status)
{
	json_t *c = o ? pk_condition_get(o, "Suspended") : NULL;
	const char *s = c ? json_string_value(json_object_get(c, "status")) : NULL;

	return s && strcmp(s, status) == 0;
}

static void set_suspend(const char *kind, const char *name, bool suspend)
{
	json_t *patch = json_pack("{s:{s:b}}", "spec", "suspend", suspend);

	ck_assert_int_eq(pk_store_patch(st, pk_type_by_kind(kind), "default", name, PK_PATCH_MERGE,
					patch, PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);
}

/* Whether kind/name is still absent after a while (the controller had its turn). */
static bool stays_absent(const char *kind, const char *name)
{
	sleep_ms(300);
	json_t *o = get(kind, name);

	json_decref(o);
	return o == NULL;
}

/*
 * A suspended Job creates no pods; resumed, it creates and places them;
 * suspended again, its running pods are deleted (upstream's Job controller).
 */
START_TEST(job_suspend_creates_no_pods_until_resumed)
{
	static const char *const pods[] = {"sus-0", "sus-1"};
	json_t *j = gang_job("sus", 2);

	pk_set(j, "spec.parallelism", json_integer(2));
	pk_set(j, "spec.suspend", json_true());
	pk_set(j, "spec.template.spec.containers[0].resources",
	       json_pack("{s:{s:s}}", "requests", "google.com/tpu", "4"));
	char *text = json_dumps(j, 0);

	json_decref(j);
	create_json(text);
	free(text);
	ck_assert(wait_for("Job", "sus", suspended_is, "True"));
	ck_assert(stays_absent("Pod", "sus-0"));
	json_t *o = get("Job", "sus");

	ck_assert_ptr_null(pk_get(o, "status.startTime"));
	ck_assert_str_eq(pk_get_string(pk_condition_get(o, "Suspended"), "reason"), "JobSuspended");
	json_decref(o);
	set_suspend("Job", "sus", false);
	ck_assert(wait_bound("sus-0"));
	ck_assert(wait_bound("sus-1"));
	ck_assert(wait_for("Job", "sus", suspended_is, "False"));
	ck_assert(wait_for("Job", "sus", active_is, &(int){2}));
	o = get("Job", "sus");
	ck_assert_str_eq(pk_get_string(pk_condition_get(o, "Suspended"), "reason"), "JobResumed");
	ck_assert_ptr_nonnull(pk_get(o, "status.startTime"));
	json_decref(o);
	set_suspend("Job", "sus", true);
	ck_assert(pods_gone(pods, 2));
	ck_assert(wait_for("Job", "sus", suspended_is, "True"));
	ck_assert(wait_for("Job", "sus", active_is, &(int){0}));
	known_fields("Job", "sus");
}
END_TEST

/*
 * A suspended JobSet makes its groups and suspended Jobs, and no pods;
 * resumed, its Jobs are resumed and the gang placed; suspended again, the
 * pods go and the Jobs stay.
 */
START_TEST(jobset_suspend_creates_no_pods_until_resumed)
{
	json_t *o = json_loads(jobset_text, 0, NULL);
	char *text;

	pk_set(o, "spec.suspend", json_true());
	text = json_dumps(o, 0);
	json_decref(o);
	create_json(text);
	free(text);
	ck_assert(wait_for("JobSet", "js", suspended_is, "True"));
	ck_assert(wait_for("Job", "js-w-1", suspended_is, "True"));
	ck_assert(stays_absent("Pod", "js-w-0-0"));
	o = get("JobSet", "js");
	ck_assert_str_eq(pk_get_string(pk_condition_get(o, "Suspended"), "reason"),
			 "SuspendedJobs");
	ck_assert_int_eq(json_integer_value(pk_get(o, "status.replicatedJobsStatus[0].suspended")),
			 2);
	json_decref(o);
	set_suspend("JobSet", "js", false);
	for (int i = 0; i < 4; i++)
		ck_assert(wait_bound(js_pods[i]));
	ck_assert(wait_for("JobSet", "js", suspended_is, "False"));
	ck_assert(wait_for("Job", "js-w-0", suspended_is, "False"));
	set_suspend("JobSet", "js", true);
	ck_assert(pods_gone(js_pods, 4));
	ck_assert(wait_for("Job", "js-w-0", suspended_is, "True"));
	ck_assert(wait_for("JobSet", "js", suspended_is, "True"));
	ck_assert(wait_for("Job", "js-w-0", exists, NULL));
	known_fields("JobSet", "js");
}
END_TEST

/* ---- queues: Kueue's single ClusterQueue setup, on the TPUs of the four nodes ---- */

static void queue_setup(const char *selector, const char *strategy)
{
	char buf[1024];

	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
		    "\"metadata\": {\"name\": \"default-flavor\"}}");
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\", "
		 "\"metadata\": {\"name\": \"cluster-queue\"}, \"spec\": {\"namespaceSelector\": "
		 "%s, \"queueingStrategy\": \"%s\", \"resourceGroups\": [{\"coveredResources\": "
		 "[\"cpu\", \"google.com/tpu\"], \"flavors\": [{\"name\": \"default-flavor\", "
		 "\"resources\": [{\"name\": \"cpu\", \"nominalQuota\": 9}, {\"name\": "
		 "\"google.com/tpu\", \"nominalQuota\": \"8\"}]}]}]}}",
		 selector, strategy);
	create_json(buf);
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		    "\"metadata\": {\"name\": \"user-queue\", \"namespace\": \"default\"}, "
		    "\"spec\": {\"clusterQueue\": \"cluster-queue\"}}");
}

/* A Job of parallelism pods of 4 TPUs each, queued in user-queue. */
static void queued_job(const char *name, int parallelism)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
		 "\"%s\", \"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
		 "\"user-queue\"}}, \"spec\": {\"parallelism\": %d, \"completions\": %d, "
		 "\"suspend\": true, " POD_SPEC "}}",
		 name, parallelism, parallelism);
	create_json(buf);
}

static bool status_is(const json_t *o, const void *want)
{
	const char *const *w = want; /* path, value */
	json_t *v = o ? pk_get(o, w[0]) : NULL;
	char text[64];

	if (json_is_integer(v))
		snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
	else
		snprintf(text, sizeof(text), "%s", json_is_string(v) ? json_string_value(v) : "");
	return v && strcmp(text, w[1]) == 0;
}

#define QSTATUS(kind, name, path, value)                                                           \
	ck_assert_msg(wait_for(kind, name, status_is, (const char *const[]){path, value}),         \
		      "%s %s: %s is not %s", kind, name, path, value)

/*
 * Nominal quota blocks: 8 TPUs admit the first Job of two pods of 4 and
 * hold the second, suspended with no pods, until the first is deleted.
 */
START_TEST(queue_nominal_quota_blocks_until_usage_frees)
{
	queue_setup("{}", "BestEffortFIFO");
	queued_job("job-a", 2);
	ck_assert(wait_bound("job-a-0"));
	ck_assert(wait_bound("job-a-1"));
	queued_job("job-b", 2);
	QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "1");
	QSTATUS("ClusterQueue", "cluster-queue", "status.admittedWorkloads", "1");
	QSTATUS("ClusterQueue", "cluster-queue", "status.flavorsUsage[0].resources[1].total", "8");
	QSTATUS("LocalQueue", "user-queue", "status.pendingWorkloads", "1");
	QSTATUS("LocalQueue", "user-queue", "status.flavorsUsage[0].resources[1].total", "8");
	ck_assert(wait_for("Job", "job-b", suspended_is, "True"));
	ck_assert(stays_absent("Pod", "job-b-0"));
	json_t *a = get("Job", "job-a");

	ck_assert_str_eq(json_string_value(json_object_get(pk_get(a, "metadata.annotations"),
							   "queue.podkernel.dev/admission")),
			 "cluster-queue/default-flavor");
	json_decref(a);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "job-a", NULL, NULL, NULL), 0);
	ck_assert(wait_bound("job-b-0"));
	ck_assert(wait_bound("job-b-1"));
	QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "0");
	QSTATUS("ClusterQueue", "cluster-queue", "status.admittedWorkloads", "1");
	known_fields("ClusterQueue", "cluster-queue");
	known_fields("LocalQueue", "user-queue");
}
END_TEST

/*
 * A queued JobSet waits on quota with its Jobs suspended and no pods, and is
 * admitted, Jobs and all, once the quota frees.
 */
START_TEST(queue_jobset_waits_on_quota_then_runs)
{
	json_t *o = json_loads(jobset_text, 0, NULL);
	char *text;

	queue_setup("{}", "BestEffortFIFO");
	queued_job("holder", 1);
	ck_assert(wait_bound("holder-0"));
	pk_set(o, "metadata.labels", json_pack("{s:s}", "kueue.x-k8s.io/queue-name", "user-queue"));
	pk_set(o, "spec.replicatedJobs[0].replicas", json_integer(1));
	text = json_dumps(o, 0);
	json_decref(o);
	create_json(text);
	free(text);
	QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "1");
	ck_assert(wait_for("JobSet", "js", suspended_is, "True"));
	ck_assert(wait_for("Job", "js-w-0", suspended_is, "True"));
	ck_assert(stays_absent("Pod", "js-w-0-0"));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "holder", NULL, NULL, NULL), 0);
	ck_assert(wait_bound("js-w-0-0"));
	ck_assert(wait_bound("js-w-0-1"));
	ck_assert(wait_for("JobSet", "js", suspended_is, "False"));
	QSTATUS("ClusterQueue", "cluster-queue", "status.flavorsUsage[0].resources[1].total", "8");
	QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "0");
}
END_TEST

/* A namespace the ClusterQueue's namespaceSelector does not select is never admitted. */
START_TEST(queue_namespace_outside_selector_is_refused)
{
	queue_setup("{\"matchLabels\": {\"team\": \"research\"}}", "BestEffortFIFO");
	queued_job("outsider", 1);
	QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "1");
	QSTATUS("LocalQueue", "user-queue", "status.pendingWorkloads", "1");
	ck_assert(wait_for("Job", "outsider", suspended_is, "True"));
	ck_assert(stays_absent("Pod", "outsider-0"));
	/* labelled, the namespace is selected and the Job admitted */
	json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "team", "research");

	ck_assert_int_eq(pk_store_patch(st, &pk_type_namespace, NULL, "default", PK_PATCH_MERGE,
					patch, PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);
	ck_assert(wait_bound("outsider-0"));
	QSTATUS("ClusterQueue", "cluster-queue", "status.admittedWorkloads", "1");
}
END_TEST

/*
 * StrictFIFO blocks behind its head: a Job too big for the quota left holds
 * a smaller one created after it; BestEffortFIFO admits the smaller one.
 */
static void fifo_case(const char *strategy, bool small_admitted)
{
	queue_setup("{}", strategy);
	queued_job("first", 1);
	ck_assert(wait_bound("first-0"));
	queued_job("big", 2);
	QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "1");
	queued_job("small",
		   1); /* after big: a later creationTimestamp, or the same and a later name */
	if (small_admitted) {
		ck_assert(wait_bound("small-0"));
	} else {
		QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "2");
		ck_assert(stays_absent("Pod", "small-0"));
	}
}

START_TEST(queue_strict_fifo_blocks_behind_its_head)
{
	fifo_case("StrictFIFO", false);
}
END_TEST

START_TEST(queue_best_effort_fifo_admits_what_fits)
{
	fifo_case("BestEffortFIFO", true);
}
END_TEST

/*
 * Kueue's cohort example: team-a and team-b, 4 TPUs of nominal quota each,
 * in one cohort; team-a's Job of 8 is admitted by borrowing team-b's unused
 * 4 (status says 4 borrowed), and team-b's Job then waits for its own quota.
 */
START_TEST(queue_borrows_within_its_cohort)
{
	static const char *const cq =
	    "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\", "
	    "\"metadata\": {\"name\": \"%s\"}, \"spec\": {\"namespaceSelector\": {}, "
	    "\"cohortName\": \"team-ab\", \"resourceGroups\": [{\"coveredResources\": "
	    "[\"google.com/tpu\"], \"flavors\": [{\"name\": \"default-flavor\", \"resources\": "
	    "[{\"name\": \"google.com/tpu\", \"nominalQuota\": 4}]}]}]}}";
	char buf[1024];

	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
		    "\"metadata\": {\"name\": \"default-flavor\"}}");
	snprintf(buf, sizeof(buf), cq, "team-a");
	create_json(buf);
	snprintf(buf, sizeof(buf), cq, "team-b");
	create_json(buf);
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		    "\"metadata\": {\"name\": \"user-queue\", \"namespace\": \"default\"}, "
		    "\"spec\": {\"clusterQueue\": \"team-a\"}}");
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		    "\"metadata\": {\"name\": \"b-queue\", \"namespace\": \"default\"}, "
		    "\"spec\": {\"clusterQueue\": \"team-b\"}}");
	queued_job("borrower", 2);
	ck_assert(wait_bound("borrower-1"));
	QSTATUS("ClusterQueue", "team-a", "status.flavorsUsage[0].resources[0].total", "8");
	QSTATUS("ClusterQueue", "team-a", "status.flavorsUsage[0].resources[0].borrowed", "4");
	snprintf(
	    buf, sizeof(buf),
	    "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
	    "\"owner\", \"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
	    "\"b-queue\"}}, \"spec\": {\"parallelism\": 1, \"suspend\": true, " POD_SPEC "}}");
	create_json(buf);
	QSTATUS("ClusterQueue", "team-b", "status.pendingWorkloads", "1");
	ck_assert(stays_absent("Pod", "owner-0"));
}
END_TEST

/* A Job of parallelism pods of 4 TPUs each in LocalQueue queue, its pods of PriorityClass pc. */
static void prio_job(const char *name, const char *queue, int parallelism, const char *pc)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
		 "\"%s\", \"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
		 "\"%s\"}}, \"spec\": {\"parallelism\": %d, \"suspend\": true, \"template\": "
		 "{\"spec\": {\"priorityClassName\": \"%s\", \"containers\": [{\"name\": \"c\", "
		 "\"image\": \"x\", \"resources\": {\"requests\": {\"google.com/tpu\": "
		 "\"4\"}}}]}}}}",
		 name, queue, parallelism, pc);
	create_json(buf);
}

static void priority_class(const char *name, int value)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"scheduling.k8s.io/v1\", \"kind\": \"PriorityClass\", "
		 "\"metadata\": {\"name\": \"%s\"}, \"value\": %d}",
		 name, value);
	create_json(buf);
}

static bool admission_is_gone(const json_t *o, const void *arg)
{
	(void)arg;
	return o && json_is_true(pk_get(o, "spec.suspend")) &&
	       !json_object_get(pk_get(o, "metadata.annotations"), "queue.podkernel.dev/admission");
}

/*
 * Kueue's withinClusterQueue: LowerPriority: a ClusterQueue of 8 TPUs full
 * with a low-priority Job; a high-priority Job of 4 preempts it (its
 * admission taken back, suspended, queued again) and is admitted.
 */
START_TEST(queue_preempts_lower_priority_within_its_queue)
{
	json_t *patch =
	    json_pack("{s:{s:{s:s}}}", "spec", "preemption", "withinClusterQueue", "LowerPriority");

	priority_class("low", 1);
	priority_class("high", 100);
	queue_setup("{}", "BestEffortFIFO");
	ck_assert_int_eq(pk_store_patch(st, &pk_type_cluster_queue, NULL, "cluster-queue",
					PK_PATCH_MERGE, patch, PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);
	prio_job("low", "user-queue", 2, "low");
	ck_assert(wait_bound("low-1"));
	prio_job("high", "user-queue", 1, "high");
	ck_assert(wait_bound("high-0"));
	ck_assert(wait_for("Job", "low", admission_is_gone, NULL));
	QSTATUS("ClusterQueue", "cluster-queue", "status.pendingWorkloads", "1");
	QSTATUS("ClusterQueue", "cluster-queue", "status.flavorsUsage[0].resources[1].total", "4");
}
END_TEST

/*
 * Kueue's reclaimWithinCohort: team-a borrows team-b's idle quota; when
 * team-b (reclaimWithinCohort: Any) needs its nominal quota back, the
 * borrower is preempted and team-b's Job admitted.
 */
START_TEST(queue_reclaim_preempts_the_borrower)
{
	static const char *const cq =
	    "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\", "
	    "\"metadata\": {\"name\": \"%s\"}, \"spec\": {\"namespaceSelector\": {}, "
	    "\"cohortName\": \"team-ab\", \"preemption\": {\"reclaimWithinCohort\": \"%s\"}, "
	    "\"resourceGroups\": [{\"coveredResources\": [\"google.com/tpu\"], \"flavors\": "
	    "[{\"name\": \"default-flavor\", \"resources\": [{\"name\": \"google.com/tpu\", "
	    "\"nominalQuota\": 4}]}]}]}}";
	char buf[1024];

	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
		    "\"metadata\": {\"name\": \"default-flavor\"}}");
	snprintf(buf, sizeof(buf), cq, "team-a", "Never");
	create_json(buf);
	snprintf(buf, sizeof(buf), cq, "team-b", "Any");
	create_json(buf);
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		    "\"metadata\": {\"name\": \"a-queue\", \"namespace\": \"default\"}, "
		    "\"spec\": {\"clusterQueue\": \"team-a\"}}");
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		    "\"metadata\": {\"name\": \"b-queue\", \"namespace\": \"default\"}, "
		    "\"spec\": {\"clusterQueue\": \"team-b\"}}");
	priority_class("normal", 0);
	prio_job("borrower", "a-queue", 2, "normal");
	ck_assert(wait_bound("borrower-1"));
	prio_job("owner", "b-queue", 1, "normal");
	ck_assert(wait_bound("owner-0"));
	ck_assert(wait_for("Job", "borrower", admission_is_gone, NULL));
	QSTATUS("ClusterQueue", "team-a", "status.pendingWorkloads", "1");
	QSTATUS("ClusterQueue", "team-b", "status.flavorsUsage[0].resources[0].borrowed", "0");
}
END_TEST

/*
 * Admission is quota and placement in one decision: a flavor of the nodes
 * labelled pool=a (one node, 4 TPUs) with quota for 16; a Job of two pods
 * of 4 fits the quota but not the flavor's nodes, so it stays pending,
 * first in its queue, with the scheduler's explanation; a Job of one pod is
 * admitted with the flavor's node selector and runs on that node.
 */
START_TEST(queue_admits_only_what_the_flavor_nodes_place)
{
	json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "pool", "a");
	json_t *pod;

	ck_assert_int_eq(pk_store_patch(st, &pk_type_node, NULL, "n2", PK_PATCH_MERGE, patch,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(patch);
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
		    "\"metadata\": {\"name\": \"pool-a\"}, \"spec\": {\"nodeLabels\": {\"pool\": "
		    "\"a\"}}}");
	create_json(
	    "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\", "
	    "\"metadata\": {\"name\": \"cq\"}, \"spec\": {\"namespaceSelector\": {}, "
	    "\"resourceGroups\": [{\"coveredResources\": [\"google.com/tpu\"], \"flavors\": "
	    "[{\"name\": \"pool-a\", \"resources\": [{\"name\": \"google.com/tpu\", "
	    "\"nominalQuota\": 16}]}]}]}}");
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		    "\"metadata\": {\"name\": \"user-queue\", \"namespace\": \"default\"}, "
		    "\"spec\": {\"clusterQueue\": \"cq\"}}");
	queued_job("two", 2);
	ck_assert(wait_for("Job", "two", annotation_is,
			   (const char *const[]){"queue.podkernel.dev/queue-order", "cq 0 "}));
	ck_assert(
	    wait_for("Job", "two", annotation_is,
		     (const char *const[]){"queue.podkernel.dev/pending-reason", "pod two-"}));
	ck_assert(stays_absent("Pod", "two-0"));
	queued_job("one", 1);
	ck_assert(wait_bound("one-0"));
	pod = get("Pod", "one-0");
	ck_assert_str_eq(pk_get_string(pod, "spec.nodeName"), "n2");
	ck_assert_str_eq(pk_get_string(pod, "spec.nodeSelector.pool"), "a");
	json_decref(pod);
	QSTATUS("ClusterQueue", "cq", "status.pendingWorkloads", "1");
}
END_TEST

START_TEST(job_scheduling_intent_is_admitted_by_the_builder)
{
	struct pk_errors errs = {0};
	struct pk_store *s2;
	json_t *job = gang_job("j", 0), *out = NULL;
	char d2[256], err[256], cmd[300];

	snprintf(d2, sizeof(d2), "/tmp/pk-jobs-admit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d2));
	ck_assert_int_eq(pk_store_open_opts(d2, &store_opts, &s2, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_store_create(s2, job, &errs, NULL), -EINVAL);
	ck_assert_uint_ge(errs.n, 1);
	ck_assert_str_eq(errs.msg[0], "spec.scheduling.schedulingPolicy.gang.minCount: "
				      "Invalid value: 0: must be greater than or equal to 1");
	pk_errors_clear(&errs);
	json_decref(job);

	job = gang_job("j", 2);
	ck_assert_int_eq(pk_store_create(s2, job, &errs, &out), 0);
	json_decref(job);

	/* minCount may change; the gang/basic variant is frozen. */
	json_object_set_new(pk_get(out, "spec.scheduling.schedulingPolicy.gang"), "minCount",
			    json_integer(3));
	ck_assert_int_eq(pk_store_update_opts(s2, out, PK_SUB_MAIN, NULL, &errs, NULL), 0);
	json_object_set_new(pk_get(out, "spec.scheduling"), "schedulingPolicy",
			    json_pack("{s:{}}", "basic"));
	json_object_del(out, "metadata");
	json_object_set_new(out, "metadata",
			    json_pack("{s:s,s:s}", "name", "j", "namespace", "default"));
	ck_assert_int_eq(pk_store_update_opts(s2, out, PK_SUB_MAIN, NULL, &errs, NULL), -EINVAL);
	ck_assert_uint_ge(errs.n, 1);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "spec.scheduling.schedulingPolicy"));
	pk_errors_clear(&errs);
	json_decref(out);
	pk_store_close(s2);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d2);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(jobset_policy_fields_are_checked)
{
	static const char *const refused[][3] = {
	    {"spec.failurePolicy.rules", "[{\"name\":\"r\",\"action\":\"FailJobSet\"}]",
	     "spec.failurePolicy.rules: Forbidden: not implemented"},
	    {"spec.failurePolicy.restartStrategy", "\"BlockingRecreate\"",
	     "spec.failurePolicy.restartStrategy: Unsupported value"},
	    {"spec.suspend", "\"yes\"", "spec.suspend: Invalid value"},
	    {"metadata.annotations", "{\"queue.podkernel.dev/admission\": \"cq/f\"}",
	     "metadata.annotations[queue.podkernel.dev/admission]: Forbidden"},
	    {"spec.network", "{\"enableDNSHostnames\":true}", "spec.network: Forbidden"},
	    {"spec.startupPolicy", "{\"startupPolicyOrder\":\"InOrder\"}",
	     "spec.startupPolicy.startupPolicyOrder: Unsupported value"},
	    {"spec.coordinator", "{\"replicatedJob\":\"w\"}", "spec.coordinator: Forbidden"},
	    {"spec.managedBy", "\"kueue.x-k8s.io/multikueue\"", "spec.managedBy: Unsupported"},
	    {"spec.ttlSecondsAfterFinished", "60", "spec.ttlSecondsAfterFinished: Forbidden"},
	    {"spec.replicatedJobs",
	     "[{\"name\": \"w\", \"groupName\": \"g\", "
	     "\"template\": {\"spec\": {" POD_SPEC "}}}]",
	     "spec.replicatedJobs[0].groupName: Forbidden"},
	    {"spec.replicatedJobs",
	     "[{\"name\": \"a\", \"template\": {\"spec\": {" POD_SPEC
	     "}}}, {\"name\": \"b\", \"dependsOn\": [{\"name\": \"a\", \"status\": "
	     "\"Ready\"}], \"template\": {\"spec\": {" POD_SPEC "}}}]",
	     "spec.replicatedJobs[1].dependsOn: Forbidden"},
	};
	static const char *const admitted[][2] = {
	    {"spec.failurePolicy.rules", "[]"},
	    {"spec.failurePolicy.restartStrategy", "\"Recreate\""},
	    {"spec.suspend", "false"},
	    {"spec.suspend", "true"},
	    {"spec.network", "{}"},
	    {"spec.startupPolicy", "{\"startupPolicyOrder\":\"AnyOrder\"}"},
	    {"spec.managedBy", "\"jobset.sigs.k8s.io/jobset-controller\""},
	};

	for (size_t i = 0; i < ELEMENTSOF(refused); i++)
		ck_assert_msg(create_names(refused[i][0], refused[i][1], refused[i][2]),
			      "%s=%s: no error naming it", refused[i][0], refused[i][1]);
	for (size_t i = 0; i < ELEMENTSOF(admitted); i++)
		ck_assert_msg(create_names(admitted[i][0], admitted[i][1], NULL), "%s=%s refused",
			      admitted[i][0], admitted[i][1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-jobs");
	TCase *tc = tcase_create("jobs");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, job_completes_and_frees_nodes_for_a_waiting_gang);
	tcase_add_test(tc, job_fails_past_backoff_limit);
	tcase_add_test(tc, jobset_restarts_as_a_gang_then_fails);
	tcase_add_test(tc, jobset_completes_under_success_policy_any);
	tcase_add_test(tc, jobset_policy_fields_are_checked);
	tcase_add_test(tc, job_scheduling_intent_is_admitted_by_the_builder);
	tcase_add_test(tc, job_recreates_a_deleted_pod);
	tcase_add_test(tc, job_active_follows_a_smaller_parallelism);
	tcase_add_test(tc, jobset_recreates_a_deleted_job);
	tcase_add_test(tc, job_suspend_creates_no_pods_until_resumed);
	tcase_add_test(tc, jobset_suspend_creates_no_pods_until_resumed);
	tcase_add_test(tc, queue_nominal_quota_blocks_until_usage_frees);
	tcase_add_test(tc, queue_namespace_outside_selector_is_refused);
	tcase_add_test(tc, queue_jobset_waits_on_quota_then_runs);
	tcase_add_test(tc, queue_strict_fifo_blocks_behind_its_head);
	tcase_add_test(tc, queue_best_effort_fifo_admits_what_fits);
	tcase_add_test(tc, queue_borrows_within_its_cohort);
	tcase_add_test(tc, queue_preempts_lower_priority_within_its_queue);
	tcase_add_test(tc, queue_reclaim_preempts_the_borrower);
	tcase_add_test(tc, queue_admits_only_what_the_flavor_nodes_place);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

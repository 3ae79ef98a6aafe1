/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queues.c — Kueue scenarios of standalone's queue controller
 * (kernel/controllers/queues*.c) against a real store and the running loop
 * (test_queues_offline.sh runs the same pass through `podctl schedule`):
 * a WorkloadPriorityClass orders and preempts without touching the pods'
 * priority; borrowWithinCohort preempts a lower-priority borrower of
 * another ClusterQueue while borrowing, under its maxPriorityThreshold;
 * plain pods and a pod group wait behind the gate kueue.x-k8s.io/admission
 * until admitted; Kueue's plain pod group waits for all its pods and runs as
 * one gang; stopPolicy Hold admits nothing new, HoldAndDrain evicts.
 * Four nodes of 4 TPUs each.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/store/store.h"
#include "kernel/appliance/appliance.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"
#include "standalone_fixture.h"

static void patch(const char *kind, const char *ns, const char *name, const char *text)
{
	json_t *p = json_loads(text, 0, NULL);

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pk_store_patch(st, pk_type_by_kind(kind), ns, name, PK_PATCH_MERGE, p,
					PK_SUB_MAIN, NULL, NULL),
			 0);
	json_decref(p);
}

/* Whether kind/name still holds pred after the controllers had their turns. */
static bool stays(const char *kind, const char *name, bool (*pred)(const json_t *, const void *),
		  const void *arg)
{
	json_t *o;
	bool ok;

	sleep_ms(500);
	o = get(kind, name);
	ok = pred(o, arg);
	json_decref(o);
	return ok;
}

#define PENDING_IS(kind, name, prefix)                                                             \
	ck_assert_msg(                                                                             \
	    wait_for(kind, name, annotation_is,                                                    \
		     (const char *const[]){"queue.podkernel.dev/pending-reason", prefix}),         \
	    "%s %s: pending reason is not %s", kind, name, prefix)

/* Admitted: the admission annotation, not suspended. */
static bool admitted(const json_t *o, const void *arg)
{
	(void)arg;
	return o && !json_is_true(pk_get(o, "spec.suspend")) &&
	       json_object_get(pk_get(o, "metadata.annotations"), "queue.podkernel.dev/admission");
}

static bool not_admitted(const json_t *o, const void *arg)
{
	return !admitted(o, arg);
}

static bool gated(const json_t *o, const void *arg)
{
	(void)arg;
	return o && !pk_get_string(o, "spec.nodeName") &&
	       strcmp(pk_get_string(o, "spec.schedulingGates[0].name") ?: "",
		      "kueue.x-k8s.io/admission") == 0;
}

static void flavor(void)
{
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
		    "\"metadata\": {\"name\": \"default-flavor\"}}");
}

/* A ClusterQueue of tpus TPUs (cohort: NULL for none; spec: more of its spec, JSON members). */
static void cluster_queue(const char *name, int tpus, const char *cohort, const char *spec)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\", "
		 "\"metadata\": {\"name\": \"%s\"}, \"spec\": {\"namespaceSelector\": {}, %s%s%s"
		 "%s%s\"resourceGroups\": [{\"coveredResources\": [\"google.com/tpu\"], "
		 "\"flavors\": [{\"name\": \"default-flavor\", \"resources\": [{\"name\": "
		 "\"google.com/tpu\", \"nominalQuota\": %d}]}]}]}}",
		 name, cohort ? "\"cohortName\": \"" : "", cohort ? cohort : "",
		 cohort ? "\", " : "", spec ? spec : "", spec ? ", " : "", tpus);
	create_json(buf);
}

/* A plain pod of 4 TPUs queued in user-queue (in PodGroup group, when not NULL). */
static void queued_pod(const char *name, const char *group)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"%s\", "
		 "\"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
		 "\"user-queue\"}}, \"spec\": {%s%s%s\"containers\": [{\"name\": \"c\", "
		 "\"image\": \"x\", \"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}",
		 name, group ? "\"schedulingGroup\": {\"podGroupName\": \"" : "",
		 group ? group : "", group ? "\"}, " : "");
	create_json(buf);
}

/*
 * Kueue's WorkloadPriorityClass with withinClusterQueue: LowerPriority: a
 * ClusterQueue of 8 TPUs full with a Job of class low; a Job of class high
 * preempts it and runs, its pods of their own priority (0, no
 * PriorityClass): the class orders workloads, not pods.  A Job naming a
 * class that does not exist waits, saying so.
 */
START_TEST(queue_workload_priority_class_preempts_lower)
{
	json_t *pod;

	workload_priority_class("high", 10000);
	workload_priority_class("low", 1);
	flavor();
	cluster_queue("cq", 8, NULL, "\"preemption\": {\"withinClusterQueue\": \"LowerPriority\"}");
	local_queue("user-queue", "cq");
	kueue_job("low", "user-queue", 2, "low");
	ck_assert(wait_bound("low-1"));
	kueue_job("high", "user-queue", 1, "high");
	ck_assert(wait_bound("high-0"));
	ck_assert(wait_for("Job", "low", not_admitted, NULL));
	pod = get("Pod", "high-0");
	ck_assert_int_eq(json_integer_value(pk_get(pod, "spec.priority")), 0);
	json_decref(pod);
	kueue_job("ghost", "user-queue", 1, "nope");
	PENDING_IS("Job", "ghost", "WorkloadPriorityClass nope does not exist");
}
END_TEST

/*
 * Kueue's preemption while borrowing (borrowWithinCohort): team-a and
 * team-b hold 4 TPUs each in one cohort; team-b's low-priority Job of 8
 * borrows team-a's 4.  Team-a's high-priority Job of 8 needs all 8: it must
 * borrow, so reclaiming (which stops at team-a's nominal 4) cannot admit it;
 * with borrowWithinCohort LowerPriority it preempts the borrower and runs;
 * with policy Never, or a maxPriorityThreshold under the borrower's
 * priority, it waits.
 */
static void borrow_case(const char *bwc, bool preempts)
{
	char spec[256];

	snprintf(spec, sizeof(spec),
		 "\"preemption\": {\"reclaimWithinCohort\": \"Any\", \"borrowWithinCohort\": %s}",
		 bwc);
	workload_priority_class("high", 100);
	workload_priority_class("low", 10);
	flavor();
	cluster_queue("team-a", 4, "research", spec);
	cluster_queue("team-b", 4, "research", NULL);
	local_queue("a-queue", "team-a");
	local_queue("b-queue", "team-b");
	kueue_job("b-low", "b-queue", 2, "low");
	ck_assert(wait_bound("b-low-1"));
	kueue_job("a-high", "a-queue", 2, "high");
	if (preempts) {
		ck_assert(wait_bound("a-high-1"));
		ck_assert(wait_for("Job", "b-low", not_admitted, NULL));
	} else {
		PENDING_IS("Job", "a-high", "insufficient unused quota for google.com/tpu");
		ck_assert(stays("Job", "b-low", admitted, NULL));
	}
}

START_TEST(queue_borrow_within_cohort_preempts_lower_priority)
{
	borrow_case("{\"policy\": \"LowerPriority\"}", true);
}
END_TEST

START_TEST(queue_borrow_within_cohort_never_waits)
{
	borrow_case("{\"policy\": \"Never\"}", false);
}
END_TEST

START_TEST(queue_borrow_within_cohort_respects_max_priority_threshold)
{
	borrow_case("{\"policy\": \"LowerPriority\", \"maxPriorityThreshold\": 5}", false);
}
END_TEST

START_TEST(queue_borrow_within_cohort_under_threshold_preempts)
{
	borrow_case("{\"policy\": \"LowerPriority\", \"maxPriorityThreshold\": 10}", true);
}
END_TEST

/*
 * A user's update (as the API server writes it) that removes the gate
 * kueue.x-k8s.io/admission from a pod still pending in its queue is
 * refused at spec.schedulingGates, as an admission webhook refuses it.
 */
static void user_ungate_refused(const char *name)
{
	const struct pk_store_write_opts user = {.by_user = true};
	struct pk_errors errs = {0};
	json_t *p = json_loads("{\"spec\": {\"schedulingGates\": null}}", 0, NULL);

	ck_assert_int_eq(pk_store_patch_opts(st, &pk_type_pod, "default", name, PK_PATCH_MERGE, p,
					     PK_SUB_MAIN, &user, &errs, NULL),
			 -EINVAL);
	ck_assert_msg(errs.n && strcmp(errs.msg[0], "spec.schedulingGates: Forbidden: the gate "
						    "kueue.x-k8s.io/admission of a queued pod is "
						    "removed by the queue controller when its "
						    "ClusterQueue admits it") == 0,
		      "%s", errs.n ? errs.msg[0] : "no error");
	pk_errors_clear(&errs);
	json_decref(p);
}

/*
 * Kueue's plain pods: pods labelled with a LocalQueue are created gated
 * (kueue.x-k8s.io/admission); a ClusterQueue of 8 TPUs admits two of 4
 * (ungated, annotated, bound) and holds the third, gated, until one of the
 * first goes; its user may not remove the gate meanwhile.
 */
START_TEST(queue_plain_pods_wait_gated_until_admitted)
{
	flavor();
	cluster_queue("cq", 8, NULL, NULL);
	local_queue("user-queue", "cq");
	queued_pod("p1", NULL);
	ck_assert(wait_bound("p1"));
	queued_pod("p2", NULL);
	ck_assert(wait_bound("p2"));
	ck_assert(
	    wait_for("Pod", "p2", annotation_is,
		     (const char *const[]){"queue.podkernel.dev/admission", "cq/default-flavor"}));
	queued_pod("p3", NULL);
	PENDING_IS("Pod", "p3", "insufficient unused quota for google.com/tpu");
	ck_assert(stays("Pod", "p3", gated, NULL));
	user_ungate_refused("p3");
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "p1", NULL, NULL, NULL),
			 0);
	ck_assert(wait_bound("p3"));
}
END_TEST

/*
 * A pod group is one unit: a gang PodGroup of two pods of 4 TPUs waits, both
 * pods gated, while a lone pod holds 4 of the 8; when it goes, both are
 * admitted together and placed.
 */
START_TEST(queue_pod_group_is_admitted_whole)
{
	flavor();
	cluster_queue("cq", 8, NULL, NULL);
	local_queue("user-queue", "cq");
	queued_pod("holder", NULL);
	ck_assert(wait_bound("holder"));
	create_json("{\"apiVersion\": \"scheduling.k8s.io/v1alpha3\", \"kind\": \"PodGroup\", "
		    "\"metadata\": {\"name\": \"g\", \"namespace\": \"default\"}, \"spec\": "
		    "{\"schedulingPolicy\": {\"gang\": {\"minCount\": 2}}}}");
	queued_pod("g-0", "g");
	queued_pod("g-1", "g");
	PENDING_IS("Pod", "g-0",
		   "insufficient unused quota for google.com/tpu in flavor "
		   "default-flavor of ClusterQueue cq, 4 more needed");
	PENDING_IS("Pod", "g-1", "insufficient unused quota");
	ck_assert(stays("Pod", "g-1", gated, NULL));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "holder", NULL, NULL, NULL), 0);
	ck_assert(wait_bound("g-0"));
	ck_assert(wait_bound("g-1"));
}
END_TEST

/* A plain pod of 4 TPUs of Kueue's pod group group of total pods, queued in user-queue. */
static void kueue_group_pod(const char *name, const char *group, int total)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"%s\", "
		 "\"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
		 "\"user-queue\", \"kueue.x-k8s.io/pod-group-name\": \"%s\"}, \"annotations\": "
		 "{\"kueue.x-k8s.io/pod-group-total-count\": \"%d\"}}, \"spec\": {\"containers\": "
		 "[{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": "
		 "{\"google.com/tpu\": \"4\"}}}]}}",
		 name, group, total);
	create_json(buf);
}

static bool gang_of_two(const json_t *o, const void *arg)
{
	(void)arg;
	return o && json_integer_value(pk_get(o, "spec.schedulingPolicy.gang.minCount")) == 2;
}

/*
 * Kueue's plain pod group (kueue.x-k8s.io/pod-group-name and
 * pod-group-total-count): the first of two pods waits, gated, for the
 * second; then both are admitted together, placed as the gang of the
 * PodGroup of the group's name, which the controller made and deletes once
 * its pods are gone.  The group
 * name of a queued pod does not change.
 */
START_TEST(queue_kueue_pod_group_waits_for_all_its_pods)
{
	struct pk_errors errs = {0};
	json_t *p;

	flavor();
	cluster_queue("cq", 8, NULL, NULL);
	local_queue("user-queue", "cq");
	kueue_group_pod("sample-a", "sample-group", 2);
	PENDING_IS("Pod", "sample-a",
		   "pod group sample-group: 1 of its 2 pods exist "
		   "(kueue.x-k8s.io/pod-group-total-count); waiting for the rest");
	ck_assert(stays("Pod", "sample-a", gated, NULL));
	p = json_loads(
	    "{\"metadata\": {\"labels\": {\"kueue.x-k8s.io/pod-group-name\": \"other\"}}}", 0,
	    NULL);
	ck_assert_int_eq(pk_store_patch(st, &pk_type_pod, "default", "sample-a", PK_PATCH_MERGE, p,
					PK_SUB_MAIN, &errs, NULL),
			 -EINVAL);
	ck_assert_msg(errs.n &&
			  strstr(errs.msg[0], "metadata.labels[kueue.x-k8s.io/pod-group-name]: "
					      "Invalid value: \"other\": field is immutable"),
		      "%s", errs.n ? errs.msg[0] : "no error");
	pk_errors_clear(&errs);
	json_decref(p);
	kueue_group_pod("sample-b", "sample-group", 2);
	ck_assert(wait_bound("sample-a"));
	ck_assert(wait_bound("sample-b"));
	ck_assert(wait_for("PodGroup", "sample-group", gang_of_two, NULL));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "sample-a", NULL, NULL, NULL), 0);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_pod, "default", "sample-b", NULL, NULL, NULL), 0);
	ck_assert(wait_for("PodGroup", "sample-group", is_gone, NULL));
}
END_TEST

static bool condition_reason_is(const json_t *o, const void *reason)
{
	return o &&
	       strcmp(pk_get_string(pk_condition_get(o, "Active"), "reason") ?: "", reason) == 0;
}

/*
 * Kueue's stopPolicy: a ClusterQueue on Hold admits nothing (Active False,
 * Stopped) until it is resumed (None); on HoldAndDrain it also evicts what
 * it admitted, which waits again.  A LocalQueue on Hold holds its own.
 */
START_TEST(queue_stop_policy_holds_and_drains)
{
	flavor();
	cluster_queue("cq", 8, NULL, "\"stopPolicy\": \"Hold\"");
	local_queue("user-queue", "cq");
	kueue_job("j", "user-queue", 1, "none");
	ck_assert(wait_for("ClusterQueue", "cq", condition_reason_is, "Stopped"));
	PENDING_IS("Job", "j", "WorkloadPriorityClass none does not exist");
	workload_priority_class("none", 0);
	PENDING_IS("Job", "j", "ClusterQueue cq is stopped");
	patch("ClusterQueue", NULL, "cq", "{\"spec\": {\"stopPolicy\": \"None\"}}");
	ck_assert(wait_bound("j-0"));
	ck_assert(wait_for("ClusterQueue", "cq", condition_reason_is, "Ready"));
	patch("ClusterQueue", NULL, "cq", "{\"spec\": {\"stopPolicy\": \"HoldAndDrain\"}}");
	ck_assert(wait_for("Job", "j", not_admitted, NULL));
	ck_assert(wait_for("Pod", "j-0", is_gone, NULL));
	PENDING_IS("Job", "j", "ClusterQueue cq is stopped");
	patch("LocalQueue", "default", "user-queue", "{\"spec\": {\"stopPolicy\": \"Hold\"}}");
	patch("ClusterQueue", NULL, "cq", "{\"spec\": {\"stopPolicy\": \"None\"}}");
	PENDING_IS("Job", "j", "LocalQueue default/user-queue is stopped");
	ck_assert(wait_for("LocalQueue", "user-queue", condition_reason_is, "Stopped"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-queues");
	TCase *tc = tcase_create("queues");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, queue_workload_priority_class_preempts_lower);
	tcase_add_test(tc, queue_borrow_within_cohort_preempts_lower_priority);
	tcase_add_test(tc, queue_borrow_within_cohort_never_waits);
	tcase_add_test(tc, queue_borrow_within_cohort_respects_max_priority_threshold);
	tcase_add_test(tc, queue_borrow_within_cohort_under_threshold_preempts);
	tcase_add_test(tc, queue_plain_pods_wait_gated_until_admitted);
	tcase_add_test(tc, queue_pod_group_is_admitted_whole);
	tcase_add_test(tc, queue_kueue_pod_group_waits_for_all_its_pods);
	tcase_add_test(tc, queue_stop_policy_holds_and_drains);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

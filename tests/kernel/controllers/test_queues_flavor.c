/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queues_flavor.c — standalone's queue controller picks a flavor of
 * each resource group as Kueue's flavor assigner does under a
 * ClusterQueue's spec.flavorFungibility (kernel/controllers/queues_flavor.c),
 * against a real store and the running loop: whenCanBorrow TryNextFlavor
 * passes over a flavor that borrows for a later one that does not (Kueue's
 * flavorassigner_test case "when borrowing while preemption is needed for
 * flavor one; WhenCanBorrow=TryNextFlavor"), MayStopSearch (the default)
 * borrows in the first; whenCanPreempt MayStopSearch preempts in the first
 * flavor where preempting makes room, TryNextFlavor (the default) takes a
 * later flavor that fits, and when none fits prefers a flavor where it
 * reclaims from the cohort over one where it preempts in its own
 * ClusterQueue; of flavors that all borrow, TryNextFlavor takes
 * the one nearest in the cohort tree; a flavor whose nodes cannot place the
 * workload is passed over.  Four nodes of 4 TPUs each (test_queues_fungibility.sh runs
 * the borrowing case offline and in the simulator).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/appliance/appliance.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"
#include "standalone_fixture.h"

#define ADMITTED_BY(kind, name, value)                                                             \
	ck_assert_msg(wait_for(kind, name, annotation_is,                                          \
			       (const char *const[]){"queue.podkernel.dev/admission", value}),     \
		      "%s %s: not admitted by %s", kind, name, value)

static bool not_admitted(const json_t *o, const void *arg)
{
	(void)arg;
	return !json_object_get(pk_get(o, "metadata.annotations"), "queue.podkernel.dev/admission");
}

/* A ResourceFlavor (labels: its spec.nodeLabels, JSON, or NULL). */
static void flavor(const char *name, const char *labels)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
		 "\"metadata\": {\"name\": \"%s\"}, \"spec\": {%s%s}}",
		 name, labels ? "\"nodeLabels\": " : "", labels ? labels : "");
	create_json(buf);
}

/*
 * A ClusterQueue covering TPUs with flavors (JSON, the members of
 * resourceGroups[0]) and more of its spec (JSON members, or NULL).
 */
static void cluster_queue(const char *name, const char *flavors, const char *spec)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\", "
		 "\"metadata\": {\"name\": \"%s\"}, \"spec\": {\"namespaceSelector\": {}, %s%s"
		 "\"resourceGroups\": [{\"coveredResources\": [\"google.com/tpu\"], "
		 "\"flavors\": [%s]}]}}",
		 name, spec ? spec : "", spec ? ", " : "", flavors);
	create_json(buf);
}

/* A flavor of a ClusterQueue with nominal TPUs (and a borrowingLimit when >= 0), JSON. */
static const char *quota(char *buf, size_t n, const char *flavor, int nominal, int borrowing)
{
	char limit[64] = "";

	if (borrowing >= 0)
		snprintf(limit, sizeof(limit), ", \"borrowingLimit\": %d", borrowing);
	snprintf(buf, n,
		 "{\"name\": \"%s\", \"resources\": [{\"name\": \"google.com/tpu\", "
		 "\"nominalQuota\": %d%s}]}",
		 flavor, nominal, limit);
	return buf;
}

/*
 * Kueue's flavorassigner_test "when borrowing while preemption is needed
 * for flavor one; WhenCanBorrow=TryNextFlavor": flavor one has no nominal
 * quota of the ClusterQueue's own (it borrows up to 8 from the lender's 8
 * in the cohort), flavor two has 8.  With TryNextFlavor the Job of 8 goes
 * to two, without borrowing; the same ClusterQueue with the default
 * (MayStopSearch) borrows in one.
 */
START_TEST(queue_when_can_borrow_try_next_flavor)
{
	char one[256], two[256], flavors[600];

	flavor("one", NULL);
	flavor("two", NULL);
	snprintf(flavors, sizeof(flavors), "%s, %s", quota(one, sizeof(one), "one", 0, 8),
		 quota(two, sizeof(two), "two", 8, -1));
	cluster_queue("next", flavors,
		      "\"cohortName\": \"c\", \"flavorFungibility\": {\"whenCanBorrow\": "
		      "\"TryNextFlavor\", \"whenCanPreempt\": \"MayStopSearch\"}");
	cluster_queue("stop", flavors, "\"cohortName\": \"c\"");
	cluster_queue("lender", quota(one, sizeof(one), "one", 8, -1), "\"cohortName\": \"c\"");
	local_queue("next-queue", "next");
	local_queue("stop-queue", "stop");
	kueue_job("tries", "next-queue", 2, NULL);
	ADMITTED_BY("Job", "tries", "next/two");
	ck_assert(wait_bound("tries-1"));
	kueue_job("borrows", "stop-queue", 2, NULL);
	ADMITTED_BY("Job", "borrows", "stop/one");
	ck_assert(wait_bound("borrows-1"));
}
END_TEST

/*
 * whenCanPreempt: a ClusterQueue with 4 TPUs in flavor one and 8 in two
 * (withinClusterQueue: LowerPriority), a low-priority Job of 4 admitted in
 * one.  A high-priority Job of 4: with TryNextFlavor (the default) it goes
 * to two and nothing is preempted; with MayStopSearch it preempts the low
 * one in one (which then runs in two).
 */
static void preempt_case(const char *fungibility, const char *high_in, const char *low_in)
{
	char one[256], two[256], flavors[600], spec[256];

	workload_priority_class("high", 100);
	workload_priority_class("low", 1);
	flavor("one", NULL);
	flavor("two", NULL);
	snprintf(flavors, sizeof(flavors), "%s, %s", quota(one, sizeof(one), "one", 4, -1),
		 quota(two, sizeof(two), "two", 8, -1));
	snprintf(spec, sizeof(spec),
		 "\"preemption\": {\"withinClusterQueue\": \"LowerPriority\"}%s", fungibility);
	cluster_queue("cq", flavors, spec);
	local_queue("user-queue", "cq");
	kueue_job("low", "user-queue", 1, "low");
	ADMITTED_BY("Job", "low", "cq/one");
	ck_assert(wait_bound("low-0"));
	kueue_job("high", "user-queue", 1, "high");
	ADMITTED_BY("Job", "high", high_in);
	ck_assert(wait_bound("high-0"));
	ADMITTED_BY("Job", "low", low_in);
}

START_TEST(queue_when_can_preempt_try_next_flavor)
{
	preempt_case("", "cq/two", "cq/one");
}
END_TEST

START_TEST(queue_when_can_preempt_may_stop_search)
{
	preempt_case(", \"flavorFungibility\": {\"whenCanPreempt\": \"MayStopSearch\"}", "cq/one",
		     "cq/two");
}
END_TEST

/*
 * Kueue's flavorassigner_test TestReclaimBeforePriorityPreemption, case
 * "Select first flavor where gpu reclamation is possible": whenCanPreempt
 * TryNextFlavor, no flavor fits, and of the flavors where preempting makes
 * room the first where it only reclaims from another ClusterQueue of the
 * cohort is taken over one where it preempts in its own.  ClusterQueue cq
 * has 4 TPUs in each of uno, due and tre, "other" none (cohort c); cq's
 * low Job fills uno, other's two low Jobs borrow due and tre (the one in
 * tre created last, the first candidate by age).  cq's high Job: uno
 * would preempt cq's own, due and tre reclaim; it goes to due, reclaiming
 * the Job there, and tre's is left alone.
 */
START_TEST(queue_when_can_preempt_prefers_reclaim)
{
	char q[3][256], flavors[900];

	workload_priority_class("high", 100);
	workload_priority_class("low", 1);
	flavor("uno", NULL);
	flavor("due", NULL);
	flavor("tre", NULL);
	snprintf(flavors, sizeof(flavors), "%s, %s, %s", quota(q[0], sizeof(q[0]), "uno", 4, -1),
		 quota(q[1], sizeof(q[1]), "due", 4, -1), quota(q[2], sizeof(q[2]), "tre", 4, -1));
	cluster_queue("cq", flavors,
		      "\"cohortName\": \"c\", \"preemption\": {\"withinClusterQueue\": "
		      "\"LowerPriority\", \"reclaimWithinCohort\": \"LowerPriority\"}");
	snprintf(flavors, sizeof(flavors), "%s, %s, %s", quota(q[0], sizeof(q[0]), "uno", 0, -1),
		 quota(q[1], sizeof(q[1]), "due", 0, -1), quota(q[2], sizeof(q[2]), "tre", 0, -1));
	cluster_queue("other", flavors, "\"cohortName\": \"c\"");
	local_queue("user-queue", "cq");
	local_queue("other-queue", "other");
	kueue_job("own", "user-queue", 1, "low");
	ADMITTED_BY("Job", "own", "cq/uno");
	kueue_job("lent-due", "other-queue", 1, "low");
	ADMITTED_BY("Job", "lent-due", "other/due");
	sleep(1); /* created a second later: the newest candidate */
	kueue_job("lent-tre", "other-queue", 1, "low");
	ADMITTED_BY("Job", "lent-tre", "other/tre");
	kueue_job("high", "user-queue", 1, "high");
	ADMITTED_BY("Job", "high", "cq/due");
	ck_assert(wait_bound("high-0"));
	ADMITTED_BY("Job", "own", "cq/uno");
	ADMITTED_BY("Job", "lent-tre", "other/tre");
	ck_assert_msg(wait_for("Job", "lent-due", not_admitted, NULL),
		      "lent-due kept its admission");
}
END_TEST

/*
 * Hierarchical cohorts: when every flavor must borrow, TryNextFlavor takes
 * the one that borrows least far up the tree, as Kueue ranks borrowing by
 * the height of the lowest subtree that holds it.  ClusterQueue cq, under
 * Cohort team under Cohort org, has no quota of its own; flavor one's 8
 * TPUs are far's, a ClusterQueue right under org (borrowed at the height
 * of org, 2), flavor two's are mate's, in team (the height of team, 1): the
 * Job goes to two.  With MayStopSearch it would borrow in one.
 */
START_TEST(queue_try_next_flavor_borrows_nearest)
{
	char one[256], two[256], flavors[600];

	flavor("one", NULL);
	flavor("two", NULL);
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Cohort\", "
		    "\"metadata\": {\"name\": \"org\"}}");
	create_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Cohort\", "
		    "\"metadata\": {\"name\": \"team\"}, \"spec\": {\"parentName\": \"org\"}}");
	snprintf(flavors, sizeof(flavors), "%s, %s", quota(one, sizeof(one), "one", 0, -1),
		 quota(two, sizeof(two), "two", 0, -1));
	cluster_queue("cq", flavors,
		      "\"cohortName\": \"team\", \"flavorFungibility\": {\"whenCanBorrow\": "
		      "\"TryNextFlavor\"}");
	cluster_queue("mate", quota(two, sizeof(two), "two", 8, -1), "\"cohortName\": \"team\"");
	cluster_queue("far", quota(one, sizeof(one), "one", 8, -1), "\"cohortName\": \"org\"");
	local_queue("user-queue", "cq");
	kueue_job("near", "user-queue", 2, NULL);
	ADMITTED_BY("Job", "near", "cq/two");
	ck_assert(wait_bound("near-1"));
}
END_TEST

/*
 * Admission is quota and placement: flavor one has quota for the Job but
 * selects nodes that do not exist, so its pods cannot be placed there; the
 * next flavor is tried and takes it.
 */
START_TEST(queue_flavor_that_cannot_place_is_passed_over)
{
	char one[256], two[256], flavors[600];

	flavor("one", "{\"pool\": \"missing\"}");
	flavor("two", NULL);
	snprintf(flavors, sizeof(flavors), "%s, %s", quota(one, sizeof(one), "one", 16, -1),
		 quota(two, sizeof(two), "two", 16, -1));
	cluster_queue("cq", flavors, NULL);
	local_queue("user-queue", "cq");
	kueue_job("j", "user-queue", 2, NULL);
	ADMITTED_BY("Job", "j", "cq/two");
	ck_assert(wait_bound("j-1"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-queues-flavor");
	TCase *tc = tcase_create("flavor");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, queue_when_can_borrow_try_next_flavor);
	tcase_add_test(tc, queue_when_can_preempt_try_next_flavor);
	tcase_add_test(tc, queue_when_can_preempt_may_stop_search);
	tcase_add_test(tc, queue_when_can_preempt_prefers_reclaim);
	tcase_add_test(tc, queue_try_next_flavor_borrows_nearest);
	tcase_add_test(tc, queue_flavor_that_cannot_place_is_passed_over);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

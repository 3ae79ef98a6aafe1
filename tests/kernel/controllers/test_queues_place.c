/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queues_place.c — the placement half of admission
 * (kernel/controllers/queues_place.c), in process on a real store: a Job
 * is placed only where the scheduling core binds all its pods on the
 * cluster as it is, what a pass placed counts for its next try, the pods
 * of workloads preempted for it are left out; a workload as admitted gets
 * its flavors' node labels and tolerations in every pod template; a flavor
 * whose taints its pods do not tolerate is refused, as Kueue refuses it;
 * with a flavor that names a Topology, Kueue's pod set annotations pin the
 * workload to one domain (required) or the lowest level that has one
 * (preferred), and what cannot be had is said.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/controllers/controllers-internal.h"

static char dir[256];
static struct pk_store *st;

static json_t *load(const char *text)
{
	json_t *o = json_loads(text, 0, NULL);

	ck_assert_ptr_nonnull(o);
	return o;
}

static void create(const char *text)
{
	json_t *o = load(text);

	ck_assert_int_eq(pk_store_create(st, o, NULL, NULL), 0);
	json_decref(o);
}

static void setup(void)
{
	char err[256];

	snprintf(dir, sizeof(dir), "/tmp/pk-queues-place-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	for (int i = 0; i < 2; i++) {
		char buf[300];

		snprintf(buf, sizeof(buf),
			 "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
			 "\"n%d\"}, \"status\": {\"allocatable\": {\"cpu\": \"8\", "
			 "\"google.com/tpu\": \"4\", \"pods\": \"110\"}}}",
			 i);
		create(buf);
	}
	/* holder: a running Job's pod, all of n0's TPUs */
	create("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"holder-0\", "
	       "\"namespace\": \"default\", \"labels\": {\"job-name\": \"holder\"}}, \"spec\": "
	       "{\"nodeName\": \"n0\", \"containers\": [{\"name\": \"c\", \"image\": \"x\", "
	       "\"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}");
}

static void teardown(void)
{
	char cmd[300];

	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A Job of n pods of 4 TPUs, as admitted. */
static json_t *job(const char *name, int n)
{
	char buf[700];
	json_t *o, *copy;

	snprintf(
	    buf, sizeof(buf),
	    "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": \"%s\", "
	    "\"namespace\": \"default\", \"uid\": \"u-%s\"}, \"spec\": {\"parallelism\": %d, "
	    "\"completions\": %d, \"suspend\": true, \"template\": {\"spec\": {\"containers\": "
	    "[{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": "
	    "{\"google.com/tpu\": \"4\"}}}]}}}}",
	    name, name, n, n);
	o = load(buf);
	copy = q_admitted_copy(o, PK_KIND_JOB, "cq/default", NULL);
	json_decref(o);
	ck_assert_ptr_nonnull(copy);
	return copy;
}

START_TEST(placed_only_when_every_pod_binds)
{
	struct q_place *p = NULL;
	json_t *none = json_object(), *gone = json_pack("{s:b}", "Job/default/holder", 1);
	json_t *two = job("two", 2), *one = job("one", 1), *again = job("again", 1);
	char why[512] = "";

	ck_assert_int_eq(q_place_new(st, &p), 0);
	/* n1 is free, n0 held: two pods of 4 do not fit, one does */
	ck_assert_int_eq(q_place_try(p, two, none, why, sizeof(why)), 0);
	ck_assert_msg(strncmp(why, "pod two-", 8) == 0, "why: %s", why);
	ck_assert_int_eq(q_place_try(p, one, none, why, sizeof(why)), 1);
	/* what the pass placed counts: n1 is taken now */
	ck_assert_int_eq(q_place_try(p, again, none, why, sizeof(why)), 0);
	/* with holder preempted for it, n0 is free */
	ck_assert_int_eq(q_place_try(p, again, gone, why, sizeof(why)), 1);
	q_place_free(p);
	json_decref(none);
	json_decref(gone);
	json_decref(two);
	json_decref(one);
	json_decref(again);
}
END_TEST

START_TEST(admitted_copy_carries_the_flavor)
{
	json_t *js = load(
	    "{\"apiVersion\": \"jobset.x-k8s.io/v1alpha2\", \"kind\": \"JobSet\", \"metadata\": "
	    "{\"name\": \"js\", \"namespace\": \"default\", \"annotations\": "
	    "{\"queue.podkernel.dev/queue-order\": \"cq 0 - JobSet/default/js\"}}, "
	    "\"spec\": {\"suspend\": true, "
	    "\"replicatedJobs\": [{\"name\": \"w\", \"template\": {\"spec\": {\"template\": "
	    "{\"spec\": {\"tolerations\": [{\"key\": \"a\", \"operator\": \"Exists\"}], "
	    "\"containers\": [{\"name\": \"c\", \"image\": \"x\"}]}}}}}]}}");
	json_t *flavors = json_pack("[{s:{s:s},s:{s:{s:s},s:[{s:s,s:s}]}}]", "metadata", "name",
				    "spot", "spec", "nodeLabels", "pool", "spot", "tolerations",
				    "key", "spot", "operator", "Exists");
	json_t *c = q_admitted_copy(js, PK_KIND_JOBSET, "cq/spot", flavors);
	const json_t *spec = pk_get(json_array_get(pk_get(c, "spec.replicatedJobs"), 0),
				    "template.spec.template.spec");

	ck_assert_ptr_nonnull(c);
	ck_assert(!json_is_true(pk_get(c, "spec.suspend")));
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(c, "metadata.annotations"),
							   "queue.podkernel.dev/admission")),
			 "cq/spot");
	ck_assert_ptr_null(
	    json_object_get(pk_get(c, "metadata.annotations"), "queue.podkernel.dev/queue-order"));
	ck_assert_str_eq(pk_get_string(spec, "nodeSelector.pool"), "spot");
	ck_assert_uint_eq(json_array_size(json_object_get(spec, "tolerations")), 2);
	ck_assert_str_eq(
	    pk_get_string(json_array_get(json_object_get(spec, "tolerations"), 1), "key"), "spot");
	json_decref(c);
	json_decref(flavors);
	json_decref(js);
}
END_TEST

START_TEST(untolerated_flavor_taints_refuse_the_flavor)
{
	json_t *j = job("j", 1);
	json_t *spot = load("{\"metadata\": {\"name\": \"spot\"}, \"spec\": {\"nodeTaints\": "
			    "[{\"key\": \"spot\", \"value\": \"true\", \"effect\": "
			    "\"NoSchedule\"}, {\"key\": \"soft\", \"effect\": "
			    "\"PreferNoSchedule\"}]}}");
	char why[256] = "";

	ck_assert(!q_flavor_tolerated(j, PK_KIND_JOB, spot, why, sizeof(why)));
	ck_assert_str_eq(why, "untolerated taint spot=true:NoSchedule of flavor spot");
	/* the flavor's own tolerations count, as Kueue adds them */
	json_object_set_new(
	    json_object_get(spot, "spec"), "tolerations",
	    json_pack("[{s:s,s:s,s:s}]", "key", "spot", "operator", "Equal", "value", "true"));
	ck_assert(q_flavor_tolerated(j, PK_KIND_JOB, spot, why, sizeof(why)));
	json_object_del(json_object_get(spot, "spec"), "tolerations");
	/* so do the pods' (an empty key with Exists tolerates everything) */
	json_object_set_new(pk_get(j, "spec.template.spec"), "tolerations",
			    json_pack("[{s:s}]", "operator", "Exists"));
	ck_assert(q_flavor_tolerated(j, PK_KIND_JOB, spot, why, sizeof(why)));
	json_decref(spot);
	json_decref(j);
}
END_TEST

/* A rack of two hosts of 4 TPUs, in the flavor's pool, and the Topology rack > host. */
static void tas_cluster(void)
{
	for (int r = 0; r < 2; r++)
		for (int h = 0; h < 2; h++) {
			char buf[600];

			snprintf(
			    buf, sizeof(buf),
			    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": "
			    "{\"name\": \"r%d-h%d\", \"labels\": {\"pool\": \"tas\", \"rack\": "
			    "\"r%d\", \"kubernetes.io/hostname\": \"r%d-h%d\"}}, \"status\": "
			    "{\"allocatable\": {\"cpu\": \"8\", \"google.com/tpu\": \"4\", "
			    "\"pods\": \"110\"}}}",
			    r, h, r, r, h);
			create(buf);
		}
	create("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Topology\", "
	       "\"metadata\": {\"name\": \"default\"}, \"spec\": {\"levels\": [{\"nodeLabel\": "
	       "\"rack\"}, {\"nodeLabel\": \"kubernetes.io/hostname\"}]}}");
	/* r0-h0 is held */
	create("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"r0-0\", "
	       "\"namespace\": \"default\", \"labels\": {\"job-name\": \"r0\"}}, \"spec\": "
	       "{\"nodeName\": \"r0-h0\", \"containers\": [{\"name\": \"c\", \"image\": \"x\", "
	       "\"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}");
}

/* A Job of n pods of 4 TPUs whose template asks annotation: level, as admitted in flavors. */
static json_t *tas_job(const char *name, int n, const char *annotation, const char *level,
		       const json_t *flavors)
{
	json_t *j = job(name, n), *copy;

	if (annotation)
		json_object_set_new(json_object_get(pk_get(j, "spec"), "template"), "metadata",
				    json_pack("{s:{s:s}}", "annotations", annotation, level));
	json_object_del(pk_get(j, "metadata.annotations"), "queue.podkernel.dev/admission");
	copy = q_admitted_copy(j, PK_KIND_JOB, "cq/tas", flavors);
	json_decref(j);
	return copy;
}

static const char *selected(const json_t *job, const char *key)
{
	return json_string_value(
	    json_object_get(pk_get(job, "spec.template.spec.nodeSelector"), key));
}

#define REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define FLAVOR(topo)                                                                               \
	"[{\"metadata\": {\"name\": \"tas\"}, \"spec\": {\"nodeLabels\": "                         \
	"{\"pool\": \"tas\"}" topo "}}]"

START_TEST(tas_required_pins_one_domain)
{
	struct q_place *p = NULL;
	json_t *none = json_object(), *flavors = load(FLAVOR(", \"topologyName\": \"default\""));
	json_t *a = tas_job("a", 2, REQUIRED, "rack", flavors);
	json_t *b = tas_job("b", 2, REQUIRED, "rack", flavors);
	json_t *c = tas_job("c", 1, PREFERRED, "kubernetes.io/hostname", flavors);
	json_t *odd = tas_job("odd", 1, REQUIRED, "zone", flavors);
	char why[512] = "";

	tas_cluster();
	ck_assert_int_eq(q_place_new(st, &p), 0);
	/* rack r0 has one host free: a's two pods go to r1 */
	ck_assert_int_eq(q_place_admit(p, &a, PK_KIND_JOB, flavors, none, why, sizeof(why)), 1);
	ck_assert_str_eq(selected(a, "rack"), "r1");
	ck_assert_str_eq(selected(a, "pool"), "tas");
	/* no rack has two hosts free now */
	ck_assert_int_eq(q_place_admit(p, &b, PK_KIND_JOB, flavors, none, why, sizeof(why)), 0);
	ck_assert_msg(
	    strncmp(why, "pod set b: no domain of topology level rack places it (pod b-", 61) == 0,
	    "why: %s", why);
	ck_assert_ptr_null(selected(b, "rack"));
	/* preferred host: the one host left, named from the top level down */
	ck_assert_int_eq(q_place_admit(p, &c, PK_KIND_JOB, flavors, none, why, sizeof(why)), 1);
	ck_assert_str_eq(selected(c, "rack"), "r0");
	ck_assert_str_eq(selected(c, "kubernetes.io/hostname"), "r0-h1");
	ck_assert_int_eq(q_place_admit(p, &odd, PK_KIND_JOB, flavors, none, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "pod set odd: zone is not a level of the flavor's Topology");
	q_place_free(p);
	json_decref(none);
	json_decref(flavors);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(odd);
}
END_TEST

START_TEST(tas_preferred_falls_back_and_refusals)
{
	struct q_place *p = NULL;
	json_t *none = json_object(), *flavors = load(FLAVOR(", \"topologyName\": \"default\""));
	json_t *plain = load(FLAVOR("")), *missing = load(FLAVOR(", \"topologyName\": \"nope\""));
	json_t *spread = tas_job("spread", 3, PREFERRED, "rack", flavors);
	json_t *req = tas_job("req", 1, REQUIRED, "rack", plain);
	json_t *slice = tas_job("slice", 1, "kueue.x-k8s.io/podset-slice-size", "2", flavors);
	char why[512] = "";

	tas_cluster();
	ck_assert_int_eq(q_place_new(st, &p), 0);
	/* three hosts are free but no rack has three: preferred, spread anywhere */
	ck_assert_int_eq(q_place_admit(p, &spread, PK_KIND_JOB, flavors, none, why, sizeof(why)),
			 1);
	ck_assert_ptr_null(selected(spread, "rack"));
	ck_assert_int_eq(q_place_admit(p, &req, PK_KIND_JOB, plain, none, why, sizeof(why)), 0);
	ck_assert_str_eq(why,
			 "pod set req asks for topology rack but its flavor has no topologyName");
	ck_assert_int_eq(q_place_admit(p, &req, PK_KIND_JOB, missing, none, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "Topology nope of flavor tas not found");
	ck_assert_int_eq(q_place_admit(p, &slice, PK_KIND_JOB, flavors, none, why, sizeof(why)), 0);
	ck_assert_str_eq(why,
			 "pod set slice: metadata.annotations[kueue.x-k8s.io/podset-slice-size]: "
			 "not implemented");
	q_place_free(p);
	json_decref(none);
	json_decref(flavors);
	json_decref(plain);
	json_decref(missing);
	json_decref(spread);
	json_decref(req);
	json_decref(slice);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-queues-place");
	TCase *tc = tcase_create("place");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, placed_only_when_every_pod_binds);
	tcase_add_test(tc, admitted_copy_carries_the_flavor);
	tcase_add_test(tc, untolerated_flavor_taints_refuse_the_flavor);
	tcase_add_test(tc, tas_required_pins_one_domain);
	tcase_add_test(tc, tas_preferred_falls_back_and_refusals);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

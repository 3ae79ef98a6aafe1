/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gc_scale.c — the controllers' internal listers see every object, past
 * any page size: with 10,050 pods in another namespace (sorted first), a
 * deleted Job's pods are still found and removed by the garbage collector.
 * They used to be cut at the store's 10,000-item page and left behind.
 * Once running, collecting one Job's pod reads none of the others.
 * Foreground deletion finishes on long ownership chains and on cycles.
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
#include "kernel/controllers/controllers.h"
#include "kernel/builder/builder.h"

/* The store as podkerneld opens it: Jobs and JobSets admitted by the builder. */
static const struct pk_store_open_opts store_opts = {.admission = wb_admission,
						     .nadmission = WB_ADMISSION_N};

#define FILLER 10050

static char dir[256];
static struct pk_store *st;
static struct pk_appliance *app;

static void setup(void)
{
	char err[256];

	/* tmpfs when there is one: ten thousand commits */
	snprintf(dir, sizeof(dir), "/dev/shm/pk-gc-scale-XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/pk-gc-scale-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
	}
	ck_assert_int_eq(pk_store_open_opts(dir, &store_opts, &st, err, sizeof(err)), 0);
}

static void teardown(void)
{
	char cmd[300];

	pk_appliance_stop(app);
	app = NULL;
	pk_store_shutdown(st);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void create(json_t *obj)
{
	struct pk_errors errs = {0};
	int r = pk_store_create(st, obj, &errs, NULL);

	for (size_t i = 0; r < 0 && i < errs.n; i++)
		fprintf(stderr, "create: %s\n", errs.msg[i]);
	pk_errors_clear(&errs);
	json_decref(obj);
	ck_assert_int_eq(r, 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static bool exists(const char *name)
{
	json_t *o = NULL;
	bool there = pk_store_get(st, &pk_type_pod, "default", name, &o) == 0;

	json_decref(o);
	return there;
}

/* Wait up to 30 s for pod name in default to be (or stop being) there. */
static bool wait_pod(const char *name, bool there)
{
	for (int i = 0; i < 600; i++) {
		if (exists(name) == there)
			return true;
		sleep_ms(50);
	}
	return false;
}

START_TEST(gc_finds_pods_past_ten_thousand)
{
	create(json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s}}}", "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", "filler", "status", "allocatable", "cpu", "100000",
			 "pods", "20000"));
	create(json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s,s:s}}}", "apiVersion", "v1", "kind",
			 "Node", "metadata", "name", "n1", "status", "allocatable", "cpu", "8",
			 "google.com/tpu", "4", "pods", "110"));
	/* Bound already (nothing to schedule), in a namespace that lists first. */
	for (int i = 0; i < FILLER; i++) {
		char name[32];

		snprintf(name, sizeof(name), "filler-%05d", i);
		create(json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:[{s:s,s:s}]}}", "apiVersion", "v1",
				 "kind", "Pod", "metadata", "name", name, "namespace", "aaa",
				 "spec", "nodeName", "filler", "containers", "name", "c", "image",
				 "x"));
	}
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	char err[256] = "";

	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	create(
	    json_loads("{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": "
		       "{\"name\": \"train\", \"namespace\": \"default\"}, \"spec\": "
		       "{\"parallelism\": 1, \"template\": {\"spec\": {\"containers\": [{\"name\": "
		       "\"c\", \"image\": \"x\", \"resources\": {\"requests\": "
		       "{\"google.com/tpu\": \"4\"}}}]}}}}",
		       0, NULL));
	ck_assert(wait_pod("train-0", true));
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "train", NULL, NULL, NULL), 0);
	ck_assert_msg(wait_pod("train-0", false), "the deleted Job's pod was left behind");

	/*
	 * Once running, the collector touches what changed only: a second Job's
	 * pod is found through the owner index, and the 10,050 pods beside it
	 * are not read again (a scan of them takes more store steps than there
	 * are pods).
	 */
	create(json_loads("{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": "
			  "{\"name\": \"second\", \"namespace\": \"default\"}, \"spec\": "
			  "{\"parallelism\": 1, \"template\": {\"spec\": {\"containers\": "
			  "[{\"name\": \"c\", \"image\": \"x\"}]}}}}",
			  0, NULL));
	ck_assert(wait_pod("second-0", true));
	sleep_ms(500); /* the controllers have caught up */
	struct pk_store_stats before, after;

	pk_store_get_stats(st, &before);
	ck_assert_int_eq(
	    pk_store_delete_opts(st, &pk_type_job, "default", "second", NULL, NULL, NULL), 0);
	ck_assert_msg(wait_pod("second-0", false), "the second Job's pod was left behind");
	pk_store_get_stats(st, &after);
	fprintf(stderr, "collecting one Job's pod beside %d others: %llu store steps\n", FILLER,
		(unsigned long long)(after.read_steps - before.read_steps));
	ck_assert_msg(after.read_steps - before.read_steps < FILLER,
		      "collecting one Job's pod took %llu store steps",
		      (unsigned long long)(after.read_steps - before.read_steps));
	json_t *items = NULL;

	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, "aaa", NULL, &items, NULL, NULL), 0);
	ck_assert_uint_eq(json_array_size(items), FILLER);
	json_decref(items);
}
END_TEST

/* A bound pod in default, owned (blocking) by the pod of owner_uid when given; its uid. */
static char *owned_pod(const char *name, const char *owner, const char *owner_uid)
{
	json_t *pod =
	    json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:[{s:s,s:s}]}}", "apiVersion", "v1", "kind",
		      "Pod", "metadata", "name", name, "namespace", "default", "spec", "nodeName",
		      "filler", "containers", "name", "c", "image", "x");
	struct pk_errors errs = {0};
	json_t *out = NULL;

	if (owner_uid)
		json_object_set_new(json_object_get(pod, "metadata"), "ownerReferences",
				    json_pack("[{s:s,s:s,s:s,s:s,s:b}]", "apiVersion", "v1", "kind",
					      "Pod", "name", owner, "uid", owner_uid,
					      "blockOwnerDeletion", 1));
	ck_assert_int_eq(pk_store_create(st, pod, &errs, &out), 0);
	json_decref(pod);
	char *uid = strdup(pk_get_string(out, "metadata.uid"));
	json_decref(out);
	return uid;
}

/*
 * Foreground deletion finishes on a 300-long ownership chain (it used to go
 * down one level per collection, about a second each) and on an ownership
 * cycle (it used to wait forever: each owner blocked by the other).
 */
START_TEST(foreground_deletion_of_chains_and_cycles)
{
	struct pk_store_write_opts fg = {.propagation = PK_PROPAGATE_FOREGROUND};
	char name[32], prev[32] = "", *uid = NULL;

	create(json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s}}}", "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", "filler", "status", "allocatable", "cpu", "100000",
			 "pods", "20000"));
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "c%03d", i);
		char *next = owned_pod(name, prev, uid);
		free(uid);
		uid = next;
		snprintf(prev, sizeof(prev), "%s", name);
	}
	free(uid);
	/* x and y own each other */
	char *x = owned_pod("x", NULL, NULL), *y = owned_pod("y", "x", x);
	json_t *xo = NULL;
	ck_assert_int_eq(pk_store_get(st, &pk_type_pod, "default", "x", &xo), 0);
	json_object_set_new(json_object_get(xo, "metadata"), "ownerReferences",
			    json_pack("[{s:s,s:s,s:s,s:s,s:b}]", "apiVersion", "v1", "kind", "Pod",
				      "name", "y", "uid", y, "blockOwnerDeletion", 1));
	ck_assert_int_eq(pk_store_update_opts(st, xo, PK_SUB_MAIN, NULL, NULL, NULL), 0);
	json_decref(xo);
	free(x);
	free(y);

	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	char err[256] = "";
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "c000", &fg, NULL, NULL),
			 0);
	ck_assert_int_eq(pk_store_delete_opts(st, &pk_type_pod, "default", "x", &fg, NULL, NULL),
			 0);
	ck_assert_msg(wait_pod("c299", false), "the chain's last pod was left behind");
	ck_assert_msg(wait_pod("c000", false), "the chain's owner waits still");
	ck_assert_msg(wait_pod("x", false) && wait_pod("y", false), "the cycle waits still");
	json_t *items = NULL;
	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, "default", NULL, &items, NULL, NULL), 0);
	ck_assert_uint_eq(json_array_size(items), 0);
	json_decref(items);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("controllers-gc-scale");
	TCase *tc = tcase_create("gc");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 180);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, gc_finds_pods_past_ten_thousand);
	tcase_add_test(tc, foreground_deletion_of_chains_and_cycles);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

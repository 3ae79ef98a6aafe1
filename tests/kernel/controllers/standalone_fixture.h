/* SPDX-License-Identifier: Apache-2.0 */
/*
 * standalone_fixture.h — the controllers' suites' standalone appliance: a
 * real store opened as podkerneld opens it (Jobs and JobSets admitted by the
 * builder) with 4 nodes of 8 CPUs and 4 TPUs, the scheduling loop and the
 * controllers running on it, and the helpers that read it and wait on it.
 * Included by one suite each (its functions are static).
 */
#ifndef PODKERNEL_TESTS_CONTROLLERS_STANDALONE_FIXTURE_H
#define PODKERNEL_TESTS_CONTROLLERS_STANDALONE_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/appliance/appliance.h"
#include "kernel/store/store.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"

static const struct pk_store_open_opts store_opts = {.admission = wb_admission,
						     .nadmission = WB_ADMISSION_N};
static char dir[256];
static struct pk_store *st;
static struct pk_appliance *app;

static void setup(void)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	char err[256];

	snprintf(dir, sizeof(dir), "/tmp/pk-controllers-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, &store_opts, &st, err, sizeof(err)), 0);
	for (int i = 0; i < 4; i++) {
		char name[16];
		json_t *n;

		snprintf(name, sizeof(name), "n%d", i);
		n = json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s,s:s}}}", "apiVersion", "v1", "kind",
			      "Node", "metadata", "name", name, "status", "allocatable", "cpu", "8",
			      "google.com/tpu", "4", "pods", "110");
		ck_assert_int_eq(pk_store_create(st, n, NULL, NULL), 0);
		json_decref(n);
	}
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
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

/* Create an object from its JSON text; the store's refusals are printed. */
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

/* kind/name in namespace default, or NULL. */
static json_t *get(const char *kind, const char *name)
{
	json_t *o = NULL;

	return pk_store_get(st, pk_type_by_kind(kind), "default", name, &o) == 0 ? o : NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Wait up to 10 s until pred(kind/name) holds. */
static bool wait_for(const char *kind, const char *name, bool (*pred)(const json_t *, const void *),
		     const void *arg)
{
	for (int i = 0; i < 200; i++) {
		json_t *o = get(kind, name);
		bool ok = pred(o, arg);

		json_decref(o);
		if (ok)
			return true;
		sleep_ms(50);
	}
	return false;
}

static bool is_bound(const json_t *o, const void *arg)
{
	(void)arg;
	return o && pk_get_string(o, "spec.nodeName");
}

static inline bool is_gone(const json_t *o, const void *arg)
{
	(void)arg;
	return !o;
}

static inline bool wait_bound(const char *name)
{
	return wait_for("Pod", name, is_bound, NULL);
}

/* want: {annotation key, prefix of its value}. */
static inline bool annotation_is(const json_t *o, const void *want)
{
	const char *const *w = want;
	const char *v = json_string_value(json_object_get(pk_get(o, "metadata.annotations"), w[0]));

	return v && strncmp(v, w[1], strlen(w[1])) == 0;
}

/* ---- queue objects, as the queue suites create them ---- */

static inline void local_queue(const char *name, const char *cq)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"LocalQueue\", "
		 "\"metadata\": {\"name\": \"%s\", \"namespace\": \"default\"}, \"spec\": "
		 "{\"clusterQueue\": \"%s\"}}",
		 name, cq);
	create_json(buf);
}

static inline void workload_priority_class(const char *name, int value)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": "
		 "\"WorkloadPriorityClass\", \"metadata\": {\"name\": \"%s\"}, \"value\": %d}",
		 name, value);
	create_json(buf);
}

/* A suspended Job of pods pods of 4 TPUs each in LocalQueue queue (of WorkloadPriorityClass wpc,
 * unless NULL). */
static inline void kueue_job(const char *name, const char *queue, int pods, const char *wpc)
{
	char buf[1024];

	snprintf(
	    buf, sizeof(buf),
	    "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
	    "\"%s\", \"namespace\": \"default\", \"labels\": {\"kueue.x-k8s.io/queue-name\": "
	    "\"%s\"%s%s%s}}, \"spec\": {\"parallelism\": %d, \"completions\": %d, "
	    "\"suspend\": true, \"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", "
	    "\"image\": \"x\", \"resources\": {\"requests\": {\"google.com/tpu\": \"4\"}}}]}}}}",
	    name, queue, wpc ? ", \"kueue.x-k8s.io/priority-class\": \"" : "", wpc ? wpc : "",
	    wpc ? "\"" : "", pods, pods);
	create_json(buf);
}

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loop_fixture.h — the loop suites' standalone appliance: a real store in a
 * temporary directory opened as podkerneld opens it, the loop and the
 * controllers started on it, a cluster of cube nodes, and the helpers that
 * make objects, read them and wait on them.  Included by one suite each
 * (its functions are static).
 */
#ifndef PODKERNEL_TESTS_APPLIANCE_LOOP_FIXTURE_H
#define PODKERNEL_TESTS_APPLIANCE_LOOP_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/appliance/appliance-internal.h"
#include "kernel/controllers/controllers-internal.h"
#include "kernel/appliance/appliance.h"
#include "kernel/controllers/controllers.h"
#include "kernel/builder/builder.h"
#include "kernel/write/writer.h"

/* The store as podkerneld opens it: Jobs and JobSets admitted by the builder. */
static const struct pk_store_open_opts store_opts = {.admission = wb_admission,
						     .nadmission = WB_ADMISSION_N};

#define CUBE "topology.podkernel.dev/cube"

static char dir[256];
static struct pk_store *st;
static struct pk_appliance *app;

static inline void start(void)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	char err[256] = "";

	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
}

static inline void setup(void)
{
	char err[256];

	snprintf(dir, sizeof(dir), "/tmp/pk-appliance-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, &store_opts, &st, err, sizeof(err)), 0);
}

static inline void teardown(void)
{
	char cmd[300];

	pk_appliance_stop(app);
	app = NULL;
	pk_store_shutdown(st);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static inline void create(json_t *obj)
{
	struct pk_errors errs = {0};
	int r = pk_store_create(st, obj, &errs, NULL);

	if (r < 0)
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "create: %s\n", errs.msg[i]);
	pk_errors_clear(&errs);
	json_decref(obj);
	ck_assert_int_eq(r, 0);
}

static inline json_t *node(const char *name, const char *cube)
{
	return json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:{s:s,s:s,s:s}}}", "apiVersion", "v1",
			 "kind", "Node", "metadata", "name", name, "labels", CUBE, cube, "status",
			 "allocatable", "cpu", "8", "google.com/tpu", "4", "pods", "110");
}

static inline json_t *pod(const char *name, const char *group, const char *prio_class)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s,s:{s:{s:s}}}]}}", "apiVersion",
			      "v1", "kind", "Pod", "metadata", "name", name, "namespace", "default",
			      "spec", "containers", "name", "c", "image", "x", "resources",
			      "requests", "google.com/tpu", "4");

	if (group)
		pk_set(p, "spec.schedulingGroup.podGroupName", json_string(group));
	if (prio_class)
		pk_set(p, "spec.priorityClassName", json_string(prio_class));
	return p;
}

static inline json_t *gang(const char *name, int min, const char *topology, bool all)
{
	json_t *g =
	    json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:s,s:s},s:{s:{s:i}}}}", "apiVersion",
		      "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name", name,
		      "namespace", "default", "spec", "workloadRef", "workloadName", name,
		      "templateName", name, "schedulingPolicy", "gang", "minCount", min);

	if (topology)
		pk_set(g, "spec.schedulingConstraints",
		       json_pack("{s:[{s:s}]}", "topology", "key", topology));
	if (all)
		pk_set(g, "spec.disruptionMode", json_pack("{s:{}}", "all"));
	return g;
}

static inline json_t *get(const char *kind, const char *name)
{
	json_t *o = NULL;

	return pk_store_get(st, pk_type_by_kind(kind), "default", name, &o) == 0 ? o : NULL;
}

/* spec.nodeName of pod name (copied into buf), or "" while pending; NULL if gone. */
static const char *node_of(const char *name, char *buf, size_t len)
{
	json_t *p = get("Pod", name);

	if (!p)
		return NULL;
	snprintf(buf, len, "%s", pk_get_string(p, "spec.nodeName") ?: "");
	json_decref(p);
	return buf;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Wait up to 10 s until pod name is bound (true) . */
static inline bool wait_bound(const char *name)
{
	char buf[128];

	for (int i = 0; i < 200; i++) {
		const char *n = node_of(name, buf, sizeof(buf));

		if (n && *n)
			return true;
		sleep_ms(50);
	}
	return false;
}

/* Conditions follow the bindings of a cycle: wait for them too. */
static inline bool wait_condition(const char *kind, const char *name, const char *type,
				  const char *status)
{
	for (int i = 0; i < 200; i++) {
		json_t *o = get(kind, name);
		const char *st =
		    o ? json_string_value(json_object_get(pk_condition_get(o, type), "status"))
		      : NULL;
		bool ok = st && strcmp(st, status) == 0;

		json_decref(o);
		if (ok)
			return true;
		sleep_ms(50);
	}
	return false;
}

/* The metrics text once it contains want (the loop records after writing). */
static inline bool wait_metric_tries(const char *want, int tries, bool quiet)
{
	static char text[1 << 17];

	for (int i = 0; i < tries; i++) {
		FILE *f = tmpfile();
		size_t n;

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(pk_appliance_metrics(app, f), 0);
		rewind(f);
		n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = '\0';
		fclose(f);
		if (strstr(text, want))
			return true;
		sleep_ms(50);
	}
	if (!quiet)
		fprintf(stderr, "metrics without \"%s\":\n%s", want, text);
	return false;
}

static inline bool wait_metric(const char *want)
{
	return wait_metric_tries(want, 100, false);
}

/* One look: for lines that must not be there. */
static inline bool wait_metric_briefly(const char *want)
{
	return wait_metric_tries(want, 1, true);
}

static inline bool wait_gone(const char *kind, const char *name)
{
	for (int i = 0; i < 200; i++) {
		json_t *o = get(kind, name);

		if (!o)
			return true;
		json_decref(o);
		sleep_ms(50);
	}
	return false;
}

static inline int count_pods(bool bound_only)
{
	json_t *items = NULL, *p;
	size_t i;
	int n = 0;

	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, NULL, NULL, &items, NULL, NULL), 0);
	json_array_foreach(items, i, p) if (!bound_only || pk_get_string(p, "spec.nodeName")) n++;
	json_decref(items);
	return n;
}

/* No node carries more than one 4-TPU pod (allocatable 4). */
static inline void assert_no_overcommit(void)
{
	json_t *items = NULL, *seen = json_object(), *p;
	size_t i;

	ck_assert_int_eq(pk_store_list(st, &pk_type_pod, NULL, NULL, &items, NULL, NULL), 0);
	json_array_foreach(items, i, p)
	{
		const char *n = pk_get_string(p, "spec.nodeName");

		if (!n)
			continue;
		ck_assert_msg(!json_object_get(seen, n), "node %s holds two 4-TPU pods", n);
		json_object_set_new(seen, n, json_true());
	}
	json_decref(items);
	json_decref(seen);
}

static inline void cluster(void)
{
	create(node("a1", "ca"));
	create(node("a2", "ca"));
	create(node("b1", "cb"));
	create(node("b2", "cb"));
}

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_gc.c — what garbage collection costs.
 *
 *   owner index      the store's CPU time to create N pods that carry one
 *                    ownerReference (each adds a row to the owner index, in
 *                    the write's transaction), and to write their labels
 *                    (references unchanged: the index is left alone),
 *                    against the same writes into a store whose index
 *                    triggers were dropped, same run.
 *   collection       standalone's collector: the time from the deletion of
 *                    an owner to the last of its N dependent pods gone,
 *                    against the time it took to create them (one batch per
 *                    BATCH pods), same run.  The dependents are found
 *                    through the owner index (not a scan: PODS other pods
 *                    in another namespace are never read).
 *
 * Each figure is the median of RUNS runs.  Data lives under $TMPDIR.
 */
#define BENCH_NAME "bench_gc"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sqlite3.h>
#include <unistd.h>

#include "kernel/appliance/appliance.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"
#include "kernel/store/store.h"

#define RUNS 5
#define PODS 4096
#define BATCH 256

static double clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static struct pk_store *open_store(char *dir, size_t n)
{
	static const struct pk_store_open_opts o = {.admission = wb_admission,
						    .nadmission = WB_ADMISSION_N};
	const char *tmp = getenv("TMPDIR");
	struct pk_store *st = NULL;
	char err[256];

	snprintf(dir, n, "%s/pk-bench-gc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir) || pk_store_open_opts(dir, &o, &st, err, n) < 0) {
		fprintf(stderr, BENCH_NAME ": store: %s\n", err);
		exit(1);
	}
	return st;
}

static void close_store(struct pk_store *st, const char *dir)
{
	char cmd[512];

	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		exit(1);
}

/* PODS pods named prefix-N in batches of BATCH, each owned by owner (NULL: none). */
static void create_pods(struct pk_store *st, const char *ns, const char *prefix,
			const json_t *owner)
{
	json_t *objs[BATCH];
	int rcs[BATCH];

	for (int b = 0; b < PODS / BATCH; b++) {
		for (int i = 0; i < BATCH; i++) {
			char name[64];

			snprintf(name, sizeof(name), "%s-%d", prefix, b * BATCH + i);
			objs[i] = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:[{s:s,s:s}]}}",
					    "apiVersion", "v1", "kind", "Pod", "metadata", "name",
					    name, "namespace", ns, "spec", "nodeName", "nowhere",
					    "containers", "name", "c", "image", "x");
			if (owner)
				json_object_set_new(
				    json_object_get(objs[i], "metadata"), "ownerReferences",
				    json_pack("[{s:s,s:s,s:s,s:s,s:b}]", "apiVersion", "v1", "kind",
					      "Pod", "name", pk_get_string(owner, "metadata.name"),
					      "uid", pk_get_string(owner, "metadata.uid"),
					      "controller", 1));
		}
		if (pk_store_create_batch(st, objs, BATCH, rcs) < 0 || rcs[0] < 0) {
			fprintf(stderr, BENCH_NAME ": create: %s\n", strerror(-rcs[0]));
			exit(1);
		}
		for (int i = 0; i < BATCH; i++)
			json_decref(objs[i]);
	}
}

static json_t *make_owner(struct pk_store *st, const char *name)
{
	json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:[{s:s,s:s}]}}", "apiVersion", "v1",
			      "kind", "Pod", "metadata", "name", name, "namespace", "default",
			      "spec", "nodeName", "nowhere", "containers", "name", "c", "image",
			      "x"),
	       *out = NULL;

	if (pk_store_create(st, o, NULL, &out) < 0)
		exit(1);
	json_decref(o);
	return out;
}

/* The store without its owner index's triggers (the baseline). */
static void drop_index(const char *dir)
{
	char path[400];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/podkernel.db", dir);
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db,
			 "DROP TRIGGER owner_refs_insert; DROP TRIGGER owner_refs_update;"
			 " DROP TRIGGER owner_refs_delete;",
			 NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, BENCH_NAME ": dropping the index: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	sqlite3_close(db);
}

/* CPU ms of creating then labelling PODS owned pods, with the owner index or without. */
static void index_run(bool index, double *create_ms, double *label_ms)
{
	char dir[300];
	struct pk_store *st = open_store(dir, sizeof(dir));
	json_t *owner = make_owner(st, "owner"),
	       *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "a", "b");
	double t0;

	if (!index)
		drop_index(dir);
	t0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	create_pods(st, "default", "p", owner);
	*create_ms = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - t0;
	t0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < PODS / 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "p-%d", i);
		if (pk_store_patch(st, &pk_type_pod, "default", name, PK_PATCH_MERGE, patch,
				   PK_SUB_MAIN, NULL, NULL) < 0)
			exit(1);
	}
	*label_ms = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - t0;
	json_decref(patch);
	json_decref(owner);
	close_store(st, dir);
}

/* Wall ms to create PODS dependents, and from the owner's deletion to the last gone. */
static void collect_run(double *create_ms, double *collect_ms)
{
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	struct pk_appliance *app = NULL;
	char dir[300], err[256];
	struct pk_store *st = open_store(dir, sizeof(dir));
	json_t *owner, *o = NULL,
		       *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				       "metadata", "name", "aaa");
	double t0;

	pk_store_create(st, ns, NULL, NULL);
	json_decref(ns);
	create_pods(st, "aaa", "filler", NULL);
	if (pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)) < 0) {
		fprintf(stderr, BENCH_NAME ": standalone: %s\n", err);
		exit(1);
	}
	owner = make_owner(st, "owner");
	t0 = clock_ms(CLOCK_MONOTONIC);
	create_pods(st, "default", "dep", owner);
	*create_ms = clock_ms(CLOCK_MONOTONIC) - t0;
	t0 = clock_ms(CLOCK_MONOTONIC);
	if (pk_store_delete_opts(st, &pk_type_pod, "default", "owner", NULL, NULL, NULL) < 0)
		exit(1);
	for (int i = 0; i < PODS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "dep-%d", i);
		while (pk_store_get(st, &pk_type_pod, "default", name, &o) == 0) {
			json_decref(o);
			usleep(1000);
		}
	}
	*collect_ms = clock_ms(CLOCK_MONOTONIC) - t0;
	json_decref(owner);
	pk_store_shutdown(st);
	pk_appliance_stop(app);
	close_store(st, dir);
}

int main(void)
{
	double with[RUNS], without[RUNS], lwith[RUNS], lwithout[RUNS], made[RUNS], gone[RUNS];

	for (int r = 0; r < RUNS; r++) {
		index_run(true, &with[r], &lwith[r]);
		index_run(false, &without[r], &lwithout[r]);
		collect_run(&made[r], &gone[r]);
	}
	double w = median(with, RUNS), wo = median(without, RUNS);
	double lw = median(lwith, RUNS), lwo = median(lwithout, RUNS);
	double m = median(made, RUNS), g = median(gone, RUNS);

	printf("%-58s %10s %10s %7s\n", "figure (median of 5)", "ms", "baseline", "ratio");
	printf("%-58s %10.1f %10.1f %6.2fx\n",
	       "owner index: create 4096 pods with a reference (CPU)", w, wo, w / wo);
	printf("%-58s %10.1f %10.1f %6.2fx\n", "owner index: label 1024 of them (CPU)", lw, lwo,
	       lw / lwo);
	printf("%-58s %10.1f %10.1f %6.2fx\n", "collection: 4096 dependents gone after the owner",
	       g, m, g / m);
	return 0;
}

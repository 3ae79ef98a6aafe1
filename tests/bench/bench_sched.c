/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sched.c — scheduling-core benchmarks on clusters generated from the
 * tpu-superslice board (hosts of 2x2x1 chips, 4x4x4 cubes of 16 hosts,
 * 8x8x16 superslices of 256 hosts):
 *
 *   gang-4096 / gang-16384   one 3-level gang of 256 pods (16 shards x 16
 *                            pods; shard -> cube, job -> superslice), one cycle
 *   busy-16384               the same gang when every superslice but one
 *                            holds a busy host (the gang needs a whole one)
 *   stream-4096              1,000 small gangs (4 pods each, one cube) one
 *                            after the other until the queue is idle
 *
 * Every case runs under the default strategy and under "kep".
 * Each case reports the median over several runs, pods per second, the ratio
 * to one linear pass over the snapshot's free capacities (the floor: reading
 * every node once) measured in the same run, and peak memory (getrusage).
 * Objects are added outside the timed region; each run starts from the same
 * empty cluster (the gang is removed again).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/sched/internal.h"
#include "kernel/sched/sched.h"
#include "topology.h"

#define RUNS 7

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "bench_sched: %s: %s\n", what, strerror(-r));
	exit(1);
}

static void add(struct pk_sched *s, json_t *o)
{
	struct pk_errors errs = {0};
	int r = pk_sched_add(s, o, &errs);

	if (r < 0) {
		pk_errors_print(&errs, stderr, "bench_sched: ");
		die("add", r);
	}
	json_decref(o);
}

static struct pk_sched *cluster(const struct topo_board *b, int superslices, const char *strategy)
{
	struct pk_sched_opts opts = {.strategy = strategy};
	struct pk_sched *s = NULL;
	int64_t hosts = topo_board_host_count(b, superslices);
	int r = pk_sched_new(&opts, &s);

	if (r < 0)
		die("pk_sched_new", r);
	for (int64_t i = 0; i < hosts; i++) {
		struct topo_host h;
		json_t *labels = json_object(), *alloc = json_object();

		if ((r = topo_board_host(b, superslices, i, &h)) < 0)
			die("topo_board_host", r);
		for (size_t l = 0; l < topo_board_level_count(b); l++)
			json_object_set_new(labels, topo_board_level_key(b, l),
					    json_string(h.domain[l]));
		json_object_set_new(labels, "kubernetes.io/hostname", json_string(h.name));
		for (size_t a = 0; a < topo_board_allocatable_count(b); a++) {
			char q[64];

			topo_quantity_format(topo_board_allocatable_milli(b, a),
					     TOPO_QUANTITY_DECIMAL_SI, q, sizeof(q));
			json_object_set_new(alloc, topo_board_allocatable_name(b, a),
					    json_string(q));
		}
		add(s, json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:o}}", "apiVersion", "v1", "kind",
				 "Node", "metadata", "name", h.name, "labels", labels, "status",
				 "allocatable", alloc));
	}
	return s;
}

static json_t *group(bool composite, const char *name, const char *parent, int min, const char *key)
{
	json_t *g = json_pack(
	    "{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:s}, s:{s:{s:i}}, s:{s:[{s:s}]}}}", "apiVersion",
	    "scheduling.k8s.io/v1alpha3", "kind", composite ? "CompositePodGroup" : "PodGroup",
	    "metadata", "name", name, "namespace", "bench", "spec", "workloadRef", "workloadName",
	    "bench", "templateName", "t", "schedulingPolicy", "gang",
	    composite ? "minGroupCount" : "minCount", min, "schedulingConstraints", "topology",
	    "key", key);

	if (parent)
		json_object_set_new(json_object_get(g, "spec"), "parentCompositePodGroupName",
				    json_string(parent));
	return g;
}

static json_t *pod(const char *name, const char *grp)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}, s:[{s:s, s:{s:{s:s, s:s}}}]}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
			 "bench", "spec", "schedulingGroup", "podGroupName", grp, "containers",
			 "name", "c", "resources", "requests", "google.com/tpu", "4", "cpu", "8");
}

/* A standalone pod already bound to node (taking one chip). */
static json_t *busy_pod(const char *name, const char *node)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s, s:s}}}]}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
			 "bench", "spec", "nodeName", node, "containers", "name", "c", "resources",
			 "requests", "google.com/tpu", "1", "cpu", "1");
}

/* The linear floor: sum every node's free capacity once. */
static double linear_pass(struct pk_sched *s)
{
	int64_t sum[SC_MAX_RES] = {0};
	volatile int64_t sink = 0;
	double t0 = now_ms();

	for (size_t i = 0; i < s->snap.nnodes; i++)
		for (int r = 0; r < s->snap.nres; r++)
			sum[r] += s->snap.nodes[i]->alloc[r] - s->snap.nodes[i]->used[r];
	for (int r = 0; r < SC_MAX_RES; r++)
		sink += sum[r];
	(void)sink;
	return now_ms() - t0;
}

static size_t run_cycles(struct pk_sched *s)
{
	size_t bound = 0;

	for (;;) {
		struct pk_sched_result *res = NULL;
		int r = pk_sched_cycle(s, 0, &res);
		bool idle;

		if (r < 0)
			die("pk_sched_cycle", r);
		bound += res->bound;
		idle = res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED;
		pk_sched_result_free(res);
		if (idle)
			return bound;
	}
}

static void report(const char *name, const char *strategy, double *t, double *floor_, int runs,
		   size_t pods)
{
	double tm = median(t, runs), fm = median(floor_, runs);

	printf("%-14s %-4s %10.3f ms %12.0f pods/s %10.1fx linear pass (%.3f ms) %8ld KiB peak "
	       "RSS\n",
	       name, strategy, tm, (double)pods / (tm / 1e3), fm > 0 ? tm / fm : 0.0, fm,
	       peak_rss_kb());
}

static void bench_gang(const struct topo_board *b, int superslices, const char *strategy,
		       bool busy)
{
	struct pk_sched *s = cluster(b, superslices, strategy);
	const char *ss = topo_board_level_key(b, 0), *cube = topo_board_level_key(b, 1);
	double t[RUNS], f[RUNS];
	char name[64];
	int64_t per_ss = topo_board_host_count(b, 1);

	for (int i = 0; busy && i + 1 < superslices; i++) { /* the last superslice stays free */
		struct topo_host h;
		char p[32];

		if (topo_board_host(b, superslices, i * per_ss + (i * 37) % per_ss, &h) < 0)
			die("topo_board_host", -EINVAL);
		snprintf(p, sizeof(p), "busy-%d", i);
		add(s, busy_pod(p, h.name));
	}
	for (int run = 0; run < RUNS; run++) {
		add(s, group(true, "job", NULL, 16, ss));
		for (int sh = 0; sh < 16; sh++) {
			char g[32], p[48];

			snprintf(g, sizeof(g), "shard-%d", sh);
			add(s, group(false, g, "job", 16, cube));
			for (int i = 0; i < 16; i++) {
				snprintf(p, sizeof(p), "shard-%d-%d", sh, i);
				add(s, pod(p, g));
			}
		}
		f[run] = linear_pass(s);
		double t0 = now_ms();
		size_t bound = run_cycles(s);

		t[run] = now_ms() - t0;
		if (bound != 256) {
			fprintf(stderr, "bench_sched: gang bound %zu of 256 pods\n", bound);
			exit(1);
		}
		for (int sh = 0; sh < 16; sh++) {
			char g[32], p[48];

			for (int i = 0; i < 16; i++) {
				snprintf(p, sizeof(p), "shard-%d-%d", sh, i);
				pk_sched_remove(s, PK_KIND_POD, "bench", p);
			}
			snprintf(g, sizeof(g), "shard-%d", sh);
			pk_sched_remove(s, PK_KIND_POD_GROUP, "bench", g);
		}
		pk_sched_remove(s, PK_KIND_COMPOSITE_POD_GROUP, "bench", "job");
	}
	snprintf(name, sizeof(name), "%s-%zu", busy ? "busy" : "gang", s->snap.nnodes);
	report(name, strategy, t, f, RUNS, 256);
	pk_sched_free(s);
}

static void bench_stream(const struct topo_board *b, int superslices, const char *strategy)
{
	struct pk_sched *s = cluster(b, superslices, strategy);
	const char *cube = topo_board_level_key(b, 1);
	double t[RUNS], f[RUNS];
	char name[64];

	for (int run = 0; run < RUNS; run++) {
		for (int gidx = 0; gidx < 1000; gidx++) {
			char g[32], p[48];

			snprintf(g, sizeof(g), "g-%d", gidx);
			add(s, group(false, g, NULL, 4, cube));
			for (int i = 0; i < 4; i++) {
				snprintf(p, sizeof(p), "g-%d-%d", gidx, i);
				add(s, pod(p, g));
			}
		}
		f[run] = linear_pass(s);
		double t0 = now_ms();
		size_t bound = run_cycles(s);

		t[run] = now_ms() - t0;
		if (bound != 4000) {
			fprintf(stderr, "bench_sched: stream bound %zu of 4000 pods\n", bound);
			exit(1);
		}
		for (int gidx = 0; gidx < 1000; gidx++) {
			char g[32], p[48];

			for (int i = 0; i < 4; i++) {
				snprintf(p, sizeof(p), "g-%d-%d", gidx, i);
				pk_sched_remove(s, PK_KIND_POD, "bench", p);
			}
			snprintf(g, sizeof(g), "g-%d", gidx);
			pk_sched_remove(s, PK_KIND_POD_GROUP, "bench", g);
		}
	}
	snprintf(name, sizeof(name), "stream-%zu", s->snap.nnodes);
	report(name, strategy, t, f, RUNS, 4000);
	pk_sched_free(s);
}

int main(void)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX];
	int64_t per_ss;
	int r;

	if (!b)
		die("topo_board_new", -ENOMEM);
	r = topo_board_load_file(b, PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml", err,
				 sizeof(err));
	if (r < 0) {
		fprintf(stderr, "bench_sched: %s\n", err);
		return 1;
	}
	per_ss = topo_board_host_count(b, 1);
	if (per_ss <= 0 || topo_board_level_count(b) < 2) {
		fprintf(stderr, "bench_sched: board without superslice and cube levels\n");
		return 1;
	}
	printf("bench_sched: strategies %s (default) and kep, board %s (%lld hosts per "
	       "superslice), medians\n",
	       pk_sched_strategy_name(0), topo_board_name(b), (long long)per_ss);
	for (int k = 0; k < 2; k++) {
		const char *st = k ? "kep" : pk_sched_strategy_name(0);

		bench_gang(b, (int)(4096 / per_ss), st, false);
		bench_gang(b, (int)(16384 / per_ss), st, false);
		bench_gang(b, (int)(16384 / per_ss), st, true);
		bench_stream(b, (int)(4096 / per_ss), st);
	}
	topo_board_free(b);
	return 0;
}

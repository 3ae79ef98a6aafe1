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
 *   gang1024-16384 / anti1024-16384
 *                            one 1,024-pod gang (no topology key) without and
 *                            with required pod anti-affinity on itself per
 *                            kubernetes.io/hostname (the ratio is the cost of
 *                            the constraint)
 *   serve-16384              10,000 standalone serving pods (1 cpu), each
 *                            with a DoNotSchedule spread over cubes and
 *                            required anti-affinity per host, streamed
 *
 * Every case runs under the default strategy and under "kep".
 * Each case reports the median over several runs, pods per second, the ratio
 * to one linear pass over the snapshot's free capacities (the floor: reading
 * every node once) measured in the same run, and peak memory (getrusage).
 * Objects are added outside the timed region; each run starts from the same
 * empty cluster (the gang is removed again).
 */
#define BENCH_NAME "bench_sched"
#include "tests/bench/bench_common.h"

#define RUNS 7

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

static void report(const char *name, const char *strategy, double *t, double *floor_, int runs,
		   size_t pods)
{
	double tm = median(t, runs), fm = median(floor_, runs);

	printf("%-14s %-4s %10.3f ms %12.0f pods/s %10.1fx linear pass (%.3f ms) %8ld KiB peak "
	       "RSS\n",
	       name, strategy, tm, (double)pods / (tm / 1e3), fm > 0 ? tm / fm : 0.0, fm,
	       peak_rss_kb());
}

static void bench_gang(const struct topo_board *b, int superslices, const char *strategy, bool busy)
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
				pk_sched_remove(s, &pk_type_pod, "bench", p);
			}
			snprintf(g, sizeof(g), "shard-%d", sh);
			pk_sched_remove(s, &pk_type_pod_group, "bench", g);
		}
		pk_sched_remove(s, &pk_type_composite_pod_group, "bench", "job");
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
				pk_sched_remove(s, &pk_type_pod, "bench", p);
			}
			snprintf(g, sizeof(g), "g-%d", gidx);
			pk_sched_remove(s, &pk_type_pod_group, "bench", g);
		}
	}
	snprintf(name, sizeof(name), "stream-%zu", s->snap.nnodes);
	report(name, strategy, t, f, RUNS, 4000);
	pk_sched_free(s);
}

/* A 1,024-pod gang, optionally repelling itself per host. */
static void bench_anti(const struct topo_board *b, int superslices, const char *strategy, bool anti)
{
	struct pk_sched *s = cluster(b, superslices, strategy);
	double t[RUNS], f[RUNS];
	char name[64];

	for (int run = 0; run < RUNS; run++) {
		add(s, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:i}}}}", "apiVersion",
				 "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata",
				 "name", "ring", "namespace", "bench", "spec", "schedulingPolicy",
				 "gang", "minCount", 1024));
		for (int i = 0; i < 1024; i++) {
			char p[32];
			json_t *o;

			snprintf(p, sizeof(p), "ring-%d", i);
			o = pod(p, "ring");
			json_object_set_new(json_object_get(o, "metadata"), "labels",
					    json_pack("{s:s}", "job", "ring"));
			if (anti)
				json_object_set_new(
				    json_object_get(o, "spec"), "affinity",
				    json_pack("{s:{s:[{s:{s:{s:s}}, s:s}]}}", "podAntiAffinity",
					      "requiredDuringSchedulingIgnoredDuringExecution",
					      "labelSelector", "matchLabels", "job", "ring",
					      "topologyKey", "kubernetes.io/hostname"));
			add(s, o);
		}
		f[run] = linear_pass(s);
		double t0 = now_ms();
		size_t bound = run_cycles(s);

		t[run] = now_ms() - t0;
		if (bound != 1024) {
			fprintf(stderr, "bench_sched: ring bound %zu of 1024 pods\n", bound);
			exit(1);
		}
		for (int i = 0; i < 1024; i++) {
			char p[32];

			snprintf(p, sizeof(p), "ring-%d", i);
			pk_sched_remove(s, &pk_type_pod, "bench", p);
		}
		pk_sched_remove(s, &pk_type_pod_group, "bench", "ring");
	}
	snprintf(name, sizeof(name), "%s1024-%zu", anti ? "anti" : "gang", s->snap.nnodes);
	report(name, strategy, t, f, RUNS, 1024);
	pk_sched_free(s);
}

/* A serving pod: 1 cpu, spread over cubes, one per host. */
static json_t *serving_pod(const char *name, const char *cube)
{
	return json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:[{s:s, s:{s:{s:s}}}], s:[{s:i, s:s, s:s, "
	    "s:{s:{s:s}}}], s:{s:{s:[{s:{s:{s:s}}, s:s}]}}}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "bench",
	    "labels", "app", "serve", "spec", "containers", "name", "c", "resources", "requests",
	    "cpu", "1", "topologySpreadConstraints", "maxSkew", 1, "topologyKey", cube,
	    "whenUnsatisfiable", "DoNotSchedule", "labelSelector", "matchLabels", "app", "serve",
	    "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
	    "labelSelector", "matchLabels", "app", "serve", "topologyKey",
	    "kubernetes.io/hostname");
}

static void bench_serve(const struct topo_board *b, int superslices, const char *strategy)
{
	struct pk_sched *s = cluster(b, superslices, strategy);
	const char *cube = topo_board_level_key(b, 1);
	double t[3], f[3];
	char name[64];

	for (int run = 0; run < 3; run++) {
		for (int i = 0; i < 10000; i++) {
			char p[32];

			snprintf(p, sizeof(p), "serve-%d", i);
			add(s, serving_pod(p, cube));
		}
		f[run] = linear_pass(s);
		double t0 = now_ms();
		size_t bound = run_cycles(s);

		t[run] = now_ms() - t0;
		if (bound != 10000) {
			fprintf(stderr, "bench_sched: serving bound %zu of 10000 pods\n", bound);
			exit(1);
		}
		for (int i = 0; i < 10000; i++) {
			char p[32];

			snprintf(p, sizeof(p), "serve-%d", i);
			pk_sched_remove(s, &pk_type_pod, "bench", p);
		}
	}
	snprintf(name, sizeof(name), "serve-%zu", s->snap.nnodes);
	report(name, strategy, t, f, 3, 10000);
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

		if (getenv("BENCH_SCHED_ONLY") && strcmp(getenv("BENCH_SCHED_ONLY"), st) != 0)
			continue;

		bench_gang(b, (int)(4096 / per_ss), st, false);
		bench_gang(b, (int)(16384 / per_ss), st, false);
		bench_gang(b, (int)(16384 / per_ss), st, true);
		bench_stream(b, (int)(4096 / per_ss), st);
		bench_anti(b, (int)(16384 / per_ss), st, false);
		bench_anti(b, (int)(16384 / per_ss), st, true);
		if (!getenv("BENCH_SCHED_NO_SERVE"))
			bench_serve(b, (int)(16384 / per_ss), st);
	}
	topo_board_free(b);
	return 0;
}

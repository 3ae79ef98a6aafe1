/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_placement.c — the default placement strategy next to the KEP's, on
 * clusters generated from the tpu-superslice board (hosts of 4 chips, cubes
 * of 16 hosts, superslices of 256 hosts), and against an exhaustive search:
 *
 *   gang-1024 empty     one 3-level gang of 1024 pods (64 shards of 16,
 *                       one chip each; shard -> cube, job -> superslice) on
 *                       65,536 hosts (256 superslices), all free
 *   gang-1024 busy      the same, with one busy host in every superslice but
 *                       one (a random one): the only fit is that superslice
 *   stream              3,000 gangs of 4 pods (one host each, cube-bound) one
 *                       after the other on 16,384 hosts, every 4th cube
 *                       already half busy
 *   success             1,000 generated fragmented clusters (random busy
 *                       nodes, racks and zones, mixed gang sizes and minimums,
 *                       GPUs; tests/kernel/sched/gen_placement.h): roots
 *                       scheduled by each strategy and by the exhaustive
 *                       oracle ("exhaustive", a test-only strategy)
 *
 * Times are medians over runs on one core (7 for the default strategy); a
 * time runs from the first pk_sched_cycle to the idle one, every result
 * freed, so a pod counts once it is bound in the stream.  The floor is one
 * linear pass over the snapshot's free capacities measured in the same run;
 * peak RSS is the process's so far (getrusage).  Objects are added
 * outside the timed region; each run starts from the same cluster.
 */
#define BENCH_NAME "bench_placement"
#include "tests/bench/bench_common.h"
#include "tests/kernel/sched/gen_placement.h"

#define RUNS 7

static json_t *pod(const char *name, const char *grp, const char *node, const char *tpu,
		   const char *cpu)
{
	json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:s, s:s}}}]}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
			      "namespace", "bench", "spec", "containers", "name", "c", "resources",
			      "requests", "google.com/tpu", tpu, "cpu", cpu);

	if (grp)
		json_object_set_new(json_object_get(p, "spec"), "schedulingGroup",
				    json_pack("{s:s}", "podGroupName", grp));
	if (node)
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
	return p;
}

static void row(const char *name, const char *strategy, double tm, double fm, size_t pods,
		const char *note)
{
	printf("%-16s %-5s %10.3f ms %12.0f pods/s %8.1fx floor (%.3f ms) %8ld KiB peak RSS%s\n",
	       name, strategy, tm, (double)pods / (tm / 1e3), fm > 0 ? tm / fm : 0.0, fm,
	       peak_rss_kb(), note);
}

/* The 1024-pod gang; busy: one busy host in every superslice but one. */
static void bench_gang(const struct topo_board *b, int superslices, const char *strategy, bool busy,
		       int runs)
{
	struct pk_sched *s = cluster(b, superslices, strategy);
	const char *ss = topo_board_level_key(b, 0), *cube = topo_board_level_key(b, 1);
	int64_t per_ss = topo_board_host_count(b, 1);
	double t[RUNS], f[RUNS];
	unsigned seed = 42;
	int free_ss = (int)(rand_r(&seed) % (unsigned)superslices);
	size_t expect = 1024;

	if (busy)
		for (int i = 0; i < superslices; i++) {
			char p[32];
			struct topo_host h;

			if (i == free_ss)
				continue;
			if (topo_board_host(
				b, superslices,
				i * per_ss + (int64_t)(rand_r(&seed) % (unsigned)per_ss), &h) < 0)
				die("topo_board_host", -EINVAL);
			snprintf(p, sizeof(p), "busy-%d", i);
			add(s, pod(p, NULL, h.name, "1", "1"));
		}
	for (int run = 0; run < runs; run++) {
		add(s, group(true, "job", NULL, 64, ss));
		for (int sh = 0; sh < 64; sh++) {
			char g[32], p[48];

			snprintf(g, sizeof(g), "shard-%d", sh);
			add(s, group(false, g, "job", 16, cube));
			for (int i = 0; i < 16; i++) {
				snprintf(p, sizeof(p), "shard-%d-%d", sh, i);
				add(s, pod(p, g, NULL, "1", "60"));
			}
		}
		f[run] = linear_pass(s);
		double t0 = now_ms();
		size_t bound = run_cycles(s);

		t[run] = now_ms() - t0;
		if (bound != expect) {
			fprintf(stderr, "bench_placement: %s gang bound %zu of %zu pods\n",
				strategy, bound, expect);
			exit(1);
		}
		for (int sh = 0; sh < 64; sh++) {
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
	char name[64];

	snprintf(name, sizeof(name), "gang-1024 %s", busy ? "busy" : "empty");
	row(name, strategy, median(t, runs), median(f, runs), 1024,
	    busy ? "  (255 of 256 superslices hold a busy host)" : "");
	pk_sched_free(s);
}

/* 3,000 cube-bound gangs of 4 one-host pods; every 4th cube half busy. */
static void bench_stream(const struct topo_board *b, int superslices, const char *strategy,
			 int runs)
{
	struct pk_sched *s = cluster(b, superslices, strategy);
	const char *cube = topo_board_level_key(b, 1);
	int64_t hosts = topo_board_host_count(b, superslices);
	double t[RUNS], f[RUNS];
	const int ngangs = 3000;

	for (int64_t c = 0; c * 16 < hosts; c += 4)
		for (int i = 0; i < 8; i++) {
			struct topo_host h;
			char p[32];

			if (topo_board_host(b, superslices, c * 16 + i, &h) < 0)
				die("topo_board_host", -EINVAL);
			snprintf(p, sizeof(p), "busy-%lld-%d", (long long)c, i);
			add(s, pod(p, NULL, h.name, "4", "1"));
		}
	for (int run = 0; run < runs; run++) {
		for (int gidx = 0; gidx < ngangs; gidx++) {
			char g[32], p[48];

			snprintf(g, sizeof(g), "g-%d", gidx);
			add(s, group(false, g, NULL, 4, cube));
			for (int i = 0; i < 4; i++) {
				snprintf(p, sizeof(p), "g-%d-%d", gidx, i);
				add(s, pod(p, g, NULL, "4", "8"));
			}
		}
		f[run] = linear_pass(s);
		double t0 = now_ms();
		size_t bound = run_cycles(s);

		t[run] = now_ms() - t0;
		if (bound != (size_t)ngangs * 4) {
			fprintf(stderr, "bench_placement: %s stream bound %zu of %d pods\n",
				strategy, bound, ngangs * 4);
			exit(1);
		}
		for (int gidx = 0; gidx < ngangs; gidx++) {
			char g[32], p[48];

			for (int i = 0; i < 4; i++) {
				snprintf(p, sizeof(p), "g-%d-%d", gidx, i);
				pk_sched_remove(s, &pk_type_pod, "bench", p);
			}
			snprintf(g, sizeof(g), "g-%d", gidx);
			pk_sched_remove(s, &pk_type_pod_group, "bench", g);
		}
	}
	row("stream 3000x4", strategy, median(t, runs), median(f, runs), (size_t)ngangs * 4,
	    "  (every 4th cube half busy)");
	pk_sched_free(s);
}

/* Success rate on generated fragmented clusters, with the oracle. */
static void bench_success(int n)
{
	const char *names[] = {pk_sched_strategy_name(0), "kep", "exhaustive"};
	int ok[3] = {0}, invalid = 0;
	double ms[3] = {0};

	for (int it = 0; it < n; it++) {
		struct gp_inst in;

		gp_generate(&in, 0xbe7c0000u + (unsigned)it);
		for (int k = 0; k < 3; k++) {
			char why[256];
			double t0 = now_ms();
			int r = gp_run(&in, names[k], why, sizeof(why));

			ms[k] += now_ms() - t0;
			if (r < 0) {
				fprintf(stderr, "bench_placement: instance %d: %s invalid: %s\n",
					it, names[k], why);
				invalid++;
			} else {
				ok[k] += r;
			}
		}
	}
	for (int k = 0; k < 3; k++)
		printf("success %-10s %4d of %d roots scheduled  %6.2f%% of the oracle  "
		       "(%.3f ms an instance, setup included)\n",
		       names[k], ok[k], n, ok[2] ? 100.0 * ok[k] / ok[2] : 0.0, ms[k] / n);
	if (invalid)
		exit(1);
}

int main(int argc, char **argv)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX];
	int64_t per_ss;
	int r;
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;

	if (!b)
		die("topo_board_new", -ENOMEM);
	r = topo_board_load_file(b, PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml", err,
				 sizeof(err));
	if (r < 0) {
		fprintf(stderr, "bench_placement: %s\n", err);
		return 1;
	}
	per_ss = topo_board_host_count(b, 1);
	if (per_ss <= 0 || topo_board_level_count(b) < 2) {
		fprintf(stderr, "bench_placement: board without superslice and cube levels\n");
		return 1;
	}
	printf("bench_placement: default strategy %s vs kep, board %s, medians\n",
	       pk_sched_strategy_name(0), topo_board_name(b));
	int ss = quick ? 16 : (int)(65536 / per_ss);
	/* BENCH_ONLY=gang|stream|success runs one kind (for profiling). */
	const char *only = getenv("BENCH_ONLY");

	if (!only || strcmp(only, "gang") == 0) {
		bench_gang(b, ss, pk_sched_strategy_name(0), false, RUNS);
		bench_gang(b, ss, "kep", false, RUNS);
		bench_gang(b, ss, pk_sched_strategy_name(0), true, RUNS);
		bench_gang(b, ss, "kep", true, quick ? 1 : 3);
	}
	if (!only || strcmp(only, "stream") == 0) {
		bench_stream(b, (int)(16384 / per_ss), pk_sched_strategy_name(0), RUNS);
		if (!only)
			bench_stream(b, (int)(16384 / per_ss), "kep", 1);
	}
	if (!only || strcmp(only, "success") == 0)
		bench_success(quick ? 100 : 1000);
	topo_board_free(b);
	return 0;
}

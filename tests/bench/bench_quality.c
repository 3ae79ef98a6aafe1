/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_quality.c — placement quality on heterogeneous GPU clusters: the
 * GPUs allocated over the GPUs in the cluster once the arrived pods request
 * 100%, 110% and 130% of them (gpumix.h: 1,213 nodes of several models and
 * sizes, pods of 0 to 8 GPUs, a third model-constrained, CPU-only pods with
 * large CPU requests).  Nothing departs.
 *
 * Rows for the scheduler's strategies (fit, kep: the pods go through the
 * scheduling core's cycles) and for three classic policies implemented here
 * as comparison yardsticks (first-fit in node order, best-fit and worst-fit
 * on the normalised free GPU, CPU and memory a node would keep), over
 * several seeds, each policy on the same cluster and the same sequence
 * (pk_replay_run: the same decoding, filters and accounting for every row).
 * The strategies' rows are `podctl simulate --levels`'s comparison: the
 * sequence becomes a trace and pk_sim_levels replays it.
 *
 * The targets: fit at or above the best classic policy at every level on
 * every seed, and at 100% arrived at least 25% fewer unallocated GPUs than
 * the best classic policy.  The last lines say whether they are met.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/sched/replay.h"
#include "tests/bench/classic.h"
#include "kernel/sim/sim.h"
#include "tests/bench/gpumix.h"

#define BENCH_NAME "bench_quality"

#define SEEDS 20
#define LEVELS 3

static const double levels[LEVELS] = {1.0, 1.1, 1.3};

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

static void die(const char *what, int r)
{
	fprintf(stderr, BENCH_NAME ": %s: %s\n", what, strerror(-r));
	exit(1);
}

static int best_fit(void *arg, const struct pk_replay_node *cand, size_t n, const int64_t *req)
{
	int best = 0;
	double bs = classic_kept(&cand[0], req);

	(void)arg;
	for (size_t i = 1; i < n; i++) {
		double s = classic_kept(&cand[i], req);

		if (s < bs) {
			bs = s;
			best = (int)i;
		}
	}
	return best;
}

static int worst_fit(void *arg, const struct pk_replay_node *cand, size_t n, const int64_t *req)
{
	int best = 0;
	double bs = classic_kept(&cand[0], req);

	(void)arg;
	for (size_t i = 1; i < n; i++) {
		double s = classic_kept(&cand[i], req);

		if (s > bs) {
			bs = s;
			best = (int)i;
		}
	}
	return best;
}

struct policy {
	const char *name;
	const char *strategy; /* a scheduler strategy, or NULL: pick */
	pk_replay_pick_fn pick;
	bool classic;
};

static const struct policy policies[] = {
    {"fit", "fit", NULL, false},
    {"kep", "kep", NULL, false},
    {"first-fit", NULL, classic_first_fit, true},
    {"best-fit", NULL, best_fit, true},
    {"worst-fit", NULL, worst_fit, true},
};
#define NPOL (sizeof(policies) / sizeof(policies[0]))

/*
 * One row: a strategy's through podctl simulate's comparison (pk_sim_levels
 * on the sequence as a trace), a classic policy's through pk_replay_run with
 * the policy; both are pk_replay_run's steps.
 */
static int run_row(const struct policy *pol, json_t *nodes, json_t *pods,
		   const struct pk_sim_trace *trace, double *alloc)
{
	struct pk_errors errs = {0};
	int r;

	if (pol->strategy) {
		struct pk_sim_opts so = {.strategy = pol->strategy};
		char err[512] = "";

		r = pk_sim_levels(&so, nodes, trace, levels, LEVELS, alloc, err, sizeof(err));
		if (r < 0)
			fprintf(stderr, BENCH_NAME ": %s\n", err);
		return r;
	}
	struct pk_replay_opts o = {.resource = GM_RESOURCE, .pick = pol->pick};

	r = pk_replay_run(&o, nodes, pods, levels, LEVELS, alloc, &errs);
	if (r < 0)
		pk_errors_print(&errs, stderr, BENCH_NAME ": ");
	pk_errors_clear(&errs);
	return r;
}

static void run_seed(uint64_t seed, double alloc[NPOL][LEVELS], double ms[NPOL])
{
	json_t *nodes = gm_nodes(seed), *pods = gm_pods(seed, &gm_default_mix, levels[LEVELS - 1]);
	struct pk_sim_trace *trace = NULL;
	struct pk_errors errs = {0};
	int r;

	if (!nodes || !pods)
		die("generate", -ENOMEM);
	r = pk_sim_trace_from_objects(pods, &trace, &errs);
	if (r < 0) {
		pk_errors_print(&errs, stderr, BENCH_NAME ": ");
		die("trace", r);
	}
	for (size_t p = 0; p < NPOL; p++) {
		double t0 = now_ms();

		r = run_row(&policies[p], nodes, pods, trace, alloc[p]);
		if (r < 0)
			die(policies[p].name, r);
		ms[p] = now_ms() - t0;
		printf("quality seed %llu %-10s %6.2f%% %6.2f%% %6.2f%%  (%zu pods, %.0f ms)\n",
		       (unsigned long long)seed, policies[p].name, 100 * alloc[p][0],
		       100 * alloc[p][1], 100 * alloc[p][2], json_array_size(pods), ms[p]);
	}
	pk_sim_trace_free(trace);
	json_decref(nodes);
	json_decref(pods);
}

/* Whether fit meets both targets on one seed; prints the comparison. */
static bool judge(uint64_t seed, double alloc[NPOL][LEVELS])
{
	bool ok = true;

	for (int l = 0; l < LEVELS; l++) {
		double best = 0;
		const char *who = "";

		for (size_t p = 0; p < NPOL; p++)
			if (policies[p].classic && alloc[p][l] > best) {
				best = alloc[p][l];
				who = policies[p].name;
			}
		if (alloc[0][l] + 1e-12 < best)
			ok = false;
		if (l == 0) {
			double cut = best < 1 ? 1 - (1 - alloc[0][l]) / (1 - best) : 0;

			printf("quality seed %llu at 100%%: fit %.2f%%, best classic %s %.2f%%: "
			       "%.0f%% fewer unallocated GPUs\n",
			       (unsigned long long)seed, 100 * alloc[0][l], who, 100 * best,
			       100 * cut);
			if (cut < 0.25)
				ok = false;
		}
	}
	return ok;
}

int main(void)
{
	static double alloc[SEEDS][NPOL][LEVELS], ms[SEEDS][NPOL];
	bool ok = true;

	printf("bench_quality: %d GPUs on %zu node kinds, GPUs allocated at 100%%, 110%%, 130%% "
	       "of them requested\n",
	       gm_total_gpus(), GM_NODE_TYPES);
	for (int s = 0; s < SEEDS; s++)
		run_seed((uint64_t)s + 1, alloc[s], ms[s]);
	for (int s = 0; s < SEEDS; s++)
		ok &= judge((uint64_t)s + 1, alloc[s]);
	for (size_t p = 0; p < NPOL; p++) {
		double m[LEVELS], t[SEEDS];

		for (int l = 0; l < LEVELS; l++) {
			double v[SEEDS];

			for (int s = 0; s < SEEDS; s++)
				v[s] = alloc[s][p][l];
			m[l] = median(v, SEEDS);
		}
		for (int s = 0; s < SEEDS; s++)
			t[s] = ms[s][p];
		printf("quality median %-10s %6.2f%% %6.2f%% %6.2f%%  %8.0f ms per run\n",
		       policies[p].name, 100 * m[0], 100 * m[1], 100 * m[2], median(t, SEEDS));
	}
	printf("quality targets (fit >= best classic at every level on every seed; >= 25%% fewer "
	       "unallocated GPUs at 100%%): %s\n",
	       ok ? "met" : "MISSED");
	return 0;
}

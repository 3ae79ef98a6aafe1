/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sim.c — podctl simulate's engine (kernel/sim) on the tpu-superslice
 * board: Poisson arrivals of gangs of 1 to 256 hosts (log-uniform sizes, 4
 * chips and 8 CPUs per pod), durations exponential around an hour, offered
 * at 80% of the cluster (250% for the overloaded row).  Each row replays a seeded trace once per
 * strategy and prints the wall time, the CPU time of the process (the wall time on a shared machine
 * counts the wait for a core), the events played per second of wall time (arrivals, bindings,
 * completions and the rest) and the peak resident memory of the process so far.
 *
 * Rows: a 1,024-host cluster with 2,000 jobs under fit and kep, and the
 * target size, 100,000 jobs on 16,384 hosts, under fit (at most 60 s and
 * 1 GiB); then the target size overloaded, offered at 250% of the cluster
 * so that the pending backlog grows to tens of thousands of gangs (at most
 * 60 s).  BENCH_SIM_FULL=1 adds the target size under kep;
 * BENCH_SIM_ONLY=overload runs the overloaded row alone.
 *
 * `bench_sim SUPERSLICES JOBS STRATEGY [LOAD]` runs one row (for profiling,
 * LOAD a fraction of the cluster, 0.8 when left out);
 * BENCH_SIM_BINDINGS=FILE writes every binding in order (to check that a
 * change keeps placements), BENCH_SIM_DUMP=1 prints the run's event counts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kernel/sim/sim.h"
#include "topology/topology.h"

#define BOARD PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml"

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static double unit(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

/* A CSV trace of n jobs offered at load times the hosts. */
static char *trace_csv(size_t n, int64_t hosts, double load, size_t *ret_len)
{
	double mean_size = 255.0 / log(256.0), dur = 3600.0;
	double rate = load * (double)hosts / (mean_size * dur), t = 0;
	size_t cap = n * 48 + 128, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	len += (size_t)snprintf(buf, cap, "arrival,duration,pods,accelerators,cpu,memory\n");
	for (size_t i = 0; i < n; i++) {
		int pods = (int)exp(unit() * log(256.0));

		t += -log(unit()) / rate;
		len += (size_t)snprintf(buf + len, cap - len, "%.1f,%.0f,%d,4,8,64Gi\n", t,
					fmax(1, -log(unit()) * dur), pods < 1 ? 1 : pods);
	}
	*ret_len = len;
	return buf;
}

static long peak_rss_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

static int row(struct topo_board *b, int superslices, size_t jobs, const char *strategy,
	       double load)
{
	json_t *nodes = NULL, *rep = NULL;
	struct pk_sim_trace *t = NULL;
	struct pk_sim_opts o = {.strategy = strategy, .seed = 1, .max_retries = -1};
	char err[512] = "";
	size_t len = 0;
	uint64_t events = 0;
	char *csv;
	double t0, dt, c0, dc;
	int r;

	rng = 0x2545f4914f6cdd1dULL;
	if (pk_board_nodes_json(b, superslices, &nodes) < 0)
		return -1;
	csv = trace_csv(jobs, (int64_t)json_array_size(nodes), load, &len);
	r = csv ? pk_sim_trace_parse_csv(csv, len, &t, err, sizeof(err)) : -1;
	free(csv);
	o.superslice_key = topo_board_level_key(b, 0);
	o.domain_key = topo_board_level_key(b, 1);
	if (getenv("BENCH_SIM_BINDINGS"))
		o.bindings = fopen(getenv("BENCH_SIM_BINDINGS"), "w");
	t0 = now_s();
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	if (r == 0)
		r = pk_sim_run(&o, nodes, t, &rep, &events, err, sizeof(err));
	dt = now_s() - t0;
	dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (o.bindings)
		fclose(o.bindings);
	if (r < 0) {
		fprintf(stderr, "bench_sim: %s\n", err);
	} else {
		printf(
		    "| %6zu | %7zu | %3.0f%% | %-4s | %8.1f | %7.1f | %10.0f | %9.0f | %6.1f%% | "
		    "%5ld |\n",
		    json_array_size(nodes), jobs, 100 * load, strategy, dt, dc, (double)events,
		    (double)events / dt,
		    100 * json_number_value(
			      json_object_get(json_object_get(rep, "allocation"), "mean")),
		    peak_rss_mib());
		fflush(stdout);
		if (getenv("BENCH_SIM_DUMP")) {
			json_dumpf(json_object_get(rep, "events"), stderr, JSON_COMPACT);
			fprintf(stderr, "\n");
		}
	}
	json_decref(rep);
	json_decref(nodes);
	pk_sim_trace_free(t);
	return r;
}

int main(int argc, char **argv)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX];
	bool full = getenv("BENCH_SIM_FULL") && atoi(getenv("BENCH_SIM_FULL"));
	const char *only = getenv("BENCH_SIM_ONLY");
	bool overload_only = only && strcmp(only, "overload") == 0;
	int rc = 0;

	if (!b || topo_board_load_file(b, BOARD, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_sim: %s\n", err);
		return 1;
	}
	printf("podctl simulate engine, tpu-superslice board, gangs of 1-256 hosts, "
	       "Poisson arrivals at the offered load\n\n");
	printf(
	    "|  hosts |    jobs | load | strategy | wall s | CPU s | events | events/s | alloc | "
	    "RSS MiB |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	if (argc == 4 || argc == 5) { /* one row: superslices jobs strategy [load] */
		rc = row(b, atoi(argv[1]), (size_t)atol(argv[2]), argv[3],
			 argc == 5 ? atof(argv[4]) : 0.8) < 0;
		topo_board_free(b);
		return rc;
	}
	if (!overload_only) {
		rc |= row(b, 4, 2000, "fit", 0.8) < 0;
		rc |= row(b, 4, 2000, "kep", 0.8) < 0;
		rc |= row(b, 64, 100000, "fit", 0.8) < 0;
	}
	rc |= row(b, 64, 100000, "fit", 2.5) < 0; /* overloaded: the backlog grows */
	if (full && !overload_only)
		rc |= row(b, 64, 100000, "kep", 0.8) < 0;
	topo_board_free(b);
	return rc;
}

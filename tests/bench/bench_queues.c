/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_queues.c — admission by queues in the simulator (podctl simulate
 * --queues), through the queue controller's own pass.
 *
 * Week rows: a simulated week of 4 tenants (team-a offers about twice
 * the others' work) on the tpu-superslice board (one superslice, 256
 * hosts, 1,024 chips) and on the gpu-cluster board (64 hosts, 512 GPUs):
 * Poisson arrivals at 90% of the cluster, durations exponential around 6 h,
 * gangs of 1 to 64 hosts kept in a cube or superslice (TPU) or of 1 to 16
 * kept in a rack or block (GPU).  Each tenant's ClusterQueue holds a
 * quarter of the cluster's accelerators, CPU and memory, all four in one
 * cohort (they borrow what the others leave).  The same trace runs twice:
 * podkernel's admission (quota and placement in one decision) and quota
 * first, Kueue's way (the same pass without its placement check: reserve
 * quota, place later).  Each row: admitted workloads, those admitted but not
 * placed in the cycles of the instant they were admitted ("stuck"), the
 * quota they held idle in all, the p95 wait of the worst LocalQueue, the
 * spread of the tenants' mean dominant shares, and the wall time (all of
 * the run, and in the passes).  Target: 0 stuck under podkernel, some under
 * quota first.
 *
 * Overhead row: 1,000 pending workloads in 20 queues.  A trace puts 20
 * ClusterQueues (48 chips each, no cohort) on one superslice, fills each
 * queue's quota with long jobs, queues 50 more per queue, and lets one short
 * job per queue finish a minute apart: each finish runs a pass over about
 * 1,000 pending workloads, each timed (the first, which writes every
 * pending workload's queue order and reason, aside).  Against it, a
 * scheduling round (cycles until nothing is eligible) of the scheduling
 * core on the same cluster as full, with the same 1,000 workloads pending as
 * gangs, as they would be without queues.  Target: the median pass at most
 * 20% of the median round (wall time; CPU time printed too).
 *
 * Each run keeps one queue controller between its passes (pk_queues_new), as
 * standalone does; BENCH_QUEUES_FRESH=1 makes a fresh one per pass, which
 * lists everything each time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "bench_queues"
#include "kernel/controllers/controllers.h"
#include "kernel/sim/sim.h"
#include "tests/bench/bench_common.h"

#define TPU_BOARD PODKERNEL_SRCDIR "/boards/tpu-superslice.yaml"
#define GPU_BOARD PODKERNEL_SRCDIR "/boards/gpu-cluster.yaml"
#define TENANTS 4
#define OVERHEAD_QUEUES 20
#define OVERHEAD_PENDING 50 /* per queue */
#define MAX_PASSES 64

static uint64_t rng;

static double unit(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

struct shape {
	int pods;
	double weight;
	const char *topology;
};

struct board_case {
	const char *path, *name, *resource;
	int superslices;
	int chips;
	struct shape shapes[5];
};

static const struct board_case cases[] = {
    {TPU_BOARD,
     "tpu-superslice",
     "google.com/tpu",
     1,
     4,
     {{1, 0.35, NULL},
      {4, 0.25, "topology.podkernel.dev/cube"},
      {8, 0.15, "topology.podkernel.dev/cube"},
      {16, 0.15, "topology.podkernel.dev/cube"},
      {64, 0.10, "topology.podkernel.dev/superslice"}}},
    {GPU_BOARD,
     "gpu-cluster",
     "nvidia.com/gpu",
     0,
     8,
     {{1, 0.40, NULL},
      {2, 0.20, "topology.podkernel.dev/rack"},
      {4, 0.20, "topology.podkernel.dev/rack"},
      {8, 0.15, "topology.podkernel.dev/rack"},
      {16, 0.05, "topology.podkernel.dev/block"}}},
};

static char *append(char *buf, size_t *len, size_t *cap, const char *line)
{
	size_t n = strlen(line);

	if (*len + n + 1 > *cap) {
		*cap = (*cap + n + 1) * 2;
		buf = realloc(buf, *cap);
		if (!buf)
			die("realloc", -12);
	}
	memcpy(buf + *len, line, n + 1);
	*len += n;
	return buf;
}

/* A week of the 4 tenants' jobs at 90% of the hosts (CSV). */
static char *week_csv(const struct board_case *c, int64_t hosts, size_t *ret_len)
{
	double mean = 0, dur = 6 * 3600.0, t = 0, rate;
	size_t len = 0, cap = 0;
	char *buf = append(NULL, &len, &cap,
			   "arrival,duration,pods,accelerators,cpu,memory,topology,tenant\n");

	for (int i = 0; i < 5; i++)
		mean += c->shapes[i].pods * c->shapes[i].weight;
	rate = 0.9 * (double)hosts / (mean * dur);
	rng = 0x9e3779b97f4a7c15ULL;
	for (;;) {
		const struct shape *s = &c->shapes[4];
		double r = unit(), acc = 0;
		int tenant = (int)(unit() * TENANTS);
		char line[256];

		t += -log(unit()) / rate;
		if (t >= 7 * 86400.0)
			break;
		for (int i = 0; i < 5; i++)
			if (r <= (acc += c->shapes[i].weight)) {
				s = &c->shapes[i];
				break;
			}
		if (unit() < 0.25)
			tenant = 0;
		snprintf(line, sizeof(line), "%.0f,%.0f,%d,%d,8,32Gi,%s,team-%c\n", t,
			 fmax(60, -log(unit()) * dur), s->pods, c->chips,
			 s->pods > 1 && s->topology ? s->topology : "", 'a' + tenant);
		buf = append(buf, &len, &cap, line);
	}
	*ret_len = len;
	return buf;
}

/* A ClusterQueue with quota for the resource, cpu and memory, and its LocalQueue. */
static void add_queue(json_t *objs, const char *name, const char *cohort, const char *resource,
		      int64_t chips, int64_t cpu, int64_t mem_gi)
{
	char m[32];

	snprintf(m, sizeof(m), "%lldGi", (long long)mem_gi);
	json_t *cq =
	    json_pack("{s:s,s:s,s:{s:s},s:{s:{},s:[{s:[s,s,s],s:[{s:s,s:[{s:s,s:I},{s:s,s:s},{s:s,"
		      "s:I}]}]}]}}",
		      "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "ClusterQueue", "metadata",
		      "name", name, "spec", "namespaceSelector", "resourceGroups",
		      "coveredResources", "cpu", "memory", resource, "flavors", "name", "default",
		      "resources", "name", "cpu", "nominalQuota", (json_int_t)cpu, "name", "memory",
		      "nominalQuota", m, "name", resource, "nominalQuota", (json_int_t)chips);

	if (cohort)
		json_object_set_new(json_object_get(cq, "spec"), "cohortName", json_string(cohort));
	json_array_append_new(objs, cq);
	json_array_append_new(objs, json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "apiVersion",
					      "kueue.x-k8s.io/v1beta2", "kind", "LocalQueue",
					      "metadata", "name", "queue", "namespace", name,
					      "spec", "clusterQueue", name));
}

static json_t *flavor(void)
{
	return json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
			 "ResourceFlavor", "metadata", "name", "default");
}

/*
 * The queue controller of one run, kept between its passes as standalone
 * and the simulator keep it (BENCH_QUEUES_FRESH=1: a fresh one per pass,
 * listing everything, as before it was kept).  qc is the run's, for its
 * counters.
 */
static struct pk_queues *qc;
static struct pk_store *qc_store;
static bool qc_quota_first;

static bool fresh(void)
{
	const char *f = getenv("BENCH_QUEUES_FRESH");

	return f && strcmp(f, "1") == 0;
}

static int q_open(struct pk_store *st, bool quota_first, void **ret)
{
	struct pk_queues_pass_opts o = {.quota_only = quota_first};
	int r = fresh() ? 0 : pk_queues_new(st, &o, &qc);

	qc_store = st;
	qc_quota_first = quota_first;
	*ret = &qc_store;
	return r;
}

static int q_pass(void *ctl)
{
	struct pk_queues_pass_opts o = {.quota_only = qc_quota_first};

	(void)ctl;
	return qc ? pk_queues_run(qc) : pk_queues_pass_opts(qc_store, &o);
}

/* The run is over: its controller goes with its store (its counters read before). */
static void q_close(void *ctl)
{
	(void)ctl;
}

static void run_done(void)
{
	pk_queues_free(qc);
	qc = NULL;
}

static const struct pk_sim_queue_ops queue_ops = {.open = q_open, .pass = q_pass, .close = q_close};

static double worst_p95(const json_t *q)
{
	double w = 0;
	size_t i;
	json_t *l;

	json_array_foreach(json_object_get(q, "local_queues"), i, l) w =
	    fmax(w, json_number_value(json_object_get(l, "wait_p95")));
	return w;
}

static double share_spread(const json_t *q)
{
	double lo = 1, hi = 0;
	size_t i;
	json_t *t;

	json_array_foreach(json_object_get(q, "tenants"), i, t)
	{
		double x = json_number_value(json_object_get(t, "mean_dominant_share"));

		lo = fmin(lo, x);
		hi = fmax(hi, x);
	}
	return hi - lo;
}

/* One board's week under both admissions; 0 when podkernel leaves none stuck and quota first some.
 */
static int week_rows(const struct board_case *c)
{
	struct topo_board *b = topo_board_new();
	struct pk_sim_trace *t = NULL;
	json_t *nodes = NULL, *objs = json_array();
	char err[512] = "", *csv;
	int64_t chips, cpu = 0, mem = 0, stuck[2] = {0, 0};
	size_t len = 0;

	if (!b || topo_board_load_file(b, c->path, err, sizeof(err)) < 0 ||
	    pk_board_nodes_json(b, c->superslices, &nodes) < 0)
		die(c->path, -22);
	chips = (int64_t)json_array_size(nodes) * c->chips;
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		const json_t *a = pk_get(json_array_get(nodes, i), "status.allocatable");

		int64_t c_m = 0, m_m = 0;

		topo_quantity_parse(pk_get_string(a, "cpu"), &c_m);
		topo_quantity_parse(pk_get_string(a, "memory"), &m_m);
		cpu += c_m / 1000;
		mem += m_m / 1000 / (1024 * 1024 * 1024LL);
	}
	json_array_append_new(objs, flavor());
	for (int k = 0; k < TENANTS; k++) {
		char name[16];

		snprintf(name, sizeof(name), "team-%c", 'a' + k);
		add_queue(objs, name, "all", c->resource, chips / TENANTS, cpu / TENANTS,
			  mem / TENANTS);
	}
	csv = week_csv(c, (int64_t)json_array_size(nodes), &len);
	if (pk_sim_trace_parse_csv(csv, len, &t, err, sizeof(err)) < 0)
		die(err, -22);
	for (int m = 0; m < 2; m++) {
		uint64_t pass_ns = 0;
		struct pk_sim_opts o = {.seed = 1,
					.max_retries = -1,
					.label = c->name,
					.queues = objs,
					.queue_ops = &queue_ops,
					.quota_first = m == 1,
					.queue_pass_ns = &pass_ns};
		json_t *rep = NULL;
		double t0 = now_ms();

		struct pk_queues_stats qs = {0};

		if (pk_sim_run(&o, nodes, t, &rep, NULL, err, sizeof(err)) < 0)
			die(err, -22);
		if (qc)
			pk_queues_get_stats(qc, &qs);
		run_done();
		if (qs.placements) /* aside the table, which stays as it is */
			fprintf(stderr,
				"%s: %llu placement checks, %llu on the scheduler of the pass "
				"before\n",
				c->name, (unsigned long long)qs.placements,
				(unsigned long long)qs.carried);
		const json_t *q = json_object_get(rep, "queues");

		stuck[m] = (int64_t)json_number_value(json_object_get(q, "admitted_unplaceable"));
		printf("| %-14s | %5zu | %-11s | %8.0f | %5lld | %8.1f | %8.1f | %6.1f%% | %6.1f | "
		       "%6.1f | %5ld |\n",
		       c->name, pk_sim_trace_jobs(t), m ? "quota first" : "podkernel",
		       json_number_value(json_object_get(q, "admitted")), (long long)stuck[m],
		       json_number_value(pk_get(q, "admitted_unplaced_seconds.total")) / 3600,
		       worst_p95(q) / 3600, 100 * share_spread(q), (now_ms() - t0) / 1000,
		       (double)pass_ns / 1e9, peak_rss_kb() / 1024);
		fflush(stdout);
		json_decref(rep);
	}
	free(csv);
	pk_sim_trace_free(t);
	json_decref(nodes);
	json_decref(objs);
	topo_board_free(b);
	return stuck[0] == 0 && stuck[1] > 0 ? 0 : 1;
}

/* ---- overhead: 1,000 pending workloads in 20 queues -------------------------------- */

static double pass_ms[MAX_PASSES], pass_cpu_ms[MAX_PASSES];
static int npass;

/* This process's CPU time: the VM's other load aside. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int timed_pass(void *ctl)
{
	double t0 = now_ms(), c0 = cpu_ms();
	int r = q_pass(ctl);

	if (npass < MAX_PASSES) {
		pass_cpu_ms[npass] = cpu_ms() - c0;
		pass_ms[npass++] = now_ms() - t0;
	}
	return r;
}

static const struct pk_sim_queue_ops timed_ops = {
    .open = q_open, .pass = timed_pass, .close = q_close};

/*
 * Per queue: 3 jobs of 4 hosts (48 chips, its quota) run for a day but the
 * last, which ends after (queue + 1) minutes; 50 pending of 1-4 hosts.
 */
static char *overhead_csv(size_t *ret_len)
{
	size_t len = 0, cap = 0;
	char *buf = append(NULL, &len, &cap, "arrival,duration,pods,accelerators,cpu,tenant\n");
	char line[128];

	rng = 0x2545f4914f6cdd1dULL;
	for (int q = 0; q < OVERHEAD_QUEUES; q++)
		for (int k = 0; k < 3; k++) {
			snprintf(line, sizeof(line), "0,%d,4,4,8,q%02d\n",
				 k == 2 ? 60 * (q + 1) : 86400, q);
			buf = append(buf, &len, &cap, line);
		}
	for (int k = 0; k < OVERHEAD_PENDING; k++)
		for (int q = 0; q < OVERHEAD_QUEUES; q++) {
			snprintf(line, sizeof(line), "1,86400,%d,4,8,q%02d\n",
				 1 + (int)(unit() * 4), q);
			buf = append(buf, &len, &cap, line);
		}
	*ret_len = len;
	return buf;
}

/* A gang of pods pods of 4 chips in namespace ns, into s. */
static void add_gang(struct pk_sched *s, const char *ns, int pods)
{
	char name[16];

	if (pods > 1)
		add(s,
		    json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:s,s:s},s:{s:{s:i}}}}", "apiVersion",
			      "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name",
			      "g", "namespace", ns, "spec", "workloadRef", "workloadName", "g",
			      "templateName", "g", "schedulingPolicy", "gang", "minCount", pods));
	for (int k = 0; k < pods; k++) {
		json_t *p =
		    json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s,s:{s:{s:s,s:s}}}]}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", "p",
			      "namespace", ns, "spec", "containers", "name", "c", "image", "x",
			      "resources", "requests", "google.com/tpu", "4", "cpu", "8");

		snprintf(name, sizeof(name), "p%d", k);
		json_object_set_new(json_object_get(p, "metadata"), "name", json_string(name));
		if (pods > 1)
			pk_set(p, "spec.schedulingGroup.podGroupName", json_string("g"));
		add(s, p);
	}
}

/* A scheduling round with the trace's workloads pending as gangs, once the queues' quota is
 * running. */
static double round_ms(const struct topo_board *b, const struct pk_sim_trace *t, double *ret_cpu)
{
	struct pk_sched *s = cluster(b, 1, NULL);
	struct pk_sim_job_info ji;
	char ns[16];
	double t0, c0;

	for (size_t j = 0; j < pk_sim_trace_jobs(t); j++) {
		if (pk_sim_trace_job(t, j, &ji) < 0)
			die("pk_sim_trace_job", -22);
		snprintf(ns, sizeof(ns), "t%zu", j);
		add_gang(s, ns, ji.pods);
		if (j + 1 == 3 * OVERHEAD_QUEUES)
			run_cycles(s); /* the running part: every queue's quota */
	}
	t0 = now_ms();
	c0 = cpu_ms();
	run_cycles(s);
	*ret_cpu = cpu_ms() - c0;
	t0 = now_ms() - t0;
	pk_sched_free(s);
	return t0;
}

static int overhead_row(void)
{
	struct topo_board *b = topo_board_new();
	struct pk_sim_trace *t = NULL;
	json_t *nodes = NULL, *objs = json_array(), *rep = NULL;
	char err[512] = "", *csv;
	double rounds[5], rounds_cpu[5], pass, round, pass_cpu, round_cpu;
	struct pk_queues_stats qs = {0};
	size_t len = 0;
	int ok;

	if (!b || topo_board_load_file(b, TPU_BOARD, err, sizeof(err)) < 0 ||
	    pk_board_nodes_json(b, 1, &nodes) < 0)
		die(TPU_BOARD, -22);
	json_array_append_new(objs, flavor());
	for (int q = 0; q < OVERHEAD_QUEUES; q++) {
		char name[8];

		snprintf(name, sizeof(name), "q%02d", q);
		add_queue(objs, name, NULL, "google.com/tpu", 48, 2000, 4000);
	}
	csv = overhead_csv(&len);
	if (pk_sim_trace_parse_csv(csv, len, &t, err, sizeof(err)) < 0)
		die(err, -22);
	struct pk_sim_opts o = {.seed = 1,
				.max_retries = -1,
				.label = "overhead",
				.queues = objs,
				.queue_ops = &timed_ops,
				.until_ms = 60 * 1000 * (OVERHEAD_QUEUES + 1)};

	npass = 0;
	if (pk_sim_run(&o, nodes, t, &rep, NULL, err, sizeof(err)) < 0 || npass < 3)
		die(err[0] ? err : "too few passes", -22);
	if (qc)
		pk_queues_get_stats(qc, &qs);
	run_done();
	pass = median(pass_ms + 2, npass - 2); /* the first two write every pending's reason */
	pass_cpu = median(pass_cpu_ms + 2, npass - 2);
	for (int i = 0; i < 5; i++)
		rounds[i] = round_ms(b, t, &rounds_cpu[i]);
	round = median(rounds, 5);
	round_cpu = median(rounds_cpu, 5);
	ok = pass <= 0.2 * round;
	printf("\nadmission overhead, %d pending workloads in %d queues (tpu-superslice, 256 "
	       "hosts): median pass %.1f ms over %d passes, median scheduling round %.1f ms with "
	       "them pending as gangs: %.0f%% (target at most 20%%: %s)\n",
	       OVERHEAD_QUEUES * OVERHEAD_PENDING, OVERHEAD_QUEUES, pass, npass - 2, round,
	       100 * pass / round, ok ? "met" : "MISSED");
	printf("in CPU time (this process's, the VM's other load aside): median pass %.1f ms, "
	       "median round %.1f ms: %.0f%%\n",
	       pass_cpu, round_cpu, 100 * pass_cpu / round_cpu);
	printf("its controller over the run: %llu passes, %llu listings, %llu workloads decoded, "
	       "%llu tried, %llu placement checks (%llu on the scheduler of the pass before), "
	       "%llu not tried (parked, nothing changed), %llu not visited (their queue "
	       "unchanged)\n",
	       (unsigned long long)qs.passes, (unsigned long long)qs.lists,
	       (unsigned long long)qs.decodes, (unsigned long long)qs.tries,
	       (unsigned long long)qs.placements, (unsigned long long)qs.carried,
	       (unsigned long long)qs.parked, (unsigned long long)qs.skipped);
	free(csv);
	json_decref(rep);
	pk_sim_trace_free(t);
	json_decref(nodes);
	json_decref(objs);
	topo_board_free(b);
	return 0;
}

int main(int argc, char **argv)
{
	int stuck = 0;

	printf("queues in the simulator: a week of 4 tenants, podkernel's admission (quota and "
	       "placement together) against quota first (Kueue's way)\n\n");
	printf("| board | jobs | admission | admitted | stuck | quota idle h | worst p95 wait h "
	       "| share spread | wall s | pass s | RSS MiB "
	       "|\n|---|---|---|---|---|---|---|---|---|---|---|"
	       "\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (argc < 2 || strcmp(argv[1], "overhead"))
			stuck |= week_rows(&cases[i]);
	if (argc < 2 || strcmp(argv[1], "overhead"))
		printf("\nstuck (admitted, not placed at once): target 0 under podkernel and some "
		       "under quota first on both boards: %s\n",
		       stuck ? "MISSED" : "met");
	if (argc < 2 || strcmp(argv[1], "week"))
		overhead_row();
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl simulate — replay a trace on a board's simulated cluster on a
 * virtual clock (kernel/sim/sim.h; CONTRACT.md).
 *
 * Every pair of board (--board, up to two) and strategy (--strategy, a comma
 * list, up to four) is one run; the runs are reported side by side.  The
 * terminal summary goes to standard output, and -o writes the report: a
 * FILE.html page, a FILE.json document, or `json` to standard output (then
 * the summary goes to standard error).  The events played per second of
 * wall time go to standard error; nothing of the wall clock is in the
 * report, which the same trace, boards, strategies and seed reproduce byte
 * for byte.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/controllers/controllers.h"
#include "kernel/podctl/podctl.h"
#include "kernel/sched/sched.h"
#include "kernel/sim/sim.h"
#include "topology/topology.h"

#define MAX_BOARDS 2
#define MAX_STRATEGIES 4
#define MAX_LOSSES 256
#define MAX_LEVELS 8

struct sim_args {
	const char *boards[MAX_BOARDS];
	size_t nboards;
	const char *nodes;		/* an OpenB node list instead of boards */
	struct pk_sim_openb_opts openb; /* --inflate, --seed, --max-total-pods */
	int superslices;
	const char *trace, *output;
	char *strategies[MAX_STRATEGIES];
	size_t nstrategies;
	struct pk_sim_opts o;
	struct pk_sim_node_loss loss[MAX_LOSSES];
	const char *bindings, *queues_file, *admissions;
	json_t *queues;
	bool admission[2]; /* --admission: podkernel, quota-first */
	double levels[MAX_LEVELS];
	size_t nlevels;
	uint64_t max_total_pods; /* --max-total-pods: the trace's pods in all */
};

static void usage(FILE *f)
{
	fputs(
	    "Usage: podctl simulate --board FILE [--board FILE] [--superslices N] --trace FILE\n"
	    "       podctl simulate --nodes NODES.csv --trace PODS.csv [--inflate F]  an OpenB\n"
	    "                       node and pod list, pods drawn to F times the GPUs\n"
	    "                       [--strategy NAME[,NAME...]] [--until T] [--seed N]\n"
	    "                       [--start-delay T] [--failure-rate P] [--max-retries N]\n"
	    "                       [--node-loss T:NODE]... [-o FILE.html|FILE.json|json]\n"
	    "                       [--bindings FILE]  every binding, in order (ns/pod node)\n"
	    "                       [--levels P[,P...]]  accelerators allocated once the\n"
	    "                       arrived pods request P%% of the cluster's, nothing departing\n"
	    "                       [--max-total-pods N]  the trace's pods in all (default\n"
	    "                       1000000)\n"
	    "                       [--queues FILE]  Kueue objects that admit the CSV rows\n"
	    "                       with a tenant (and queue) column\n"
	    "                       [--admission podkernel|quota-first|podkernel,quota-first]\n"
	    "                       [--admissions FILE]  every admission, in order\n"
	    "  T: seconds, or a number with s, m, h or d.  The trace is CSV (FILE.csv) or\n"
	    "  YAML/JSON objects carrying " PK_SIM_ANN_ARRIVAL " and " PK_SIM_ANN_DURATION ".\n"
	    "Strategies:",
	    f);
	for (size_t i = 0; i < pk_sched_strategy_count(); i++)
		fprintf(f, " %s%s", pk_sched_strategy_name(i), i == 0 ? " (default)" : "");
	fputc('\n', f);
}

static const char *value(int *i, int argc, char **argv, const char *s, const char *l)
{
	const char *a = argv[*i];
	size_t n = strlen(l);

	if ((s && strcmp(a, s) == 0) || strcmp(a, l) == 0)
		return *i + 1 < argc ? argv[++*i] : "";
	if (strncmp(a, l, n) == 0 && a[n] == '=')
		return a + n + 1;
	return NULL;
}

static int bad(const char *flag, const char *v, const char *what)
{
	fprintf(stderr, "podctl simulate: %s: invalid value '%s': %s\n", flag, v ? v : "", what);
	return PODCTL_EXIT_USAGE;
}

static int split_strategies(struct sim_args *a, const char *v)
{
	char *copy = strdup(v), *save = NULL, *tok;

	if (!copy)
		return PODCTL_EXIT_FAILURE;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool known = false;

		for (size_t i = 0; i < pk_sched_strategy_count(); i++)
			known |= strcmp(pk_sched_strategy_name(i), tok) == 0;
		if (!known || a->nstrategies == MAX_STRATEGIES) {
			int r = bad("--strategy", tok,
				    known ? "at most 4 strategies" : "no such strategy");

			free(copy);
			return r;
		}
		a->strategies[a->nstrategies] = strdup(tok);
		if (!a->strategies[a->nstrategies++]) {
			free(copy);
			return PODCTL_EXIT_FAILURE;
		}
	}
	free(copy);
	return a->nstrategies ? 0 : bad("--strategy", v, "expected NAME[,NAME...]");
}

/* --levels: ascending positive percents of the cluster's accelerators (fractions kept). */
static int split_levels(struct sim_args *a, const char *v)
{
	const char *p = v;

	a->nlevels = 0;
	while (*p) {
		char *end;
		double l = strtod(p, &end);

		if (end > p && *end == '%')
			end++;
		l /= 100;
		if (end == p || !(l > 0 && l <= 100) || (*end && *end != ',') ||
		    a->nlevels == MAX_LEVELS || (a->nlevels && l <= a->levels[a->nlevels - 1]))
			return bad("--levels", v,
				   "expected up to 8 ascending percents, e.g. 100,110,130");
		a->levels[a->nlevels++] = l;
		p = *end ? end + 1 : end;
	}
	return a->nlevels ? 0 : bad("--levels", v, "expected L[,L...]");
}

static int node_loss(struct sim_args *a, const char *v)
{
	const char *colon = strchr(v, ':');
	char t[64];

	if (!colon || colon == v || !colon[1] || (size_t)(colon - v) >= sizeof(t) ||
	    a->o.nnode_loss == MAX_LOSSES)
		return bad("--node-loss", v, "expected T:NODE (at most 256)");
	memcpy(t, v, (size_t)(colon - v));
	t[colon - v] = '\0';
	if (pk_sim_parse_seconds(t, &a->loss[a->o.nnode_loss].at_ms) < 0)
		return bad("--node-loss", v, "T: expected seconds");
	a->loss[a->o.nnode_loss++].node = colon + 1;
	return 0;
}

static int numbers(struct sim_args *a, const char *flag, const char *v)
{
	char *end;

	if (strcmp(flag, "--seed") == 0) {
		errno = 0;
		a->o.seed = a->openb.seed = strtoull(v, &end, 10);
		return errno || end == v || *end || *v == '-' ? bad(flag, v, "expected an integer")
							      : 0;
	}
	if (strcmp(flag, "--inflate") == 0) {
		a->openb.inflate = strtod(v, &end);
		return end == v || *end || !(a->openb.inflate > 0 && a->openb.inflate <= 100)
			   ? bad(flag, v, "expected a factor over 0, e.g. 1.3")
			   : 0;
	}
	if (strcmp(flag, "--failure-rate") == 0) {
		a->o.failure_rate = strtod(v, &end);
		return end == v || *end || !(a->o.failure_rate >= 0 && a->o.failure_rate <= 1)
			   ? bad(flag, v, "expected a probability from 0 to 1")
			   : 0;
	}
	long n = strtol(v, &end, 10);

	if (end == v || *end || n < 0 || n > (strcmp(flag, "--superslices") == 0 ? 4096 : 1000))
		return bad(flag, v, "expected a small non-negative integer");
	if (strcmp(flag, "--superslices") == 0)
		a->superslices = (int)n;
	else
		a->o.max_retries = (int)n;
	return 0;
}

/* --admission: podkernel (quota and placement together), quota-first (Kueue's), or both. */
static int admission_modes(struct sim_args *a, const char *v)
{
	if (strcmp(v, "podkernel") == 0 || strcmp(v, "podkernel,quota-first") == 0)
		a->admission[0] = true;
	if (strcmp(v, "quota-first") == 0 || strcmp(v, "podkernel,quota-first") == 0)
		a->admission[1] = true;
	return a->admission[0] || a->admission[1]
		   ? 0
		   : bad("--admission", v,
			 "expected podkernel, quota-first or both, comma-separated");
}

/* The queue controller a run keeps (pk_sim_queue_ops). */
static int queues_open(struct pk_store *store, bool quota_first, void **ret_ctl)
{
	struct pk_queues_pass_opts o = {.quota_only = quota_first};

	return pk_queues_new(store, &o, (struct pk_queues **)ret_ctl);
}

static int queues_pass(void *ctl)
{
	return pk_queues_run(ctl);
}

static void queues_close(void *ctl)
{
	pk_queues_free(ctl);
}

static const struct pk_sim_queue_ops queue_ops = {
    .open = queues_open, .pass = queues_pass, .close = queues_close};

/* The flags that name a file: set, and its value in *ret_v. */
static bool path_flag(struct sim_args *a, int *i, int argc, char **argv, const char **ret_v)
{
	static const char *const flags[] = {"--nodes", "--trace", "--bindings", "--queues",
					    "--admissions"};
	const char **slots[] = {&a->nodes, &a->trace, &a->bindings, &a->queues_file,
				&a->admissions};

	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
		if ((*ret_v = value(i, argc, argv, NULL, flags[k]))) {
			*slots[k] = *ret_v;
			return true;
		}
	return false;
}

static int parse(struct sim_args *a, int argc, char **argv)
{
	static const char *const num_flags[] = {"--seed", "--failure-rate", "--superslices",
						"--max-retries", "--inflate"};

	for (int i = 1; i < argc; i++) {
		const char *v;
		int r = -1;

		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return -1;
		}
		if ((v = value(&i, argc, argv, NULL, "--board"))) {
			if (a->nboards == MAX_BOARDS || !*v)
				return bad("--board", v, "one or two board files");
			a->boards[a->nboards++] = v;
			continue;
		}
		if ((v = value(&i, argc, argv, NULL, "--max-total-pods"))) {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(v, &end, 10);
			if (end == v || *end || errno || n < 1 || *v == '-')
				return bad("--max-total-pods", v,
					   "expected a positive whole number");
			a->max_total_pods = n;
			continue;
		}
		if (path_flag(a, &i, argc, argv, &v))
			continue;
		if ((v = value(&i, argc, argv, "-o", "--output"))) {
			a->output = v;
			continue;
		}
		if ((v = value(&i, argc, argv, NULL, "--admission"))) {
			r = admission_modes(a, v);
			if (r != 0)
				return r;
			continue;
		}
		if ((v = value(&i, argc, argv, NULL, "--strategy")))
			r = split_strategies(a, v);
		else if ((v = value(&i, argc, argv, NULL, "--node-loss")))
			r = node_loss(a, v);
		else if ((v = value(&i, argc, argv, NULL, "--levels")))
			r = split_levels(a, v);
		else if ((v = value(&i, argc, argv, NULL, "--until")))
			r = pk_sim_parse_seconds(v, &a->o.until_ms) < 0
				? bad("--until", v, "expected seconds")
				: 0;
		else if ((v = value(&i, argc, argv, NULL, "--start-delay")))
			r = pk_sim_parse_seconds(v, &a->o.start_delay_ms) < 0
				? bad("--start-delay", v, "expected seconds")
				: 0;
		for (size_t k = 0; !v && k < 5; k++)
			if ((v = value(&i, argc, argv, NULL, num_flags[k])))
				r = numbers(a, num_flags[k], v);
		if (!v) {
			fprintf(stderr, "podctl simulate: unknown or incomplete option '%s'\n",
				argv[i]);
			usage(stderr);
			return PODCTL_EXIT_USAGE;
		}
		if (r != 0)
			return r;
	}
	if ((!a->nboards == !a->nodes) || !a->trace) {
		fprintf(stderr, "podctl simulate: --trace and either --board or --nodes are "
				"required\n");
		usage(stderr);
		return PODCTL_EXIT_USAGE;
	}
	if (!a->nodes && a->openb.inflate > 0)
		return bad("--inflate", "", "only with --nodes (an OpenB pod list)");
	if (!a->queues_file && (a->admission[0] || a->admission[1] || a->admissions))
		return bad(a->admissions ? "--admissions" : "--admission", "",
			   "only with --queues");
	if (a->queues_file && a->nodes)
		return bad("--queues", a->queues_file, "not with --nodes (an OpenB trace)");
	if (!a->admission[1])
		a->admission[0] = true;
	return 0;
}

static int load_board(const char *path, int superslices, struct topo_board **ret_board,
		      json_t **ret_nodes)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX] = "";
	int r = b ? topo_board_load_file(b, path, err, sizeof(err)) : -ENOMEM;

	if (r == 0)
		r = pk_board_nodes_json(b, superslices, ret_nodes);
	if (r < 0) {
		fprintf(stderr, "podctl simulate: %s\n", err[0] ? err : strerror(-r));
		topo_board_free(b);
		return podctl_input_exit(r);
	}
	*ret_board = b;
	return 0;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * --levels: the run's strategy on the same nodes and trace, replayed with
 * nothing departing (pk_sim_levels: bench_quality's comparison), into the
 * run's report as arrival_levels.
 */
static int add_levels(struct sim_args *a, const json_t *nodes, const struct pk_sim_trace *trace,
		      json_t *rep)
{
	double alloc[MAX_LEVELS];
	char err[512] = "";
	json_t *v = json_array();
	int r =
	    v ? pk_sim_levels(&a->o, nodes, trace, a->levels, a->nlevels, alloc, err, sizeof(err))
	      : -ENOMEM;

	double total = json_number_value(json_object_get(rep, "accelerators"));

	for (size_t i = 0; r == 0 && i < a->nlevels; i++)
		r = json_array_append_new(v, json_pack("{s:f,s:f,s:f}", "arrived_percent",
						       round(a->levels[i] * 1e6) / 1e4, "allocated",
						       round(alloc[i] * total * 1000.0) / 1000.0,
						       "allocated_ratio",
						       round(alloc[i] * 10000.0) / 10000.0)) < 0
			? -ENOMEM
			: 0;
	if (r == 0)
		r = json_object_set_new(rep, "levels", v) < 0 ? -ENOMEM : 0;
	else
		json_decref(v);
	if (r < 0)
		fprintf(stderr, "podctl simulate: --levels: %s\n", err[0] ? err : strerror(-r));
	return r;
}

/* One run per strategy on nodes, appended to runs. */
static int run_strategies(struct sim_args *a, const char *where, const json_t *nodes,
			  const struct pk_sim_trace *trace, json_t *runs)
{
	int r = 0;

	for (size_t m = 0; r == 0 && m < 2 * (a->nstrategies ? a->nstrategies : 1); m++) {
		size_t s = m / 2;
		json_t *rep = NULL;
		uint64_t events = 0, pass_ns = 0;
		char err[512] = "";
		double t0 = wall();

		if (!a->admission[m % 2])
			continue;
		a->o.strategy = a->nstrategies ? a->strategies[s] : NULL;
		a->o.quota_first = m % 2;
		a->o.queue_pass_ns = &pass_ns;
		r = pk_sim_run(&a->o, nodes, trace, &rep, &events, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "podctl simulate: %s: %s\n", where, err);
			return r == -EINVAL ? PODCTL_EXIT_USAGE : PODCTL_EXIT_FAILURE;
		}
		double dt = wall() - t0;

		if (a->nlevels && add_levels(a, nodes, trace, rep) < 0) {
			json_decref(rep);
			return PODCTL_EXIT_FAILURE;
		}
		fprintf(stderr, "podctl simulate: %s/%s: %llu events in %.2f s (%.0f events/s)\n",
			a->o.label, json_string_value(json_object_get(rep, "strategy")),
			(unsigned long long)events, dt, dt > 0 ? (double)events / dt : 0.0);
		if (a->queues)
			fprintf(
			    stderr,
			    "podctl simulate: %s/%s: %s admission: %.0f passes, %.2f s in them\n",
			    a->o.label, json_string_value(json_object_get(rep, "strategy")),
			    a->o.quota_first ? "quota-first" : "podkernel",
			    json_number_value(pk_get(rep, "queues.passes")), (double)pass_ns / 1e9);
		if (json_array_size(json_object_get(rep, "node_loss_not_on_board")))
			fprintf(stderr,
				"podctl simulate: %s: --node-loss names nodes not on this "
				"board (%zu), ignored for it\n",
				where,
				json_array_size(json_object_get(rep, "node_loss_not_on_board")));
		json_array_append_new(runs, rep);
	}
	return 0;
}

/* One run per board and strategy, appended to runs. */
static int run_all(struct sim_args *a, const struct pk_sim_trace *trace, json_t *runs)
{
	for (size_t b = 0; b < a->nboards; b++) {
		struct topo_board *board = NULL;
		json_t *nodes = NULL;
		int r = load_board(a->boards[b], a->superslices, &board, &nodes);
		size_t nl = topo_board_level_count(board);

		if (r != 0)
			return r;
		a->o.label = topo_board_name(board);
		a->o.superslice_key = nl > 1 ? topo_board_level_key(board, 0) : NULL;
		a->o.domain_key = nl > 2 ? topo_board_level_key(board, 1) : NULL;
		r = run_strategies(a, a->boards[b], nodes, trace, runs);
		json_decref(nodes);
		topo_board_free(board);
		if (r != 0)
			return r;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

/*
 * What made the runs, for the report: the version, the trace, the seed and
 * the flags, less those that only say where output goes (-o, --bindings),
 * so the same runs give the same report wherever it is written.
 */
static json_t *provenance(const struct sim_args *a, int argc, char **argv)
{
	json_t *flags = json_array();

	for (int i = 1; flags && i < argc; i++) {
		const char *s = argv[i];

		if (strcmp(s, "-o") == 0 || strcmp(s, "--output") == 0 ||
		    strcmp(s, "--bindings") == 0 || strcmp(s, "--admissions") == 0) {
			i++;
			continue;
		}
		if (strncmp(s, "--output=", 9) == 0 || strncmp(s, "--bindings=", 11) == 0 ||
		    strncmp(s, "--admissions=", 13) == 0)
			continue;
		json_array_append_new(flags, json_string(s));
	}
	return json_pack("{s:s,s:s,s:I,s:o}", "version", PODKERNEL_VERSION, "trace", a->trace,
			 "seed", (json_int_t)a->o.seed, "flags", flags ? flags : json_array());
}

static int write_output(const struct sim_args *a, const json_t *runs, const json_t *prov)
{
	FILE *f;
	int r;

	if (!a->output || strcmp(a->output, "text") == 0)
		return pk_sim_report_text(stdout, runs) < 0 ? PODCTL_EXIT_FAILURE : 0;
	if (strcmp(a->output, "json") == 0) {
		pk_sim_report_text(stderr, runs);
		return pk_sim_report_json(stdout, runs, prov) < 0 ? PODCTL_EXIT_FAILURE : 0;
	}
	if (!ends_with(a->output, ".html") && !ends_with(a->output, ".json"))
		return bad("-o", a->output, "expected FILE.html, FILE.json, json or text");
	pk_sim_report_text(stdout, runs);
	f = fopen(a->output, "w");
	if (!f) {
		fprintf(stderr, "podctl simulate: %s: %s\n", a->output, strerror(errno));
		return PODCTL_EXIT_FAILURE;
	}
	r = ends_with(a->output, ".html") ? pk_sim_report_html(f, runs, prov)
					  : pk_sim_report_json(f, runs, prov);
	if (fclose(f) != 0 || r < 0) {
		fprintf(stderr, "podctl simulate: writing %s failed\n", a->output);
		return PODCTL_EXIT_FAILURE;
	}
	printf("report: %s\n", a->output);
	return 0;
}

/* --queues FILE (its objects) and --admissions FILE. */
static int open_queues(struct sim_args *a)
{
	char err[512] = "";
	int r = pk_read_file(a->queues_file, &a->queues, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "podctl simulate: %s: %s\n", a->queues_file, err);
		return podctl_input_exit(r);
	}
	a->o.queues = a->queues;
	a->o.queue_ops = &queue_ops;
	if (a->admissions && !(a->o.admissions = fopen(a->admissions, "w"))) {
		fprintf(stderr, "podctl simulate: %s: %s\n", a->admissions, strerror(errno));
		return PODCTL_EXIT_FAILURE;
	}
	return 0;
}

int podctl_simulate(int argc, char **argv)
{
	struct sim_args a = {.o = {.max_retries = -1, .seed = 1},
			     .max_total_pods = PK_SIM_MAX_PODS_DEFAULT};
	struct pk_sim_trace *trace = NULL;
	json_t *runs = json_array(), *nodes = NULL;
	char err[512] = "";
	int r;

	a.o.node_loss = a.loss;
	r = parse(&a, argc, argv);
	if (r == 0 && a.nodes) {
		a.openb.max_pods = (size_t)a.max_total_pods;
		r = pk_sim_openb_load(a.nodes, a.trace, &a.openb, &nodes, &trace, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "podctl simulate: %s\n", err);
			r = podctl_input_exit(r);
		}
	} else if (r == 0) {
		r = pk_sim_trace_load(a.trace, &trace, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "podctl simulate: %s: %s\n", a.trace, err);
			r = podctl_input_exit(r);
		}
	}
	if (r == 0 && pk_sim_trace_pods(trace) > a.max_total_pods) {
		fprintf(stderr,
			"podctl simulate: %s: the trace asks for %" PRIu64 " pods in all, more "
			"than --max-total-pods %" PRIu64 " (raise it to simulate this trace)\n",
			a.trace, pk_sim_trace_pods(trace), a.max_total_pods);
		r = podctl_input_exit(-E2BIG);
	}
	if (r == 0 && a.bindings && !(a.o.bindings = fopen(a.bindings, "w"))) {
		fprintf(stderr, "podctl simulate: %s: %s\n", a.bindings, strerror(errno));
		r = PODCTL_EXIT_FAILURE;
	}
	if (r == 0 && a.queues_file)
		r = open_queues(&a);
	if (r == 0 && nodes) {
		a.o.label = "openb";
		r = run_strategies(&a, a.nodes, nodes, trace, runs);
	} else if (r == 0) {
		r = run_all(&a, trace, runs);
	}
	if (a.o.bindings && fclose(a.o.bindings) != 0 && r == 0)
		r = PODCTL_EXIT_FAILURE;
	if (a.o.admissions && fclose(a.o.admissions) != 0 && r == 0)
		r = PODCTL_EXIT_FAILURE;
	json_decref(a.queues);
	if (r == 0) {
		json_t *prov = provenance(&a, argc, argv);

		r = write_output(&a, runs, prov);
		json_decref(prov);
	}
	pk_sim_trace_free(trace);
	json_decref(nodes);
	json_decref(runs);
	for (size_t i = 0; i < a.nstrategies; i++)
		free(a.strategies[i]);
	return r < 0 ? PODCTL_EXIT_OK : r;
}

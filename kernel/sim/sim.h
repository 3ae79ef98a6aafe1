/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim.h — trace-driven cluster simulation on a virtual clock.
 *
 * A trace is a list of jobs, each with an arrival time, a duration and the
 * objects it submits (a gang of pods, a Job, a JobSet).  pk_sim_run() feeds
 * a board's nodes and the jobs, as they arrive, to the scheduling core
 * (kernel/sched, the same pk_sched API the appliance drives) and plays the
 * pod lifecycle the appliance plays on simulated boards: a pod bound at t is
 * Running at t + start delay and Succeeded at t + start delay + duration,
 * when it frees its node; injected failures (a failure rate per job attempt,
 * node loss at given times) fail every pod of the job, which is then placed
 * again as a whole (up to max_retries times).  Nothing is written anywhere:
 * no HTTP, no store.  Every random choice comes from the seed, so a trace,
 * board and seed give the same report, byte for byte.
 *
 * The report (a JSON object per run) holds the accelerator allocation over
 * time, queueing delay percentiles by gang size, jobs never placed,
 * preemptions, stranded accelerators and fragmentation; pk_sim_report_*
 * write it as JSON, a terminal summary or a self-contained HTML page, with
 * several runs (strategies or boards) side by side.
 *
 * Conventions: 0 or -errno; ret_* written on success only.
 */
#ifndef PODKERNEL_KERNEL_SIM_H
#define PODKERNEL_KERNEL_SIM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/api/api.h"
#include "kernel/sched/replay.h"

/* Annotations that carry a job's timing in an object trace (seconds, or N[smhd]). */
#define PK_SIM_ANN_ARRIVAL "sim.podkernel.dev/arrival"
#define PK_SIM_ANN_DURATION "sim.podkernel.dev/duration"

#define PK_SIM_MAX_JOBS 10000000 /* jobs one trace may hold */
#define PK_SIM_MAX_GANG 100000	 /* pods one CSV row may ask for */
#define PK_SIM_MAX_LINE 4096	 /* bytes of one CSV line */
/* Pods a whole trace may ask for unless the caller raises it (podctl simulate
 * --max-total-pods): each simulated pod holds about a kilobyte. */
#define PK_SIM_MAX_PODS_DEFAULT 1000000

struct pk_sim_trace;
struct pk_store;

/* Seconds ("90", "1.5") or a number with a unit s, m, h, d, to milliseconds; -EINVAL. */
int pk_sim_parse_seconds(const char *s, int64_t *ret_ms);

/*
 * A CSV trace: a header row naming the columns arrival and duration
 * (seconds), and optionally pods (default 1; a gang when over 1),
 * accelerators, cpu and memory (per pod, Kubernetes quantities), model
 * (required value of the accelerator product label) and priority (an
 * integer); other columns are ignored.  Errors name the line and column
 * ("line 3: column cpu: ...") in err; -EINVAL on bad input, -E2BIG over the
 * limits above.
 */
int pk_sim_trace_parse_csv(const char *buf, size_t len, struct pk_sim_trace **ret, char *err,
			   size_t errlen);
/*
 * An object trace (a JSON array of objects, as pk_read_file returns): each
 * Job, JobSet, root group (with the pods bound to it) or standalone pod is
 * one job; its arrival and duration come from PK_SIM_ANN_ARRIVAL and
 * PK_SIM_ANN_DURATION on that object (arrival 0 and a duration of 0 — runs
 * forever — when absent).  PriorityClasses apply to every job.  Jobs and
 * JobSets are compiled by the workload builder.  Errors go to errs with
 * field paths (-EINVAL).
 */
int pk_sim_trace_from_objects(const json_t *objects, struct pk_sim_trace **ret,
			      struct pk_errors *errs);
/* Read a trace file: CSV when its name ends in .csv, else YAML or JSON objects. */
int pk_sim_trace_load(const char *path, struct pk_sim_trace **ret, char *err, size_t errlen);
size_t pk_sim_trace_jobs(const struct pk_sim_trace *t);
/* Pods of every job of the trace together. */
uint64_t pk_sim_trace_pods(const struct pk_sim_trace *t);
/* What job i of a CSV or OpenB trace asks per pod (models: NULL-ended, or NULL for any). */
struct pk_sim_job_info {
	int32_t pods;
	int64_t accel_milli, cpu_milli, mem_milli;
	const char *model;	   /* CSV model column */
	const char *const *models; /* OpenB gpu_spec */
};
int pk_sim_trace_job(const struct pk_sim_trace *t, size_t i, struct pk_sim_job_info *ret);

/*
 * The OpenB format of the Alibaba GPU cluster trace (cluster-trace-gpu-v2023,
 * the "Beware of Fragmentation" paper's).  A node list (columns sn,
 * cpu_milli, memory_mib, gpu, model) becomes Node objects offering
 * PK_SIM_OPENB_RESOURCE, with the model on the accelerator product label.
 * A pod list (name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec,
 * creation_time, deletion_time; others ignored) becomes one-pod jobs:
 * gpu_spec ('|'-separated models) is required node affinity on the product
 * label; gpu_milli under 1000 on a one-GPU pod requests that share of a
 * device (milli of the resource).  Without inflation the rows arrive at
 * creation_time and leave at deletion_time (never when empty), at most
 * max_pods of them; with inflate F, pods are drawn at random with
 * replacement (seed) until their accelerator requests reach F times the
 * nodes', arrive a second apart in that order and never leave (at most
 * max_pods).  Errors name the line and column in err: -EINVAL, -E2BIG over
 * the limits.
 */
#define PK_SIM_OPENB_RESOURCE "nvidia.com/gpu"
#define PK_SIM_OPENB_MAX_PODS PK_SIM_MAX_PODS_DEFAULT /* default cap on the pods */
#define PK_SIM_OPENB_MAX_NODES 100000
struct pk_sim_openb_opts {
	double inflate;	 /* 0: replay the rows as they are */
	uint64_t seed;	 /* of the draw */
	size_t max_pods; /* 0: PK_SIM_OPENB_MAX_PODS */
};
int pk_sim_openb_nodes(const char *buf, size_t len, json_t **ret, char *err, size_t errlen);
int pk_sim_openb_pods(const char *buf, size_t len, const struct pk_sim_openb_opts *o,
		      const json_t *nodes, struct pk_sim_trace **ret, char *err, size_t errlen);
/* Both files (paths in err's messages). */
int pk_sim_openb_load(const char *nodes_path, const char *pods_path,
		      const struct pk_sim_openb_opts *o, json_t **ret_nodes,
		      struct pk_sim_trace **ret_trace, char *err, size_t errlen);
void pk_sim_trace_free(struct pk_sim_trace *t);

struct pk_sim_node_loss {
	int64_t at_ms;
	const char *node;
};

/* The queue controller a run with queues keeps (kernel/controllers: pk_queues_*). */
struct pk_sim_queue_ops {
	int (*open)(struct pk_store *store, bool quota_first, void **ret_ctl);
	int (*pass)(void *ctl);
	void (*close)(void *ctl);
};

struct pk_sim_opts {
	const char *strategy; /* placement strategy; NULL: the default */
	const char *label;    /* of the run in the report (board name) */
	/* node label keys of the outermost domain (superslice) and of the boxes
	 * whose largest free one is reported per superslice (NULL: none) */
	const char *superslice_key, *domain_key;
	int64_t until_ms;	/* stop at this virtual time (0: when the trace is done) */
	uint64_t seed;		/* every random choice */
	int64_t start_delay_ms; /* bound -> Running */
	double failure_rate;	/* probability that a job attempt fails while running */
	int max_retries;	/* placements again after failures (default 3 when < 0) */
	const struct pk_sim_node_loss *node_loss;
	size_t nnode_loss;
	/* when set, each binding as "ns/name node" lines, in the order made */
	FILE *bindings;
	/*
	 * Queues (pk_sim_run only): Kueue objects (ResourceFlavor, ClusterQueue,
	 * LocalQueue, Cohort, Namespace, PriorityClass) that admit the trace's
	 * queued jobs (CSV rows with a tenant or queue).  A queued job is a
	 * suspended Job in a scratch store that mirrors the simulated cluster
	 * (its nodes and bound pods, on the virtual clock); after the events of
	 * an instant the queue controller (queue_ops: pk_queues_new, run and
	 * free, which the caller links) runs a pass on it, and what it admitted
	 * is handed to the scheduler, what it preempted is taken back.  The
	 * controller is made once the mirror is filled and kept for the run, as
	 * standalone keeps its own (it reads the changes since its last pass).
	 * quota_first runs the passes with no placement check (Kueue's way), a
	 * comparison.
	 */
	const json_t *queues;
	const struct pk_sim_queue_ops *queue_ops;
	bool quota_first;
	/* when set, each admission as "SECONDS Job NS/NAME CQ/FLAVOR[,FLAVOR]" lines */
	FILE *admissions;
	/* when set, the wall time the passes took (ns) is added to it (never in the report) */
	uint64_t *queue_pass_ns;
	/* pk_sim_levels only: a comparison policy instead of the strategy
	 * (kernel/sched/replay.h; make bench's classic policies) */
	pk_replay_pick_fn pick;
	void *pick_arg;
	/* pk_sim_levels only: told the replay's stats as each level is reached */
	pk_replay_level_fn on_level;
	void *level_arg;
};

/*
 * Run trace over nodes (a JSON array of Node objects, e.g. the board's as
 * pk_board_nodes_json returns) and return the run's report (a new JSON
 * object).  ret_events (may be NULL): events processed, for a rate.
 * -EINVAL with a message in err (a node the loss list names that does not
 * exist, an unknown strategy), -ENOMEM.
 */
int pk_sim_run(const struct pk_sim_opts *opts, const json_t *nodes, const struct pk_sim_trace *t,
	       json_t **ret_report, uint64_t *ret_events, char *err, size_t errlen);

/*
 * The placement-quality comparison (bench_quality's rows, through the same
 * pk_replay_run step, kernel/sched/replay.h): the trace's jobs arrive in
 * arrival order (ties in trace order), as in a run (namespace t<index>, a
 * CSV gang as its PodGroup and pods), on the nodes in the order given, with
 * opts' strategy; nothing departs and the clock does not move, so a job
 * that fits nowhere stays pending.  For each of the nlevels ascending
 * levels (fractions of the nodes' accelerators, e.g. 1.0, 1.1, 1.3),
 * ret_alloc[i] gets the accelerators allocated over the cluster's once the
 * arrived pods request at least that much (after the last job when never).
 * opts->pick, when set, places the pods instead of the strategy (a CSV job
 * of one pod each: a comparison policy places no gangs).
 * -EINVAL with a message in err (an unknown strategy, an object the
 * scheduler refuses), -ENOMEM.
 */
int pk_sim_levels(const struct pk_sim_opts *opts, const json_t *nodes, const struct pk_sim_trace *t,
		  const double *levels, size_t nlevels, double *ret_alloc, char *err,
		  size_t errlen);

/*
 * Reports: runs is a JSON array of pk_sim_run reports.  provenance (may be
 * NULL) says what made them: {"version", "trace", "seed", "flags": [...]},
 * written as is into the JSON and shown at the top of the page.  The page
 * draws each run, and with two runs or more overlays them, with each run's
 * difference from the first.
 */
int pk_sim_report_json(FILE *f, const json_t *runs, const json_t *provenance);
int pk_sim_report_text(FILE *f, const json_t *runs);
int pk_sim_report_html(FILE *f, const json_t *runs, const json_t *provenance);
/* Seconds as a person reads a span: "45 s", "12 min 5 s", "5 h 12 min", "2 d 3 h". */
void pk_sim_duration(double seconds, char *buf, size_t len);

#endif /* PODKERNEL_KERNEL_SIM_H */

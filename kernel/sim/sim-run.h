/* SPDX-License-Identifier: Apache-2.0 */
/* sim-run.h — the state of one simulation run (sim.c plays it, stats.c measures it). */
#ifndef PODKERNEL_KERNEL_SIM_RUN_H
#define PODKERNEL_KERNEL_SIM_RUN_H

#include "kernel/sim/sim-internal.h"
#include "topology/topology.h"

#define SIM_PRODUCT_LABEL TOPO_LABEL_ACCEL_PRODUCT
#define SIM_MAX_SS 64	     /* superslices drawn in the fragmentation series */
#define SIM_MAX_SAMPLES 2048 /* points of a series (halved when full) */
#define SIM_GANG_BUCKETS 6   /* all, 1, 2-8, 9-32, 33-128, 129+ */
/* virtual time 0 as a timestamp (objects are stamped SIM_EPOCH_S + seconds) */
#define SIM_EPOCH_S 1767225600 /* 2026-01-01T00:00:00Z */

enum sim_ev { SIM_EV_ARRIVE, SIM_EV_FINISH, SIM_EV_FAIL, SIM_EV_NODE_LOSS, SIM_EV_WAKE };

struct sim_event {
	int64_t t;
	uint64_t seq;
	enum sim_ev type;
	uint32_t job;
	int32_t attempt;
	int64_t aux; /* FINISH: the batch's bind time; NODE_LOSS: the node */
};

/* SIM_QUEUED: arrived in a queue, not admitted (queues.c) */
enum sim_state { SIM_FUTURE, SIM_QUEUED, SIM_WAITING, SIM_RUNNING, SIM_DONE, SIM_FAILED };

struct sim_req {
	int64_t accel, cpu, mem; /* milli-units */
};

struct sim_jobrun {
	enum sim_state state;
	int32_t attempt, failures, preemptions, bound, finished;
	int32_t *node;	     /* per pod: node index, -1 pending, -2 Succeeded */
	int64_t *bind_at;    /* per pod */
	char **names;	     /* object jobs: pod names (CSV pods are p<k>) */
	struct sim_req *req; /* object jobs: per pod */
	int64_t started_at, done_at, last_batch;
	int32_t last_batch_attempt;
	json_t *homes;	/* after a node loss: group name -> its home domain (annotation) */
	json_t *flavor; /* admitted: the admitted Job's pod nodeSelector and tolerations */
};

struct sim_node {
	struct sim_req cap, used;
	int32_t domain, ss, pods;
	bool lost;
	int64_t stranded; /* free accelerators counted stranded now */
};

struct sim_sample {
	int64_t t, alloc, stranded;
	int32_t frag[SIM_MAX_SS];
};

struct sim_run {
	const struct pk_sim_trace *trace;
	const char *label, *strategy;
	uint64_t seed, rng;
	int64_t until_ms, start_delay_ms, now, wake_at;
	double failure_rate;
	int max_retries;
	char resource[256];
	char err[512];
	struct pk_sched *sched;
	FILE *bindings;
	struct sim_queues *q; /* queues.c: admission by the queue controller (NULL: none) */

	struct sim_event *ev;
	size_t nev, capev;
	uint64_t seq;

	struct sim_jobrun *runs;
	int64_t *delay_ms; /* per job: queueing delay of its first placement, -1 none */

	struct sim_node *nodes;
	char **node_names;
	size_t nnodes;
	json_t *node_index;		  /* name -> index */
	json_t *loss_unknown;		  /* node loss names not on this run's nodes */
	int32_t *domain_free, *domain_ss; /* per domain: fully free hosts, its superslice */
	size_t ndomains, nss;
	char **ss_names;
	int64_t total_accel, alloc, stranded, peak_alloc, peak_stranded;
	int64_t min_cpu, min_mem; /* smallest request of a pod asking accelerators */
	double alloc_area, stranded_area, frag_area[SIM_MAX_SS]; /* value x ms */
	int32_t frag_min[SIM_MAX_SS];
	int64_t last_t;
	struct sim_sample held; /* the values since last_t */

	struct sim_sample *samples;
	size_t nsamples, stride, skip;

	struct {
		uint64_t events, arrivals, bindings, cycles, pods_succeeded, jobs_completed,
		    jobs_failed, injected_failures, node_loss_failures, retries, preempted_jobs,
		    preempted_pods, repairs_in_place, repairs_whole;
	} count;
};

/* sim.c: a job's pods (and gang) handed to the scheduler, or taken out of it */
int sim_submit(struct sim_run *s, uint32_t j);
void sim_withdraw(struct sim_run *s, uint32_t j);
void sim_pod_name(const struct sim_run *s, uint32_t j, int32_t k, char *buf, size_t len);

/*
 * queues.c: Kueue admission in a run (opts->queues).  sim_q_new sets s->q
 * (NULL without queues); the rest do nothing when s->q is NULL.
 */
int sim_q_new(struct sim_run *s, const struct pk_sim_opts *opts, const json_t *nodes);
void sim_q_free(struct sim_run *s);
bool sim_q_queued(const struct sim_run *s, uint32_t j);
int sim_q_arrive(struct sim_run *s, uint32_t j);		      /* a queued job arrives */
void sim_q_pod(struct sim_run *s, uint32_t j, int32_t k, bool bound); /* bound or freed */
void sim_q_job_end(struct sim_run *s, uint32_t j); /* completed, or failed for good */
void sim_q_started(struct sim_run *s, uint32_t j, int64_t t);
void sim_q_node_lost(struct sim_run *s, int32_t node);
int sim_q_pass(struct sim_run *s);  /* after an instant's events: admit, preempt */
int sim_q_after(struct sim_run *s); /* after its cycles: measure, write the mirror */
int sim_q_report(struct sim_run *s, json_t *rep);
void sim_q_report_text(FILE *f, const json_t *run);

/* run.c: the accelerator resource, the first extended resource the nodes offer */
void sim_find_resource(const json_t *nodes, char *buf, size_t len);

/* stats.c */
int sim_run_new(const struct pk_sim_opts *opts, const json_t *nodes, const struct pk_sim_trace *t,
		struct sim_run **ret);
void sim_run_free(struct sim_run *s);
void sim_set_requests(json_t *requests, const char *resource, int64_t accel, int64_t cpu,
		      int64_t mem);
/* A quantity at obj's key (a string, or a whole number), in milli-units; 0 when absent. */
int64_t sim_quantity(const json_t *obj, const char *key);
struct sim_req sim_pod_requests(const json_t *pod, const char *resource);
void sim_largest_free(const struct sim_run *s, int32_t out[SIM_MAX_SS]);
struct sim_req sim_pod_req(const struct sim_run *s, uint32_t j, int32_t k);
void sim_stats_take(struct sim_run *s, int32_t node, struct sim_req req);
void sim_stats_release(struct sim_run *s, int32_t node, struct sim_req req);
void sim_stats_node_lost(struct sim_run *s, int32_t node);
void sim_stats_delay(struct sim_run *s, uint32_t j, int64_t delay_ms);
int sim_stats_sample(struct sim_run *s, int64_t t);
int sim_stats_report(struct sim_run *s, json_t **ret);

#endif

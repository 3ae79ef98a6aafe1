/* SPDX-License-Identifier: Apache-2.0 */
/* queues-internal.h — a run's queues, shared by queues.c (admission) and queues_stats.c. */
#ifndef PODKERNEL_KERNEL_SIM_QUEUES_INTERNAL_H
#define PODKERNEL_KERNEL_SIM_QUEUES_INTERNAL_H

#include "kernel/sim/sim-run.h"
#include "kernel/store/store.h"

#define Q_RES 3 /* what usage and shares count: the accelerator, cpu, memory */

struct sim_queues {
	struct pk_store *store;
	char dir[512];
	const struct pk_sim_queue_ops *ops;
	void *ctl; /* the queue controller, from the first pass on */
	bool quota_first;
	FILE *admissions;
	uint64_t *pass_ns_out; /* opts->queue_pass_ns */
	int64_t now_s;	       /* the scratch store's clock */
	int width;	       /* digits of a Job's index in its name */

	/* writes to the mirror, made in one transaction before the next pass */
	struct pk_store_edit *ed;
	json_t **edobj; /* what each edit's strings and object live in */
	size_t ned, caped;
	bool dirty;	 /* something changed since the last pass */
	size_t npending; /* queued jobs not admitted */

	/* per job */
	int32_t *lq, *tenant, *cq; /* indexes; -1: none (cq: not admitted) */
	int64_t *admit_at;	   /* the last admission, -1 */
	uint32_t *now_admitted;	   /* admitted at this instant */
	size_t nnow;

	char **lq_names, **lq_cq; /* "ns/name", its ClusterQueue */
	size_t nlq;
	char **tenants, **cqs;
	size_t nten, ncq;
	int64_t *nominal;  /* ncq x Q_RES, milli */
	int64_t *cq_used;  /* ncq x Q_RES: admitted workloads' requests */
	int64_t *ten_used; /* nten x Q_RES: bound pods' requests */
	int64_t cap[Q_RES];

	/* measures: time integrals (value x ms), peaks, a series */
	int64_t last_t;
	int64_t *cq_held;   /* cq_used over [last_t, now) */
	double *share_held; /* per tenant, its dominant share over [last_t, now) */
	double *cq_area, *share_area, *share_peak;
	int64_t *cq_peak;
	int64_t *st; /* sample times */
	double *sv;  /* per sample: nten shares, then ncq accelerator usages */
	size_t ns, stride, skip;

	struct {
		uint64_t passes, admitted, preempted, unplaceable, pass_ns;
		int64_t unplaceable_ms; /* admitted, not yet placed, summed over jobs */
		int64_t unplaceable_max_ms;
	} count;
};

/* queues_stats.c */
double sim_q_dominant(const struct sim_queues *q, size_t tenant);
int sim_q_stats_new(struct sim_queues *q);
int sim_q_sample(struct sim_run *s, int64_t t);

#endif

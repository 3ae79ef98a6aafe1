/* SPDX-License-Identifier: Apache-2.0 */
/* sim-internal.h — the trace as the simulator's modules share it. */
#ifndef PODKERNEL_KERNEL_SIM_INTERNAL_H
#define PODKERNEL_KERNEL_SIM_INTERNAL_H

#include "kernel/sim/sim.h"

/*
 * One job of a trace.  A CSV job is a shape (pods of one request), its pods
 * made at arrival; an object job keeps its groups and pods (the objects a
 * Job or JobSet compiles into), copied at arrival into namespace t<index>.
 */
struct sim_job {
	int64_t arrival_ms, duration_ms;
	int32_t pods;
	bool has_priority;
	int32_t priority;
	int64_t accel_milli, cpu_milli, mem_milli; /* per pod (CSV) */
	char *model;				   /* CSV: required product label value */
	char *topology;				   /* CSV: the gang's topology constraint key */
	json_t *objects;			   /* object trace: groups and pods */
	int32_t max_retries; /* a JobSet's failurePolicy.maxRestarts, a Job's backoffLimit; -1: the
				run's */
};

struct pk_sim_trace {
	struct sim_job *jobs;
	size_t n, cap;
	json_t *classes; /* PriorityClasses */
};

int sim_trace_new(struct pk_sim_trace **ret);
/* Append a zeroed job; returns it or NULL (-ENOMEM, -E2BIG: see sim_trace_add). */
int sim_trace_add(struct pk_sim_trace *t, struct sim_job **ret);

#endif

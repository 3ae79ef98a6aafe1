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
	char **models;	      /* OpenB: the product label values the pods accept (NULL-ended) */
	bool shared;	      /* OpenB: accel_milli (under 1000) is a share of one device */
	char *topology;	      /* CSV: the gang's topology constraint key */
	char *tenant, *queue; /* CSV: queued in LocalQueue queue (NULL: the tenant's one) of
				 namespace tenant; NULL: not queued */
	json_t *objects;      /* object trace: groups and pods */
	int32_t max_retries;  /* a JobSet's failurePolicy.maxRestarts, a Job's backoffLimit; -1: the
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

/* trace.c: CSV lines, shared with the OpenB reader (openb.c) */
#define SIM_CSV_MAX_FIELDS 256
struct sim_csv_line {
	char buf[PK_SIM_MAX_LINE + 1];
	char *field[SIM_CSV_MAX_FIELDS];
	size_t n;
};
/* Next line of buf at *pos into l->buf; 0, 1 at the end, -E2BIG too long, -EINVAL a NUL. */
int sim_csv_next_line(const char *buf, size_t len, size_t *pos, struct sim_csv_line *l);
/* Split one line (no newline) into fields in place; -EINVAL on a broken quote, -E2BIG. */
int sim_csv_split(struct sim_csv_line *l);
/* A decimal integer from lo to hi; -EINVAL. */
int sim_csv_int(const char *v, int64_t lo, int64_t hi, int64_t *ret);
/* The whole file (at most PK_MAX_FILE_BYTES), NUL-terminated; errors name the path in err. */
int sim_read_all(const char *path, char **ret, size_t *ret_len, char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* appliance-internal.h — state shared by the appliance's modules. */
#ifndef PODKERNEL_KERNEL_APPLIANCE_INTERNAL_H
#define PODKERNEL_KERNEL_APPLIANCE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "kernel/appliance/appliance.h"
#include "kernel/write/writer.h"
#include "kernel/lib/log.h"
#include "kernel/lib/map.h"
#include "kernel/sched/sched.h"

/* Entity types of the KEP's metric labels. */
enum ap_type { AP_TYPE_COMPOSITE, AP_TYPE_GROUP, AP_TYPE_POD, _AP_TYPE_MAX };
enum ap_result { AP_RESULT_SCHEDULED, AP_RESULT_UNSCHEDULABLE, AP_RESULT_ERROR, _AP_RESULT_MAX };

#define AP_HIST_BUCKETS 12
struct ap_hist {
	uint64_t buckets[AP_HIST_BUCKETS]; /* cumulative at render time */
	double sum;
	uint64_t count;
};

struct ap_metrics {
	pthread_mutex_t lock;
	uint64_t attempts[_AP_TYPE_MAX][_AP_RESULT_MAX];
	struct ap_hist algorithm[_AP_TYPE_MAX];
	struct ap_hist attempt[_AP_TYPE_MAX];
	uint64_t incoming[_AP_TYPE_MAX];
	json_t
	    *queued; /* root "Kind ns/name" -> queue name (active, backoff, gated, unschedulable) */
	uint64_t preemption_attempts;
	struct ap_hist victims;
	uint64_t placements_generated, placement_evaluations;
	struct ap_hist placement_duration;
	uint64_t bindings, binding_conflicts, conditions, write_errors, write_backoffs;
	uint64_t write_backoff_objects; /* gauge: objects waiting now */
	uint64_t events, events_skipped, relists;
	/* the scheduler's workload profile, copied after the cycles that changed it */
	struct pk_sched_profile_entry profile[32];
	size_t nprofile;
	uint64_t profile_seen;
};

struct pk_appliance {
	const struct pk_appliance_source_ops *src;
	void *src_arg;
	struct pk_appliance_config cfg; /* its hooks: cfg.hooks[0 .. cfg.nhooks) */
	pthread_t thread;
	bool started;
	atomic_bool stopping;

	struct pk_sched *sched;
	struct pk_writer *writer; /* where the scheduling rounds write (writer.h) */
	struct ap_cache *cache;
	uint64_t rv; /* last change-stream event consumed */
	/* conditions to write again with the current generation (note_stale_conditions()) */
	struct ap_stale {
		enum pk_kind kind;
		char *ns, *name;
		struct pk_write_cond cond;
	} * stale;
	size_t nstale, capstale;
	struct pk_map write_backoff; /* objects whose write failed, waiting (write_backoff.c) */
	bool scheduling;	     /* may_schedule() said yes at the last round */

	/* the kind of root the -v 4 trace is about (its log lines are tagged) */
	enum ap_type trace_type;

	struct ap_metrics m;
};

/* appliance.c */
/* A log line for the program's sink, at most at the loop's verbosity. */
#define ap_log(app, level, ...)                                                                    \
	pk_logf((app)->cfg.log, (app)->cfg.log_arg, (app)->cfg.verbosity, level, __VA_ARGS__)
int64_t ap_now_ns(void);
/* Call member fn of every registered hooks table that has it, in order. */
#define ap_hooks_call(app, fn, ...)                                                                \
	do {                                                                                       \
		for (size_t ap_h_ = 0; ap_h_ < (app)->cfg.nhooks; ap_h_++)                         \
			if ((app)->cfg.hooks[ap_h_].ops->fn)                                       \
				(app)->cfg.hooks[ap_h_].ops->fn((app)->cfg.hooks[ap_h_].arg,       \
								##__VA_ARGS__);                    \
	} while (0)
/* Store write results back into the scheduler's view (also on failure). */
void ap_resync(struct pk_appliance *app, enum pk_kind kind, const char *ns, const char *name);

/* write_backoff.c: an object whose write failed (not a lost precondition)
 * leaves the scheduler for a delay that doubles per failure. */
#define AP_WRITE_BACKOFF_INITIAL_MS 1000
#define AP_WRITE_BACKOFF_MAX_MS 60000
int ap_backoff_failed(struct pk_appliance *app, enum pk_kind kind, const char *ns, const char *name,
		      int error);
/* The object was written, deleted or changed: it leaves the table. */
void ap_backoff_clear(struct pk_appliance *app, enum pk_kind kind, const char *ns,
		      const char *name);
void ap_backoff_init(struct pk_appliance *app);
void ap_backoff_free_all(struct pk_appliance *app);
/* Give back to the scheduler what waited long enough; the next expiry (ms) or 0. */
int64_t ap_backoff_release(struct pk_appliance *app, int64_t now);

/* metrics.c */
int ap_metrics_init(struct ap_metrics *m);
void ap_metrics_fini(struct ap_metrics *m);
enum ap_type ap_type_of_root(const char *root); /* "CompositePodGroup ns/x" */
void ap_hist_observe(struct ap_hist *h, double seconds, const double *bounds);
extern const double ap_duration_bounds[AP_HIST_BUCKETS];
extern const double ap_count_bounds[AP_HIST_BUCKETS];
void ap_metrics_cycle(struct ap_metrics *m, const struct pk_sched_result *res, double algo_s,
		      double attempt_s);
void ap_metrics_stat(void *arg, enum pk_sched_stat stat, double value, const char *root);
void ap_metrics_queue(struct ap_metrics *m, const char *root, const char *queue);
/* Copy the scheduler's workload profile when pods were noted since the last copy. */
void ap_metrics_profile(struct ap_metrics *m, const struct pk_sched *s);
#define AP_COUNT(app, field)                                                                       \
	do {                                                                                       \
		pthread_mutex_lock(&(app)->m.lock);                                                \
		(app)->m.field++;                                                                  \
		pthread_mutex_unlock(&(app)->m.lock);                                              \
	} while (0)

#endif

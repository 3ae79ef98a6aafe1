/* SPDX-License-Identifier: Apache-2.0 */
/* appliance-internal.h — state shared by the appliance's modules. */
#ifndef PODKERNEL_KERNEL_APPLIANCE_INTERNAL_H
#define PODKERNEL_KERNEL_APPLIANCE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "kernel/appliance/appliance.h"
#include "kernel/write/writer.h"
#include "kernel/appliance/placement_map.h"
#include "kernel/lib/log.h"
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
	uint64_t kevents_written, kevents_limited, kevents_failed,
	    kevents_expired; /* Event objects */
	uint64_t reconciles, reconcile_errors, objects_created, gc_deleted;
	uint64_t nodes_unreachable, nodes_recovered, evictions, eviction_conflicts;
	/* the scheduler's workload profile, copied after the cycles that changed it */
	struct pk_sched_profile_entry profile[32];
	size_t nprofile;
	uint64_t profile_seen;
};

struct pk_appliance {
	struct pk_store *store; /* NULL in attach mode */
	const struct pk_appliance_source_ops *src;
	void *src_arg;
	struct pk_appliance_config cfg;
	int64_t grace_ms;
	pthread_t thread;
	bool started;
	atomic_bool stopping;

	struct pk_sched *sched;
	struct pk_writer *writer; /* where the scheduling rounds write (writer.h) */
	struct ap_cache *cache;
	struct ap_heartbeats *beats;
	struct ap_pmap *pmap;		/* the placement map (/ui/), fed like the scheduler */
	struct ap_lifecycle *lifecycle; /* simulated pods run (NULL: off) */
	struct ap_recorder *recorder;	/* standalone: Events in the store (NULL: attach) */
	uint64_t rv;			/* last change-stream event consumed */
	json_t *to_reconcile;		/* [kind, ns, name] triples, in order */
	json_t *gone_nodes;		/* names of deleted Nodes whose pods must go */
	json_t *stale_obs;		/* [kind, ns, name, [type, status, reason, message]...] */
	json_t *write_backoff;		/* objects whose write failed, waiting (write_backoff.c) */
	bool gc_needed;
	bool scheduling;    /* may_schedule() said yes at the last round */
	bool gc_foreground; /* a foreground deletion waits for its dependents */
	int64_t next_beat_check_ms;
	struct ap_loss_policy loss; /* node-loss eviction (heartbeat.c) */
	struct ap_loss_limiter loss_limiter;
	enum ap_loss_state loss_state; /* logged on change */

	/* the kind of root the -v 4 trace is about (its log lines are tagged) */
	enum ap_type trace_type;

	struct ap_metrics m;
};

/* appliance.c */
/* A log line for the program's sink, at most at the loop's verbosity. */
#define ap_log(app, level, ...)                                                                    \
	pk_logf((app)->cfg.log, (app)->cfg.log_arg, (app)->cfg.verbosity, level, __VA_ARGS__)
int64_t ap_now_ms(void);
int64_t ap_now_ns(void);
/* Store write results back into the scheduler's view (also on failure). */
void ap_resync(struct pk_appliance *app, const char *kind, const char *ns, const char *name);

/* controllers.c */
int ap_reconcile(struct pk_appliance *app, const char *kind, const char *ns, const char *name);
int ap_collect_garbage(struct pk_appliance *app);
/* claims.c: does pod name a template whose claim is not made yet?  Make them. */
/* Does a Pod or a PodGroup wait for claims from its templates? */
bool ap_needs_claims(const json_t *obj);
int ap_claims_reconcile(struct pk_appliance *app, const char *kind, const char *ns,
			const char *name);
/* Ask the controllers of these pods' owners to recreate them. */
void ap_reconcile_owner_of(struct pk_appliance *app, const json_t *obj);

/* nodes.c */
int ap_register_board(struct pk_appliance *app, const char *path, char *err, size_t errlen);
int ap_node_unreachable(struct pk_appliance *app, const char *name);
int ap_node_recovered(struct pk_appliance *app, const char *name);
/* A deleted Node: its pods are evicted like those of an unreachable one. */
int ap_node_deleted(struct pk_appliance *app, const char *name);
/*
 * Evict pods (as listed: each under its resourceVersion, read again and
 * evicted at its new version when it changed but is the same pod by uid) in
 * one transaction per attempt, DisruptionTarget set; returns how many.
 */
int ap_evict_pods(struct pk_appliance *app, const json_t *pods, const char *node, const char *why);

/* recorder.c: core/v1 Events of the loop's writes, in the store (standalone) */
#define AP_EVENT_SWEEP_MS 60000
struct ap_recorder;
int ap_recorder_new(struct ap_recorder **ret);
void ap_recorder_free(struct ap_recorder *rec);
void ap_record_batch(struct pk_appliance *app, const struct pk_write_batch *batch,
		     const struct pk_write_result *results);
/* Delete expired Events (at most once per AP_EVENT_SWEEP_MS). */
void ap_record_sweep(struct pk_appliance *app, int64_t now_ms);

/* lifecycle.c */
struct ap_lifecycle;
int ap_lifecycle_new(const struct pk_appliance_config *cfg, int64_t now, struct ap_lifecycle **ret,
		     char *err, size_t errlen);
void ap_lifecycle_free(struct ap_lifecycle *lc);
/* Track a Node (simulated ones only), or forget it. */
void ap_lifecycle_node(struct ap_lifecycle *lc, const json_t *node, bool deleted);
/* A binding written: a pod on a simulated node gets its timers. */
void ap_lifecycle_bound(struct ap_lifecycle *lc, const json_t *pod, const char *node, int64_t now);
/* Fire the timers due at now; returns the next due time, or 0 when none. */
int64_t ap_lifecycle_run(struct pk_appliance *app, int64_t now);

/* write_backoff.c: an object whose write failed (not a lost precondition)
 * leaves the scheduler for a delay that doubles per failure. */
#define AP_WRITE_BACKOFF_INITIAL_MS 1000
#define AP_WRITE_BACKOFF_MAX_MS 60000
int ap_backoff_failed(struct pk_appliance *app, const char *kind, const char *ns, const char *name,
		      int error);
/* The object was written, deleted or changed: it leaves the table. */
void ap_backoff_clear(struct pk_appliance *app, const char *kind, const char *ns, const char *name);
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

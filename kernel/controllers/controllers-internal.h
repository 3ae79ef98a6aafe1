/* SPDX-License-Identifier: Apache-2.0 */
/* controllers-internal.h — state shared by the standalone controllers' modules. */
#ifndef PODKERNEL_KERNEL_CONTROLLERS_INTERNAL_H
#define PODKERNEL_KERNEL_CONTROLLERS_INTERNAL_H

#include <pthread.h>

#include "kernel/controllers/controllers.h"
#include "kernel/store/store.h"
#include "kernel/lib/log.h"
#include "kernel/lib/map.h"
#include "kernel/write/writer.h"

/*
 * json_array_foreach over an array expression read once: jansson's macro
 * reads its array at every step, which for a path (pk_get) or a key
 * (json_object_get) in the queue controller's inner loops is a lookup per
 * item.  break and continue act on the loop as they do on jansson's.
 */
#define CTL_ARRAY_EACH(expr, index, value)                                                         \
	for (int ctl_once_ = 1; ctl_once_;)                                                        \
		for (const json_t *ctl_each_ = (expr); ctl_once_; ctl_once_ = 0)                   \
	json_array_foreach(ctl_each_, index, value)

/* What the controllers count (their lines of /metrics, metrics() in standalone.c). */
struct ctl_metrics {
	pthread_mutex_t lock;
	uint64_t reconciles, reconcile_errors, objects_created, gc_deleted;
	uint64_t nodes_unreachable, nodes_recovered, evictions, eviction_conflicts;
	uint64_t kevents_written, kevents_limited, kevents_failed, kevents_expired; /* Events */
	char *queue_gauges;  /* the Kueue gauges of the latest queue pass (queues_metrics.c) */
	json_t *queue_waits; /* ClusterQueue -> admission wait histogram */
	struct pk_queues_stats queue_stats; /* the queue controller's, after its latest pass */
};

/* Objects to reconcile, in order, each once until it is taken (controllers.c). */
#define CTL_KEY_MAX 600
struct ctl_work {
	enum pk_kind kind;
	char *ns, *name;
};
struct ctl_queue {
	struct ctl_work *v;
	size_t n, cap;
	struct pk_map queued; /* "kind/ns/name" -> its entry */
};

struct pk_ctl {
	struct pk_store *store;		  /* read */
	struct pk_writer *writer;	  /* every write goes here (write.c): the store's backend */
	struct pk_appliance *app;	  /* the loop they run beside (set by its start hook) */
	struct pk_appliance_config cfg;	  /* the loop's (its log and verbosity) */
	struct pk_standalone_config scfg; /* standalone's own */
	int64_t grace_ms;
	struct ctl_heartbeats *beats;
	struct ctl_lifecycle *lifecycle; /* simulated pods run (NULL: off) */
	struct ctl_recorder *recorder;	 /* Events in the store */
	struct ctl_queue queue;		 /* what to reconcile before the next round */
	json_t *gone_nodes;		 /* names of deleted Nodes whose pods must go */
	struct ctl_gc *gc;		 /* the garbage collector's work (gc.c) */
	struct pk_map budget_ns;	 /* namespaces whose budgets to count again (budgets.c) */
	struct pk_map budget_keys;	 /* every budget, "namespace/name" (value 1) */
	struct pk_map budget_count;	 /* namespace -> how many budgets it holds (a count) */
	int64_t next_beat_check_ms;
	struct ctl_loss_policy loss; /* node-loss eviction (heartbeat.c) */
	struct ctl_loss_limiter loss_limiter;
	enum ctl_loss_state loss_state; /* logged on change */
	struct ctl_metrics m;
	bool queues_dirty;	/* a queue, flavor, Namespace, Job or JobSet changed */
	struct q_cache *qcache; /* the queue controller's state between passes (queues_cache.c) */
	bool queues_quota_only; /* pk_queues_pass_opts: admit by quota, no placement check */
	/* pk_queues_pass_opts: the pass's Events, instead of the store's recorder */
	void (*queues_event)(void *arg, const char *type, const struct pk_type *kind,
			     const json_t *obj, const char *reason, const char *note);
	void *queues_event_arg;
};

/* A log line for the program's sink, at most at the configured verbosity. */
#define ctl_log(ctl, level, ...)                                                                   \
	pk_logf((ctl)->cfg.log, (ctl)->cfg.log_arg, (ctl)->cfg.verbosity, level, __VA_ARGS__)
#define ctl_now_ms() ap_now_ms()

/*
 * obj's member a's member b, as pk_get(obj, "a.b") reads it for keys that
 * are names (no index): two hashed lookups, no path split and copied.
 */
static inline json_t *ctl_at(const json_t *obj, const char *a, const char *b)
{
	return json_object_get(json_object_get(obj, a), b);
}

static inline const char *ctl_at_string(const json_t *obj, const char *a, const char *b)
{
	return json_string_value(ctl_at(obj, a, b));
}
#define CTL_COUNT(ctl, field)                                                                      \
	do {                                                                                       \
		pthread_mutex_lock(&(ctl)->m.lock);                                                \
		(ctl)->m.field++;                                                                  \
		pthread_mutex_unlock(&(ctl)->m.lock);                                              \
	} while (0)

/* write.c: one object's write through ctl->writer, as a batch of one. */
/* Replace the object but its status (ref's preconditions); the stored object in *ret. */
int ctl_replace(struct pk_ctl *ctl, const struct pk_write_ref *ref, const json_t *obj,
		json_t **ret);
/* ctl_replace of obj held, not copied (pk_writer_replace_held): the stored object may share
 * obj's trees, which the caller changes no more. */
int ctl_replace_held(struct pk_ctl *ctl, const struct pk_write_ref *ref, json_t *obj, json_t **ret);
/* Replace the object's status (ref's preconditions); the stored object in *ret. */
int ctl_status(struct pk_ctl *ctl, const struct pk_write_ref *ref, const json_t *status,
	       json_t **ret);
/* Delete the object (ref's preconditions), with propagation. */
int ctl_delete(struct pk_ctl *ctl, const struct pk_write_ref *ref, enum pk_write_propagation how);
/*
 * Commit the writer's open batch; *ret_results, *ret_n as
 * pk_writer_batch_commit().  Every write of the controllers ends here.
 */
int ctl_commit(struct pk_ctl *ctl, const struct pk_write_result **ret_results, size_t *ret_n);
/* A reference to obj as stored: its kind, name, resourceVersion and uid (borrowed). */
struct pk_write_ref ctl_ref_of(const struct pk_type *kind, const json_t *obj);

/*
 * budgets.c: PodDisruptionBudget status.  Note a pod's or budget's event (its
 * namespace counted again; -ENOMEM); count the noted namespaces' budgets and
 * write the status that changed.
 */
int ctl_budgets_note(struct pk_ctl *ctl, const struct pk_source_event *ev);
void ctl_budgets_note_all(struct pk_ctl *ctl);
void ctl_budgets_run(struct pk_ctl *ctl);

/* controllers.c */
int ctl_reconcile(struct pk_ctl *ctl, enum pk_kind kind, const char *ns, const char *name);
/* Queue an object for ctl_queue_run() (once until then); -ENOMEM. */
int ctl_queue_reconcile(struct pk_ctl *ctl, enum pk_kind kind, const char *ns, const char *name);
/* Reconcile what is queued, and what that queues, until nothing is. */
void ctl_queue_run(struct pk_ctl *ctl);
void ctl_queue_free(struct ctl_queue *q);

/* gc.c: the garbage collector over every served kind */
struct ctl_gc;
int ctl_gc_new(struct ctl_gc **ret);
void ctl_gc_free(struct ctl_gc *gc);
/* Every event of the store: what it may leave to collect is noted. */
void ctl_gc_note(struct pk_ctl *ctl, const struct pk_source_event *ev);
/* A pass over every object at the next ctl_gc_run() (after the listing). */
void ctl_gc_full(struct ctl_gc *gc);
/* Collect what was noted; returns the number of objects written (deleted, changed). */
int ctl_gc_run(struct pk_ctl *ctl);
/* claims.c: does pod name a template whose claim is not made yet?  Make them. */
/* Does a Pod or a PodGroup wait for claims from its templates? */
bool ctl_needs_claims(const json_t *obj);
int ctl_claims_reconcile(struct pk_ctl *ctl, enum pk_kind kind, const char *ns, const char *name);
/* Ask the controllers of these pods' owners to recreate them. */
void ctl_reconcile_owner_of(struct pk_ctl *ctl, const json_t *obj);

/* nodes.c */
int ctl_register_board(struct pk_ctl *ctl, const char *path, char *err, size_t errlen);
int ctl_node_unreachable(struct pk_ctl *ctl, const char *name);
int ctl_node_recovered(struct pk_ctl *ctl, const char *name);
/* A deleted Node: its pods are evicted like those of an unreachable one. */
int ctl_node_deleted(struct pk_ctl *ctl, const char *name);
/*
 * Evict pods (as listed: each under its resourceVersion, read again and
 * evicted at its new version when it changed but is the same pod by uid) in
 * one transaction per attempt, DisruptionTarget set; returns how many.
 */
int ctl_evict_pods(struct pk_ctl *ctl, const json_t *pods, const char *node, const char *why);

/*
 * queues.c: Kueue's admission by quota and placement (ClusterQueue,
 * LocalQueue, ResourceFlavor, Cohort): one pass over every queue and queued
 * Job or JobSet, admitting what fits (preempting for quota as allowed) and
 * writing the queues' status.
 */
void ctl_queues_run(struct pk_ctl *ctl);
struct q_cache;
void q_cache_free(struct q_cache *c);
/* What ctl's queue passes did so far (zeros before the first). */
void q_cache_stats(const struct pk_ctl *ctl, struct pk_queues_stats *ret);
/* pk_queues_sorted_agree (queues_cache.c). */
int q_cache_sorted_agree(const struct pk_ctl *ctl);
/*
 * queues_tree.c: quota shared in a tree of Cohorts.  cqs and cohorts (name
 * -> object) are borrowed and outlive the tree.  charge counts usage of a
 * ClusterQueue (negative: gives it back); available is what it can still
 * take of (flavor, resource), borrowing within its cohort as its limits and
 * its ancestors' allow; nominal its own nominal quota (0: none).
 */
struct q_tree;
int q_tree_new(json_t *cqs, json_t *cohorts, struct q_tree **ret);
void q_tree_free(struct q_tree *t);
/* t kept for a pass over the same specs: its usage emptied, its maps cqs and cohorts. */
int q_tree_reuse(struct q_tree *t, json_t *cqs, json_t *cohorts);
/* Same quotas, usage, parents and cycles (the tests' check of a kept tree). */
bool q_tree_equal(const struct q_tree *a, const struct q_tree *b);
void q_tree_charge(struct q_tree *t, const char *cq, const char *flavor, const char *resource,
		   int64_t milli);
int64_t q_tree_available(const struct q_tree *t, const char *cq, const char *flavor,
			 const char *resource);
int64_t q_tree_nominal(const struct q_tree *t, const char *cq, const char *flavor,
		       const char *resource);
/*
 * queues_place.c: the placement half of admission.  q_place_new reads the
 * cluster from store; q_place_try runs the scheduling core offline on it
 * with workload (a Job or JobSet as admitted, or an array of Pods) added, leaving out the pods of
 * the workloads in gone ("Kind/ns/name" -> true): 1 when all its pods are
 * placed (kept in the picture for the next try), 0 when not (why: the first
 * unplaced pod's PodScheduled message), < 0 on error (why says it).
 */
/* Written by earlier versions (a position); removed when a pending workload is noted. */
#define Q_ANNOTATION_POSITION "queue.podkernel.dev/position"
#define Q_ANNOTATION_PENDING "queue.podkernel.dev/pending-reason"
struct q_place;
struct pk_sched;
int q_place_new(struct pk_store *store, struct q_place **ret);
/* The same picture from what q_place_new reads, in its order (both taken over). */
int q_place_from(json_t *base, json_t *topologies, struct q_place **ret);
/* The checks' runs decode the picture's Nodes and pods once, into d (kept by the caller). */
struct pk_sched_decoded;
void q_place_set_decoded(struct q_place *p, struct pk_sched_decoded *d);
/* What the claims passes of its runs saw (pk_claims_pass()), kept by the caller. */
void q_place_set_claims(struct q_place *p, struct pk_claims_seen *seen);
/* A pod the picture holds: bound, not finished. */
bool q_place_holds_node(const json_t *pod);
void q_place_free(struct q_place *p);
/*
 * The scheduler of the last kept try and what it holds (the picture, or
 * what it was carried in with when no try ran), taken out of p for the next
 * pass (*ret_kept NULL: none); the next pass's picture takes them in, and
 * its first try runs on it fed what changed (pk_sched_run_carried).
 */
void q_place_carry_out(struct q_place *p, struct pk_sched **ret_kept, json_t **ret_held);
void q_place_carry_in(struct q_place *p, struct pk_sched *kept, json_t *held);
/* How many of p's tries ran on the scheduler carried in. */
size_t q_place_carried(const struct q_place *p);
int q_place_try(struct q_place *p, const json_t *workload, const json_t *gone, char *why, size_t n);
/*
 * As q_place_try, for *workload admitted in flavors (ResourceFlavor objects)
 * and placed as Kueue's topology-aware scheduling asks: with a flavor that
 * names a Topology, each pod set (a Job's template, a JobSet's replicated
 * Job) whose template carries kueue.x-k8s.io/podset-required-topology is
 * pinned (nodeSelector) to the first domain of that level, in label-value
 * order, where the whole workload is placed; podset-preferred-topology tries
 * that level, then each above it, then anywhere.  On 1, *workload is the
 * workload as placed (its pins in its templates).
 */
int q_place_admit(struct q_place *p, json_t **workload, enum pk_kind kind, const json_t *flavors,
		  const json_t *gone, char *why, size_t n);
/*
 * obj (a Job or JobSet, or a queued Pod) as admitted: the admission
 * annotation, spec.suspend false (a Pod: without the gate
 * kueue.x-k8s.io/admission), no pending annotations, and each of flavors'
 * (ResourceFlavor objects) nodeLabels and tolerations in every pod template
 * (a Pod: its spec).  NULL: no memory.
 */
json_t *q_admitted_copy(const json_t *obj, enum pk_kind kind, const char *admission,
			const json_t *flavors);
/* Whether every pod template of obj tolerates flavor's nodeTaints (why: the first that is not). */
bool q_flavor_tolerated(const json_t *obj, enum pk_kind kind, const json_t *flavor, char *why,
			size_t n);
/*
 * queues_metrics.c: Kueue's metrics.  wait counts one admission's wait;
 * set_gauges hands over the pass's gauge text (malloc'd); render prints
 * both (metrics lock held); free frees them.
 */
void q_metrics_wait(struct pk_ctl *ctl, const char *cq, double seconds);
void q_metrics_set_gauges(struct pk_ctl *ctl, char *text);
void q_metrics_render(struct pk_ctl *ctl, FILE *f);
/* The queue controller's counters after a pass, for /metrics. */
void q_metrics_stats(struct pk_ctl *ctl);
void q_metrics_free(struct ctl_metrics *m);
/* What the root of cq's cohort tree holds of (flavor, resource); 0 without a cohort. */
int64_t q_tree_lendable(const struct q_tree *t, const char *cq, const char *flavor,
			const char *resource);
/*
 * How far up its cohort tree cq must borrow to take milli more of (flavor,
 * resource): 0 within its own quota (or without a cohort), else the height
 * of the lowest Cohort whose subtree holds it (the whole tree's when none
 * does), as Kueue's FindHeightOfLowestSubtreeThatFits ranks borrowing.
 */
int q_tree_borrow_height(const struct q_tree *t, const char *cq, const char *flavor,
			 const char *resource, int64_t milli);
/* Whether ClusterQueues a and b share a cohort tree. */
bool q_tree_same_cohort(const struct q_tree *t, const char *a, const char *b);
/* Whether cq's Cohort is in or under a cycle of parents (why says which). */
bool q_tree_in_cycle(const struct q_tree *t, const char *cq, char *why, size_t n);

/* recorder.c: core/v1 Events of the loop's writes, in the store (standalone) */
#define CTL_EVENT_SWEEP_MS 60000
#define CTL_EVENT_SWEEP_MAX 10000 /* Events a sweep deletes in one transaction */
struct ctl_recorder;
int ctl_recorder_new(struct ctl_recorder **ret);
void ctl_recorder_free(struct ctl_recorder *rec);
void ctl_record_batch(struct pk_ctl *ctl, const struct pk_write_batch *batch,
		      const struct pk_write_result *results);
/* A Warning Event about obj (of kind), by the correlator's rule; created at the next flush. */
/* The same, a Normal Event (a LeaderWorkerSet's condition that changed). */
void ctl_record_normal(struct pk_ctl *ctl, const struct pk_type *kind, const json_t *obj,
		       const char *reason, const char *note);
void ctl_record_warning(struct pk_ctl *ctl, const struct pk_type *kind, const json_t *obj,
			const char *reason, const char *note);
/* Create the Events noted, in one transaction. */
void ctl_record_flush(struct pk_ctl *ctl);
/* Delete expired Events (at most once per CTL_EVENT_SWEEP_MS). */
void ctl_record_sweep(struct pk_ctl *ctl, int64_t now_ms);

/* lifecycle.c */
struct ctl_lifecycle;
int ctl_lifecycle_new(const struct pk_standalone_config *cfg, int64_t now,
		      struct ctl_lifecycle **ret, char *err, size_t errlen);
void ctl_lifecycle_free(struct ctl_lifecycle *lc);
/* Track a Node (simulated ones only), or forget it. */
void ctl_lifecycle_node(struct ctl_lifecycle *lc, const json_t *node, bool deleted);
/* A binding written: a pod on a simulated node gets its timers. */
void ctl_lifecycle_bound(struct ctl_lifecycle *lc, const json_t *pod, const char *node,
			 int64_t now);
/* Fire the timers due at now; returns the next due time, or 0 when none. */
int64_t ctl_lifecycle_run(struct pk_ctl *ctl, int64_t now);

#endif

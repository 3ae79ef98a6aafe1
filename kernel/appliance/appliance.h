/* SPDX-License-Identifier: Apache-2.0 */
/*
 * appliance.h — the scheduling loop of podkerneld, the same in both modes.
 *
 * One thread consumes a source's change stream (the store's, or attach
 * mode's mirror of a cluster): one list of every kind at start, then events
 * only.  Each event is classified (ap_classify(): feed the scheduler, remove
 * from it, skip a write that changes nothing the scheduler reads), the
 * scheduler (kernel/sched/sched.h) runs cycles, and the actions of a round
 * are written back through the write path (kernel/write/writer.h):
 * bindings, conditions and evictions under resourceVersion preconditions.
 *
 * The loop does not know its mode.  What a mode adds registers as hooks
 * (struct pk_appliance_hooks, up to PK_APPLIANCE_MAX_HOOKS tables, called
 * in the order registered): standalone podkerneld's controllers, node
 * heartbeats and simulated pods (kernel/controllers/) see the listing, the
 * events and the committed batches, and run before each round; attach mode
 * registers none of those, as the cluster's own controllers run there.
 * podkerneld registers the placement map (kernel/ui/) in both modes.
 *
 * Lifecycle: pk_appliance_start() -> (runs) -> pk_appliance_stop().  The
 * source is borrowed and must outlive the appliance.
 */
#ifndef PODKERNEL_KERNEL_APPLIANCE_H
#define PODKERNEL_KERNEL_APPLIANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/store/store.h"
#include "topology/topology.h"

/*
 * Nodes podagent publishes carry TOPO_ANN_AGENT_OWNED, and it refreshes
 * TOPO_ANN_HEARTBEAT (topology.h) every interval.  The store drops writes
 * that change nothing, so an unchanged label publish is no heartbeat: only
 * Nodes carrying the heartbeat annotation are monitored.
 */
/* Taint and reason written on a Node that stopped reporting. */
#define PK_APPLIANCE_TAINT_UNREACHABLE "node.kubernetes.io/unreachable"
#define PK_APPLIANCE_DEFAULT_GRACE_MS 40000
/* Events in the store expire after this, as kube-apiserver's --event-ttl default. */
#define PK_APPLIANCE_EVENT_TTL_MS (3600 * 1000LL)
/* Node-loss eviction, as kube-controller-manager's node lifecycle controller. */
#define PK_APPLIANCE_EVICTION_RATE 0.1		  /* nodes declared lost per second */
#define PK_APPLIANCE_SECONDARY_EVICTION_RATE 0.01 /* in a partial disruption of a large cluster */
#define PK_APPLIANCE_UNHEALTHY_THRESHOLD 0.55	  /* share of silent nodes: a disruption */
#define PK_APPLIANCE_LARGE_CLUSTER 50		  /* more monitored nodes: a large cluster */
/* Where node heartbeat Leases live (as kubelet's). */
#define PK_APPLIANCE_DEFAULT_LEASE_NS "kube-node-lease"

struct pk_writer;
struct pk_write_batch;
struct pk_write_result;
struct ap_decision;
struct pk_appliance;
/*
 * Where the loop reads objects: by default the store itself; in attach mode
 * a mirror of a Kubernetes cluster (kernel/attach/).  The calls have the
 * store's meaning (kernel/store/store.h): list pages of a kind, the latest
 * position of the change stream, the events after a position (each carrying
 * its object's resourceVersion), a wait for news, one object.
 */
struct pk_appliance_source_ops {
	int (*list)(void *src, const char *kind, const struct pk_store_list_opts *opts,
		    json_t **ret_items, char **ret_continue);
	uint64_t (*rv)(void *src);
	int (*events_since)(void *src, uint64_t since, size_t max, pk_store_event_cb cb, void *arg,
			    uint64_t *ret_last);
	int (*wait)(void *src, uint64_t since, int timeout_ms);
	int (*get)(void *src, const char *kind, const char *ns, const char *name, json_t **ret);
};

/*
 * What a mode adds to the loop.  Every member may be NULL.  start runs on the
 * caller's thread before the first listing, free after the loop stopped; the
 * others run on the loop's thread.
 */
struct pk_appliance_hooks {
	/* Before the first listing (simulated nodes registered, say); errors to err. */
	int (*start)(void *arg, struct pk_appliance *app, char *err, size_t errlen);
	/*
	 * A listing begins (at start, after a lost stream, when leading anew):
	 * what the last one delivered may be gone from the source.
	 */
	void (*list_begin)(void *arg);
	/* Each object of a listing, Leases too, in kind order. */
	void (*listed)(void *arg, const char *kind, const json_t *obj, int64_t now_ms);
	/* A listing is complete. */
	void (*list_done)(void *arg);
	/*
	 * Each change-stream event, the loop's own writes too, and what the loop
	 * made of it (NULL for a Lease; AP_SKIP without flags when it could not
	 * classify it, out of memory).
	 */
	void (*event)(void *arg, const struct pk_store_event *ev, const struct ap_decision *d);
	/* A batch was committed: its n items and their results. */
	void (*written)(void *arg, const struct pk_write_batch *batch,
			const struct pk_write_result *results, size_t n, int64_t now_ms);
	/*
	 * Before each round's cycles: the mode's own work.  The loop reads the
	 * events it caused before the cycles.  Returns when it is next due
	 * (monotonic ms), or 0.
	 */
	int64_t (*round)(void *arg, int64_t now_ms);
	/* Its lines of the Prometheus text (any thread). */
	void (*metrics)(void *arg, FILE *f);
	void (*free)(void *arg);
};

/* One registration: a hooks table and its argument. */
#define PK_APPLIANCE_MAX_HOOKS 4
struct pk_appliance_hook {
	const struct pk_appliance_hooks *ops;
	void *arg;
};

struct pk_appliance_config {
	const char *board;     /* --simulate-board FILE, or NULL */
	const char *strategy;  /* --strategy NAME: placement strategy; NULL: the default */
	int verbosity;	       /* 0 errors, 1 startup, 2 actions, 3 events, 4 trace */
	int64_t node_grace_ms; /* 0: $PODKERNEL_NODE_GRACE_SECONDS or 40 s */
	/* Node-loss eviction (0: the PK_APPLIANCE_* defaults above; a rate < 0: 0). */
	double node_eviction_rate, secondary_node_eviction_rate, unhealthy_zone_threshold;
	unsigned large_cluster_size_threshold;
	/*
	 * When the API server last could not take every connection (monotonic
	 * ms, as pk_server_saturated_ms()); a node is declared lost only after
	 * a grace period without that.  NULL: the server is never saturated.
	 */
	int64_t (*saturated_ms)(void *arg);
	void *saturated_arg;
	const char *node_lease_namespace; /* node heartbeat Leases; NULL: kube-node-lease */
	int64_t backoff_initial_ms, backoff_max_ms; /* 0: the scheduler's defaults */
	bool gated_gangs_wait; /* pk_sched_opts.gated_gangs_wait (--gated-gangs-wait) */
	int64_t
	    event_ttl_ms; /* standalone: Events older than this go; 0: PK_APPLIANCE_EVENT_TTL_MS */
	/* standalone: the same note about an object is written at most this often
	 * (repeats in between are counted into the Event's count); 0: PK_EVENT_REPEAT_S */
	int64_t event_repeat_ms;
	/*
	 * Where the scheduling rounds write (kernel/write/writer.h); the
	 * appliance takes it over (also on failure).  Required.
	 */
	struct pk_writer *writer;
	/*
	 * Where the loop reads (required).  Cycles run only while
	 * may_schedule(arg) says yes (attach mode: caches synced, leader;
	 * NULL: always); events are consumed regardless, so a standby's
	 * scheduler stays warm.
	 */
	const struct pk_appliance_source_ops *source;
	void *source_arg;
	bool (*may_schedule)(void *arg);
	void *may_schedule_arg;
	/*
	 * What the mode and the program add, called in this order
	 * (pk_appliance_config_add_hooks()); the loop frees each arg through
	 * its ops->free.
	 */
	struct pk_appliance_hook hooks[PK_APPLIANCE_MAX_HOOKS];
	size_t nhooks;
	/*
	 * Simulated pod lifecycle (kernel/controllers/lifecycle.c): pods bound to
	 * the board's simulated nodes become Running after sim_start_delay_ms
	 * and Succeeded after their sim.podkernel.dev/duration; sim_failure_rate
	 * fails a share of them, sim_node_loss ("T:NODE,...") loses nodes.
	 */
	bool sim_lifecycle;
	int64_t sim_start_delay_ms;
	double sim_failure_rate;
	uint64_t sim_seed;
	const char *sim_node_loss;
	/* Where log lines go (the program decides); NULL: nowhere. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

struct pk_appliance;

/* Register ops (non-NULL) with arg after the hooks cfg has; -ENOSPC when it has
 * PK_APPLIANCE_MAX_HOOKS. */
int pk_appliance_config_add_hooks(struct pk_appliance_config *cfg,
				  const struct pk_appliance_hooks *ops, void *arg);

/*
 * Start the hooks (in order; the first error stops), list the source and
 * start the loop thread.  cfg->source and cfg->writer are required.  Errors
 * (the hooks', the source's) go to err.  The loop owns cfg->writer and the
 * hooks' arguments from here on, also on failure.
 */
int pk_appliance_start(const struct pk_appliance_config *cfg, struct pk_appliance **ret, char *err,
		       size_t errlen);
/* Stop the thread and free everything; accepts NULL. */
void pk_appliance_stop(struct pk_appliance *app);

/* Prometheus text of the scheduler, controller and heartbeat metrics. */
int pk_appliance_metrics(struct pk_appliance *app, FILE *f);
/* Same, for a server hook that takes a callback (arg is the appliance). */
void pk_appliance_metrics_cb(void *arg, FILE *f);

/* ---- what the loop offers its hooks ------------------------------------------------ */

/* The loop's clock (monotonic ms). */
int64_t ap_now_ms(void);
/*
 * An object a hook wrote itself: the loop takes it as seen (its event comes
 * back as a skip) and gives it to the scheduler now.  Loop thread only.
 */
void pk_appliance_wrote(struct pk_appliance *app, enum pk_kind kind, json_t *obj);
/*
 * The argument of the hooks registered last: the mode's own (standalone's
 * controllers, which pk_standalone_start() registers after the hooks its
 * configuration brings).  NULL without hooks.
 */
void *pk_appliance_hooks_arg(const struct pk_appliance *app);

/* ---- loop logic, exposed for tests -------------------------------------------- */

/* What one change-stream event means for the loop. */
enum ap_verdict {
	AP_SKIP,   /* nothing the scheduler reads changed (or already seen) */
	AP_FEED,   /* pk_sched_update() the object */
	AP_REMOVE, /* pk_sched_remove() the object */
};
struct ap_decision {
	enum ap_verdict verdict;
	bool reconcile; /* a Job, JobSet or LeaderWorkerSet to reconcile */
	bool owner;	/* a pod changed (its phase counts), or a pod or Job went:
			 * reconcile its controller */
	bool gc;	/* an owner went away: collect garbage */
	bool heartbeat; /* a Node write from outside the appliance */
};

/*
 * The last resourceVersion and a fingerprint of what the scheduler reads,
 * per object.  Writes by the appliance are recorded with ap_cache_note() so
 * their events come back as AP_SKIP.
 */
struct ap_cache;
int ap_cache_new(struct ap_cache **ret);
void ap_cache_free(struct ap_cache *c);
/* Record obj as seen (its metadata.resourceVersion and fingerprint). */
int ap_cache_note(struct ap_cache *c, enum pk_kind kind, const json_t *obj);
void ap_cache_forget(struct ap_cache *c, enum pk_kind kind, const char *ns, const char *name);
/* The last resourceVersion seen of an object, 0 when unknown. */
uint64_t ap_cache_rv(const struct ap_cache *c, enum pk_kind kind, const char *ns, const char *name);
size_t ap_cache_size(const struct ap_cache *c);

/* Fingerprint of the scheduling-relevant part of obj (FNV-1a over a canonical walk). */
uint64_t ap_fingerprint(enum pk_kind kind, const json_t *obj);

/* Classify one event and update the cache.  rv is the event's resourceVersion. */
int ap_classify(struct ap_cache *c, enum pk_event_type type, enum pk_kind kind, const json_t *obj,
		uint64_t rv, struct ap_decision *ret);

#endif /* PODKERNEL_KERNEL_APPLIANCE_H */

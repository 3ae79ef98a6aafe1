/* SPDX-License-Identifier: Apache-2.0 */
/*
 * appliance.h — what podkerneld runs next to its API server: the scheduling
 * loop, the Job/JobSet controllers with garbage collection, the node
 * heartbeat monitor and the simulated nodes of a board file.
 *
 * One thread consumes the store's change stream (kernel/store/store.h): one
 * list of every kind at start, then events only.  Each event is classified
 * (ap_classify(): feed the scheduler, remove from it, skip a write that
 * changes nothing the scheduler reads, reconcile a controller object, note a
 * node heartbeat), the scheduler (kernel/sched/sched.h) runs cycles, and the
 * actions of each cycle are written back through the same store calls the
 * HTTP handlers use: bindings with a resourceVersion precondition, conditions
 * through the status subresource, preemption as DisruptionTarget + delete.
 *
 * Lifecycle: pk_appliance_start() -> (runs) -> pk_appliance_stop().  The
 * store (or the configured source) is borrowed and must outlive the
 * appliance.
 */
#ifndef PODKERNEL_KERNEL_APPLIANCE_H
#define PODKERNEL_KERNEL_APPLIANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/lib/request.h"
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

struct pk_appliance_config {
	const char *board;     /* --simulate-board FILE, or NULL */
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
	int64_t
	    event_ttl_ms; /* standalone: Events older than this go; 0: PK_APPLIANCE_EVENT_TTL_MS */
	/*
	 * Where the scheduling rounds write (kernel/write/writer.h); the
	 * appliance takes it over (also on failure).  NULL: the store.
	 */
	struct pk_writer *writer;
	/*
	 * Attach mode (pk_appliance_start() with a NULL store): the loop reads
	 * source and only schedules; the Job/JobSet controllers, the node
	 * heartbeat monitor and board registration belong to the standalone
	 * appliance and stay off.  Cycles run only while may_schedule(arg)
	 * says yes (caches synced, leader); events are consumed regardless, so
	 * a standby's scheduler stays warm.
	 */
	const struct pk_appliance_source_ops *source;
	void *source_arg;
	bool (*may_schedule)(void *arg);
	void *may_schedule_arg;
	/*
	 * Simulated pod lifecycle (lifecycle.c, standalone only): pods bound to
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

/*
 * Register the board's nodes (when configured), list the store and start the
 * loop thread.  store NULL: attach mode (cfg->source is required).  Errors (board file
 * FILE:LINE:COL, store) go to err; -EINVAL for a bad board file.
 */
int pk_appliance_start(struct pk_store *store, const struct pk_appliance_config *cfg,
		       struct pk_appliance **ret, char *err, size_t errlen);
/* Stop the thread and free everything; accepts NULL. */
void pk_appliance_stop(struct pk_appliance *app);

/* Prometheus text of the scheduler, controller and heartbeat metrics. */
int pk_appliance_metrics(struct pk_appliance *app, FILE *f);
/* Same, for a server hook that takes a callback (arg is the appliance). */
void pk_appliance_metrics_cb(void *arg, FILE *f);
/*
 * The placement map: the /ui/ page and /ui/api/placement, for
 * pk_server_set_ui_hook() (arg is the appliance; kernel/appliance/placement_map.h).
 */
int pk_appliance_ui_cb(void *arg, const struct pk_request *req, struct pk_response *resp);

/* ---- loop logic, exposed for tests -------------------------------------------- */

/* What one change-stream event means for the loop. */
enum ap_verdict {
	AP_SKIP,   /* nothing the scheduler reads changed (or already seen) */
	AP_FEED,   /* pk_sched_update() the object */
	AP_REMOVE, /* pk_sched_remove() the object */
};
struct ap_decision {
	enum ap_verdict verdict;
	bool reconcile; /* a Job or JobSet to reconcile */
	bool owner;	/* a pod changed (its phase counts): reconcile its controller */
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
int ap_cache_note(struct ap_cache *c, const char *kind, const json_t *obj);
void ap_cache_forget(struct ap_cache *c, const char *kind, const char *ns, const char *name);
/* The last resourceVersion seen of an object, 0 when unknown. */
uint64_t ap_cache_rv(const struct ap_cache *c, const char *kind, const char *ns, const char *name);
size_t ap_cache_size(const struct ap_cache *c);

/* Fingerprint of the scheduling-relevant part of obj (FNV-1a over a canonical walk). */
uint64_t ap_fingerprint(const char *kind, const json_t *obj);

/* Classify one event and update the cache.  rv is the event's resourceVersion. */
int ap_classify(struct ap_cache *c, enum pk_event_type type, const char *kind, const json_t *obj,
		uint64_t rv, struct ap_decision *ret);

/*
 * Heartbeats (heartbeat.c): a node's Lease renewals, or (the older way) Node
 * writes the appliance did not make while the Node carries TOPO_ANN_HEARTBEAT
 * (and not PK_ANN_SIMULATED).  An existing Node with either, silent
 * for more than the grace period, is unreachable.
 */
struct ap_heartbeats;
int ap_heartbeats_new(struct ap_heartbeats **ret);
void ap_heartbeats_free(struct ap_heartbeats *h);
bool ap_node_monitored(const json_t *node);
/*
 * A Node write seen at now_ms; annotated: it carries the heartbeat annotation
 * (a sign of life).  ret_recovered true when it was unreachable.
 */
int ap_heartbeat_seen(struct ap_heartbeats *h, const char *name, bool annotated, int64_t now_ms,
		      bool *ret_recovered);
/* A write of the node's Lease (present), or its deletion (!present). */
int ap_heartbeat_lease(struct ap_heartbeats *h, const char *name, bool present, int64_t now_ms,
		       bool *ret_recovered);
/* How many Lease writes of name were seen (the listing at start counts one). */
int64_t ap_heartbeat_lease_writes(const struct ap_heartbeats *h, const char *name);
/* Monitored and not declared unreachable. */
bool ap_heartbeat_live(const struct ap_heartbeats *h, const char *name);
/* The Node was deleted. */
void ap_heartbeat_forget(struct ap_heartbeats *h, const char *name);
/*
 * Names (a new JSON array of strings) of monitored nodes silent for more than
 * grace_ms at now_ms that were not reported before; they count as
 * unreachable until their next heartbeat.
 */
int ap_heartbeats_expired(struct ap_heartbeats *h, int64_t now_ms, int64_t grace_ms,
			  json_t **ret_names);
/* A Node podagent registered (TOPO_ANN_AGENT_OWNED, not simulated): it will
 * renew a Lease, so it is monitored from registration. */
bool ap_node_agent_registered(const json_t *node);
/* Monitor name from now_ms on, before any heartbeat (a Node podagent registered). */
int ap_heartbeat_expect(struct ap_heartbeats *h, const char *name, int64_t now_ms);

/* Which silent nodes to declare lost, and how fast (ap_heartbeats_lost()). */
struct ap_loss_policy {
	int64_t grace_ms;
	double rate;		/* nodes per second */
	double secondary_rate;	/* in a partial disruption of a large cluster */
	double unhealthy_share; /* this share of monitored nodes silent (and > 2): a disruption */
	unsigned large_cluster; /* more monitored nodes than this: large */
	int64_t saturated_ms;	/* the server last could not serve every client (0: never) */
};
enum ap_loss_state {
	AP_LOSS_NORMAL,	 /* silent nodes are declared lost at the rate */
	AP_LOSS_PARTIAL, /* a large share silent: the secondary rate, or none in a small cluster */
	AP_LOSS_FULL,	 /* every monitored node silent (more than two): none */
	AP_LOSS_BLIND,	 /* the server was saturated within the grace: none */
};
struct ap_loss_limiter {
	double tokens; /* a token bucket of depth 1 */
	int64_t last_ms;
};
struct ap_loss_report {
	enum ap_loss_state state;
	size_t monitored, silent, held; /* held: silent, not declared lost this time */
};
/*
 * The nodes to declare lost now (a new JSON array of names, oldest silence
 * first): monitored nodes whose last heartbeat, and the server's last
 * saturation, are both older than the grace period, within the limiter's
 * rate for the state the silent share puts the cluster in.  They count as
 * unreachable until their next heartbeat; the others stay candidates.
 */
int ap_heartbeats_lost(struct ap_heartbeats *h, const struct ap_loss_policy *p,
		       struct ap_loss_limiter *lim, int64_t now_ms, json_t **ret_names,
		       struct ap_loss_report *ret_report);

#endif /* PODKERNEL_KERNEL_APPLIANCE_H */

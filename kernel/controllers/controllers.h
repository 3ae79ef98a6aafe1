/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controllers.h — what standalone podkerneld runs beside the scheduling loop
 * (kernel/appliance/), registered on it as hooks: the Job/JobSet/LeaderWorkerSet and
 * ResourceClaim controllers with garbage collection (controllers.c,
 * claims.c), the node heartbeat monitor and node-loss eviction
 * (heartbeat.c, nodes.c), the simulated nodes of a board file and the
 * simulated pod lifecycle (nodes.c, lifecycle.c), and core/v1 Events of the
 * loop's writes (recorder.c).  Attach mode runs none of them: the cluster's
 * own controllers do that work there.
 *
 * Every write goes to podkerneld's own store; the loop reads the store and
 * writes its rounds through the store's backend of the write path.
 */
#ifndef PODKERNEL_KERNEL_CONTROLLERS_H
#define PODKERNEL_KERNEL_CONTROLLERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel/appliance/appliance.h"
#include "kernel/builder/queue_pass.h"

struct pk_store; /* kernel/store/store.h */

/*
 * Standalone's settings (the loop's own are struct pk_appliance_config).
 * Nodes podagent publishes carry TOPO_ANN_AGENT_OWNED, and it refreshes
 * TOPO_ANN_HEARTBEAT (topology.h) every interval; the store drops writes
 * that change nothing, so an unchanged label publish is no heartbeat: only
 * Nodes carrying the heartbeat annotation, or renewing a Lease, are
 * monitored.  A silent one is tainted PK_TAINT_UNREACHABLE.
 */
#define PK_STANDALONE_DEFAULT_GRACE_MS 40000
/* Events in the store expire after this, as kube-apiserver's --event-ttl default. */
#define PK_STANDALONE_EVENT_TTL_MS (3600 * 1000LL)
/*
 * Node-loss eviction, as kube-controller-manager's node lifecycle
 * controller: nodes declared lost per second; the same in a partial
 * disruption of a large cluster; the share of silent nodes that is a
 * disruption; more monitored nodes than this make a large cluster.
 */
#define PK_STANDALONE_EVICTION_RATE 0.1
#define PK_STANDALONE_SECONDARY_EVICTION_RATE 0.01
#define PK_STANDALONE_UNHEALTHY_THRESHOLD 0.55
#define PK_STANDALONE_LARGE_CLUSTER 50
/* Where node heartbeat Leases live (as kubelet's). */
#define PK_STANDALONE_DEFAULT_LEASE_NS "kube-node-lease"

struct pk_standalone_config {
	const char *board;     /* --simulate-board FILE, or NULL */
	int64_t node_grace_ms; /* 0: $PODKERNEL_NODE_GRACE_SECONDS or 40 s */
	/* Node-loss eviction (0: the PK_STANDALONE_* defaults above; a rate < 0: 0). */
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
	int64_t event_ttl_ms; /* Events older than this go; 0: PK_STANDALONE_EVENT_TTL_MS */
	/* the same note about an object is written at most this often (repeats in
	 * between are counted into the Event's count); 0: PK_EVENT_REPEAT_S */
	int64_t event_repeat_ms;
	/*
	 * Simulated pod lifecycle (lifecycle.c): pods bound to the board's
	 * simulated nodes become Running after sim_start_delay_ms and Succeeded
	 * after their sim.podkernel.dev/duration; sim_failure_rate fails a share
	 * of them, sim_node_loss ("T:NODE,...") loses nodes.
	 */
	bool sim_lifecycle;
	int64_t sim_start_delay_ms;
	double sim_failure_rate;
	uint64_t sim_seed;
	const char *sim_node_loss;
};

/*
 * The standalone appliance: the loop on store (its source, and its writes
 * through pk_writer_store_new() unless cfg->writer is set), with the
 * controllers as its hooks, registered after those cfg carries (the
 * placement map's, say), set by scfg (NULL: the defaults).  cfg's source must be unset; the loop
 * owns cfg->writer from here on, also on failure.  The controllers write through a writer of their
 * own on the store (write.c), never on the store itself.  Errors (board file FILE:LINE:COL, store)
 * go to err; -EINVAL for a bad board file.  Stop it with pk_appliance_stop().
 */
/*
 * One pass of the queue controller on store (offline admission, podctl
 * schedule): admissions, preemptions, pending annotations and queue status
 * written through a writer of its own on store; no Events.  0 or -errno.
 */
int pk_queues_pass(struct pk_store *store);
/*
 * PK_QUEUES_LABEL_KUEUE_POD_GROUP and PK_QUEUES_ANNOTATION_PENDING, what it
 * writes, are in kernel/appliance/appliance.h.
 */
/*
 * The same pass with options (struct pk_queues_pass_opts,
 * kernel/appliance/appliance.h).
 */
int pk_queues_pass_opts(struct pk_store *store, const struct pk_queues_pass_opts *o);
/*
 * The same pass on objects that live in no store of podkernel's (attach
 * mode's mirror of a cluster; queues_scratch.c), as struct
 * pk_queues_scratch says (kernel/appliance/appliance.h).
 */
int pk_queues_pass_scratch(const struct pk_queues_scratch *s, const struct pk_queues_pass_opts *o,
			   json_t **ret_before, json_t **ret_after, char *err, size_t errlen);
/*
 * The queue controller kept between passes, as standalone podkerneld runs
 * it: the first pass lists what it reads, each later one reads the store's
 * change stream since (a lost stream: it lists again), and a workload that
 * waits for quota or room is not tried again until something that could
 * change that happens.  The same admissions as pk_queues_pass_opts.
 */
struct pk_queues;
int pk_queues_new(struct pk_store *store, const struct pk_queues_pass_opts *o,
		  struct pk_queues **ret);
int pk_queues_run(struct pk_queues *q);
void pk_queues_free(struct pk_queues *q);
/* What its passes did, in all. */
struct pk_queues_stats {
	uint64_t passes;     /* passes run */
	uint64_t lists;	     /* full listings (the first pass, a lost change stream) */
	uint64_t decodes;    /* workloads' requests decoded */
	uint64_t tries;	     /* pending workloads tried (quota, and placement where it fits) */
	uint64_t placements; /* placement checks run (a run of the scheduling core each) */
	uint64_t parked;     /* pending workloads not tried: parked, nothing changed */
	uint64_t skipped;    /* workloads not visited: their ClusterQueue's inputs unchanged */
	uint64_t carried;    /* placement checks on the scheduler of the pass before, fed what
				changed (not one built from the whole cluster) */
};
void pk_queues_get_stats(const struct pk_queues *q, struct pk_queues_stats *ret);
/*
 * Whether the cluster's objects the controller keeps in the store's order,
 * kind by kind, as they change, are those objects sorted afresh (tests): the
 * kinds compared, -1 when one differs.
 */
int pk_queues_sorted_agree(const struct pk_queues *q);
/* Kueue's gauges after its latest pass, as /metrics serves them (a copy; NULL: none). */
char *pk_queues_gauges(struct pk_queues *q);

/*
 * The resource claim controller (claims.c) as an offline run's controller
 * (struct pk_sched_opts.controllers; arg unused): the claims the Pods and
 * PodGroups of objects lack from ResourceClaimTemplates of objects, and the
 * owners' status.resourceClaimStatuses recording them, written through w in
 * one batch (an in-memory writer over objects).  A claim is named
 * "<owner>-<claim>-" and five characters derived from the owner's
 * namespace, name and claim, so a run is reproducible; one that exists
 * already is taken as the owner's.  A template not in objects makes
 * nothing: the pod waits for its claim.  0, -ESTALE when objects and the
 * writer disagree, another -errno.
 */
struct pk_writer;
int pk_claims_pass(void *arg, json_t *objects, struct pk_writer *w);

/*
 * What pk_claims_pass() saw, for a caller running it on object arrays that
 * share most objects from run to run (arg: a zeroed struct, emptied with
 * pk_claims_seen_clear()): at each index, the pod or PodGroup found needing
 * no claim, held.  A pass skips an object that is the one held at its index
 * and asks any other, for a caller that changes none of those objects in
 * place (the offline runs' writers replace an object they share by a copy at
 * its first change); the result is the pass without it.
 */
struct pk_claims_seen {
	json_t **pods; /* n, NULL where none */
	size_t n;
};
void pk_claims_seen_clear(struct pk_claims_seen *seen);

int pk_standalone_start(struct pk_store *store, const struct pk_appliance_config *cfg,
			const struct pk_standalone_config *scfg, struct pk_appliance **ret,
			char *err, size_t errlen);

/*
 * Heartbeats (heartbeat.c): a node's Lease renewals, or (the older way) Node
 * writes the appliance did not make while the Node carries TOPO_ANN_HEARTBEAT
 * (and not PK_ANN_SIMULATED).  An existing Node with either, silent
 * for more than the grace period, is unreachable.
 */
struct ctl_heartbeats;
int ctl_heartbeats_new(struct ctl_heartbeats **ret);
void ctl_heartbeats_free(struct ctl_heartbeats *h);
bool ctl_node_monitored(const json_t *node);
/*
 * A Node write seen at now_ms; annotated: it carries the heartbeat annotation
 * (a sign of life).  ret_recovered true when it was unreachable.
 */
int ctl_heartbeat_seen(struct ctl_heartbeats *h, const char *name, bool annotated, int64_t now_ms,
		       bool *ret_recovered);
/* A write of the node's Lease (present), or its deletion (!present). */
int ctl_heartbeat_lease(struct ctl_heartbeats *h, const char *name, bool present, int64_t now_ms,
			bool *ret_recovered);
/* How many Lease writes of name were seen (the listing at start counts one). */
int64_t ctl_heartbeat_lease_writes(const struct ctl_heartbeats *h, const char *name);
/* Monitored and not declared unreachable. */
bool ctl_heartbeat_live(const struct ctl_heartbeats *h, const char *name);
/* The Node was deleted. */
void ctl_heartbeat_forget(struct ctl_heartbeats *h, const char *name);
/*
 * Names (a new JSON array of strings) of monitored nodes silent for more than
 * grace_ms at now_ms that were not reported before; they count as
 * unreachable until their next heartbeat.
 */
int ctl_heartbeats_expired(struct ctl_heartbeats *h, int64_t now_ms, int64_t grace_ms,
			   json_t **ret_names);
/* A Node podagent registered (TOPO_ANN_AGENT_OWNED, not simulated): it will
 * renew a Lease, so it is monitored from registration. */
bool ctl_node_agent_registered(const json_t *node);
/* Monitor name from now_ms on, before any heartbeat (a Node podagent registered). */
int ctl_heartbeat_expect(struct ctl_heartbeats *h, const char *name, int64_t now_ms);

/* Which silent nodes to declare lost, and how fast (ctl_heartbeats_lost()). */
struct ctl_loss_policy {
	int64_t grace_ms;
	double rate;		/* nodes per second */
	double secondary_rate;	/* in a partial disruption of a large cluster */
	double unhealthy_share; /* this share of monitored nodes silent (and > 2): a disruption */
	unsigned large_cluster; /* more monitored nodes than this: large */
	int64_t saturated_ms;	/* the server last could not serve every client (0: never) */
};
enum ctl_loss_state {
	CTL_LOSS_NORMAL,  /* silent nodes are declared lost at the rate */
	CTL_LOSS_PARTIAL, /* a large share silent: the secondary rate, or none in a small cluster */
	CTL_LOSS_FULL,	  /* every monitored node silent (more than two): none */
	CTL_LOSS_BLIND,	  /* the server was saturated within the grace: none */
};
struct ctl_loss_limiter {
	double tokens; /* a token bucket of depth 1 */
	int64_t last_ms;
};
struct ctl_loss_report {
	enum ctl_loss_state state;
	size_t monitored, silent, held; /* held: silent, not declared lost this time */
};
/*
 * The nodes to declare lost now (a new JSON array of names, oldest silence
 * first): monitored nodes whose last heartbeat, and the server's last
 * saturation, are both older than the grace period, within the limiter's
 * rate for the state the silent share puts the cluster in.  They count as
 * unreachable until their next heartbeat; the others stay candidates.
 */
int ctl_heartbeats_lost(struct ctl_heartbeats *h, const struct ctl_loss_policy *p,
			struct ctl_loss_limiter *lim, int64_t now_ms, json_t **ret_names,
			struct ctl_loss_report *ret_report);

#endif /* PODKERNEL_KERNEL_CONTROLLERS_H */

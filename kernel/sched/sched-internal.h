/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-internal.h — private structures of the scheduling core (kernel/sched/).
 *
 * The scheduler keeps its own copies of what it needs from the API objects:
 * nodes in a snapshot with dense indices and fixed-size resource vectors,
 * pods and groups in a workload forest keyed by "namespace/name".  Nothing
 * here borrows from a caller's jansson tree, so callers may free theirs.
 *
 * Only files of kernel/sched/ and its unit tests include this header.
 */
#ifndef PODKERNEL_KERNEL_SCHED_INTERNAL_H
#define PODKERNEL_KERNEL_SCHED_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/api/api.h"
#include "kernel/lib/map.h"
#include "kernel/sched/sched.h"
#include "topology/topology.h"

/* ---- small containers (util.c) ------------------------------------------ */

struct sc_vec {
	void **v;
	size_t n, cap;
};
int sc_vec_push(struct sc_vec *vec, void *item);
void sc_vec_remove(struct sc_vec *vec, const void *item); /* first match, keeps order */
void sc_vec_free(struct sc_vec *vec);

char *sc_strdup(const char *s);			/* NULL stays NULL */
char *sc_key(const char *ns, const char *name); /* "ns/name", malloc'ed */

/* Growable text buffer for messages and traces. */
struct sc_buf {
	char *s;
	size_t n, cap;
};
void sc_buf_printf(struct sc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sc_buf_free(struct sc_buf *b);

/* Why a pod cannot go on a node (filter.c). */
enum sc_misfit {
	SC_FIT = 0,
	SC_MISFIT_REMOVED,
	SC_MISFIT_UNSCHEDULABLE,
	SC_MISFIT_SELECTOR,
	SC_MISFIT_AFFINITY,
	SC_MISFIT_TAINT,
	SC_MISFIT_RESOURCES,
	/* the constraint plugins (plugin.h); victims' removal may fix these too */
	SC_MISFIT_POD_AFFINITY,
	SC_MISFIT_POD_ANTI_AFFINITY,
	SC_MISFIT_EXISTING_ANTI_AFFINITY,
	SC_MISFIT_SPREAD,
	SC_MISFIT_SPREAD_LABEL,
	SC_MISFIT_PORTS,
	SC_MISFIT_CLAIM, /* claims.c: a resource claim cannot be allocated or used there */
	SC_MISFIT_VOLUME_AFFINITY, /* a bound claim's volume: node affinity or zone */
	SC_MISFIT_VOLUME_BINDING,  /* no volume to bind or provision for a claim */
	SC_MISFIT_VOLUME_RWOP,	   /* a ReadWriteOncePod claim in use */
	SC_MISFIT_VOLUME_LIMIT,	   /* CSI attach limit */
	_SC_MISFIT_MAX,
};
#include "kernel/sched/plugin.h"

/* A group's PlacementFeasible status (feasible.c). */
enum sc_status {
	SC_SUCCESS = 0,
	SC_WAIT,
	SC_UNSCHEDULABLE,
	SC_UNRESOLVABLE, /* UnschedulableAndUnresolvable */
};
const char *sc_status_to_string(enum sc_status st);

/* ---- snapshot (snapshot.c, filter.c) ---------------------------------- */

#define SC_MAX_RES 16 /* distinct resource names in one scheduler */

/*
 * Sums of quantities wrap instead of overflowing (hostile inputs can bind any
 * number of huge pods to one node); every sum is computed the same way, so
 * reverts and the invariant checker stay exact.  Fit decisions use checked
 * additions.
 */
static inline int64_t sc_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t sc_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}
#define SC_RES_PODS 0 /* resource id of "pods": every pod uses 1000 milli */

struct sc_label {
	char *key, *value;
};

struct sc_taint {
	char *key, *value;
	enum pk_taint_effect effect;
};

struct sc_node {
	char *name;
	int index;
	bool removed;
	bool unschedulable;
	struct sc_label *labels;
	size_t nlabels;
	struct sc_taint *taints;
	size_t ntaints;
	int64_t alloc[SC_MAX_RES];
	int64_t used[SC_MAX_RES]; /* bound + assumed pods */
};

/* The domains of one topology key: node -> domain, per-domain free capacity. */
struct sc_part {
	char *key;
	int ndom;
	char **values;		     /* sorted label values, one per domain */
	int *node_dom;		     /* per node index, -1 when the node lacks the label */
	int *dom_size;		     /* nodes per domain */
	int64_t (*free)[SC_MAX_RES]; /* per domain: alloc - used over live nodes */
	int64_t *used_pods;	     /* per domain: pods bound or assumed (milli "pods") */
	int *order, *start;	     /* live nodes by domain: d is order[start[d]..start[d+1]) */
	int *scratch;		     /* per domain, all zero between uses (strategies' counters) */
	/*
	 * Capacity index (built on demand by sc_part_index): a segment tree over
	 * the domains in value order; node i (1 = root, leaves at tleaves + d)
	 * holds the per-resource minimum and maximum of free[] over its
	 * domains, and the minimum over the domains where it is positive, for
	 * the first tres resources.  Padding leaves hold min = pos = INT64_MAX,
	 * max = INT64_MIN.  Inner nodes always combine their children; a leaf
	 * equals free[] unless its domain is listed dirty.
	 */
	int tleaves, tres;
	int64_t *tree; /* 2 * tleaves nodes of 3 * tres: sc_tmin/sc_tmax/sc_tpos */
	/* Domains whose leaf lags free[] (charged since the last query), each
	 * listed once; sc_part_index refreshes them and their paths. */
	unsigned char *tdirty;
	int *tdlist, ntd;
};

enum sc_undo_op { SC_UNDO_ASSUME, SC_UNDO_REMOVE };
struct sc_undo {
	enum sc_undo_op op;
	struct sc_pod *pod;
	int node;
};

/*
 * An extension of the snapshot: state derived from placements that a module
 * above the snapshot keeps (slice.c's torus occupancy), registered once per
 * snapshot (pk_sched_new) so that the snapshot, the leaf loop and the result
 * reach it without naming it.  state is the extension's, NULL until it builds
 * it (sc_snapshot_ext_state); the snapshot frees it when node geometry may
 * have changed.
 */
struct sc_ctx;
struct sc_group;
struct sc_snap_ext_ops {
	const char *name;
	/* a pod was added to (sign 1) or taken from (-1) node; state is built */
	void (*charge)(void *state, int node, int sign);
	/* the invariant checker's step for a built state: 0 or -EUCLEAN with why */
	int (*check)(const struct sc_snapshot *snap, const void *state, char *why, size_t whylen);
	void (*free)(void *state);
	/* the placement of a slice-shape leaf (sc_place_leaf hands it over) */
	enum sc_status (*place_leaf)(struct sc_ctx *ctx, struct sc_group *g, const int *nodes,
				     size_t n);
	/* a bound pod's annotations (key, value pairs); false for none */
	bool (*bind_annotations)(const struct sc_pod *pod, char *coords, size_t clen, char *worker,
				 size_t wlen);
};
#define SC_SNAP_EXT_MAX 2

struct sc_snapshot {
	char *res_name[SC_MAX_RES];
	int nres;
	struct sc_node **nodes;
	size_t nnodes, cap;
	struct pk_map node_by_name;
	/* Node label keys and values, interned (pk_intern): a board's nodes share
	 * most of them; the map's value counts the users. */
	struct pk_map strings;
	struct sc_part **parts;
	size_t nparts;
	struct sc_undo *log; /* revert log: undone in exact reverse order */
	size_t nlog, caplog;
	struct sc_snap_ext {
		const struct sc_snap_ext_ops *ops;
		void *state;
	} ext[SC_SNAP_EXT_MAX]; /* registered extensions (slice.c) */
	int next;
	struct sc_terms terms; /* the constraint plugins' index (plugin.h) */
	void *ports;	       /* host ports in use per node (ports.c), or NULL */
	struct sc_dra *dra;    /* claims, devices and their use (claims.c), or NULL */
	/*
	 * Node capacity index (sc_snapshot_blocks): per block of SC_NODE_BLOCK
	 * consecutive node indices, the largest free amount of each resource
	 * over its nodes (-1 for a node with wrapped usage, which fits
	 * nothing), so a whole-cluster node scan skips a block where no node
	 * can hold a pod's requests.  A rise is taken at once; a block whose
	 * largest amount fell is marked dirty and recomputed when next asked;
	 * adding, changing or removing a node drops the index (nblocks 0),
	 * rebuilt on next use.  Per group of SC_NODE_SUPER blocks, smax bounds
	 * the blocks' from above (raised on every rise, tightened when a scan
	 * found none of its blocks holding a pod).
	 */
	int64_t (*bmax)[SC_MAX_RES];
	int64_t (*smax)[SC_MAX_RES];
	unsigned char *bdirty;
	size_t nblocks;
	int bnres;
	struct sc_vols *vols; /* volumes, claims, classes, CSI nodes (volumes.c), or NULL */
};
#define SC_NODE_BLOCK 64
#define SC_NODE_SUPER 16

int sc_snapshot_init(struct sc_snapshot *snap);
void sc_snapshot_fini(struct sc_snapshot *snap);
/* Resource id of a name, interning it; -E2BIG past SC_MAX_RES. */
int sc_res_id(struct sc_snapshot *snap, const char *name);
/* Add or replace a node (by name) from its view; keeps usage on replace. */
int sc_snapshot_set_node(struct sc_snapshot *snap, const struct pk_node *view);
int sc_snapshot_remove_node(struct sc_snapshot *snap, const char *name);
struct sc_node *sc_snapshot_node(const struct sc_snapshot *snap, const char *name);
const char *sc_node_label(const struct sc_node *node, const char *key);
/* The partition of nodes by a label key (built on first use). NULL on ENOMEM. */
struct sc_part *sc_snapshot_part(struct sc_snapshot *snap, const char *key);
void sc_snapshot_drop_parts(struct sc_snapshot *snap);
/* Register an extension (once per snapshot): 0, or -E2BIG past SC_SNAP_EXT_MAX. */
int sc_snapshot_register_ext(struct sc_snapshot *snap, const struct sc_snap_ext_ops *ops);
/* The state slot of a registered extension, NULL when ops is not registered. */
void **sc_snapshot_ext_state(struct sc_snapshot *snap, const struct sc_snap_ext_ops *ops);
/* A bound pod's annotations from the extensions; false for none. */
bool sc_snapshot_bind_annotations(const struct sc_snapshot *snap, const struct sc_pod *pod,
				  char *coords, size_t clen, char *worker, size_t wlen);
/* ports.c: the host ports index */
void sc_ports_free(struct sc_snapshot *snap);
/*
 * claims.c: ResourceClaims, DeviceClasses and ResourceSlices in (set) and
 * out (remove); the flag around a victim's simulated removal; the last
 * reason a pod's claims did not fit a node; a pod leaving for good (its
 * reservations go, a claim nobody reserves is deallocated).
 */
struct pk_sched;
struct pk_sched_result;
void sc_claims_free(struct sc_snapshot *snap);
int sc_claims_set(struct pk_sched *s, json_t *obj);
/* Give a PodGroup's member the claims state its group's claims need. */
int sc_claims_attach(struct sc_pod *pod);
int sc_claims_remove(struct pk_sched *s, enum pk_kind kind, const char *ns, const char *name);
void sc_claims_removing(struct sc_snapshot *snap, bool on);
const char *sc_claims_why(const struct sc_pod *pod);
void sc_claims_pod_gone(struct pk_sched *s, const struct sc_pod *pod);
int sc_claims_tell(struct pk_sched *s, struct pk_sched_result *res);
/*
 * A scope's nodes grouped by domain of a partition: the k-th domain present
 * is dom[k] (NULL: k itself), its nodes order[start[k] .. start[k + 1]), in
 * natural value order and, within a domain, in scope order.  Nodes without
 * the label are left out.
 */
struct sc_buckets {
	int nd;
	int *dom, *start, *order;
	bool owned; /* false: the partition's own whole-cluster lists */
};
/* Sort nodes[0..n) (NULL: 0 .. n-1) into new buckets; 0 or -ENOMEM. */
int sc_part_sort(struct sc_part *part, const int *nodes, size_t n, struct sc_buckets *ret);
/* Same, answered from the partition's lists when the scope is the whole cluster. */
int sc_buckets_of(const struct sc_snapshot *snap, struct sc_part *part, const int *nodes, size_t n,
		  struct sc_buckets *ret);
void sc_buckets_free(struct sc_buckets *b);

/* The capacity index of part, built or rebuilt when needed; -ENOMEM. */
int sc_part_index(const struct sc_snapshot *snap, struct sc_part *part);
/* Node i of part's index: per-resource minimum, maximum, positive minimum. */
static inline int64_t *sc_tmin(const struct sc_part *p, int i)
{
	return p->tree + (size_t)i * 3 * (size_t)p->tres;
}
static inline int64_t *sc_tmax(const struct sc_part *p, int i)
{
	return sc_tmin(p, i) + p->tres;
}
static inline int64_t *sc_tpos(const struct sc_part *p, int i)
{
	return sc_tmin(p, i) + 2 * p->tres;
}

/* Build the node capacity index if needed: 0, or -ENOMEM (then no block is skipped). */
int sc_snapshot_blocks(struct sc_snapshot *snap);
void sc_snapshot_drop_blocks(struct sc_snapshot *snap);
/*
 * The first block from b on (b * SC_NODE_BLOCK is a node index) where some
 * node may hold pod's requests of the resources rr[0..nrr), or nblocks: in
 * every block skipped, every node fails the resource test of sc_filter.
 * Needs a built index (sc_snapshot_blocks).
 */
size_t sc_next_block(struct sc_snapshot *snap, size_t b, const struct sc_pod *pod, const int *rr,
		     int nrr);

/* Permanent changes (a committed binding, a pod that went away). */
void sc_snapshot_bind(struct sc_snapshot *snap, struct sc_pod *pod, int node);
void sc_snapshot_unbind(struct sc_snapshot *snap, struct sc_pod *pod);
/* In-memory assumptions; each registers its revert in the log. */
int sc_snapshot_assume(struct sc_snapshot *snap, struct sc_pod *pod, int node);
int sc_snapshot_assume_removed(struct sc_snapshot *snap, struct sc_pod *pod);
static inline size_t sc_snapshot_mark(const struct sc_snapshot *snap)
{
	return snap->nlog;
}
/* Undo every assumption registered after mark, last first. */
void sc_snapshot_revert(struct sc_snapshot *snap, size_t mark);
/*
 * Make every outstanding assumption permanent (assumed pods become bound,
 * simulated removals are undone) and empty the log; usage is already there.
 */
void sc_snapshot_commit(struct sc_snapshot *snap);
/*
 * Invariant checker (hwloc_topology_check style): usage equals the sum of
 * bound and assumed pods, partitions agree with nodes, and, when quiet is
 * true, no assumption is outstanding.  0 or -EUCLEAN with why filled.
 */
int sc_snapshot_check(const struct sc_snapshot *snap, const struct sc_vec *pods, bool quiet,
		      char *why, size_t whylen);

const char *sc_misfit_to_string(enum sc_misfit m);
/* Static filters only (selector, affinity, taints, unschedulable). */
enum sc_misfit sc_filter_static(const struct sc_pod *pod, const struct sc_node *node);
/* Static filters and resource fit; *ret_res gets the short resource id. */
enum sc_misfit sc_filter(const struct sc_snapshot *snap, const struct sc_pod *pod,
			 const struct sc_node *node, int *ret_res);

/* ---- workload forest (forest.c) ------------------------------------------ */

struct sc_sel_req {
	char *key;
	bool field; /* matchFields: key is metadata.name, compared with the node's name */
	enum pk_selector_op op;
	char **values;
	size_t nvalues;
};
struct sc_sel_term {
	struct sc_sel_req *reqs;
	size_t nreqs;
};
/* filter.c: one node selector term; nodeSelector and required affinity; taints */
bool sc_node_matches_term(const struct sc_sel_term *term, const struct sc_node *node);
bool sc_node_selected(const struct sc_pod *pod, const struct sc_node *node);
bool sc_node_tolerated(const struct sc_pod *pod, const struct sc_node *node);

struct sc_toleration {
	char *key, *value;
	enum pk_toleration_op op;
	bool has_effect;
	enum pk_taint_effect effect;
};

/*
 * What the scheduler last told about an object, to write each change once:
 * a 64-bit FNV-1a fingerprint of status, reason and message (0: nothing
 * said yet), so checking a condition allocates nothing.
 */
struct sc_cond_memo {
	uint64_t fp;
	bool gated; /* the last thing said was a PreEnqueue wait (said once, cycle.c) */
};

struct sc_pod {
	char *key, *ns, *name;
	int64_t creation;	/* INT64_MIN: none */
	uint64_t seq;		/* arrival order */
	char *group_key;	/* "ns/podGroupName" or NULL */
	struct sc_group *group; /* leaf group (maybe a placeholder) or implicit */
	size_t apos;		/* index in the forest's all_pods */
	bool deleting;
	int node;	 /* bound node index, -1 pending or unknown node */
	char *node_name; /* spec.nodeName or NULL */
	int assumed;	 /* simulation: node index or -1 */
	bool sim_removed;
	bool preempted;
	int64_t req[SC_MAX_RES];
	struct sc_label *sel;
	size_t nsel;
	struct sc_sel_term *terms;
	size_t nterms;
	struct sc_toleration *tols;
	size_t ntols;
	bool has_prio;
	int32_t prio;
	char *prio_class;
	uint64_t fp;	 /* fingerprint of what scheduling reads (spec, timestamps) */
	char *why;	 /* last placement failure, built on demand (sc_pod_why) */
	bool misfit_set; /* misfit counts below describe the last failure */
	int misfit[_SC_MISFIT_MAX];
	int short_of[SC_MAX_RES];
	size_t scope_n;
	struct sc_cond_memo memo;
	/* TPU slice (slice.c): rank and chip position in the box of the last
	 * placement of its slice group; -1 when never placed in one. */
	int slice_worker;
	struct topo_coord slice_at;
	struct sc_cons *cons; /* placement constraints (plugin.h), NULL: none */
};

/* How a group's failure message is built, lazily: formatting is costly. */
enum sc_why { SC_WHY_TEXT = 0, SC_WHY_PRESIM, SC_WHY_LEAF, SC_WHY_POD };

struct sc_group {
	char *key, *ns, *name;
	bool present; /* the object was seen (else a placeholder) */
	bool composite;
	bool implicit; /* the one-pod root of a standalone pod */
	int64_t creation;
	uint64_t seq;
	char *parent_key;
	char *workload;
	enum pk_policy policy;
	int32_t min;
	enum pk_disruption disruption;
	char *topo_key;
	/* TPU slice: the slice-shape annotation (slice_bad: it does not parse) */
	bool has_slice, slice_bad;
	/* spec.resourceClaims: a CompositePodGroup's are refused (hierarchy.c); a
	 * PodGroup's (the object, claims_obj) are shared by its pods (claims.c),
	 * claims_gen changing whenever the object does (0: none) */
	bool has_claims;
	json_t *claims_obj;
	uint64_t claims_gen;
	struct topo_shape slice;
	bool has_prio;
	int32_t prio;
	char *prio_class;
	bool scheduled;		 /* InitiallyScheduled True seen or written */
	struct sc_group *parent; /* registered under this (may be a placeholder) */
	struct sc_vec children;	 /* struct sc_group * */
	struct sc_vec pods;	 /* struct sc_pod * */
	bool sorted;
	/* queue state (roots only) */
	bool is_root; /* in the forest's roots */
	bool done, dirty, parked_invalid;
	unsigned char qheap; /* SC_QUEUE_NONE, _ACTIVE or _BACKOFF */
	bool qtouched;	     /* listed in the queue's touched roots */
	size_t qpos;	     /* index in its heap */
	bool prio_valid;     /* prio_cache holds sc_root_priority() at prio_epoch */
	uint64_t prio_epoch;
	int32_t prio_cache;
	int attempts;
	int64_t backoff_until;
	bool gated; /* held back by PreEnqueue since gated_since */
	int64_t gated_since;
	uint64_t tried_gen;
	/* per-cycle evaluation record */
	uint64_t stamp;
	enum sc_status status;
	int S, R, U, UU, M;
	char *why; /* built on demand from why_kind (sc_group_why) */
	int why_kind;
	struct sc_pod *why_pod;
	struct sc_cond_memo memo;
	bool disrupted;
	int fit_dom; /* "fit": the domain of topo_key chosen by the last evaluation */
};

/*
 * The queue (queue.c): eligible roots in two binary heaps, active (by rank)
 * and backoff (by the end of their backoff); roots changed since the last
 * pick are listed in touched and placed at the next pick.  A root that is
 * not eligible (parked until its subtree or the cluster changes, or done)
 * is in neither heap, so picking costs O(log roots), not a scan.
 */
enum { SC_QUEUE_NONE, SC_QUEUE_ACTIVE, SC_QUEUE_BACKOFF };
struct sc_heap {
	struct sc_group **v;
	size_t n, cap;
};
struct sc_queue {
	struct sc_heap active, backoff;
	struct sc_vec touched;
	uint64_t gen_seen, epoch_seen;
	bool started;
};

struct sc_forest {
	/* key -> struct sc_group* (present or placeholder), one map per kind:
	 * [0] PodGroups, [1] CompositePodGroups (separate resources; the same
	 * name may be both) */
	struct pk_map groups[2];
	struct pk_map pods;	/* key -> struct sc_pod* */
	struct sc_vec all_pods; /* in no particular order: a removal moves the last pod */
	struct sc_vec all_groups;
	struct sc_vec roots; /* present parentless groups and implicit groups */
	uint64_t seq;
	uint64_t version; /* bumps on every add or remove */
	struct sc_queue queue;
	/* Groups ("P"/"C" + key) and pods (key) added or unlinked since the
	 * last report of unrooted hierarchies (cycle.c); malloc'ed strings. */
	struct sc_vec unrooted_groups, unrooted_pods;
};

/* ---- workload profile and stranding score (strand.c) --------------------- */

/* The node label naming a node's accelerator model (podagent publishes it). */
#define SC_MODEL_LABEL "accelerator.podkernel.dev/product"
#define SC_PROFILE_CLASSES 32 /* classes of accelerator pods kept */
#define SC_PROFILE_MODELS 4   /* accepted models a class names at most */

/* Accelerator pods of one resource, device count and set of accepted models. */
struct sc_profile_class {
	int res;	 /* the accelerator's resource id */
	int64_t devices; /* per pod (milli) */
	char *models[SC_PROFILE_MODELS];
	int nmodels;	   /* 0: any model */
	double weight;	   /* decayed count of its pods */
	double cpu, mem;   /* decayed sums of their requests (milli): / weight is the mean */
	double cpu2, mem2; /* decayed sums of their squares, for the spread */
};
/* The profile's classes that weigh, ready for scoring one root's pods. */
struct sc_strand {
	struct sc_strand_class {
		const struct sc_profile_class *c;
		double share;	       /* of the profile */
		double cpu[2], mem[2]; /* requests per pod: mean -/+ standard deviation (milli) */
		double inv_dev, inv_cpu[2], inv_mem[2]; /* their inverses (0 for 0) */
	} k[SC_PROFILE_CLASSES];
	int n;
	int cpu, mem; /* resource ids, -1 when unknown */
	int nres;
	/* Model pressure: the partition by model, and per resource r and model
	 * domain d, pressure[r * ndom + d] (NULL when no class names a model). */
	struct sc_part *models;
	const double *pressure;
};
struct sc_profile {
	struct sc_profile_class c[SC_PROFILE_CLASSES];
	int n;
	double total;	  /* sum of the weights */
	uint64_t seen;	  /* pods noted, CPU-only ones included */
	double *pressure; /* scoring buffer (sc_strand_prepare), pcap doubles */
	size_t pcap;
	struct sc_strand strand; /* prepared at seen == strand_seen, for nres resources */
	uint64_t strand_seen;
	int strand_nres;
};
/* A pod seen for the first time. */
void sc_profile_note(struct sc_profile *pr, const struct sc_snapshot *snap, const struct sc_pod *p);
void sc_profile_fini(struct sc_profile *pr);
/* Whether a resource is an accelerator (scarce): not pods, cpu, memory, storage, hugepages. */
bool sc_res_is_accelerator(const char *name);

/*
 * The classes that weigh, ready for scoring (rebuilt only when pods were
 * noted since), with the model pressure of the snapshot's free capacity now.
 * Owned by the profile, valid until the next call.
 */
const struct sc_strand *sc_strand_prepare(struct sc_profile *pr, struct sc_snapshot *snap);
/*
 * How much placing pod on node (free_: its free capacity now) raises the
 * devices the profile's classes could no longer use there (may be
 * negative); lower is better.
 */
double sc_strand_score(const struct sc_strand *st, const struct sc_node *node,
		       const struct sc_pod *pod, const int64_t *free_);

/* ---- the scheduler --------------------------------------------------------- */

struct sc_ctx; /* one cycle's evaluation context (cycle.c) */

/*
 * A placement strategy.  place_root evaluates a popped, valid hierarchy on
 * ctx's snapshot: it assumes pods (each assumption registering its revert in
 * the snapshot log), records per-group statuses, and returns the root's
 * PlacementFeasible status.  The assumptions it leaves are the placement; the
 * caller commits and reverts them.
 */
struct pk_placement_ops {
	const char *name;
	const char *description;
	enum sc_status (*place_root)(struct sc_ctx *ctx, struct sc_group *root);
	/*
	 * Bytes of the strategy's own state kept from cycle to cycle (caches),
	 * 0 for none: zeroed by pk_sched_new(), freed with the scheduler, found
	 * at s->ops_state while this strategy is the scheduler's.
	 */
	size_t state_size;
};

struct pk_sched {
	struct pk_sched_opts opts;
	const struct pk_placement_ops *ops;
	void *ops_state;     /* ops->state_size bytes, or NULL */
	char check_why[256]; /* the invariant checker's message when a cycle failed it */
	struct sc_snapshot snap;
	struct sc_forest forest;
	struct pk_map prio_classes; /* PriorityClass name -> malloc'ed int32_t value */
	char *default_class;
	int32_t default_prio;
	uint64_t gen;		 /* bumps when capacity may have grown (not on bindings) */
	uint64_t cycle;		 /* cycles run */
	bool forest_changed;	 /* objects came or went since the last unrooted report */
	uint64_t prio_epoch;	 /* bumps when priority classes change */
	struct sc_vec topo_keys; /* every topology key seen on a group (char *) */
	int *all_nodes;		 /* 0, 1, 2, ...: the whole cluster as a scope */
	size_t all_cap;
	/* Lowest priority of a bound pod (a lower bound; forest.c). */
	bool floor_valid;
	int32_t victim_floor;
	uint64_t floor_epoch;
	/* Gated roots whose pods are to be told why at a time: "C"/"P"/"I" (a pod's own root) +
	 * key, and the time (cycle.c). */
	struct sc_vec tell_keys;
	int64_t *tell_at;
	size_t tell_cap;
	size_t sample_next; /* fit: where the next sampled node scan starts (place_fit.c) */
	/* A cycle's assumed pod -> node pairs, reused from cycle to cycle. */
	struct sc_placement {
		struct sc_pod *pod;
		int node;
	} * pl;
	size_t pl_cap;
	struct sc_profile profile; /* the pods seen, for fit's stranding score */
};

/* The scope of every node index (0 .. nnodes-1); NULL on ENOMEM. */
const int *sc_all_nodes(struct pk_sched *s);

struct sc_ctx {
	struct pk_sched *s;
	struct sc_snapshot *snap;
	struct pk_sched_result *res;
	uint64_t stamp;
	int depth; /* trace indentation */
	bool tracing;
	size_t placed; /* pods newly assumed (whole root) */
	void *priv;    /* the running strategy's own state */
};

void sc_trace_line(struct sc_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Explain-trace line; the arguments are evaluated only while tracing. */
#define sc_trace(ctx, ...)                                                                         \
	do {                                                                                       \
		if ((ctx)->tracing)                                                                \
			sc_trace_line((ctx), __VA_ARGS__);                                         \
	} while (0)

/* Placement statistics (sched.h); the clock is read only when someone listens. */
double sc_stat_clock(const struct sc_ctx *ctx);
void sc_stat_line(struct sc_ctx *ctx, enum pk_sched_stat stat, double value, const char *root);
#define sc_stat(ctx, which, value)                                                                 \
	do {                                                                                       \
		if ((ctx)->s->opts.stat)                                                           \
			sc_stat_line((ctx), (which), (value), NULL);                               \
	} while (0)

/* forest.c */
void sc_forest_init(struct sc_forest *f);
void sc_forest_fini(struct sc_forest *f);
struct sc_group *sc_forest_group(struct sc_forest *f, const char *key, bool composite, bool create);
int sc_forest_add_group(struct sc_forest *f, const struct pk_group *view, bool scheduled);
int sc_forest_remove_group(struct sc_forest *f, const char *key, bool composite);
int sc_forest_add_pod(struct pk_sched *s, const struct pk_pod *view);
int sc_forest_remove_pod(struct pk_sched *s, const char *key);
void sc_group_sort(struct sc_group *g);
/*
 * The victim floor: a lower bound of the priorities of bound pods, so a
 * preemptor no bound pod ranks below is answered without looking at every
 * pod.  Bindings lower it; a group or priority-class change that may lower
 * a bound pod's priority makes it recomputed on the next question.
 */
void sc_victim_floor_note(struct pk_sched *s, const struct sc_pod *pod);
void sc_victim_floor_invalidate(struct pk_sched *s);
/* May any bound pod rank below prio?  Recomputes the floor when stale. */
bool sc_victim_floor_below(struct pk_sched *s, int32_t prio);
/* Walk up to the root; NULL when an ancestor is missing or on a cycle (why). */
struct sc_group *sc_group_root(struct sc_group *g, char *why, size_t whylen);
/* Mark g and its ancestors as changed; the top one is queued for placement. */
void sc_group_touch(struct sc_forest *f, struct sc_group *g);
const char *sc_group_kind(const struct sc_group *g);

/* queue.c: PreEnqueue and root ordering */
bool sc_group_admissible(const struct sc_group *g, int depth, struct sc_buf *why);
/* A gated pod that holds g back (a gang waits for all its members), or NULL. */
const struct sc_pod *sc_group_gated_pod(const struct sc_group *g, bool gang, int depth);
/* A pod's own priority (spec.priority, else a known spec.priorityClassName):
 * false when it has none and inherits its group's. */
bool sc_pod_explicit_priority(const struct pk_sched *s, const struct sc_pod *pod,
			      int32_t *ret_prio);
int32_t sc_pod_priority(const struct pk_sched *s, const struct sc_pod *pod);
int32_t sc_group_priority(const struct pk_sched *s, const struct sc_group *g, bool *ret_explicit);
int32_t sc_root_priority(const struct pk_sched *s, const struct sc_group *root);
/*
 * Best eligible root, or NULL; *ret_wait gets the earliest backoff end.  The
 * root returned leaves the queue; sc_queue_place() puts it back after its
 * cycle when it is still eligible.
 */
struct sc_group *sc_queue_pick(struct pk_sched *s, int64_t now, int64_t *ret_wait);
void sc_queue_place(struct pk_sched *s, struct sc_group *g, int64_t now);
/* g (changed) is placed at the next pick. */
void sc_queue_touched(struct sc_queue *q, struct sc_group *g);
/* g leaves the queue (no longer a root, or about to be freed). */
void sc_queue_forget(struct sc_queue *q, struct sc_group *g);
void sc_queue_fini(struct sc_queue *q);
void sc_queue_order(struct pk_sched *s, struct sc_vec *ret_roots); /* test helper */

/* ---- what every strategy uses (place_common.c) ------------------------------ */

static inline int sc_frac_cmp(int64_t a, int64_t b, int64_t c, int64_t d) /* a/b vs c/d */
{
	__int128 l = (__int128)a * d, r = (__int128)c * b;

	return l < r ? -1 : l > r;
}
bool sc_pod_pending(const struct sc_pod *p);
bool sc_pod_running(const struct sc_pod *p);
/* Record a group's evaluation (status, counts, how its message is built). */
void sc_record(struct sc_ctx *ctx, struct sc_group *g, enum sc_status st, int M, int S, int R,
	       int U, int UU, enum sc_why kind, struct sc_pod *pod, const char *why);
/* Failure messages, built on first use and cached. */
const char *sc_pod_why(const struct sc_snapshot *snap, struct sc_pod *pod);
const char *sc_group_why(const struct sc_snapshot *snap, struct sc_group *g);
/* No node of a scope of scope_n fits pod: keep the misfit counts for sc_pod_why. */
void sc_pod_set_misfits(struct sc_pod *pod, size_t scope_n, const int *counts, const int *short_of);
/* Domain of part holding every running pod of g's subtree: -2 none, -1 conflict. */
int sc_bound_domain(const struct sc_part *part, const struct sc_group *g, int depth, int dom);

/*
 * The leaf loop every strategy shares: the leaf's pending pods in order, each
 * on the node node() chooses (-1 with the pod's misfits set when none fits),
 * PlacementFeasible after every pod; minimum_only stops once minCount pods
 * run or are placed.  An infeasible leaf is reverted.  The evaluation is
 * recorded and traced; slice-shape leaves go to sc_slice_place_leaf.
 */
struct sc_leaf_pick {
	int (*node)(void *arg, struct sc_pod *pod, const int *nodes, size_t n);
	void *arg;
	bool minimum_only;
};
enum sc_status sc_place_leaf(struct sc_ctx *ctx, struct sc_group *g, const int *nodes, size_t n,
			     const struct sc_leaf_pick *pick);
/*
 * A composite's pre-simulation check: ret_adm[i] says whether child i is
 * admissible; the others are recorded UnschedulableAndUnresolvable and the
 * first of them is *ret_failed when that is still NULL.  Returns their count.
 */
int sc_admit_children(struct sc_ctx *ctx, struct sc_group *g, bool *ret_adm,
		      const struct sc_group **ret_failed);
/* Record a failed composite: "S of minGroupCount M child groups placed; <child>: why". */
void sc_record_composite_failure(struct sc_ctx *ctx, struct sc_group *g, enum sc_status st, int M,
				 int S, int R, int U, int UU, const struct sc_group *failed);

/*
 * slice.c: TPU slices.  A leaf with a slice-shape annotation places its pods
 * as one free box of hosts of one torus (every strategy's leaf placement
 * hands it over through the snapshot's extension).  The per-torus occupancy
 * index follows the snapshot: its charge() reports every pod added to or
 * taken from a node.
 */
int sc_slices_register(struct sc_snapshot *snap);
/* The index itself, built on first use; NULL on ENOMEM or when not registered. */
struct sc_slices *sc_snapshot_slices(struct sc_snapshot *snap);

/* feasible.c: PlacementFeasible */
int sc_group_min(const struct sc_group *g);
enum sc_status sc_feasible(int M, int S, int R, int U, int UU);
/*
 * The pre-simulation check of a leaf, shared by the strategies: counts its
 * running (S) and pending (R) pods; when the leaf can never reach its minimum
 * the failure is recorded and traced.  Returns sc_feasible() of the counts.
 */
enum sc_status sc_leaf_presim(struct sc_ctx *ctx, struct sc_group *g, int *ret_S, int *ret_R);

/* hierarchy.c: runtime validation; 0 or -EINVAL with the violation in why */
int sc_hierarchy_validate(const struct pk_sched *s, struct sc_group *root, char *why,
			  size_t whylen);

/* preempt.c */
int sc_preempt(struct sc_ctx *ctx, struct sc_group *root);

/* strategy.c */
extern const struct pk_placement_ops sc_kep_ops;
extern const struct pk_placement_ops sc_fit_ops;
/* Test-only: exhaustive search on small instances (not in the strategy table). */
extern const struct pk_placement_ops sc_exhaustive_ops;
const struct pk_placement_ops *sc_strategy_find(const char *name);
/* Remember a topology key in use (the fit strategy keeps their partitions). */
int sc_note_topo_key(struct pk_sched *s, const char *key);

/* result.c: actions */
int sc_result_condition(struct pk_sched_result *res, enum pk_kind kind, const char *ns,
			const char *name, const char *type, const char *status, const char *reason,
			const char *message);
/* A binding, with the annotations the snapshot's extensions give the pod. */
int sc_result_bind(struct pk_sched_result *res, const struct sc_snapshot *snap,
		   const struct sc_pod *pod, const char *node);
/* A claim's volume (spec.volumeName) or selected node (annotation). */
int sc_result_volume_claim(struct pk_sched_result *res, const char *ns, const char *name,
			   const char *volume, const char *node);
int sc_result_preempt(struct pk_sched_result *res, const struct sc_pod *pod);
/* A claim's new status (allocation, reservedFor; the result takes a reference). */
int sc_result_claim(struct pk_sched_result *res, const char *ns, const char *name, json_t *status);
/* claims.c: the claims a committed placement allocated or reserved, as actions. */
int sc_claims_commit(struct sc_ctx *ctx, const struct sc_placement *pl, size_t n);
/* Condition on a pod or group, written only when it differs from the last. */
int sc_emit_pod(struct sc_ctx *ctx, struct sc_pod *pod, const char *status, const char *reason,
		const char *message);
int sc_emit_group(struct sc_ctx *ctx, struct sc_group *g, const char *status, const char *reason,
		  const char *message);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-snapshot.h — the cluster as the scheduler sees it (snapshot.c): nodes
 * with dense indices and fixed-size resource vectors, partitions by topology
 * key with per-domain free capacity, the undo log of simulated placements, the
 * node capacity index, and the extensions that keep state in step with it
 * (slice.c) or the plugins (plugin.c).  The lowest layer of the core: it
 * calls no other file of kernel/sched/; what the layers above keep in step
 * with it they register (struct sc_snap_ext_ops, struct sc_snap_pod_ops).
 * Private to kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_SNAPSHOT_H
#define PODKERNEL_KERNEL_SCHED_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"
#include "kernel/lib/map.h"
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched.h"

/* after the containers, enum sc_misfit and struct pk_sched_result it uses */
#include "kernel/sched/plugin.h"

struct sc_pod;
struct sc_dra;
struct sc_snapshot;
struct sc_vols;

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
	struct sc_devs *devs;	  /* per-device ledgers (below), ndevs of them */
	int ndevs;
};

/*
 * Shares of devices.  An extended resource (a name with a domain:
 * "nvidia.com/gpu") counts devices in whole units, and a request with a
 * fraction (460m) is a share of one device: whole units take whole devices,
 * the fraction a part of one more.  A node whose allocatable of such a
 * resource is whole devices (at most SC_DEV_MAX) keeps, from the first
 * share charged on it, the amount each device has left (its ledger): a
 * share goes to the device it fits most tightly (an untouched one when no
 * partly used device holds it), a whole request to untouched devices.  A
 * node without a ledger has only whole devices free.  Charging and
 * discharging follow the undo log, so a reverted placement gives the share
 * back to its device (the pod remembers which: sc_pod.share_dev).
 */
#define SC_DEV_MAX 256
struct sc_devs {
	int res;
	int n;	       /* devices */
	int whole;     /* devices taken whole; they are untouched slots of free[] */
	int64_t *free; /* per device: milli its shares left (1000: untouched) */
};
/* The node's ledger of resource r, or NULL (only whole devices free). */
const struct sc_devs *sc_node_devs(const struct sc_node *n, int r);
/* Untouched devices of a ledger (neither shared nor taken whole). */
int sc_devs_untouched(const struct sc_devs *d);
/* The device a share of f milli goes to (tightest fit, else untouched), or -1. */
int sc_devs_pick(const int64_t *free_, int n, int untouched, int64_t f);
/* Whether the node's devices hold the pod's whole and fractional requests. */
bool sc_devices_fit(const struct sc_snapshot *snap, const struct sc_pod *pod,
		    const struct sc_node *n);

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

/*
 * Per-pod state above the snapshot that follows every change of usage (the
 * constraint plugins' and their term index's, plugin.c), registered once per
 * snapshot (sc_cons_register, pk_sched_new).  The data lives in the
 * snapshot (terms, ports, dra, vols below); the snapshot calls these and
 * nothing of the plugins by name.
 */
struct sc_snap_pod_ops {
	/* pod was added to (sign 1) or taken from (-1) node (snap->removing: a
	 * victim's simulated removal) */
	void (*charge)(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign);
	/* the partitions were dropped (a node came, went or changed labels) */
	void (*parts_dropped)(struct sc_snapshot *snap);
	/* the invariant checker's step: 0 or -EUCLEAN with why */
	int (*check)(const struct sc_snapshot *snap, char *why, size_t whylen);
	/* free the state (sc_snapshot_fini) */
	void (*fini)(struct sc_snapshot *snap);
};

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
	const struct sc_snap_pod_ops *pod_ops; /* registered per-pod hooks (plugin.c), or NULL */
	bool removing;	       /* a victim's simulated removal is being charged (assume_removed) */
	struct sc_terms terms; /* the constraint plugins' index (terms.c) */
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
	/*
	 * What the whole cluster has free of each resource: the sum over nodes
	 * of max(0, alloc - used), kept on every charge while valid, made again
	 * on demand after a node was added, changed or removed (with the
	 * index).  Wide, as memory in milli over many nodes passes INT64_MAX.
	 */
	__int128 free_sum[SC_MAX_RES];
	bool free_sum_valid;
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
/* Register the per-pod hooks (once per snapshot; a second call replaces them). */
void sc_snapshot_register_pod_ops(struct sc_snapshot *snap, const struct sc_snap_pod_ops *ops);
/* A bound pod's annotations from the extensions; false for none. */
bool sc_snapshot_bind_annotations(const struct sc_snapshot *snap, const struct sc_pod *pod,
				  char *coords, size_t clen, char *worker, size_t wlen);

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
/* What the cluster has free of resource r in all (free_sum, made when not valid). */
__int128 sc_snapshot_free_sum_make(struct sc_snapshot *snap, int r);
static inline __int128 sc_snapshot_free_sum(struct sc_snapshot *snap, int r)
{
	if (snap->free_sum_valid && r >= 0 && r < SC_MAX_RES)
		return snap->free_sum[r];
	return sc_snapshot_free_sum_make(snap, r);
}
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

#endif

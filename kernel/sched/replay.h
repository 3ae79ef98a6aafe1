/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.h — replay an arrival sequence of pods on a cluster and measure how
 * much of its accelerators gets allocated (the placement-quality yardstick
 * of `make bench`, and the comparison `podctl simulate` draws).
 *
 * A replay holds a scheduler with the cluster's nodes.  Pods arrive one at a
 * time and nothing departs: each arrival is scheduled to quiescence, on a
 * virtual clock that never advances, so a pod that fits nowhere stays
 * pending (capacity only shrinks, so it could never fit later).  Pods are
 * placed either by a scheduler strategy (through pk_sched_cycle, exactly as
 * the appliance places them) or by a caller's comparison policy: the replay
 * lists the nodes that pass the scheduler's own filters (selectors, node
 * affinity, taints, resources) with their free capacity, and the policy
 * picks one.  Either way the pod is decoded, filtered and accounted by the
 * same code, so rows of different policies compare placement alone.
 *
 * Lifecycle: pk_replay_new() -> pk_replay_add_node() (all nodes) ->
 * pk_replay_arrive() (the sequence) -> pk_replay_stats() -> pk_replay_free().
 * pk_replay_run() does it all for a whole sequence and arrival levels.
 */
#ifndef PODKERNEL_KERNEL_SCHED_REPLAY_H
#define PODKERNEL_KERNEL_SCHED_REPLAY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"

struct pk_replay;

/* What a comparison policy sees of one node that passes the filters. */
enum { PK_REPLAY_ACCEL, PK_REPLAY_CPU, PK_REPLAY_MEMORY, PK_REPLAY_DIMS };
struct pk_replay_node {
	const char *name;				     /* owned by the replay */
	int index;					     /* in the order the nodes were added */
	int64_t alloc[PK_REPLAY_DIMS], free[PK_REPLAY_DIMS]; /* milli-units */
	/*
	 * The accelerator's devices once a share is on the node (a request with
	 * a fraction is a share of one device): dev_free[0..ndev) is what the
	 * shares left of each device (milli; 1000: no share on it), and
	 * dev_untouched of the devices at 1000 are free (the others are taken
	 * whole).  ndev 0: the node's free accelerators are whole devices.
	 */
	const int64_t *dev_free;
	int ndev, dev_untouched;
};
/*
 * The device of dev_free[0..n) a share of f milli goes to: the one it fits
 * most tightly, else an untouched one (when untouched > 0), else -1.  The
 * replay's own rule, for a policy that looks ahead.
 */
int pk_replay_share_device(const int64_t *dev_free, int n, int untouched, int64_t f);
/*
 * Choose among the n candidates (node order) for a pod requesting req
 * (milli-units, by PK_REPLAY_*): an index into cand, or -1 to leave it
 * pending.
 */
typedef int (*pk_replay_pick_fn)(void *arg, const struct pk_replay_node *cand, size_t n,
				 const int64_t *req);

struct pk_replay_stats {
	int64_t total;	   /* accelerators of the cluster (milli) */
	int64_t requested; /* requested by the pods arrived so far (milli) */
	int64_t allocated; /* held by bound pods (milli) */
	/*
	 * Of the free accelerators, those left on devices that shares use in
	 * part (milli): what only a share fits.  The rest of the free ones are
	 * whole devices (where the scheduler keeps a ledger of each device:
	 * sched-snapshot.h, struct sc_devs).
	 */
	int64_t parts;
	size_t arrived, bound;
};
/* Called as each arrival level is reached: its index and the stats then. */
typedef void (*pk_replay_level_fn)(void *arg, size_t level, const struct pk_replay_stats *st);

struct pk_replay_opts {
	const char *strategy;	/* scheduler strategy when pick is NULL (NULL: the default) */
	const char *resource;	/* the accelerator counted, e.g. "nvidia.com/gpu" (required) */
	pk_replay_pick_fn pick; /* a comparison policy instead of a strategy, or NULL */
	void *pick_arg;
	pk_replay_level_fn on_level; /* pk_replay_feed and pk_replay_levels_end, or NULL */
	void *level_arg;
};

/* -EINVAL without a resource, -ENOENT for an unknown strategy, -ENOMEM. */
int pk_replay_new(const struct pk_replay_opts *opts, struct pk_replay **ret);
void pk_replay_free(struct pk_replay *r);
/* A Node object (only read); decoding errors go to errs (-EINVAL). */
int pk_replay_add_node(struct pk_replay *r, json_t *node, struct pk_errors *errs);
/*
 * One Pod object (only read) arrives and is scheduled; *ret_bound (may be
 * NULL) says whether it was bound.  -EEXIST for a pod name already seen.
 */
int pk_replay_arrive(struct pk_replay *r, json_t *pod, struct pk_errors *errs, bool *ret_bound);
void pk_replay_stats(const struct pk_replay *r, struct pk_replay_stats *ret);

/*
 * Replay pods (an array, in arrival order) on nodes (an array) and write,
 * for each of the nlevels arrival levels (ascending fractions of the
 * cluster's accelerators, e.g. 1.0, 1.1, 1.3), the allocated fraction once
 * the pods arrived request at least that much: ret_alloc[i].  A level the
 * sequence never reaches gets the fraction after the last pod.  Other
 * objects in pods (PodGroups, CompositePodGroups, PriorityClasses) are
 * added where they stand, so a gang arrives as its group and then its pods
 * (strategy mode only: a comparison policy refuses groups, -EINVAL).
 * `podctl simulate --levels` and bench_quality's rows are this call.
 */
int pk_replay_run(const struct pk_replay_opts *opts, json_t *nodes, json_t *pods,
		  const double *levels, size_t nlevels, double *ret_alloc, struct pk_errors *errs);
/*
 * pk_replay_run's step, for a caller that makes the sequence as it goes (a
 * simulator's trace): one object of the sequence (a pod arrives, anything
 * else is added), then the levels it reached are written from ret_alloc[*next]
 * on; nothing once every level is reached.  pk_replay_levels_end gives the
 * levels never reached the fraction after the last pod.
 */
int pk_replay_feed(struct pk_replay *r, json_t *obj, const double *levels, size_t nlevels,
		   size_t *next, double *ret_alloc, struct pk_errors *errs);
void pk_replay_levels_end(const struct pk_replay *r, size_t nlevels, size_t *next,
			  double *ret_alloc);

#endif /* PODKERNEL_KERNEL_SCHED_REPLAY_H */

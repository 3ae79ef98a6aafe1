/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-core.h — the scheduler object (sched.c) and one cycle's
 * evaluation context (cycle.c): the snapshot, the forest and the profile it
 * owns, the placement strategy's ops, and what the context gives every
 * strategy (ctx.c): the explain trace, the placement statistics and the
 * whole-cluster scope.  Private to kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_CORE_H
#define PODKERNEL_KERNEL_SCHED_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/map.h"
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"
#include "kernel/sched/sched-strand.h"
#include "kernel/sched/sched.h"

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
	uint64_t gen_cap;	 /* of those, the bumps that only freed capacity (queue.c) */
	uint64_t cycle;		 /* cycles run */
	bool forest_changed;	 /* objects came or went since the last unrooted report */
	uint64_t prio_epoch;	 /* bumps when priority classes change */
	struct sc_vec topo_keys; /* every topology key seen on a group (char *) */
	/* a kept scheduler's (pk_sched_run_kept): its run's writer's index of the objects */
	struct pk_writer_memory_index *windex;
	/* a carried scheduler's (carry.c): the kind and key of each object its last carry
	 * walked, by address */
	struct sc_carry_memo *carry_memo;
	int *all_nodes; /* 0, 1, 2, ...: the whole cluster as a scope */
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
	bool pod_res; /* a pod brought a resource name first (its id follows pod order) */
};

/*
 * carry.c: feed s, which holds held (an earlier run's objects), what differs
 * in objects[0..n), so that it holds them as a new scheduler would for a
 * run that binds every pod without preemption; -ESTALE: it cannot (build a
 * new one), and s is to be freed.
 */
int sc_carry(struct pk_sched *s, const json_t *held, const json_t *objects, size_t n,
	     struct pk_errors *errs);
/* Whether obj is an unbound pod of another scheduler, which no run adds (offline.c). */
bool sc_other_scheduler(const json_t *obj);
/*
 * A carried scheduler's writer index (offline.c), of the objects it held, made
 * that of the new objects[0..n): gone out, came in (carry.c's diff), with
 * their kinds (pk_kind_of(), read by the carry); gone NULL: it cannot
 * follow, and is dropped.
 */
void sc_carry_index(struct pk_sched *s, const json_t *gone, const json_t *came, size_t n,
		    const enum pk_kind *kinds);
/* Free a carry's memo (carry.c; NULL: nothing). */
void sc_carry_memo_free(struct sc_carry_memo *m);

/* The scope of every node index (0 .. nnodes-1); NULL on ENOMEM. */
const int *sc_all_nodes(struct pk_sched *s); /* ctx.c */

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

/* ctx.c */
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

#endif

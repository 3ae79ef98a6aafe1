/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-place.h — what every placement strategy uses (place_common.c, above
 * feasible.c's PlacementFeasible, which it applies), preemption (preempt.c)
 * and the strategies themselves (strategy.c).  Private to kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_PLACE_H
#define PODKERNEL_KERNEL_SCHED_PLACE_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/sched/sched-core.h"

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
/* Pending pods of g's subtree. */
size_t sc_count_pending(const struct sc_group *g, int depth);
/*
 * Repair in the same domain: a group placed before (its home, remembered
 * from its last committed placement or from the annotation
 * scheduling.podkernel.dev/home-domain) whose subtree has no running pod
 * left (bdom -2: a lost node, a drain, its whole disruption unit evicted)
 * tries its home first and keeps it when every pending pod fits there;
 * otherwise it is placed whole wherever the strategy chooses.  The home's
 * bucket among b (-1: none, not in scope, or pods still run).
 */
int sc_home_bucket(const struct sc_part *part, const struct sc_buckets *b, const struct sc_group *g,
		   int bdom);
/* Note this cycle's domain value for g and whether it repaired g (cycle.c reports it). */
void sc_note_pick(struct sc_ctx *ctx, struct sc_group *g, const char *value, int bdom,
		  bool home_chosen);

/*
 * The leaf loop every strategy shares: the leaf's pending pods in order, each
 * on the node node() chooses (-1 with the pod's misfits set when none fits),
 * PlacementFeasible after every pod; minimum_only stops once minCount pods
 * run or are placed.  An infeasible leaf is reverted.  The evaluation is
 * recorded and traced; slice-shape leaves go to the snapshot's extension
 * that places them (slice.c).
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
 * The pre-simulation check of a leaf, shared by the strategies: counts its
 * running (S) and pending (R) pods; when the leaf can never reach its minimum
 * the failure is recorded and traced.  Returns sc_feasible() of the counts.
 */
enum sc_status sc_leaf_presim(struct sc_ctx *ctx, struct sc_group *g, int *ret_S, int *ret_R);

/*
 * feasible.c: PlacementFeasible (below place_common.c; calls nothing of the
 * core).  The letters are KEP-6012's, counted over a group's children (its
 * pods for a leaf, its child groups for a composite):
 *   M   the minimum the group needs (minCount, minGroupCount; 1 for a basic group)
 *   S   children placed (Success)
 *   R   children not tried yet that may still be admissible (the rest)
 *   U   children Unschedulable (preemption may help)
 *   UU  children UnschedulableAndUnresolvable (nothing in this cycle helps)
 */
int sc_group_min(const struct sc_group *g);
enum sc_status sc_feasible(int M, int S, int R, int U, int UU);

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

#endif

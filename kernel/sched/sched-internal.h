/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-internal.h — every private header of the scheduling core at once,
 * for the unit tests (tests/kernel/sched/) and the benches, which reach into
 * the snapshot, the forest and the strategies.  The files of kernel/sched/
 * include only the headers they use:
 *
 *   sched-common.h    containers, resource arithmetic, misfit and status
 *   sched-snapshot.h  the cluster: nodes, partitions, undo log, extensions
 *   sched-filter.h    whether a pod may go on a node
 *   sched-forest.h    pods, groups, the forest, the queue, the victim floor
 *   sched-strand.h    the workload profile and the stranding score
 *   sched-result.h    the actions of a cycle's result
 *   sched-core.h      the scheduler object and a cycle's context
 *   sched-place.h     what the strategies share, preemption, the strategies
 *   sched-slice.h     TPU slices: the torus occupancy index
 *
 * The files call each other without cycles: lowest first, each calls only
 * files on its own line or below (util.c and ctx.c are under all of them):
 *
 *   snapshot.c, feasible.c           the cluster; the PlacementFeasible rule
 *   terms.c, filter.c, result.c,     label selectors and the term index, the
 *   strand.c                         static filters, result actions, profile
 *   the plugins (claims.c, ...)      plugin.h's ops tables
 *   plugin.c                         the plugin table, sc_filter()
 *   queue.c, forest.c, hierarchy.c   the workload forest and its queue
 *   place_common.c                   what the strategies share
 *   place_*.c, slice.c, preempt.c    the strategies, slices, preemption
 *   fingerprint.c                    what scheduling reads of an object
 *   strategy.c, sched.c, cycle.c     the strategy table, the object, a cycle
 *   round.c                          a round of cycles (the one driver)
 *   offline.c, replay.c              what runs rounds: podctl, replays
 *
 * Where a lower file must reach state kept above it, the upper one
 * registers: slice.c's extension (struct sc_snap_ext_ops) and the plugins'
 * hooks (struct sc_snap_pod_ops, sc_cons_register) with the snapshot, the
 * term index's owns callback (interpod.c).
 */
#ifndef PODKERNEL_KERNEL_SCHED_INTERNAL_H
#define PODKERNEL_KERNEL_SCHED_INTERNAL_H

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-result.h"
#include "kernel/sched/sched-slice.h"
#include "kernel/sched/sched-snapshot.h"
#include "kernel/sched/sched-strand.h"

#endif

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
 *   sched-claims.h    ResourceClaims as the rest of the core sees them
 *   sched-result.h    the actions of a cycle's result
 *   sched-core.h      the scheduler object and a cycle's context
 *   sched-place.h     what the strategies share, preemption, the strategies
 *   sched-slice.h     TPU slices: the torus occupancy index
 */
#ifndef PODKERNEL_KERNEL_SCHED_INTERNAL_H
#define PODKERNEL_KERNEL_SCHED_INTERNAL_H

#include "kernel/sched/sched-claims.h"
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

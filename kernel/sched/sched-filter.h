/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-filter.h — whether a pod may go on a node (filter.c): the static
 * filters (selector, affinity, taints, unschedulable), which the constraint
 * plugins use too, and the names of the reasons it may not.  The whole
 * filter, sc_filter() (plugins and resource fit too), is plugin.c's, above
 * the plugins (plugin.h).  Private to kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_FILTER_H
#define PODKERNEL_KERNEL_SCHED_FILTER_H

#include <stdbool.h>

#include "kernel/sched/sched-common.h"

struct sc_node;
struct sc_pod;
struct sc_sel_term;

const char *sc_misfit_to_string(enum sc_misfit m);
/* Static filters only (selector, affinity, taints, unschedulable). */
enum sc_misfit sc_filter_static(const struct sc_pod *pod, const struct sc_node *node);
/* One node selector term; nodeSelector and required affinity; taints. */
bool sc_node_matches_term(const struct sc_sel_term *term, const struct sc_node *node);
bool sc_node_selected(const struct sc_pod *pod, const struct sc_node *node);
bool sc_node_tolerated(const struct sc_pod *pod, const struct sc_node *node);

#endif

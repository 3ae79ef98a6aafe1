/* SPDX-License-Identifier: Apache-2.0 */
/*
 * feasible.c — PlacementFeasible, identical at every level of a hierarchy.
 *
 * With M the required minimum (minCount of a leaf, minGroupCount of a
 * composite), S the children placed with Success, R the untried children that
 * may still be admissible, U the Unschedulable ones and UU the Unschedulable-
 * AndUnresolvable ones:  S >= M Success;  S+R >= M Wait;  S+R+U >= M
 * Unschedulable (preemption may help);  otherwise UnschedulableAndUnresolvable.
 * A leaf's children are its pods and a failed pod always counts in U.
 * Basic groups need one child when they have any (M = 1), none otherwise.
 *
 * The rule and the status names only: this file calls no other of
 * kernel/sched/; the strategies' shared code (place_common.c) applies it and
 * records the outcome.
 */
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"

static const char *const status_names[] = {
    [SC_SUCCESS] = "Success",
    [SC_WAIT] = "Wait",
    [SC_UNSCHEDULABLE] = "Unschedulable",
    [SC_UNRESOLVABLE] = "UnschedulableAndUnresolvable",
};

const char *sc_status_to_string(enum sc_status st)
{
	return st <= SC_UNRESOLVABLE ? status_names[st] : "unknown";
}

int sc_group_min(const struct sc_group *g)
{
	if (g->implicit)
		return 1;
	if (g->spec.policy == PK_POLICY_GANG) /* gated members count toward minCount */
		return g->spec.min > g->gated ? g->spec.min - g->gated : 0;
	return (g->composite ? g->children.n : g->pods.n) > 0 ? 1 : 0;
}

enum sc_status sc_feasible(int M, int S, int R, int U, int UU)
{
	(void)UU; /* UU children only ever subtract from what is reachable */
	if (S >= M)
		return SC_SUCCESS;
	if (S + R >= M)
		return SC_WAIT;
	if (S + R + U >= M)
		return SC_UNSCHEDULABLE;
	return SC_UNRESOLVABLE;
}

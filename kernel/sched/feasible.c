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
 */
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-snapshot.h"

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
	if (g->spec.policy == PK_POLICY_GANG)
		return g->spec.min > 0 ? g->spec.min : 0;
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

enum sc_status sc_leaf_presim(struct sc_ctx *ctx, struct sc_group *g, int *ret_S, int *ret_R)
{
	int M = sc_group_min(g), S = 0, R = 0, UU = 0;
	enum sc_status st;
	struct sc_pod *refused = NULL;

	for (size_t i = 0; i < g->pods.n; i++) {
		struct sc_pod *p = g->pods.v[i];

		if (sc_pod_running(p)) {
			S++;
		} else if (sc_pod_pending(p)) {
			R++;
		} else if (sc_cons_refusal(p) && p->node < 0 && !p->node_name && !p->deleting) {
			UU++; /* a field not implemented or not parsed, or a claim held */
			if (!refused)
				refused = p;
		}
	}
	st = sc_feasible(M, S, R, 0, UU);
	if (st >= SC_UNSCHEDULABLE && refused) {
		st = SC_UNRESOLVABLE;
		sc_record(ctx, g, st, M, S, R, 0, UU, SC_WHY_POD, refused, NULL);
		sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=0 UU=%d -> %s (%s)", sc_group_kind(g),
			 g->key, M, S, R, UU, sc_status_to_string(st), sc_cons_refusal(refused));
	} else if (st >= SC_UNSCHEDULABLE) {
		sc_record(ctx, g, st, M, S, R, 0, 0, SC_WHY_PRESIM, NULL, NULL);
		sc_trace(ctx, "%s %s: M=%d S=%d R=%d U=0 UU=0 -> %s (pre-simulation: %s)",
			 sc_group_kind(g), g->key, M, S, R, sc_status_to_string(st),
			 ctx->tracing ? sc_group_why(ctx->snap, g) : "");
	}
	*ret_S = S;
	*ret_R = R;
	return st;
}

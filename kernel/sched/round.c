/* SPDX-License-Identifier: Apache-2.0 */
/*
 * round.c — a round of scheduling cycles, the one driver of the cycles.
 *
 * The scheduling loop (kernel/appliance/), podctl schedule (offline.c) and
 * the simulator (kernel/sim/) all run cycles the same way: one after the
 * other until a cycle finds nothing eligible, each cycle's actions handed
 * to the caller before the next cycle runs (its own copy of the cluster
 * must hold them: a bound pod is bound there too).  They differ only in
 * what they do with the actions (write them as a batch, set them on their
 * objects, replay them on a simulated cluster), in their clock (the loop's
 * is real time, the others' virtual) and in when a round must end early
 * (the loop writes a preemption's evictions before anything else and
 * stops when asked to): pk_sched_round_ops says which.
 */
#include <errno.h>

#include "kernel/sched/sched.h"

int pk_sched_round(struct pk_sched *s, int64_t now_ms, const struct pk_sched_round_ops *ops,
		   void *arg, struct pk_sched_round *ret)
{
	struct pk_sched_round round = {0};
	int r = 0;

	if (!s || !ops || !ops->result || !ret)
		return -EINVAL;
	while (!ops->max_cycles || round.cycles < ops->max_cycles) {
		struct pk_sched_result *res = NULL;
		int64_t now = now_ms;
		bool idle;

		if (ops->cycle_begins && !ops->cycle_begins(arg, &now))
			break;
		if ((r = pk_sched_cycle(s, now, &res)) < 0)
			break;
		round.cycles++;
		r = ops->result(arg, res, now);
		idle = res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED;
		if (ops->until_quiet && res->nactions)
			idle = false;
		round.idle = idle;
		round.has_retry = idle && res->has_retry;
		round.retry_at_ms = round.has_retry ? res->retry_at_ms : 0;
		pk_sched_result_free(res);
		if (r != 0 || idle)
			break;
	}
	*ret = round;
	return r < 0 ? r : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classic.h — what the placement-quality benchmarks' classic policies share
 * (bench_quality, bench_openb): first-fit, and the share of each resource a
 * node would keep free, which best-fit and worst-fit rank by.  They are
 * yardsticks of the benchmarks, never part of the product.
 */
#ifndef PODKERNEL_BENCH_CLASSIC_H
#define PODKERNEL_BENCH_CLASSIC_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/sched/replay.h"

/* The first node the scheduler's filters accept, in node order. */
static inline int classic_first_fit(void *arg, const struct pk_replay_node *cand, size_t n,
				    const int64_t *req)
{
	(void)arg, (void)cand, (void)n, (void)req;
	return 0;
}

/* Sum over the node's resources of the fraction it would keep free. */
static inline double classic_kept(const struct pk_replay_node *c, const int64_t *req)
{
	double s = 0;

	for (int d = 0; d < PK_REPLAY_DIMS; d++)
		if (c->alloc[d] > 0)
			s += (double)(c->free[d] - req[d]) / (double)c->alloc[d];
	return s;
}

#endif

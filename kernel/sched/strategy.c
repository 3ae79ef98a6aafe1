/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strategy.c — the table of placement strategies.  A strategy is a struct
 * pk_placement_ops in its own file; adding one is that file plus one line
 * here.  The first entry is the default (the best available).  The
 * exhaustive oracle (place_exhaustive.c) is found by name but not listed: it
 * is for tests and benchmarks on small instances only.
 */
#include <string.h>

#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-place.h"

static const struct pk_placement_ops *const strategies[] = {
    &sc_fit_ops,
    &sc_kep_ops,
};

#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

size_t pk_sched_strategy_count(void)
{
	return NSTRATEGIES;
}

const char *pk_sched_strategy_name(size_t i)
{
	return i < NSTRATEGIES ? strategies[i]->name : NULL;
}

const struct pk_placement_ops *sc_strategy_find(const char *name)
{
	if (!name || !*name)
		return strategies[0];
	for (size_t i = 0; i < NSTRATEGIES; i++)
		if (strcmp(strategies[i]->name, name) == 0)
			return strategies[i];
	if (strcmp(name, sc_exhaustive_ops.name) == 0)
		return &sc_exhaustive_ops;
	return NULL;
}

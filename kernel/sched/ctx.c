/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctx.c — what a cycle's evaluation context (struct sc_ctx) gives every
 * strategy, kept apart from the cycle itself so that the strategies,
 * preemption and the leaf loop do not call back into cycle.c or sched.c:
 * the explain trace (indented lines to opts.explain and opts.trace, built
 * only while someone listens), the placement statistics (the clock read
 * only when opts.stat is set), and the whole cluster as a scope (node
 * indices 0 .. nnodes-1, grown with the snapshot and reused).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/sched/sched-core.h"

double sc_stat_clock(const struct sc_ctx *ctx)
{
	struct timespec ts;

	if (!ctx->s->opts.stat)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sc_stat_line(struct sc_ctx *ctx, enum pk_sched_stat stat, double value, const char *root)
{
	const struct pk_sched_opts *o = &ctx->s->opts;

	if (o->stat)
		o->stat(o->stat_arg, stat, value, root);
}

void sc_trace_line(struct sc_ctx *ctx, const char *fmt, ...)
{
	const struct pk_sched_opts *o = &ctx->s->opts;
	char line[1024];
	int ind = ctx->depth * 2;
	va_list ap;

	if (!ctx->tracing)
		return;
	if (ind > 64)
		ind = 64;
	memset(line, ' ', (size_t)ind);
	va_start(ap, fmt);
	vsnprintf(line + ind, sizeof(line) - (size_t)ind, fmt, ap);
	va_end(ap);
	if (o->explain)
		fprintf(o->explain, "%s\n", line);
	if (o->trace)
		o->trace(o->trace_arg, line);
}

const int *sc_all_nodes(struct pk_sched *s)
{
	size_t n = s->snap.nnodes;

	if (n + 1 > s->all_cap) {
		size_t cap = (n + 1) * 2;
		int *v = realloc(s->all_nodes, cap * sizeof(int));

		if (!v)
			return NULL;
		for (size_t i = s->all_cap; i < cap; i++)
			v[i] = (int)i;
		s->all_nodes = v;
		s->all_cap = cap;
	}
	return s->all_nodes;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched-common.h — what every file of the scheduling core uses: the small
 * containers and text buffer (util.c), resource arithmetic, node labels, and
 * the two verdicts everything passes around (why a pod misfits a node, a
 * group's PlacementFeasible status).  Private to kernel/sched/.
 */
#ifndef PODKERNEL_KERNEL_SCHED_COMMON_H
#define PODKERNEL_KERNEL_SCHED_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sc_vec {
	void **v;
	size_t n, cap;
};
int sc_vec_push(struct sc_vec *vec, void *item);
void sc_vec_remove(struct sc_vec *vec, const void *item); /* first match, keeps order */
void sc_vec_free(struct sc_vec *vec);

char *sc_strdup(const char *s);			/* NULL stays NULL */
char *sc_key(const char *ns, const char *name); /* "ns/name", malloc'ed */

/* Growable text buffer for messages and traces. */
struct sc_buf {
	char *s;
	size_t n, cap;
};
void sc_buf_printf(struct sc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sc_buf_free(struct sc_buf *b);

/* Why a pod cannot go on a node (filter.c). */
enum sc_misfit {
	SC_FIT = 0,
	SC_MISFIT_REMOVED,
	SC_MISFIT_UNSCHEDULABLE,
	SC_MISFIT_SELECTOR,
	SC_MISFIT_AFFINITY,
	SC_MISFIT_TAINT,
	SC_MISFIT_RESOURCES,
	/* the constraint plugins (plugin.h); victims' removal may fix these too */
	SC_MISFIT_POD_AFFINITY,
	SC_MISFIT_POD_ANTI_AFFINITY,
	SC_MISFIT_EXISTING_ANTI_AFFINITY,
	SC_MISFIT_SPREAD,
	SC_MISFIT_SPREAD_LABEL,
	SC_MISFIT_PORTS,
	SC_MISFIT_CLAIM, /* claims.c: a resource claim cannot be allocated or used there */
	SC_MISFIT_VOLUME_AFFINITY, /* a bound claim's volume: node affinity or zone */
	SC_MISFIT_VOLUME_BINDING,  /* no volume to bind or provision for a claim */
	SC_MISFIT_VOLUME_RWOP,	   /* a ReadWriteOncePod claim in use */
	SC_MISFIT_VOLUME_LIMIT,	   /* CSI attach limit */
	_SC_MISFIT_MAX,
};

/* A group's PlacementFeasible status (feasible.c). */
enum sc_status {
	SC_SUCCESS = 0,
	SC_WAIT,
	SC_UNSCHEDULABLE,
	SC_UNRESOLVABLE, /* UnschedulableAndUnresolvable */
};
const char *sc_status_to_string(enum sc_status st);

#define SC_MAX_RES 16 /* distinct resource names in one scheduler */

/*
 * Sums of quantities wrap instead of overflowing (hostile inputs can bind any
 * number of huge pods to one node); every sum is computed the same way, so
 * reverts and the invariant checker stay exact.  Fit decisions use checked
 * additions.
 */
static inline int64_t sc_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t sc_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}
#define SC_RES_PODS 0 /* resource id of "pods": every pod uses 1000 milli */

struct sc_label {
	char *key, *value;
};

/* a/b vs c/d, exact */
static inline int sc_frac_cmp(int64_t a, int64_t b, int64_t c, int64_t d)
{
	__int128 l = (__int128)a * d, r = (__int128)c * b;

	return l < r ? -1 : l > r;
}

#endif

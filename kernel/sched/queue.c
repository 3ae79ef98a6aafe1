/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.c — which root is scheduled next, and whether it may be (PreEnqueue).
 *
 * The queue holds only roots: root CompositePodGroups, standalone PodGroups
 * and standalone pods (the forest's roots vector).  A root is eligible when
 * it has pending work, something relevant changed since its last attempt
 * (its own subtree, or for capacity failures the cluster's generation) and
 * its backoff has expired.  Among eligible roots the highest priority wins,
 * then the oldest creationTimestamp (then name), then arrival order.  Scanning the roots
 * keeps the order exact under updates without a re-keyed heap; roots are few
 * compared with pods.
 *
 * PreEnqueue (sc_group_admissible): a leaf is admissible when its pending or
 * running pods reach minCount; a composite when its admissible children reach
 * minGroupCount.  Basic groups need one pod or one admissible child.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/internal.h"

#define SC_DEPTH_MAX 64

static int count_live_pods(const struct sc_group *g)
{
	int n = 0;

	for (size_t i = 0; i < g->pods.n; i++)
		if (!((struct sc_pod *)g->pods.v[i])->deleting)
			n++;
	return n;
}

bool sc_group_admissible(const struct sc_group *g, int depth, struct sc_buf *why)
{
	int have = 0, need;

	if (depth > SC_DEPTH_MAX) {
		if (why)
			sc_buf_printf(why, "hierarchy deeper than %d", SC_DEPTH_MAX);
		return false;
	}
	if (!g->present) {
		if (why)
			sc_buf_printf(why, "group %s not found", g->key);
		return false;
	}
	if (g->implicit)
		return true;
	need = g->policy == PK_POLICY_GANG ? g->min : 1;
	if (!g->composite) {
		have = count_live_pods(g);
		if (have >= need)
			return true;
		if (why)
			sc_buf_printf(why, "PodGroup %s has %d of %s %d pods", g->key, have,
				      g->policy == PK_POLICY_GANG ? "minCount" : "at least", need);
		return false;
	}
	const struct sc_group *first_bad = NULL;

	for (size_t i = 0; i < g->children.n; i++) {
		const struct sc_group *c = g->children.v[i];

		if (sc_group_admissible(c, depth + 1, NULL))
			have++;
		else if (!first_bad)
			first_bad = c;
	}
	if (have >= need)
		return true;
	if (why) {
		sc_buf_printf(why, "CompositePodGroup %s has %d of %s %d admissible child groups",
			      g->key, have,
			      g->policy == PK_POLICY_GANG ? "minGroupCount" : "at least", need);
		if (first_bad) {
			sc_buf_printf(why, " (");
			sc_group_admissible(first_bad, depth + 1, why);
			sc_buf_printf(why, ")");
		}
	}
	return false;
}

static bool class_value(const struct pk_sched *s, const char *name, int32_t *ret)
{
	const int32_t *v = name ? sc_map_get(&s->prio_classes, name) : NULL;

	if (v)
		*ret = *v;
	return v != NULL;
}

int32_t sc_group_priority(const struct pk_sched *s, const struct sc_group *g, bool *ret_explicit)
{
	int32_t v;
	bool expl = true;

	if (g->has_prio)
		v = g->prio;
	else if (g->prio_class && class_value(s, g->prio_class, &v))
		;
	else {
		v = s->default_prio;
		expl = g->prio_class != NULL; /* named but unknown class: 0 like a typo'd pod */
		if (expl)
			v = 0;
	}
	if (ret_explicit)
		*ret_explicit = expl;
	return v;
}

bool sc_pod_explicit_priority(const struct pk_sched *s, const struct sc_pod *pod, int32_t *ret_prio)
{
	int32_t v;

	if (pod->has_prio)
		v = pod->prio;
	else if (!pod->prio_class || !class_value(s, pod->prio_class, &v))
		return false;
	*ret_prio = v;
	return true;
}

int32_t sc_pod_priority(const struct pk_sched *s, const struct sc_pod *pod)
{
	int32_t v;

	if (sc_pod_explicit_priority(s, pod, &v))
		return v;
	for (const struct sc_group *g = pod->group; g; g = g->parent) {
		bool expl;

		if (g->implicit)
			break;
		v = sc_group_priority(s, g, &expl);
		if (expl)
			return v;
		if (!g->parent_key)
			break;
	}
	return s->default_prio;
}

static bool max_explicit(const struct pk_sched *s, const struct sc_group *g, int depth,
			 int32_t *best)
{
	bool expl, any = false;
	int32_t v = sc_group_priority(s, g, &expl);

	if (depth > SC_DEPTH_MAX)
		return false;
	if (expl && !g->implicit) {
		*best = v;
		return true;
	}
	for (size_t i = 0; i < g->children.n; i++) {
		int32_t c = 0;

		if (max_explicit(s, g->children.v[i], depth + 1, &c) && (!any || c > *best)) {
			*best = c;
			any = true;
		}
	}
	for (size_t i = 0; i < g->pods.n; i++) {
		int32_t c = sc_pod_priority(s, g->pods.v[i]);

		if (!any || c > *best) {
			*best = c;
			any = true;
		}
	}
	return any;
}

int32_t sc_root_priority(const struct pk_sched *s, const struct sc_group *root)
{
	int32_t v;

	if (max_explicit(s, root, 0, &v))
		return v;
	return s->default_prio;
}

struct ranked {
	struct sc_group *g;
	int32_t prio;
};

/* Negative when a goes first. */
static int rank_cmp(const struct ranked *a, const struct ranked *b)
{
	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->g->creation != b->g->creation)
		return a->g->creation < b->g->creation ? -1 : 1;
	if (a->g->creation != INT64_MIN) {
		int c = strcmp(a->g->key, b->g->key);

		if (c)
			return c;
	}
	return a->g->seq < b->g->seq ? -1 : a->g->seq > b->g->seq;
}

static int rank_qsort(const void *a, const void *b)
{
	return rank_cmp(a, b);
}

static bool has_pending(const struct sc_group *g, int depth)
{
	if (depth > SC_DEPTH_MAX)
		return false;
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (p->node < 0 && !p->node_name && !p->deleting)
			return true;
	}
	for (size_t i = 0; i < g->children.n; i++)
		if (has_pending(g->children.v[i], depth + 1))
			return true;
	return false;
}

/*
 * The roots in rank order, rebuilt only when the forest or the priority
 * classes changed: a stream of cycles that only binds pods picks in time
 * proportional to the roots it skips, and roots found done are skipped once.
 */
static int queue_sorted(struct pk_sched *s)
{
	struct sc_forest *f = &s->forest;
	size_t n = f->roots.n;
	struct ranked *r;

	if (s->qvalid && s->qversion == f->version && s->qepoch == s->prio_epoch)
		return 0;
	r = calloc(n + 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->qsorted.n = 0;
	for (size_t i = 0; i < n; i++) {
		struct sc_group *g = f->roots.v[i];

		if (!g->prio_valid || g->prio_epoch != s->prio_epoch) {
			g->prio_cache = sc_root_priority(s, g);
			g->prio_epoch = s->prio_epoch;
			g->prio_valid = true;
		}
		r[i] = (struct ranked){.g = g, .prio = g->prio_cache};
	}
	qsort(r, n, sizeof(*r), rank_qsort);
	for (size_t i = 0; i < n; i++)
		if (sc_vec_push(&s->qsorted, r[i].g) < 0) {
			free(r);
			s->qvalid = false;
			return -ENOMEM;
		}
	free(r);
	s->qvalid = true;
	s->qversion = f->version;
	s->qepoch = s->prio_epoch;
	s->qcursor = 0;
	return 0;
}

struct sc_group *sc_queue_pick(struct pk_sched *s, int64_t now, int64_t *ret_wait)
{
	bool waiting = false, prefix = true;
	int64_t wait = 0;

	if (ret_wait)
		*ret_wait = 0;
	if (queue_sorted(s) < 0)
		return NULL;
	for (size_t i = s->qcursor; i < s->qsorted.n; i++) {
		struct sc_group *g = s->qsorted.v[i];

		if (!g->present || g->done) {
			if (prefix)
				s->qcursor = i + 1;
			continue;
		}
		if (!g->dirty && (g->parked_invalid || s->gen <= g->tried_gen)) {
			prefix = false;
			continue;
		}
		if (!has_pending(g, 0)) {
			g->done = true;
			g->dirty = false;
			if (prefix)
				s->qcursor = i + 1;
			continue;
		}
		prefix = false;
		if (g->backoff_until > now) {
			if (!waiting || g->backoff_until < wait)
				wait = g->backoff_until;
			waiting = true;
			continue;
		}
		return g; /* the first eligible root in rank order is the best */
	}
	if (ret_wait)
		*ret_wait = waiting ? wait : 0;
	return NULL;
}

void sc_queue_order(struct pk_sched *s, struct sc_vec *ret_roots)
{
	size_t n = s->forest.roots.n;
	struct ranked *r = calloc(n + 1, sizeof(*r));

	if (!r)
		return;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){.g = s->forest.roots.v[i],
				       .prio = sc_root_priority(s, s->forest.roots.v[i])};
	qsort(r, n, sizeof(*r), rank_qsort);
	for (size_t i = 0; i < n; i++)
		sc_vec_push(ret_roots, r[i].g);
	free(r);
}

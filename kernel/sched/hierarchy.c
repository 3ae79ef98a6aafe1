/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hierarchy.c — runtime validation of a popped hierarchy (KEP-6012 "Runtime
 * validation").  Controllers may create groups that their Workload never
 * described; before a root is scheduled, its tree is walked once and the
 * first violation is reported: depth over 4, more than one Workload, groups
 * or pods with differing explicit priorities (KEP-6012: all member groups
 * *and pods* of one hierarchy share one priority; a pod without its own
 * inherits it), a gang parent with a basic child, an
 * `all` parent with a `single` child, or a CompositePodGroup with
 * spec.resourceClaims (claims a group shares, KEP-6089: implemented for
 * PodGroups by claims.c, not for CompositePodGroups, so refused by path
 * rather than ignored).  Cycles never reach here (they have no
 * root).  A PodGroup never has child groups and a CompositePodGroup never has
 * pods: parents and pods are looked up by kind (forest.c), and the forest
 * invariant (pk_sched_check) says so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"

struct walk {
	const struct pk_sched *s;
	const char *workload;
	const struct sc_group *workload_group;
	const char *prio_kind, *prio_key; /* the first group or pod with its own priority */
	int32_t prio;
	char *why;
	size_t whylen;
};

static int fail(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (w->why)
		vsnprintf(w->why, w->whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The first explicit priority of the hierarchy sets it; any other differs. */
static int check_priority(struct walk *w, const char *kind, const char *key, int32_t prio)
{
	if (!w->prio_kind) {
		w->prio_kind = kind;
		w->prio_key = key;
		w->prio = prio;
		return 0;
	}
	if (prio == w->prio)
		return 0;
	return fail(w, "priority divergence: %s %s has %d, %s %s has %d", w->prio_kind, w->prio_key,
		    w->prio, kind, key, prio);
}

static int visit(struct walk *w, const struct sc_group *g, int depth)
{
	bool expl;
	int32_t prio;

	if (depth > PK_HIERARCHY_DEPTH_MAX)
		return fail(w, "depth over %d: %s %s is at level %d", PK_HIERARCHY_DEPTH_MAX,
			    sc_group_kind(g), g->key, depth);
	if (g->spec.has_claims && g->composite)
		return fail(w,
			    "%s %s: spec.resourceClaims: claims shared by a CompositePodGroup are "
			    "not implemented by this scheduler (name them in its PodGroups' or "
			    "pods' spec.resourceClaims)",
			    sc_group_kind(g), g->key);
	if (g->spec.workload) {
		if (w->workload && strcmp(w->workload, g->spec.workload) != 0)
			return fail(w, "two Workloads: %s %s references %s, %s %s references %s",
				    sc_group_kind(w->workload_group), w->workload_group->key,
				    w->workload, sc_group_kind(g), g->key, g->spec.workload);
		w->workload = g->spec.workload;
		w->workload_group = g;
	}
	prio = sc_group_priority(w->s, g, &expl);
	if (expl && check_priority(w, sc_group_kind(g), g->key, prio) < 0)
		return -EINVAL;
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (sc_pod_explicit_priority(w->s, p, &prio) &&
		    check_priority(w, "pod", p->key, prio) < 0)
			return -EINVAL;
	}
	for (size_t i = 0; i < g->children.n; i++) {
		const struct sc_group *c = g->children.v[i];

		if (g->spec.policy == PK_POLICY_GANG && c->spec.policy == PK_POLICY_BASIC)
			return fail(w,
				    "gang parent with basic child: %s %s is gang, %s %s is basic",
				    sc_group_kind(g), g->key, sc_group_kind(c), c->key);
		if (g->spec.disruption == PK_DISRUPTION_ALL &&
		    c->spec.disruption == PK_DISRUPTION_SINGLE)
			return fail(w,
				    "all parent with single child: %s %s has disruptionMode all, "
				    "%s %s has single",
				    sc_group_kind(g), g->key, sc_group_kind(c), c->key);
	}
	for (size_t i = 0; i < g->children.n; i++) {
		int r = visit(w, g->children.v[i], depth + 1);

		if (r < 0)
			return r;
	}
	return 0;
}

int sc_hierarchy_validate(const struct pk_sched *s, struct sc_group *root, char *why, size_t whylen)
{
	struct walk w = {.s = s, .why = why, .whylen = whylen};

	if (root->implicit)
		return 0;
	return visit(&w, root, 1);
}

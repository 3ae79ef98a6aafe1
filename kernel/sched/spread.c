/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spread.c — topology spread constraints (kube-scheduler's
 * PodTopologySpread): spec.topologySpreadConstraints.
 *
 * Each constraint is a term of the shared index (plugin.h): the pod's own
 * namespace, its labelSelector with matchLabelKeys added as
 * `key In (pod's value)`, over its topologyKey.  The domains that count are
 * those of the nodes that pass the pod's nodeSelector and required node
 * affinity (nodeAffinityPolicy Honor, the default) and tolerate its taints
 * (nodeTaintsPolicy Honor; Ignore is the default), and that carry every
 * constraint's key.  For each domain the matching pods bound or assumed on
 * such nodes are counted; the global minimum is 0 while fewer than
 * minDomains domains exist.
 *
 *   DoNotSchedule    a node without the key fails; otherwise placing the pod
 *                    in the node's domain must leave count + (pod matches
 *                    itself) - minimum <= maxSkew.
 *   ScheduleAnyway   score -= matching pods in the node's domain.
 *
 * The per-domain counts for one pod are computed once per pick (cached on
 * the index's charge counter): from the term's own per-domain counts when
 * every node counts, else by one pass over the nodes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

#define PATH "spec.topologySpreadConstraints"

struct spread_con {
	struct sc_term *t;
	int32_t max_skew, min_domains;
	bool hard;	   /* DoNotSchedule */
	bool honor_aff;	   /* nodeAffinityPolicy Honor */
	bool honor_taints; /* nodeTaintsPolicy Honor */
	bool self;	   /* the pod matches its own selector */
	/* per-pick cache */
	int *cnt; /* per domain, over eligible nodes; NULL: the term's dom_cnt */
	int ncap;
	int64_t min;
};

struct spread {
	size_t n;
	bool trivial; /* every node with the key counts: the term's own counts */
	const struct sc_pod *cpod;
	uint64_t charges; /* snap->terms.charges the cache was computed at */
	bool cached;
	struct spread_con c[];
};

static int parse_policy(json_t *con, const char *field, const char *path, bool def, bool *ret,
			struct sc_buf *why)
{
	const char *v = json_string_value(json_object_get(con, field));

	*ret = def;
	if (!json_object_get(con, field) || json_is_null(json_object_get(con, field)))
		return 0;
	if (v && strcmp(v, "Honor") == 0)
		*ret = true;
	else if (v && strcmp(v, "Ignore") == 0)
		*ret = false;
	else {
		sc_buf_printf(why, "%s.%s: Honor or Ignore expected", path, field);
		return -EINVAL;
	}
	return 0;
}

static int parse_con(struct pk_sched *s, json_t *con, size_t i, const struct sc_pod *pod,
		     struct spread_con *c, struct sc_buf *why)
{
	const char *key = json_string_value(json_object_get(con, "topologyKey"));
	const char *when = json_string_value(json_object_get(con, "whenUnsatisfiable"));
	json_t *skew = json_object_get(con, "maxSkew"), *md = json_object_get(con, "minDomains");
	json_t *keys = json_object_get(con, "matchLabelKeys");
	struct sc_matcher *m;
	char path[96], sp[128];
	int r;

	snprintf(path, sizeof(path), PATH "[%zu]", i);
	if (!key || !*key || !json_is_integer(skew) || json_integer_value(skew) < 1 ||
	    json_integer_value(skew) > INT32_MAX || !when ||
	    (strcmp(when, "DoNotSchedule") != 0 && strcmp(when, "ScheduleAnyway") != 0)) {
		sc_buf_printf(why,
			      "%s: topologyKey, maxSkew >= 1 and whenUnsatisfiable "
			      "(DoNotSchedule or ScheduleAnyway) required",
			      path);
		return -EINVAL;
	}
	c->max_skew = (int32_t)json_integer_value(skew);
	c->hard = strcmp(when, "DoNotSchedule") == 0;
	if (md && !json_is_null(md)) {
		if (!json_is_integer(md) || json_integer_value(md) < 1 ||
		    json_integer_value(md) > INT32_MAX || !c->hard) {
			sc_buf_printf(
			    why, "%s.minDomains: an integer >= 1, with DoNotSchedule only", path);
			return -EINVAL;
		}
		c->min_domains = (int32_t)json_integer_value(md);
	}
	if ((r = parse_policy(con, "nodeAffinityPolicy", path, true, &c->honor_aff, why)) < 0 ||
	    (r = parse_policy(con, "nodeTaintsPolicy", path, false, &c->honor_taints, why)) < 0)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->ns = calloc(2, sizeof(char *))) || !(m->ns[0] = strdup(pod->ns))) {
		if (m)
			free(m->ns);
		free(m);
		return -ENOMEM;
	}
	m->nns = 1;
	snprintf(sp, sizeof(sp), "%s.labelSelector", path);
	r = sc_lsel_parse(json_object_get(con, "labelSelector"), sp, &m->sel, why);
	for (size_t k = 0; r == 0 && k < json_array_size(keys); k++) {
		const char *lk = json_string_value(json_array_get(keys, k)), *v;

		if (!lk || m->sel.null) {
			sc_buf_printf(why,
				      "%s.matchLabelKeys[%zu]: a label key, with a labelSelector",
				      path, k);
			r = -EINVAL;
		} else if ((v = sc_labels_get(&pod->cons->labels, lk))) {
			r = sc_lsel_add(&m->sel, lk, SC_LOP_IN, &v, 1);
		}
	}
	if (r < 0) {
		sc_matcher_clear(m);
		free(m);
		return r;
	}
	m->live_only = true; /* kube-scheduler's spread counts skip terminating pods */
	c->t = sc_terms_get(&s->snap.terms, key, m, 1);
	if (!c->t)
		return -ENOMEM;
	c->self = sc_term_matches(&s->snap.terms, c->t, pod->ns, &pod->cons->labels);
	return 0;
}

static void spread_free(struct pk_sched *s, struct spread *sp)
{
	for (size_t i = 0; sp && i < sp->n; i++) {
		sc_terms_put(&s->snap.terms, sp->c[i].t);
		free(sp->c[i].cnt);
	}
	free(sp);
}

static int spread_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *list = json_object_get(json_object_get(obj, "spec"), "topologySpreadConstraints");
	size_t n = json_array_size(list);
	struct spread *sp;
	int r = 0;

	if (!n)
		return 0;
	if (n > SC_CONS_MAX_TERMS) {
		sc_buf_printf(why, PATH ": more than %d constraints", SC_CONS_MAX_TERMS);
		return -EINVAL;
	}
	sp = calloc(1, sizeof(*sp) + n * sizeof(sp->c[0]));
	if (!sp)
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		r = parse_con(s, json_array_get(list, i), i, pod, &sp->c[i], why);
		if (sp->c[i].t)
			sp->n = i + 1;
	}
	if (r < 0) {
		spread_free(s, sp);
		return r;
	}
	sp->trivial = n == 1 && !sp->c[0].honor_taints &&
		      (!sp->c[0].honor_aff || (!pod->nsel && !pod->nterms));
	for (size_t i = 0; i < n; i++)
		if (!sp->c[i].hard)
			pod->cons->scores = true;
	pod->cons->state[SC_PLUGIN_SPREAD] = sp;
	return 0;
}

static void spread_release(struct pk_sched *s, struct sc_pod *pod)
{
	spread_free(s, pod->cons->state[SC_PLUGIN_SPREAD]);
	pod->cons->state[SC_PLUGIN_SPREAD] = NULL;
}

/* Does node count as a domain member for the pod's constraints? */
static bool node_counts(const struct spread *sp, const struct spread_con *c,
			const struct sc_pod *pod, const struct sc_node *node)
{
	if (node->removed)
		return false;
	for (size_t i = 0; i < sp->n; i++)
		if (sp->c[i].t->part->node_dom[node->index] < 0)
			return false;
	if (c->honor_aff && !sc_node_selected(pod, node))
		return false;
	return !c->honor_taints || sc_node_tolerated(pod, node);
}

/* Counts over the eligible nodes of one constraint, and their minimum. */
static int con_counts(struct sc_snapshot *snap, const struct spread *sp, struct spread_con *c,
		      const struct sc_pod *pod)
{
	const struct sc_part *part = c->t->part;
	bool *seen;
	int64_t min = INT64_MAX, ndom = 0;

	if (sp->trivial) {
		for (int d = 0; d < part->ndom; d++)
			if (part->start[d + 1] > part->start[d]) {
				ndom++;
				if (c->t->dom_cnt[d] < min)
					min = c->t->dom_cnt[d];
			}
	} else {
		if (c->ncap < part->ndom + 1) {
			int *v = realloc(c->cnt, ((size_t)part->ndom + 1) * sizeof(int));

			if (!v)
				return -ENOMEM;
			c->cnt = v;
			c->ncap = part->ndom + 1;
		}
		seen = calloc((size_t)part->ndom + 1, sizeof(bool));
		if (!seen)
			return -ENOMEM;
		memset(c->cnt, 0, ((size_t)part->ndom + 1) * sizeof(int));
		for (size_t i = 0; i < snap->nnodes; i++) {
			int d = part->node_dom[i];

			if (d < 0 || !node_counts(sp, c, pod, snap->nodes[i]))
				continue;
			c->cnt[d] += c->t->node_cnt[i];
			seen[d] = true;
		}
		for (int d = 0; d < part->ndom; d++)
			if (seen[d]) {
				ndom++;
				if (c->cnt[d] < min)
					min = c->cnt[d];
			}
		free(seen);
	}
	if (!ndom || (c->min_domains && ndom < c->min_domains))
		min = 0;
	c->min = min;
	return 0;
}

static int spread_prepare(struct sc_snapshot *snap, const struct sc_pod *pod, struct spread *sp)
{
	int r;

	if (sp->cached && sp->cpod == pod && sp->charges == snap->terms.charges &&
	    !snap->terms.stale)
		return 0;
	if ((r = sc_terms_ready(snap)) < 0)
		return r;
	for (size_t i = 0; i < sp->n; i++)
		if ((r = con_counts(snap, sp, &sp->c[i], pod)) < 0)
			return r;
	sp->cpod = pod;
	sp->charges = snap->terms.charges;
	sp->cached = true;
	return 0;
}

static int64_t dom_count(const struct spread *sp, const struct spread_con *c, int d)
{
	return sp->trivial ? c->t->dom_cnt[d] : c->cnt[d];
}

static enum sc_misfit spread_filter(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	struct spread *sp = pod->cons ? pod->cons->state[SC_PLUGIN_SPREAD] : NULL;

	if (!sp)
		return SC_FIT;
	if (spread_prepare(snap, pod, sp) < 0)
		return SC_MISFIT_SPREAD;
	for (size_t i = 0; i < sp->n; i++) {
		const struct spread_con *c = &sp->c[i];
		int d;

		if (!c->hard)
			continue;
		d = c->t->part->node_dom[node];
		if (d < 0)
			return SC_MISFIT_SPREAD_LABEL;
		if (dom_count(sp, c, d) + c->self - c->min > c->max_skew)
			return SC_MISFIT_SPREAD;
	}
	return SC_FIT;
}

static int64_t spread_score(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	struct spread *sp = pod->cons->state[SC_PLUGIN_SPREAD];
	int64_t sum = 0;

	if (!sp || spread_prepare(snap, pod, sp) < 0)
		return 0;
	for (size_t i = 0; i < sp->n; i++) {
		const struct spread_con *c = &sp->c[i];
		int d;

		if (c->hard)
			continue;
		d = c->t->part->node_dom[node];
		sum -= d < 0 ? c->t->total + 1 : dom_count(sp, c, d);
	}
	return sum;
}

struct sc_part *sc_spread_hint(struct sc_snapshot *snap, const struct sc_pod *pod)
{
	struct spread *sp = pod->cons ? pod->cons->state[SC_PLUGIN_SPREAD] : NULL;

	if (!sp || !sp->trivial || !sp->c[0].hard || spread_prepare(snap, pod, sp) < 0)
		return NULL;
	return sp->c[0].t->part;
}

bool sc_spread_dom_allowed(struct sc_snapshot *snap, const struct sc_pod *pod, int d)
{
	const struct spread *sp = pod->cons->state[SC_PLUGIN_SPREAD];
	const struct spread_con *c = &sp->c[0];

	(void)snap;
	return dom_count(sp, c, d) + c->self - c->min <= c->max_skew;
}

const struct sc_plugin_ops sc_plugin_spread = {
    .name = "PodTopologySpread",
    .parse = spread_parse,
    .release = spread_release,
    .filter = spread_filter,
    .score = spread_score,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodepref.c — preferred node affinity (kube-scheduler's NodeAffinity
 * score): spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuring-
 * Execution, each term's weight added to the score of the nodes its
 * preference (a node selector term) matches.  The required part of node
 * affinity is a static filter (filter.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

struct nodepref {
	size_t n;
	struct nodepref_term {
		int32_t weight;
		struct sc_sel_term term;
	} t[];
};

static void sel_term_clear(struct sc_sel_term *t)
{
	for (size_t i = 0; i < t->nreqs; i++) {
		free(t->reqs[i].key);
		for (size_t k = 0; k < t->reqs[i].nvalues; k++)
			free(t->reqs[i].values[k]);
		free(t->reqs[i].values);
	}
	free(t->reqs);
}

static void nodepref_free(struct nodepref *np)
{
	for (size_t i = 0; np && i < np->n; i++)
		sel_term_clear(&np->t[i].term);
	free(np);
}

static const char *const node_ops[] = {
    [PK_SEL_IN] = "In",		[PK_SEL_NOT_IN] = "NotIn",
    [PK_SEL_EXISTS] = "Exists", [PK_SEL_DOES_NOT_EXIST] = "DoesNotExist",
    [PK_SEL_GT] = "Gt",		[PK_SEL_LT] = "Lt",
};

static int parse_req(json_t *e, const char *path, struct sc_sel_req *r, bool field,
		     struct sc_buf *why)
{
	const char *key = json_string_value(json_object_get(e, "key"));
	const char *op = json_string_value(json_object_get(e, "operator"));
	json_t *vals = json_object_get(e, "values");
	int o = -1;

	for (int k = 0; op && k < (int)(sizeof(node_ops) / sizeof(node_ops[0])); k++)
		if (node_ops[k] && strcmp(op, node_ops[k]) == 0)
			o = k;
	if (!key || o < 0 || json_array_size(vals) > SC_CONS_MAX_VALUES ||
	    (field && strcmp(key, "metadata.name") != 0)) {
		sc_buf_printf(why,
			      "%s: a key (metadata.name for matchFields) and an operator "
			      "(In, NotIn, Exists, DoesNotExist, Gt, Lt) required",
			      path);
		return -EINVAL;
	}
	*r = (struct sc_sel_req){.key = strdup(key), .field = field, .op = (enum pk_selector_op)o};
	r->values = calloc(json_array_size(vals) + 1, sizeof(char *));
	if (!r->key || !r->values)
		return -ENOMEM;
	for (size_t k = 0; k < json_array_size(vals); k++, r->nvalues++) {
		const char *v = json_string_value(json_array_get(vals, k));

		if (!v) {
			sc_buf_printf(why, "%s.values[%zu]: not a string", path, k);
			return -EINVAL;
		}
		if (!(r->values[k] = strdup(v)))
			return -ENOMEM;
	}
	return 0;
}

static int parse_pref(json_t *pref, size_t i, struct nodepref_term *t, struct sc_buf *why)
{
	json_t *w = json_object_get(pref, "weight"), *term = json_object_get(pref, "preference");
	const char *lists[] = {"matchExpressions", "matchFields"};
	char path[160];
	int r;

	snprintf(path, sizeof(path),
		 "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%zu]",
		 i);
	if (!json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > 100 ||
	    !json_is_object(term)) {
		sc_buf_printf(why, "%s: weight 1-100 and a preference required", path);
		return -EINVAL;
	}
	t->weight = (int32_t)json_integer_value(w);
	for (int l = 0; l < 2; l++) {
		json_t *list = json_object_get(term, lists[l]);

		for (size_t k = 0; k < json_array_size(list); k++) {
			struct sc_sel_req *v;
			char rp[240];

			if (t->term.nreqs >= SC_CONS_MAX_REQS) {
				sc_buf_printf(why, "%s.preference: too many requirements", path);
				return -EINVAL;
			}
			v = realloc(t->term.reqs, (t->term.nreqs + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			t->term.reqs = v;
			snprintf(rp, sizeof(rp), "%s.preference.%s[%zu]", path, lists[l], k);
			memset(&v[t->term.nreqs], 0, sizeof(*v));
			r = parse_req(json_array_get(list, k), rp, &v[t->term.nreqs], l == 1, why);
			t->term.nreqs++;
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int nodepref_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *prefs = pk_get(obj, "spec.affinity.nodeAffinity."
				    "preferredDuringSchedulingIgnoredDuringExecution");
	size_t n = json_array_size(prefs);
	struct nodepref *np;
	int r = 0;

	(void)s;
	if (!n)
		return 0;
	if (n > SC_CONS_MAX_TERMS) {
		sc_buf_printf(why,
			      "spec.affinity.nodeAffinity."
			      "preferredDuringSchedulingIgnoredDuringExecution: more than %d terms",
			      SC_CONS_MAX_TERMS);
		return -EINVAL;
	}
	np = calloc(1, sizeof(*np) + n * sizeof(np->t[0]));
	if (!np)
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++, np->n++)
		r = parse_pref(json_array_get(prefs, i), i, &np->t[i], why);
	if (r < 0) {
		nodepref_free(np);
		return r;
	}
	pod->cons->state[SC_PLUGIN_NODEPREF] = np;
	pod->cons->scores = true;
	return 0;
}

static void nodepref_release(struct pk_sched *s, struct sc_pod *pod)
{
	(void)s;
	nodepref_free(pod->cons->state[SC_PLUGIN_NODEPREF]);
	pod->cons->state[SC_PLUGIN_NODEPREF] = NULL;
}

static int64_t nodepref_score(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	const struct nodepref *np = pod->cons->state[SC_PLUGIN_NODEPREF];
	int64_t sum = 0;

	for (size_t i = 0; np && i < np->n; i++) {
		if (sc_node_matches_term(&np->t[i].term, snap->nodes[node]))
			sum += np->t[i].weight;
	}
	return sum;
}

const struct sc_plugin_ops sc_plugin_nodepref = {
    .name = "NodeAffinity",
    .parse = nodepref_parse,
    .release = nodepref_release,
    .score = nodepref_score,
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * filter.c — can this pod go on this node?  The filters of kube-scheduler
 * that matter here: node unschedulable (unless the pod tolerates
 * node.kubernetes.io/unschedulable:NoSchedule), nodeSelector, required node affinity
 * (terms ORed, requirements ANDed; In, NotIn, Exists, DoesNotExist, Gt, Lt;
 * matchFields on metadata.name against the node's name),
 * taints against tolerations (NoSchedule and NoExecute filter,
 * PreferNoSchedule does not).  The first failing filter is returned so that
 * messages can count why nodes were rejected.
 *
 * These are the static filters, below the constraint plugins: nodepref.c,
 * spread.c and volumes.c match nodes with them.  The whole filter, with the
 * plugins' filters (plugin.h: pod affinity, topology spread, host ports,
 * claims, volumes) and then resource fit for every resource the pod
 * requests, "pods" included, is sc_filter() in plugin.c, above the plugins.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

static const char *const misfit_names[_SC_MISFIT_MAX] = {
    [SC_FIT] = "fits",
    [SC_MISFIT_REMOVED] = "node removed",
    [SC_MISFIT_UNSCHEDULABLE] = "node unschedulable",
    [SC_MISFIT_SELECTOR] = "node selector mismatch",
    [SC_MISFIT_AFFINITY] = "node affinity mismatch",
    [SC_MISFIT_TAINT] = "untolerated taint",
    [SC_MISFIT_RESOURCES] = "insufficient",
    [SC_MISFIT_POD_AFFINITY] = "pod affinity mismatch",
    [SC_MISFIT_POD_ANTI_AFFINITY] = "pod anti-affinity conflict",
    [SC_MISFIT_EXISTING_ANTI_AFFINITY] = "existing pods' anti-affinity",
    [SC_MISFIT_SPREAD] = "topology spread skew",
    [SC_MISFIT_SPREAD_LABEL] = "missing topology spread label",
    [SC_MISFIT_PORTS] = "host port conflict",
    [SC_MISFIT_CLAIM] = "unsatisfiable resource claim",
    [SC_MISFIT_VOLUME_AFFINITY] = "volume node affinity conflict",
    [SC_MISFIT_VOLUME_BINDING] = "no persistent volume to bind or provision",
    [SC_MISFIT_VOLUME_RWOP] = "ReadWriteOncePod claim in use",
    [SC_MISFIT_VOLUME_LIMIT] = "CSI volume limit",
};

const char *sc_misfit_to_string(enum sc_misfit m)
{
	return m < _SC_MISFIT_MAX ? misfit_names[m] : "unknown";
}

static bool parse_int(const char *s, long long *ret)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*ret = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool req_match(const struct sc_sel_req *req, const struct sc_node *node)
{
	/* matchFields has one field, metadata.name (validation refuses others) */
	const char *v = req->field ? node->name : sc_node_label(node, req->key);
	long long a, b;

	switch (req->op) {
	case PK_SEL_IN:
	case PK_SEL_NOT_IN: {
		bool in = false;

		for (size_t i = 0; v && i < req->nvalues; i++)
			if (strcmp(v, req->values[i]) == 0)
				in = true;
		return req->op == PK_SEL_IN ? in : !in;
	}
	case PK_SEL_EXISTS:
		return v != NULL;
	case PK_SEL_DOES_NOT_EXIST:
		return v == NULL;
	case PK_SEL_GT:
	case PK_SEL_LT:
		if (req->nvalues != 1 || !parse_int(v, &a) || !parse_int(req->values[0], &b))
			return false;
		return req->op == PK_SEL_GT ? a > b : a < b;
	}
	return false;
}

bool sc_node_matches_term(const struct sc_sel_term *term, const struct sc_node *node)
{
	bool ok = term->nreqs > 0; /* an empty term matches nothing */

	for (size_t i = 0; ok && i < term->nreqs; i++)
		ok = req_match(&term->reqs[i], node);
	return ok;
}

static bool affinity_match(const struct sc_pod *pod, const struct sc_node *node)
{
	if (!pod->nterms)
		return true;
	for (size_t t = 0; t < pod->nterms; t++)
		if (sc_node_matches_term(&pod->terms[t], node))
			return true;
	return false;
}

static bool tolerates(const struct sc_pod *pod, const struct sc_taint *taint)
{
	for (size_t i = 0; i < pod->ntols; i++) {
		const struct sc_toleration *t = &pod->tols[i];

		if (t->has_effect && t->effect != taint->effect)
			continue;
		if (!t->key || !*t->key) {
			if (t->op == PK_TOL_EXISTS)
				return true;
			continue;
		}
		if (strcmp(t->key, taint->key) != 0)
			continue;
		if (t->op == PK_TOL_EXISTS || strcmp(t->value ? t->value : "", taint->value) == 0)
			return true;
	}
	return false;
}

static bool selector_match(const struct sc_pod *pod, const struct sc_node *node)
{
	for (size_t i = 0; i < pod->nsel; i++) {
		const char *v = sc_node_label(node, pod->sel[i].key);

		if (!v || strcmp(v, pod->sel[i].value) != 0)
			return false;
	}
	return true;
}

bool sc_node_selected(const struct sc_pod *pod, const struct sc_node *node)
{
	return selector_match(pod, node) && affinity_match(pod, node);
}

bool sc_node_tolerated(const struct sc_pod *pod, const struct sc_node *node)
{
	for (size_t i = 0; i < node->ntaints; i++)
		if (node->taints[i].effect != PK_TAINT_PREFER_NO_SCHEDULE &&
		    !tolerates(pod, &node->taints[i]))
			return false;
	return true;
}

/*
 * A cordoned node takes the pods that tolerate the taint it stands for
 * (kube-scheduler's NodeUnschedulable: DaemonSet pods carry the toleration).
 */
static bool cordon_tolerated(const struct sc_pod *pod)
{
	static const struct sc_taint cordon = {
	    .key = "node.kubernetes.io/unschedulable",
	    .value = "",
	    .effect = PK_TAINT_NO_SCHEDULE,
	};

	return tolerates(pod, &cordon);
}

enum sc_misfit sc_filter_static(const struct sc_pod *pod, const struct sc_node *node)
{
	if (node->removed)
		return SC_MISFIT_REMOVED;
	if (node->unschedulable && !cordon_tolerated(pod))
		return SC_MISFIT_UNSCHEDULABLE;
	if (!selector_match(pod, node))
		return SC_MISFIT_SELECTOR;
	if (!affinity_match(pod, node))
		return SC_MISFIT_AFFINITY;
	if (!sc_node_tolerated(pod, node))
		return SC_MISFIT_TAINT;
	return SC_FIT;
}

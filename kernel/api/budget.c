/* SPDX-License-Identifier: Apache-2.0 */
/*
 * budget.c — PodDisruptionBudget (policy/v1): its static validation (the
 * rules of kube-apiserver's ValidatePodDisruptionBudgetSpec), the label
 * selector it picks pods with, and its arithmetic: expected pods, healthy
 * pods, desired healthy pods and disruptions allowed, as the disruption
 * controller computes them.  The eviction subresource and the standalone
 * status writer both count with these, so the answer of an eviction and the
 * status a user reads agree.
 *
 * Expected pods are the non-terminal pods the selector picks (upstream reads
 * the scale of their controllers; here every pod stands for itself).  A pod
 * is healthy when it is Running, its Ready condition is True and it is not
 * being deleted, and not counted as healthy while status.disruptedPods names
 * it (an eviction granted, the pod not yet gone).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"

#define MAX_EXPRESSIONS 64
#define MAX_VALUES 256

/* ---- label selectors -------------------------------------------------------- */
static bool value_in(const json_t *values, const char *v)
{
	json_t *x;
	size_t i;

	json_array_foreach(values, i, x) if (json_is_string(x) &&
					     strcmp(json_string_value(x), v) == 0) return true;
	return false;
}

static bool expression_matches(const json_t *e, const json_t *labels)
{
	const char *key = pk_get_string(e, "key"), *op = pk_get_string(e, "operator");
	json_t *values = json_object_get(e, "values");
	const char *v = key ? json_string_value(json_object_get(labels, key)) : NULL;

	if (!key || !op)
		return false;
	if (strcmp(op, "In") == 0)
		return v && value_in(values, v);
	if (strcmp(op, "NotIn") == 0)
		return !v || !value_in(values, v);
	if (strcmp(op, "Exists") == 0)
		return v != NULL;
	if (strcmp(op, "DoesNotExist") == 0)
		return v == NULL;
	return false;
}

bool pk_label_selector_matches(const json_t *sel, const json_t *labels)
{
	json_t *ml, *exprs, *x;
	const char *k;
	size_t i;

	if (!json_is_object(sel))
		return false; /* a null selector picks nothing (policy/v1) */
	ml = json_object_get(sel, "matchLabels");
	json_object_foreach(ml, k, x)
	{
		const char *have = json_string_value(json_object_get(labels, k));

		if (!have || !json_is_string(x) || strcmp(have, json_string_value(x)) != 0)
			return false;
	}
	exprs = json_object_get(sel, "matchExpressions");
	json_array_foreach(exprs, i, x) if (!expression_matches(x, labels)) return false;
	return true;
}

bool pk_budget_selects(const json_t *pdb, const json_t *pod)
{
	if (strcmp(pk_namespace(pdb) ?: "", pk_namespace(pod) ?: "") != 0)
		return false;
	return pk_label_selector_matches(pk_get(pdb, "spec.selector"),
					 pk_get(pod, "metadata.labels"));
}

/* ---- health and arithmetic ---------------------------------------------------- */
bool pk_pod_terminal(const json_t *pod)
{
	const char *phase = pk_get_string(pod, "status.phase");

	return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

bool pk_pod_ready(const json_t *pod)
{
	json_t *conds = pk_get(pod, "status.conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *type = pk_get_string(c, "type"), *st = pk_get_string(c, "status");

		if (type && strcmp(type, "Ready") == 0)
			return st && strcmp(st, "True") == 0;
	}
	return false;
}

bool pk_pod_disruption_healthy(const json_t *pod)
{
	const char *phase = pk_get_string(pod, "status.phase");

	return phase && strcmp(phase, "Running") == 0 && pk_pod_ready(pod) &&
	       !pk_get(pod, "metadata.deletionTimestamp");
}

/*
 * An int-or-percent of total: ints as they are, "N%" scaled (round_up:
 * ceiling, else floor); -EINVAL when neither.
 */
static int scaled(const json_t *v, int total, bool round_up, int *ret)
{
	if (json_is_integer(v)) {
		*ret = (int)json_integer_value(v);
		return 0;
	}
	const char *s = json_string_value(v);
	char *end = NULL;
	long pct = s ? strtol(s, &end, 10) : -1;

	if (!s || end == s || strcmp(end, "%") != 0 || pct < 0 || pct > 100)
		return -EINVAL;
	long num = pct * total;
	*ret = (int)(round_up ? (num + 99) / 100 : num / 100);
	return 0;
}

int pk_budget_count(const json_t *pdb, const json_t *pods, struct pk_budget *ret)
{
	json_t *min = pk_get(pdb, "spec.minAvailable"), *max = pk_get(pdb, "spec.maxUnavailable");
	json_t *disrupted = pk_get(pdb, "status.disruptedPods"), *p;
	size_t i;
	int v = 0;

	*ret = (struct pk_budget){0};
	json_array_foreach(pods, i, p)
	{
		if (!pk_budget_selects(pdb, p) || pk_pod_terminal(p))
			continue;
		ret->expected++;
		/* a pod an eviction already counted is no longer healthy (upstream's disruptedPods)
		 */
		if (pk_pod_disruption_healthy(p) && !json_object_get(disrupted, pk_name(p)))
			ret->current_healthy++;
	}
	if (max && !json_is_null(max)) {
		if (scaled(max, ret->expected, true, &v) < 0)
			return -EINVAL;
		ret->desired_healthy = ret->expected - v > 0 ? ret->expected - v : 0;
	} else if (min && !json_is_null(min)) {
		if (scaled(min, ret->expected, true, &v) < 0)
			return -EINVAL;
		ret->desired_healthy = v;
	}
	ret->allowed = ret->current_healthy - ret->desired_healthy;
	if (ret->allowed < 0)
		ret->allowed = 0;
	return 0;
}

bool pk_budget_always_allow(const json_t *pdb)
{
	const char *p = pk_get_string(pdb, "spec.unhealthyPodEvictionPolicy");

	return p && strcmp(p, "AlwaysAllow") == 0;
}

json_t *pk_budget_status(const json_t *pdb, const struct pk_budget *b, const json_t *disrupted)
{
	json_t *gen = pk_get(pdb, "metadata.generation");
	json_int_t g = json_is_integer(gen) ? json_integer_value(gen) : 1;
	char ts[32];

	pk_time_format((int64_t)time(NULL), ts);
	return json_pack(
	    "{s:I,s:i,s:i,s:i,s:i,s:o,s:[{s:s,s:s,s:s,s:s,s:s,s:I}]}", "observedGeneration", g,
	    "disruptionsAllowed", b->allowed, "currentHealthy", b->current_healthy,
	    "desiredHealthy", b->desired_healthy, "expectedPods", b->expected, "disruptedPods",
	    json_is_object(disrupted) ? json_deep_copy(disrupted) : json_object(), "conditions",
	    "type", "DisruptionAllowed", "status", b->allowed > 0 ? "True" : "False", "reason",
	    b->allowed > 0 ? "SufficientPods" : "InsufficientPods", "message", "",
	    "lastTransitionTime", ts, "observedGeneration", g);
}

/* ---- validation ------------------------------------------------------------- */
static void check_int_or_percent(struct pk_vctx *v, const json_t *spec, const char *key)
{
	json_t *x = json_object_get(spec, key);
	int n = 0;

	if (!x || json_is_null(x))
		return;
	if (json_is_integer(x)) {
		if (json_integer_value(x) < 0 || json_integer_value(x) > INT32_MAX)
			pk_vctx_fail(v, key,
				     "Invalid value: %s: must be greater than or equal to 0",
				     pk_value_text(x, v->text, sizeof(v->text)));
	} else if (!json_is_string(x)) {
		pk_vctx_fail(v, key, "Invalid value: %s: must be an integer or a percent string",
			     pk_value_text(x, v->text, sizeof(v->text)));
	} else if (scaled(x, 100, true, &n) < 0) {
		pk_vctx_fail(v, key,
			     "Invalid value: %s: a valid percent string must be a numeric string "
			     "followed by an ending '%%' and be at most 100%%",
			     pk_value_text(x, v->text, sizeof(v->text)));
	}
}

static void check_expression(struct pk_vctx *v, const json_t *e)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};
	const char *key = pk_vctx_string(v, e, "key", true);
	const char *op = pk_vctx_string(v, e, "operator", true);
	json_t *values = pk_vctx_array(v, e, "values", MAX_VALUES), *x;
	bool known = false, needs_values;
	size_t i;

	(void)key;
	for (const char *const *o = ops; op && *o; o++)
		known |= strcmp(op, *o) == 0;
	if (op && !known) {
		pk_vctx_fail(v, "operator",
			     "Unsupported value: \"%s\": supported values: \"In\", "
			     "\"NotIn\", \"Exists\", \"DoesNotExist\"",
			     op);
		return;
	}
	needs_values = op && (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0);
	if (needs_values && json_array_size(values) == 0)
		pk_vctx_fail(v, "values",
			     "Required value: must be specified when `operator` is 'In' or "
			     "'NotIn'%s",
			     "");
	else if (op && !needs_values && json_array_size(values) > 0)
		pk_vctx_fail(v, "values",
			     "Forbidden: may not be specified when `operator` is 'Exists' or "
			     "'DoesNotExist'%s",
			     "");
	json_array_foreach(values, i, x) if (!json_is_string(x))
	{
		size_t old = pk_path_index(&v->p, i);

		pk_vctx_fail(v, NULL, "Invalid value: must be a string%s", "");
		pk_path_pop(&v->p, old);
		break;
	}
}

static void check_selector(struct pk_vctx *v, const json_t *spec)
{
	json_t *sel = pk_vctx_object(v, spec, "selector"), *ml, *exprs, *x;
	size_t old = pk_path_key(&v->p, "selector"), i;
	const char *k;

	ml = pk_vctx_object(v, sel, "matchLabels");
	json_object_foreach(ml, k, x) if (!json_is_string(x))
	{
		size_t o2 = pk_path_key(&v->p, "matchLabels");

		pk_vctx_fail(v, k, "Invalid value: must be a string%s", "");
		pk_path_pop(&v->p, o2);
	}
	exprs = pk_vctx_array(v, sel, "matchExpressions", MAX_EXPRESSIONS);
	json_array_foreach(exprs, i, x)
	{
		size_t o2 = pk_path_key(&v->p, "matchExpressions"), o3 = pk_path_index(&v->p, i);

		if (json_is_object(x))
			check_expression(v, x);
		else
			pk_vctx_fail(v, NULL, "Invalid value: must be an object%s", "");
		pk_path_pop(&v->p, o3);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

void pk_validate_budget(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	static const char *const policies[] = {"IfHealthyBudget", "AlwaysAllow", NULL};
	struct pk_vctx v = {.errs = errs};
	json_t *spec;
	const char *pol;
	size_t old = pk_path_key(&v.p, "spec");

	pk_validate_meta(obj, t, errs);
	spec = json_object_get(obj, "spec");
	if (spec && !json_is_object(spec)) {
		pk_vctx_fail(&v, NULL, "Invalid value: must be an object%s", "");
		pk_path_pop(&v.p, old);
		return;
	}
	json_t *min = json_object_get(spec, "minAvailable"),
	       *max = json_object_get(spec, "maxUnavailable");
	if (min && !json_is_null(min) && max && !json_is_null(max))
		pk_vctx_fail(&v, NULL,
			     "Invalid value: minAvailable and maxUnavailable cannot be both set%s",
			     "");
	check_int_or_percent(&v, spec, "minAvailable");
	check_int_or_percent(&v, spec, "maxUnavailable");
	check_selector(&v, spec);
	pol = pk_vctx_string(&v, spec, "unhealthyPodEvictionPolicy", false);
	if (pol && strcmp(pol, policies[0]) != 0 && strcmp(pol, policies[1]) != 0)
		pk_vctx_fail(&v, "unhealthyPodEvictionPolicy",
			     "Unsupported value: \"%s\": supported values: \"IfHealthyBudget\", "
			     "\"AlwaysAllow\"",
			     pol);
	pk_path_pop(&v.p, old);
}

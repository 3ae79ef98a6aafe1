/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_kueue.c — static validation of the Kueue queueing kinds
 * (kueue.x-k8s.io/v1beta2): ResourceFlavor, ClusterQueue, LocalQueue,
 * Cohort and WorkloadPriorityClass, with Kueue's field paths and rules for what the queue
 * controller implements (nominal quota per flavor and resource, borrowing and lending limits within
 * a cohort, a namespace selector, the queueing strategy, a LocalQueue's ClusterQueue, a Cohort's
 * parent, flavor fungibility), and every upstream field it does not implement refused at its path
 * with why: preemption other than LowerPriority within a ClusterQueue and reclaim within a cohort,
 * fair sharing of LocalQueues and Cohorts, a fungibility preference, admission checks and stop
 * policies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "kernel/lib/macro.h"
#include "topology/topology.h"

#define MAX_RESOURCE_GROUPS 16
#define MAX_COVERED 64
#define MAX_FLAVORS 64
#define MAX_SELECTOR_REQS 64

/* A field below obj not implemented in this version: refused unless absent (or null). */
struct refused {
	const char *key;
	const char *why;
};

static void refuse_present(struct pk_vctx *v, const json_t *obj, const struct refused *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_object_get(obj, r[i].key);

		if (x && !json_is_null(x))
			pk_vctx_fail(v, r[i].key, "Forbidden: not implemented (%s)", r[i].why);
	}
}

/* stopPolicy: None (the queue runs), Hold (admits nothing new), HoldAndDrain (evicts too). */
static void check_stop_policy(struct pk_vctx *v, const json_t *spec)
{
	const char *s = pk_vctx_string(v, spec, "stopPolicy", false);

	if (s && strcmp(s, "None") != 0 && strcmp(s, "Hold") != 0 && strcmp(s, "HoldAndDrain") != 0)
		pk_vctx_fail(v, "stopPolicy",
			     "Unsupported value: \"%s\": supported values: \"None\", \"Hold\", "
			     "\"HoldAndDrain\"",
			     s);
}

static void check_name(struct pk_vctx *v, const char *key, const char *s)
{
	if (s && *s && !topo_dns_subdomain_valid(s))
		pk_vctx_fail(
		    v, key,
		    "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist "
		    "of lower case alphanumeric characters, '-' or '.', and must start and "
		    "end with an alphanumeric character",
		    s);
}

/* ---- ResourceFlavor --------------------------------------------------------------- */

static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};

static bool is_effect(const char *e)
{
	for (size_t i = 0; e && i < ELEMENTSOF(effects); i++)
		if (strcmp(e, effects[i]) == 0)
			return true;
	return false;
}

/* A label key at key of obj (required or not); returns it. */
static const char *check_label_key(struct pk_vctx *v, const json_t *obj, const char *key,
				   bool required)
{
	const char *k = pk_vctx_string(v, obj, key, required);
	char why[160];

	if (k && *k && !topo_label_key_valid(k, why, sizeof(why)))
		pk_vctx_fail(v, key, "Invalid value: %s", why);
	return k;
}

/* nodeTaints[]: a key and an effect each, as a Node's taints. */
static void check_taints(struct pk_vctx *v, const json_t *spec)
{
	json_t *taints = pk_vctx_array(v, spec, "nodeTaints", MAX_FLAVORS), *t;
	size_t i, old = pk_path_key(&v->p, "nodeTaints");

	json_array_foreach(taints, i, t)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *e;

		check_label_key(v, t, "key", true);
		pk_vctx_string(v, t, "value", false);
		e = pk_vctx_string(v, t, "effect", true);
		if (e && !is_effect(e))
			pk_vctx_fail(v, "effect",
				     "Unsupported value: \"%s\": supported values: \"NoSchedule\", "
				     "\"PreferNoSchedule\", \"NoExecute\"",
				     e);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/* tolerations[]: as a pod's (operator Equal or Exists, Exists without a value). */
static void check_tolerations(struct pk_vctx *v, const json_t *spec)
{
	json_t *tols = pk_vctx_array(v, spec, "tolerations", MAX_FLAVORS), *t;
	size_t i, old = pk_path_key(&v->p, "tolerations");

	json_array_foreach(tols, i, t)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *op, *e, *val;

		check_label_key(v, t, "key", false);
		op = pk_vctx_string(v, t, "operator", false);
		val = pk_vctx_string(v, t, "value", false);
		e = pk_vctx_string(v, t, "effect", false);
		if (op && strcmp(op, "Equal") != 0 && strcmp(op, "Exists") != 0)
			pk_vctx_fail(v, "operator",
				     "Unsupported value: \"%s\": supported values: \"Equal\", "
				     "\"Exists\"",
				     op);
		else if (op && strcmp(op, "Exists") == 0 && val && *val)
			pk_vctx_fail(
			    v, "value",
			    "Invalid value: \"%s\": value must be empty when `operator` is "
			    "'Exists'",
			    val);
		if (e && *e && !is_effect(e))
			pk_vctx_fail(v, "effect",
				     "Unsupported value: \"%s\": supported values: \"NoSchedule\", "
				     "\"PreferNoSchedule\", \"NoExecute\"",
				     e);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/*
 * A flavor's nodes: nodeLabels (a node selector its workloads get),
 * nodeTaints (only workloads that tolerate them are given the flavor),
 * tolerations (its workloads get them), topologyName (a Topology's name: its
 * workloads are placed within one domain of its levels, queues_place.c).
 */
static void validate_flavor(const json_t *obj, struct pk_vctx *v)
{
	const json_t *spec = pk_vctx_object(v, obj, "spec");
	json_t *labels, *x;
	const char *k;
	size_t old, o2;

	if (!spec)
		return;
	old = pk_path_key(&v->p, "spec");
	check_name(v, "topologyName", pk_vctx_string(v, spec, "topologyName", false));
	labels = pk_vctx_object(v, spec, "nodeLabels");
	o2 = pk_path_key(&v->p, "nodeLabels");
	json_object_foreach(labels, k, x)
	{
		char why[160];

		if (!topo_label_key_valid(k, why, sizeof(why)))
			pk_vctx_fail(v, NULL, "Invalid value: %s", why);
		else if (!json_is_string(x) ||
			 !topo_label_value_valid(json_string_value(x), why, sizeof(why)))
			pk_vctx_fail(v, NULL, "Invalid value: label value of %s", k);
	}
	pk_path_pop(&v->p, o2);
	check_taints(v, spec);
	check_tolerations(v, spec);
	pk_path_pop(&v->p, old);
}

/* ---- ClusterQueue ----------------------------------------------------------------- */

/* A metav1.LabelSelector: matchLabels strings, matchExpressions with their operators. */
static void check_selector(struct pk_vctx *v, const json_t *sel)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist"};
	json_t *ml = pk_vctx_object(v, sel, "matchLabels");
	json_t *me = pk_vctx_array(v, sel, "matchExpressions", MAX_SELECTOR_REQS), *e;
	const char *k;
	size_t i, old;
	json_t *x;

	old = pk_path_key(&v->p, "matchLabels");
	json_object_foreach(ml, k, x)
	{
		char why[160];

		if (!topo_label_key_valid(k, why, sizeof(why)))
			pk_vctx_fail(v, NULL, "Invalid value: %s", why);
		else if (!json_is_string(x) ||
			 !topo_label_value_valid(json_string_value(x), why, sizeof(why)))
			pk_vctx_fail(v, NULL, "Invalid value: label value of %s", k);
	}
	pk_path_pop(&v->p, old);
	old = pk_path_key(&v->p, "matchExpressions");
	json_array_foreach(me, i, e)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *op = pk_vctx_string(v, e, "operator", true);
		json_t *vals = pk_vctx_array(v, e, "values", MAX_SELECTOR_REQS);
		int o = -1;

		pk_vctx_string(v, e, "key", true);
		for (int n = 0; op && n < 4; n++)
			if (strcmp(op, ops[n]) == 0)
				o = n;
		if (op && o < 0)
			pk_vctx_fail(
			    v, "operator",
			    "Unsupported value: \"%s\": supported values: \"In\", \"NotIn\", "
			    "\"Exists\", \"DoesNotExist\"",
			    op);
		else if (o >= 0 && o < 2 && json_array_size(vals) == 0)
			pk_vctx_fail(v, "values",
				     "Required value: must be specified when `operator` is 'In' or "
				     "'NotIn'%s",
				     NULL);
		else if (o >= 2 && json_array_size(vals) > 0)
			pk_vctx_fail(
			    v, "values",
			    "Forbidden: may not be specified when `operator` is 'Exists' or "
			    "'DoesNotExist'%s",
			    NULL);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/*
 * A quantity of at least 0 at key of r (required or not); its value in
 * *ret_milli (-1: absent or invalid).
 */
static void check_quota(struct pk_vctx *v, const json_t *r, const char *key, bool required,
			int64_t *ret_milli)
{
	json_t *q = json_object_get(r, key);
	int64_t milli = -1;

	if (!q || json_is_null(q)) {
		if (required)
			pk_vctx_fail(v, key, "Required value%s", NULL);
	} else if (pk_quantity_of(q, &milli) < 0) {
		pk_vctx_fail(v, key, "Invalid value: %s: must be a valid quantity",
			     pk_value_text(q, v->text, sizeof(v->text)));
		milli = -1;
	} else if (milli < 0) {
		pk_vctx_fail(v, key, "Invalid value: %s: must be greater than or equal to 0",
			     pk_value_text(q, v->text, sizeof(v->text)));
	}
	*ret_milli = milli;
}

/*
 * One resource's quota: nominalQuota, and borrowingLimit and lendingLimit
 * only where there is a cohort to borrow from and lend to (Kueue's rule;
 * no_parent: the field that would name it, NULL when there is one), the
 * lending limit at most the nominal quota.
 */
static void check_resource_quota(struct pk_vctx *v, const json_t *r, const char *no_parent)
{
	int64_t nominal, borrowing, lending;

	check_quota(v, r, "nominalQuota", true, &nominal);
	check_quota(v, r, "borrowingLimit", false, &borrowing);
	check_quota(v, r, "lendingLimit", false, &lending);
	if (no_parent && json_object_get(r, "borrowingLimit"))
		pk_vctx_fail(v, "borrowingLimit", "Invalid value: must be nil when %s is empty",
			     no_parent);
	if (no_parent && json_object_get(r, "lendingLimit"))
		pk_vctx_fail(v, "lendingLimit", "Invalid value: must be nil when %s is empty",
			     no_parent);
	if (lending >= 0 && nominal >= 0 && lending > nominal)
		pk_vctx_fail(
		    v, "lendingLimit",
		    "Invalid value: %s: must be less than or equal to the nominalQuota",
		    pk_value_text(json_object_get(r, "lendingLimit"), v->text, sizeof(v->text)));
}

/* One flavor's resources[]: exactly the group's coveredResources, in order. */
static void check_flavor_resources(struct pk_vctx *v, const json_t *flavor, const json_t *covered,
				   const char *no_parent)
{
	json_t *res = pk_vctx_array(v, flavor, "resources", MAX_COVERED), *r;
	size_t i, old;

	if (json_array_size(res) != json_array_size(covered))
		pk_vctx_fail(v, "resources",
			     "Invalid value: must have the same number of resources as the "
			     "coveredResources%s",
			     NULL);
	old = pk_path_key(&v->p, "resources");
	json_array_foreach(res, i, r)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *name = pk_vctx_string(v, r, "name", true);
		const char *want = json_string_value(json_array_get(covered, i));

		if (name && want && strcmp(name, want) != 0)
			pk_vctx_fail(
			    v, "name",
			    "Invalid value: \"%s\": must match the name in coveredResources", name);
		if (json_is_object(r))
			check_resource_quota(v, r, no_parent);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/* A group's coveredResources: names, each covered by one group only (seen across groups). */
static void check_covered(struct pk_vctx *v, const json_t *covered, json_t *seen)
{
	size_t i, old = pk_path_key(&v->p, "coveredResources");
	json_t *c;

	if (json_array_size(covered) == 0)
		pk_vctx_fail(v, NULL, "Required value%s", NULL);
	json_array_foreach(covered, i, c)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *s = json_string_value(c);

		if (!s || !*s)
			pk_vctx_fail(v, NULL, "Invalid value: must be a resource name%s", NULL);
		else if (json_object_get(seen, s))
			pk_vctx_fail(v, NULL, "Duplicate value: \"%s\"", s);
		else
			json_object_set_new(seen, s, json_true());
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_group(struct pk_vctx *v, const json_t *g, json_t *seen_res, json_t *seen_flv,
			const char *no_parent)
{
	json_t *covered = pk_vctx_array(v, g, "coveredResources", MAX_COVERED);
	json_t *flavors = pk_vctx_array(v, g, "flavors", MAX_FLAVORS), *f;
	size_t i, old;

	check_covered(v, covered, seen_res);
	if (json_array_size(flavors) == 0)
		pk_vctx_fail(v, "flavors", "Required value%s", NULL);
	old = pk_path_key(&v->p, "flavors");
	json_array_foreach(flavors, i, f)
	{
		size_t o2 = pk_path_index(&v->p, i);
		const char *name = pk_vctx_string(v, f, "name", true);

		check_name(v, "name", name);
		if (name && json_object_get(seen_flv, name))
			pk_vctx_fail(v, "name", "Duplicate value: \"%s\"", name);
		else if (name)
			json_object_set_new(seen_flv, name, json_true());
		check_flavor_resources(v, f, covered, no_parent);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

static void check_resource_groups(struct pk_vctx *v, const json_t *spec, const char *no_parent)
{
	json_t *groups = pk_vctx_array(v, spec, "resourceGroups", MAX_RESOURCE_GROUPS), *g;
	json_t *seen_res = json_object(), *seen_flv = json_object();
	size_t i, old = pk_path_key(&v->p, "resourceGroups");

	json_array_foreach(groups, i, g)
	{
		size_t o2 = pk_path_index(&v->p, i);

		if (!json_is_object(g))
			pk_vctx_fail(v, NULL, "Invalid value: must be an object%s", NULL);
		else if (seen_res && seen_flv)
			check_group(v, g, seen_res, seen_flv, no_parent);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
	json_decref(seen_res);
	json_decref(seen_flv);
}

/* One of values at key of obj (absent: fine); supported lists them for the message. */
static void check_enum(struct pk_vctx *v, const json_t *obj, const char *key,
		       const char *const *values, size_t n, const char *supported)
{
	const char *x = pk_vctx_string(v, obj, key, false);
	char msg[300];

	for (size_t i = 0; x && i < n; i++)
		if (strcmp(x, values[i]) == 0)
			return;
	if (!x)
		return;
	snprintf(msg, sizeof(msg), "\"%s\": supported values: %s", x, supported);
	pk_vctx_fail(v, key, "Unsupported value: %s", msg);
}

/*
 * spec.preemption: withinClusterQueue Never or LowerPriority,
 * reclaimWithinCohort Never, LowerPriority or Any; borrowWithinCohort's
 * policy Never or LowerPriority (not with reclaimWithinCohort Never, as
 * Kueue's webhook says) and its maxPriorityThreshold an int32.
 */
static void check_preemption(struct pk_vctx *v, const json_t *spec)
{
	static const char *const within[] = {"Never", "LowerPriority"};
	static const char *const reclaim[] = {"Never", "LowerPriority", "Any"};
	const json_t *p = pk_vctx_object(v, spec, "preemption"), *b;
	size_t old;

	if (!p)
		return;
	old = pk_path_key(&v->p, "preemption");
	check_enum(v, p, "withinClusterQueue", within, 2,
		   "\"Never\", \"LowerPriority\" (LowerOrNewerEqualPriority is not implemented)");
	check_enum(v, p, "reclaimWithinCohort", reclaim, 3,
		   "\"Never\", \"LowerPriority\", \"Any\"");
	b = pk_vctx_object(v, p, "borrowWithinCohort");
	if (b) {
		size_t o2 = pk_path_key(&v->p, "borrowWithinCohort");
		const char *bp = pk_get_string(b, "policy");
		const char *rc = pk_get_string(p, "reclaimWithinCohort");
		const json_t *max = json_object_get(b, "maxPriorityThreshold");

		check_enum(v, b, "policy", within, 2, "\"Never\", \"LowerPriority\"");
		if (max && !json_is_null(max) &&
		    (!json_is_integer(max) || json_integer_value(max) < INT32_MIN ||
		     json_integer_value(max) > INT32_MAX))
			pk_vctx_fail(v, "maxPriorityThreshold",
				     "Invalid value: must be an integer (int32)%s", "");
		if (bp && strcmp(bp, "Never") != 0 && (!rc || strcmp(rc, "Never") == 0))
			pk_vctx_fail(v, "policy",
				     "Invalid value: \"%s\": reclaimWithinCohort=Never and "
				     "borrowWithinCohort.Policy!=Never",
				     bp);
		pk_path_pop(&v->p, o2);
	}
	pk_path_pop(&v->p, old);
}

/*
 * spec.flavorFungibility: whenCanBorrow and whenCanPreempt MayStopSearch or
 * TryNextFlavor (v1beta1's Borrow and Preempt are converted to
 * MayStopSearch); preference is not implemented.
 */
static void check_fungibility(struct pk_vctx *v, const json_t *spec)
{
	static const char *const values[] = {"MayStopSearch", "TryNextFlavor"};
	static const struct refused refused[] = {
	    {"preference", "a flavor that borrows is preferred to one that preempts"},
	};
	const json_t *ff = pk_vctx_object(v, spec, "flavorFungibility");
	size_t old;

	if (!ff)
		return;
	old = pk_path_key(&v->p, "flavorFungibility");
	check_enum(v, ff, "whenCanBorrow", values, 2, "\"MayStopSearch\", \"TryNextFlavor\"");
	check_enum(v, ff, "whenCanPreempt", values, 2, "\"MayStopSearch\", \"TryNextFlavor\"");
	refuse_present(v, ff, refused, ELEMENTSOF(refused));
	pk_path_pop(&v->p, old);
}

/* spec.fairSharing: a weight of at least 0 (a quantity). */
static void check_fair_sharing(struct pk_vctx *v, const json_t *spec)
{
	const json_t *fs = pk_vctx_object(v, spec, "fairSharing");
	size_t old;
	int64_t w;

	if (!fs)
		return;
	old = pk_path_key(&v->p, "fairSharing");
	check_quota(v, fs, "weight", false, &w);
	pk_path_pop(&v->p, old);
}

static void validate_cluster_queue(const json_t *obj, struct pk_vctx *v)
{
	static const struct refused refused[] = {
	    {"admissionChecksStrategy", "admission checks are not implemented"},
	    {"admissionScope", "admission scopes are not implemented"},
	};
	static const char *const strategies[] = {"StrictFIFO", "BestEffortFIFO"};
	const json_t *spec = pk_vctx_object(v, obj, "spec"), *sel;
	const char *qs, *cohort;
	size_t old;

	if (!spec)
		return;
	old = pk_path_key(&v->p, "spec");
	refuse_present(v, spec, refused, ELEMENTSOF(refused));
	check_stop_policy(v, spec);
	check_preemption(v, spec);
	check_fungibility(v, spec);
	check_fair_sharing(v, spec);
	qs = pk_vctx_string(v, spec, "queueingStrategy", false);
	if (qs && strcmp(qs, strategies[0]) != 0 && strcmp(qs, strategies[1]) != 0)
		pk_vctx_fail(v, "queueingStrategy",
			     "Unsupported value: \"%s\": supported values: \"StrictFIFO\", "
			     "\"BestEffortFIFO\"",
			     qs);
	sel = pk_vctx_object(v, spec, "namespaceSelector");
	if (sel) {
		size_t o2 = pk_path_key(&v->p, "namespaceSelector");

		check_selector(v, sel);
		pk_path_pop(&v->p, o2);
	}
	cohort = pk_vctx_string(v, spec, "cohortName", false);
	check_name(v, "cohortName", cohort);
	check_resource_groups(v, spec, cohort && *cohort ? NULL : "cohortName");
	pk_path_pop(&v->p, old);
}

/* ---- LocalQueue ------------------------------------------------------------------- */

static void validate_local_queue(const json_t *obj, struct pk_vctx *v)
{
	static const struct refused refused[] = {
	    {"fairSharing", "fair sharing is not implemented"},
	};
	const json_t *spec = pk_vctx_object(v, obj, "spec");
	size_t old;

	if (!spec) {
		pk_vctx_fail(v, "spec.clusterQueue", "Required value%s", NULL);
		return;
	}
	old = pk_path_key(&v->p, "spec");
	check_name(v, "clusterQueue", pk_vctx_string(v, spec, "clusterQueue", true));
	refuse_present(v, spec, refused, ELEMENTSOF(refused));
	check_stop_policy(v, spec);
	pk_path_pop(&v->p, old);
}

/* ---- Cohort ----------------------------------------------------------------------- */

/*
 * A Cohort: its parent (another Cohort; not itself) and its own quota,
 * which the ClusterQueues of its subtree share; it may borrow from and lend
 * to its parent's tree only when it has one.
 */
static void validate_cohort(const json_t *obj, struct pk_vctx *v)
{
	static const struct refused refused[] = {
	    {"fairSharing", "fair sharing is not implemented"},
	};
	const json_t *spec = pk_vctx_object(v, obj, "spec");
	const char *parent, *name = pk_get_string(obj, "metadata.name");
	size_t old;

	if (!spec)
		return;
	old = pk_path_key(&v->p, "spec");
	refuse_present(v, spec, refused, ELEMENTSOF(refused));
	parent = pk_vctx_string(v, spec, "parentName", false);
	check_name(v, "parentName", parent);
	if (parent && name && strcmp(parent, name) == 0)
		pk_vctx_fail(v, "parentName",
			     "Invalid value: \"%s\": a Cohort is not its own parent", parent);
	check_resource_groups(v, spec, parent && *parent ? NULL : "parentName");
	pk_path_pop(&v->p, old);
}

void pk_validate_kueue(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_vctx v = {.errs = errs};

	pk_validate_meta(obj, t, errs);
	switch (t->pk) {
	case PK_KIND_RESOURCE_FLAVOR:
		validate_flavor(obj, &v);
		break;
	case PK_KIND_CLUSTER_QUEUE:
		validate_cluster_queue(obj, &v);
		break;
	case PK_KIND_LOCAL_QUEUE:
		validate_local_queue(obj, &v);
		break;
	case PK_KIND_COHORT:
		validate_cohort(obj, &v);
		break;
	default:
		break;
	}
}

/*
 * A WorkloadPriorityClass has no spec: value (an int32, required, as Kueue's
 * CRD schema) and description at the top, as a PriorityClass has them.
 */
void pk_validate_workload_priority_class(json_t *obj, const struct pk_type *t,
					 struct pk_errors *errs)
{
	struct pk_path p = {0};
	const char *description;
	int32_t value;
	bool has = false;

	pk_validate_meta(obj, t, errs);
	if (pk_field_int32(obj, "value", &p, errs, &has, &value) && !has)
		pk_errors_add(errs, "value: Required value");
	pk_field_string(obj, "description", &p, errs, &description);
}

/* ---- queued pods -------------------------------------------------------------------- */

const char *pk_pod_queue_name(const json_t *pod)
{
	const char *q = json_string_value(
	    json_object_get(pk_get(pod, "metadata.labels"), PK_KUEUE_LABEL_QUEUE_NAME));
	const json_t *r;
	size_t i;

	json_array_foreach(pk_get(pod, "metadata.ownerReferences"), i, r)
	{
		if (json_is_true(json_object_get(r, "controller")))
			return NULL;
	}
	return q && *q ? q : NULL;
}

void pk_pod_default_queue_gate(json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec"), *gates, *g;
	size_t i;

	if (!pk_pod_queue_name(pod) || !json_is_object(spec) || pk_get_string(spec, "nodeName") ||
	    json_object_get(pk_get(pod, "metadata.annotations"), "queue.podkernel.dev/admission"))
		return;
	gates = json_object_get(spec, "schedulingGates");
	json_array_foreach(gates, i, g)
	{
		const char *name = pk_get_string(g, "name");

		if (name && strcmp(name, PK_KUEUE_ADMISSION_GATE) == 0)
			return;
	}
	if (!json_is_array(gates) &&
	    json_object_set_new(spec, "schedulingGates", gates = json_array()) < 0)
		return;
	json_array_append_new(gates, json_pack("{s:s}", "name", PK_KUEUE_ADMISSION_GATE));
}

static bool queue_gated(const json_t *pod)
{
	const json_t *g;
	size_t i;

	json_array_foreach(pk_get(pod, "spec.schedulingGates"), i, g)
	{
		const char *name = pk_get_string(g, "name");

		if (name && strcmp(name, PK_KUEUE_ADMISSION_GATE) == 0)
			return true;
	}
	return false;
}

int pk_pod_queue_user_update(const json_t *pod, const json_t *old, struct pk_errors *errs)
{
	if (!pk_pod_queue_name(old) || !queue_gated(old) || queue_gated(pod))
		return 0;
	pk_errors_add(errs, "spec.schedulingGates: Forbidden: the gate " PK_KUEUE_ADMISSION_GATE
			    " of a queued pod is removed by the queue controller when its "
			    "ClusterQueue admits it");
	return -EINVAL;
}

/* ---- Kueue's plain pod groups ------------------------------------------------------ */

#define GROUP_LABEL_PATH "metadata.labels[" PK_KUEUE_LABEL_POD_GROUP_NAME "]"
#define GROUP_COUNT_PATH "metadata.annotations[" PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL "]"
#define GROUP_BOTH                                                                                 \
	"both the '" PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL "' annotation and the '"                  \
	"" PK_KUEUE_LABEL_POD_GROUP_NAME "' label should be set"

static const char *group_label(const json_t *pod)
{
	const char *g = json_string_value(
	    json_object_get(pk_get(pod, "metadata.labels"), PK_KUEUE_LABEL_POD_GROUP_NAME));

	return g && *g ? g : NULL;
}

static const char *group_count(const json_t *pod)
{
	return json_string_value(json_object_get(pk_get(pod, "metadata.annotations"),
						 PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL));
}

int64_t pk_pod_group_total(const char *value)
{
	char *end;
	long long n;

	if (!value || !*value || (*value != '+' && (*value < '0' || *value > '9')))
		return 0;
	errno = 0;
	n = strtoll(value, &end, 10);
	return errno || *end || n < 1 || n > INT32_MAX ? 0 : (int64_t)n;
}

const char *pk_pod_kueue_group(const json_t *pod, int64_t *ret_total)
{
	const char *g = pk_pod_queue_name(pod) ? group_label(pod) : NULL;

	if (g && ret_total)
		*ret_total = pk_pod_group_total(group_count(pod));
	return g;
}

void pk_pod_default_kueue_group(json_t *pod)
{
	const char *g = pk_pod_kueue_group(pod, NULL);
	json_t *spec = json_object_get(pod, "spec");

	if (!g || !json_is_object(spec) || json_object_get(spec, "schedulingGroup") ||
	    pk_get_string(spec, "nodeName"))
		return;
	json_object_set_new(spec, "schedulingGroup", json_pack("{s:s}", "podGroupName", g));
}

void pk_validate_kueue_pod(const json_t *pod, struct pk_errors *errs)
{
	const char *g, *count, *spec_group;

	if (!pk_pod_queue_name(pod))
		return;
	g = group_label(pod);
	count = group_count(pod);
	spec_group = pk_get_string(pod, "spec.schedulingGroup.podGroupName");
	if (!g && count)
		pk_errors_add(errs, GROUP_LABEL_PATH ": Required value: " GROUP_BOTH);
	if (g && !count)
		pk_errors_add(errs, GROUP_COUNT_PATH ": Required value: " GROUP_BOTH);
	if (g && !topo_dns_subdomain_valid(g))
		pk_errors_add(errs,
			      GROUP_LABEL_PATH
			      ": Invalid value: \"%s\": a lowercase RFC 1123 "
			      "subdomain must consist of lower case alphanumeric "
			      "characters, '-' or '.', and must start and end with "
			      "an alphanumeric character",
			      g);
	if (count && !pk_pod_group_total(count))
		pk_errors_add(errs,
			      GROUP_COUNT_PATH ": Invalid value: \"%s\": group total count should "
					       "be an integer greater than zero",
			      count);
	if (g && spec_group && strcmp(g, spec_group) != 0)
		pk_errors_add(errs,
			      "spec.schedulingGroup.podGroupName: Invalid value: \"%s\": a queued "
			      "pod of Kueue's pod group \"%s\" (" GROUP_LABEL_PATH
			      ") is in the PodGroup of that name",
			      spec_group, g);
}

void pk_validate_kueue_pod_update(const json_t *pod, const json_t *old, struct pk_errors *errs)
{
	const char *was = pk_pod_queue_name(old) ? group_label(old) : NULL, *now = group_label(pod);

	if (was && (!now || strcmp(was, now) != 0))
		pk_errors_add(errs, GROUP_LABEL_PATH ": Invalid value: \"%s\": field is immutable",
			      now ? now : "");
}

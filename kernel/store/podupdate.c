/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podupdate.c — what an update may change in a Pod's spec.
 *
 * kube-apiserver's pod strategy: once created, a pod's spec is immutable
 * except for containers[*].image and initContainers[*].image,
 * activeDeadlineSeconds (set once, then only lowered), tolerations (only
 * added), terminationGracePeriodSeconds (a negative value may become 1) and
 * schedulingGates (only removed).  While a pod is still gated and unbound,
 * its scheduling directives may narrow: nodeSelector entries may be added
 * and a node affinity set where there was none.  spec.nodeName is written
 * at create time or by pods/binding (pk_store_edit_batch), never by an
 * update.  A refused update is -EINVAL with messages naming the fields, as
 * "spec: Forbidden: pod updates may not change fields other than ...".
 *
 * spec.schedulingGroup is kept when an update leaves it out: clients whose
 * Pod model predates the field drop it on a read-modify-write, and the
 * field cannot change anyway.
 */
#include <errno.h>
#include <string.h>

#include "kernel/store/store-internal.h"

#define POD_MUTABLE_FIELDS                                                                         \
	"`spec.containers[*].image`,`spec.initContainers[*].image`,"                               \
	"`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "             \
	"tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "        \
	"was previously negative),`spec.schedulingGates` (only deletion)"

/* containers[i].image of the new spec checked, then copied back from old for the diff. */
static void images_unify(json_t *nspec, json_t *ospec, const char *list, struct pk_errors *errs)
{
	json_t *nl = json_object_get(nspec, list), *ol = json_object_get(ospec, list);
	size_t i;
	json_t *c;

	if (!json_is_array(nl) || !json_is_array(ol) || json_array_size(nl) != json_array_size(ol))
		return;
	json_array_foreach(nl, i, c)
	{
		json_t *img = json_object_get(c, "image");
		json_t *oc = json_array_get(ol, i);

		if (!json_is_object(c) || !json_is_object(oc))
			continue;
		if (!json_is_string(img) || !*json_string_value(img))
			pk_errors_add(errs, "spec.%s[%zu].image: Required value", list, i);
		if (json_object_get(oc, "image"))
			json_object_set(c, "image", json_object_get(oc, "image"));
		else
			json_object_del(c, "image");
	}
}

static void field_unify(json_t *nspec, json_t *ospec, const char *key)
{
	json_t *v = json_object_get(ospec, key);

	if (v)
		json_object_set(nspec, key, v);
	else
		json_object_del(nspec, key);
}

static void deadline_check(json_t *nspec, json_t *ospec, struct pk_errors *errs)
{
	json_t *n = json_object_get(nspec, "activeDeadlineSeconds");
	json_t *o = json_object_get(ospec, "activeDeadlineSeconds");

	if (o && !n)
		pk_errors_add(errs, "spec.activeDeadlineSeconds: Invalid value: \"null\": must not "
				    "update from a positive integer to nil value");
	else if (o && n && json_integer_value(n) > json_integer_value(o))
		pk_errors_add(errs,
			      "spec.activeDeadlineSeconds: Invalid value: %lld: must be less than "
			      "or equal to previous value",
			      (long long)json_integer_value(n));
	field_unify(nspec, ospec, "activeDeadlineSeconds");
}

static bool array_has(json_t *arr, json_t *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i, x) if (json_equal(x, v)) return true;
	return false;
}

/* Every old toleration stays; new ones may be added. */
static void tolerations_check(json_t *nspec, json_t *ospec, struct pk_errors *errs)
{
	json_t *n = json_object_get(nspec, "tolerations"),
	       *o = json_object_get(ospec, "tolerations");
	size_t i;
	json_t *t;

	json_array_foreach(o, i, t) if (!array_has(n, t))
	{
		pk_errors_add(errs, "spec.tolerations: Forbidden: existing toleration can not be "
				    "modified except its tolerationSeconds");
		break;
	}
	field_unify(nspec, ospec, "tolerations");
}

/* Gates may only go. */
static void gates_check(json_t *nspec, json_t *ospec, struct pk_errors *errs)
{
	json_t *n = json_object_get(nspec, "schedulingGates"),
	       *o = json_object_get(ospec, "schedulingGates");
	size_t i;
	json_t *g;

	json_array_foreach(n, i, g) if (!array_has(o, g))
	{
		const char *name = json_string_value(json_object_get(g, "name"));

		pk_errors_add(
		    errs,
		    "spec.schedulingGates: Forbidden: only deletion is allowed, but found "
		    "new scheduling gate '%s'",
		    name ? name : "");
		break;
	}
	field_unify(nspec, ospec, "schedulingGates");
}

static void grace_check(json_t *nspec, json_t *ospec)
{
	json_t *n = json_object_get(nspec, "terminationGracePeriodSeconds"),
	       *o = json_object_get(ospec, "terminationGracePeriodSeconds");

	if (json_is_integer(o) && json_integer_value(o) < 0 && json_is_integer(n) &&
	    json_integer_value(n) == 1)
		field_unify(nspec, ospec, "terminationGracePeriodSeconds");
}

/* Mutable scheduling directives of a gated, unbound pod: only narrowing. */
static void gated_directives(json_t *nspec, json_t *ospec, struct pk_errors *errs)
{
	json_t *ns = json_object_get(nspec, "nodeSelector"),
	       *os = json_object_get(ospec, "nodeSelector");
	const char *k;
	json_t *v;

	if (!json_array_size(json_object_get(ospec, "schedulingGates")))
		return;
	json_object_foreach(os, k, v)
	{
		if (!json_equal(json_object_get(ns, k), v)) {
			pk_errors_add(errs,
				      "spec.nodeSelector: Invalid value: only additions to "
				      "spec.nodeSelector are allowed (no mutations or deletions)");
			break;
		}
	}
	field_unify(nspec, ospec, "nodeSelector");
	if (!json_object_get(json_object_get(ospec, "affinity"), "nodeAffinity")) {
		json_t *na = json_object_get(json_object_get(nspec, "affinity"), "nodeAffinity");
		json_t *oa = json_object_get(ospec, "affinity");
		json_t *merged = json_is_object(oa) ? json_deep_copy(oa) : json_object();

		if (na)
			json_object_set(merged, "nodeAffinity", na);
		if (json_equal(merged, json_object_get(nspec, "affinity")) || !na)
			field_unify(nspec, ospec, "affinity");
		json_decref(merged);
	}
}

int pk_pod_update_check(json_t *next, const json_t *old, struct pk_errors *errs)
{
	json_t *ospec = json_object_get(old, "spec"), *nspec = json_object_get(next, "spec");
	json_t *cmp;
	size_t before = errs->n;

	pk_validate_kueue_pod_update(next, old, errs);
	if (!json_is_object(ospec) || !json_is_object(nspec))
		return errs->n > before ? -EINVAL : 0; /* the validator names a missing spec */
	if (!json_object_get(nspec, "schedulingGroup") && json_object_get(ospec, "schedulingGroup"))
		json_object_set(nspec, "schedulingGroup",
				json_object_get(ospec, "schedulingGroup"));
	cmp = json_deep_copy(nspec);
	if (!cmp)
		return -ENOMEM;
	images_unify(cmp, ospec, "containers", errs);
	images_unify(cmp, ospec, "initContainers", errs);
	deadline_check(cmp, ospec, errs);
	tolerations_check(cmp, ospec, errs);
	gates_check(cmp, ospec, errs);
	grace_check(cmp, ospec);
	if (!json_object_get(ospec, "nodeName"))
		gated_directives(cmp, ospec, errs);
	if (!json_equal(cmp, ospec)) {
		const char *on = json_string_value(json_object_get(ospec, "nodeName"));
		const char *nn = json_string_value(json_object_get(cmp, "nodeName"));

		if ((on || nn) && (!on || !nn || strcmp(on, nn) != 0))
			pk_errors_add(errs, "spec.nodeName: Forbidden: a pod is bound through "
					    "pods/binding, never by an update");
		pk_errors_add(errs,
			      "spec: Forbidden: pod updates may not change fields other than %s",
			      POD_MUTABLE_FIELDS);
	}
	json_decref(cmp);
	return errs->n > before ? -EINVAL : 0;
}

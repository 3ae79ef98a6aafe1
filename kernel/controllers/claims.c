/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claims.c — the resource claim controller kube-controller-manager runs in a
 * cluster, for standalone podkerneld: a pod claim that names a
 * ResourceClaimTemplate gets a ResourceClaim made from the template, and the
 * pod's status.resourceClaimStatuses records its name.
 *
 * The claim is generated as upstream makes it: generateName
 * "<pod>-<pod claim>-", the template's labels and annotations, the
 * annotation resource.kubernetes.io/pod-claim-name naming the pod claim, a
 * controlling ownerReference to the pod (so the garbage collector deletes it
 * with the pod) and the template's spec.spec.  A claim this pod already owns
 * for that pod claim (made before a restart cut the status write short) is
 * used again rather than made twice.  A template that does not exist makes
 * nothing: the pod waits, its condition naming the template.
 *
 * A PodGroup's spec.resourceClaims (KEP-6089: claims its pods share) are
 * served the same way: one claim per PodGroup, generateName
 * "<group>-<group claim>-", the same annotation naming the group's claim, a
 * controlling ownerReference to the PodGroup (deleted with the group), and
 * the group's status.resourceClaimStatuses recording it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/log.h"
#include "kernel/controllers/controllers-internal.h"

#define POD_CLAIM_ANNOTATION "resource.kubernetes.io/pod-claim-name"

static bool has_status(const json_t *pod, const char *name)
{
	json_t *x;
	size_t i;

	json_array_foreach(pk_get(pod, "status.resourceClaimStatuses"), i, x)
	{
		const char *n = pk_get_string(x, "name");

		if (n && strcmp(n, name) == 0)
			return true;
	}
	return false;
}

bool ctl_needs_claims(const json_t *pod)
{
	json_t *pc;
	size_t i;

	if (pk_get(pod, "metadata.deletionTimestamp"))
		return false;
	json_array_foreach(pk_get(pod, "spec.resourceClaims"), i, pc)
	{
		const char *name = pk_get_string(pc, "name");

		if (name && pk_get_string(pc, "resourceClaimTemplateName") &&
		    !has_status(pod, name))
			return true;
	}
	return false;
}

/* The claim pod (uid) already owns for pod claim name, or NULL. */
static const char *owned_claim(const json_t *claims, const char *uid, const char *name)
{
	json_t *c, *ref;
	size_t i, k;

	json_array_foreach(claims, i, c)
	{
		const char *pcn = json_string_value(
		    json_object_get(pk_get(c, "metadata.annotations"), POD_CLAIM_ANNOTATION));

		if (!pcn || strcmp(pcn, name) != 0)
			continue;
		json_array_foreach(pk_get(c, "metadata.ownerReferences"), k, ref)
		{
			const char *ru = pk_get_string(ref, "uid");

			if (json_is_true(json_object_get(ref, "controller")) && ru &&
			    strcmp(ru, uid) == 0)
				return pk_name(c);
		}
	}
	return NULL;
}

/* A claim for claim name of pod (a Pod or a PodGroup) from template tmpl; its name in *ret. */
static int make_claim(struct pk_ctl *ctl, const json_t *pod, const char *name, const char *tmpl,
		      char **ret)
{
	const char *ns = pk_namespace(pod), *kind = pk_get_string(pod, "kind") ?: "Pod";
	json_t *t = NULL, *claim;
	const json_t *out;
	const struct pk_write_result *res = NULL;
	size_t n = 0;
	char prefix[300];
	int r = pk_store_get(ctl->store, &pk_type_resource_claim_template, ns, tmpl, &t);

	if (r < 0) {
		ctl_log(ctl, 1, "%s %s/%s: claim %s: ResourceClaimTemplate %s/%s: %s", kind, ns,
			pk_name(pod), name, ns, tmpl, pk_errno_text(r));
		return r;
	}
	snprintf(prefix, sizeof(prefix), "%s-%s-", pk_name(pod), name);
	claim = pk_claim_from_template(pod, name, t, NULL, prefix);
	json_decref(t);
	if (!claim)
		return -ENOMEM;
	r = pk_writer_batch_begin(ctl->writer);
	if (r == 0)
		r = pk_writer_create(ctl->writer, &pk_type_resource_claim, claim);
	json_decref(claim);
	if (r == 0)
		r = ctl_commit(ctl, &res, &n);
	if (r == 0 && (n != 1 || res[0].error < 0))
		r = n != 1 ? -EIO : res[0].error;
	if (r < 0) {
		ctl_log(ctl, 1, "%s %s/%s: claim %s from template %s: %s%s%s", kind, ns,
			pk_name(pod), name, tmpl, pk_write_strerror(r),
			n == 1 && res[0].message ? ": " : "",
			n == 1 && res[0].message ? res[0].message : "");
		return r;
	}
	out = res[0].object;
	*ret = strdup(pk_name(out) ?: "");
	return *ret ? 0 : -ENOMEM;
}

int ctl_claims_reconcile(struct pk_ctl *ctl, enum pk_kind kind, const char *ns, const char *name)
{
	json_t *pod = NULL, *claims = NULL, *statuses, *pc, *status;
	const char *uid;
	size_t i, made = 0;
	int r = pk_store_get(ctl->store, pk_type_of(kind), ns, name, &pod);

	if (r < 0 || !ctl_needs_claims(pod) || !(uid = pk_get_string(pod, "metadata.uid"))) {
		json_decref(pod);
		return r == -ENOENT ? 0 : r;
	}
	if (pk_store_list(ctl->store, &pk_type_resource_claim, ns, NULL, &claims, NULL, NULL) < 0)
		claims = json_array();
	statuses = json_deep_copy(pk_get(pod, "status.resourceClaimStatuses"));
	if (!json_is_array(statuses)) {
		json_decref(statuses);
		statuses = json_array();
	}
	json_array_foreach(pk_get(pod, "spec.resourceClaims"), i, pc)
	{
		const char *pcn = pk_get_string(pc, "name"),
			   *tmpl = pk_get_string(pc, "resourceClaimTemplateName"), *have;
		char *made_name = NULL;

		if (!pcn || !tmpl || has_status(pod, pcn))
			continue;
		have = owned_claim(claims, uid, pcn);
		if (have)
			made_name = strdup(have);
		else if (make_claim(ctl, pod, pcn, tmpl, &made_name) < 0)
			continue;
		if (made_name)
			json_array_append_new(statuses, json_pack("{s:s, s:s}", "name", pcn,
								  "resourceClaimName", made_name));
		free(made_name);
		made++;
	}
	r = 0;
	if (made) {
		/* under the pod's resourceVersion: a pod changed since is read again */
		struct pk_write_ref ref = ctl_ref_of(pk_type_of(kind), pod);

		status = json_deep_copy(pk_get(pod, "status"));
		if (!json_is_object(status)) {
			json_decref(status);
			status = json_object();
		}
		r = status ? json_object_set(status, "resourceClaimStatuses", statuses) : -ENOMEM;
		if (r == 0)
			r = ctl_status(ctl, &ref, status, NULL);
		else
			r = -ENOMEM;
		json_decref(status);
		if (r == -PK_WRITE_ECONFLICT)
			r = ctl_queue_reconcile(ctl, kind, ns, name);
		else if (r < 0)
			ctl_log(ctl, 1, "%s %s/%s: status.resourceClaimStatuses: %s",
				pk_kind_to_string(kind), ns, name, pk_write_strerror(r));
	}
	json_decref(statuses);
	json_decref(claims);
	json_decref(pod);
	return r;
}

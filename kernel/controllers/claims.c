/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claims.c — the resource claim controller kube-controller-manager runs in a
 * cluster, for standalone podkerneld and for the offline runs (podctl
 * schedule, the queue controller's placement check): a pod claim that names
 * a ResourceClaimTemplate gets a ResourceClaim made from the template, and
 * the pod's status.resourceClaimStatuses records its name.
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
 *
 * One core decides what a pod lacks (complete_status()); where it reads
 * templates and how it makes a claim are the caller's.  Standalone reads the
 * store and writes each claim as a batch of its own, as the store names it;
 * an offline run (pk_claims_pass()) reads its objects and writes every claim
 * and status in one batch of the run's in-memory writer, a claim named by
 * five characters derived from the owner's namespace, name and claim, so a
 * run is reproducible.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/hash.h"
#include "kernel/lib/log.h"
#include "kernel/controllers/controllers-internal.h"

#define POD_CLAIM_ANNOTATION "resource.kubernetes.io/pod-claim-name"

/*
 * Makes the claim of pod claim pcn of pod from template tmpl (a name in its
 * namespace); its name, new, in *ret_name.  An error leaves that claim out
 * (the pod waits).
 */
typedef int (*claim_make_fn)(void *arg, const json_t *pod, const char *pcn, const char *tmpl,
			     char **ret_name);

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
	json_t *pcs = json_object_get(json_object_get(pod, "spec"), "resourceClaims"), *pc;
	size_t i;

	/* every pod of an offline run is asked: most have no claims, looked at first */
	if (!json_array_size(pcs) ||
	    json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
		return false;
	json_array_foreach(pcs, i, pc)
	{
		const char *name = pk_get_string(pc, "name");

		if (name && pk_get_string(pc, "resourceClaimTemplateName") &&
		    !has_status(pod, name))
			return true;
	}
	return false;
}

/*
 * The claim pod (uid; NULL: none) already owns for pod claim name among
 * claims (objects of any kind: only ResourceClaims of namespace ns count), or
 * NULL.
 */
static const char *owned_claim(const json_t *claims, const char *ns, const char *uid,
			       const char *name)
{
	json_t *c, *ref;
	size_t i, k;

	json_array_foreach(uid ? claims : NULL, i, c)
	{
		const char *pcn = json_string_value(
		    json_object_get(pk_get(c, "metadata.annotations"), POD_CLAIM_ANNOTATION));

		if (!pcn || strcmp(pcn, name) != 0 || pk_kind_of(c) != PK_KIND_RESOURCE_CLAIM ||
		    strcmp(pk_namespace(c), ns) != 0)
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

/* A copy of pod's status (an empty one when it has none) with statuses as its claims'. */
static json_t *status_with(const json_t *pod, json_t *statuses)
{
	json_t *status = json_deep_copy(pk_get(pod, "status"));

	if (!json_is_object(status)) {
		json_decref(status);
		status = json_object();
	}
	if (status && json_object_set(status, "resourceClaimStatuses", statuses) < 0) {
		json_decref(status);
		return NULL;
	}
	return status;
}

/*
 * pod's status with every pod claim that names a template and is not
 * recorded there recorded: the claim pod already owns for it (among claims),
 * else the one make() makes.  A new status in *ret_status, NULL when nothing
 * was recorded.  -ENOMEM.
 */
static int complete_status(const json_t *pod, const json_t *claims, claim_make_fn make, void *arg,
			   json_t **ret_status)
{
	const char *uid = pk_get_string(pod, "metadata.uid");
	json_t *statuses = json_deep_copy(pk_get(pod, "status.resourceClaimStatuses")), *pc;
	size_t i, made = 0;
	int r = 0;

	if (!json_is_array(statuses)) {
		json_decref(statuses);
		statuses = json_array();
	}
	json_array_foreach(statuses ? pk_get(pod, "spec.resourceClaims") : NULL, i, pc)
	{
		const char *pcn = pk_get_string(pc, "name"),
			   *tmpl = pk_get_string(pc, "resourceClaimTemplateName"), *have;
		char *name = NULL;

		if (!pcn || !tmpl || has_status(pod, pcn))
			continue;
		have = owned_claim(claims, pk_namespace(pod), uid, pcn);
		if (have)
			name = strdup(have);
		else if (make(arg, pod, pcn, tmpl, &name) < 0)
			continue;
		if (!name ||
		    json_array_append_new(statuses, json_pack("{s:s, s:s}", "name", pcn,
							      "resourceClaimName", name)) < 0)
			r = -ENOMEM;
		free(name);
		made++;
	}
	*ret_status = NULL;
	if (!statuses)
		r = -ENOMEM;
	else if (r == 0 && made && !(*ret_status = status_with(pod, statuses)))
		r = -ENOMEM;
	json_decref(statuses);
	return r;
}

/* ---- standalone: the store ----------------------------------------------------- */

/* A claim for claim name of pod (a Pod or a PodGroup) from template tmpl, named by the store. */
static int store_make(void *arg, const json_t *pod, const char *name, const char *tmpl, char **ret)
{
	struct pk_ctl *ctl = arg;
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
	json_t *pod = NULL, *claims = NULL, *status = NULL;
	int r = pk_store_get(ctl->store, pk_type_of(kind), ns, name, &pod);

	if (r < 0 || !ctl_needs_claims(pod) || !pk_get_string(pod, "metadata.uid")) {
		json_decref(pod);
		return r == -ENOENT ? 0 : r;
	}
	if (pk_store_list(ctl->store, &pk_type_resource_claim, ns, NULL, &claims, NULL, NULL) < 0)
		claims = json_array();
	r = complete_status(pod, claims, store_make, ctl, &status);
	if (r == 0 && status) {
		/* under the pod's resourceVersion: a pod changed since is read again */
		struct pk_write_ref ref = ctl_ref_of(pk_type_of(kind), pod);

		r = ctl_status(ctl, &ref, status, NULL);
		if (r == -PK_WRITE_ECONFLICT)
			r = ctl_queue_reconcile(ctl, kind, ns, name);
		else if (r < 0)
			ctl_log(ctl, 1, "%s %s/%s: status.resourceClaimStatuses: %s",
				pk_kind_to_string(kind), ns, name, pk_write_strerror(r));
	}
	json_decref(status);
	json_decref(claims);
	json_decref(pod);
	return r;
}

/* ---- offline: a run's objects and its in-memory writer ---------------------------- */

struct offline_claims {
	const json_t *objects;
	struct pk_writer *w;
	int error; /* the first failure but a missing template: the run's */
};

static const json_t *find_template(const json_t *objects, const char *ns, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o) if (pk_kind_of(o) == PK_KIND_RESOURCE_CLAIM_TEMPLATE &&
					      strcmp(pk_namespace(o), ns) == 0 &&
					      strcmp(pk_name(o) ?: "", name) == 0) return o;
	return NULL;
}

/*
 * The claim of claim pcn of pod from template tmpl of the run's objects, into
 * the open batch: named "<pod>-<claim>-" and five characters derived from
 * the pod's namespace, name and claim.  -ENOENT without the template.
 */
static int offline_make(void *arg, const json_t *pod, const char *pcn, const char *tmpl,
			char **ret_name)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	struct offline_claims *o = arg;
	const json_t *t = find_template(o->objects, pk_namespace(pod), tmpl);
	uint64_t h =
	    pk_fnv1a(pk_fnv1a(pk_fnv1a(PK_FNV1A_INIT, pk_namespace(pod)), pk_name(pod)), pcn);
	char name[320], suffix[6];
	json_t *c;
	int r;

	if (!t)
		return -ENOENT;
	for (int i = 0; i < 5; i++, h /= sizeof(alphabet) - 1)
		suffix[i] = alphabet[h % (sizeof(alphabet) - 1)];
	suffix[5] = '\0';
	snprintf(name, sizeof(name), "%s-%s-%s", pk_name(pod), pcn, suffix);
	if (!(c = pk_claim_from_template(pod, pcn, t, name, NULL)))
		return -ENOMEM;
	r = pk_writer_create(o->w, &pk_type_resource_claim, c);
	json_decref(c);
	if (r == 0 && !(*ret_name = strdup(name)))
		r = -ENOMEM;
	if (r < 0 && !o->error)
		o->error = r;
	return r;
}

/* pod's claims and the status recording them, into the open batch. */
static int offline_pod(struct offline_claims *o, const json_t *pod, enum pk_kind kind)
{
	struct pk_write_ref ref = {0};
	json_t *status = NULL;
	int r;

	if (!ctl_needs_claims(pod))
		return 0;
	ref = (struct pk_write_ref){
	    .kind = pk_type_of(kind), .ns = pk_namespace(pod), .name = pk_name(pod)};
	r = complete_status(pod, o->objects, offline_make, o, &status);
	if (r == 0)
		r = o->error;
	if (r == 0 && status)
		r = pk_writer_status(o->w, &ref, status);
	json_decref(status);
	return r;
}

/*
 * Whether pod, the object at i of a pass, is one seen (its pointer, still
 * held) needing no claim: an object is changed by a copy in its place, so
 * the same pointer is the same pod, and what it needs is its own.
 */
static bool seen_clean(const struct pk_claims_seen *seen, size_t i, const json_t *pod)
{
	return seen && i < seen->n && seen->pods[i] == pod;
}

/* pods (n, NULL where a pod needs claims or an object is not one) as seen. */
static void seen_keep(struct pk_claims_seen *seen, json_t **pods, size_t n)
{
	pk_claims_seen_clear(seen);
	seen->pods = pods;
	seen->n = n;
}

void pk_claims_seen_clear(struct pk_claims_seen *seen)
{
	if (!seen)
		return;
	for (size_t i = 0; i < seen->n; i++)
		json_decref(seen->pods[i]);
	free(seen->pods);
	seen->pods = NULL;
	seen->n = 0;
}

int pk_claims_pass(void *arg, json_t *objects, struct pk_writer *w)
{
	struct offline_claims o = {objects, w, 0};
	struct pk_claims_seen *seen = arg;
	const struct pk_write_batch *batch = pk_writer_batch(w);
	const struct pk_write_result *res = NULL;
	size_t n = json_array_size(objects), nres = 0;
	/* the kinds an in-memory writer keeps from run to run, when it writes objects */
	const enum pk_kind *kinds = pk_writer_memory_kinds(w, objects);
	json_t **clean = seen && n ? calloc(n, sizeof(*clean)) : NULL;
	int r = seen && n && !clean ? -ENOMEM : pk_writer_batch_begin(w);

	for (size_t i = 0; r == 0 && i < n; i++) {
		json_t *pod = json_array_get(objects, i);
		enum pk_kind kind = kinds ? kinds[i] : pk_kind_of(pod);

		if (kind != PK_KIND_POD && kind != PK_KIND_POD_GROUP)
			continue;
		if (seen_clean(seen, i, pod) || !ctl_needs_claims(pod)) {
			if (clean)
				clean[i] = json_incref(pod);
			continue;
		}
		r = offline_pod(&o, pod, kind);
	}
	if (seen && r == 0)
		seen_keep(seen, clean, n);
	else if (clean) {
		for (size_t i = 0; i < n; i++)
			json_decref(clean[i]);
		free(clean);
	}
	if (r == 0 && pk_writer_batch_size(w))
		r = pk_writer_batch_commit(w, &res, &nres);
	for (size_t i = 0; r == 0 && i < nres; i++)
		if (res[i].error < 0 && !(batch->items[i].create && res[i].error == -EEXIST))
			r = res[i].error == -PK_WRITE_ECONFLICT ? -ESTALE : res[i].error;
	return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gc.c — the store's part of garbage collection: orphaning.
 *
 * A delete with propagationPolicy Orphan (or orphanDependents true) leaves
 * the owner's dependents in place and removes, from each of them, the
 * ownerReferences that name the owner's uid, as kube-controller-manager's
 * garbage collector does before it lets the owner go.  Here it happens in
 * the delete's own transaction, so a client that sees the owner gone also
 * sees the dependents free.  Dependents are looked for where upstream allows
 * them: in the owner's namespace for a namespaced owner, among the
 * cluster-scoped objects for a cluster-scoped one.  Background and
 * Foreground deletion of dependents is the appliance's collector
 * (kernel/appliance/controllers.c).
 */
#include <errno.h>
#include <string.h>

#include "kernel/store/store-internal.h"

/* Drop obj's references to uid; true when there were any. */
static bool drop_refs(json_t *obj, const char *uid)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *refs = json_object_get(meta, "ownerReferences");
	bool dropped = false;

	for (size_t i = json_array_size(refs); i-- > 0;) {
		const char *ruid =
		    json_string_value(json_object_get(json_array_get(refs, i), "uid"));

		if (ruid && strcmp(ruid, uid) == 0) {
			json_array_remove(refs, i);
			dropped = true;
		}
	}
	if (dropped && json_array_size(refs) == 0)
		json_object_del(meta, "ownerReferences");
	return dropped;
}

static int orphan_kind(struct pk_store *st, struct txn *tx, const char *kind, const char *ns,
		       const char *uid)
{
	json_t *names = pk_store_db_names(st, kind, ns), *n;
	size_t i;
	int rc = 0;

	json_array_foreach(names, i, n)
	{
		json_t *obj = pk_store_db_get(st, kind, ns, json_string_value(n));

		if (obj && drop_refs(obj, uid))
			rc = pk_store_txn_put(st, tx, obj, PK_EVENT_MODIFIED);
		json_decref(obj);
		if (rc < 0)
			break;
	}
	json_decref(names);
	return rc;
}

int pk_store_orphan_dependents(struct pk_store *st, struct txn *tx, const struct pk_type *t,
			       const json_t *owner)
{
	const char *uid = pk_store_meta_str(owner, "uid");
	const char *ns = pk_store_ns_key(t, pk_store_meta_str(owner, "namespace"));
	int rc = 0;

	if (!uid || !*uid)
		return 0;
	for (const struct pk_type *d = pk_types; rc == 0 && d->kind; d++)
		if (d->namespaced == t->namespaced)
			rc = orphan_kind(st, tx, d->kind, ns, uid);
	return rc;
}

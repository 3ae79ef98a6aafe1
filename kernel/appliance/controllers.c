/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controllers.c — Jobs and JobSets stored through the API become the
 * Workload, groups and pods they compile into, and owned objects whose owner
 * is gone are deleted.
 *
 * A reconcile runs the builder's controller (kernel/builder/builder.h) on the
 * stored object and creates, in the builder's order (Workload, parent groups
 * before children, pods last), every object that does not exist yet; objects
 * that exist are left alone (the builder's output is a pure function of the
 * owner, and scheduling state lives in them).  Objects the owner controls but
 * the builder no longer emits (a smaller parallelism) are deleted.  Garbage
 * collection lists the owned kinds and deletes every object whose controller
 * ownerReference names an owner that is missing or has another uid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance-internal.h"
#include "kernel/builder/builder.h"

/* Kinds a controller may own. */
static const char *const owned_kinds[] = {"Workload", "CompositePodGroup", "PodGroup", "Job",
					  "Pod"};

struct lookup_ctx {
	struct pk_appliance *app;
	json_t *held; /* keeps looked-up objects alive for the builder */
};

static json_t *lookup(void *userdata, enum pk_kind kind, const char *ns, const char *name)
{
	struct lookup_ctx *l = userdata;
	json_t *obj = NULL;

	if (pk_store_get(l->app->store, pk_kind_to_string(kind), ns, name, &obj) < 0)
		return NULL;
	json_array_append_new(l->held, obj);
	return obj;
}

static const json_t *controller_ref(const json_t *obj)
{
	json_t *refs = pk_get(obj, "metadata.ownerReferences"), *r;
	size_t i;

	json_array_foreach(refs, i, r) if (json_is_true(json_object_get(r, "controller"))) return r;
	return NULL;
}

static void log_errors(struct pk_appliance *app, const char *what, const struct pk_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		ap_log(app, 1, "%s: %s", what, errs->msg[i]);
}

static int create_missing(struct pk_appliance *app, json_t *objects, const char *what)
{
	size_t i;
	json_t *obj;
	int first = 0;

	json_array_foreach(objects, i, obj)
	{
		struct pk_errors errs = {0};
		json_t *out = NULL;
		const char *kind = json_string_value(json_object_get(obj, "kind"));
		int r = pk_store_create(app->store, obj, &errs, &out);

		if (r == 0) {
			AP_COUNT(app, objects_created);
			ap_log(app, 2, "%s: created %s %s/%s", what, kind, pk_namespace(out),
			       pk_name(out));
		} else if (r != -EEXIST) {
			log_errors(app, what, &errs);
			ap_log(app, 1, "%s: creating %s %s: %s", what, kind ? kind : "?",
			       pk_name(obj) ? pk_name(obj) : "?", strerror(-r));
			if (!first)
				first = r;
		}
		json_decref(out);
		pk_errors_clear(&errs);
	}
	return first;
}

static bool emitted(const json_t *objects, const char *kind, const char *name)
{
	size_t i;
	json_t *obj;

	json_array_foreach(objects, i, obj)
	{
		const char *k = json_string_value(json_object_get(obj, "kind"));

		if (k && strcmp(k, kind) == 0 && pk_name(obj) && strcmp(pk_name(obj), name) == 0)
			return true;
	}
	return false;
}

/* Delete what uid controls in ns that the controller no longer emits. */
static void prune(struct pk_appliance *app, const char *ns, const char *uid, const json_t *objects,
		  const char *what)
{
	for (size_t k = 0; k < sizeof(owned_kinds) / sizeof(owned_kinds[0]); k++) {
		json_t *items = NULL, *obj;
		size_t i;

		if (pk_store_list(app->store, owned_kinds[k], ns, NULL, &items, NULL, NULL) < 0)
			continue;
		json_array_foreach(items, i, obj)
		{
			const json_t *ref = controller_ref(obj);
			const char *ruid =
			    ref ? json_string_value(json_object_get(ref, "uid")) : NULL;

			if (!ruid || strcmp(ruid, uid) != 0 ||
			    emitted(objects, owned_kinds[k], pk_name(obj)))
				continue;
			if (pk_store_delete(app->store, owned_kinds[k], ns, pk_name(obj), NULL,
					    NULL, NULL) == 0) {
				AP_COUNT(app, gc_deleted);
				ap_log(app, 2, "%s: deleted %s %s/%s (no longer wanted)", what,
				       owned_kinds[k], ns, pk_name(obj));
			}
		}
		json_decref(items);
	}
}

int ap_reconcile(struct pk_appliance *app, const char *kind, const char *ns, const char *name)
{
	struct lookup_ctx l = {.app = app, .held = json_array()};
	struct wb_lookup lk = {.fn = lookup, .userdata = &l};
	struct pk_errors errs = {0};
	json_t *obj = NULL, *objects = NULL;
	char what[512];
	int r;

	if (!l.held)
		return -ENOMEM;
	snprintf(what, sizeof(what), "%s %s/%s", kind, ns, name);
	r = pk_store_get(app->store, kind, ns, name, &obj);
	if (r < 0 || pk_get(obj, "metadata.deletionTimestamp")) {
		json_decref(obj);
		json_decref(l.held);
		return r == -ENOENT ? 0 : r;
	}
	AP_COUNT(app, reconciles);
	if (pk_kind_from_string(kind) == PK_KIND_JOB)
		r = wb_job_reconcile(obj, &lk, &objects, &errs);
	else
		r = wb_jobset_reconcile(obj, &lk, &objects, &errs);
	if (r < 0) {
		AP_COUNT(app, reconcile_errors);
		log_errors(app, what, &errs);
		ap_log(app, 1, "%s: reconcile failed: %s", what, strerror(-r));
	} else {
		r = create_missing(app, objects, what);
		const char *uid = pk_get_string(obj, "metadata.uid");

		if (r == 0 && uid)
			prune(app, ns, uid, objects, what);
	}
	pk_errors_clear(&errs);
	json_decref(objects);
	json_decref(obj);
	json_decref(l.held);
	return r;
}

void ap_reconcile_owner_of(struct pk_appliance *app, const json_t *obj)
{
	const json_t *ref = controller_ref(obj);
	const char *kind = ref ? json_string_value(json_object_get(ref, "kind")) : NULL;
	const char *name = ref ? json_string_value(json_object_get(ref, "name")) : NULL;

	enum pk_kind k = pk_kind_from_string(kind);

	if (!name || (k != PK_KIND_JOB && k != PK_KIND_JOBSET))
		return;
	json_array_append_new(app->to_reconcile,
			      json_pack("[s,s,s]", kind, pk_namespace(obj), name));
}

/* Whether the owner a controller reference names exists with that uid (memoised). */
static bool owner_alive(struct pk_appliance *app, json_t *memo, const char *ns, const json_t *ref)
{
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *uid = json_string_value(json_object_get(ref, "uid"));
	char key[512];
	json_t *seen, *owner = NULL;
	bool alive;

	if (!kind || !name || !pk_type_by_kind(kind))
		return true; /* an owner this appliance does not serve: not ours to judge */
	snprintf(key, sizeof(key), "%s/%s/%s/%s", kind, ns, name, uid ? uid : "");
	seen = json_object_get(memo, key);
	if (seen)
		return json_is_true(seen);
	alive = pk_store_get(app->store, kind, ns, name, &owner) == 0 &&
		(!uid || (pk_get_string(owner, "metadata.uid") &&
			  strcmp(pk_get_string(owner, "metadata.uid"), uid) == 0));
	json_decref(owner);
	json_object_set_new(memo, key, json_boolean(alive));
	return alive;
}

int ap_collect_garbage(struct pk_appliance *app)
{
	json_t *memo = json_object();
	int deleted = 0;

	if (!memo)
		return -ENOMEM;
	for (size_t k = 0; k < sizeof(owned_kinds) / sizeof(owned_kinds[0]); k++) {
		json_t *items = NULL, *obj;
		size_t i;

		if (pk_store_list(app->store, owned_kinds[k], NULL, NULL, &items, NULL, NULL) < 0)
			continue;
		json_array_foreach(items, i, obj)
		{
			const json_t *ref = controller_ref(obj);
			const char *ns = pk_namespace(obj);

			if (!ref || owner_alive(app, memo, ns, ref))
				continue;
			if (pk_store_delete(app->store, owned_kinds[k], ns, pk_name(obj), NULL,
					    NULL, NULL) == 0) {
				deleted++;
				AP_COUNT(app, gc_deleted);
				ap_log(app, 2,
				       "garbage collection: deleted %s %s/%s (owner %s %s gone)",
				       owned_kinds[k], ns, pk_name(obj),
				       json_string_value(json_object_get(ref, "kind")),
				       json_string_value(json_object_get(ref, "name")));
				/* an owner recreated under the same name wants its objects back */
				ap_reconcile_owner_of(app, obj);
			}
		}
		json_decref(items);
	}
	json_decref(memo);
	return deleted;
}

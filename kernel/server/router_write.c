/* SPDX-License-Identifier: Apache-2.0 */
/*
 * router_write.c — what every write passes (dryRun, preconditions,
 * NodeRestriction, fieldValidation, NamespaceLifecycle) and the create,
 * update and pods/binding handlers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"
#include "kernel/server/server-router.h"

/* ---- writes: dryRun and preconditions, NodeRestriction ------------------------- */

/* The node name when NodeRestriction applies to this write (a node, its Node's main resource). */
const char *rt_restricted_node(const struct call *c)
{
	const char *node = NULL;
	if (c->r->type->pk != PK_KIND_NODE || c->r->sub ||
	    !pk_srv_admission_node_name(c->who, &node))
		return NULL;
	return node;
}

/*
 * PUT by a node: checked against the stored object, and pinned to its
 * resourceVersion so that what was checked is what gets replaced.
 */
static int admit_update(const struct call *c, json_t *obj, struct pk_errors *errs)
{
	const char *node = rt_restricted_node(c);
	if (!node)
		return 0;
	json_t *old = NULL;
	int rc = pk_store_get(c->srv->store, &pk_type_node, NULL, c->r->name, &old);
	if (rc == 0)
		rc = pk_srv_admission_node_write(node, old, obj, errs);
	json_t *meta = json_object_get(obj, "metadata");
	if (rc == 0 && !json_string_value(json_object_get(meta, "resourceVersion")))
		json_object_set(
		    meta, "resourceVersion",
		    json_object_get(json_object_get(old, "metadata"), "resourceVersion"));
	json_decref(old);
	return rc;
}

/*
 * PATCH: straight to the store, or for a node on its Node: applied here to
 * the stored object, checked, and written as an update pinned to the version
 * it was applied to (retried a few times when someone else wrote between).
 */
/*
 * A patch naming a fieldManager on an object with managedFields: applied here
 * so that the fields it changes move to that manager (apply.c), and written
 * as an update pinned to the version it was applied to (retried when someone
 * else wrote between).  -ENOEXEC: not such a patch, the store patches.
 */
static int patch_tracked(const struct call *c, enum pk_patch_type type, const json_t *patch,
			 struct pk_errors *errs, json_t **ret)
{
	const struct route *r = c->r;
	const char *manager = rt_arg(c->req, "fieldManager");
	bool pinned = json_is_string(pk_get(patch, "metadata.resourceVersion"));
	int rc = -PK_STORE_ECONFLICT;
	if (!manager || r->sub)
		return -ENOEXEC;
	for (int attempt = 0; attempt < 5 && rc == -PK_STORE_ECONFLICT; attempt++) {
		json_t *live = NULL, *next = NULL;
		char err[256] = "";
		if (pk_store_get(c->srv->store, r->type, r->ns, r->name, &live) < 0 ||
		    !json_array_size(pk_get(live, "metadata.managedFields"))) {
			json_decref(live);
			return -ENOEXEC;
		}
		rc = pk_patch_apply(live, type, patch, &next, err, sizeof(err));
		if (rc < 0 || !json_is_object(json_object_get(next, "metadata"))) {
			pk_errors_add(errs, "patch: %s", *err ? err : "metadata: Required value");
			rc = -EINVAL;
		} else {
			json_t *meta = json_object_get(next, "metadata");
			if (!pinned)
				json_object_set(meta, "resourceVersion",
						pk_get(live, "metadata.resourceVersion"));
			pk_srv_managed_update(live, next, manager);
			rc = pk_store_update_opts(c->srv->store, next, PK_SUB_MAIN, &c->wo, errs,
						  ret);
		}
		json_decref(live);
		json_decref(next);
		if (pinned)
			break;
		if (rc == -PK_STORE_ECONFLICT)
			pk_errors_clear(errs);
	}
	return rc;
}

int rt_patch_admitted(const struct call *c, enum pk_patch_type type, const json_t *patch,
		      struct pk_errors *errs, json_t **ret)
{
	const struct route *r = c->r;
	enum pk_store_sub sub = r->sub ? PK_SUB_STATUS : PK_SUB_MAIN;
	const char *node = rt_restricted_node(c);
	int rc = node ? -ENOEXEC : patch_tracked(c, type, patch, errs, ret);
	if (rc != -ENOEXEC)
		return rc;
	if (!node)
		return pk_store_patch_opts(c->srv->store, r->type, r->ns, r->name, type, patch, sub,
					   &c->wo, errs, ret);
	rc = -PK_STORE_ECONFLICT;
	for (int attempt = 0; attempt < 5 && rc == -PK_STORE_ECONFLICT; attempt++) {
		json_t *old = NULL, *next = NULL;
		char err[256] = "";
		rc = pk_store_get(c->srv->store, &pk_type_node, NULL, r->name, &old);
		if (rc == 0 &&
		    (rc = pk_patch_apply(old, type, patch, &next, err, sizeof(err))) < 0) {
			pk_errors_add(errs, "patch: %s", err);
			rc = rc == -E2BIG || rc == -ENOMEM ? rc : -EINVAL;
		}
		if (rc == 0 && !json_is_object(json_object_get(next, "metadata"))) {
			pk_errors_add(errs, "patch: metadata: Required value");
			rc = -EINVAL;
		}
		json_t *meta = rc == 0 ? json_object_get(next, "metadata") : NULL;
		bool pinned_by_client =
		    meta && json_is_string(json_object_get(json_object_get(patch, "metadata"),
							   "resourceVersion"));
		if (rc == 0) {
			json_object_set(next, "kind", json_object_get(old, "kind"));
			json_object_set(meta, "name",
					json_object_get(json_object_get(old, "metadata"), "name"));
			if (!pinned_by_client)
				json_object_set(meta, "resourceVersion",
						json_object_get(json_object_get(old, "metadata"),
								"resourceVersion"));
			rc = pk_srv_admission_node_write(node, old, next, errs);
		}
		if (rc == 0)
			rc = pk_store_update_opts(c->srv->store, next, sub, &c->wo, errs, ret);
		json_decref(old);
		json_decref(next);
		if (pinned_by_client)
			break;
	}
	return rc;
}

/*
 * PATCH of a row served in another shape than stored (an events.k8s.io
 * Event, a kueue.x-k8s.io/v1beta1 object): the patch has that shape, so it is
 * applied here to the stored object in the patch's shape, converted back and
 * written as an update pinned to the version it was applied to (retried when
 * someone else wrote between, unless the patch pins one).  The fields it
 * changes move to its field manager, as patch_tracked() does.
 */
int rt_patch_view(const struct call *c, enum pk_patch_type type, const json_t *patch,
		  struct pk_errors *errs, json_t **ret)
{
	const struct route *r = c->r;
	const char *manager = rt_arg(c->req, "fieldManager");
	bool pinned = json_is_string(pk_get(patch, "metadata.resourceVersion"));
	int rc = -PK_STORE_ECONFLICT;
	for (int attempt = 0; attempt < 5 && rc == -PK_STORE_ECONFLICT; attempt++) {
		json_t *live = NULL, *view = NULL, *next = NULL, *stored = NULL;
		char err[256] = "";
		rc = pk_store_get(c->srv->store, r->type, r->ns, r->name, &live);
		if (rc == 0 && !(view = pk_srv_view(r->type, live)))
			rc = -ENOMEM;
		if (rc == 0 &&
		    (rc = pk_patch_apply(view, type, patch, &next, err, sizeof(err))) < 0) {
			pk_errors_add(errs, "patch: %s", err);
			rc = rc == -E2BIG || rc == -ENOMEM ? rc : -EINVAL;
		}
		if (rc == 0 && !json_is_object(json_object_get(next, "metadata"))) {
			pk_errors_add(errs, "patch: metadata: Required value");
			rc = -EINVAL;
		}
		if (rc == 0 && !(stored = pk_srv_stored(r->type, next, errs)))
			rc = -ENOMEM;
		if (rc == 0 && errs->n)
			rc = -EINVAL;
		if (rc == 0) {
			json_t *meta = json_object_get(stored, "metadata");
			json_object_set(meta, "name", pk_get(live, "metadata.name"));
			if (!pinned)
				json_object_set(meta, "resourceVersion",
						pk_get(live, "metadata.resourceVersion"));
			if (manager && json_array_size(pk_get(live, "metadata.managedFields")))
				pk_srv_managed_update(live, stored, manager);
			rc = pk_store_update_opts(c->srv->store, stored,
						  r->sub ? PK_SUB_STATUS : PK_SUB_MAIN, &c->wo,
						  errs, ret);
		}
		json_decref(live);
		json_decref(view);
		json_decref(next);
		json_decref(stored);
		if (pinned)
			break;
		if (rc == -PK_STORE_ECONFLICT)
			pk_errors_clear(errs);
	}
	return rc;
}

/* fieldValidation=Strict|Warn|Ignore on a body (fieldvalidation.c): 0, or
 * -EINVAL with resp answered. */
int rt_field_validation(const struct call *c, const json_t *body, bool patch,
			struct pk_response *resp)
{
	enum pk_field_validation mode;
	const char *v = rt_arg(c->req, "fieldValidation");
	if (pk_srv_field_validation_mode(v, &mode) < 0) {
		pk_srv_respond_status(
		    resp, 400, "BadRequest", NULL, NULL, NULL,
		    "fieldValidation: Unsupported value: \"%s\": supported values: "
		    "\"Ignore\", \"Strict\", \"Warn\"",
		    v);
		return -EINVAL;
	}
	return pk_srv_field_validate(c->r->type, mode, body, c->dups, patch, resp);
}

/*
 * NamespaceLifecycle admission: content is created only in a namespace that
 * exists (404 namespaces "NS" not found); a terminating one refuses it in
 * the store (403).
 */
int rt_namespace_lifecycle(const struct call *c, const json_t *obj, struct pk_response *resp)
{
	const char *ns = c->r->ns ? c->r->ns : pk_get_string(obj, "metadata.namespace");

	if (!c->r->type->namespaced)
		return 0;
	if (!ns || !*ns)
		ns = "default";
	/* there, its row checked: not parsed for every create */
	if (pk_store_get(c->srv->store, &pk_type_namespace, NULL, ns, NULL) == 0)
		return 0;
	pk_srv_respond_status(resp, 404, "NotFound", "namespaces", ns, NULL,
			      "namespaces \"%s\" not found", ns);
	return -ENOENT;
}

void rt_do_create(const struct call *c, struct pk_response *resp)
{
	const struct pk_request *req = c->req;
	const struct route *r = c->r;
	json_t *obj;
	if (rt_parse_body_dups(req, resp, &obj, c->dups) < 0)
		return;
	if (rt_check_body_identity(r, obj, false, resp) < 0 ||
	    rt_field_validation(c, obj, false, resp) < 0 ||
	    rt_namespace_lifecycle(c, obj, resp) < 0) {
		json_decref(obj);
		return;
	}
	struct pk_errors errs = {0};
	json_t *out = NULL;
	json_t *stored = pk_srv_stored(r->type, obj, &errs);
	json_decref(obj);
	if (!(obj = stored) || errs.n) {
		rt_respond_store_error(resp, obj ? -EINVAL : -ENOMEM, r,
				       pk_get_string(obj, "metadata.name"), &errs);
		json_decref(obj);
		pk_errors_clear(&errs);
		return;
	}
	const char *name =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	char namebuf[256];
	snprintf(namebuf, sizeof(namebuf), "%s", name ? name : "");
	const char *node = rt_restricted_node(c);
	int rc = 0;
	/* Authorised again on the body as decoded here, whatever rt_body_name() read. */
	if (!pk_authorize(c->who, "create", r->type->kind, name)) {
		pk_errors_add(&errs,
			      "metadata.name: Forbidden: User \"%s\" cannot create %s \"%s\"",
			      c->who->user, r->type->plural, namebuf);
		rc = -EPERM;
	}
	if (rc == 0 && node)
		rc = pk_srv_admission_node_write(node, NULL, obj, &errs);
	/* The creator owns what it wrote (an Update entry), when it names itself. */
	if (rc == 0 && !pk_get(obj, "metadata.managedFields"))
		rc = pk_srv_managed_create(obj, rt_arg(req, "fieldManager"));
	if (rc == 0)
		rc = pk_store_create_opts(c->srv->store, obj, &c->wo, &errs, &out);
	if (rc == 0 && !out)
		out = json_incref(obj);
	json_decref(obj);
	if (rc < 0)
		rt_respond_store_error(resp, rc, r, namebuf, &errs);
	else
		pk_srv_respond_json(resp, 201, pk_srv_answer(r->type, out));
	pk_errors_clear(&errs);
}

/* A Binding naming a uid (kube-scheduler sets the pod's) must name this pod. */
static bool binding_uid_differs(const json_t *binding, const json_t *pod)
{
	const char *want = pk_get_string(binding, "metadata.uid");
	const char *have = pk_get_string(pod, "metadata.uid");

	return want && *want && (!have || strcmp(want, have) != 0);
}

/* What pods/binding writes: the node, the Binding's annotations, PodScheduled True. */
struct binding_edit {
	const char *node;
	json_t *annotations;
	bool was_bound;
};

static int binding_apply(json_t *pod, void *arg)
{
	struct binding_edit *b = arg;
	json_t *meta = json_object_get(pod, "metadata"), *have;
	const char *bound = pk_get_string(pod, "spec.nodeName");

	if (bound && *bound) {
		b->was_bound = true;
		return -PK_STORE_ECONFLICT;
	}
	if (!json_is_object(json_object_get(pod, "spec")))
		return -EINVAL;
	pk_set(pod, "spec.nodeName", json_string(b->node));
	/* kube-apiserver copies the Binding's annotations onto the pod */
	if (json_is_object(b->annotations) && json_object_size(b->annotations)) {
		have = json_object_get(meta, "annotations");
		if (!json_is_object(have)) {
			have = json_object();
			json_object_set_new(meta, "annotations", have);
		}
		json_object_update(have, b->annotations);
	}
	return pk_condition_set(pod, "PodScheduled", "True", "", "", time(NULL));
}

/*
 * pods/NAME/binding: set spec.nodeName once, in one write with the pod's
 * PodScheduled condition, as kube-apiserver's binding does (the pod's
 * generation stays: a binding is not a change of the desired state).
 */
void rt_do_binding(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		   struct pk_response *resp)
{
	json_t *body;
	if (rt_parse_body(req, resp, &body) < 0)
		return;
	const char *node =
	    json_string_value(json_object_get(json_object_get(body, "target"), "name"));
	if (!node || !*node) {
		json_decref(body);
		pk_srv_respond_status(resp, 422, "Invalid", "Binding", r->name, NULL,
				      "Binding \"%s\" is invalid: target.name: Required value",
				      r->name);
		return;
	}
	json_t *pod = NULL;
	int rc = pk_store_get(srv->store, &pk_type_pod, r->ns, r->name, &pod);
	const char *bound = rc == 0 ? pk_get_string(pod, "spec.nodeName") : NULL;
	struct binding_edit b = {.node = node, .annotations = pk_get(body, "metadata.annotations")};
	struct pk_store_edit e = {
	    .kind = &pk_type_pod, .ns = r->ns, .name = r->name, .apply = binding_apply, .arg = &b};

	if (rc == 0 && !(bound && *bound) && !binding_uid_differs(body, pod)) {
		rc = pk_store_edit_batch(srv->store, &e, 1);
		rc = rc < 0 ? rc : e.rc;
		json_decref(e.object);
		if (rc == -PK_STORE_ECONFLICT && b.was_bound) {
			json_decref(pod);
			pod = NULL;
			rc = pk_store_get(srv->store, &pk_type_pod, r->ns, r->name, &pod);
			bound = rc == 0 ? pk_get_string(pod, "spec.nodeName") : NULL;
		}
	}
	if (rc == 0 && bound && *bound) {
		pk_srv_respond_status(resp, 409, "Conflict", "pods", r->name, NULL,
				      "pod %s is already assigned to node \"%s\"", r->name, bound);
	} else if (rc == 0 && binding_uid_differs(body, pod)) {
		pk_srv_respond_status(
		    resp, 409, "Conflict", "pods", r->name, NULL,
		    "Precondition failed: UID in precondition: %s, UID in object meta: %s",
		    pk_get_string(body, "metadata.uid"), pk_get_string(pod, "metadata.uid") ?: "");
	} else if (rc == 0) {
		pk_srv_respond_json(resp, 201,
				    json_pack("{s:s,s:s,s:{},s:s,s:i}", "kind", "Status",
					      "apiVersion", "v1", "metadata", "status", "Success",
					      "code", 201));
	} else {
		rt_respond_store_error(resp, rc, r, r->name, NULL);
	}
	json_decref(pod);
	json_decref(body);
}

/* PUT or PATCH (type) of a scale subresource (scale.c); body taken. */
void rt_write_scale(const struct call *c, const enum pk_patch_type *type, json_t *body,
		    struct pk_response *resp)
{
	struct pk_errors errs = {0};
	json_t *out = NULL;
	int rc = pk_srv_scale_write(c->srv->store, c->r->type, c->r->ns, c->r->name, type, body,
				    &c->wo, &errs, &out);
	json_decref(body);
	if (rc < 0)
		rt_respond_store_error(resp, rc, c->r, c->r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_scale_view(out));
	json_decref(out);
	pk_errors_clear(&errs);
}

void rt_do_update(const struct call *c, struct pk_response *resp)
{
	const struct pk_request *req = c->req;
	const struct route *r = c->r;
	json_t *obj;
	if (rt_parse_body_dups(req, resp, &obj, c->dups) < 0)
		return;
	if (r->sub && strcmp(r->sub, "scale") == 0)
		return rt_write_scale(c, NULL, obj, resp);
	if (rt_check_body_identity(r, obj, true, resp) < 0 ||
	    rt_field_validation(c, obj, false, resp) < 0) {
		json_decref(obj);
		return;
	}
	struct pk_errors errs = {0};
	json_t *out = NULL, *live = NULL;
	json_t *stored = pk_srv_stored(r->type, obj, &errs);
	json_decref(obj);
	if (!(obj = stored) || errs.n) {
		rt_respond_store_error(resp, obj ? -EINVAL : -ENOMEM, r, r->name, &errs);
		json_decref(obj);
		pk_errors_clear(&errs);
		return;
	}
	enum pk_store_sub sub = r->sub ? PK_SUB_STATUS : PK_SUB_MAIN;
	/* The writer's manager takes over the fields it changes (managedFields). */
	if (!r->sub && rt_arg(req, "fieldManager") &&
	    pk_store_get(c->srv->store, r->type, r->ns, r->name, &live) == 0)
		pk_srv_managed_update(live, obj, rt_arg(req, "fieldManager"));
	json_decref(live);
	int rc = admit_update(c, obj, &errs);
	if (rc == 0)
		rc = pk_store_update_opts(c->srv->store, obj, sub, &c->wo, &errs, &out);
	json_decref(obj);
	if (rc < 0)
		rt_respond_store_error(resp, rc, r, r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_answer(r->type, out));
	pk_errors_clear(&errs);
}

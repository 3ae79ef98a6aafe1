/* SPDX-License-Identifier: Apache-2.0 */
/*
 * router_patch.c — PATCH: JSON patch, merge patch, strategic merge patch
 * and server-side apply (field managers and conflicts, apply.c).
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

static int patch_type_of(const char *ctype, enum pk_patch_type *ret)
{
	if (!ctype)
		return -EINVAL;
	if (strncmp(ctype, "application/merge-patch+json", 28) == 0)
		*ret = PK_PATCH_MERGE;
	else if (strncmp(ctype, "application/strategic-merge-patch+json", 38) == 0)
		*ret = PK_PATCH_STRATEGIC;
	else if (strncmp(ctype, "application/json-patch+json", 27) == 0)
		*ret = PK_PATCH_JSON;
	else
		return -EINVAL;
	return 0;
}

/* 409 as kube-apiserver words an apply conflict: one cause per field. */
static void respond_apply_conflicts(struct pk_response *resp, const struct route *r,
				    const json_t *conflicts)
{
	char msg[2048];
	size_t n = json_array_size(conflicts), i, o;
	json_t *c, *causes = json_array();
	o = (size_t)snprintf(msg, sizeof(msg), "Apply failed with %zu conflict%s: ", n,
			     n == 1 ? "" : "s");
	json_array_foreach(conflicts, i, c)
	{
		char who[300];
		snprintf(who, sizeof(who), "conflict with \"%s\" using %s",
			 json_string_value(json_object_get(c, "manager")),
			 json_string_value(json_object_get(c, "apiVersion")) ?: "");
		const char *field = json_string_value(json_object_get(c, "field"));
		if (o < sizeof(msg))
			o += (size_t)snprintf(msg + o, sizeof(msg) - o, "%s%s: %s", i ? "\n" : "",
					      who, field);
		json_array_append_new(causes,
				      json_pack("{s:s,s:s,s:s}", "reason", "FieldManagerConflict",
						"message", who, "field", field));
	}
	pk_srv_respond_json(resp, 409,
			    json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:{s:s,s:s,s:o},s:i}", "kind",
				      "Status", "apiVersion", "v1", "metadata", "status", "Failure",
				      "message", msg, "reason", "Conflict", "details", "name",
				      r->name, "kind", r->type->plural, "causes", causes, "code",
				      409));
}

/*
 * An apply is judged on the object it produces, as the write it turns into:
 * a create needs the create verb, and a node's own Node passes
 * NodeRestriction against the stored object (NULL: registration).
 */
static int admit_apply(void *arg, const json_t *live, const json_t *next, struct pk_errors *errs)
{
	const struct call *c = arg;
	const char *node = rt_restricted_node(c);
	if (!live && !pk_authorize(c->who, "create", c->r->type->kind, c->r->name)) {
		pk_errors_add(errs, "metadata.name: Forbidden: User \"%s\" cannot create %s \"%s\"",
			      c->who->user, c->r->type->plural, c->r->name);
		return -EPERM;
	}
	return node ? pk_srv_admission_node_write(node, live, next, errs) : 0;
}

/* PATCH application/apply-patch+yaml: server-side apply (apply.c). */
static void do_apply(const struct call *c, struct pk_response *resp)
{
	const struct route *r = c->r;
	const char *manager = rt_arg(c->req, "fieldManager");
	bool force = false;
	json_t *config = NULL, *out = NULL, *conflicts = NULL;
	if (!manager || !*manager || strlen(manager) > 128) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "fieldManager: Required value: is required for apply patch "
				      "(at most 128 characters)");
		return;
	}
	if (rt_arg_bool(c->req, "force", &force) < 0 ||
	    rt_parse_body_dups(c->req, resp, &config, c->dups) < 0) {
		if (!resp->status)
			pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
					      "force: a boolean is expected");
		return;
	}
	if (rt_check_body_identity(r, config, true, resp) < 0 ||
	    rt_field_validation(c, config, false, resp) < 0 ||
	    rt_namespace_lifecycle(c, config, resp) < 0) {
		json_decref(config);
		return;
	}
	if (pk_get(config, "metadata.managedFields")) {
		json_decref(config);
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "metadata.managedFields must be nil");
		return;
	}
	struct pk_errors errs = {0};
	bool created = false;
	/* an events.k8s.io Event, a kueue.x-k8s.io/v1beta1 object, is applied as stored */
	const struct pk_type *t = pk_srv_stored_type(r->type);
	json_t *stored = pk_srv_stored(r->type, config, &errs);
	struct pk_srv_apply_req q = {.store = c->srv->store,
				     .t = t,
				     .ns = r->ns,
				     .name = r->name,
				     .manager = manager,
				     .config = stored,
				     .force = force,
				     .status = r->sub != NULL,
				     .wo = &c->wo,
				     .admit = admit_apply,
				     .admit_arg = (void *)c};
	int rc = !stored  ? -ENOMEM
		 : errs.n ? -EINVAL
			  : pk_srv_apply(&q, &errs, &out, &conflicts, &created);
	json_decref(stored);
	json_decref(config);
	if (rc == -EBUSY)
		respond_apply_conflicts(resp, r, conflicts);
	else if (rc < 0)
		rt_respond_store_error(resp, rc, r, r->name, &errs);
	else
		pk_srv_respond_json(resp, created ? 201 : 200, pk_srv_answer(r->type, out));
	json_decref(conflicts);
	pk_errors_clear(&errs);
}

void rt_do_patch(const struct call *c, struct pk_response *resp)
{
	const struct pk_request *req = c->req;
	const struct route *r = c->r;
	enum pk_patch_type type;
	if (req->content_type &&
	    strncmp(req->content_type, "application/apply-patch+yaml", 28) == 0)
		return do_apply(c, resp);
	if (rt_arg_true(req, "force")) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "force: Invalid value: true: may not be specified for "
				      "non-apply patch");
		return;
	}
	if (patch_type_of(req->content_type, &type) < 0) {
		pk_srv_respond_status(
		    resp, 415, "UnsupportedMediaType", NULL, NULL, NULL,
		    "the body of the request was in an unknown format - accepted media "
		    "types include: application/json-patch+json, "
		    "application/merge-patch+json, application/strategic-merge-patch+json, "
		    "application/apply-patch+yaml");
		return;
	}
	json_t *patch;
	if (rt_parse_body_dups(req, resp, &patch, type == PK_PATCH_JSON ? NULL : c->dups) < 0)
		return;
	if (r->sub && strcmp(r->sub, "scale") == 0)
		return rt_write_scale(c, &type, patch, resp);
	/* A merge patch has the object's shape; a JSON patch's values are not checked. */
	if (type != PK_PATCH_JSON && rt_field_validation(c, patch, true, resp) < 0) {
		json_decref(patch);
		return;
	}
	struct pk_errors errs = {0};
	json_t *out = NULL;
	int rc = pk_srv_converts(r->type) ? rt_patch_view(c, type, patch, &errs, &out)
					  : rt_patch_admitted(c, type, patch, &errs, &out);
	json_decref(patch);
	if (rc < 0)
		rt_respond_store_error(resp, rc, r, r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_answer(r->type, out));
	pk_errors_clear(&errs);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * router_delete.c — DELETE with DeleteOptions (preconditions,
 * propagationPolicy, dryRun) from the body or the query, and the pods/eviction
 * subresource.
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

static int delete_options_apply(json_t *opts, struct pk_response *resp, json_t **ret_opts,
				struct pk_store_write_opts *wo);

/* DeleteOptions in a DELETE body, JSON, YAML or protobuf: dryRun and both
 * preconditions (wo borrows from *ret_opts). */
static int delete_options(const struct pk_request *req, struct pk_response *resp, json_t **ret_opts,
			  struct pk_store_write_opts *wo)
{
	*ret_opts = NULL;
	if (!req->body || !req->body_len)
		return 0;
	char err[256] = "";
	json_t *opts = NULL;
	bool proto = req->content_type && strstr(req->content_type, "protobuf");
	int rc = proto
		     ? pk_srv_proto_decode_budget(
			   req->body, req->body_len,
			   &(struct pk_srv_pb_budget){req->reserve, req->reserve_ctx}, &opts, err,
			   sizeof(err))
		     : pk_parse_document("body", req->body, req->body_len, &opts, err, sizeof(err));
	if (rc == 0 && proto && strcmp(pk_get_string(opts, "kind") ?: "", "DeleteOptions") != 0)
		snprintf(err, sizeof(err), "the body is a %s, not DeleteOptions",
			 pk_get_string(opts, "kind")),
		    rc = -EINVAL;
	if (rc < 0 || !json_is_object(opts)) {
		json_decref(opts);
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "the DeleteOptions could not be decoded: %s", err);
		return -EINVAL;
	}
	return delete_options_apply(opts, resp, ret_opts, wo);
}

/*
 * propagationPolicy (Orphan, Background, Foreground) or the older
 * orphanDependents of a DeleteOptions into wo; both at once is 422, as
 * kube-apiserver answers.
 */
static int delete_propagation(const json_t *opts, struct pk_response *resp,
			      struct pk_store_write_opts *wo)
{
	json_t *pol = json_object_get(opts, "propagationPolicy");
	json_t *orphan = json_object_get(opts, "orphanDependents");
	const char *p = json_string_value(pol);

	if (pol && !json_is_null(pol) && orphan && !json_is_null(orphan)) {
		pk_srv_respond_status(resp, 422, "Invalid", NULL, NULL, NULL,
				      "orphanDependents: Invalid value: %s: orphanDependents and "
				      "deletionPropagation cannot be both set",
				      json_is_true(orphan) ? "true" : "false");
		return -EINVAL;
	}
	if (json_is_boolean(orphan))
		wo->propagation =
		    json_is_true(orphan) ? PK_PROPAGATE_ORPHAN : PK_PROPAGATE_BACKGROUND;
	if (!pol || json_is_null(pol))
		return 0;
	if (p && strcmp(p, "Orphan") == 0)
		wo->propagation = PK_PROPAGATE_ORPHAN;
	else if (p && strcmp(p, "Background") == 0)
		wo->propagation = PK_PROPAGATE_BACKGROUND;
	else if (p && strcmp(p, "Foreground") == 0)
		wo->propagation = PK_PROPAGATE_FOREGROUND;
	else {
		pk_srv_respond_status(resp, 422, "Invalid", NULL, NULL, NULL,
				      "propagationPolicy: Unsupported value: \"%s\": supported "
				      "values: \"Foreground\", \"Background\", \"Orphan\"",
				      p ? p : "");
		return -EINVAL;
	}
	return 0;
}

/* dryRun and preconditions of a DeleteOptions tree (taken) into wo. */
static int delete_options_apply(json_t *opts, struct pk_response *resp, json_t **ret_opts,
				struct pk_store_write_opts *wo)
{
	json_t *pre = json_object_get(opts, "preconditions"),
	       *dry = json_object_get(opts, "dryRun");
	wo->precondition_rv = json_string_value(json_object_get(pre, "resourceVersion"));
	wo->precondition_uid = json_string_value(json_object_get(pre, "uid"));
	size_t i;
	json_t *v;
	if (delete_propagation(opts, resp, wo) < 0) {
		json_decref(opts);
		return -EINVAL;
	}
	if (dry && !json_is_array(dry)) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "dryRun: Invalid value: expected a list of strings");
		json_decref(opts);
		return -EINVAL;
	}
	json_array_foreach(dry, i, v)
	{
		if (!json_is_string(v) || strcmp(json_string_value(v), "All") != 0) {
			pk_srv_respond_status(
			    resp, 400, "BadRequest", NULL, NULL, NULL,
			    "dryRun[%zu]: Unsupported value: supported values: \"All\"", i);
			json_decref(opts);
			return -EINVAL;
		}
		wo->dry_run = true;
	}
	*ret_opts = opts;
	return 0;
}

/* ?propagationPolicy= and ?orphanDependents= on a DELETE, as in the body. */
static int delete_query_options(const struct pk_request *req, struct pk_response *resp,
				struct pk_store_write_opts *wo)
{
	json_t *q = json_object();
	int rc;

	for (size_t i = 0; i < req->nargs; i++) {
		const char *k = req->args[i].key, *v = req->args[i].value ? req->args[i].value : "";

		if (k && strcmp(k, "propagationPolicy") == 0)
			json_object_set_new(q, k, json_string(v));
		else if (k && strcmp(k, "orphanDependents") == 0)
			json_object_set_new(q, k, json_boolean(strcmp(v, "true") == 0));
	}
	rc = delete_propagation(q, resp, wo);
	json_decref(q);
	return rc;
}

void rt_do_delete(struct call *c, struct pk_response *resp)
{
	json_t *opts = NULL;
	if (delete_query_options(c->req, resp, &c->wo) < 0 ||
	    delete_options(c->req, resp, &opts, &c->wo) < 0)
		return;
	/* batch/v1 Jobs orphan their pods unless asked otherwise, as upstream's strategy */
	if (c->wo.propagation == PK_PROPAGATE_DEFAULT && c->r->type->pk == PK_KIND_JOB)
		c->wo.propagation = PK_PROPAGATE_ORPHAN;
	json_t *out = NULL;
	struct pk_errors errs = {0};
	int rc = pk_store_delete_opts(c->srv->store, c->r->type, c->r->ns, c->r->name, &c->wo,
				      &errs, &out);
	if (rc < 0)
		rt_respond_store_error(resp, rc, c->r, c->r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_answer(c->r->type, out));
	pk_errors_clear(&errs);
	json_decref(opts);
}

/*
 * pods/NAME/eviction (policy/v1 Eviction), what kubectl drain posts: the
 * pod's disruption unit goes whole or not at all, as its budgets allow
 * (eviction.c); 201 and a Success Status, or 429 with the reason, as
 * kube-apiserver answers.
 */
void rt_do_eviction(struct call *c, struct pk_response *resp)
{
	json_t *body = NULL, *opts = NULL;
	if (rt_parse_body(c->req, resp, &body) < 0)
		return;
	const char *kind = pk_get_string(body, "kind"),
		   *name = pk_get_string(body, "metadata.name");
	if (!json_is_object(body) || (kind && strcmp(kind, "Eviction") != 0)) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "the body of an eviction must be a policy/v1 Eviction");
	} else if (name && strcmp(name, c->r->name) != 0) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "name in URL does not match name in Eviction object");
	} else {
		json_t *del = json_object_get(body, "deleteOptions");
		int rc = json_is_object(del)
			     ? delete_options_apply(json_incref(del), resp, &opts, &c->wo)
			     : 0;
		if (rc == 0)
			rc = pk_srv_evict(c->srv->store, c->r->ns, c->r->name, &c->wo, resp);
		if (rc < 0 && resp->status == 0)
			rt_respond_store_error(resp, rc, c->r, c->r->name, NULL);
	}
	json_decref(opts);
	json_decref(body);
}

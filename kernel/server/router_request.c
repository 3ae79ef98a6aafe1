/* SPDX-License-Identifier: Apache-2.0 */
/*
 * router_request.c — what the router's handlers share about a request and
 * its answer: responses (JSON, text, Kubernetes Status objects with their
 * causes), store errors as the Status kube-apiserver answers, query
 * arguments (booleans as Go's ParseBool reads them), bodies (JSON, YAML or
 * protobuf, with their Content-Type checked), the body's identity against
 * the URL, list objects and selectors.  The router (router.c) parses the
 * path, authenticates and dispatches; the verbs' handlers are in
 * router_read.c, router_write.c, router_patch.c and router_delete.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"
#include "kernel/server/server-router.h"

void pk_srv_respond_json(struct pk_response *resp, int status, json_t *body)
{
	char *text =
	    json_is_object(body) || json_is_array(body) ? pk_json_compact(body, NULL) : NULL;
	json_decref(body);
	resp->status = text ? status : 500;
	resp->content_type = "application/json";
	if (!text)
		text = strdup("{}");
	size_t n = text ? strlen(text) : 0;
	char *nl = text ? realloc(text, n + 2) : NULL;
	if (nl) {
		nl[n] = '\n';
		nl[n + 1] = '\0';
		text = nl;
		n++;
	}
	resp->body = text;
	resp->body_len = n;
}

void pk_srv_respond_text(struct pk_response *resp, int status, const char *ctype, const char *text)
{
	resp->status = status;
	resp->content_type = ctype;
	resp->body = strdup(text);
	resp->body_len = resp->body ? strlen(text) : 0;
}

static json_t *causes_of(const struct pk_errors *errs)
{
	json_t *causes = json_array();
	for (size_t i = 0; errs && i < errs->n; i++) {
		const char *msg = errs->msg[i];
		const char *sep = strstr(msg, ": ");
		json_t *c = json_object();
		if (sep) {
			json_object_set_new(c, "field", json_stringn(msg, (size_t)(sep - msg)));
			json_object_set_new(c, "message", json_string(sep + 2));
		} else {
			json_object_set_new(c, "message", json_string(msg));
		}
		json_object_set_new(c, "reason", json_string("FieldValueInvalid"));
		json_array_append_new(causes, c);
	}
	return causes;
}

void pk_srv_respond_status(struct pk_response *resp, int code, const char *reason, const char *kind,
			   const char *name, const struct pk_errors *causes, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_t *details = json_object();
	if (name)
		json_object_set_new(details, "name", json_string(name));
	if (kind)
		json_object_set_new(details, "kind", json_string(kind));
	if (causes && causes->n)
		json_object_set_new(details, "causes", causes_of(causes));
	json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:o,s:i}", "kind", "Status", "apiVersion",
			       "v1", "metadata", "status", "Failure", "message", msg, "reason",
			       reason, "details", details, "code", code);
	pk_srv_respond_json(resp, code, st);
}

/* ---- request parsing ---------------------------------------------------------- */

/* ---- query arguments ---------------------------------------------------------- */
const char *rt_arg(const struct pk_request *req, const char *key)
{
	for (size_t i = 0; i < req->nargs; i++)
		if (req->args[i].key && strcmp(req->args[i].key, key) == 0)
			return req->args[i].value ? req->args[i].value : "";
	return NULL;
}

/*
 * A boolean query argument, spelled as Go's strconv.ParseBool accepts (1 t T
 * TRUE true True, 0 f F FALSE false False; the Python client sends "True").
 * A bare "?watch" counts as true.  Absent: false.  Else -EINVAL.
 */
int rt_arg_bool(const struct pk_request *req, const char *key, bool *ret)
{
	static const char *const yes[] = {"", "1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
	const char *v = rt_arg(req, key);
	*ret = false;
	if (!v)
		return 0;
	if (PK_STRING_TABLE_FIND(yes, v) >= 0) {
		*ret = true;
		return 0;
	}
	return PK_STRING_TABLE_FIND(no, v) >= 0 ? 0 : -EINVAL;
}

bool rt_arg_true(const struct pk_request *req, const char *key)
{
	bool v;
	return rt_arg_bool(req, key, &v) == 0 && v;
}

/* ---- helpers for handlers ------------------------------------------------------ */
/*
 * 422 Invalid, each problem by its path in the version the client used: the
 * store validated the stored version, so a renamed field's path is turned
 * back (spec.cohortName -> spec.cohort for a kueue.x-k8s.io/v1beta1 client).
 */
static void respond_invalid(struct pk_response *resp, const struct route *r, const char *nm,
			    const struct pk_errors *errs)
{
	const char *kind = r->type ? r->type->kind : "";
	struct pk_errors mapped = {0};
	char first[1024] = "", buf[1024];
	for (size_t i = 0; errs && r->type && r->type->conversion && i < errs->n; i++)
		pk_errors_add(&mapped, "%s",
			      pk_convert_message(r->type, errs->msg[i], buf, sizeof(buf)));
	if (mapped.n)
		errs = &mapped;
	for (size_t i = 0; errs && i < errs->n && strlen(first) < 800; i++)
		snprintf(first + strlen(first), sizeof(first) - strlen(first), "%s%s",
			 i ? ", " : "", errs->msg[i]);
	pk_srv_respond_status(resp, 422, "Invalid", kind, nm, errs, "%s \"%s\" is invalid: %s",
			      kind, nm, *first ? first : "invalid object");
	pk_errors_clear(&mapped);
}

void rt_respond_store_error(struct pk_response *resp, int rc, const struct route *r,
			    const char *name, const struct pk_errors *errs)
{
	const char *plural = r->type ? r->type->plural : "";
	const char *nm = name ? name : "";
	char what[300];
	snprintf(what, sizeof(what), "%s%s%s", plural, *r->group ? "." : "", r->group);
	switch (rc) {
	case -ENOENT:
		pk_srv_respond_status(resp, 404, "NotFound", plural, nm, NULL,
				      "%s \"%s\" not found", what, nm);
		break;
	case -EEXIST:
		pk_srv_respond_status(resp, 409, "AlreadyExists", plural, nm, NULL,
				      "%s \"%s\" already exists", what, nm);
		break;
	case -PK_STORE_ECONFLICT:
		pk_srv_respond_status(resp, 409, "Conflict", plural, nm, NULL,
				      "Operation cannot be fulfilled on %s \"%s\": %s", what, nm,
				      errs && errs->n
					  ? errs->msg[0]
					  : "the object has been modified; please apply your "
					    "changes to the latest version and try again");
		break;
	case -E2BIG:
		pk_srv_respond_status(
		    resp, 413, "RequestEntityTooLarge", plural, nm, NULL,
		    "Request entity too large: %s \"%s\" would be larger than the limit "
		    "of %d bytes",
		    what, nm, PK_STORE_OBJECT_MAX);
		break;
	case -EPERM:
		pk_srv_respond_status(resp, 403, "Forbidden", plural, nm, errs,
				      "%s \"%s\" is forbidden: %s", what, nm,
				      errs && errs->n ? errs->msg[0] : "not allowed");
		break;
	case -EINVAL:
		respond_invalid(resp, r, nm, errs);
		break;
	default:
		pk_srv_respond_status(resp, 500, "InternalError", plural, nm, NULL,
				      "store error: %s", pk_errno_text(rc));
	}
}

int rt_parse_body(const struct pk_request *req, struct pk_response *resp, json_t **ret)
{
	return rt_parse_body_dups(req, resp, ret, NULL);
}

/*
 * A JSON or YAML body's Content-Type: one of the media types served (none
 * given: read as JSON or YAML), and a body declared JSON must be JSON (an
 * object or an array).  0, or -EINVAL with 415 in resp.
 */
static int body_media_type(const struct pk_request *req, struct pk_response *resp)
{
	static const char *const json_types[] = {"application/json", "application/merge-patch+json",
						 "application/strategic-merge-patch+json",
						 "application/json-patch+json"};
	static const char *const yaml_types[] = {"application/yaml",
						 "application/apply-patch+yaml"};
	const char *ct = req->content_type;
	size_t n = ct ? strcspn(ct, "; \t") : 0;
	bool json = false, known = !ct || n == 0;
	for (size_t i = 0; !known && i < ELEMENTSOF(json_types); i++)
		json = known = strlen(json_types[i]) == n && strncasecmp(ct, json_types[i], n) == 0;
	for (size_t i = 0; !known && i < ELEMENTSOF(yaml_types); i++)
		known = strlen(yaml_types[i]) == n && strncasecmp(ct, yaml_types[i], n) == 0;
	const char *b = req->body ? req->body : "";
	size_t at = 0;
	while (at < req->body_len && strchr(" \t\r\n", b[at]))
		at++;
	if (known && (!json || at == req->body_len || b[at] == '{' || b[at] == '['))
		return 0;
	pk_srv_respond_status(
	    resp, 415, "UnsupportedMediaType", NULL, NULL, NULL,
	    known ? "the body is not JSON, as its Content-Type %.*s says"
		  : "the body of the request was in an unknown format (%.*s) - accepted media "
		    "types include: application/json, application/yaml, "
		    "application/vnd.kubernetes.protobuf",
	    (int)(n > 100 ? 100 : n), ct);
	return -EINVAL;
}

/* The body as a tree; dups non-NULL: duplicate keys are recorded there
 * (fieldValidation decides) instead of refused. */
int rt_parse_body_dups(const struct pk_request *req, struct pk_response *resp, json_t **ret,
		       json_t *dups)
{
	if (req->content_type && strstr(req->content_type, "protobuf") && req->body) {
		char perr[256] = "";
		struct pk_srv_pb_budget b = {req->reserve, req->reserve_ctx};
		int rc = pk_srv_proto_decode_budget(req->body, req->body_len, &b, ret, perr,
						    sizeof(perr));
		if (rc == -EPROTONOSUPPORT)
			pk_srv_respond_status(resp, 415, "UnsupportedMediaType", NULL, NULL, NULL,
					      "%s", perr);
		else if (rc == -E2BIG)
			pk_srv_respond_status(resp, 413, "RequestEntityTooLarge", NULL, NULL, NULL,
					      "%s", perr);
		else if (rc == -EAGAIN)
			pk_srv_respond_status(resp, 429, "TooManyRequests", NULL, NULL, NULL,
					      "%s: retry later", perr);
		else if (rc < 0)
			pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
					      "the request body could not be decoded: %s", perr);
		return rc < 0 ? -EINVAL : 0;
	}
	if (req->content_type && strstr(req->content_type, "cbor")) {
		pk_srv_respond_status(
		    resp, 415, "UnsupportedMediaType", NULL, NULL, NULL,
		    "the body of the request was in an unknown format - accepted media "
		    "types include: application/json, application/yaml");
		return -EINVAL;
	}
	if (!req->body || req->body_len == 0) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "request body is empty");
		return -EINVAL;
	}
	if (body_media_type(req, resp) < 0)
		return -EINVAL;
	char err[512] = "";
	json_t *v = NULL;
	int rc =
	    pk_parse_document_dups("body", req->body, req->body_len, &v, dups, err, sizeof(err));
	if (rc < 0 || !v) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "the request body could not be decoded: %s",
				      *err ? err : "invalid");
		json_decref(v);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* Body's kind, name and namespace must agree with the URL; fills them in when absent. */
int rt_check_body_identity(const struct route *r, json_t *obj, bool need_name,
			   struct pk_response *resp)
{
	if (!json_is_object(obj)) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "the request body must be an object");
		return -EINVAL;
	}
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (!kind)
		json_object_set_new(obj, "kind", json_string(r->type->kind));
	else if (strcmp(kind, r->type->kind) != 0) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "the kind of the body (%s) does not match the URL (%s)", kind,
				      r->type->kind);
		return -EINVAL;
	}
	json_t *meta = json_object_get(obj, "metadata");
	if (!meta) {
		meta = json_object();
		json_object_set_new(obj, "metadata", meta);
	}
	if (!json_is_object(meta)) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "metadata must be an object");
		return -EINVAL;
	}
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	if (r->ns && ns && strcmp(ns, r->ns) != 0) {
		pk_srv_respond_status(
		    resp, 400, "BadRequest", NULL, NULL, NULL,
		    "the namespace of the provided object does not match the namespace "
		    "sent on the request");
		return -EINVAL;
	}
	if (r->ns && !ns)
		json_object_set_new(meta, "namespace", json_string(r->ns));
	const char *name = json_string_value(json_object_get(meta, "name"));
	if (need_name && r->name && name && strcmp(name, r->name) != 0) {
		pk_srv_respond_status(
		    resp, 400, "BadRequest", NULL, NULL, NULL,
		    "the name of the object (%s) does not match the name on the URL (%s)", name,
		    r->name);
		return -EINVAL;
	}
	if (need_name && !name)
		json_object_set_new(meta, "name", json_string(r->name));
	return 0;
}

json_t *rt_list_object(const struct pk_type *t, json_t *items, uint64_t rv, const char *cont)
{
	char kind[96], rvs[32], av[96];
	snprintf(kind, sizeof(kind), "%sList", t->kind);
	snprintf(rvs, sizeof(rvs), "%" PRIu64, rv);
	snprintf(av, sizeof(av), "%s%s%s", t->group, *t->group ? "/" : "", t->version);
	json_t *meta = json_pack("{s:s}", "resourceVersion", rvs);
	if (cont)
		json_object_set_new(meta, "continue", json_string(cont));
	return json_pack("{s:s,s:s,s:o,s:o}", "kind", kind, "apiVersion", av, "metadata", meta,
			 "items", items);
}

int rt_parse_selectors(const struct pk_request *req, struct pk_response *resp,
		       struct pk_selector **ret_labels, struct pk_selector **ret_fields)
{
	char err[256];
	const char *ls = rt_arg(req, "labelSelector"), *fs = rt_arg(req, "fieldSelector");
	*ret_labels = *ret_fields = NULL;
	if (ls && pk_selector_parse(ls, false, ret_labels, err, sizeof(err)) < 0) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "unable to parse labelSelector: %s", err);
		return -EINVAL;
	}
	if (fs && pk_selector_parse(fs, true, ret_fields, err, sizeof(err)) < 0) {
		pk_selector_free(*ret_labels);
		*ret_labels = NULL;
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "unable to parse fieldSelector: %s", err);
		return -EINVAL;
	}
	return 0;
}

/* metadata.name of a create body, for authorisation by name; NULL when unknown. */
const char *rt_body_name(const struct pk_request *req)
{
	static __thread char name[256];
	json_t *v = NULL;
	char err[8];
	if (!req->body || strcmp(req->method, "POST") != 0 ||
	    pk_parse_document("body", req->body, req->body_len, &v, err, sizeof(err)) < 0)
		return NULL;
	const char *n = json_string_value(json_object_get(json_object_get(v, "metadata"), "name"));
	snprintf(name, sizeof(name), "%s", n ? n : "");
	json_decref(v);
	return n ? name : NULL;
}

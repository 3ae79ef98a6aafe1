/* SPDX-License-Identifier: Apache-2.0 */
/*
 * access.c — the self reviews: what the caller is and what it may do.
 *
 * POST authorization.k8s.io/v1 selfsubjectaccessreviews (kubectl auth
 * can-i) answers allowed/denied for one resource or non-resource request
 * with pk_authorize(), the rule every request of this server passes.
 * selfsubjectrulesreviews (kubectl auth can-i --list) lists the same policy
 * as rules: system:masters everything; node identities read everything and
 * write their own Node and Lease; every other authenticated user reads
 * everything.  authentication.k8s.io/v1 selfsubjectreviews (kubectl auth
 * whoami) returns the user, uid and groups the token file or the client
 * certificate gave.  Bodies are JSON, YAML or protobuf; answers are JSON,
 * 201 Created, as kube-apiserver answers these create-only resources.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kernel/server/server-internal.h"

#define AUTHZ "/apis/authorization.k8s.io/v1/"
#define AUTHN "/apis/authentication.k8s.io/v1/"

static bool has_group(const struct pk_identity *who, const char *g)
{
	for (size_t i = 0; i < who->ngroups; i++)
		if (strcmp(who->groups[i], g) == 0)
			return true;
	return false;
}

static int body_of(const struct pk_request *req, const char *kind, json_t **ret,
		   struct pk_response *resp)
{
	char err[256] = "";
	bool proto = req->content_type && strstr(req->content_type, "protobuf");
	int rc;

	*ret = NULL;
	if (!req->body || !req->body_len) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "request body is empty");
		return -EINVAL;
	}
	rc = proto ? pk_srv_proto_decode_budget(
			 req->body, req->body_len,
			 &(struct pk_srv_pb_budget){req->reserve, req->reserve_ctx}, ret, err,
			 sizeof(err))
		   : pk_parse_document("body", req->body, req->body_len, ret, err, sizeof(err));
	if (rc == 0 && !json_is_object(*ret))
		rc = -EINVAL, snprintf(err, sizeof(err), "expected an object");
	if (rc == 0 && strcmp(pk_get_string(*ret, "kind") ?: kind, kind) != 0)
		rc = -EINVAL, snprintf(err, sizeof(err), "the body is a %s, not a %s",
				       pk_get_string(*ret, "kind"), kind);
	if (rc < 0) {
		json_decref(*ret);
		*ret = NULL;
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "the request body could not be decoded: %s", err);
		return -EINVAL;
	}
	return 0;
}

/* The verb pk_authorize() knows for a resource request (binding writes the pod). */
static const char *authz_verb(const char *verb, const char *sub)
{
	if (sub && strcmp(sub, "binding") == 0 && strcmp(verb, "create") == 0)
		return "update";
	return verb;
}

static bool resource_allowed(const struct pk_server *srv, const struct pk_identity *who, json_t *ra)
{
	const char *verb = pk_get_string(ra, "verb") ?: "";
	const char *group = pk_get_string(ra, "group") ?: "";
	const char *res = pk_get_string(ra, "resource") ?: "";
	const struct pk_type *t = pk_type_by_resource(group, res);

	if (has_group(who, "system:masters"))
		return true;
	if (!t || !*verb || strcmp(verb, "*") == 0)
		return false;
	return pk_authorize(who, authz_verb(verb, pk_get_string(ra, "subresource")), t->kind,
			    pk_get_string(ra, "name")) &&
	       !pk_srv_admission_node_lease_elsewhere(srv, who, verb, t,
						      pk_get_string(ra, "namespace"));
}

/* Discovery, health and version are readable by every authenticated user. */
static bool nonresource_allowed(const struct pk_identity *who, json_t *na)
{
	const char *verb = pk_get_string(na, "verb") ?: "";

	if (has_group(who, "system:masters"))
		return true;
	return who->authenticated && strcmp(verb, "get") == 0;
}

static void access_review(const struct pk_server *srv, const struct pk_request *req,
			  const struct pk_identity *who, struct pk_response *resp)
{
	json_t *body, *ra, *na;
	bool allowed;

	if (body_of(req, "SelfSubjectAccessReview", &body, resp) < 0)
		return;
	ra = pk_get(body, "spec.resourceAttributes");
	na = pk_get(body, "spec.nonResourceAttributes");
	if ((ra != NULL) == (na != NULL)) {
		pk_srv_respond_status(
		    resp, 422, "Invalid", "SelfSubjectAccessReview", "", NULL,
		    "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
		    "spec.resourceAttributes: Invalid value: exactly one of "
		    "nonResourceAttributes or resourceAttributes must be specified");
		json_decref(body);
		return;
	}
	allowed = ra ? resource_allowed(srv, who, ra) : nonresource_allowed(who, na);
	json_object_set_new(body, "apiVersion", json_string("authorization.k8s.io/v1"));
	json_object_set_new(body, "kind", json_string("SelfSubjectAccessReview"));
	if (!json_is_object(json_object_get(body, "metadata")))
		json_object_set_new(body, "metadata", json_object());
	json_object_set_new(body, "status",
			    allowed ? json_pack("{s:b,s:s}", "allowed", 1, "reason",
						has_group(who, "system:masters")
						    ? "member of system:masters"
						    : "allowed by podkernel's policy")
				    : json_pack("{s:b}", "allowed", 0));
	pk_srv_respond_json(resp, 201, body);
}

static json_t *rule(const char *verbs, const char *groups, const char *resources, const char *name)
{
	json_t *r = json_pack("{s:[],s:[],s:[]}", "verbs", "apiGroups", "resources");
	const char *lists[] = {verbs, groups, resources};
	const char *keys[] = {"verbs", "apiGroups", "resources"};

	for (size_t k = 0; k < 3; k++) {
		char buf[256];

		snprintf(buf, sizeof(buf), "%s", lists[k]);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
		     t = strtok_r(NULL, ",", &save))
			json_array_append_new(json_object_get(r, keys[k]),
					      json_string(strcmp(t, "-") == 0 ? "" : t));
	}
	if (name)
		json_object_set_new(r, "resourceNames", json_pack("[s]", name));
	return r;
}

/* The policy of pk_authorize() as rules ("-" is the core group ""). */
static json_t *rules_of(const struct pk_identity *who, json_t **ret_nonres)
{
	static const char node_prefix[] = "system:node:";
	json_t *rules = json_array();

	*ret_nonres = json_array();
	if (has_group(who, "system:masters")) {
		json_array_append_new(rules, rule("*", "*", "*", NULL));
		json_array_append_new(
		    *ret_nonres, json_pack("{s:[s],s:[s]}", "verbs", "*", "nonResourceURLs", "*"));
		return rules;
	}
	json_array_append_new(rules,
			      rule("create", "authorization.k8s.io",
				   "selfsubjectaccessreviews,selfsubjectrulesreviews", NULL));
	json_array_append_new(rules,
			      rule("create", "authentication.k8s.io", "selfsubjectreviews", NULL));
	json_array_append_new(rules, rule("get,list,watch", "*", "*", NULL));
	if (has_group(who, "system:nodes") &&
	    strncmp(who->user, node_prefix, sizeof(node_prefix) - 1) == 0) {
		const char *node = who->user + sizeof(node_prefix) - 1;

		json_array_append_new(rules, rule("create,update,patch", "-", "nodes", node));
		json_array_append_new(
		    rules, rule("create,update,patch", "coordination.k8s.io", "leases", node));
	}
	json_array_append_new(*ret_nonres,
			      json_pack("{s:[s],s:[s,s,s,s,s,s,s,s]}", "verbs", "get",
					"nonResourceURLs", "/api", "/api/*", "/apis", "/apis/*",
					"/healthz", "/livez", "/readyz", "/version"));
	return rules;
}

static void rules_review(const struct pk_request *req, const struct pk_identity *who,
			 struct pk_response *resp)
{
	json_t *body, *nonres, *rules;

	if (body_of(req, "SelfSubjectRulesReview", &body, resp) < 0)
		return;
	rules = rules_of(who, &nonres);
	json_object_set_new(body, "apiVersion", json_string("authorization.k8s.io/v1"));
	json_object_set_new(body, "kind", json_string("SelfSubjectRulesReview"));
	if (!json_is_object(json_object_get(body, "metadata")))
		json_object_set_new(body, "metadata", json_object());
	json_object_set_new(body, "status",
			    json_pack("{s:o,s:o,s:b}", "resourceRules", rules, "nonResourceRules",
				      nonres, "incomplete", 0));
	pk_srv_respond_json(resp, 201, body);
}

/* Whoever the request authenticated as; the body says nothing (it is empty). */
static void self_review(const struct pk_identity *who, struct pk_response *resp)
{
	json_t *groups = json_array();
	char ts[32];

	for (size_t i = 0; i < who->ngroups; i++)
		json_array_append_new(groups, json_string(who->groups[i]));
	pk_time_format(time(NULL), ts);
	json_t *ui = json_pack("{s:s,s:o}", "username", who->user, "groups", groups);
	if (who->uid && *who->uid)
		json_object_set_new(ui, "uid", json_string(who->uid));
	if (who->nextra)
		json_object_set_new(ui, "extra", json_object());
	for (size_t i = 0; i < who->nextra; i++) {
		json_t *extra = json_object_get(ui, "extra");
		json_t *values = json_object_get(extra, who->extra_keys[i]);

		if (!values) {
			values = json_array();
			json_object_set_new(extra, who->extra_keys[i], values);
		}
		json_array_append_new(values, json_string(who->extra_values[i]));
	}
	pk_srv_respond_json(resp, 201,
			    json_pack("{s:s,s:s,s:{s:s},s:{s:o}}", "apiVersion",
				      "authentication.k8s.io/v1", "kind", "SelfSubjectReview",
				      "metadata", "creationTimestamp", ts, "status", "userInfo",
				      ui));
}

bool pk_srv_access_handle(const struct pk_server *srv, const struct pk_request *req,
			  const struct pk_identity *who, struct pk_response *resp)
{
	bool authz = strncmp(req->path, AUTHZ, strlen(AUTHZ)) == 0;
	bool authn = strncmp(req->path, AUTHN, strlen(AUTHN)) == 0;
	const char *res = req->path + strlen(authz ? AUTHZ : AUTHN);

	if (!authz && !authn)
		return false;
	if (strcmp(res, authz ? "selfsubjectaccessreviews" : "selfsubjectreviews") != 0 &&
	    !(authz && strcmp(res, "selfsubjectrulesreviews") == 0))
		return false;
	if (strcmp(req->method, "POST") != 0) {
		pk_srv_respond_status(resp, 405, "MethodNotAllowed", NULL, NULL, NULL,
				      "method %s is not allowed: %s only accepts create",
				      req->method, res);
		return true;
	}
	if (authn)
		self_review(who, resp);
	else if (strcmp(res, "selfsubjectaccessreviews") == 0)
		access_review(srv, req, who, resp);
	else
		rules_review(req, who, resp);
	return true;
}

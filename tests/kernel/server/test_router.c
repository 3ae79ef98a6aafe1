/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_router.c — kernel/server without sockets: the token file parser, the
 * authorisation rules, and pk_server_handle() on requests built in memory
 * (status codes, Status objects, routing, Tables, watch replay).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/server/server-internal.h"

/* ---- token file -------------------------------------------------------------- */
START_TEST(test_tokens_parse)
{
	static const char file[] = "# comment\n"
				   "\n"
				   "tok1,alice,u1,\"system:masters,dev\"\n"
				   "tok2,system:node:n1,u2,system:nodes\r\n"
				   "\"tok,3\",bob,u3\n";
	struct pk_tokens *tk = NULL;
	char err[256];
	ck_assert_int_eq(pk_tokens_parse("t.csv", file, strlen(file), &tk, err, sizeof(err)), 0);
	ck_assert_uint_eq(tk->n, 3);
	ck_assert_str_eq(tk->v[0].user, "alice");
	ck_assert_uint_eq(tk->v[0].ngroups, 2);
	ck_assert_str_eq(tk->v[0].groups[1], "dev");
	ck_assert_str_eq(tk->v[1].groups[0], "system:nodes");
	ck_assert_uint_eq(tk->v[2].ngroups, 0);
	ck_assert_ptr_eq(pk_tokens_find(tk, "tok,3"), &tk->v[2]);
	ck_assert_ptr_null(pk_tokens_find(tk, "tok"));
	ck_assert_ptr_null(pk_tokens_find(tk, "tok1x"));
	pk_tokens_free(tk);

	/* As kube-apiserver: columns after the groups are ignored, and a repeated
	 * token's later line wins, with a warning naming both lines. */
	static const char more[] = "tok,alice,u1,g,ignored\n"
				   "other,carol,u4\n"
				   "tok,dave,u5,\"system:masters\"\n";
	ck_assert_int_eq(pk_tokens_parse("t.csv", more, strlen(more), &tk, err, sizeof(err)), 0);
	ck_assert_uint_eq(tk->v[0].ngroups, 1);
	ck_assert_str_eq(tk->v[0].groups[0], "g");
	ck_assert_str_eq(pk_tokens_find(tk, "tok")->user, "dave");
	ck_assert_msg(strstr(tk->warning, "t.csv:3: duplicate token (also on line 1)"), "%s",
		      tk->warning);
	pk_tokens_free(tk);

	static const char *const bad[] = {"tok,alice\n", "\"tok,alice,u1\n", ",alice,u1\n",
					  "t,u,i,\"g\"x\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		tk = NULL;
		ck_assert_msg(pk_tokens_parse("t.csv", bad[i], strlen(bad[i]), &tk, err,
					      sizeof(err)) == -EINVAL,
			      "accepted: %s", bad[i]);
		ck_assert_msg(strncmp(err, "t.csv:1:", 8) == 0, "no position: %s", err);
	}
	pk_tokens_free(NULL);
}
END_TEST

START_TEST(test_authorize)
{
	const char *masters[] = {"system:masters"};
	const char *nodes[] = {"system:nodes"};
	struct pk_identity admin = {"alice", masters, 1, true};
	struct pk_identity node = {"system:node:n1", nodes, 1, true};
	struct pk_identity user = {"bob", NULL, 0, true};
	struct pk_identity anon = {"system:anonymous", NULL, 0, false};
	ck_assert(pk_authorize(&admin, "delete", "Pod", "x"));
	ck_assert(pk_authorize(&node, "get", "Pod", "x"));
	ck_assert(pk_authorize(&node, "watch", "Node", NULL));
	ck_assert(pk_authorize(&node, "patch", "Node", "n1"));
	ck_assert(pk_authorize(&node, "create", "Node", "n1"));
	ck_assert(!pk_authorize(&node, "patch", "Node", "n2"));
	ck_assert(!pk_authorize(&node, "delete", "Node", "n1"));
	ck_assert(!pk_authorize(&node, "create", "Pod", "n1"));
	ck_assert(pk_authorize(&node, "create", "Lease", "n1"));
	ck_assert(pk_authorize(&node, "update", "Lease", "n1"));
	ck_assert(!pk_authorize(&node, "update", "Lease", "n2"));
	ck_assert(!pk_authorize(&node, "delete", "Lease", "n1"));
	ck_assert(pk_authorize(&user, "list", "Pod", NULL));
	ck_assert(!pk_authorize(&user, "create", "Pod", "p"));
	ck_assert(!pk_authorize(&anon, "get", "Pod", "p"));
}
END_TEST

/* ---- the router ------------------------------------------------------------------ */
static char dir[256];
static struct pk_store *st;
static struct pk_server *srv;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pk-router-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[300], err[256];
	snprintf(path, sizeof(path), "%s/tokens", dir);
	FILE *f = fopen(path, "w");
	fputs("admintok,admin,1,\"system:masters\"\nnodetok,system:node:n1,2,system:nodes\n", f);
	fclose(f);
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	struct pk_server_config cfg = {.token_auth_file = path};
	ck_assert_int_eq(pk_server_new(st, &cfg, &srv, err, sizeof(err)), 0);
}

static void teardown(void)
{
	pk_server_free(srv);
	pk_store_close(st);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Make a request; returns the status and the parsed JSON body in *ret (may be NULL). */
static int call(const char *method, const char *path, const char *token, const char *ctype,
		const char *body, json_t **ret)
{
	char auth[128];
	snprintf(auth, sizeof(auth), "Bearer %s", token ? token : "");
	struct pk_query_arg args[8];
	size_t nargs = 0;
	char pathbuf[512];
	snprintf(pathbuf, sizeof(pathbuf), "%s", path);
	char *q = strchr(pathbuf, '?');
	if (q) {
		*q++ = '\0';
		for (char *save = NULL, *kv = strtok_r(q, "&", &save); kv && nargs < 8;
		     kv = strtok_r(NULL, "&", &save)) {
			char *eq = strchr(kv, '=');
			if (eq)
				*eq++ = '\0';
			/* "%00" stands for the NUL byte the listener reports */
			char *nul = eq ? strstr(eq, "%00") : NULL;
			if (nul)
				*nul = '\0';
			args[nargs++] = (struct pk_query_arg){kv, eq ? eq : "", nul != NULL};
		}
	}
	struct pk_request req = {
	    .method = method,
	    .path = pathbuf,
	    .args = args,
	    .nargs = nargs,
	    .authorization = token ? auth : NULL,
	    .content_type = ctype,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	};
	struct pk_response resp;
	ck_assert_int_eq(pk_server_handle(srv, &req, &resp), 0);
	int status = resp.status;
	if (ret)
		*ret = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	pk_response_clear(&resp);
	return status;
}

static const char *reason(json_t *status)
{
	return json_string_value(json_object_get(status, "reason"));
}

static const char POD[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\"},"
			  "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";

START_TEST(test_status_codes)
{
	json_t *b = NULL;
	ck_assert_int_eq(call("GET", "/healthz", NULL, NULL, NULL, NULL), 200);
	ck_assert_int_eq(call("GET", "/version", NULL, NULL, NULL, NULL), 200);
	ck_assert_int_eq(call("GET", "/api/v1/pods", NULL, NULL, NULL, &b), 401);
	ck_assert_str_eq(reason(b), "Unauthorized");
	json_decref(b);
	ck_assert_int_eq(call("GET", "/api/v1/pods", "wrong", NULL, NULL, NULL), 401);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json", POD, &b),
			 201);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(b, "metadata"), "namespace")),
	    "default");
	json_decref(b);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json", POD, &b),
			 409);
	ck_assert_str_eq(reason(b), "AlreadyExists");
	json_decref(b);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/other/pods", "admintok",
			      "application/json",
			      "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"x\"}}", &b),
			 400);
	json_decref(b);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json", "{\"kind\": ", &b),
			 400);
	ck_assert_str_eq(reason(b), "BadRequest");
	json_decref(b);
	ck_assert_int_eq(
	    call("POST", "/api/v1/namespaces/default/pods", "admintok", "application/json",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"UPPER\"}}", &b),
	    422);
	ck_assert_str_eq(reason(b), "Invalid");
	ck_assert_str_eq(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(b, "details"), "causes"), 0),
		"field")),
	    "metadata.name");
	json_decref(b);
	/* NUL or another control character in a name, as JSON or YAML: refused */
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json",
			      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
			      "\"p\\u0000x\"}}",
			      NULL),
			 400);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/yaml", "kind: Pod\nmetadata: {name: \"p\\0x\"}\n", NULL),
			 400);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json",
			      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
			      "\"p\\u0007x\"}}",
			      NULL),
			 422);
	ck_assert_int_eq(
	    call("GET", "/api/v1/namespaces/default/pods/nope", "admintok", NULL, NULL, &b), 404);
	ck_assert_str_eq(reason(b), "NotFound");
	json_decref(b);
	ck_assert_int_eq(call("GET", "/api/v1/nothing", "admintok", NULL, NULL, NULL), 404);
	/* a kubelet's subresources by name: 501 for a pod, 404 without one; others not */
	ck_assert_int_eq(
	    call("GET", "/api/v1/namespaces/default/pods/p1/log", "admintok", NULL, NULL, &b), 501);
	ck_assert_str_eq(reason(b), "NotImplemented");
	json_decref(b);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods/p1/portforward", "admintok",
			      NULL, NULL, NULL),
			 501);
	ck_assert_int_eq(
	    call("GET", "/api/v1/namespaces/default/pods/nope/exec", "admintok", NULL, NULL, NULL),
	    404);
	ck_assert_int_ne(
	    call("GET", "/api/v1/namespaces/default/pods/p1/logs", "admintok", NULL, NULL, NULL),
	    501);
	/* booleans as Go's ParseBool spells them */
	ck_assert_int_eq(call("GET", "/api/v1/pods?watch=False", "admintok", NULL, NULL, NULL),
			 200);
	ck_assert_int_eq(
	    call("GET", "/api/v1/pods?watch=0&allowWatchBookmarks=T", "admintok", NULL, NULL, NULL),
	    200);
	ck_assert_int_eq(call("GET", "/api/v1/pods?watch=maybe", "admintok", NULL, NULL, &b), 400);
	ck_assert_str_eq(reason(b), "BadRequest");
	json_decref(b);
	ck_assert_int_eq(call("PATCH", "/api/v1/namespaces/default/pods/p1", "admintok",
			      "text/plain", "{}", NULL),
			 415);
	ck_assert_int_eq(call("PUT", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json", POD, NULL),
			 405);
	/* Stale resourceVersion on update: 409 Conflict. */
	ck_assert_int_eq(
	    call("PUT", "/api/v1/namespaces/default/pods/p1", "admintok", "application/json",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
		 "\"resourceVersion\":\"1\"},\"spec\":{\"containers\":[]}}",
		 &b),
	    409);
	ck_assert_str_eq(reason(b), "Conflict");
	json_decref(b);
}
END_TEST

/* POST path as token with the Impersonate-* headers given as "Name: value" pairs. */
static int call_as(const char *token, const char *method, const char *path,
		   const char *const *headers, size_t n, json_t **ret)
{
	struct pk_query_arg imp[80];
	char auth[128], names[80][64];
	const char *body = strcmp(method, "POST") == 0 ? "{}" : NULL;

	ck_assert_uint_le(n, 80);
	snprintf(auth, sizeof(auth), "Bearer %s", token);
	for (size_t i = 0; i < n; i++) {
		const char *colon = strstr(headers[i], ": ");

		snprintf(names[i], sizeof(names[i]), "%.*s", (int)(colon - headers[i]), headers[i]);
		imp[i] = (struct pk_query_arg){names[i], colon + 2};
	}
	struct pk_request req = {.method = method,
				 .path = path,
				 .authorization = auth,
				 .impersonate = imp,
				 .nimpersonate = n,
				 .content_type = "application/json",
				 .body = body,
				 .body_len = body ? strlen(body) : 0};
	struct pk_response resp;

	ck_assert_int_eq(pk_server_handle(srv, &req, &resp), 0);
	int status = resp.status;
	if (ret)
		*ret = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	pk_response_clear(&resp);
	return status;
}

#define WHOAMI "/apis/authentication.k8s.io/v1/selfsubjectreviews"

/* The Impersonate-* headers, as kube-apiserver's impersonation filter reads them. */
START_TEST(test_impersonation)
{
	static const char *const sa[] = {"Impersonate-User: system:serviceaccount:ns:robot",
					 "impersonate-uid: 42", "Impersonate-Extra-Scopes%2Fa: x",
					 "Impersonate-Extra-scopes%2fA: y"};
	static const char *const groups_only[] = {"Impersonate-Group: g"};
	static const char *const given[] = {"Impersonate-User: bob", "Impersonate-Group: g",
					    "Impersonate-Group: system:unauthenticated"};
	static const char *const ignored[] = {"Impersonate-User: ", "Impersonate-Other: x"};
	const char *many[70];
	json_t *b = NULL;

	ck_assert_int_eq(call_as("admintok", "POST", WHOAMI, sa, 4, &b), 201);
	ck_assert_str_eq(pk_get_string(b, "status.userInfo.username"),
			 "system:serviceaccount:ns:robot");
	ck_assert_str_eq(pk_get_string(b, "status.userInfo.uid"), "42");
	ck_assert_str_eq(pk_get_string(b, "status.userInfo.groups[1]"),
			 "system:serviceaccounts:ns");
	ck_assert_str_eq(pk_get_string(b, "status.userInfo.groups[2]"), "system:authenticated");
	ck_assert_uint_eq(
	    json_array_size(json_object_get(pk_get(b, "status.userInfo.extra"), "scopes/a")), 2);
	json_decref(b);
	/* groups given are the authority: no system:authenticated beside system:unauthenticated */
	ck_assert_int_eq(call_as("admintok", "POST", WHOAMI, given, 3, &b), 201);
	ck_assert_uint_eq(json_array_size(pk_get(b, "status.userInfo.groups")), 2);
	json_decref(b);
	/* the impersonated user may only read */
	ck_assert_int_eq(call_as("admintok", "GET", "/api/v1/pods", given, 1, NULL), 200);
	ck_assert_int_eq(
	    call_as("admintok", "POST", "/api/v1/namespaces/default/pods", given, 1, &b), 403);
	json_decref(b);
	/* a node may not impersonate: 403 naming what it asked for */
	ck_assert_int_eq(call_as("nodetok", "GET", "/api/v1/pods", sa, 1, &b), 403);
	ck_assert_str_eq(json_string_value(json_object_get(b, "message")),
			 "serviceaccounts \"robot\" is forbidden: User \"system:node:n1\" cannot "
			 "impersonate resource \"serviceaccounts\" in API group \"\" in the "
			 "namespace \"ns\"");
	json_decref(b);
	ck_assert_int_eq(call_as("admintok", "GET", "/api/v1/pods", groups_only, 1, NULL), 500);
	ck_assert_int_eq(call_as("admintok", "POST", WHOAMI, ignored, 2, &b), 201);
	ck_assert_str_eq(pk_get_string(b, "status.userInfo.username"), "admin");
	json_decref(b);
	many[0] = "Impersonate-User: bob";
	for (size_t i = 1; i < 70; i++)
		many[i] = "Impersonate-Group: g";
	ck_assert_int_eq(call_as("admintok", "GET", "/api/v1/pods", many, 70, NULL), 400);
}
END_TEST

START_TEST(test_node_restriction)
{
	static const char node[] =
	    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
	    "\"%s\"}}";
	char body[256];
	json_t *b = NULL;
	snprintf(body, sizeof(body), node, "n1");
	ck_assert_int_eq(call("POST", "/api/v1/nodes", "nodetok", "application/json", body, NULL),
			 201);
	snprintf(body, sizeof(body), node, "n2");
	ck_assert_int_eq(call("POST", "/api/v1/nodes", "admintok", "application/json", body, NULL),
			 201);
	ck_assert_int_eq(call("PATCH", "/api/v1/nodes/n1", "nodetok",
			      "application/merge-patch+json",
			      "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", NULL),
			 200);
	ck_assert_int_eq(call("PATCH", "/api/v1/nodes/n2", "nodetok",
			      "application/merge-patch+json",
			      "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", &b),
			 403);
	ck_assert_str_eq(reason(b), "Forbidden");
	json_decref(b);
	ck_assert_int_eq(call("GET", "/api/v1/nodes", "nodetok", NULL, NULL, NULL), 200);
	ck_assert_int_eq(call("DELETE", "/api/v1/nodes/n1", "nodetok", NULL, NULL, NULL), 403);
}
END_TEST

/* Leases (coordination.k8s.io/v1): served, validated, a node renews only its own. */
START_TEST(test_leases)
{
	static const char lease[] =
	    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"kube-node-lease\"},"
	    "\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,"
	    "\"renewTime\":\"2026-01-01T00:00:00.000000Z\"}}";
	static const char base[] = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
	char body[512], path[256];
	json_t *b = NULL;

	snprintf(body, sizeof(body), lease, "n1", "n1", 40);
	ck_assert_int_eq(call("POST", base, "nodetok", "application/json", body, &b), 201);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(b, "metadata"), "namespace")),
	    "kube-node-lease");
	json_decref(b);
	snprintf(path, sizeof(path), "%s/n1", base);
	ck_assert_int_eq(call("PATCH", path, "nodetok", "application/merge-patch+json",
			      "{\"spec\":{\"renewTime\":\"2026-01-01T00:00:10.000000Z\"}}", &b),
			 200);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(b, "spec"), "renewTime")),
	    "2026-01-01T00:00:10.000000Z");
	json_decref(b);
	snprintf(body, sizeof(body), lease, "n2", "n2", 40);
	ck_assert_int_eq(call("POST", base, "nodetok", "application/json", body, NULL), 403);
	/* its own name, in another namespace: refused (the Node authorizer's rule) */
	static const char other[] = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
	static const char elsewhere[] =
	    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
	    "\"metadata\":{\"name\":\"n1\",\"namespace\":\"default\"},"
	    "\"spec\":{\"holderIdentity\":\"n1\",\"leaseDurationSeconds\":40}}";
	ck_assert_int_eq(call("POST", other, "nodetok", "application/json", elsewhere, &b), 403);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(b, "message")),
				     "only in namespace \"kube-node-lease\""));
	json_decref(b);
	ck_assert_int_eq(call("PATCH",
			      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/n1",
			      "nodetok", "application/merge-patch+json", "{}", NULL),
			 403);
	ck_assert_int_eq(call("POST", other, "admintok", "application/json", elsewhere, NULL), 201);
	ck_assert_int_eq(call("GET", other, "nodetok", NULL, NULL, NULL), 200);
	/* refused before the body is read */
	struct pk_request pre = {
	    .method = "POST", .path = other, .authorization = "Bearer nodetok"};
	struct pk_response presp;
	ck_assert(pk_server_precheck(srv, &pre, &presp, NULL, 0));
	ck_assert_int_eq(presp.status, 403);
	pk_response_clear(&presp);
	snprintf(body, sizeof(body), lease, "n2", "n2", 0);
	ck_assert_int_eq(call("POST", base, "admintok", "application/json", body, &b), 422);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(b, "details"), "causes"), 0),
		"field")),
	    "spec.leaseDurationSeconds");
	json_decref(b);
	ck_assert_int_eq(
	    call("GET", "/apis/coordination.k8s.io/v1/leases", "nodetok", NULL, NULL, &b), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(b, "items")), 2); /* n1 twice */
	json_decref(b);
	ck_assert_int_eq(call("GET", "/apis/coordination.k8s.io/v1", "nodetok", NULL, NULL, &b),
			 200);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(json_object_get(b, "resources"), 0), "name")),
			 "leases");
	json_decref(b);
}
END_TEST

/* pods/binding as kube-apiserver: uid precondition, annotations copied, PodScheduled True. */
START_TEST(test_binding)
{
	static const char base[] = "/api/v1/namespaces/default/pods";
	json_t *b = NULL;

	ck_assert_int_eq(call("POST", base, "admintok", "application/json", POD, NULL), 201);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods/p1/binding", "admintok",
			      "application/json",
			      "{\"metadata\":{\"name\":\"p1\",\"uid\":\"not-its-uid\"},"
			      "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
			      NULL),
			 409);
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods/p1/binding", "admintok",
			      "application/json",
			      "{\"metadata\":{\"name\":\"p1\",\"annotations\":"
			      "{\"example.com/slice\":\"0.1.2\"}},"
			      "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
			      NULL),
			 201);
	ck_assert_int_eq(
	    call("GET", "/api/v1/namespaces/default/pods/p1", "admintok", NULL, NULL, &b), 200);
	ck_assert_str_eq(pk_get_string(b, "spec.nodeName"), "n1");
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(b, "metadata.annotations"),
							   "example.com/slice")),
			 "0.1.2");
	ck_assert_str_eq(
	    json_string_value(json_object_get(pk_condition_get(b, "PodScheduled"), "status")),
	    "True");
	json_decref(b);
	/* bound once */
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods/p1/binding", "admintok",
			      "application/json",
			      "{\"target\":{\"kind\":\"Node\",\"name\":\"n2\"}}", NULL),
			 409);
}
END_TEST

/* events.k8s.io/v1 Events (what a scheduler writes) are served next to core v1 ones. */
START_TEST(test_events_v1)
{
	static const char ev[] =
	    "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\","
	    "\"metadata\":{\"name\":\"p1.1\"},\"eventTime\":\"2026-01-01T00:00:00.000000Z\","
	    "\"reportingController\":\"podkernel\",\"reportingInstance\":\"a\","
	    "\"action\":\"Binding\",\"reason\":\"Scheduled\",\"type\":\"Normal\","
	    "\"regarding\":{\"kind\":\"Pod\",\"name\":\"p1\",\"namespace\":\"default\"},"
	    "\"note\":\"Successfully assigned default/p1 to n1\"}";
	static const char base[] = "/apis/events.k8s.io/v1/namespaces/default/events";
	json_t *b = NULL;

	ck_assert_int_eq(call("POST", base, "admintok", "application/json", ev, &b), 201);
	ck_assert_str_eq(json_string_value(json_object_get(b, "apiVersion")), "events.k8s.io/v1");
	json_decref(b);
	ck_assert_int_eq(call("GET", base, "admintok", NULL, NULL, &b), 200);
	ck_assert_uint_eq(json_array_size(json_object_get(b, "items")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(json_object_get(b, "items"), 0), "note")),
			 "Successfully assigned default/p1 to n1");
	json_decref(b);
	/* the same Event at core v1, found by its involvedObject, in the core shape */
	ck_assert_int_eq(
	    call("GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=p1",
		 "admintok", NULL, NULL, &b),
	    200);
	json_t *core = json_array_get(json_object_get(b, "items"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(core, "apiVersion")), "v1");
	ck_assert_str_eq(json_string_value(json_object_get(core, "message")),
			 "Successfully assigned default/p1 to n1");
	ck_assert_str_eq(pk_get_string(core, "reportingComponent"), "podkernel");
	ck_assert_ptr_null(json_object_get(core, "note"));
	json_decref(b);
	/* and at events.k8s.io, selected by the field names of that shape */
	ck_assert_int_eq(call("GET",
			      "/apis/events.k8s.io/v1/events?fieldSelector=regarding.name=p1",
			      "admintok", NULL, NULL, &b),
			 200);
	ck_assert_uint_eq(json_array_size(json_object_get(b, "items")), 1);
	json_decref(b);
	ck_assert_int_eq(call("GET", "/apis/events.k8s.io/v1", "admintok", NULL, NULL, &b), 200);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(json_object_get(b, "resources"), 0), "name")),
			 "events");
	json_decref(b);
}
END_TEST

/*
 * The query parameters of list and watch against kube-apiserver's answers:
 * decoding errors 400 (BadRequest), ListOptions validation 422 (Invalid),
 * a field label the kind does not take 400, each naming the parameter.
 * Arguments here are as decoded ("%00" stands for a NUL byte).
 */
static const struct {
	const char *path;
	int status;
	const char *says; /* in the message; NULL: nothing asked */
} query_table[] = {
#define PODS "/api/v1/namespaces/default/pods?"
    {PODS "labelSelector=a%20in", 400, "labelSelector"},
    {PODS "labelSelector=a!!b", 400, "labelSelector"},
    {PODS "labelSelector=a%00b", 400, "labelSelector: Invalid value"},
    {PODS "labelSelector=a", 200, NULL},
    {PODS "fieldSelector=metadata.nope=x", 400, "field label not supported: metadata.nope"},
    {PODS "fieldSelector=status.successful=1", 400, "field label not supported"},
    {PODS "fieldSelector=a", 400, "fieldSelector"},
    {PODS "fieldSelector=spec.nodeName=n1,status.phase!=Failed", 200, NULL},
    {PODS "fieldSelector=metadata.namespace=default", 200, NULL},
    {"/api/v1/nodes?fieldSelector=metadata.namespace=x", 400, "field label not supported"},
    {"/api/v1/nodes?fieldSelector=spec.unschedulable=true", 200, NULL},
    {"/apis/batch/v1/namespaces/default/jobs?fieldSelector=status.successful=1", 200, NULL},
    {"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName=n1", 200, NULL},
    {"/api/v1/events?fieldSelector=involvedObject.name=p1", 200, NULL},
    {"/apis/events.k8s.io/v1/events?fieldSelector=regarding.name=p1", 200, NULL},
    {"/apis/events.k8s.io/v1/events?fieldSelector=involvedObject.name=p1", 400,
     "field label not supported: involvedObject.name"},
    {"/apis/scheduling.k8s.io/v1/priorityclasses?fieldSelector=value=1", 400,
     "field label not supported: value"},
    {PODS "resourceVersion=abc", 400, "resourceVersion: Invalid value"},
    {PODS "resourceVersionMatch=Exact", 422,
     "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless"},
    {PODS "resourceVersion=1&resourceVersionMatch=Sometimes", 422,
     "resourceVersionMatch: Unsupported value: \"Sometimes\""},
    {PODS "resourceVersion=0&resourceVersionMatch=Exact", 422, "resourceVersion \"0\""},
    {PODS "resourceVersion=1&resourceVersionMatch=NotOlderThan&continue=x", 422,
     "forbidden when continue is provided"},
    {PODS "resourceVersion=1&resourceVersionMatch=NotOlderThan", 200, NULL},
    {PODS "limit=abc", 400, "limit: Invalid value"},
    {PODS "limit=99999999999999999999", 400, "limit: Invalid value"},
    {PODS "limit=-1", 200, NULL},
    {PODS "continue=zz", 400, "invalid continue token"},
    {PODS "continue=zz&resourceVersion=5", 400,
     "specifying resource version is not allowed when using continue"},
    {PODS "timeoutSeconds=abc", 400, "timeoutSeconds: Invalid value"},
    {PODS "timeoutSeconds=-1", 400, "timeoutSeconds: Invalid value"},
    {PODS "timeoutSeconds=30", 200, NULL},
    {PODS "sendInitialEvents=true", 422,
     "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"},
    {PODS "sendInitialEvents=maybe", 400, "sendInitialEvents: Invalid value"},
    {PODS "allowWatchBookmarks=maybe", 400, "allowWatchBookmarks: Invalid value"},
    {PODS "watch=maybe", 400, "watch: Invalid value"},
    {PODS "watch=1&timeoutSeconds=abc", 400, "timeoutSeconds: Invalid value"},
    {PODS "watch=1&timeoutSeconds=-5", 400, "must not be negative"},
    {PODS "watch=1&timeoutSeconds=99999999999999999999", 400, "out of range"},
    {PODS "watch=1&timeoutSeconds=%00", 400, "timeoutSeconds: Invalid value"},
    {PODS "watch=1&resourceVersionMatch=NotOlderThan", 422,
     "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
    {PODS "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", 422,
     "sendInitialEvents: Forbidden"},
    {PODS "watch=1&sendInitialEvents=true", 422,
     "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
    {PODS "watch=1&fieldSelector=metadata.nope=x", 400, "field label not supported"},
    {PODS "watch=1&allowWatchBookmarks=true&timeoutSeconds=99999999", 200, NULL},
#undef PODS
};

START_TEST(test_query_parameters)
{
	for (size_t i = 0; i < sizeof(query_table) / sizeof(query_table[0]); i++) {
		json_t *b = NULL;
		int got = call("GET", query_table[i].path, "admintok", NULL, NULL, &b);
		const char *msg = json_string_value(json_object_get(b, "message"));

		ck_assert_msg(got == query_table[i].status, "%s: %d, want %d (%s)",
			      query_table[i].path, got, query_table[i].status, msg ? msg : "");
		if (query_table[i].says)
			ck_assert_msg(msg && strstr(msg, query_table[i].says),
				      "%s: \"%s\" lacks %s", query_table[i].path, msg ? msg : "",
				      query_table[i].says);
		if (got == 422)
			ck_assert_str_eq(pk_get_string(b, "details.kind"), "ListOptions");
		json_decref(b);
	}
}
END_TEST

/* Ages as upstream's duration.HumanDuration prints them (its unit test's cases). */
START_TEST(test_table_durations)
{
	static const struct {
		int64_t s;
		const char *want;
	} cases[] = {
	    {-5, "<invalid>"},
	    {-1, "0s"},
	    {1, "1s"},
	    {70, "70s"},
	    {190, "3m10s"},
	    {600, "10m"},
	    {70 * 60, "70m"},
	    {47 * 3600, "47h"},
	    {49 * 3600, "2d1h"},
	    {(8 * 24 + 2) * 3600, "8d"},
	    {367 * 24 * 3600, "367d"},
	    {(365 * 2 * 24 + 25) * 3600, "2y1d"},
	    {(365 * 8 * 24 + 2) * 3600, "8y"},
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pk_srv_human_duration(cases[i].s, buf, sizeof(buf));
		ck_assert_str_eq(buf, cases[i].want);
	}
}
END_TEST

/* The JSONPath subset of printer columns: fields, and a filter on a list. */
START_TEST(test_table_json_path)
{
	json_t *o = json_loads("{\"status\":{\"conditions\":[{\"type\":\"A\",\"status\":\"False\"},"
			       "{\"type\":\"Completed\",\"status\":\"True\"}],\"restarts\":2}}",
			       0, NULL);

	ck_assert_int_eq(json_integer_value(pk_srv_json_path(o, ".status.restarts")), 2);
	ck_assert_str_eq(json_string_value(pk_srv_json_path(
			     o, ".status.conditions[?(@.type==\"Completed\")].status")),
			 "True");
	ck_assert_ptr_null(pk_srv_json_path(o, ".status.conditions[?(@.type==\"B\")].status"));
	ck_assert_ptr_null(pk_srv_json_path(o, ".status.missing.deeper"));
	ck_assert_ptr_null(pk_srv_json_path(o, ".status.conditions[0]"));
	json_decref(o);
}
END_TEST

/* The cell of column name of kind for the object in json, as text. */
static char *cell_text(const char *kind, const char *name, const char *json)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	json_t *o = json_loads(json, 0, NULL), *items = json_pack("[o]", o);
	json_t *table = pk_srv_table_of(t, items, true, false);
	json_t *defs = json_object_get(table, "columnDefinitions");
	json_t *cells = json_object_get(json_array_get(json_object_get(table, "rows"), 0), "cells");
	char *text = NULL;

	for (size_t i = 0; i < json_array_size(defs); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(defs, i), "name")),
			   name) == 0)
			text =
			    strdup(json_string_value(json_array_get(cells, i)) ?: "(not a string)");
	json_decref(items);
	json_decref(table);
	ck_assert_ptr_nonnull(text);
	return text;
}

static void check_cell(const char *kind, const char *name, const char *json, const char *want)
{
	char *got = cell_text(kind, name, json);
	ck_assert_msg(strcmp(got, want) == 0, "%s %s of %s: %s, want %s", kind, name, json, got,
		      want);
	free(got);
}

/* Cells computed as upstream's printers compute them. */
START_TEST(test_table_cells)
{
	check_cell("ResourceClaim", "State", "{}", "pending");
	check_cell("ResourceClaim", "State",
		   "{\"status\":{\"allocation\":{},\"reservedFor\":[{\"name\":\"p\"}]}}",
		   "allocated,reserved");
	check_cell("ResourceClaim", "State",
		   "{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
		   "\"status\":{\"allocation\":{}}}",
		   "deleted,allocated,deallocating");
	check_cell("Job", "Completions", "{\"spec\":{\"parallelism\":3}}", "0/1 of 3");
	check_cell("Job", "Completions",
		   "{\"spec\":{\"completions\":4},\"status\":{\"succeeded\":2}}", "2/4");
	check_cell("Job", "Status",
		   "{\"status\":{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"True\"},"
		   "{\"type\":\"Complete\",\"status\":\"True\"}]}}",
		   "Complete");
	check_cell("Job", "Duration",
		   "{\"status\":{\"startTime\":\"2026-01-01T00:00:00Z\","
		   "\"completionTime\":\"2026-01-01T00:03:10Z\"}}",
		   "3m10s");
	check_cell("Node", "Status", "{\"spec\":{\"unschedulable\":true}}",
		   "Unknown,SchedulingDisabled");
	check_cell("Node", "Roles",
		   "{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/b\":\"\","
		   "\"kubernetes.io/role\":\"a\",\"node-role.kubernetes.io/a\":\"\"}}}",
		   "a,b");
	check_cell("Pod", "Status",
		   "{\"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{\"state\":"
		   "{\"waiting\":{\"reason\":\"ImagePullBackOff\"}}}]}}",
		   "ImagePullBackOff");
	check_cell("Pod", "Status",
		   "{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
		   "\"status\":{\"phase\":\"Running\"}}",
		   "Terminating");
	check_cell("Event", "Object", "{\"involvedObject\":{\"kind\":\"PodGroup\",\"name\":\"g\"}}",
		   "podgroup/g");
	check_cell("Event", "Count", "{\"series\":{\"count\":5},\"count\":1}", "5");
	check_cell("Event", "Message", "{\"apiVersion\":\"events.k8s.io/v1\",\"note\":\"n\"}", "n");
}
END_TEST

START_TEST(test_list_watch_and_discovery)
{
	json_t *b = NULL;
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json", POD, NULL),
			 201);
	ck_assert_int_eq(
	    call("GET", "/api/v1/pods?labelSelector=a%20in", "admintok", NULL, NULL, &b), 400);
	json_decref(b);
	ck_assert_int_eq(
	    call("GET", "/api/v1/namespaces/default/pods?limit=1", "admintok", NULL, NULL, &b),
	    200);
	ck_assert_str_eq(json_string_value(json_object_get(b, "kind")), "PodList");
	ck_assert_uint_eq(json_array_size(json_object_get(b, "items")), 1);
	const char *rv =
	    json_string_value(json_object_get(json_object_get(b, "metadata"), "resourceVersion"));
	ck_assert_ptr_nonnull(rv);
	char rvbuf[32];
	snprintf(rvbuf, sizeof(rvbuf), "%llu", strtoull(rv, NULL, 10) - 1);
	json_decref(b);

	/* A watch from just before the pod replays its ADDED event from the ring. */
	char auth[] = "Bearer admintok";
	struct pk_query_arg args[] = {{"watch", "true"}, {"resourceVersion", rvbuf}};
	struct pk_request req = {.method = "GET",
				 .path = "/api/v1/pods",
				 .args = args,
				 .nargs = 2,
				 .authorization = auth};
	struct pk_response resp;
	ck_assert_int_eq(pk_server_handle(srv, &req, &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_ptr_nonnull(resp.watch);
	char buf[8192];
	ssize_t n = pk_watch_read(resp.watch, buf, sizeof(buf) - 1, 1000);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "{\"type\":\"ADDED\""));
	ck_assert_int_eq(pk_watch_read(resp.watch, buf, sizeof(buf), 50), 0);
	ck_assert_int_eq(pk_watch_heartbeat(resp.watch, buf, sizeof(buf)), 1); /* "\n" */
	pk_response_clear(&resp);

	/* With allowWatchBookmarks the heartbeat is a BOOKMARK at the version seen. */
	struct pk_query_arg bargs[] = {
	    {"watch", "1"}, {"resourceVersion", rvbuf}, {"allowWatchBookmarks", "true"}};
	req.args = bargs;
	req.nargs = 3;
	ck_assert_int_eq(pk_server_handle(srv, &req, &resp), 0);
	ck_assert_int_gt(pk_watch_read(resp.watch, buf, sizeof(buf) - 1, 1000), 0);
	n = pk_watch_heartbeat(resp.watch, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	char want[128];
	snprintf(want, sizeof(want), "\"type\":\"BOOKMARK\"");
	ck_assert_ptr_nonnull(strstr(buf, want));
	snprintf(want, sizeof(want), "\"resourceVersion\":\"%llu\"", strtoull(rvbuf, NULL, 10) + 1);
	ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
	pk_response_clear(&resp);

	/* Discovery and Tables. */
	ck_assert_int_eq(call("GET", "/apis", "admintok", NULL, NULL, &b), 200);
	ck_assert_str_eq(json_string_value(json_object_get(b, "kind")), "APIGroupList");
	json_decref(b);
	ck_assert_int_eq(
	    call("GET", "/apis/scheduling.k8s.io/v1alpha3", "admintok", NULL, NULL, &b), 200);
	char *text = json_dumps(b, 0);
	ck_assert_ptr_nonnull(strstr(text, "\"cpg\""));
	free(text);
	json_decref(b);
	struct pk_request treq = {.method = "GET",
				  .path = "/api/v1/namespaces/default/pods",
				  .authorization = auth,
				  .accept = "application/json;as=Table;v=v1;g=meta.k8s.io"};
	ck_assert_int_eq(pk_server_handle(srv, &treq, &resp), 0);
	json_t *table = json_loads(resp.body, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(table, "kind")), "Table");
	ck_assert_uint_eq(json_array_size(json_object_get(table, "rows")), 1);
	json_decref(table);
	pk_response_clear(&resp);
	ck_assert_int_eq(call("GET", "/metrics", "admintok", NULL, NULL, NULL), 200);
}
END_TEST

START_TEST(test_watch_gone_after_restart)
{
	json_t *b = NULL;
	ck_assert_int_eq(call("POST", "/api/v1/namespaces/default/pods", "admintok",
			      "application/json", POD, NULL),
			 201);
	/* Reopen the store: the ring starts at the current version, older ones are gone. */
	pk_server_free(srv);
	pk_store_close(st);
	char err[256], path[300];
	ck_assert_int_eq(pk_store_open_opts(dir, NULL, &st, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/tokens", dir);
	struct pk_server_config cfg = {.token_auth_file = path};
	ck_assert_int_eq(pk_server_new(st, &cfg, &srv, err, sizeof(err)), 0);
	ck_assert_int_eq(
	    call("GET", "/api/v1/pods?watch=1&resourceVersion=1", "admintok", NULL, NULL, &b), 410);
	ck_assert_str_eq(reason(b), "Expired");
	json_decref(b);
	ck_assert_int_eq(
	    call("GET", "/api/v1/namespaces/default/pods/p1", "admintok", NULL, NULL, NULL), 200);
}
END_TEST

/* A watch that falls behind the ring ends with an ERROR event carrying 410. */
START_TEST(test_watch_falls_behind)
{
	/* tmpfs when there is one: this writes more events than the ring holds. */
	char d[64] = "/dev/shm/pk-router-behind-XXXXXX", err[256];
	if (!mkdtemp(d)) {
		snprintf(d, sizeof(d), "/tmp/pk-router-behind-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(d));
	}
	struct pk_store *s2 = NULL;
	struct pk_server *v2 = NULL;
	struct pk_server_config cfg = {0};
	ck_assert_int_eq(pk_store_open_opts(d, NULL, &s2, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_server_new(s2, &cfg, &v2, err, sizeof(err)), 0);
	char rv[32];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)pk_store_rv(s2));
	struct pk_query_arg args[] = {{"watch", "1"}, {"resourceVersion", rv}};
	struct pk_request req = {
	    .method = "GET", .path = "/api/v1/namespaces/default/pods", .args = args, .nargs = 2};
	struct pk_response resp;
	ck_assert_int_eq(pk_server_handle(v2, &req, &resp), 0);
	ck_assert_ptr_nonnull(resp.watch);
	json_t *pod = json_loads(POD, 0, NULL);
	for (int i = 0; i < PK_STORE_RING_SIZE + 8; i++) {
		char name[32];
		snprintf(name, sizeof(name), "p%d", i);
		json_object_set_new(json_object_get(pod, "metadata"), "name", json_string(name));
		ck_assert_int_eq(pk_store_create(s2, pod, NULL, NULL), 0);
	}
	json_decref(pod);
	char buf[4096];
	ssize_t n = pk_watch_read(resp.watch, buf, sizeof(buf) - 1, 1000);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_msg(strncmp(buf, "{\"type\":\"ERROR\"", 15) == 0, "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "\"code\":410"));
	ck_assert_int_eq(pk_watch_read(resp.watch, buf, sizeof(buf), 100), -EPIPE);
	pk_response_clear(&resp);
	pk_server_free(v2);
	pk_store_close(s2);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("server");
	TCase *tp = tcase_create("auth");
	tcase_add_test(tp, test_tokens_parse);
	tcase_add_test(tp, test_authorize);
	suite_add_tcase(s, tp);
	TCase *tr = tcase_create("router");
	tcase_add_checked_fixture(tr, setup, teardown);
	tcase_add_test(tr, test_status_codes);
	tcase_add_test(tr, test_node_restriction);
	tcase_add_test(tr, test_impersonation);
	tcase_add_test(tr, test_leases);
	tcase_add_test(tr, test_events_v1);
	tcase_add_test(tr, test_binding);
	tcase_add_test(tr, test_table_durations);
	tcase_add_test(tr, test_table_json_path);
	tcase_add_test(tr, test_table_cells);
	tcase_add_test(tr, test_list_watch_and_discovery);
	tcase_add_test(tr, test_query_parameters);
	tcase_add_test(tr, test_watch_gone_after_restart);
	tcase_add_test(tr, test_watch_falls_behind);
	suite_add_tcase(s, tr);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

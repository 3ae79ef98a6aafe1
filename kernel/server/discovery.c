/* SPDX-License-Identifier: Apache-2.0 */
/*
 * discovery.c — the legacy discovery documents kubectl reads first.
 *
 * /api (APIVersions), /apis (APIGroupList), /apis/GROUP (APIGroup),
 * /api/v1 and /apis/GROUP/VERSION (APIResourceList) and /version, all built
 * from the one table of kinds (pk_types, kernel/api/kinds.c) and the other
 * versions served (pk_type_versions), so a kind added there is discoverable
 * without touching this file.  Aggregated discovery
 * (apidiscovery.k8s.io/v2) is not served; clients fall back to these.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"
#include "pk_git_commit.h"

static json_t *group_versions(const char *group)
{
	json_t *versions = json_array();
	const struct pk_type *t;
	for (size_t k = 0; (t = pk_type_served(k)); k++) {
		if (strcmp(t->group, group) != 0)
			continue;
		bool seen = false;
		size_t i;
		json_t *v;
		json_array_foreach(versions, i,
				   v) if (strcmp(json_string_value(json_object_get(v, "version")),
						 t->version) == 0) seen = true;
		if (seen)
			continue;
		char gv[128];
		snprintf(gv, sizeof(gv), "%s/%s", group, t->version);
		json_array_append_new(
		    versions, json_pack("{s:s,s:s}", "groupVersion", gv, "version", t->version));
	}
	return versions;
}

static json_t *api_group(const char *group)
{
	json_t *versions = group_versions(group);
	if (json_array_size(versions) == 0) {
		json_decref(versions);
		return NULL;
	}
	/* Preferred: the first GA version ("v1"), else the first listed: the version a kind
	 * is stored in comes before its other versions (kueue.x-k8s.io: v1beta2, then v1beta1). */
	json_t *pref = json_array_get(versions, 0);
	size_t i;
	json_t *v;
	json_array_foreach(
	    versions, i, v) if (strcmp(json_string_value(json_object_get(v, "version")), "v1") == 0)
	    pref = v;
	return json_pack("{s:s,s:s,s:s,s:o,s:O}", "kind", "APIGroup", "apiVersion", "v1", "name",
			 group, "versions", versions, "preferredVersion", pref);
}

static json_t *group_list(void)
{
	json_t *groups = json_array();
	for (const struct pk_type *const *p_t = pk_types, *t; (t = *p_t); p_t++) {
		if (!*t->group)
			continue;
		bool seen = false;
		for (const struct pk_type *const *u = pk_types; u < p_t; u++)
			if (strcmp((*u)->group, t->group) == 0)
				seen = true;
		if (seen)
			continue;
		json_t *g = api_group(t->group);
		json_object_del(g, "kind");
		json_object_del(g, "apiVersion");
		json_array_append_new(groups, g);
	}
	return json_pack("{s:s,s:s,s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups",
			 groups);
}

static json_t *str_list(const char *csv)
{
	json_t *a = json_array();
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", csv);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		json_array_append_new(a, json_string(tok));
	return a;
}

static json_t *resource_list(const char *group, const char *version)
{
	json_t *res = json_array();
	const struct pk_type *t;
	for (size_t k = 0; (t = pk_type_served(k)); k++) {
		if (strcmp(t->group, group) != 0 || strcmp(t->version, version) != 0)
			continue;
		char singular[64];
		size_t n = 0;
		for (const char *k = t->kind; *k && n + 1 < sizeof(singular); k++)
			singular[n++] = (char)tolower((unsigned char)*k);
		singular[n] = '\0';
		json_t *r = json_pack("{s:s,s:s,s:b,s:s,s:[ssssssss]}", "name", t->plural,
				      "singularName", singular, "namespaced", t->namespaced, "kind",
				      t->kind, "verbs", "create", "delete", "get", "list", "patch",
				      "update", "watch", "deletecollection");
		json_array_remove(json_object_get(r, "verbs"), 7); /* not served */
		if (*t->short_names)
			json_object_set_new(r, "shortNames", str_list(t->short_names));
		/* upstream's "all": workloads a user runs, never nodes or namespaces */
		if (t->pk == PK_KIND_POD || t->pk == PK_KIND_JOB)
			json_object_set_new(r, "categories", str_list("all"));
		json_array_append_new(res, r);
		char sub[96];
		if (t->has_status) {
			snprintf(sub, sizeof(sub), "%s/status", t->plural);
			json_array_append_new(res, json_pack("{s:s,s:s,s:b,s:s,s:[sss]}", "name",
							     sub, "singularName", "", "namespaced",
							     t->namespaced, "kind", t->kind,
							     "verbs", "get", "patch", "update"));
		}
		if (pk_srv_has_scale(t)) {
			snprintf(sub, sizeof(sub), "%s/scale", t->plural);
			json_array_append_new(
			    res, json_pack("{s:s,s:s,s:b,s:s,s:s,s:s,s:[sss]}", "name", sub,
					   "singularName", "", "namespaced", t->namespaced, "group",
					   "autoscaling", "version", "v1", "kind", "Scale", "verbs",
					   "get", "patch", "update"));
		}
		if (t->pk == PK_KIND_POD) {
			snprintf(sub, sizeof(sub), "%s/binding", t->plural);
			json_array_append_new(res, json_pack("{s:s,s:s,s:b,s:s,s:[s]}", "name", sub,
							     "singularName", "", "namespaced", true,
							     "kind", "Binding", "verbs", "create"));
			snprintf(sub, sizeof(sub), "%s/eviction", t->plural);
			json_array_append_new(res,
					      json_pack("{s:s,s:s,s:b,s:s,s:s,s:s,s:[s]}", "name",
							sub, "singularName", "", "namespaced", true,
							"group", "policy", "version", "v1", "kind",
							"Eviction", "verbs", "create"));
		}
	}
	/* read-only and always empty: see services_resource() in router.c */
	if (!*group && strcmp(version, "v1") == 0)
		json_array_append_new(res, json_pack("{s:s,s:s,s:b,s:s,s:[s],s:[ss]}", "name",
						     "services", "singularName", "service",
						     "namespaced", true, "kind", "Service",
						     "shortNames", "svc", "verbs", "get", "list"));
	if (json_array_size(res) == 0) {
		json_decref(res);
		return NULL;
	}
	char gv[128];
	snprintf(gv, sizeof(gv), "%s%s%s", group, *group ? "/" : "", version);
	return json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
			 "groupVersion", gv, "resources", res);
}

/*
 * OpenAPI v2, empty: kubectl validates the items of a `kind: List` against
 * /openapi/v2 (in gnostic protobuf) and skips kinds it has no schema for.
 * The protobuf form is a Document {1: swagger "2.0", 2: Info {1: title,
 * 2: version}}, written out by hand.
 */
void pk_srv_discovery_openapi_v2(const char *accept, struct pk_response *resp)
{
	static const char pb[] = "\x0a\x03"
				 "2.0"
				 "\x12\x13"
				 "\x0a\x0a"
				 "podkerneld"
				 "\x12\x05" PODKERNEL_VERSION;
	_Static_assert(sizeof(PODKERNEL_VERSION) == 6, "protobuf lengths above assume x.y.z");
	if (accept && strstr(accept, "protobuf")) {
		resp->status = 200;
		resp->content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
		resp->body = malloc(sizeof(pb) - 1);
		resp->body_len = resp->body ? sizeof(pb) - 1 : 0;
		if (resp->body)
			memcpy(resp->body, pb, sizeof(pb) - 1);
		return;
	}
	pk_srv_respond_json(resp, 200,
			    json_pack("{s:s,s:{s:s,s:s},s:{}}", "swagger", "2.0", "info", "title",
				      "podkerneld", "version", PODKERNEL_VERSION, "paths"));
}

bool pk_srv_discovery_handle(struct pk_server *srv, const char *path, struct pk_response *resp)
{
	char a[128], b[128], c[128];
	json_t *doc = NULL;
	if (strcmp(path, "/version") == 0) {
		/* Every field of version.Info (clients such as the Python one require them);
		 * the build stamps are kube-apiserver's values for an unstamped build. */
		doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "major", "1", "minor",
				"32", "gitVersion", "v1.32.0-podkernel." PODKERNEL_VERSION,
				"gitCommit", PODKERNEL_GIT_COMMIT, "gitTreeState",
				PODKERNEL_GIT_TREE_STATE, "buildDate", "1970-01-01T00:00:00Z",
				"goVersion", "none", "compiler", "gc", "platform", "linux/amd64");
	} else if (strcmp(path, "/openapi/v3") == 0 || strcmp(path, "/openapi/v3/") == 0) {
		doc = pk_srv_openapi_root();
	} else if (strcmp(path, "/openapi/v3/api/v1") == 0) {
		doc = pk_srv_openapi_gv("", "v1");
	} else if (sscanf(path, "/openapi/v3/apis/%127[^/]/%127[^/]%127s", a, b, c) == 2) {
		doc = pk_srv_openapi_gv(a, b);
	} else if (strcmp(path, "/api") == 0 || strcmp(path, "/api/") == 0) {
		char addr[128];
		snprintf(addr, sizeof(addr), "%s", srv->listen ? srv->listen : "");
		doc = json_pack("{s:s,s:[s],s:[{s:s,s:s}]}", "kind", "APIVersions", "versions",
				"v1", "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0",
				"serverAddress", addr);
	} else if (strcmp(path, "/apis") == 0 || strcmp(path, "/apis/") == 0) {
		doc = group_list();
	} else if (strcmp(path, "/api/v1") == 0 || strcmp(path, "/api/v1/") == 0) {
		doc = resource_list("", "v1");
	} else if (sscanf(path, "/apis/%127[^/]/%127[^/]%127s", a, b, c) == 2) {
		doc = resource_list(a, b);
	} else if (sscanf(path, "/apis/%127[^/]%127s", a, c) == 1) {
		doc = api_group(a);
	}
	if (!doc)
		return false;
	pk_srv_respond_json(resp, 200, doc);
	return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * router.c — one HTTP request in, one response out, no sockets.
 *
 * pk_server_handle() authenticates the bearer token, splits the path the way
 * kube-apiserver does (/api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]] and
 * /apis/GROUP/VERSION/...), authorises the verb, parses the body (JSON or
 * YAML, bounded by the codec's limits) and calls the store.  Query
 * arguments are validated as kube-apiserver does (booleans as Go's ParseBool,
 * resourceVersion and resourceVersionMatch, limit, dryRun=All) before any
 * store call; writes carry dryRun and the DeleteOptions preconditions to the
 * store, and a node's writes to its own Node pass NodeRestriction
 * (admission.c) first.  pk_server_precheck() is the part that needs no body.
 * Store errors become Kubernetes Status objects with the matching reason and
 * code; field errors become details.causes (the answers, query arguments and
 * bodies the handlers share are in router_request.c).  The verbs' handlers
 * live in router_read.c, router_write.c, router_patch.c and router_delete.c;
 * discovery in discovery.c, Tables in table.c, watch streams in watch.c and
 * stream.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"
#include "kernel/server/server-router.h"

#define MAX_SEGMENTS 12

static void route_clear(struct route *r)
{
	free(r->ns);
	free(r->name);
	free(r->sub);
}

static size_t split_path(const char *path, char *buf, size_t buflen, char **segs)
{
	if (strlen(path) >= buflen)
		return MAX_SEGMENTS + 1;
	strcpy(buf, path);
	size_t n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (n == MAX_SEGMENTS)
			return n + 1;
		segs[n++] = tok;
	}
	return n;
}

/* 0: a resource path; -ENOENT: not one (404). */
static int parse_route(const char *path, struct route *r)
{
	char buf[1024], *s[MAX_SEGMENTS];
	size_t n = split_path(path, buf, sizeof(buf), s);
	if (n > MAX_SEGMENTS || n < 3)
		return -ENOENT;
	size_t i;
	if (strcmp(s[0], "api") == 0 && strcmp(s[1], "v1") == 0) {
		r->group = "";
		r->version = "v1";
		i = 2;
	} else if (strcmp(s[0], "apis") == 0 && n >= 4) {
		i = 3;
	} else {
		return -ENOENT;
	}
	const char *group = i == 3 ? s[1] : "";
	const char *version = i == 3 ? s[2] : "v1";
	const char *ns = NULL;
	if (n - i >= 3 && strcmp(s[i], "namespaces") == 0 && pk_type_by_resource(group, s[i + 2])) {
		ns = s[i + 1];
		i += 2;
	}
	r->type = pk_type_by_version(group, version, s[i]);
	if (!r->type || n - i > 3)
		return -ENOENT;
	if (ns && !r->type->namespaced)
		return -ENOENT;
	/* A namespaced object is only ever addressed inside its namespace. */
	if (!ns && r->type->namespaced && n - i >= 2)
		return -ENOENT;
	r->group = r->type->group;
	r->version = r->type->version;
	r->ns = ns ? strdup(ns) : NULL;
	r->name = n - i >= 2 ? strdup(s[i + 1]) : NULL;
	r->sub = n - i == 3 ? strdup(s[i + 2]) : NULL;
	if (r->sub && strcmp(r->sub, "status") != 0 &&
	    !((strcmp(r->sub, "binding") == 0 || strcmp(r->sub, "eviction") == 0) &&
	      r->type->pk == PK_KIND_POD) &&
	    !(strcmp(r->sub, "scale") == 0 && pk_srv_has_scale(r->type)))
		return -ENOENT;
	if (r->sub && strcmp(r->sub, "status") == 0 && !r->type->has_status)
		return -ENOENT;
	return 0;
}

/* ---- authentication ------------------------------------------------------------ */
static void tokens_reload(struct pk_server *srv)
{
	time_t now = time(NULL);
	if (now == srv->token_checked && srv->tokens)
		return;
	srv->token_checked = now;
	struct stat st;
	if (stat(srv->token_file, &st) < 0) {
		/* Said once per disappearance; the tokens loaded last stay in force. */
		if (!srv->token_missing)
			pk_srv_log(srv, 0, "token file %s: %s (keeping the %zu tokens loaded last)",
				   srv->token_file, strerror(errno),
				   srv->tokens ? srv->tokens->n : 0);
		srv->token_missing = true;
		return;
	}
	srv->token_missing = false;
	if (srv->tokens && st.st_mtim.tv_sec == srv->token_stat.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == srv->token_stat.st_mtim.tv_nsec &&
	    st.st_size == srv->token_stat.st_size && st.st_ino == srv->token_stat.st_ino)
		return;
	struct pk_tokens *tk = NULL;
	char err[512];
	int r = pk_tokens_load(srv->token_file, &tk, err, sizeof(err));

	if (r == 0) {
		pk_tokens_free(srv->tokens);
		srv->tokens = tk;
		srv->token_stat = st;
		pk_srv_log(srv, 1, "token file %s: %zu tokens", srv->token_file, tk->n);
		if (*tk->warning)
			pk_srv_log(srv, 0, "token file: %s", tk->warning);
	} else if (r == -EINVAL || r == -EFBIG || r == -EIO) {
		pk_srv_log(srv, 0, "token file: %s (keeping the previous tokens)", err);
		srv->token_stat = st;
	}
	/* otherwise it could not be opened (replaced meanwhile): the next check retries */
}

/* Fills who (strings copied into store); returns false when unauthenticated. */
struct ident_store {
	char user[256];
	char uid[256];
	char groups_buf[64][128];
	const char *groups[64];
};

static bool authenticate(struct pk_server *srv, const struct pk_request *req,
			 struct pk_identity *who, struct ident_store *is)
{
	static const char *const admin_groups[] = {"system:masters", "system:authenticated"};
	if (!srv->token_file && !srv->client_ca_file) {
		*who = (struct pk_identity){"admin", admin_groups, 2, true};
		return true;
	}
	*who = (struct pk_identity){"system:anonymous", NULL, 0, false};
	/* A verified client certificate first, as kube-apiserver's x509 authenticator. */
	if (req->client_user && *req->client_user) {
		snprintf(is->user, sizeof(is->user), "%s", req->client_user);
		size_t n = req->nclient_groups < 63 ? req->nclient_groups : 63;
		for (size_t i = 0; i < n; i++) {
			snprintf(is->groups_buf[i], sizeof(is->groups_buf[i]), "%s",
				 req->client_groups[i]);
			is->groups[i] = is->groups_buf[i];
		}
		is->groups[n] = "system:authenticated";
		*who = (struct pk_identity){is->user, is->groups, n + 1, true};
		return true;
	}
	if (!srv->token_file)
		return false;
	/* As kube-apiserver: "Bearer" and the token split at single spaces; an empty
	 * token (two spaces) is no token, text after a further space is ignored. */
	const char *h = req->authorization;
	while (h && (*h == ' ' || *h == '\t'))
		h++;
	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	char token[4096];
	size_t tl = strcspn(h + 7, " ");
	while (tl && (h[7 + tl - 1] == '\t' || h[7 + tl - 1] == '\r'))
		tl--;
	if (tl == 0 || tl >= sizeof(token))
		return false;
	memcpy(token, h + 7, tl);
	token[tl] = '\0';
	pthread_mutex_lock(&srv->auth_lock);
	tokens_reload(srv);
	const struct pk_token *t = pk_tokens_find(srv->tokens, token);
	if (t) {
		snprintf(is->user, sizeof(is->user), "%s", t->user);
		size_t n = t->ngroups < 63 ? t->ngroups : 63;
		for (size_t i = 0; i < n; i++) {
			snprintf(is->groups_buf[i], sizeof(is->groups_buf[i]), "%s", t->groups[i]);
			is->groups[i] = is->groups_buf[i];
		}
		is->groups[n] = "system:authenticated";
		snprintf(is->uid, sizeof(is->uid), "%s", t->uid ? t->uid : "");
		*who = (struct pk_identity){is->user, is->groups, n + 1, true, is->uid};
	}
	pthread_mutex_unlock(&srv->auth_lock);
	return t != NULL;
}

static const char *verb_of(const char *method, const struct route *r, bool watch)
{
	if (strcmp(method, "GET") == 0)
		return watch ? "watch" : r->name ? "get" : "list";
	if (strcmp(method, "POST") == 0)
		return r->sub ? "update" : "create"; /* binding writes the pod */
	if (strcmp(method, "PUT") == 0)
		return "update";
	if (strcmp(method, "PATCH") == 0)
		return "patch";
	if (strcmp(method, "DELETE") == 0)
		return "delete";
	return NULL;
}

/* ?dryRun=All (repeatable); any other value is 400, as kube-apiserver. */
static int query_dry_run(const struct pk_request *req, struct pk_response *resp, bool *ret)
{
	*ret = false;
	for (size_t i = 0; i < req->nargs; i++) {
		if (!req->args[i].key || strcmp(req->args[i].key, "dryRun") != 0)
			continue;
		const char *v = req->args[i].value ? req->args[i].value : "";
		if (strcmp(v, "All") != 0) {
			pk_srv_respond_status(
			    resp, 400, "BadRequest", NULL, NULL, NULL,
			    "dryRun: Unsupported value: \"%s\": supported values: \"All\"", v);
			return -EINVAL;
		}
		*ret = true;
	}
	return 0;
}

static void dispatch_resource(struct pk_server *srv, const struct pk_request *req,
			      const struct route *r, const struct pk_identity *who,
			      const char *verb, struct pk_response *resp)
{
	/* the queue controller's own writes (--queue-controller-user) are not a user's */
	bool controller = srv->queue_controller_user && who && who->authenticated && who->user &&
			  strcmp(who->user, srv->queue_controller_user) == 0;
	struct call c = {
	    .srv = srv, .req = req, .r = r, .who = who, .wo = {.by_user = !controller}};
	bool is_get = strcmp(req->method, "GET") == 0;
	if (!is_get && query_dry_run(req, resp, &c.wo.dry_run) < 0)
		return;
	bool collection = r->name == NULL;
	bool is_binding = r->sub && strcmp(r->sub, "binding") == 0;
	bool is_eviction = r->sub && strcmp(r->sub, "eviction") == 0;
	/* A namespaced kind is created inside its namespace, not at /api/v1/pods. */
	bool where_ok = !r->type->namespaced || r->ns;
	c.dups = json_array();
	if (strcmp(verb, "watch") == 0)
		rt_do_watch(srv, req, r, resp);
	else if (strcmp(verb, "list") == 0)
		rt_do_list(srv, req, r, resp);
	else if (strcmp(verb, "get") == 0 && !is_binding && !is_eviction)
		rt_do_get(srv, req, r, resp);
	else if (strcmp(req->method, "POST") == 0 && collection && where_ok)
		rt_do_create(&c, resp);
	else if (strcmp(req->method, "POST") == 0 && is_binding && !c.wo.dry_run)
		rt_do_binding(srv, req, r, resp);
	else if (strcmp(req->method, "POST") == 0 && is_eviction)
		rt_do_eviction(&c, resp);
	else if (strcmp(verb, "update") == 0 && !collection && !is_binding && !is_eviction)
		rt_do_update(&c, resp);
	else if (strcmp(verb, "patch") == 0 && !collection && !is_binding && !is_eviction)
		rt_do_patch(&c, resp);
	else if (strcmp(verb, "delete") == 0 && !collection && !r->sub)
		rt_do_delete(&c, resp);
	else
		pk_srv_respond_status(
		    resp, 405, "MethodNotAllowed", NULL, NULL, NULL,
		    "the server does not allow this method on the requested resource");
	json_decref(c.dups);
}

static bool public_path(const char *path)
{
	return strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0 ||
	       strcmp(path, "/livez") == 0 || strcmp(path, "/version") == 0 ||
	       strcmp(path, "/version/") == 0;
}

/* /ui/: the placement map hook (GET only); 404 when nothing serves it. */
static const char *handle_ui(struct pk_server *srv, const struct pk_request *req,
			     struct pk_response *resp)
{
	if (strcmp(req->method, "GET") != 0) {
		pk_srv_respond_status(resp, 405, "MethodNotAllowed", NULL, NULL, NULL,
				      "method %s is not allowed", req->method);
		return "ui";
	}
	if (pk_srv_ui_render(srv, req, resp) < 0) {
		pk_response_clear(resp);
		pk_srv_respond_status(resp, 404, "NotFound", NULL, NULL, NULL,
				      "the server could not find the requested resource");
	}
	return "ui";
}

/* The /ui/ page itself (not /ui/api/): public like /healthz. */
static bool ui_page(const char *path)
{
	return (strncmp(path, "/ui/", 4) == 0 || strcmp(path, "/ui") == 0) &&
	       strncmp(path, "/ui/api/", 8) != 0;
}

/*
 * Damaged store rows (set aside at open or met by a read): /readyz fails
 * with the count and the last one, as kube-apiserver's etcd check names
 * what is wrong.  True when resp holds that answer.
 */
static bool respond_damage(struct pk_server *srv, struct pk_response *resp)
{
	struct pk_store_damage d;
	char text[512];

	pk_store_get_damage(srv->store, &d);
	if (d.rows == 0)
		return false;
	snprintf(text, sizeof(text),
		 "[-]store-integrity failed: %" PRIu64 " damaged rows (%" PRIu64
		 " set aside at start); last: %s\nreadyz check failed\n",
		 d.rows, d.quarantined, d.last);
	pk_srv_respond_text(resp, 500, "text/plain; charset=utf-8", text);
	return true;
}

/* A GET of /healthz, /readyz, /livez or /version (served to anyone); false otherwise. */
static bool serve_public(struct pk_server *srv, const struct pk_request *req,
			 struct pk_response *resp)
{
	if (!public_path(req->path) || strcmp(req->method, "GET") != 0)
		return false;
	if (strncmp(req->path, "/version", 8) == 0)
		pk_srv_discovery_handle(srv, "/version", resp);
	else if (strcmp(req->path, "/readyz") == 0 && !pk_store_writable(srv->store))
		/* Not ready while writes fail (disk full, I/O errors): kube's etcd check. */
		pk_srv_respond_text(resp, 500, "text/plain; charset=utf-8",
				    "[-]store failed: the last write to the store failed\n"
				    "readyz check failed\n");
	else if (strcmp(req->path, "/readyz") == 0 && respond_damage(srv, resp))
		;
	else
		pk_srv_respond_text(resp, 200, "text/plain; charset=utf-8", "ok");
	return true;
}

/* What the request line and headers alone refuse; true when resp holds it. */
static bool refuse_early(bool authed, const struct pk_request *req, struct pk_response *resp)
{
	if (!authed) {
		pk_srv_respond_status(resp, 401, "Unauthorized", NULL, NULL, NULL, "Unauthorized");
	} else if (req->nargs > PK_SERVER_MAX_QUERY_ARGS) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "too many query parameters: %zu (at most %d)", req->nargs,
				      PK_SERVER_MAX_QUERY_ARGS);
	} else if (pk_srv_query_nul(req, resp)) {
		/* answered: a NUL byte would cut the argument short */
	} else if (req->body_too_large || req->body_len > PK_SERVER_MAX_BODY) {
		pk_srv_respond_status(resp, 413, "RequestEntityTooLarge", NULL, NULL, NULL,
				      "the request body is larger than %d bytes",
				      PK_SERVER_MAX_BODY);
	} else {
		return false;
	}
	return true;
}

static void respond_forbidden(struct pk_response *resp, const struct route *r,
			      const struct pk_identity *who, const char *verb)
{
	pk_srv_respond_status(resp, 403, "Forbidden", r->type->plural, r->name, NULL,
			      "%s \"%s\" is forbidden: User \"%s\" cannot %s resource \"%s\" in "
			      "API group \"%s\"",
			      r->type->plural, r->name ? r->name : "", who->user, verb,
			      r->type->plural, r->group);
}

/*
 * Authorisation on the request line alone, before any body byte is read: a
 * write the identity may make on no object of the kind (any name a create
 * body could carry: for a node, only its own) is refused here.
 */
/* 403 for a node's Lease write outside the node-lease namespace; true when answered. */
static bool lease_elsewhere(const struct pk_server *srv, const struct route *r,
			    const struct pk_identity *who, const char *verb,
			    struct pk_response *resp)
{
	if (!pk_srv_admission_node_lease_elsewhere(srv, who, verb, r->type, r->ns))
		return false;
	pk_srv_respond_status(resp, 403, "Forbidden", r->type->plural, r->name, NULL,
			      "%s \"%s\" is forbidden: User \"%s\" cannot %s resource \"%s\" in "
			      "API group \"%s\" in the namespace \"%s\": a node may write its "
			      "Lease only in namespace \"%s\"",
			      r->type->plural, r->name ? r->name : "", who->user, verb,
			      r->type->plural, r->group, r->ns ? r->ns : "", srv->node_lease_ns);
	return true;
}

static bool forbidden_early(const struct pk_server *srv, const struct pk_request *req,
			    const struct pk_identity *who, struct pk_response *resp)
{
	struct route r = {0};
	const char *verb, *own = NULL;
	bool refused = false;

	if (parse_route(req->path, &r) < 0) {
		route_clear(&r);
		return false;
	}
	verb = verb_of(req->method, &r, false);
	pk_srv_admission_node_name(who, &own);
	if (verb && !pk_authorize(who, verb, r.type->kind, r.name ? r.name : own)) {
		respond_forbidden(resp, &r, who, verb);
		refused = true;
	} else if (verb && lease_elsewhere(srv, &r, who, verb, resp)) {
		refused = true;
	}
	route_clear(&r);
	return refused;
}

/*
 * pods/NAME/log, exec, attach, portforward and proxy are a kubelet's to
 * serve: 501 naming why for a pod that exists (404 when it does not; 403
 * when the caller may not), never a bare NotFound.
 */
static bool kubelet_subresource(struct pk_server *srv, const struct pk_request *req,
				const struct pk_identity *who, struct pk_response *resp)
{
	static const char *const subs[] = {"log", "exec", "attach", "portforward", "proxy"};
	char ns[254], name[254], sub[32];
	json_t *pod = NULL;
	bool read;

	if (sscanf(req->path, "/api/v1/namespaces/%253[^/]/pods/%253[^/]/%31[^/]", ns, name, sub) !=
	    3)
		return false;
	if (PK_STRING_TABLE_FIND(subs, sub) < 0)
		return false;
	read = strcmp(sub, "log") == 0;
	if (!pk_authorize(who, read ? "get" : "create", "Pod", name))
		pk_srv_respond_status(resp, 403, "Forbidden", "pods", name, NULL,
				      "pods \"%s\" is forbidden: User \"%s\" cannot %s resource "
				      "\"pods/%s\" in API group \"\"",
				      name, who->user, read ? "get" : "create", sub);
	else if (pk_store_get(srv->store, &pk_type_pod, ns, name, &pod) < 0)
		pk_srv_respond_status(resp, 404, "NotFound", "pods", name, NULL,
				      "pods \"%s\" not found", name);
	else
		pk_srv_respond_status(resp, 501, "NotImplemented", "pods", name, NULL,
				      "pods/%s of pod \"%s\": no kubelet serves this node "
				      "(podkerneld schedules; no container runs here)",
				      sub, name);
	json_decref(pod);
	return true;
}

/*
 * services: podkerneld runs no service proxy and allocates no cluster IPs, so
 * it holds no Service.  The resource is still served read-only, as an empty
 * list, because `kubectl cluster-info` lists kube-system's cluster services
 * and fails on a server without the resource; a read of one name is 404 and
 * a write 405 naming why.
 */
static bool services_resource(struct pk_server *srv, const struct pk_request *req,
			      const struct pk_identity *who, struct pk_response *resp)
{
	static const char pre[] = "/api/v1/namespaces/";
	const char *p = req->path, *slash, *name = NULL;
	bool list = strcmp(p, "/api/v1/services") == 0;
	bool get = false, read = strcmp(req->method, "GET") == 0;

	if (!list) {
		if (strncmp(p, pre, sizeof(pre) - 1) != 0 ||
		    !(slash = strchr(p + sizeof(pre) - 1, '/')) ||
		    strncmp(slash, "/services", 9) != 0)
			return false;
		name = slash + 9;
		list = *name == '\0';
		get = *name == '/' && name[1] && !strchr(++name, '/');
		if (!list && !get)
			return false;
	}
	if (!pk_authorize(who, read ? (list ? "list" : "get") : "create", "Service",
			  get ? name : NULL))
		pk_srv_respond_status(resp, 403, "Forbidden", "services", get ? name : NULL, NULL,
				      "services is forbidden: User \"%s\" cannot %s resource "
				      "\"services\" in API group \"\"",
				      who->user, read ? (list ? "list" : "get") : "write");
	else if (!read || rt_arg_true(req, "watch"))
		pk_srv_respond_status(resp, 405, "MethodNotAllowed", "services", NULL, NULL,
				      "services are %s here: podkerneld runs no service "
				      "proxy and allocates no cluster IPs",
				      read ? "not watched" : "read-only");
	else if (get)
		pk_srv_respond_status(resp, 404, "NotFound", "services", name, NULL,
				      "services \"%s\" not found", name);
	else
		pk_srv_respond_json(resp, 200,
				    json_pack("{s:s,s:s,s:{s:s},s:[]}", "kind", "ServiceList",
					      "apiVersion", "v1", "metadata", "resourceVersion",
					      "0", "items"));
	(void)srv;
	return true;
}

/* Who asked, for the request's log line and audit event (the groups: only for the audit log). */
static void note_user(const struct pk_server *srv, struct pk_srv_note *note,
		      const struct pk_identity *who)
{
	snprintf(note->user, sizeof(note->user), "%s", who->user ? who->user : "");
	snprintf(note->uid, sizeof(note->uid), "%s", who->uid ? who->uid : "");
	if (!srv->audit)
		return;
	note->groups = json_array();
	for (size_t i = 0; note->groups && i < who->ngroups; i++)
		json_array_append_new(note->groups, json_string(who->groups[i]));
}

/* What the path names, once parsed. */
static void note_route(struct pk_srv_note *note, const struct route *r)
{
	note->resource = r->type->plural;
	note->group = r->type->group;
	note->version = r->type->version;
	snprintf(note->subresource, sizeof(note->subresource), "%s", r->sub ? r->sub : "");
	snprintf(note->ns, sizeof(note->ns), "%s", r->ns ? r->ns : "");
	snprintf(note->name, sizeof(note->name), "%s", r->name ? r->name : "");
}

/* A request refused before its body: what its path and method name, when they do. */
static void note_early_route(struct pk_srv_note *note, const struct pk_request *req)
{
	struct route r = {0};

	if (parse_route(req->path, &r) == 0) {
		const char *verb = verb_of(req->method, &r, false);

		note_route(note, &r);
		if (verb)
			note->verb = verb;
	}
	route_clear(&r);
}

static const char *handle(struct pk_server *srv, const struct pk_request *req,
			  struct pk_response *resp, struct pk_srv_note *note)
{
	struct pk_identity who;
	struct ident_store is;
	struct pk_impersonation imp;
	bool authed = authenticate(srv, req, &who, &is);
	if (authed)
		note_user(srv, note, &who);
	if (serve_public(srv, req, resp))
		return "health";
	bool ui_api = strncmp(req->path, "/ui/api/", 8) == 0;
	if (ui_page(req->path))
		return handle_ui(srv, req, resp);
	if (refuse_early(authed, req, resp))
		return authed ? "other" : "auth";
	if (pk_srv_impersonate(srv, req, &who, &imp, resp) < 0)
		return "auth";
	if (ui_api) {
		if (!pk_authorize(&who, "list", "Node", NULL) ||
		    !pk_authorize(&who, "list", "Pod", NULL)) {
			pk_srv_respond_status(resp, 403, "Forbidden", NULL, NULL, NULL,
					      "User \"%s\" cannot read the placement map",
					      who.user);
			return "ui";
		}
		return handle_ui(srv, req, resp);
	}
	if (strcmp(req->path, "/openapi/v2") == 0 && strcmp(req->method, "GET") == 0) {
		pk_srv_discovery_openapi_v2(req->accept, resp);
		return "discovery";
	}
	if (strcmp(req->path, "/metrics") == 0 && strcmp(req->method, "GET") == 0) {
		char *text = pk_srv_metrics_render(srv);
		resp->status = text ? 200 : 500;
		resp->content_type = "text/plain; version=0.0.4";
		resp->body = text;
		resp->body_len = text ? strlen(text) : 0;
		return "metrics";
	}
	if (pk_srv_access_handle(srv, req, &who, resp))
		return "create";
	if (kubelet_subresource(srv, req, &who, resp))
		return "other";
	if (services_resource(srv, req, &who, resp))
		return strcmp(req->method, "GET") == 0 ? "list" : "other";
	struct route r = {0};
	if (parse_route(req->path, &r) < 0) {
		route_clear(&r);
		if (strcmp(req->method, "GET") == 0 &&
		    pk_srv_discovery_handle(srv, req->path, resp))
			return "discovery";
		pk_srv_respond_status(resp, 404, "NotFound", NULL, NULL, NULL,
				      "the server could not find "
				      "the requested resource");
		return "other";
	}
	note_route(note, &r);
	bool watch = false, bookmarks = false;
	const char *verb = NULL;
	const char *bad = rt_arg_bool(req, "watch", &watch) < 0 ? "watch"
			  : rt_arg_bool(req, "allowWatchBookmarks", &bookmarks) < 0
			      ? "allowWatchBookmarks"
			      : NULL;
	if (bad) {
		pk_srv_respond_status(
		    resp, 400, "BadRequest", NULL, NULL, NULL,
		    "%s: Invalid value: \"%s\": must be a boolean (true, false, 1, "
		    "0, t, f, ...)",
		    bad, rt_arg(req, bad));
		route_clear(&r);
		return "other";
	}
	verb = verb_of(req->method, &r, watch);
	if (!verb) {
		pk_srv_respond_status(resp, 405, "MethodNotAllowed", NULL, NULL, NULL,
				      "method %s is not allowed", req->method);
	} else if (!pk_authorize(&who, verb, r.type->kind, r.name) &&
		   (r.name || !pk_authorize(&who, verb, r.type->kind, rt_body_name(req)))) {
		respond_forbidden(resp, &r, &who, verb);
	} else if (!lease_elsewhere(srv, &r, &who, verb, resp)) {
		dispatch_resource(srv, req, &r, &who, verb, resp);
	}
	route_clear(&r);
	return verb ? verb : "other";
}

bool pk_server_precheck(struct pk_server *srv, const struct pk_request *req,
			struct pk_response *ret, char *ret_user, size_t userlen)
{
	struct pk_identity who;
	struct ident_store is;
	struct pk_impersonation imp;
	struct pk_response resp = {0};
	if (ret_user && userlen)
		*ret_user = '\0';
	if (!req->method || !req->path || req->path[0] != '/' || public_path(req->path) ||
	    ui_page(req->path))
		return false;
	bool authed = authenticate(srv, req, &who, &is);
	if (!refuse_early(authed, req, &resp) &&
	    pk_srv_impersonate(srv, req, &who, &imp, &resp) == 0 &&
	    !forbidden_early(srv, req, &who, &resp)) {
		if (ret_user && userlen)
			snprintf(ret_user, userlen, "%s", who.user);
		return false;
	}
	struct pk_srv_note note = {.verb = authed ? "other" : "auth", .resource = ""};
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (authed)
		note_user(srv, &note, &who);
	note_early_route(&note, req);
	pk_srv_metrics_record(srv, &note, resp.status, 0);
	pk_srv_request_done(srv, req, &note, resp.status, 0, &now);
	json_decref(note.groups);
	*ret = resp;
	return true;
}

int pk_server_handle(struct pk_server *srv, const struct pk_request *req, struct pk_response *ret)
{
	struct timespec t0, t1, received;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_REALTIME, &received);
	struct pk_response resp = {0};
	struct pk_srv_note note = {.resource = ""};
	if (!req->method || !req->path || req->path[0] != '/') {
		pk_srv_respond_status(&resp, 400, "BadRequest", NULL, NULL, NULL,
				      "malformed request");
	} else {
		note.verb = handle(srv, req, &resp, &note);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double secs =
		    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		pk_srv_metrics_record(srv, &note, resp.status, secs);
		pk_srv_request_done(srv, req, &note, resp.status, secs, &received);
		json_decref(note.groups);
	}
	*ret = resp;
	return 0;
}

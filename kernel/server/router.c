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
 * code; field errors become details.causes.  Discovery lives in discovery.c,
 * Tables in table.c, watch streams in watch.c and stream.c.
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

#define MAX_SEGMENTS 12

void pk_response_clear(struct pk_response *resp)
{
	if (!resp)
		return;
	free(resp->body);
	free(resp->warnings);
	pk_watch_free(resp->watch);
	memset(resp, 0, sizeof(*resp));
}

void pk_response_warn(struct pk_response *resp, const char *text)
{
	size_t have = resp->warnings_len, n = strcspn(text, "\r\n");
	if (n > PK_RESPONSE_WARNING_MAX)
		n = PK_RESPONSE_WARNING_MAX;
	if (have + n + 1 > PK_RESPONSE_WARNINGS_MAX) {
		resp->warnings_dropped++;
		return;
	}
	char *w = realloc(resp->warnings, have + n + 2);
	if (!w) {
		resp->warnings_dropped++;
		return;
	}
	memcpy(w + have, text, n);
	w[have + n] = '\n';
	w[have + n + 1] = '\0';
	resp->warnings = w;
	resp->warnings_len = have + n + 1;
}

void pk_srv_respond_json(struct pk_response *resp, int status, json_t *body)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
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
struct route {
	const struct pk_type *type;
	const char *group, *version;
	char *ns;   /* namespace from the path or NULL */
	char *name; /* object name or NULL (collection) */
	char *sub;  /* "status", "binding" or NULL */
};

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
	r->type = pk_type_by_resource(group, s[i]);
	if (!r->type || strcmp(r->type->version, version) != 0 || n - i > 3)
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

static const char *arg(const struct pk_request *req, const char *key)
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
static int arg_bool(const struct pk_request *req, const char *key, bool *ret)
{
	static const char *const yes[] = {"", "1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
	const char *v = arg(req, key);
	*ret = false;
	if (!v)
		return 0;
	if (PK_STRING_TABLE_FIND(yes, v) >= 0) {
		*ret = true;
		return 0;
	}
	return PK_STRING_TABLE_FIND(no, v) >= 0 ? 0 : -EINVAL;
}

static bool arg_true(const struct pk_request *req, const char *key)
{
	bool v;
	return arg_bool(req, key, &v) == 0 && v;
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

/* ---- helpers for handlers ------------------------------------------------------ */
static void respond_store_error(struct pk_response *resp, int rc, const struct route *r,
				const char *name, const struct pk_errors *errs)
{
	const char *plural = r->type ? r->type->plural : "";
	const char *kind = r->type ? r->type->kind : "";
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
	case -EINVAL: {
		char first[1024] = "";
		for (size_t i = 0; errs && i < errs->n && strlen(first) < 800; i++)
			snprintf(first + strlen(first), sizeof(first) - strlen(first), "%s%s",
				 i ? ", " : "", errs->msg[i]);
		pk_srv_respond_status(resp, 422, "Invalid", kind, nm, errs,
				      "%s \"%s\" is invalid: %s", kind, nm,
				      *first ? first : "invalid object");
		break;
	}
	default:
		pk_srv_respond_status(resp, 500, "InternalError", plural, nm, NULL,
				      "store error: %s", pk_errno_text(rc));
	}
}

static int parse_body_dups(const struct pk_request *req, struct pk_response *resp, json_t **ret,
			   json_t *dups);

static int parse_body(const struct pk_request *req, struct pk_response *resp, json_t **ret)
{
	return parse_body_dups(req, resp, ret, NULL);
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
static int parse_body_dups(const struct pk_request *req, struct pk_response *resp, json_t **ret,
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
static int check_body_identity(const struct route *r, json_t *obj, bool need_name,
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

static json_t *list_object(const struct pk_type *t, json_t *items, uint64_t rv, const char *cont)
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

static int parse_selectors(const struct pk_request *req, struct pk_response *resp,
			   struct pk_selector **ret_labels, struct pk_selector **ret_fields)
{
	char err[256];
	const char *ls = arg(req, "labelSelector"), *fs = arg(req, "fieldSelector");
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

/* ---- verbs ---------------------------------------------------------------------- */
static void do_get(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		   struct pk_response *resp)
{
	json_t *obj = NULL;
	int rc = pk_store_get(srv->store, r->type->kind, r->ns, r->name, &obj);
	if (rc < 0)
		return respond_store_error(resp, rc, r, r->name, NULL);
	obj = pk_srv_event_answer(r->type, obj);
	if (r->sub && strcmp(r->sub, "scale") == 0) {
		json_t *scale = pk_srv_scale_view(obj);
		json_decref(obj);
		return scale ? pk_srv_respond_json(resp, 200, scale)
			     : respond_store_error(resp, -ENOMEM, r, r->name, NULL);
	}
	if (pk_srv_wants_table(req->accept)) {
		json_t *items = json_pack("[o]", obj);
		json_t *table = pk_srv_table_of(
		    r->type, items, true,
		    arg(req, "includeObject") && strcmp(arg(req, "includeObject"), "Object") == 0);
		json_decref(items);
		return pk_srv_respond_json(resp, 200, table);
	}
	pk_srv_respond_json(resp, 200, obj);
}

/* ---- resourceVersion semantics (list and watch) ------------------------------ */
struct rv_query {
	uint64_t rv; /* resourceVersion; 0: unset or "0" (any) */
	bool exact;  /* resourceVersionMatch=Exact */
};

/* 504 as kube-apiserver answers a resourceVersion it has not reached. */
static void respond_too_large_rv(struct pk_response *resp, uint64_t want, uint64_t have)
{
	char msg[160];
	snprintf(msg, sizeof(msg),
		 "Timeout: Too large resource version: %" PRIu64 ", current: %" PRIu64, want, have);
	json_t *st =
	    json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:{s:[{s:s,s:s}],s:i},s:i}", "kind", "Status",
		      "apiVersion", "v1", "metadata", "status", "Failure", "message", msg, "reason",
		      "Timeout", "details", "causes", "reason", "ResourceVersionTooLarge",
		      "message", "Too large resource version", "retryAfterSeconds", 1, "code", 504);
	pk_srv_respond_json(resp, 504, st);
}

/*
 * resourceVersion as kube-apiserver reads it: digits only.  A version past
 * the store's is 504 (the server answers at once instead of waiting for
 * it).  0 or -EINVAL (answered).
 */
static int parse_rv_query(struct pk_server *srv, const struct pk_request *req,
			  struct pk_response *resp, struct rv_query *ret)
{
	const char *rvs = arg(req, "resourceVersion"), *match = arg(req, "resourceVersionMatch");
	*ret = (struct rv_query){0};
	if (rvs && *rvs) {
		char *end;
		errno = 0;
		ret->rv = strtoull(rvs, &end, 10);
		if (*end || errno || !(*rvs >= '0' && *rvs <= '9')) {
			pk_srv_respond_status(
			    resp, 400, "BadRequest", NULL, NULL, NULL,
			    "resourceVersion: Invalid value: \"%s\": must be an unsigned "
			    "decimal number",
			    rvs);
			return -EINVAL;
		}
	}
	/* its rules are ListOptions' (query.c, checked before) */
	ret->exact = match && strcmp(match, "Exact") == 0;
	uint64_t now = pk_store_rv(srv->store);
	if (ret->rv > now) {
		respond_too_large_rv(resp, ret->rv, now);
		return -EINVAL;
	}
	return 0;
}

/*
 * limit: absent, 0 or negative means every object (one snapshot, as
 * kube-apiserver); anything else must be a 64-bit integer.
 */
static int parse_limit(const struct pk_request *req, struct pk_response *resp, size_t *ret)
{
	const char *limit = arg(req, "limit");
	*ret = 0;
	if (!limit || !*limit)
		return 0;
	char *end;
	errno = 0;
	long long n = strtoll(limit, &end, 10);
	if (*end || errno) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "limit: Invalid value: \"%s\": must be a 64-bit integer",
				      limit);
		return -EINVAL;
	}
	*ret = n > 0 ? (size_t)n : 0;
	return 0;
}

static void do_list(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		    struct pk_response *resp)
{
	struct rv_query rq;
	struct pk_store_list_opts o = {.continue_token = arg(req, "continue")};
	if (pk_srv_query_check(req, r->type, false, resp) < 0 ||
	    parse_rv_query(srv, req, resp, &rq) < 0 || parse_limit(req, resp, &o.limit) < 0)
		return;
	struct pk_selector *labels, *fields;
	if (parse_selectors(req, resp, &labels, &fields) < 0)
		return;
	if (pk_srv_event_fields(r->type, fields) < 0) {
		pk_selector_free(labels);
		pk_selector_free(fields);
		return respond_store_error(resp, -ENOMEM, r, NULL, NULL);
	}
	o.labels = labels;
	o.fields = fields;
	json_t *items = NULL;
	uint64_t rv = 0;
	char *cont = NULL;
	int rc = pk_store_list(srv->store, r->type->kind, r->ns, &o, &items, &rv, &cont);
	pk_selector_free(labels);
	pk_selector_free(fields);
	if (rc == -EINVAL) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "invalid continue token");
		return;
	}
	if (rc < 0)
		return respond_store_error(resp, rc, r, NULL, NULL);
	/* Only the present is kept: an older exact version is gone, as after compaction. */
	if (rq.exact && rq.rv != rv) {
		json_decref(items);
		free(cont);
		pk_srv_respond_status(
		    resp, 410, "Expired", NULL, NULL, NULL,
		    "The resourceVersion for the provided list is too old: %" PRIu64
		    " (current %" PRIu64 ")",
		    rq.rv, rv);
		return;
	}
	json_t *out;
	pk_srv_event_items(r->type, items);
	if (pk_srv_wants_table(req->accept)) {
		const char *inc = arg(req, "includeObject");
		out = pk_srv_table_of(r->type, items, true, inc && strcmp(inc, "Object") == 0);
		json_t *meta = json_object_get(out, "metadata");
		char rvs[32];
		snprintf(rvs, sizeof(rvs), "%" PRIu64, rv);
		json_object_set_new(meta, "resourceVersion", json_string(rvs));
		if (cont)
			json_object_set_new(meta, "continue", json_string(cont));
		json_decref(items);
	} else {
		out = list_object(r->type, items, rv, cont);
	}
	free(cont);
	pk_srv_respond_json(resp, 200, out);
}

/* AND "metadata.name == name" into a field selector (built, not parsed: any name). */
static int select_name(struct pk_selector **sel, const char *name)
{
	if (!*sel && !(*sel = calloc(1, sizeof(**sel))))
		return -ENOMEM;
	struct pk_selector *s = *sel;
	struct pk_sel_req *reqs = realloc(s->reqs, (s->nreqs + 1) * sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	s->reqs = reqs;
	struct pk_sel_req *q = &reqs[s->nreqs];
	*q = (struct pk_sel_req){.key = strdup("metadata.name"),
				 .op = PK_SELOP_EQ,
				 .values = calloc(1, sizeof(char *)),
				 .nvalues = 1};
	if (q->values)
		q->values[0] = strdup(name);
	s->nreqs++;
	return q->key && q->values && q->values[0] ? 0 : -ENOMEM;
}

static void do_watch(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		     struct pk_response *resp)
{
	struct watch_spec spec = {.type = r->type,
				  .ns = r->ns,
				  .table = pk_srv_wants_table(req->accept),
				  .bookmarks = arg_true(req, "allowWatchBookmarks")};
	struct rv_query rq;
	long long timeout = 0;
	if (pk_srv_query_check(req, r->type, true, resp) < 0 ||
	    pk_srv_query_timeout(req, resp, &timeout) < 0 ||
	    parse_rv_query(srv, req, resp, &rq) < 0)
		return;
	if (parse_selectors(req, resp, &spec.labels, &spec.fields) < 0)
		return;
	/* A watch on one object is a watch with a name field selector. */
	if ((r->name && select_name(&spec.fields, r->name) < 0) ||
	    pk_srv_event_fields(r->type, spec.fields) < 0) {
		pk_selector_free(spec.labels);
		pk_selector_free(spec.fields);
		return respond_store_error(resp, -ENOMEM, r, NULL, NULL);
	}
	spec.since = rq.rv;
	/* 0 or absent: the default; more than the longest watch: clamped to it */
	spec.timeout_s = timeout > 0 && timeout < PK_SERVER_WATCH_TIMEOUT_S
			     ? (int)timeout
			     : PK_SERVER_WATCH_TIMEOUT_S;
	struct pk_store_stats stats;
	pk_store_get_stats(srv->store, &stats);
	if (spec.since && spec.since < stats.ring_floor) {
		pk_selector_free(spec.labels);
		pk_selector_free(spec.fields);
		pk_srv_respond_status(resp, 410, "Expired", NULL, NULL, NULL,
				      "too old resource version: %" PRIu64 " (%" PRIu64 ")",
				      spec.since, stats.ring_floor);
		return;
	}
	struct pk_watch *w = NULL;
	int rc = pk_srv_watch_new(srv, &spec, &w);
	if (rc < 0)
		return respond_store_error(resp, rc, r, NULL, NULL);
	resp->status = 200;
	resp->content_type = "application/json";
	resp->watch = w;
}

/* ---- writes: dryRun and preconditions, NodeRestriction ------------------------- */
/* A write on its way: who asks, and the store options from the query and body. */
struct call {
	struct pk_server *srv;
	const struct pk_request *req;
	const struct route *r;
	const struct pk_identity *who;
	struct pk_store_write_opts wo;
	json_t *dups; /* duplicate keys of the body, for fieldValidation */
};

/* The node name when NodeRestriction applies to this write (a node, its Node's main resource). */
static const char *restricted_node(const struct call *c)
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
	const char *node = restricted_node(c);
	if (!node)
		return 0;
	json_t *old = NULL;
	int rc = pk_store_get(c->srv->store, "Node", NULL, c->r->name, &old);
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
	const char *manager = arg(c->req, "fieldManager");
	bool pinned = json_is_string(pk_get(patch, "metadata.resourceVersion"));
	int rc = -PK_STORE_ECONFLICT;
	if (!manager || r->sub)
		return -ENOEXEC;
	for (int attempt = 0; attempt < 5 && rc == -PK_STORE_ECONFLICT; attempt++) {
		json_t *live = NULL, *next = NULL;
		char err[256] = "";
		if (pk_store_get(c->srv->store, r->type->kind, r->ns, r->name, &live) < 0 ||
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

static int patch_admitted(const struct call *c, enum pk_patch_type type, const json_t *patch,
			  struct pk_errors *errs, json_t **ret)
{
	const struct route *r = c->r;
	enum pk_store_sub sub = r->sub ? PK_SUB_STATUS : PK_SUB_MAIN;
	const char *node = restricted_node(c);
	int rc = node ? -ENOEXEC : patch_tracked(c, type, patch, errs, ret);
	if (rc != -ENOEXEC)
		return rc;
	if (!node)
		return pk_store_patch_opts(c->srv->store, r->type->kind, r->ns, r->name, type,
					   patch, sub, &c->wo, errs, ret);
	rc = -PK_STORE_ECONFLICT;
	for (int attempt = 0; attempt < 5 && rc == -PK_STORE_ECONFLICT; attempt++) {
		json_t *old = NULL, *next = NULL;
		char err[256] = "";
		rc = pk_store_get(c->srv->store, "Node", NULL, r->name, &old);
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
 * PATCH of an events.k8s.io Event: the patch has that shape, the store keeps
 * the core one, so it is applied here to the stored Event in the patch's
 * shape and written back as an update pinned to the version it was applied
 * to (retried when someone else wrote between, unless the patch pins one).
 */
static int patch_event(const struct call *c, enum pk_patch_type type, const json_t *patch,
		       struct pk_errors *errs, json_t **ret)
{
	const struct route *r = c->r;
	bool pinned = json_is_string(pk_get(patch, "metadata.resourceVersion"));
	int rc = -PK_STORE_ECONFLICT;
	for (int attempt = 0; attempt < 5 && rc == -PK_STORE_ECONFLICT; attempt++) {
		json_t *live = NULL, *view = NULL, *next = NULL, *stored = NULL;
		char err[256] = "";
		rc = pk_store_get(c->srv->store, r->type->kind, r->ns, r->name, &live);
		if (rc == 0 && !(view = pk_srv_event_view(r->type, live)))
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
		if (rc == 0 && !(stored = pk_srv_event_stored(r->type, next)))
			rc = -ENOMEM;
		if (rc == 0) {
			json_t *meta = json_object_get(stored, "metadata");
			json_object_set(meta, "name", pk_get(live, "metadata.name"));
			if (!pinned)
				json_object_set(meta, "resourceVersion",
						pk_get(live, "metadata.resourceVersion"));
			rc = pk_store_update_opts(c->srv->store, stored, PK_SUB_MAIN, &c->wo, errs,
						  ret);
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
static int field_validation(const struct call *c, const json_t *body, bool patch,
			    struct pk_response *resp)
{
	enum pk_field_validation mode;
	const char *v = arg(c->req, "fieldValidation");
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
static int namespace_lifecycle(const struct call *c, const json_t *obj, struct pk_response *resp)
{
	const char *ns = c->r->ns ? c->r->ns : pk_get_string(obj, "metadata.namespace");
	json_t *nsobj = NULL;

	if (!c->r->type->namespaced)
		return 0;
	if (!ns || !*ns)
		ns = "default";
	if (pk_store_get(c->srv->store, "Namespace", NULL, ns, &nsobj) == 0) {
		json_decref(nsobj);
		return 0;
	}
	pk_srv_respond_status(resp, 404, "NotFound", "namespaces", ns, NULL,
			      "namespaces \"%s\" not found", ns);
	return -ENOENT;
}

static void do_create(const struct call *c, struct pk_response *resp)
{
	const struct pk_request *req = c->req;
	const struct route *r = c->r;
	json_t *obj;
	if (parse_body_dups(req, resp, &obj, c->dups) < 0)
		return;
	if (check_body_identity(r, obj, false, resp) < 0 ||
	    field_validation(c, obj, false, resp) < 0 || namespace_lifecycle(c, obj, resp) < 0) {
		json_decref(obj);
		return;
	}
	json_t *stored = pk_srv_event_stored(r->type, obj);
	json_decref(obj);
	if (!(obj = stored))
		return respond_store_error(resp, -ENOMEM, r, NULL, NULL);
	struct pk_errors errs = {0};
	json_t *out = NULL;
	const char *name =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	char namebuf[256];
	snprintf(namebuf, sizeof(namebuf), "%s", name ? name : "");
	const char *node = restricted_node(c);
	int rc = 0;
	/* Authorised again on the body as decoded here, whatever body_name() read. */
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
		rc = pk_srv_managed_create(obj, arg(req, "fieldManager"));
	if (rc == 0)
		rc = pk_store_create_opts(c->srv->store, obj, &c->wo, &errs, &out);
	if (rc == 0 && !out)
		out = json_incref(obj);
	json_decref(obj);
	if (rc < 0)
		respond_store_error(resp, rc, r, namebuf, &errs);
	else
		pk_srv_respond_json(resp, 201, pk_srv_event_answer(r->type, out));
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
static void do_binding(struct pk_server *srv, const struct pk_request *req, const struct route *r,
		       struct pk_response *resp)
{
	json_t *body;
	if (parse_body(req, resp, &body) < 0)
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
	int rc = pk_store_get(srv->store, "Pod", r->ns, r->name, &pod);
	const char *bound = rc == 0 ? pk_get_string(pod, "spec.nodeName") : NULL;
	struct binding_edit b = {.node = node, .annotations = pk_get(body, "metadata.annotations")};
	struct pk_store_edit e = {
	    .kind = "Pod", .ns = r->ns, .name = r->name, .apply = binding_apply, .arg = &b};

	if (rc == 0 && !(bound && *bound) && !binding_uid_differs(body, pod)) {
		rc = pk_store_edit_batch(srv->store, &e, 1);
		rc = rc < 0 ? rc : e.rc;
		json_decref(e.object);
		if (rc == -PK_STORE_ECONFLICT && b.was_bound) {
			json_decref(pod);
			pod = NULL;
			rc = pk_store_get(srv->store, "Pod", r->ns, r->name, &pod);
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
		respond_store_error(resp, rc, r, r->name, NULL);
	}
	json_decref(pod);
	json_decref(body);
}

/* PUT or PATCH (type) of a scale subresource (scale.c); body taken. */
static void write_scale(const struct call *c, const enum pk_patch_type *type, json_t *body,
			struct pk_response *resp)
{
	struct pk_errors errs = {0};
	json_t *out = NULL;
	int rc = pk_srv_scale_write(c->srv->store, c->r->type, c->r->ns, c->r->name, type, body,
				    &c->wo, &errs, &out);
	json_decref(body);
	if (rc < 0)
		respond_store_error(resp, rc, c->r, c->r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_scale_view(out));
	json_decref(out);
	pk_errors_clear(&errs);
}

static void do_update(const struct call *c, struct pk_response *resp)
{
	const struct pk_request *req = c->req;
	const struct route *r = c->r;
	json_t *obj;
	if (parse_body_dups(req, resp, &obj, c->dups) < 0)
		return;
	if (r->sub && strcmp(r->sub, "scale") == 0)
		return write_scale(c, NULL, obj, resp);
	if (check_body_identity(r, obj, true, resp) < 0 ||
	    field_validation(c, obj, false, resp) < 0) {
		json_decref(obj);
		return;
	}
	json_t *stored = pk_srv_event_stored(r->type, obj);
	json_decref(obj);
	if (!(obj = stored))
		return respond_store_error(resp, -ENOMEM, r, NULL, NULL);
	struct pk_errors errs = {0};
	json_t *out = NULL, *live = NULL;
	enum pk_store_sub sub = r->sub ? PK_SUB_STATUS : PK_SUB_MAIN;
	/* The writer's manager takes over the fields it changes (managedFields). */
	if (!r->sub && arg(req, "fieldManager") &&
	    pk_store_get(c->srv->store, r->type->kind, r->ns, r->name, &live) == 0)
		pk_srv_managed_update(live, obj, arg(req, "fieldManager"));
	json_decref(live);
	int rc = admit_update(c, obj, &errs);
	if (rc == 0)
		rc = pk_store_update_opts(c->srv->store, obj, sub, &c->wo, &errs, &out);
	json_decref(obj);
	if (rc < 0)
		respond_store_error(resp, rc, r, r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_event_answer(r->type, out));
	pk_errors_clear(&errs);
}

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
	const char *node = restricted_node(c);
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
	const char *manager = arg(c->req, "fieldManager");
	bool force = false;
	json_t *config = NULL, *out = NULL, *conflicts = NULL;
	if (!manager || !*manager || strlen(manager) > 128) {
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "fieldManager: Required value: is required for apply patch "
				      "(at most 128 characters)");
		return;
	}
	if (arg_bool(c->req, "force", &force) < 0 ||
	    parse_body_dups(c->req, resp, &config, c->dups) < 0) {
		if (!resp->status)
			pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
					      "force: a boolean is expected");
		return;
	}
	if (check_body_identity(r, config, true, resp) < 0 ||
	    field_validation(c, config, false, resp) < 0 ||
	    namespace_lifecycle(c, config, resp) < 0) {
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
	/* an events.k8s.io Event is applied as the core Event the store keeps */
	const struct pk_type *t = pk_srv_event_type(r->type) ? pk_type_by_kind("Event") : r->type;
	json_t *stored = pk_srv_event_stored(r->type, config);
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
	int rc = stored ? pk_srv_apply(&q, &errs, &out, &conflicts, &created) : -ENOMEM;
	json_decref(stored);
	json_decref(config);
	if (rc == -EBUSY)
		respond_apply_conflicts(resp, r, conflicts);
	else if (rc < 0)
		respond_store_error(resp, rc, r, r->name, &errs);
	else
		pk_srv_respond_json(resp, created ? 201 : 200, pk_srv_event_answer(r->type, out));
	json_decref(conflicts);
	pk_errors_clear(&errs);
}

static void do_patch(const struct call *c, struct pk_response *resp)
{
	const struct pk_request *req = c->req;
	const struct route *r = c->r;
	enum pk_patch_type type;
	if (req->content_type &&
	    strncmp(req->content_type, "application/apply-patch+yaml", 28) == 0)
		return do_apply(c, resp);
	if (arg_true(req, "force")) {
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
	if (parse_body_dups(req, resp, &patch, type == PK_PATCH_JSON ? NULL : c->dups) < 0)
		return;
	if (r->sub && strcmp(r->sub, "scale") == 0)
		return write_scale(c, &type, patch, resp);
	/* A merge patch has the object's shape; a JSON patch's values are not checked. */
	if (type != PK_PATCH_JSON && field_validation(c, patch, true, resp) < 0) {
		json_decref(patch);
		return;
	}
	struct pk_errors errs = {0};
	json_t *out = NULL;
	int rc = pk_srv_event_api(r->type) ? patch_event(c, type, patch, &errs, &out)
					   : patch_admitted(c, type, patch, &errs, &out);
	json_decref(patch);
	if (rc < 0)
		respond_store_error(resp, rc, r, r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_event_answer(r->type, out));
	pk_errors_clear(&errs);
}

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

static void do_delete(struct call *c, struct pk_response *resp)
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
	int rc = pk_store_delete_opts(c->srv->store, c->r->type->kind, c->r->ns, c->r->name, &c->wo,
				      &errs, &out);
	if (rc < 0)
		respond_store_error(resp, rc, c->r, c->r->name, &errs);
	else
		pk_srv_respond_json(resp, 200, pk_srv_event_answer(c->r->type, out));
	pk_errors_clear(&errs);
	json_decref(opts);
}

/*
 * pods/NAME/eviction (policy/v1 Eviction), what kubectl drain posts: the
 * pod's disruption unit goes whole or not at all, as its budgets allow
 * (eviction.c); 201 and a Success Status, or 429 with the reason, as
 * kube-apiserver answers.
 */
static void do_eviction(struct call *c, struct pk_response *resp)
{
	json_t *body = NULL, *opts = NULL;
	if (parse_body(c->req, resp, &body) < 0)
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
			respond_store_error(resp, rc, c->r, c->r->name, NULL);
	}
	json_decref(opts);
	json_decref(body);
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
	struct call c = {.srv = srv, .req = req, .r = r, .who = who, .wo = {.by_user = true}};
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
		do_watch(srv, req, r, resp);
	else if (strcmp(verb, "list") == 0)
		do_list(srv, req, r, resp);
	else if (strcmp(verb, "get") == 0 && !is_binding && !is_eviction)
		do_get(srv, req, r, resp);
	else if (strcmp(req->method, "POST") == 0 && collection && where_ok)
		do_create(&c, resp);
	else if (strcmp(req->method, "POST") == 0 && is_binding && !c.wo.dry_run)
		do_binding(srv, req, r, resp);
	else if (strcmp(req->method, "POST") == 0 && is_eviction)
		do_eviction(&c, resp);
	else if (strcmp(verb, "update") == 0 && !collection && !is_binding && !is_eviction)
		do_update(&c, resp);
	else if (strcmp(verb, "patch") == 0 && !collection && !is_binding && !is_eviction)
		do_patch(&c, resp);
	else if (strcmp(verb, "delete") == 0 && !collection && !r->sub)
		do_delete(&c, resp);
	else
		pk_srv_respond_status(
		    resp, 405, "MethodNotAllowed", NULL, NULL, NULL,
		    "the server does not allow this method on the requested resource");
	json_decref(c.dups);
}

/* metadata.name of a create body, for authorisation by name; NULL when unknown. */
static const char *body_name(const struct pk_request *req)
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
	if (!pk_srv_admission_node_lease_elsewhere(srv, who, verb, r->type->kind, r->ns))
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
	else if (pk_store_get(srv->store, "Pod", ns, name, &pod) < 0)
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
	else if (!read || arg_true(req, "watch"))
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
	const char *bad = arg_bool(req, "watch", &watch) < 0 ? "watch"
			  : arg_bool(req, "allowWatchBookmarks", &bookmarks) < 0
			      ? "allowWatchBookmarks"
			      : NULL;
	if (bad) {
		pk_srv_respond_status(
		    resp, 400, "BadRequest", NULL, NULL, NULL,
		    "%s: Invalid value: \"%s\": must be a boolean (true, false, 1, "
		    "0, t, f, ...)",
		    bad, arg(req, bad));
		route_clear(&r);
		return "other";
	}
	verb = verb_of(req->method, &r, watch);
	if (!verb) {
		pk_srv_respond_status(resp, 405, "MethodNotAllowed", NULL, NULL, NULL,
				      "method %s is not allowed", req->method);
	} else if (!pk_authorize(&who, verb, r.type->kind, r.name) &&
		   (r.name || !pk_authorize(&who, verb, r.type->kind, body_name(req)))) {
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

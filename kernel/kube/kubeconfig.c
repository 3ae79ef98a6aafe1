/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubeconfig.c — kubeconfig files read (and written) as kubectl does.
 *
 * A file is read with the object codec (YAML or JSON, its limits and
 * positions), then checked field by field: every error names the file and
 * the field path ("k.yaml: users[1].user.token: must be a string").  Each
 * file's clusters, users and contexts become maps name -> entry, where an
 * entry is the file's object plus the directory its relative paths resolve
 * against.  Merging several files keeps, for every name, the entry of the
 * first file that has it, and the first current-context set (clientcmd's
 * "first file to set a value or map key wins").  Resolving a context then
 * assembles one server and credentials, applying the command-line overrides
 * with the precedence kubectl gives them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/api/api.h"
#include "kernel/kube/kube-internal.h"
#include "kernel/kube/kubeconfig.h"

#define MAX_ENTRIES 10000 /* clusters, users or contexts in one file */

struct pk_kubeconfig {
	json_t *clusters, *users, *contexts; /* name -> {"v": entry, "dir": dir} */
	char *current;
};

/* ---- base64 --------------------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

int pk_base64_decode(const char *in, size_t inlen, char **ret, size_t *ret_len)
{
	char *out = malloc(inlen / 4 * 3 + 4);
	size_t n = 0, bits = 0, pad = 0;
	unsigned acc = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < inlen; i++) {
		char c = in[i];
		int v;

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || pad) {
			free(out);
			return -EINVAL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (bits >= 6 || pad > 2) { /* a lone sixth of a byte: truncated input */
		free(out);
		return -EINVAL;
	}
	out[n] = '\0';
	*ret = out;
	*ret_len = n;
	return 0;
}

char *pk_base64_encode(const void *in, size_t len)
{
	const unsigned char *p = in;
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < len)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = b64[(v >> 18) & 63];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* ---- one file ----------------------------------------------------------------------- */

struct field_rule {
	const char *name;
	json_type type; /* JSON_STRING, JSON_TRUE (a bool), JSON_OBJECT, JSON_ARRAY */
};

static const struct field_rule cluster_fields[] = {
    {"server", JSON_STRING},
    {"certificate-authority", JSON_STRING},
    {"certificate-authority-data", JSON_STRING},
    {"insecure-skip-tls-verify", JSON_TRUE},
    {"tls-server-name", JSON_STRING},
    {"proxy-url", JSON_STRING},
    {"disable-compression", JSON_TRUE},
    {"extensions", JSON_ARRAY},
    {NULL, 0},
};

static const struct field_rule user_fields[] = {
    {"token", JSON_STRING},
    {"tokenFile", JSON_STRING},
    {"client-certificate", JSON_STRING},
    {"client-certificate-data", JSON_STRING},
    {"client-key", JSON_STRING},
    {"client-key-data", JSON_STRING},
    {"username", JSON_STRING},
    {"password", JSON_STRING},
    {"as", JSON_STRING},
    {"exec", JSON_OBJECT},
    {"auth-provider", JSON_OBJECT},
    {"extensions", JSON_ARRAY},
    {NULL, 0},
};

static const struct field_rule context_fields[] = {
    {"cluster", JSON_STRING},
    {"user", JSON_STRING},
    {"namespace", JSON_STRING},
    {"extensions", JSON_ARRAY},
    {NULL, 0},
};

static bool type_ok(const json_t *v, json_type want)
{
	if (json_is_null(v))
		return true;
	if (want == JSON_TRUE)
		return json_is_boolean(v);
	return json_typeof(v) == want;
}

static const char *type_word(json_type t)
{
	switch (t) {
	case JSON_STRING:
		return "a string";
	case JSON_TRUE:
		return "true or false";
	case JSON_OBJECT:
		return "a mapping";
	default:
		return "a list";
	}
}

/* Unknown fields are ignored (kubectl ignores them too); known ones typed. */
static int check_fields(const char *file, const char *path, const json_t *obj,
			const struct field_rule *rules, char *err, size_t errlen)
{
	for (const struct field_rule *r = rules; r->name; r++) {
		const json_t *v = json_object_get(obj, r->name);

		if (v && !type_ok(v, r->type)) {
			snprintf(err, errlen, "%s: %s.%s: must be %s", file, path, r->name,
				 type_word(r->type));
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * One list ("clusters", "users" or "contexts") into map, each item
 * {name, <inner>: {...}} stored as {"v": inner, "dir": dir}.
 */
static int read_list(const char *file, const char *dir, const json_t *doc, const char *list,
		     const char *inner, const struct field_rule *rules, json_t *map, char *err,
		     size_t errlen)
{
	const json_t *arr = json_object_get(doc, list), *item;
	char path[96];
	size_t i;

	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr)) {
		snprintf(err, errlen, "%s: %s: must be a list", file, list);
		return -EINVAL;
	}
	if (json_array_size(arr) > MAX_ENTRIES) {
		snprintf(err, errlen, "%s: %s: more than %d entries", file, list, MAX_ENTRIES);
		return -EINVAL;
	}
	json_array_foreach(arr, i, item)
	{
		const char *name = json_string_value(json_object_get(item, "name"));
		json_t *v = json_object_get(item, inner);

		snprintf(path, sizeof(path), "%s[%zu]", list, i);
		if (!json_is_object(item)) {
			snprintf(err, errlen, "%s: %s: must be a mapping", file, path);
			return -EINVAL;
		}
		if (!name || !*name) {
			snprintf(err, errlen, "%s: %s.name: Required value", file, path);
			return -EINVAL;
		}
		if (v && !json_is_null(v) && !json_is_object(v)) {
			snprintf(err, errlen, "%s: %s.%s: must be a mapping", file, path, inner);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "%s[%zu].%s", list, i, inner);
		if (json_is_object(v) && check_fields(file, path, v, rules, err, errlen) < 0)
			return -EINVAL;
		if (json_object_get(map, name)) {
			snprintf(err, errlen, "%s: %s[%zu].name: Duplicate value: \"%.200s\"", file,
				 list, i, name);
			return -EINVAL;
		}
		/* "o" takes the reference: an entry without its mapping gets a new empty one */
		if (json_object_set_new(
			map, name,
			json_pack("{s:o,s:s}", "v",
				  json_is_object(v) ? json_incref(v) : json_object(), "dir",
				  dir ? dir : "")) < 0)
			return -ENOMEM;
	}
	return 0;
}

static struct pk_kubeconfig *kc_new(void)
{
	struct pk_kubeconfig *kc = calloc(1, sizeof(*kc));

	if (!kc)
		return NULL;
	kc->clusters = json_object();
	kc->users = json_object();
	kc->contexts = json_object();
	if (!kc->clusters || !kc->users || !kc->contexts) {
		pk_kubeconfig_free(kc);
		return NULL;
	}
	return kc;
}

void pk_kubeconfig_free(struct pk_kubeconfig *kc)
{
	if (!kc)
		return;
	json_decref(kc->clusters);
	json_decref(kc->users);
	json_decref(kc->contexts);
	free(kc->current);
	free(kc);
}

const char *pk_kubeconfig_current_context(const struct pk_kubeconfig *kc)
{
	return kc && kc->current && *kc->current ? kc->current : NULL;
}

static int check_header(const char *name, const json_t *doc, char *err, size_t errlen)
{
	const json_t *kind = json_object_get(doc, "kind"), *cur;

	if (kind && !json_is_null(kind) &&
	    (!json_is_string(kind) || strcmp(json_string_value(kind), "Config") != 0)) {
		snprintf(err, errlen, "%s: kind: must be Config", name);
		return -EINVAL;
	}
	cur = json_object_get(doc, "current-context");
	if (cur && !json_is_null(cur) && !json_is_string(cur)) {
		snprintf(err, errlen, "%s: current-context: must be a string", name);
		return -EINVAL;
	}
	return 0;
}

int pk_kubeconfig_parse(const char *name, const char *dir, const char *text, size_t len,
			struct pk_kubeconfig **ret, char *err, size_t errlen)
{
	struct pk_kubeconfig *kc;
	json_t *docs = NULL, *doc;
	const char *cur;
	int r;

	r = pk_read_buffer(name, text, len, &docs, err, errlen);
	if (r < 0)
		return r;
	if (json_array_size(docs) > 1) {
		snprintf(err, errlen, "%s: expected one kubeconfig document, found %zu", name,
			 json_array_size(docs));
		json_decref(docs);
		return -EINVAL;
	}
	kc = kc_new();
	if (!kc) {
		json_decref(docs);
		return -ENOMEM;
	}
	doc = json_array_get(docs, 0); /* an empty file is an empty config */
	r = doc ? check_header(name, doc, err, errlen) : 0;
	if (r == 0 && doc)
		r = read_list(name, dir, doc, "clusters", "cluster", cluster_fields, kc->clusters,
			      err, errlen);
	if (r == 0 && doc)
		r = read_list(name, dir, doc, "users", "user", user_fields, kc->users, err, errlen);
	if (r == 0 && doc)
		r = read_list(name, dir, doc, "contexts", "context", context_fields, kc->contexts,
			      err, errlen);
	cur = doc ? json_string_value(json_object_get(doc, "current-context")) : NULL;
	if (r == 0 && cur && *cur && !(kc->current = strdup(cur)))
		r = -ENOMEM;
	json_decref(docs);
	if (r < 0) {
		pk_kubeconfig_free(kc);
		return r;
	}
	*ret = kc;
	return 0;
}

/* ---- several files ------------------------------------------------------------------ */

/* Add what `from` names that `into` does not (the first file wins). */
static int merge_into(struct pk_kubeconfig *into, const struct pk_kubeconfig *from)
{
	json_t *maps[3][2] = {{into->clusters, from->clusters},
			      {into->users, from->users},
			      {into->contexts, from->contexts}};
	const char *key;
	json_t *v;

	for (int m = 0; m < 3; m++)
		json_object_foreach(maps[m][1], key,
				    v) if (!json_object_get(maps[m][0], key) &&
					   json_object_set(maps[m][0], key, v) < 0) return -ENOMEM;
	if (!into->current && from->current && !(into->current = strdup(from->current)))
		return -ENOMEM;
	return 0;
}

/* One file merged into kc; missing files are skipped unless must_exist. */
static int load_one(struct pk_kubeconfig *kc, const char *path, bool must_exist, char *err,
		    size_t errlen)
{
	struct pk_kubeconfig *one = NULL;
	char *text = NULL, *dir;
	size_t len = 0;
	int r = kube_read_small_file(path, &text, &len);

	if (r == -ENOENT && !must_exist)
		return 0;
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
		return r;
	}
	dir = strdup(path);
	if (!dir) {
		free(text);
		return -ENOMEM;
	}
	if (strrchr(dir, '/'))
		*(strrchr(dir, '/') == dir ? dir + 1 : strrchr(dir, '/')) = '\0';
	else
		strcpy(dir, ".");
	r = pk_kubeconfig_parse(path, dir, text, len, &one, err, errlen);
	free(text);
	free(dir);
	if (r < 0)
		return r;
	r = merge_into(kc, one);
	pk_kubeconfig_free(one);
	return r;
}

/* Each non-empty entry of a ':' list, once (later duplicates are skipped). */
static int load_list(struct pk_kubeconfig *kc, const char *env, char *err, size_t errlen)
{
	char *copy = strdup(env), *save = NULL;
	json_t *seen = json_object();
	size_t nfiles = 0;
	int r = copy && seen ? 0 : -ENOMEM;

	for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p && r == 0;
	     p = strtok_r(NULL, ":", &save)) {
		if (json_object_get(seen, p))
			continue;
		if (++nfiles > PK_KUBECONFIG_MAX_FILES) {
			snprintf(err, errlen, "KUBECONFIG: more than %d files",
				 PK_KUBECONFIG_MAX_FILES);
			r = -EINVAL;
			break;
		}
		json_object_set_new(seen, p, json_true());
		r = load_one(kc, p, false, err, errlen);
	}
	json_decref(seen);
	free(copy);
	return r;
}

int pk_kubeconfig_load(const char *explicit_path, const char *env, const char *home,
		       struct pk_kubeconfig **ret, char *err, size_t errlen)
{
	struct pk_kubeconfig *kc = kc_new();
	int r = 0;

	if (!kc)
		return -ENOMEM;
	if (explicit_path && *explicit_path) {
		r = load_one(kc, explicit_path, true, err, errlen);
	} else if (env && *env) {
		r = load_list(kc, env, err, errlen);
	} else if (home && *home) {
		char path[4096];

		if ((size_t)snprintf(path, sizeof(path), "%s/.kube/config", home) < sizeof(path))
			r = load_one(kc, path, false, err, errlen);
	}
	if (r < 0) {
		pk_kubeconfig_free(kc);
		return r;
	}
	*ret = kc;
	return 0;
}

/* ---- resolving a context ------------------------------------------------------------ */

static int set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = NULL;
	if (s && *s && !(*dst = strdup(s)))
		return -ENOMEM;
	return 0;
}

/* A path field of an entry, resolved against the entry's file directory. */
static int set_path(char **dst, const json_t *entry, const char *field)
{
	const char *p = json_string_value(json_object_get(json_object_get(entry, "v"), field));
	const char *dir = json_string_value(json_object_get(entry, "dir"));

	free(*dst);
	*dst = NULL;
	if (!p || !*p)
		return 0;
	if (p[0] == '/' || !dir || !*dir)
		return (*dst = strdup(p)) ? 0 : -ENOMEM;
	return asprintf(dst, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", p) < 0
		   ? (*dst = NULL, -ENOMEM)
		   : 0;
}

static int set_data(char **dst, size_t *dst_len, const char *file, const char *path,
		    const json_t *entry, const char *field, char *err, size_t errlen)
{
	const char *s = json_string_value(json_object_get(json_object_get(entry, "v"), field));
	int r;

	free(*dst);
	*dst = NULL;
	*dst_len = 0;
	if (!s || !*s)
		return 0;
	r = pk_base64_decode(s, strlen(s), dst, dst_len);
	if (r == -EINVAL)
		snprintf(err, errlen, "%s: %s.%s: not valid base64", file, path, field);
	return r;
}

static const char *entry_str(const json_t *entry, const char *field)
{
	return json_string_value(json_object_get(json_object_get(entry, "v"), field));
}

static int from_cluster(struct pk_kube_credentials *c, const json_t *cl, const char *name,
			char *err, size_t errlen)
{
	char path[300];
	int r;

	snprintf(path, sizeof(path), "clusters[%s].cluster", name);
	if ((r = set_str(&c->server, entry_str(cl, "server"))) < 0 ||
	    (r = set_str(&c->tls_server_name, entry_str(cl, "tls-server-name"))) < 0 ||
	    (r = set_str(&c->proxy_url, entry_str(cl, "proxy-url"))) < 0 ||
	    (r = set_path(&c->ca_file, cl, "certificate-authority")) < 0 ||
	    (r = set_data(&c->ca_data, &c->ca_data_len, "kubeconfig", path, cl,
			  "certificate-authority-data", err, errlen)) < 0)
		return r;
	c->insecure =
	    json_is_true(json_object_get(json_object_get(cl, "v"), "insecure-skip-tls-verify"));
	return 0;
}

/*
 * Impersonation (as, as-uid, as-groups, as-user-extra: kubectl's --as) is
 * not implemented: a user that asks for it is refused rather than acting as
 * itself.
 */
static int check_impersonation(const json_t *v, const char *name, char *err, size_t errlen)
{
	static const char *const fields[] = {"as", "as-uid", "as-groups", "as-user-extra"};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const json_t *f = json_object_get(v, fields[i]);

		if (!f || json_is_null(f) || (json_is_string(f) && !*json_string_value(f)) ||
		    (json_is_array(f) && !json_array_size(f)) ||
		    (json_is_object(f) && !json_object_size(f)))
			continue;
		snprintf(err, errlen,
			 "user \"%.200s\": impersonation (%s) is not supported; use the "
			 "impersonated user's own credentials",
			 name, fields[i]);
		return -ENOTSUP;
	}
	return 0;
}

static int from_user(struct pk_kube_credentials *c, const json_t *u, const char *name, char *err,
		     size_t errlen)
{
	const json_t *v = json_object_get(u, "v");
	char path[300];
	int r;

	snprintf(path, sizeof(path), "users[%s].user", name);
	if ((r = set_str(&c->token, entry_str(u, "token"))) < 0 ||
	    (r = set_path(&c->token_file, u, "tokenFile")) < 0 ||
	    (r = set_path(&c->cert_file, u, "client-certificate")) < 0 ||
	    (r = set_path(&c->key_file, u, "client-key")) < 0 ||
	    (r = set_str(&c->username, entry_str(u, "username"))) < 0 ||
	    (r = set_str(&c->password, entry_str(u, "password"))) < 0 ||
	    (r = set_data(&c->cert_data, &c->cert_data_len, "kubeconfig", path, u,
			  "client-certificate-data", err, errlen)) < 0 ||
	    (r = set_data(&c->key_data, &c->key_data_len, "kubeconfig", path, u, "client-key-data",
			  err, errlen)) < 0)
		return r;
	r = check_impersonation(v, name, err, errlen);
	if (r < 0)
		return r;
	if (json_is_object(json_object_get(v, "exec")) ||
	    json_is_object(json_object_get(v, "auth-provider"))) {
		snprintf(err, errlen,
			 "user \"%.200s\": %s credentials are not supported (use a "
			 "token, a token file or a client certificate)",
			 name, json_object_get(v, "exec") ? "exec plugin" : "auth-provider");
		return -ENOTSUP;
	}
	return 0;
}

/* Which context, cluster and user; their entries (NULL when not named). */
static int pick(const struct pk_kubeconfig *kc, const struct pk_kube_overrides *o,
		struct pk_kube_credentials *c, const json_t **ret_cl, const char **ret_clname,
		const json_t **ret_u, const char **ret_uname, char *err, size_t errlen)
{
	const char *ctxname =
	    o->context && *o->context ? o->context : pk_kubeconfig_current_context(kc);
	const json_t *ctx = NULL;
	const char *clname = o->cluster, *uname = o->user;

	if (ctxname) {
		ctx = kc ? json_object_get(kc->contexts, ctxname) : NULL;
		if (!ctx) {
			snprintf(err, errlen, "context \"%.200s\" not found in the kubeconfig%s",
				 ctxname, o->context ? "" : " (its current-context)");
			return -ENOENT;
		}
		if (set_str(&c->context, ctxname) < 0 ||
		    set_str(&c->namespace, entry_str(ctx, "namespace")) < 0)
			return -ENOMEM;
		if (!clname || !*clname)
			clname = entry_str(ctx, "cluster");
		if (!uname || !*uname)
			uname = entry_str(ctx, "user");
	}
	*ret_cl = clname && *clname && kc ? json_object_get(kc->clusters, clname) : NULL;
	*ret_u = uname && *uname && kc ? json_object_get(kc->users, uname) : NULL;
	if (clname && *clname && !*ret_cl && !(o->server && *o->server)) {
		snprintf(err, errlen, "cluster \"%.200s\" not found in the kubeconfig", clname);
		return -ENOENT;
	}
	if (uname && *uname && !*ret_u) {
		snprintf(err, errlen, "user \"%.200s\" not found in the kubeconfig", uname);
		return -ENOENT;
	}
	*ret_clname = clname;
	*ret_uname = uname;
	return 0;
}

/* Command-line overrides, with kubectl's precedence. */
static int apply_overrides(struct pk_kube_credentials *c, const struct pk_kube_overrides *o)
{
	int r = 0;

	if (o->server && *o->server) {
		r = set_str(&c->server, o->server);
		free(c->tls_server_name); /* as clientcmd: it named the kubeconfig's server */
		c->tls_server_name = NULL;
	}
	if (r == 0 && o->token && *o->token) {
		r = set_str(&c->token, o->token);
		free(c->token_file);
		c->token_file = NULL;
	}
	if (r == 0 && o->ca_file && *o->ca_file) {
		r = set_str(&c->ca_file, o->ca_file);
		free(c->ca_data);
		c->ca_data = NULL;
		c->ca_data_len = 0;
	}
	if (r == 0 && o->cert_file && *o->cert_file) {
		r = set_str(&c->cert_file, o->cert_file);
		free(c->cert_data);
		c->cert_data = NULL;
		c->cert_data_len = 0;
	}
	if (r == 0 && o->key_file && *o->key_file) {
		r = set_str(&c->key_file, o->key_file);
		free(c->key_data);
		c->key_data = NULL;
		c->key_data_len = 0;
	}
	if (r == 0 && o->insecure) {
		c->insecure = true; /* the flag drops the configured CA, as in kubectl */
		if (!(o->ca_file && *o->ca_file)) {
			free(c->ca_file);
			free(c->ca_data);
			c->ca_file = c->ca_data = NULL;
			c->ca_data_len = 0;
		}
	}
	if (r == 0 && o->namespace && *o->namespace)
		r = set_str(&c->namespace, o->namespace);
	return r;
}

static int check_usable(const struct pk_kube_credentials *c, char *err, size_t errlen)
{
	if (!c->server || !*c->server) {
		snprintf(err, errlen,
			 "no server: give --server, or a kubeconfig whose context "
			 "names a cluster with a server%s%s",
			 c->context ? " (context " : "", c->context ? c->context : "");
		if (c->context)
			strncat(err, ")", errlen - strlen(err) - 1);
		return -ENOENT;
	}
	if (strncmp(c->server, "http://", 7) != 0 && strncmp(c->server, "https://", 8) != 0) {
		snprintf(err, errlen, "server \"%.200s\": expected an http:// or https:// URL",
			 c->server);
		return -EINVAL;
	}
	if (c->proxy_url && strncmp(c->proxy_url, "http://", 7) != 0 &&
	    strncmp(c->proxy_url, "https://", 8) != 0 &&
	    strncmp(c->proxy_url, "socks5://", 9) != 0) {
		snprintf(err, errlen,
			 "proxy-url \"%.200s\": expected an http://, https:// or socks5:// URL",
			 c->proxy_url);
		return -EINVAL;
	}
	if (c->insecure && (c->ca_file || c->ca_data)) {
		snprintf(err, errlen,
			 "specifying a root certificates file with the insecure flag "
			 "is not allowed");
		return -EINVAL;
	}
	if ((c->cert_file || c->cert_data) != (c->key_file || c->key_data)) {
		snprintf(err, errlen,
			 "a client certificate needs its key (client-key or "
			 "client-key-data), and a key its certificate");
		return -EINVAL;
	}
	return 0;
}

int pk_kubeconfig_resolve(const struct pk_kubeconfig *kc, const struct pk_kube_overrides *o,
			  struct pk_kube_credentials *ret, char *err, size_t errlen)
{
	static const struct pk_kube_overrides none = {0};
	struct pk_kube_credentials c = {0};
	const json_t *cl, *u;
	const char *clname, *uname;
	bool token_override;
	int r;

	if (!o)
		o = &none;
	token_override = o->token && *o->token;
	r = pick(kc, o, &c, &cl, &clname, &u, &uname, err, errlen);
	if (r == 0 && cl)
		r = from_cluster(&c, cl, clname, err, errlen);
	if (r == 0 && u) {
		r = from_user(&c, u, uname, err, errlen);
		if (r == -ENOTSUP && token_override)
			r = 0; /* --token stands in for the plugin */
	}
	if (r == 0)
		r = apply_overrides(&c, o);
	if (r == 0)
		r = check_usable(&c, err, errlen);
	if (r < 0) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		pk_kube_credentials_clear(&c);
		return r;
	}
	*ret = c;
	return 0;
}

void pk_kube_credentials_clear(struct pk_kube_credentials *c)
{
	if (!c)
		return;
	free(c->context);
	free(c->server);
	free(c->tls_server_name);
	free(c->proxy_url);
	free(c->ca_file);
	free(c->ca_data);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c->token_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_data);
	if (c->key_data)
		explicit_bzero(c->key_data, c->key_data_len);
	free(c->key_data);
	free(c->username);
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	free(c->namespace);
	memset(c, 0, sizeof(*c));
}

/* ---- writing ---------------------------------------------------------------------------- */

static json_t *config_tree(const char *name, const char *server, const char *ca_b64,
			   const char *token)
{
	json_t *cluster = json_pack("{s:s}", "server", server);

	if (cluster && ca_b64)
		json_object_set_new(cluster, "certificate-authority-data", json_string(ca_b64));
	json_t *user = token ? json_pack("{s:s}", "token", token) : json_object();

	return json_pack("{s:s,s:s,s:[{s:s,s:o}],s:[{s:s,s:o}],s:[{s:s,s:{s:s,s:s}}],s:s}",
			 "apiVersion", "v1", "kind", "Config", "clusters", "name", name, "cluster",
			 cluster, "users", "name", name, "user", user, "contexts", "name", name,
			 "context", "cluster", name, "user", name, "current-context", name);
}

int pk_kubeconfig_write(const char *path, const char *name, const char *server, const char *ca_file,
			const char *token, char *err, size_t errlen)
{
	char *ca = NULL, *ca_b64 = NULL, *text = NULL, *tmp = NULL;
	size_t ca_len = 0;
	json_t *tree = NULL;
	int r = 0, fd = -1;

	if (!path || !name || !server)
		return -EINVAL;
	if (ca_file && (r = kube_read_small_file(ca_file, &ca, &ca_len)) < 0) {
		snprintf(err, errlen, "%s: %s", ca_file, strerror(-r));
		return r;
	}
	if ((ca && !(ca_b64 = pk_base64_encode(ca, ca_len))) ||
	    !(tree = config_tree(name, server, ca_b64, token)) ||
	    !(text = pk_write_string(tree, PK_FORMAT_YAML)) || asprintf(&tmp, "%s.tmp", path) < 0) {
		tmp = NULL;
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(-r));
		goto out;
	}
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		unlink(tmp);
	}
out:
	if (text)
		explicit_bzero(text, strlen(text));
	free(text);
	free(tmp);
	free(ca);
	free(ca_b64);
	json_decref(tree);
	return r;
}

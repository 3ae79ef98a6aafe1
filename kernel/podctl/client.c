/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — podctl as a client of podkerneld (or any API server): apply,
 * get, delete, describe, top and map.
 *
 * Every command speaks the Kubernetes-shaped HTTP API with JSON bodies
 * through kernel/kube's client (kube.h), over one kept-alive connection per
 * command; a watch (get -w) is kube_stream().  Kind names resolve like
 * kubectl's (plural, singular, short name) through the store's table of
 * served types, which also gives each kind's API path.  `apply` creates an
 * object or merge-patches it onto the stored one (fields the file leaves out
 * are kept).  `get` prints a table per kind (or the objects as JSON/YAML) and
 * with -w follows the watch stream; `describe` adds what a person asks first
 * about a group: its children, where its pods landed per topology level and
 * why it is pending; `top` sums requests of bound pods against allocatable
 * per topology domain.  Topology levels are the node label keys
 * topology.podkernel.dev/<level>, outermost first (fewest domains first),
 * then the host.
 *
 * The server and credentials come from kubeconfig like kubectl's (main.c's
 * client options, kernel/kube/kubeconfig.h): a CA file or data, a bearer token
 * or token file, a client certificate and key (files or data), basic auth,
 * or no verification at all when asked.  kernel/kube turns them into the
 * connection's settings, the same way as for podagent and attach mode.
 *
 * Exit codes (CONTRACT.md): 0 success, 2 bad usage or an object the server
 * rejected as invalid, 1 anything else (unreachable server, not found).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/kube/kube.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

/* ---- HTTP ------------------------------------------------------------------------ */

/* Every request goes through kernel/kube's client (g->conn, opened by podctl_client). */
struct http {
	struct podctl_globals *g;
};

#define REQUEST_TIMEOUT_MS 60000

/*
 * Why no answer came, as the body podctl reports: {"message": why, "why":
 * "tls" (the handshake or the server's certificate), "unreachable" or
 * "local" (nothing was sent: an unreadable token file, a URL too long)}.
 */
static json_t *no_answer(const struct kube_conn *conn, int r)
{
	const char *m = *kube_conn_error(conn) ? kube_conn_error(conn) : strerror(-r);

	return json_pack("{s:s,s:s}", "message", m, "why",
			 r != -EIO		       ? "local"
			 : kube_conn_tls_failure(conn) ? "tls"
						       : "unreachable");
}

/* An answer that is not JSON (a proxy's HTML page): what it was, for the message. */
static json_t *not_json(const struct kube_conn *conn)
{
	const char *type, *head;
	char m[256];
	size_t n;

	kube_conn_answer(conn, &n, &type, &head);
	if (n == 0)
		return NULL;
	snprintf(m, sizeof(m), "the answer is not JSON (%s, %zu bytes: %s)",
		 *type ? type : "no Content-Type", n, head);
	return json_pack("{s:s}", "message", m);
}

/*
 * One request.  ret_status is the HTTP code (0 when no answer came:
 * ret_body then says why, see no_answer()).  ret_body is the parsed JSON
 * answer (NULL if none or not JSON).
 */
static int http_do(struct http *h, const char *method, const char *path, const json_t *body,
		   const char *content_type, long *ret_status, json_t **ret_body)
{
	int r;

	*ret_status = 0;
	*ret_body = NULL;
	r = kube_request(h->g->conn, method, path, body ? content_type : NULL, body,
			 REQUEST_TIMEOUT_MS, ret_status, ret_body);
	if (r < 0) {
		*ret_status = 0;
		*ret_body = no_answer(h->g->conn, r);
	} else if (!*ret_body && (*ret_status < 200 || *ret_status > 299)) {
		*ret_body = not_json(h->g->conn);
	}
	return 0;
}

/* The message of a Status response (or no_answer()'s), for errors. */
static const char *status_message(const json_t *body)
{
	const char *m;

	if (json_is_string(body))
		return json_string_value(body);
	m = json_string_value(json_object_get(body, "message"));
	return m ? m : "no message";
}

/* Exit code for a failed response: invalid input is 2, the rest 1. */
static int fail_code(long status)
{
	return status == 400 || status == 422 ? PODCTL_EXIT_USAGE : PODCTL_EXIT_FAILURE;
}

static int report_failure(const char *what, long status, const json_t *body)
{
	const char *why = json_string_value(json_object_get(body, "why"));

	if (status == 0 && why && strcmp(why, "tls") == 0)
		fprintf(
		    stderr,
		    "podctl: %s: TLS with the server failed (is --certificate-authority, or the "
		    "kubeconfig's certificate-authority, the CA that signed the server's "
		    "certificate?): %s\n",
		    what, status_message(body));
	else if (status == 0 && why && strcmp(why, "local") == 0)
		fprintf(stderr, "podctl: %s: %s\n", what, status_message(body));
	else if (status == 0)
		fprintf(stderr, "podctl: %s: cannot reach the server: %s\n", what,
			status_message(body));
	else
		fprintf(stderr, "podctl: %s: %s (HTTP %ld)\n", what, status_message(body), status);
	return fail_code(status);
}

/* GET path into ret (200 only); failures are reported. */
static int get_json(struct http *h, const char *path, const char *what, json_t **ret)
{
	long st;
	json_t *body = NULL;

	if (http_do(h, "GET", path, NULL, NULL, &st, &body) < 0)
		return PODCTL_EXIT_FAILURE;
	if (st == 200 && !body) { /* a 200 that is no object: not the API server talking */
		body = not_json(h->g->conn);
		fprintf(stderr, "podctl: %s: %s (HTTP 200)\n", what,
			body ? status_message(body) : "an empty answer");
		json_decref(body);
		return PODCTL_EXIT_FAILURE;
	}
	if (st != 200) {
		int r = report_failure(what, st, body);

		json_decref(body);
		return r;
	}
	*ret = body;
	return 0;
}

/* ---- kinds and paths ------------------------------------------------------------- */

static char *lower(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i < len - 1; i++)
		buf[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] | 0x20 : s[i]);
	buf[i] = '\0';
	return buf;
}

/* ---- common option parsing ------------------------------------------------------------ */

struct opts {
	const char *ns;
	bool all_ns, watch;
	const char *output; /* NULL table, wide, json, yaml */
	const char *selector;
	const char *level; /* top --level NAME */
	const char *files[64];
	size_t nfiles;
	const char *args[4];
	size_t nargs;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("podctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return PODCTL_EXIT_USAGE;
}

static const char *value_of(int *i, int argc, char **argv, const char *s, const char *l)
{
	const char *a = argv[*i];
	size_t ll = l ? strlen(l) : 0;

	if ((s && strcmp(a, s) == 0) || (l && strcmp(a, l) == 0))
		return *i + 1 < argc ? argv[++*i] : NULL;
	if (l && strncmp(a, l, ll) == 0 && a[ll] == '=')
		return a + ll + 1;
	if (s && strncmp(a, s, 2) == 0 && a[2])
		return a + 2;
	return NULL;
}

static int parse_opts(const struct http *h, int argc, char **argv, struct opts *o)
{
	const char *ns = kube_client_credentials(h->g->client)->namespace;

	o->ns = ns ? ns : "default";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (a[0] != '-' || strcmp(a, "-") == 0) {
			if (o->nargs >= sizeof(o->args) / sizeof(o->args[0]))
				return usage_error("%s: too many arguments", argv[0]);
			o->args[o->nargs++] = a;
		} else if (strcmp(a, "-A") == 0 || strcmp(a, "--all-namespaces") == 0) {
			o->all_ns = true;
		} else if (strcmp(a, "-w") == 0 || strcmp(a, "--watch") == 0) {
			o->watch = true;
		} else if ((v = value_of(&i, argc, argv, "-n", "--namespace"))) {
			o->ns = v;
		} else if ((v = value_of(&i, argc, argv, "-o", "--output"))) {
			if (*v == '=') /* -o=json, as pflag reads it */
				v++;
			if (strcmp(v, "wide") && strcmp(v, "json") && strcmp(v, "yaml") &&
			    strncmp(v, "jsonpath=", 9) && strncmp(v, "custom-columns=", 15))
				return usage_error("-o %s: expected wide, json, yaml, "
						   "jsonpath=TEMPLATE or custom-columns=SPEC",
						   v);
			o->output = v;
		} else if ((v = value_of(&i, argc, argv, "-l", "--selector"))) {
			o->selector = v;
		} else if (strcmp(argv[0], "top") == 0 &&
			   (v = value_of(&i, argc, argv, "--level", "--level"))) {
			o->level = v;
		} else if ((v = value_of(&i, argc, argv, "-f", "--filename"))) {
			if (o->nfiles >= sizeof(o->files) / sizeof(o->files[0]))
				return usage_error("too many -f files");
			o->files[o->nfiles++] = v;
		} else {
			return usage_error("%s: unknown or incomplete option '%s'", argv[0], a);
		}
	}
	return 0;
}

/* ---- apply ----------------------------------------------------------------------------- */

static int apply_one(struct http *h, const char *file, json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const struct pk_type *t = kind ? pk_type_by_kind(kind) : NULL;
	const char *name = pk_name(obj);
	char lk[64], what[512];
	long st;
	json_t *body = NULL;

	if (!t)
		return usage_error("%s: kind: Unsupported value: \"%s\"", file, kind ? kind : "");
	if (!name || !*name)
		return usage_error("%s: %s: metadata.name: Required value", file, kind);
	const char *ns = t->namespaced ? pk_namespace(obj) : NULL;
	char *path = podctl_type_path(t, ns, name, NULL);
	char *coll = podctl_type_path(t, ns, NULL, NULL);
	int r = PODCTL_EXIT_FAILURE;

	snprintf(what, sizeof(what), "%s: %s/%s", file, lower(kind, lk, sizeof(lk)), name);
	if (!path || !coll)
		goto out;
	http_do(h, "GET", path, NULL, NULL, &st, &body);
	if (st == 404 || st == 200) { /* else the GET's failure is what is reported */
		json_decref(body);
		body = NULL;
	}
	if (st == 404) {
		http_do(h, "POST", coll, obj, "application/json", &st, &body);
		if (st == 200 || st == 201) {
			printf("%s/%s created\n", lk, name);
			r = 0;
		}
	} else if (st == 200) {
		json_t *patch = json_deep_copy(obj);

		json_object_del(json_object_get(patch, "metadata"), "resourceVersion");
		http_do(h, "PATCH", path, patch, "application/merge-patch+json", &st, &body);
		json_decref(patch);
		if (st == 200) {
			printf("%s/%s configured\n", lk, name);
			r = 0;
		}
	}
	if (r != 0) {
		json_t *causes = pk_get(body, "details.causes"), *c;
		size_t i;

		json_array_foreach(causes, i, c)
		    fprintf(stderr, "%s: %s: %s\n", what,
			    json_string_value(json_object_get(c, "field")) ?: "",
			    json_string_value(json_object_get(c, "message")) ?: "");
		r = report_failure(what, st, body);
	}
out:
	json_decref(body);
	free(path);
	free(coll);
	return r;
}

static int cmd_apply(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	int r = parse_opts(h, argc, argv, &o), worst = 0;

	if (r)
		return r;
	if (!o.nfiles || o.nargs)
		return usage_error("usage: podctl apply -f FILE [-f FILE ...]");
	for (size_t f = 0; f < o.nfiles; f++) {
		json_t *objs = NULL, *obj;
		char err[1024] = "";
		size_t i;
		const char *path = strcmp(o.files[f], "-") == 0 ? "/dev/stdin" : o.files[f];

		r = pk_read_file(path, &objs, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "podctl: %s\n", *err ? err : strerror(-r));
			return podctl_input_exit(r);
		}
		json_array_foreach(objs, i, obj)
		{
			const char *k = json_string_value(json_object_get(obj, "kind"));
			const struct pk_type *t = k ? pk_type_by_kind(k) : NULL;

			if (t && t->namespaced && strcmp(o.ns, "default") != 0 &&
			    !json_object_get(json_object_get(obj, "metadata"), "namespace"))
				pk_set(obj, "metadata.namespace", json_string(o.ns));
			r = apply_one(h, o.files[f], obj);
			if (r > worst)
				worst = r;
		}
		json_decref(objs);
	}
	return worst;
}

/* ---- helpers over objects ---------------------------------------------------------------- */

static const char *cond_status(const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);

	return c ? json_string_value(json_object_get(c, "status")) : NULL;
}

static const char *cond_reason(const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);

	return c ? json_string_value(json_object_get(c, "reason")) : NULL;
}

static const char *group_topology(const json_t *g)
{
	json_t *t = json_array_get(pk_get(g, "spec.schedulingConstraints.topology"), 0);
	const char *k = json_string_value(json_object_get(t, "key"));

	return k ? k : json_string_value(json_object_get(t, "level"));
}

static const char *pod_phase(const json_t *pod)
{
	if (pk_get(pod, "metadata.deletionTimestamp"))
		return "Terminating";
	if (pk_get_string(pod, "spec.nodeName"))
		return "Bound";
	if (cond_status(pod, "PodScheduled") &&
	    strcmp(cond_status(pod, "PodScheduled"), "False") == 0)
		return "Pending";
	return "Pending";
}

static bool node_unreachable(const json_t *node)
{
	json_t *taints = pk_get(node, "spec.taints"), *t;
	size_t i;

	json_array_foreach(taints, i, t)
	{
		const char *k = json_string_value(json_object_get(t, "key"));

		if (k && strcmp(k, "node.kubernetes.io/unreachable") == 0)
			return true;
	}
	return false;
}

/* Topology level keys present on nodes: outermost (fewest domains) first, host last. */
static json_t *level_keys(const json_t *nodes)
{
	json_t *seen = json_object(), *keys = json_array(), *n, *labels, *v;
	const char *k;
	size_t i;

	json_array_foreach(nodes, i, n)
	{
		labels = pk_get(n, "metadata.labels");
		json_object_foreach(labels, k, v)
		{
			if (!topo_label_is_level(k) || !json_is_string(v))
				continue;
			json_t *vals = json_object_get(seen, k);

			if (!vals) {
				vals = json_object();
				json_object_set_new(seen, k, vals);
			}
			json_object_set_new(vals, json_string_value(v), json_true());
		}
	}
	/* selection sort by domain count */
	while (json_object_size(seen) > 0) {
		const char *best = NULL;
		size_t bestn = 0;

		json_object_foreach(seen, k, v) if (!best || json_object_size(v) < bestn)
		{
			best = k;
			bestn = json_object_size(v);
		}
		json_array_append_new(keys, json_string(best));
		json_object_del(seen, best);
	}
	json_decref(seen);
	return keys;
}

static const char *level_name(const char *key)
{
	if (strcmp(key, TOPO_LABEL_HOSTNAME) == 0)
		return "host";
	return strncmp(key, TOPO_LABEL_LEVEL_PREFIX, strlen(TOPO_LABEL_LEVEL_PREFIX)) == 0
		   ? key + strlen(TOPO_LABEL_LEVEL_PREFIX)
		   : key;
}

static json_t *index_by_name(const json_t *items)
{
	json_t *m = json_object(), *o;
	size_t i;

	json_array_foreach(items, i, o) if (pk_name(o)) json_object_set(m, pk_name(o), o);
	return m;
}

static int list_items(struct http *h, const char *kind, const char *ns, json_t **ret)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	char *path = podctl_type_path(t, ns, NULL, NULL);
	json_t *body = NULL;
	char what[128];
	int r;

	snprintf(what, sizeof(what), "list %s", t->plural);
	r = path ? get_json(h, path, what, &body) : PODCTL_EXIT_FAILURE;
	free(path);
	if (r)
		return r;
	*ret = json_incref(json_object_get(body, "items"));
	json_decref(body);
	if (!*ret)
		*ret = json_array();
	return 0;
}

/* ---- tables -------------------------------------------------------------------------------- */

struct table {
	json_t *rows; /* arrays of strings */
	size_t ncols;
};

static void table_row(struct table *t, const char *first, ...)
{
	json_t *row = json_array();
	va_list ap;
	const char *s = first;

	va_start(ap, first);
	for (size_t i = 0; i < t->ncols; i++) {
		json_array_append_new(row, json_string(s ? s : "<none>"));
		s = va_arg(ap, const char *);
	}
	va_end(ap);
	json_array_append_new(t->rows, row);
}

/* Columns padded by 3 spaces (kubectl's tab writer), each at least minw wide. */
static void table_print_min(struct table *t, bool header, size_t minw)
{
	size_t w[16] = {0}, i, c;
	json_t *row;

	json_array_foreach(t->rows, i, row) for (c = 0; c < t->ncols && c < 16; c++)
	{
		size_t n = strlen(json_string_value(json_array_get(row, c)));

		if (n > w[c])
			w[c] = n;
	}
	json_array_foreach(t->rows, i, row)
	{
		if (i == 0 && !header)
			continue;
		for (c = 0; c < t->ncols && c < 16; c++)
			printf(c + 1 < t->ncols ? "%-*s   " : "%-*s",
			       c + 1 < t->ncols ? (int)(w[c] + 3 < minw ? minw - 3 : w[c]) : 0,
			       json_string_value(json_array_get(row, c)));
		printf("\n");
	}
}

static void table_print(struct table *t, bool header)
{
	table_print_min(t, header, 0);
}

struct ctx {
	struct http *h;
	const struct opts *o;
	json_t *nodes; /* name -> Node, for wide pod tables */
	json_t *levels;
};

/* A node's label; for the host level a node without it is its own domain. */
static const char *node_label(const json_t *node, const char *key)
{
	const char *v;

	if (!node)
		return NULL;
	v = json_string_value(json_object_get(pk_get(node, "metadata.labels"), key));
	return v || strcmp(key, TOPO_LABEL_HOSTNAME) != 0 ? v : pk_name(node);
}

static void pod_row(struct ctx *x, struct table *t, const json_t *p)
{
	const char *node = pk_get_string(p, "spec.nodeName");
	const json_t *n = node && x->nodes ? json_object_get(x->nodes, node) : NULL;
	char a[32], where[256] = "";

	podctl_age(p, time(NULL), a, sizeof(a));
	if (x->o->output && strcmp(x->o->output, "wide") == 0) {
		size_t i;
		json_t *k;

		json_array_foreach(x->levels, i, k)
		{
			const char *v = node_label(n, json_string_value(k));
			size_t len = strlen(where);

			snprintf(where + len, sizeof(where) - len, "%s%s", len ? "/" : "",
				 v ? v : "-");
		}
		table_row(t, pk_namespace(p), pk_name(p), pod_phase(p), node ? node : "<none>",
			  pk_pod_group_name(p), *where ? where : "-", a);
	} else {
		table_row(t, pk_namespace(p), pk_name(p), pod_phase(p), node ? node : "<none>",
			  pk_pod_group_name(p), a);
	}
}

static void node_row(struct ctx *x, struct table *t, const json_t *n)
{
	const char *ready = cond_status(n, "Ready");
	const char *status = node_unreachable(n)		    ? "Unreachable"
			     : ready && strcmp(ready, "False") == 0 ? "NotReady"
								    : "Ready";
	char where[256] = "", a[32], alloc[256] = "";
	size_t i;
	json_t *k;

	json_array_foreach(x->levels, i, k)
	{
		const char *v = node_label(n, json_string_value(k));
		size_t len = strlen(where);

		snprintf(where + len, sizeof(where) - len, "%s%s", len ? "/" : "", v ? v : "-");
	}
	if (pk_get_string(n, "spec.unschedulable") || json_is_true(pk_get(n, "spec.unschedulable")))
		status = "SchedulingDisabled";
	podctl_age(n, time(NULL), a, sizeof(a));
	json_t *ann = pk_get(n, "metadata.annotations");
	const char *kind = json_object_get(ann, PK_ANN_SIMULATED)	? "simulated"
			   : json_object_get(ann, TOPO_ANN_AGENT_OWNED) ? "podagent"
									: "static";
	if (x->o->output && strcmp(x->o->output, "wide") == 0) {
		const char *key;
		json_t *v;

		json_object_foreach(pk_get(n, "status.allocatable"), key, v)
		{
			size_t len = strlen(alloc);

			snprintf(alloc + len, sizeof(alloc) - len, "%s%s=%s", len ? "," : "", key,
				 json_string_value(v) ? json_string_value(v) : "?");
		}
		table_row(t, "", pk_name(n), status, *where ? where : "-", kind, alloc, a);
	} else {
		table_row(t, "", pk_name(n), status, *where ? where : "-", kind, a);
	}
}

static void group_row(struct ctx *x, struct table *t, const json_t *g)
{
	const char *ctype =
	    strcmp(json_string_value(json_object_get(g, "kind")) ?: "", "CompositePodGroup") == 0
		? "CompositePodGroupInitiallyScheduled"
		: "PodGroupInitiallyScheduled";
	const char *st = cond_status(g, ctype), *reason = cond_reason(g, ctype);
	char pol[64], sched[96], a[32];

	(void)x;
	podctl_policy_text(g, pol, sizeof(pol));
	snprintf(sched, sizeof(sched), "%s%s%s%s", st ? st : "-", reason ? " (" : "",
		 reason ? reason : "", reason ? ")" : "");
	podctl_age(g, time(NULL), a, sizeof(a));
	table_row(t, pk_namespace(g), pk_name(g), pol, group_topology(g) ?: "-",
		  pk_get_string(g, "spec.parentCompositePodGroupName") ?: "-", sched, a);
}

static void other_row(struct ctx *x, struct table *t, const json_t *o)
{
	char a[32], extra[128] = "-";
	const char *kind = json_string_value(json_object_get(o, "kind")) ?: "";

	(void)x;
	podctl_age(o, time(NULL), a, sizeof(a));
	enum pk_kind k = pk_kind_from_string(kind);

	if (k == PK_KIND_PRIORITY_CLASS)
		snprintf(extra, sizeof(extra), "value=%lld%s",
			 (long long)json_integer_value(json_object_get(o, "value")),
			 json_is_true(json_object_get(o, "globalDefault")) ? " globalDefault" : "");
	else if (k == PK_KIND_JOB)
		snprintf(extra, sizeof(extra), "parallelism=%lld",
			 json_is_integer(pk_get(o, "spec.parallelism"))
			     ? (long long)json_integer_value(pk_get(o, "spec.parallelism"))
			     : 1LL);
	else if (k == PK_KIND_JOBSET)
		snprintf(extra, sizeof(extra), "replicatedJobs=%zu",
			 json_array_size(pk_get(o, "spec.replicatedJobs")));
	else if (k == PK_KIND_LEADER_WORKER_SET)
		snprintf(
		    extra, sizeof(extra), "replicas=%lld size=%lld",
		    json_is_integer(pk_get(o, "spec.replicas"))
			? (long long)json_integer_value(pk_get(o, "spec.replicas"))
			: 1LL,
		    json_is_integer(pk_get(o, "spec.leaderWorkerTemplate.size"))
			? (long long)json_integer_value(pk_get(o, "spec.leaderWorkerTemplate.size"))
			: 1LL);
	else if (k == PK_KIND_WORKLOAD)
		snprintf(extra, sizeof(extra), "templates=%zu",
			 json_array_size(pk_get(o, "spec.compositePodGroupTemplates")) +
			     json_array_size(pk_get(o, "spec.podGroupTemplates")));
	table_row(t, pk_namespace(o), pk_name(o), extra, a);
}

typedef void (*row_fn)(struct ctx *x, struct table *t, const json_t *obj);

static row_fn table_for(const struct pk_type *ty, struct ctx *x, struct table *t)
{
	bool wide = x->o->output && strcmp(x->o->output, "wide") == 0;

	t->rows = json_array();
	switch (ty->pk) {
	case PK_KIND_POD:
		t->ncols = wide ? 7 : 6;
		if (wide) {
			char lv[256] = "";
			size_t i;
			json_t *k;

			json_array_foreach(x->levels, i, k)
			{
				size_t len = strlen(lv);

				snprintf(lv + len, sizeof(lv) - len, "%s%s", len ? "/" : "",
					 level_name(json_string_value(k)));
			}
			char *hdr = *lv ? strdup(lv) : strdup("TOPOLOGY");

			for (char *c = hdr; c && *c; c++)
				*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
			table_row(t, "NAMESPACE", "NAME", "STATUS", "NODE", "GROUP", hdr ?: "",
				  "AGE");
			free(hdr);
		} else {
			table_row(t, "NAMESPACE", "NAME", "STATUS", "NODE", "GROUP", "AGE");
		}
		return pod_row;
	case PK_KIND_NODE:
		t->ncols = wide ? 7 : 6;
		if (wide)
			table_row(t, "", "NAME", "STATUS", "TOPOLOGY", "SOURCE", "ALLOCATABLE",
				  "AGE");
		else
			table_row(t, "", "NAME", "STATUS", "TOPOLOGY", "SOURCE", "AGE");
		return node_row;
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		t->ncols = 7;
		table_row(t, "NAMESPACE", "NAME", "POLICY", "TOPOLOGY", "PARENT", "SCHEDULED",
			  "AGE");
		return group_row;
	default:
		t->ncols = 4;
		table_row(t, "NAMESPACE", "NAME", "INFO", "AGE");
		return other_row;
	}
}

/* Drop the NAMESPACE column unless -A (and always for cluster-scoped kinds). */
static void table_trim(struct table *t, bool keep_ns)
{
	size_t i;
	json_t *row;

	if (keep_ns)
		return;
	json_array_foreach(t->rows, i, row) json_array_remove(row, 0);
	t->ncols--;
}

/* ---- get --------------------------------------------------------------------------------------
 */

/* -o jsonpath=TEMPLATE or -o custom-columns=NAME:PATH,...: compiled once. */
struct printer {
	struct podctl_jsonpath *jp; /* jsonpath */
	size_t ncols;		    /* custom-columns */
	char *headers[16];
	struct podctl_jsonpath *cols[16];
};

static void printer_free(struct printer *pr)
{
	podctl_jsonpath_free(pr->jp);
	for (size_t i = 0; i < pr->ncols; i++) {
		free(pr->headers[i]);
		podctl_jsonpath_free(pr->cols[i]);
	}
}

static int printer_compile(const char *output, struct printer *pr)
{
	char err[256];

	if (strncmp(output, "jsonpath=", 9) == 0) {
		if (!output[9])
			return usage_error("-o jsonpath: template format specified but no "
					   "template given");
		pr->jp = podctl_jsonpath_parse(output + 9, err, sizeof(err));
		return pr->jp ? 0 : usage_error("error parsing jsonpath %s: %s", output + 9, err);
	}
	char *spec = strdup(output + 15), *save = NULL, *col;
	int r = 0;

	for (col = strtok_r(spec, ",", &save); col && !r; col = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(col, ':'), *t;

		if (!colon || colon == col || !colon[1])
			r = usage_error("-o custom-columns: unexpected spec '%s', expected "
					"<header>:<json-path-expr>",
					col);
		else if (pr->ncols >= sizeof(pr->cols) / sizeof(pr->cols[0]))
			r = usage_error("-o custom-columns: at most 16 columns");
		if (r)
			break;
		*colon = '\0';
		t = podctl_relaxed_path(colon + 1);
		pr->cols[pr->ncols] = podctl_jsonpath_parse(t, err, sizeof(err));
		if (!pr->cols[pr->ncols])
			r = usage_error("-o custom-columns: column %s: error parsing %s: %s", col,
					colon + 1, err);
		else
			pr->headers[pr->ncols++] = strdup(col);
		free(t);
	}
	if (!r && pr->ncols == 0)
		r = usage_error("-o custom-columns: no columns given");
	free(spec);
	return r;
}

/* Print objs (an array) with the compiled printer; doc is what a template
 * sees (one object, or a List). */
static int printer_print(const struct printer *pr, const json_t *objs, const json_t *doc,
			 bool header)
{
	char err[256];

	if (pr->jp) {
		if (podctl_jsonpath_print(pr->jp, doc, stdout, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "podctl: error executing jsonpath: %s\n", err);
		return PODCTL_EXIT_FAILURE;
	}
	/* kubectl's custom-columns: a tab writer with cells padded by 3, at least 6 wide */
	struct table t = {.rows = json_array(), .ncols = pr->ncols};
	json_t *hdr = json_array(), *obj;
	size_t i;
	int r = 0;

	for (size_t c = 0; c < pr->ncols; c++)
		json_array_append_new(hdr, json_string(pr->headers[c]));
	json_array_append_new(t.rows, hdr);
	json_array_foreach(objs, i, obj)
	{
		json_t *row = json_array();

		for (size_t c = 0; c < pr->ncols; c++) {
			json_t *vals = podctl_jsonpath_find(pr->cols[c], obj, err, sizeof(err));
			char *cell = vals ? podctl_column_text(vals) : NULL;

			if (!vals) {
				fprintf(stderr, "podctl: error executing jsonpath: %s\n", err);
				r = PODCTL_EXIT_FAILURE;
			}
			json_array_append_new(row, json_string(cell ? cell : ""));
			free(cell);
			json_decref(vals);
		}
		json_array_append_new(t.rows, row);
	}
	if (!r)
		table_print_min(&t, header, 6);
	json_decref(t.rows);
	return r;
}

struct watch_arg {
	struct ctx *x;
	row_fn row;
	const struct pk_type *ty;
	const struct printer *pr;
	bool header_done;
	bool structured;
	json_t *refusal; /* the Status of a watch the server refused */
	char other[81];	 /* else the first line that was not JSON, printable */
};

/* One line of the watch stream (kube_stream): an event printed, or the Status of a refusal. */
static int on_watch_line(void *arg, const char *line, size_t len)
{
	struct watch_arg *w = arg;
	json_t *ev = json_loadb(line, len, 0, NULL);
	json_t *obj = json_object_get(ev, "object");

	if (!obj) {
		if (json_is_object(ev) && !json_object_get(ev, "type") && !w->refusal)
			w->refusal = json_incref(ev);
		else if (!ev && !w->other[0])
			kube_printable(line, len, w->other, sizeof(w->other));
		json_decref(ev);
		return 0;
	}
	if (w->pr->jp || w->pr->ncols) {
		json_t *one = json_pack("[O]", obj);

		printer_print(w->pr, one, obj, !w->header_done);
		w->header_done = true;
		json_decref(one);
		fflush(stdout);
	} else if (w->structured) {
		pk_write(stdout, ev,
			 strcmp(w->x->o->output, "yaml") == 0 ? PK_FORMAT_YAML : PK_FORMAT_JSON);
	} else {
		struct table t = {0};

		table_for(w->ty, w->x, &t);
		w->row(w->x, &t, obj);
		table_trim(&t, w->x->o->all_ns && w->ty->namespaced);
		/* the event type replaces the AGE column's meaning: show it first */
		json_array_insert_new(json_array_get(t.rows, 0), 0, json_string("EVENT"));
		json_array_insert_new(
		    json_array_get(t.rows, 1), 0,
		    json_string(json_string_value(json_object_get(ev, "type")) ?: ""));
		t.ncols++;
		table_print(&t, !w->header_done);
		w->header_done = true;
		json_decref(t.rows);
	}
	json_decref(ev);
	fflush(stdout);
	return 0;
}

static int load_nodes(struct ctx *x)
{
	json_t *items = NULL;
	int r = list_items(x->h, "Node", NULL, &items);

	if (r)
		return r;
	x->nodes = index_by_name(items);
	x->levels = level_keys(items);
	json_array_append_new(x->levels, json_string(TOPO_LABEL_HOSTNAME));
	json_decref(items);
	return 0;
}

/* s percent-encoded as a query value, malloc'ed (NULL on ENOMEM). */
static char *query_escape(const char *s)
{
	size_t len = strlen(s) * 3 + 5;
	char *buf = malloc(len);

	return buf ? kube_escape(s, buf, len) : NULL;
}

static char *query_path(const struct pk_type *ty, const struct opts *o, const char *name,
			bool watch)
{
	char *base = podctl_type_path(ty, o->all_ns ? NULL : o->ns, watch ? NULL : name, NULL),
	     *p = NULL;
	char *sel = o->selector ? query_escape(o->selector) : NULL;
	char *n = watch && name ? query_escape(name) : NULL;

	if (base && (!o->selector || sel) && (!watch || !name || n) &&
	    asprintf(&p, "%s%s%s%s%s%s%s%s", base, watch || sel ? "?" : "", watch ? "watch=1" : "",
		     watch && sel ? "&" : "", sel ? "labelSelector=" : "", sel ? sel : "",
		     n ? "&fieldSelector=metadata.name%3D" : "", n ? n : "") < 0)
		p = NULL;
	free(n);
	free(sel);
	free(base);
	return p;
}

struct got {
	const struct pk_type *ty;
	json_t *items; /* with kind and apiVersion put back */
	json_t *body;  /* the named object, when a NAME was given */
};

/* List a kind (or get NAME of it) for get. */
static int get_kind(struct http *h, const struct opts *o, struct got *g)
{
	char *path = query_path(g->ty, o, o->nargs == 2 ? o->args[1] : NULL, false);
	json_t *body = NULL, *it;
	char av[128];
	size_t i;
	int r;

	if (!path)
		return PODCTL_EXIT_FAILURE;
	r = get_json(h, path, o->nargs == 2 ? o->args[1] : g->ty->plural, &body);
	free(path);
	if (r)
		return r;
	if (o->nargs == 2) {
		g->body = body;
		g->items = json_pack("[O]", body);
		return 0;
	}
	g->items = json_incref(json_object_get(body, "items")) ?: json_array();
	json_decref(body);
	/* the list's items carry no kind: put it back for printing and apply */
	snprintf(av, sizeof(av), "%s%s%s", g->ty->group, *g->ty->group ? "/" : "", g->ty->version);
	json_array_foreach(g->items, i, it)
	{
		if (!json_object_get(it, "kind"))
			json_object_set_new(it, "kind", json_string(g->ty->kind));
		if (!json_object_get(it, "apiVersion"))
			json_object_set_new(it, "apiVersion", json_string(av));
	}
	return 0;
}

/* One table per kind, as kubectl prints `get pods,pg`: a blank line between
 * them, and with more than one kind each name prefixed by kind[.group]/. */
static void print_tables(struct ctx *x, struct got *got, size_t n)
{
	bool first = true;

	for (size_t k = 0; k < n; k++) {
		struct table t = {0};
		row_fn row;
		size_t i;
		json_t *it, *r;
		char lk[64], pre[192];

		if (json_array_size(got[k].items) == 0)
			continue;
		row = table_for(got[k].ty, x, &t);
		json_array_foreach(got[k].items, i, it) row(x, &t, it);
		snprintf(pre, sizeof(pre), "%s%s%s/", lower(got[k].ty->kind, lk, sizeof(lk)),
			 *got[k].ty->group ? "." : "", got[k].ty->group);
		json_array_foreach(t.rows, i, r) if (i > 0 && n > 1)
		{
			char *cell = NULL;

			if (asprintf(&cell, "%s%s", pre, json_string_value(json_array_get(r, 1))) >=
			    0)
				json_array_set_new(r, 1, json_string(cell));
			free(cell);
		}
		table_trim(&t, x->o->all_ns && got[k].ty->namespaced);
		if (!first)
			printf("\n");
		table_print(&t, true);
		json_decref(t.rows);
		first = false;
	}
}

static int get_watch(struct http *h, struct ctx *x, const struct pk_type *ty,
		     const struct printer *pr)
{
	struct table t = {0};
	struct watch_arg w = {.x = x, .ty = ty, .pr = pr};
	json_t *why = NULL;
	char *path = query_path(ty, x->o, x->o->nargs == 2 ? x->o->args[1] : NULL, true);
	long st = 0;
	int r;

	if (!path)
		return PODCTL_EXIT_FAILURE;
	w.structured = x->o->output && strcmp(x->o->output, "wide") != 0;
	w.row = table_for(ty, x, &t);
	json_decref(t.rows);
	/* until the server ends the stream or the user interrupts podctl */
	r = kube_stream(h->g->conn, path, on_watch_line, &w, NULL, &st);
	if (r < 0) {
		why = no_answer(h->g->conn, r);
		r = report_failure("watch", st == 200 ? 0 : st, why);
	} else if (st != 200) {
		why = w.refusal
			  ? json_incref(w.refusal)
			  : json_pack("{s:s+}", "message",
				      "the answer is not JSON: ", w.other[0] ? w.other : "(empty)");
		r = report_failure("watch", st, why);
	}
	free(path);
	json_decref(why);
	json_decref(w.refusal);
	return r;
}

static int get_output(struct ctx *x, const struct printer *pr, struct got *got, size_t n)
{
	const struct opts *o = x->o;
	json_t *all = json_array(), *doc;
	int r = 0;

	for (size_t k = 0; k < n; k++)
		json_array_extend(all, got[k].items);
	/* one named object of one kind is itself; anything else a List */
	doc = n == 1 && got[0].body ? json_incref(got[0].body) : pk_list_new(json_incref(all));
	if (o->output && (strcmp(o->output, "json") == 0 || strcmp(o->output, "yaml") == 0)) {
		pk_write(stdout, doc,
			 strcmp(o->output, "yaml") == 0 ? PK_FORMAT_YAML : PK_FORMAT_JSON);
	} else if (json_array_size(all) == 0) {
		bool ns = !o->all_ns;

		for (size_t k = 0; k < n; k++)
			ns = ns && got[k].ty->namespaced;
		fprintf(stderr, "No resources found%s%s.\n", ns ? " in " : "", ns ? o->ns : "");
	} else if (pr->jp || pr->ncols) {
		r = printer_print(pr, all, doc, true);
	} else {
		print_tables(x, got, n);
	}
	json_decref(doc);
	json_decref(all);
	return r;
}

static int cmd_get(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	struct ctx x = {.h = h, .o = &o};
	struct printer pr = {0};
	struct got got[16] = {0};
	size_t n = 0;
	int r = parse_opts(h, argc, argv, &o);

	if (r)
		return r;
	if (o.nargs < 1 || o.nargs > 2)
		return usage_error("usage: podctl get KIND[,KIND...] [NAME] [-n NS|-A] "
				   "[-o wide|json|yaml|jsonpath=TEMPLATE|custom-columns=SPEC] "
				   "[-l SELECTOR] [-w]");
	/* pods,pg: each kind in turn, as kubectl */
	char *kinds = strdup(o.args[0]), *save = NULL;

	for (char *k = strtok_r(kinds, ",", &save); k && !r; k = strtok_r(NULL, ",", &save)) {
		if (n >= sizeof(got) / sizeof(got[0]))
			r = usage_error("get: at most 16 kinds");
		else if (!(got[n++].ty = podctl_resolve_kind(k)))
			r = usage_error("get: unknown kind '%s'", k);
	}
	free(kinds);
	if (!r && n == 0)
		r = usage_error("get: no kind given");
	if (!r && o.watch && n > 1)
		r = usage_error("get: watch is only supported on one kind, but %zu were given", n);
	if (!r && o.output &&
	    (strncmp(o.output, "jsonpath=", 9) == 0 ||
	     strncmp(o.output, "custom-columns=", 15) == 0))
		r = printer_compile(o.output, &pr);
	if (!r && (!o.output || strcmp(o.output, "wide") == 0))
		r = load_nodes(&x);
	if (!r && o.watch)
		r = get_watch(h, &x, got[0].ty, &pr);
	else if (!r) {
		for (size_t k = 0; k < n && !r; k++)
			r = get_kind(h, &o, &got[k]);
		if (!r)
			r = get_output(&x, &pr, got, n);
	}
	for (size_t k = 0; k < n; k++) {
		json_decref(got[k].items);
		json_decref(got[k].body);
	}
	printer_free(&pr);
	json_decref(x.nodes);
	json_decref(x.levels);
	return r;
}

/* ---- delete -------------------------------------------------------------------------------------
 */

static int cmd_delete(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	int r = parse_opts(h, argc, argv, &o);
	const struct pk_type *ty;
	long st;
	json_t *body = NULL;
	char lk[64], what[300];

	if (r)
		return r;
	if (o.nargs < 2)
		return usage_error("usage: podctl delete KIND NAME [NAME...] [-n NS]");
	ty = podctl_resolve_kind(o.args[0]);
	if (!ty)
		return usage_error("delete: unknown kind '%s'", o.args[0]);
	for (size_t i = 1; i < o.nargs; i++) {
		char *path = podctl_type_path(ty, o.ns, o.args[i], NULL);

		if (!path)
			return PODCTL_EXIT_FAILURE;
		http_do(h, "DELETE", path, NULL, NULL, &st, &body);
		free(path);
		snprintf(what, sizeof(what), "delete %s %s", lower(ty->kind, lk, sizeof(lk)),
			 o.args[i]);
		if (st == 200 || st == 202)
			printf("%s \"%s\" deleted\n", lk, o.args[i]);
		else if ((r = report_failure(what, st, body)) == 0)
			r = PODCTL_EXIT_FAILURE;
		json_decref(body);
		body = NULL;
	}
	return r;
}

/* ---- describe
 * ------------------------------------------------------------------------------------ */

static void print_conditions(const json_t *obj)
{
	json_t *conds = pk_get(obj, "status.conditions"), *c;
	size_t i;

	printf("Conditions:\n");
	if (json_array_size(conds) == 0) {
		printf("  <none>\n");
		return;
	}
	json_array_foreach(conds, i, c)
	    printf("  %-38s %-6s %-24s %s\n", json_string_value(json_object_get(c, "type")) ?: "",
		   json_string_value(json_object_get(c, "status")) ?: "",
		   json_string_value(json_object_get(c, "reason")) ?: "",
		   json_string_value(json_object_get(c, "message")) ?: "");
}

static void print_map(const char *title, const json_t *m)
{
	const char *k;
	json_t *v;
	bool first = true;

	printf("%-14s", title);
	json_object_foreach((json_t *)m, k, v)
	{
		char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		printf("%s%s=%s\n", first ? "" : "              ", k, s ? s : json_string_value(v));
		free(s);
		first = false;
	}
	if (first)
		printf("<none>\n");
}

/* Names of every group in the subtree of root (root included), from lists of groups. */
static void subtree(const json_t *groups, const char *root, json_t *ret_set)
{
	size_t i;
	json_t *g;

	json_object_set_new(ret_set, root, json_true());
	json_array_foreach(groups, i, g)
	{
		const char *p = pk_get_string(g, "spec.parentCompositePodGroupName");

		if (p && strcmp(p, root) == 0 && !json_object_get(ret_set, pk_name(g)))
			subtree(groups, pk_name(g), ret_set);
	}
}

static void print_placement(const json_t *pods, const struct ctx *x)
{
	size_t i, j, bound = 0, pending = 0;
	json_t *p, *k;

	json_array_foreach(pods, i, p)
	{
		if (pk_get_string(p, "spec.nodeName"))
			bound++;
		else
			pending++;
	}
	printf("Pods:          %zu bound, %zu pending\n", bound, pending);
	if (!bound)
		return;
	printf("Placement per topology level:\n");
	json_array_foreach(x->levels, j, k)
	{
		json_t *count = json_object();
		const char *key = json_string_value(k), *dom;
		json_t *c;

		json_array_foreach(pods, i, p)
		{
			const char *node = pk_get_string(p, "spec.nodeName");
			json_t *n = node ? json_object_get(x->nodes, node) : NULL;
			const char *v = node_label(n, key);

			if (!node)
				continue;
			v = v ? v : "-";
			json_object_set_new(
			    count, v,
			    json_integer(json_integer_value(json_object_get(count, v)) + 1));
		}
		printf("  %-12s", level_name(key));
		json_object_foreach(count, dom, c)
		    printf(" %s(%lld)", dom, (long long)json_integer_value(c));
		printf("\n");
		json_decref(count);
	}
}

/*
 * Why the group's pods wait, one line per distinct reason with how many pods
 * give it and the first names: a 300-pod gang that waits for one reason is
 * one line, not 300.  At most 8 reasons are shown.
 */
static void print_pending_reasons(const json_t *pods)
{
	json_t *by_reason = json_object(), *p, *names; /* message -> [names] */
	const char *m;
	size_t i, total = 0, shown = 0;

	if (!by_reason)
		return;
	json_array_foreach(pods, i, p)
	{
		if (pk_get_string(p, "spec.nodeName"))
			continue;
		json_t *c = pk_condition_get(p, "PodScheduled");
		m = c ? json_string_value(json_object_get(c, "message")) : NULL;
		m = m ? m : "not yet attempted";
		names = json_object_get(by_reason, m);
		if (!names) {
			names = json_array();
			json_object_set_new(by_reason, m, names);
		}
		json_array_append_new(names, json_string(pk_name(p)));
		total++;
	}
	if (total)
		printf("Pending pods: %zu\n", total);
	json_object_foreach(by_reason, m, names)
	{
		size_t n = json_array_size(names);
		if (shown++ == 8) {
			printf("  ... and %zu more reasons\n", json_object_size(by_reason) - 8);
			break;
		}
		printf("  ");
		for (size_t k = 0; k < n && k < 3; k++)
			printf("%s%s", k ? ", " : "", json_string_value(json_array_get(names, k)));
		if (n > 3)
			printf(" and %zu more", n - 3);
		printf(" (%zu pod%s): %s\n", n, n == 1 ? "" : "s", m);
	}
	json_decref(by_reason);
}

static int describe_group(struct ctx *x, const json_t *g)
{
	json_t *pgs = NULL, *cpgs = NULL, *pods = NULL, *all, *set = json_object(), *mine;
	const char *ns = pk_namespace(g);
	char pol[64];
	size_t i;
	json_t *o;
	int r;

	if ((r = list_items(x->h, "PodGroup", ns, &pgs)) ||
	    (r = list_items(x->h, "CompositePodGroup", ns, &cpgs)) ||
	    (r = list_items(x->h, "Pod", ns, &pods)))
		goto out;
	all = json_array();
	json_array_extend(all, pgs);
	json_array_extend(all, cpgs);
	subtree(all, pk_name(g), set);
	podctl_policy_text(g, pol, sizeof(pol));
	printf("Policy:        %s\n", pol);
	printf("Topology:      %s\n", group_topology(g) ?: "<none>");
	printf("Disruption:    %s\n", pk_get(g, "spec.disruptionMode.all") ? "all" : "single");
	printf("Parent:        %s\n",
	       pk_get_string(g, "spec.parentCompositePodGroupName") ?: "<none>");
	printf("Workload:      %s (template %s)\n",
	       pk_get_string(g, "spec.workloadRef.workloadName") ?: "<none>",
	       pk_get_string(g, "spec.workloadRef.templateName") ?: "-");
	printf("Children:     ");
	size_t nchild = 0;

	json_array_foreach(all, i, o)
	{
		const char *p = pk_get_string(o, "spec.parentCompositePodGroupName");

		if (p && strcmp(p, pk_name(g)) == 0) {
			char cp[64];

			podctl_policy_text(o, cp, sizeof(cp));
			printf(" %s[%s]", pk_name(o), cp);
			nchild++;
		}
	}
	printf("%s\n", nchild ? "" : " <none>");
	mine = json_array();
	json_array_foreach(pods, i, o)
	{
		const char *pg = pk_pod_group_name(o);

		if (pg && json_object_get(set, pg))
			json_array_append(mine, o);
	}
	print_placement(mine, x);
	print_pending_reasons(mine);
	print_conditions(g);
	json_decref(mine);
	json_decref(all);
out:
	json_decref(set);
	json_decref(pgs);
	json_decref(cpgs);
	json_decref(pods);
	return r;
}

static int describe_node(struct ctx *x, const json_t *n)
{
	json_t *pods = NULL, *p;
	size_t i;
	const char *k;
	json_t *v;
	int r = list_items(x->h, "Pod", NULL, &pods);

	if (r)
		return r;
	print_map("Labels:", pk_get(n, "metadata.labels") ?: json_object());
	printf("Taints:       ");
	json_array_foreach(pk_get(n, "spec.taints"), i, v)
	    printf(" %s:%s", json_string_value(json_object_get(v, "key")) ?: "",
		   json_string_value(json_object_get(v, "effect")) ?: "");
	printf("%s\n", json_array_size(pk_get(n, "spec.taints")) ? "" : " <none>");
	printf("Allocated resources (requests of bound pods / allocatable):\n");
	json_object_foreach(pk_get(n, "status.allocatable"), k, v)
	{
		int64_t used = 0, total = podctl_quantity_milli(json_string_value(v));
		char a[32], b[32];

		json_array_foreach(pods, i, p)
		{
			const char *node = pk_get_string(p, "spec.nodeName");

			if (node && strcmp(node, pk_name(n)) == 0)
				used += strcmp(k, "pods") == 0 ? 1000 : podctl_pod_request(p, k);
		}
		podctl_fmt_qty(used, k, a, sizeof(a));
		podctl_fmt_qty(total, k, b, sizeof(b));
		printf("  %-20s %s / %s\n", k, a, b);
	}
	printf("Pods:\n");
	json_array_foreach(pods, i, p)
	{
		const char *node = pk_get_string(p, "spec.nodeName");

		if (node && strcmp(node, pk_name(n)) == 0)
			printf("  %s/%s (group %s)\n", pk_namespace(p), pk_name(p),
			       pk_pod_group_name(p) ?: "-");
	}
	print_conditions(n);
	json_decref(pods);
	return 0;
}

/* The claim of claim pc of p (a Pod or a PodGroup): its resourceClaimName, or p's status's. */
static const char *pod_claim_name(const json_t *p, const json_t *pc)
{
	const char *name = pk_get_string(pc, "name") ?: "";
	json_t *x;
	size_t i;

	if (pk_get_string(pc, "resourceClaimName"))
		return pk_get_string(pc, "resourceClaimName");
	json_array_foreach(pk_get(p, "status.resourceClaimStatuses"), i,
			   x) if (strcmp(pk_get_string(x, "name") ?: "", name) ==
				  0) return pk_get_string(x, "resourceClaimName");
	return NULL;
}

/* GET path into *ret (200 only). */
static int get_object(struct ctx *x, const char *fmt, const char *ns, const char *name,
		      json_t **ret)
{
	char *path = NULL;
	long st = 0;
	int r;

	*ret = NULL;
	if (asprintf(&path, fmt, ns, name) < 0)
		return -ENOMEM;
	r = http_do(x->h, "GET", path, NULL, NULL, &st, ret);
	free(path);
	if (r < 0 || st != 200) {
		json_decref(*ret);
		*ret = NULL;
		return r < 0 ? r : -ENOENT;
	}
	return 0;
}

/* The claims of p's spec.resourceClaims (what says whose: "" or " (PodGroup)"). */
/*
 * One allocated device: request, driver/pool/device and, for a share of a
 * device with consumable capacity, what it consumed and its shareID.
 */
static void print_result(const json_t *r)
{
	json_t *cons = json_object_get(r, "consumedCapacity"), *q;
	const char *name;

	printf("    %-18s %s/%s/%s", pk_get_string(r, "request") ?: "",
	       pk_get_string(r, "driver") ?: "", pk_get_string(r, "pool") ?: "",
	       pk_get_string(r, "device") ?: "");
	json_object_foreach(cons, name, q) printf(" %s=%s", name, json_string_value(q) ?: "?");
	if (pk_get_string(r, "shareID"))
		printf(" (share %s)", pk_get_string(r, "shareID"));
	printf("\n");
}

static void print_claim_list(struct ctx *x, const json_t *p, const char *what, bool *header)
{
	json_t *pc;
	size_t i;

	json_array_foreach(pk_get(p, "spec.resourceClaims"), i, pc)
	{
		const char *cn = pod_claim_name(p, pc);
		json_t *c = NULL, *res, *r;
		char label[300];
		size_t k;

		if (!*header)
			printf("Claims:\n");
		*header = true;
		snprintf(label, sizeof(label), "%s%s", pk_get_string(pc, "name") ?: "", what);
		printf("  %-20s ", label);
		if (!cn) {
			printf("%s (not created yet)\n",
			       pk_get_string(pc, "resourceClaimTemplateName") ?: "-");
			continue;
		}
		if (get_object(x, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s",
			       pk_namespace(p), cn, &c) < 0) {
			printf("%s (not found)\n", cn);
			continue;
		}
		res = pk_get(c, "status.allocation.devices.results");
		printf("%s%s\n", cn, json_array_size(res) ? "" : " (not allocated)");
		json_array_foreach(res, k, r) print_result(r);
		json_decref(c);
	}
}

/*
 * Resource claims: each pod claim and each claim of the pod's PodGroup (which
 * its pods share), its ResourceClaim and the devices allocated.
 */
static void print_claims(struct ctx *x, const json_t *p)
{
	const char *g = pk_pod_group_name(p);
	json_t *group = NULL;
	bool header = false;

	print_claim_list(x, p, "", &header);
	if (g && get_object(x, "/apis/scheduling.k8s.io/v1alpha3/namespaces/%s/podgroups/%s",
			    pk_namespace(p), g, &group) == 0)
		print_claim_list(x, group, " (PodGroup)", &header);
	json_decref(group);
}

static int describe_pod(struct ctx *x, const json_t *p)
{
	const char *node = pk_get_string(p, "spec.nodeName");
	json_t *n = node ? json_object_get(x->nodes, node) : NULL, *k;
	size_t i;

	printf("Node:          %s\n", node ?: "<none>");
	printf("Status:        %s\n", pk_get_string(p, "status.phase") ?: "<none>");
	printf("QoS Class:     %s\n", pk_get_string(p, "status.qosClass") ?: "<none>");
	printf("Group:         %s\n", pk_pod_group_name(p) ?: "<none>");
	printf("Priority:      %lld\n", (long long)json_integer_value(pk_get(p, "spec.priority")));
	if (n) {
		printf("Topology:     ");
		json_array_foreach(x->levels, i, k)
		{
			const char *v = node_label(n, json_string_value(k));

			printf(" %s=%s", level_name(json_string_value(k)), v ?: "-");
		}
		printf("\n");
	}
	print_claims(x, p);
	print_conditions(p);
	return 0;
}

static int cmd_describe(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	struct ctx x = {.h = h, .o = &o};
	int r = parse_opts(h, argc, argv, &o);
	const struct pk_type *ty;
	json_t *obj = NULL;

	if (r)
		return r;
	if (o.nargs != 2)
		return usage_error("usage: podctl describe KIND NAME [-n NS]");
	ty = podctl_resolve_kind(o.args[0]);
	if (!ty)
		return usage_error("describe: unknown kind '%s'", o.args[0]);
	char *path = podctl_type_path(ty, o.ns, o.args[1], NULL);

	r = path ? get_json(h, path, o.args[1], &obj) : PODCTL_EXIT_FAILURE;
	free(path);
	if (r == 0)
		r = load_nodes(&x);
	if (r)
		goto out;
	printf("Name:          %s\n", pk_name(obj));
	if (ty->namespaced)
		printf("Namespace:     %s\n", pk_namespace(obj));
	printf("Kind:          %s\n", ty->kind);
	printf("Created:       %s\n", pk_get_string(obj, "metadata.creationTimestamp") ?: "-");
	switch (ty->pk) {
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		r = describe_group(&x, obj);
		break;
	case PK_KIND_NODE:
		r = describe_node(&x, obj);
		break;
	case PK_KIND_POD:
		r = describe_pod(&x, obj);
		break;
	default: {
		char *s = pk_write_string(pk_get(obj, "spec") ?: json_object(), PK_FORMAT_YAML);

		printf("Spec:\n%s", s ? s : "");
		free(s);
		print_conditions(obj);
	}
	}
out:
	json_decref(obj);
	json_decref(x.nodes);
	json_decref(x.levels);
	return r;
}

/* ---- top ----------------------------------------------------------------------------------------
 */

static const char *const top_resources[] = {"google.com/tpu", "nvidia.com/gpu", "cpu", "memory",
					    "pods"};
#define NTOP (sizeof(top_resources) / sizeof(top_resources[0]))

struct dom_use {
	int64_t used[NTOP], total[NTOP];
	int nodes;
};

static void add_use(json_t *map, const char *domain, const struct dom_use *u)
{
	json_t *e = json_object_get(map, domain);
	struct dom_use *d;

	if (!e) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return;
		json_object_set_new(map, domain, json_integer((json_int_t)(intptr_t)d));
	} else {
		d = (struct dom_use *)(intptr_t)json_integer_value(e);
	}
	for (size_t i = 0; i < NTOP; i++) {
		d->used[i] += u->used[i];
		d->total[i] += u->total[i];
	}
	d->nodes += u->nodes;
}

static int dom_cmp(const void *a, const void *b)
{
	return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

/* Domains with pods, in natural order; idle ones summed up in one line. */
static void print_level(const char *level, json_t *map, const bool *shown)
{
	size_t n = json_object_size(map), k = 0, idle = 0;
	const char **keys = calloc(n + 1, sizeof(*keys));
	const char *dom;
	json_t *e;

	if (!keys)
		return;
	json_object_foreach(map, dom, e) keys[k++] = dom;
	qsort(keys, n, sizeof(*keys), dom_cmp);
	for (k = 0; k < n; k++) {
		struct dom_use *d =
		    (struct dom_use *)(intptr_t)json_integer_value(json_object_get(map, keys[k]));

		if (d->used[NTOP - 1] == 0 && n > 1) {
			idle++;
			free(d);
			continue;
		}
		printf("%-12s %-16s %5d", level, keys[k], d->nodes);
		for (size_t i = 0; i < NTOP; i++) {
			char a[32], b[32], cell[80];

			if (!shown[i])
				continue;
			podctl_fmt_qty(d->used[i], top_resources[i], a, sizeof(a));
			podctl_fmt_qty(d->total[i], top_resources[i], b, sizeof(b));
			snprintf(cell, sizeof(cell), "%s/%s", a, b);
			printf("  %-16s", cell);
		}
		printf("\n");
		free(d);
	}
	if (idle)
		printf("%-12s (%zu more without pods)\n", level, idle);
	free(keys);
}

/* top --level NAME: keep only that level (its name, or its label key). */
static int keep_level(struct ctx *x, const char *name)
{
	json_t *k;
	size_t i;

	json_array_foreach(x->levels, i, k)
	{
		const char *key = json_string_value(k);
		if (strcmp(level_name(key), name) == 0 || strcmp(key, name) == 0) {
			json_t *only = json_pack("[O]", k);
			json_decref(x->levels);
			x->levels = only;
			return only ? 0 : PODCTL_EXIT_FAILURE;
		}
	}
	fprintf(stderr, "podctl: top --level %s: no such level; the nodes have:", name);
	json_array_foreach(x->levels, i, k)
	    fprintf(stderr, " %s", level_name(json_string_value(k)));
	fputc('\n', stderr);
	return PODCTL_EXIT_USAGE;
}

static int cmd_top(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	struct ctx x = {.h = h, .o = &o};
	json_t *pods = NULL, *n, *p;
	const char *name;
	bool shown[NTOP] = {false};
	int r = parse_opts(h, argc, argv, &o);
	size_t i, j;

	if (r)
		return r;
	if (o.nargs > 1 || (o.nargs == 1 && strcmp(o.args[0], "nodes") != 0))
		return usage_error("usage: podctl top [nodes] [--level LEVEL]");
	if ((r = load_nodes(&x)) || (r = list_items(h, "Pod", NULL, &pods)))
		goto out;
	if (o.level && (r = keep_level(&x, o.level)))
		goto out;
	size_t nlev = json_array_size(x.levels);
	json_t **maps = calloc(nlev + 1, sizeof(*maps));
	struct dom_use cluster = {0};

	if (!maps) {
		r = PODCTL_EXIT_FAILURE;
		goto out;
	}
	for (j = 0; j < nlev; j++)
		maps[j] = json_object();
	json_object_foreach(x.nodes, name, n)
	{
		struct dom_use u = {.nodes = 1};

		for (size_t k = 0; k < NTOP; k++) {
			const char *q = json_string_value(
			    json_object_get(pk_get(n, "status.allocatable"), top_resources[k]));

			u.total[k] = q ? podctl_quantity_milli(q)
				       : (strcmp(top_resources[k], "pods") == 0 ? 110000 : 0);
			if (q && strcmp(top_resources[k], "pods") != 0)
				shown[k] = true;
		}
		json_array_foreach(pods, i, p)
		{
			const char *node = pk_get_string(p, "spec.nodeName");

			if (!node || strcmp(node, name) != 0)
				continue;
			for (size_t k = 0; k < NTOP; k++)
				u.used[k] += strcmp(top_resources[k], "pods") == 0
						 ? 1000
						 : podctl_pod_request(p, top_resources[k]);
		}
		for (j = 0; j < nlev; j++) {
			const char *v = json_string_value(
			    json_object_get(pk_get(n, "metadata.labels"),
					    json_string_value(json_array_get(x.levels, j))));

			add_use(maps[j], v ? v : "-", &u);
		}
		u.nodes = 1;
		for (size_t k = 0; k < NTOP; k++) {
			cluster.used[k] += u.used[k];
			cluster.total[k] += u.total[k];
		}
		cluster.nodes++;
	}
	shown[NTOP - 1] = true;
	printf("%-12s %-16s %5s", "LEVEL", "DOMAIN", "NODES");
	for (size_t k = 0; k < NTOP; k++)
		if (shown[k])
			printf("  %-16s", top_resources[k]);
	printf("\n");
	{
		json_t *cm = json_object();

		add_use(cm, "all", &cluster);
		print_level("cluster", cm, shown);
		json_decref(cm);
	}
	for (j = 0; j < nlev; j++) {
		print_level(level_name(json_string_value(json_array_get(x.levels, j))), maps[j],
			    shown);
		json_decref(maps[j]);
	}
	printf("(used/allocatable: requests of bound pods against allocatable)\n");
	free(maps);
out:
	json_decref(pods);
	json_decref(x.nodes);
	json_decref(x.levels);
	return r;
}

int podctl_get_json(const struct podctl_globals *g, const char *path, const char *what,
		    json_t **ret)
{
	struct http h = {.g = (struct podctl_globals *)g};

	return get_json(&h, path, what, ret);
}

/* ---- dispatch
 * ------------------------------------------------------------------------------------ */

/*
 * The server and credentials: the kubeconfig's context with the command
 * line's overrides; without any server, http://127.0.0.1:6443.
 */
static int resolve_credentials(struct podctl_globals *g, struct pk_kube_credentials *ret)
{
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_overrides o = g->kube;
	char err[1024] = "";
	int r;

	o.server = g->server && *g->server ? g->server : NULL;
	o.token = g->token && *g->token ? g->token : NULL;
	r = pk_kubeconfig_load(g->kubeconfig, getenv("KUBECONFIG"), getenv("HOME"), &kc, err,
			       sizeof(err));
	if (r == 0) {
		r = pk_kubeconfig_resolve(kc, &o, ret, err, sizeof(err));
		if (r == -ENOENT && !o.server && !pk_kubeconfig_current_context(kc) && !o.context) {
			o.server = "http://127.0.0.1:6443";
			r = pk_kubeconfig_resolve(kc, &o, ret, err, sizeof(err));
		}
	}
	pk_kubeconfig_free(kc);
	if (r < 0) {
		fprintf(stderr, "podctl: %s\n", err);
		return r == -ENOMEM || r == -EIO ? PODCTL_EXIT_FAILURE : PODCTL_EXIT_USAGE;
	}
	/* $PODKERNEL_CA_FILE: only where neither the flags nor the kubeconfig name a CA */
	if (g->env_ca_file && *g->env_ca_file && !ret->ca_file && !ret->ca_data && !ret->insecure &&
	    !(ret->ca_file = strdup(g->env_ca_file))) {
		pk_kube_credentials_clear(ret);
		return PODCTL_EXIT_FAILURE;
	}
	return PODCTL_EXIT_OK;
}

/* The client and the one connection every request of this command goes through. */
static int open_client(struct podctl_globals *g)
{
	struct pk_kube_credentials creds = {0};
	int r = resolve_credentials(g, &creds);

	if (r != PODCTL_EXIT_OK)
		return r;
	r = kube_client_new(&creds, &g->client); /* takes creds over */
	if (r == 0)
		r = kube_client_set_user_agent(g->client, "podctl/" PODKERNEL_VERSION);
	if (r == 0)
		r = kube_conn_new(g->client, &g->conn);
	if (r < 0) {
		fprintf(stderr, "podctl: cannot set up the client: %s\n", strerror(-r));
		return PODCTL_EXIT_FAILURE;
	}
	return PODCTL_EXIT_OK;
}

int podctl_client(struct podctl_globals *g, int argc, char **argv)
{
	struct http h = {.g = g};
	int r;

	if (strcmp(argv[0], "apply") && strcmp(argv[0], "get") && strcmp(argv[0], "delete") &&
	    strcmp(argv[0], "describe") && strcmp(argv[0], "top") && strcmp(argv[0], "map") &&
	    strcmp(argv[0], "queue")) {
		fprintf(stderr, "podctl: unknown command '%s' (try --help)\n", argv[0]);
		return PODCTL_EXIT_USAGE;
	}
	r = open_client(g);
	if (r != PODCTL_EXIT_OK)
		; /* reported */
	else if (strcmp(argv[0], "apply") == 0)
		r = cmd_apply(&h, argc, argv);
	else if (strcmp(argv[0], "get") == 0)
		r = cmd_get(&h, argc, argv);
	else if (strcmp(argv[0], "delete") == 0)
		r = cmd_delete(&h, argc, argv);
	else if (strcmp(argv[0], "describe") == 0)
		r = cmd_describe(&h, argc, argv);
	else if (strcmp(argv[0], "map") == 0)
		r = podctl_map(g, argc, argv);
	else if (strcmp(argv[0], "queue") == 0)
		r = podctl_queue(g, argc, argv);
	else
		r = cmd_top(&h, argc, argv);
	kube_conn_free(g->conn);
	kube_client_free(g->client);
	g->conn = NULL;
	g->client = NULL;
	return r;
}

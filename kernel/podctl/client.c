/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — podctl as a client of podkerneld (or any API server): apply,
 * get, delete, describe, top and map.  This file holds what the verbs
 * share (HTTP, options, tables), apply, delete and the dispatch; get,
 * describe and top have a file each (client_get.c, client_describe.c,
 * client_top.c).
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
#include "kernel/podctl/podctl-client.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

/* ---- HTTP ------------------------------------------------------------------------ */

#define REQUEST_TIMEOUT_MS 60000

/*
 * Why no answer came, as the body podctl reports: {"message": why, "why":
 * "tls" (the handshake or the server's certificate), "unreachable" or
 * "local" (nothing was sent: an unreadable token file, a URL too long)}.
 */
json_t *cl_no_answer(const struct kube_conn *conn, int r)
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
 * ret_body then says why, see cl_no_answer()).  ret_body is the parsed JSON
 * answer (NULL if none or not JSON).
 */
int cl_http_do(struct http *h, const char *method, const char *path, const json_t *body,
	       const char *content_type, long *ret_status, json_t **ret_body)
{
	int r;

	*ret_status = 0;
	*ret_body = NULL;
	r = kube_request(h->g->conn, method, path, body ? content_type : NULL, body,
			 REQUEST_TIMEOUT_MS, ret_status, ret_body);
	if (r < 0) {
		*ret_status = 0;
		*ret_body = cl_no_answer(h->g->conn, r);
	} else if (!*ret_body && (*ret_status < 200 || *ret_status > 299)) {
		*ret_body = not_json(h->g->conn);
	}
	return 0;
}

/* The message of a Status response (or cl_no_answer()'s), for errors. */
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

int cl_report_failure(const char *what, long status, const json_t *body)
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
int cl_get_json(struct http *h, const char *path, const char *what, json_t **ret)
{
	long st;
	json_t *body = NULL;

	if (cl_http_do(h, "GET", path, NULL, NULL, &st, &body) < 0)
		return PODCTL_EXIT_FAILURE;
	if (st == 200 && !body) { /* a 200 that is no object: not the API server talking */
		body = not_json(h->g->conn);
		fprintf(stderr, "podctl: %s: %s (HTTP 200)\n", what,
			body ? status_message(body) : "an empty answer");
		json_decref(body);
		return PODCTL_EXIT_FAILURE;
	}
	if (st != 200) {
		int r = cl_report_failure(what, st, body);

		json_decref(body);
		return r;
	}
	*ret = body;
	return 0;
}

/* ---- kinds and paths ------------------------------------------------------------- */

char *cl_lower(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i < len - 1; i++)
		buf[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] | 0x20 : s[i]);
	buf[i] = '\0';
	return buf;
}

/* ---- common option parsing ------------------------------------------------------------ */

int cl_usage_error(const char *fmt, ...)
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

int cl_parse_opts(const struct http *h, int argc, char **argv, struct opts *o)
{
	const char *ns = kube_client_credentials(h->g->client)->namespace;

	o->ns = ns ? ns : "default";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (a[0] != '-' || strcmp(a, "-") == 0) {
			if (o->nargs >= sizeof(o->args) / sizeof(o->args[0]))
				return cl_usage_error("%s: too many arguments", argv[0]);
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
				return cl_usage_error("-o %s: expected wide, json, yaml, "
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
				return cl_usage_error("too many -f files");
			o->files[o->nfiles++] = v;
		} else {
			return cl_usage_error("%s: unknown or incomplete option '%s'", argv[0], a);
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
		return cl_usage_error("%s: kind: Unsupported value: \"%s\"", file,
				      kind ? kind : "");
	if (!name || !*name)
		return cl_usage_error("%s: %s: metadata.name: Required value", file, kind);
	const char *ns = t->namespaced ? pk_namespace(obj) : NULL;
	char *path = podctl_type_path(t, ns, name, NULL);
	char *coll = podctl_type_path(t, ns, NULL, NULL);
	int r = PODCTL_EXIT_FAILURE;

	snprintf(what, sizeof(what), "%s: %s/%s", file, cl_lower(kind, lk, sizeof(lk)), name);
	if (!path || !coll)
		goto out;
	cl_http_do(h, "GET", path, NULL, NULL, &st, &body);
	if (st == 404 || st == 200) { /* else the GET's failure is what is reported */
		json_decref(body);
		body = NULL;
	}
	if (st == 404) {
		cl_http_do(h, "POST", coll, obj, "application/json", &st, &body);
		if (st == 200 || st == 201) {
			printf("%s/%s created\n", lk, name);
			r = 0;
		}
	} else if (st == 200) {
		json_t *patch = json_deep_copy(obj);

		json_object_del(json_object_get(patch, "metadata"), "resourceVersion");
		cl_http_do(h, "PATCH", path, patch, "application/merge-patch+json", &st, &body);
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
		r = cl_report_failure(what, st, body);
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
	int r = cl_parse_opts(h, argc, argv, &o), worst = 0;

	if (r)
		return r;
	if (!o.nfiles || o.nargs)
		return cl_usage_error("usage: podctl apply -f FILE [-f FILE ...]");
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

const char *cl_group_topology(const json_t *g)
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
json_t *cl_level_keys(const json_t *nodes)
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

const char *cl_level_name(const char *key)
{
	if (strcmp(key, TOPO_LABEL_HOSTNAME) == 0)
		return "host";
	return strncmp(key, TOPO_LABEL_LEVEL_PREFIX, strlen(TOPO_LABEL_LEVEL_PREFIX)) == 0
		   ? key + strlen(TOPO_LABEL_LEVEL_PREFIX)
		   : key;
}

json_t *cl_index_by_name(const json_t *items)
{
	json_t *m = json_object(), *o;
	size_t i;

	json_array_foreach(items, i, o) if (pk_name(o)) json_object_set(m, pk_name(o), o);
	return m;
}

int cl_list_items(struct http *h, const char *kind, const char *ns, json_t **ret)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	char *path = podctl_type_path(t, ns, NULL, NULL);
	json_t *body = NULL;
	char what[128];
	int r;

	snprintf(what, sizeof(what), "list %s", t->plural);
	r = path ? cl_get_json(h, path, what, &body) : PODCTL_EXIT_FAILURE;
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
void cl_table_print_min(struct table *t, bool header, size_t minw)
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

void cl_table_print(struct table *t, bool header)
{
	cl_table_print_min(t, header, 0);
}

/* A node's label; for the host level a node without it is its own domain. */
const char *cl_node_label(const json_t *node, const char *key)
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
			const char *v = cl_node_label(n, json_string_value(k));
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
		const char *v = cl_node_label(n, json_string_value(k));
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
	table_row(t, pk_namespace(g), pk_name(g), pol, cl_group_topology(g) ?: "-",
		  pk_get_string(g, "spec.parentCompositePodGroupName") ?: "-", sched, a);
}

static void other_row(struct ctx *x, struct table *t, const json_t *o)
{
	char a[32], extra[128] = "-";
	const char *kind = json_string_value(json_object_get(o, "kind")) ?: "";

	(void)x;
	podctl_age(o, time(NULL), a, sizeof(a));
	const struct pk_type *ty = pk_type_by_kind(kind);
	enum pk_kind k = ty ? ty->pk : PK_KIND_UNKNOWN;

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

row_fn cl_table_for(const struct pk_type *ty, struct ctx *x, struct table *t)
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
					 cl_level_name(json_string_value(k)));
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
void cl_table_trim(struct table *t, bool keep_ns)
{
	size_t i;
	json_t *row;

	if (keep_ns)
		return;
	json_array_foreach(t->rows, i, row) json_array_remove(row, 0);
	t->ncols--;
}

/* ---- delete -------------------------------------------------------------------------------------
 */

static int cmd_delete(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	int r = cl_parse_opts(h, argc, argv, &o);
	const struct pk_type *ty;
	long st;
	json_t *body = NULL;
	char lk[64], what[300];

	if (r)
		return r;
	if (o.nargs < 2)
		return cl_usage_error("usage: podctl delete KIND NAME [NAME...] [-n NS]");
	ty = podctl_resolve_kind(o.args[0]);
	if (!ty)
		return cl_usage_error("delete: unknown kind '%s'", o.args[0]);
	for (size_t i = 1; i < o.nargs; i++) {
		char *path = podctl_type_path(ty, o.ns, o.args[i], NULL);

		if (!path)
			return PODCTL_EXIT_FAILURE;
		cl_http_do(h, "DELETE", path, NULL, NULL, &st, &body);
		free(path);
		snprintf(what, sizeof(what), "delete %s %s", cl_lower(ty->kind, lk, sizeof(lk)),
			 o.args[i]);
		if (st == 200 || st == 202)
			printf("%s \"%s\" deleted\n", lk, o.args[i]);
		else if ((r = cl_report_failure(what, st, body)) == 0)
			r = PODCTL_EXIT_FAILURE;
		json_decref(body);
		body = NULL;
	}
	return r;
}

int podctl_get_json(const struct podctl_globals *g, const char *path, const char *what,
		    json_t **ret)
{
	struct http h = {.g = (struct podctl_globals *)g};

	return cl_get_json(&h, path, what, ret);
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
		r = cl_cmd_get(&h, argc, argv);
	else if (strcmp(argv[0], "delete") == 0)
		r = cmd_delete(&h, argc, argv);
	else if (strcmp(argv[0], "describe") == 0)
		r = cl_cmd_describe(&h, argc, argv);
	else if (strcmp(argv[0], "map") == 0)
		r = podctl_map(g, argc, argv);
	else if (strcmp(argv[0], "queue") == 0)
		r = podctl_queue(g, argc, argv);
	else
		r = cl_cmd_top(&h, argc, argv);
	kube_conn_free(g->conn);
	kube_client_free(g->client);
	g->conn = NULL;
	g->client = NULL;
	return r;
}

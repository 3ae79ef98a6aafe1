/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — podctl as a client of podkerneld (or any API server): apply,
 * get, delete, describe, top and map.  This file holds what the verbs
 * share (HTTP, options) and the dispatch; the tables and the helpers over
 * objects are client_table.c's, and each verb has a file of its own
 * (client_apply.c, client_get.c, client_delete.c, client_describe.c,
 * client_top.c; map.c and queue.c).
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
		r = cl_cmd_apply(&h, argc, argv);
	else if (strcmp(argv[0], "get") == 0)
		r = cl_cmd_get(&h, argc, argv);
	else if (strcmp(argv[0], "delete") == 0)
		r = cl_cmd_delete(&h, argc, argv);
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

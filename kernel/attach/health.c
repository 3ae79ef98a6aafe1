/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health.c — what attach mode serves on its listen address: /healthz (the
 * process runs), /readyz (every informer delivered its first list; 503
 * before), /metrics (Prometheus text), the placement map under /ui/ (ui.c:
 * its data only to a token the cluster lets read Nodes and Pods) and
 * nothing else, in particular none of the cluster's objects.  Served
 * through the API server's listener (kernel/http/, its own library), so it has
 * the same header and body deadlines, caps and displacement of slow
 * connections (PK_ATTACH_HEALTH_* caps by default); one thread per
 * connection, because a token check asks the cluster and probes must not
 * wait behind it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/process.h"
#include "kernel/attach/attach-internal.h"
#include "kernel/http/listener.h"
#include "kernel/lib/request.h"

struct at_health {
	struct pk_attach *a;
	struct pk_listener *l;
	struct at_ui *ui;
	char *tls_cert, *tls_key; /* PEM text the listener serves with */
	uint16_t port;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *ctype)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", ctype);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int status, const char *s)
{
	char *b = strdup(s);

	return b ? reply(conn, status, b, strlen(b), "text/plain; charset=utf-8") : MHD_NO;
}

#define UI_MAX_ARGS 16

struct ui_args {
	struct pk_query_arg v[UI_MAX_ARGS];
	size_t n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct ui_args *args = cls;

	(void)kind;
	if (args->n < UI_MAX_ARGS)
		args->v[args->n++] = (struct pk_query_arg){key, value ? value : ""};
	return MHD_YES;
}

/* /ui/...: ui.c answers; MHD_NO only when no response could be made. */
static enum MHD_Result ui_reply(struct at_health *h, struct MHD_Connection *conn, const char *url,
				const char *method)
{
	struct ui_args args = {.n = 0};
	struct pk_response resp = {0};
	struct MHD_Response *r;
	enum MHD_Result ret;
	int rc;

	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	struct pk_request req = {
	    .method = method,
	    .path = url,
	    .args = args.v,
	    .nargs = args.n,
	    .authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"),
	};
	rc = at_ui_handle(h->ui, &req, &resp);
	if (rc < 0) {
		pk_response_clear(&resp);
		return text(conn, rc == -ENOENT ? 404 : 500,
			    rc == -ENOENT ? "not found\n" : "cannot render the placement map\n");
	}
	r = MHD_create_response_from_buffer(resp.body_len, resp.body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		pk_response_clear(&resp);
		return MHD_NO;
	}
	resp.body = NULL;
	MHD_add_response_header(r, "Content-Type",
				resp.content_type ? resp.content_type : "application/json");
	if (resp.status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"podkerneld\"");
	ret = MHD_queue_response(conn, (unsigned)resp.status, r);
	MHD_destroy_response(r);
	pk_response_clear(&resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct at_health *h = cls;

	(void)version, (void)upload, (void)state;
	if (*upload_len) {
		*upload_len = 0; /* bodies are ignored */
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return text(conn, 405, "method not allowed\n");
	if (strcmp(url, "/healthz") == 0 || strcmp(url, "/livez") == 0)
		return text(conn, 200, "ok\n");
	if (strcmp(url, "/readyz") == 0)
		return pk_attach_ready(h->a) ? text(conn, 200, "ok\n")
					     : text(conn, 503, "informers not synced\n");
	if (strcmp(url, "/metrics") == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!f)
			return MHD_NO;
		pk_attach_metrics(h->a, f);
		pk_listener_metrics(h->l, "health", f);
		pk_process_metrics(f, PODKERNEL_VERSION);
		fclose(f);
		return reply(conn, 200, buf, len, "text/plain; version=0.0.4");
	}
	if (strcmp(url, "/ui") == 0 || strncmp(url, "/ui/", 4) == 0)
		return ui_reply(h, conn, url, method);
	return text(conn, 404,
		    "attach mode serves /healthz, /readyz, /metrics and /ui/; the objects are the "
		    "cluster's\n");
}

static int parse_listen(const char *listen, struct sockaddr_in *sa)
{
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	char host[64];
	char *end;
	long port;

	if (!colon || (size_t)(colon - listen) >= sizeof(host))
		return -EINVAL;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, *host ? host : "0.0.0.0", &sa->sin_addr) != 1)
		return -EINVAL;
	return 0;
}

/* The serving certificate and key, when the listen address takes TLS. */
static int load_tls(struct at_health *h, const struct pk_attach_config *cfg, char *err,
		    size_t errlen)
{
	if (!cfg->tls_cert_file && !cfg->tls_key_file)
		return 0;
	if (!cfg->tls_cert_file || !cfg->tls_key_file) {
		snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
		return -EINVAL;
	}
	h->tls_cert = pk_listen_read_pem(cfg->tls_cert_file, err, errlen);
	h->tls_key = h->tls_cert ? pk_listen_read_pem(cfg->tls_key_file, err, errlen) : NULL;
	return h->tls_key ? 0 : -EINVAL;
}

static void health_free(struct at_health *h)
{
	at_ui_free(h->ui);
	free(h->tls_cert);
	free(h->tls_key);
	free(h);
}

int at_health_start(struct pk_attach *a, const struct pk_attach_config *cfg, struct at_health **ret,
		    char *err, size_t errlen)
{
	const char *listen = cfg->listen;
	struct at_health *h;
	struct sockaddr_storage ss;
	struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
	char lerr[128];

	memset(&ss, 0, sizeof(ss));
	if (parse_listen(listen, sa) < 0) {
		snprintf(err, errlen, "--listen %s: expected IPv4ADDR:PORT", listen ? listen : "");
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->a = a;
	int r = load_tls(h, cfg, err, errlen);
	if (r < 0) {
		health_free(h);
		return r;
	}
	if (at_ui_new(a, &h->ui) < 0) {
		health_free(h);
		return -ENOMEM;
	}
	struct pk_listener_config lc = {
	    .addr = &ss,
	    .threads = 0, /* a thread per connection */
	    .limits = cfg->limits,
	    .tls_cert = h->tls_cert,
	    .tls_key = h->tls_key,
	    .header_bytes = 16384,
	    .handler = on_request,
	    .handler_arg = h,
	};
	pk_listen_limits_fill(&lc.limits, PK_ATTACH_HEALTH_MAX_CONNECTIONS,
			      PK_ATTACH_HEALTH_MAX_CONNECTIONS_PER_ADDR);
	if (pk_listener_start(&lc, &h->l, lerr, sizeof(lerr)) < 0) {
		snprintf(err, errlen, "--listen %s: cannot listen there (%s)", listen, lerr);
		health_free(h);
		return -EADDRINUSE;
	}
	h->port = pk_listener_port(h->l);
	*ret = h;
	return 0;
}

uint16_t at_health_port(const struct at_health *h)
{
	return h ? h->port : 0;
}

void at_health_stop(struct at_health *h)
{
	if (!h)
		return;
	pk_listener_stop(h->l);
	health_free(h);
}

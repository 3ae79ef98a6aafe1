/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health.c — what attach mode serves on its listen address: /healthz (the
 * process runs), /readyz (every informer delivered its first list; 503
 * before), /metrics (Prometheus text) and nothing else, in particular none
 * of the cluster's objects.  A small libmicrohttpd daemon with one polling
 * thread: every answer is computed from memory without waiting.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/attach/attach-internal.h"

struct at_health {
	struct pk_attach *a;
	struct MHD_Daemon *d;
	uint16_t port;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *ctype)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
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
		fclose(f);
		return reply(conn, 200, buf, len, "text/plain; version=0.0.4");
	}
	return text(conn, 404,
		    "attach mode serves /healthz, /readyz and /metrics; the objects are the "
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

int at_health_start(struct pk_attach *a, const char *listen, struct at_health **ret, char *err,
		    size_t errlen)
{
	struct at_health *h;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	if (parse_listen(listen, &sa) < 0) {
		snprintf(err, errlen, "--listen %s: expected IPv4ADDR:PORT", listen ? listen : "");
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->a = a;
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL,
				NULL, on_request, h, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_LIMIT,
				64u, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "--listen %s: cannot listen there", listen);
		free(h);
		return -EADDRINUSE;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : ntohs(sa.sin_port);
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
	MHD_stop_daemon(h->d);
	free(h);
}

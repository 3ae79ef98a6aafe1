/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health.c — podagent's /healthz for the kubelet's probes (--health-listen).
 *
 * The daemon's loop records when it last finished a discovery cycle; the
 * listener answers 200 "ok" while that is recent (three --interval periods) and 503 with the age
 * otherwise, so a loop stuck in discovery or in a publish that never returns gets the agent
 * restarted.  A publish that fails (the API server away) still ends its cycle: restarting the agent
 * would not bring the server back, so it stays healthy.
 *
 * libmicrohttpd serves it from its own thread, with few connections (a
 * probe needs one), one per client address, and a short timeout; nothing
 * but GET /healthz and /livez is answered.  The address is meant to be
 * loopback (the DaemonSet's probe uses host 127.0.0.1 on the host network).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "agent/agent.h"

struct agent_health {
	struct MHD_Daemon *d;
	_Atomic int64_t last_cycle_ms; /* monotonic; 0: none yet */
	int64_t started_ms;
	int64_t stale_ms;
	uint16_t port;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result q;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	q = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return q;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct agent_health *h = cls;
	char msg[160];
	(void)version, (void)upload, (void)state;

	if (*upload_len)
		return MHD_NO; /* no bodies here */
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (strcmp(url, "/healthz") != 0 && strcmp(url, "/livez") != 0)
		return answer(c, MHD_HTTP_NOT_FOUND, "not found\n");
	int64_t last = atomic_load(&h->last_cycle_ms), now = now_ms();
	int64_t since = last ? last : h->started_ms;
	if (now - since <= h->stale_ms)
		return answer(c, MHD_HTTP_OK, "ok\n");
	snprintf(msg, sizeof(msg), "no discovery cycle finished for %lld s (limit %lld s)\n",
		 (long long)((now - since) / 1000), (long long)(h->stale_ms / 1000));
	return answer(c, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
}

/* "ADDR:PORT" (IPv4) into sa. */
static int parse_addr(const char *s, struct sockaddr_in *sa)
{
	const char *colon = s ? strrchr(s, ':') : NULL;
	char host[64];
	char *end;
	long port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 0 || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

int agent_health_start(const char *listen, int interval_s, struct agent_health **ret, char *err,
		       size_t errlen)
{
	struct agent_health *h;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	if (parse_addr(listen, &sa) < 0) {
		snprintf(err, errlen, "--health-listen %s: expected IPv4ADDR:PORT", listen);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->started_ms = now_ms();
	h->stale_ms = 3000LL * (interval_s > 0 ? interval_s : 10);
	h->d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, h,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)8,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)4, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)5, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "--health-listen %s: cannot listen there (address in use?)",
			 listen);
		free(h);
		return -EADDRINUSE;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : 0;
	*ret = h;
	return 0;
}

uint16_t agent_health_port(const struct agent_health *h)
{
	return h ? h->port : 0;
}

void agent_health_cycle_done(struct agent_health *h)
{
	if (h)
		atomic_store(&h->last_cycle_ms, now_ms());
}

void agent_health_stop(struct agent_health *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}

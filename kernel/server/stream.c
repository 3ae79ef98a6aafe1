/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stream.c — watch streams on the event loop without pinning a thread.
 *
 * libmicrohttpd serves every connection from a small pool of epoll threads,
 * so a content reader must never block.  A watch's reader takes what its
 * pk_watch has ready (pk_watch_read() with no wait); when nothing is ready it
 * parks: the stream goes on the server's parked list and the connection is
 * suspended (MHD_suspend_connection), which costs no thread and no polling.
 * One hub thread sleeps in pk_store_wait() and, when the store commits
 * something or a second passes, resumes every parked stream; each reader then
 * looks again, sends events, a heartbeat after WATCH_HEARTBEAT_S quiet seconds
 * (writing is how a vanished client is noticed: suspended connections see no
 * disconnects), or parks again.  The park lock orders suspend before resume,
 * so a resume never reaches a connection that is not suspended.  Stopping
 * resumes everything before MHD_stop_daemon(), which must not meet a
 * suspended connection.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <time.h>

#include "kernel/server/server-internal.h"

#define WATCH_HEARTBEAT_S 15
#define WATCH_STALL_S 20 /* > the heartbeat: a live, idle watch always sends in time */
#define HUB_TICK_MS 1000

struct stream {
	struct pk_server *srv;
	struct pk_watch *w;
	struct MHD_Connection *conn;
	struct stream *next; /* on srv->parked */
	bool parked;
	time_t last_sent;
};

static time_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct stream *s = cls;
	ssize_t n = pk_watch_read(s->w, buf, max, 0);
	if (n < 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n == 0 && now_s() - s->last_sent >= WATCH_HEARTBEAT_S)
		n = pk_watch_heartbeat(s->w, buf, max);
	if (n > 0) {
		s->last_sent = now_s();
		return n;
	}
	struct pk_server *srv = s->srv;
	pthread_mutex_lock(&srv->park_lock);
	if (atomic_load(&srv->stopping)) {
		pthread_mutex_unlock(&srv->park_lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	s->parked = true;
	s->next = srv->parked;
	srv->parked = s;
	MHD_suspend_connection(s->conn);
	pthread_mutex_unlock(&srv->park_lock);
	return 0;
}

static void stream_free(void *cls)
{
	struct stream *s = cls;
	struct pk_server *srv = s->srv;
	pthread_mutex_lock(&srv->park_lock);
	for (struct stream **p = &srv->parked; s->parked && *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&srv->park_lock);
	pk_watch_free(s->w);
	free(s);
}

struct MHD_Response *pk_srv_stream_response(struct pk_server *srv, struct MHD_Connection *conn,
					    struct pk_watch *w)
{
	struct stream *s = calloc(1, sizeof(*s));
	if (!s) {
		pk_watch_free(w);
		return NULL;
	}
	*s = (struct stream){.srv = srv, .w = w, .conn = conn, .last_sent = now_s()};
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024,
								   stream_read, s, stream_free);
	if (!r) {
		stream_free(s);
		return NULL;
	}
	/* Its own timeout: a watch whose client stops reading (nothing can be sent
	 * for WATCH_STALL_S) is closed and relists, as kube-apiserver closes a
	 * watcher that falls behind.  Parked streams do not count as stalled. */
	MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, WATCH_STALL_S);
	return r;
}

/* Resume every parked stream; the readers look for news and park again. */
void pk_srv_stream_resume_all(struct pk_server *srv)
{
	pthread_mutex_lock(&srv->park_lock);
	struct stream *s = srv->parked;
	srv->parked = NULL;
	while (s) {
		struct stream *next = s->next;
		s->parked = false;
		s->next = NULL;
		MHD_resume_connection(s->conn);
		s = next;
	}
	pthread_mutex_unlock(&srv->park_lock);
}

static void *hub_main(void *arg)
{
	struct pk_server *srv = arg;
	while (!atomic_load(&srv->stopping)) {
		uint64_t rv = pk_store_rv(srv->store);
		if (pk_store_wait(srv->store, rv, HUB_TICK_MS) == -ECANCELED) {
			/* The store is shutting down: watches end at their next read. */
			struct timespec ts = {0, HUB_TICK_MS * 1000000L / 4};
			nanosleep(&ts, NULL);
		}
		pk_srv_stream_resume_all(srv);
	}
	return NULL;
}

int pk_srv_stream_hub_start(struct pk_server *srv)
{
	int rc = pthread_create(&srv->hub, NULL, hub_main, srv);
	if (rc != 0)
		return -rc;
	srv->hub_running = true;
	return 0;
}

void pk_srv_stream_hub_stop(struct pk_server *srv)
{
	atomic_store(&srv->stopping, true);
	if (srv->hub_running) {
		pthread_join(srv->hub, NULL);
		srv->hub_running = false;
	}
	pk_srv_stream_resume_all(srv);
}

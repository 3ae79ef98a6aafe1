/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c — Prometheus text exposition of the server's counters.
 *
 * Requests are counted by verb and HTTP code in a small fixed table (verbs are
 * static strings, so a pointer compare finds the slot); latency goes into a
 * cumulative histogram with fixed bucket bounds.  Store writes and live
 * watchers are read at render time.  The program around the server adds
 * its own lines through the metrics hook, and serves /ui/ through the ui
 * hook (both guarded by hook_lock, so clearing a hook waits for its call).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/process.h"
#include "kernel/server/server-internal.h"

static const double bounds[LATENCY_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5};

/* The latency slot of verb, resource and subresource (under metrics_lock). */
static struct latency_slot *latency_slot(struct pk_server *srv, const char *verb, const char *res,
					 const char *sub)
{
	for (size_t i = 0; i < LATENCY_SLOTS - 1; i++) {
		struct latency_slot *l = &srv->latency[i];

		if (!l->verb) {
			l->verb = verb;
			l->resource = res;
			snprintf(l->subresource, sizeof(l->subresource), "%s", sub);
		}
		if (strcmp(l->verb, verb) == 0 && strcmp(l->resource, res) == 0 &&
		    strcmp(l->subresource, sub) == 0)
			return l;
	}
	if (!srv->latency[LATENCY_SLOTS - 1].verb) {
		srv->latency[LATENCY_SLOTS - 1].verb = "other";
		srv->latency[LATENCY_SLOTS - 1].resource = "";
	}
	return &srv->latency[LATENCY_SLOTS - 1];
}

void pk_srv_metrics_record(struct pk_server *srv, const struct pk_srv_note *note, int code,
			   double seconds)
{
	const char *verb = note->verb ? note->verb : "other";
	const char *res = note->resource ? note->resource : "";

	pthread_mutex_lock(&srv->metrics_lock);
	for (size_t i = 0; i < METRIC_SLOTS; i++) {
		struct metric_slot *m = &srv->metrics[i];
		if (!m->verb) {
			m->verb = verb;
			m->resource = res;
			snprintf(m->subresource, sizeof(m->subresource), "%s", note->subresource);
			m->code = code;
		}
		if (m->code == code && strcmp(m->verb, verb) == 0 &&
		    strcmp(m->resource, res) == 0 &&
		    strcmp(m->subresource, note->subresource) == 0) {
			m->count++;
			break;
		}
	}
	struct latency_slot *l = latency_slot(srv, verb, res, note->subresource);

	for (size_t b = 0; b < LATENCY_BUCKETS; b++)
		if (seconds <= bounds[b])
			l->buckets[b]++;
	l->sum += seconds;
	l->count++;
	pthread_mutex_unlock(&srv->metrics_lock);
}

static void latency_render(struct pk_server *srv, FILE *f)
{
	for (size_t i = 0; i < LATENCY_SLOTS && srv->latency[i].verb; i++) {
		const struct latency_slot *l = &srv->latency[i];
		char labels[160];

		snprintf(labels, sizeof(labels), "verb=\"%s\",resource=\"%s\",subresource=\"%s\"",
			 l->verb, l->resource, l->subresource);
		for (size_t b = 0; b < LATENCY_BUCKETS; b++)
			fprintf(f,
				"apiserver_request_duration_seconds_bucket{%s,le=\"%g\"} %" PRIu64
				"\n",
				labels, bounds[b], l->buckets[b]);
		fprintf(f,
			"apiserver_request_duration_seconds_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n"
			"apiserver_request_duration_seconds_sum{%s} %.6f\n"
			"apiserver_request_duration_seconds_count{%s} %" PRIu64 "\n",
			labels, l->count, labels, l->sum, labels, l->count);
	}
}

char *pk_srv_metrics_render(struct pk_server *srv)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	struct pk_store_stats st;
	pk_store_get_stats(srv->store, &st);
	fprintf(f, "# HELP apiserver_request_total Requests by verb, resource, subresource and "
		   "HTTP code.\n"
		   "# TYPE apiserver_request_total counter\n");
	pthread_mutex_lock(&srv->metrics_lock);
	for (size_t i = 0; i < METRIC_SLOTS && srv->metrics[i].verb; i++)
		fprintf(f,
			"apiserver_request_total{verb=\"%s\",resource=\"%s\",subresource=\"%s\","
			"code=\"%d\"} %" PRIu64 "\n",
			srv->metrics[i].verb, srv->metrics[i].resource, srv->metrics[i].subresource,
			srv->metrics[i].code, srv->metrics[i].count);
	fprintf(f, "# HELP apiserver_request_duration_seconds Request latency by verb, resource "
		   "and subresource.\n"
		   "# TYPE apiserver_request_duration_seconds histogram\n");
	latency_render(srv, f);
	pthread_mutex_unlock(&srv->metrics_lock);
	fprintf(f,
		"# HELP podkernel_store_writes_total Committed store write transactions.\n"
		"# TYPE podkernel_store_writes_total counter\n"
		"podkernel_store_writes_total %" PRIu64 "\n"
		"# HELP podkernel_store_objects Objects in the store.\n"
		"# TYPE podkernel_store_objects gauge\n"
		"podkernel_store_objects %" PRIu64 "\n"
		"# HELP podkernel_store_resource_version Latest resourceVersion.\n"
		"# TYPE podkernel_store_resource_version gauge\n"
		"podkernel_store_resource_version %" PRIu64 "\n"
		"# HELP apiserver_registered_watchers Open watch streams.\n"
		"# TYPE apiserver_registered_watchers gauge\n"
		"apiserver_registered_watchers %ld\n",
		st.writes, st.objects, pk_store_rv(srv->store), atomic_load(&srv->watchers));
	fprintf(f,
		"# HELP podkernel_store_writer_lock_seconds_total Seconds the store's writer lock "
		"was held (every write's serial section, its commits included).\n"
		"# TYPE podkernel_store_writer_lock_seconds_total counter\n"
		"podkernel_store_writer_lock_seconds_total %.6f\n"
		"# HELP podkernel_store_commit_seconds_total Seconds of it spent committing (the "
		"WAL's fsync).\n"
		"# TYPE podkernel_store_commit_seconds_total counter\n"
		"podkernel_store_commit_seconds_total %.6f\n"
		"# HELP podkernel_store_commit_writers_total Writers the commits carried (over "
		"podkernel_store_writes_total: how many shared a commit).\n"
		"# TYPE podkernel_store_commit_writers_total counter\n"
		"podkernel_store_commit_writers_total %" PRIu64 "\n",
		st.lock_seconds, st.commit_seconds, st.commit_writers);
	struct pk_store_damage dmg;
	pk_store_get_damage(srv->store, &dmg);
	fprintf(f,
		"# HELP podkernel_store_damaged_rows Store rows that failed their checksum or "
		"checks (set aside at start or met by a read).\n"
		"# TYPE podkernel_store_damaged_rows gauge\n"
		"podkernel_store_damaged_rows %" PRIu64 "\n",
		dmg.rows);
	pk_srv_audit_metrics(srv, f);
	pk_process_metrics(f, PODKERNEL_VERSION);
	pthread_mutex_lock(&srv->hook_lock);
	pk_listener_metrics(srv->listener, "api", f);
	if (srv->metrics_hook)
		srv->metrics_hook(srv->metrics_hook_arg, f);
	pthread_mutex_unlock(&srv->hook_lock);
	fclose(f);
	return out;
}

void pk_server_set_metrics_hook(struct pk_server *srv, void (*fn)(void *arg, FILE *f), void *arg)
{
	pthread_mutex_lock(&srv->hook_lock);
	srv->metrics_hook = fn;
	srv->metrics_hook_arg = arg;
	pthread_mutex_unlock(&srv->hook_lock);
}

void pk_server_set_ui_hook(struct pk_server *srv, pk_server_ui_fn fn, void *arg)
{
	pthread_mutex_lock(&srv->hook_lock);
	srv->ui_hook = fn;
	srv->ui_hook_arg = arg;
	pthread_mutex_unlock(&srv->hook_lock);
}

int pk_srv_ui_render(struct pk_server *srv, const struct pk_request *req, struct pk_response *resp)
{
	int r = -ENOENT;

	pthread_mutex_lock(&srv->hook_lock);
	if (srv->ui_hook)
		r = srv->ui_hook(srv->ui_hook_arg, req, resp);
	pthread_mutex_unlock(&srv->hook_lock);
	return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recorder.c — events.k8s.io/v1 Events, so `kubectl describe` and
 * `kubectl events` explain what the scheduler did (Scheduled,
 * FailedScheduling, Preempted).
 *
 * Emitting never blocks the scheduling loop: an Event is queued (at most
 * AT_EVENT_QUEUE_MAX; beyond that it is dropped and counted) and a thread
 * of its own writes the queue through the write path, as one batch of
 * creates on a writer of its own (at_remote_writer_new(): a POST each, many
 * in flight).  Repeats are limited per object and reason,
 * like client-go's event correlator (pk_event_allowed()): the same
 * note again is dropped for PK_EVENT_REPEAT_S; a new note goes out (it says something new, and the
 * scheduler only writes a condition when its message changes).  Events are
 * best effort: a failed POST is counted, not retried.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/attach/attach-internal.h"

struct at_recorder {
	struct kube_client *c;
	const struct at_api *api;
	char *instance;
	struct pk_writer *writer; /* the thread's */
	pthread_t thread;
	bool started, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	json_t *queue;			 /* [namespace, Event] pairs */
	struct pk_event_limiter limiter; /* "Kind/ns/name/reason" */
	uint64_t sent, limited, failed, seq;
};

static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static json_t *event_new(struct at_recorder *rec, const struct pk_type *kind, const char *ns,
			 const char *name, const char *uid, const char *type, const char *reason,
			 const char *action, const char *note)
{
	const struct kube_resource *res = at_api_resource(rec->api, kind);
	char when[40], evname[320], av[200];
	json_t *regarding;

	kube_micro_time(when);
	/* unique like client-go's: the object's name and a time-based suffix */
	snprintf(evname, sizeof(evname), "%.240s.%llx%04llx", name, (unsigned long long)time(NULL),
		 (unsigned long long)(rec->seq++ & 0xffff));
	snprintf(av, sizeof(av), "%s%s%s", res && *res->group ? res->group : "",
		 res && *res->group ? "/" : "", res ? res->version : "v1");
	regarding = json_pack("{s:s,s:s,s:s,s:s}", "kind", kind->kind, "apiVersion", av,
			      "namespace", ns, "name", name);
	if (uid && *uid)
		json_object_set_new(regarding, "uid", json_string(uid));
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:s}", "apiVersion",
			 "events.k8s.io/v1", "kind", "Event", "metadata", "name", evname,
			 "namespace", ns, "eventTime", when, "reportingController",
			 AT_REPORTING_CONTROLLER, "reportingInstance", rec->instance, "action",
			 action, "reason", reason, "type", type, "regarding", regarding, "note",
			 note);
}

void at_recorder_emit(struct at_recorder *rec, const struct pk_type *kind, const char *ns,
		      const char *name, const char *uid, const char *type, const char *reason,
		      const char *action, const char *note)
{
	char okey[600], key[768];
	char shortnote[1024];

	if (!rec || !kind)
		return;
	/* events.k8s.io/v1 limits note to 1 kB */
	snprintf(shortnote, sizeof(shortnote), "%s", note ? note : "");
	snprintf(key, sizeof(key), "%s/%s",
		 pk_obj_key(okey, sizeof(okey), kind, ns, name) ? okey : "", reason);
	pthread_mutex_lock(&rec->lock);
	if (!pk_event_allowed(&rec->limiter, key, shortnote, now_s()) ||
	    json_array_size(rec->queue) >= AT_EVENT_QUEUE_MAX) {
		rec->limited++;
	} else {
		json_t *ev = event_new(rec, kind, ns, name, uid, type, reason, action, shortnote);

		if (ev) {
			json_array_append_new(rec->queue, json_pack("[s,o]", ns, ev));
			pthread_cond_signal(&rec->cond);
		}
	}
	pthread_mutex_unlock(&rec->lock);
}

/* The queue's Events ([namespace, Event] pairs) created through the recorder's writer. */
static void write_events(struct at_recorder *rec, json_t *work)
{
	const struct pk_write_result *res = NULL;
	size_t i, n = json_array_size(work), nres = 0, asked = 0;
	json_t *e;
	int r = pk_writer_batch_begin(rec->writer);

	json_array_foreach(r == 0 ? work : NULL, i, e)
	{
		if (pk_writer_create(rec->writer, &pk_type_event, json_array_get(e, 1)) == 0)
			asked++;
	}
	if (r == 0 && asked)
		r = pk_writer_batch_commit(rec->writer, &res, &nres);
	pthread_mutex_lock(&rec->lock);
	for (i = 0; r == 0 && i < nres; i++)
		if (res[i].error == 0)
			rec->sent++;
		else
			rec->failed++;
	rec->failed += r == 0 ? n - nres : n;
	pthread_mutex_unlock(&rec->lock);
}

static void *recorder_main(void *arg)
{
	struct at_recorder *rec = arg;

	pthread_mutex_lock(&rec->lock);
	while (!rec->stop) {
		if (json_array_size(rec->queue) == 0) {
			pthread_cond_wait(&rec->cond, &rec->lock);
			continue;
		}
		json_t *work = rec->queue;

		rec->queue = json_array();
		pthread_mutex_unlock(&rec->lock);
		write_events(rec, work);
		json_decref(work);
		pthread_mutex_lock(&rec->lock);
		if (!rec->queue) /* out of memory: start over */
			rec->queue = json_array();
	}
	pthread_mutex_unlock(&rec->lock);
	return NULL;
}

int at_recorder_new(struct kube_client *c, const struct at_api *api, const char *instance,
		    struct at_recorder **ret)
{
	struct at_recorder *rec = calloc(1, sizeof(*rec));
	int r;

	if (!rec)
		return -ENOMEM;
	rec->c = c;
	rec->api = api;
	pthread_mutex_init(&rec->lock, NULL);
	pthread_cond_init(&rec->cond, NULL);
	rec->instance = strdup(instance);
	rec->queue = json_array();
	/* no mirror: the recorder's writer creates Events, and reads nothing */
	struct at_remote_config rc = {.client = c, .api = api};

	r = rec->instance && rec->queue ? at_remote_writer_new(&rc, &rec->writer) : -ENOMEM;
	if (r == 0) {
		r = -pthread_create(&rec->thread, NULL, recorder_main, rec);
		rec->started = r == 0;
	}
	if (r < 0) {
		at_recorder_free(rec);
		return r;
	}
	*ret = rec;
	return 0;
}

void at_recorder_free(struct at_recorder *rec)
{
	if (!rec)
		return;
	pthread_mutex_lock(&rec->lock);
	rec->stop = true;
	pthread_cond_signal(&rec->cond);
	pthread_mutex_unlock(&rec->lock);
	if (rec->started)
		pthread_join(rec->thread, NULL);
	pk_writer_free(rec->writer);
	json_decref(rec->queue);
	pk_event_limiter_free(&rec->limiter);
	free(rec->instance);
	pthread_cond_destroy(&rec->cond);
	pthread_mutex_destroy(&rec->lock);
	free(rec);
}

void at_recorder_stats(struct at_recorder *rec, uint64_t *ret_sent, uint64_t *ret_limited,
		       uint64_t *ret_failed)
{
	pthread_mutex_lock(&rec->lock);
	*ret_sent = rec->sent;
	*ret_limited = rec->limited;
	*ret_failed = rec->failed;
	pthread_mutex_unlock(&rec->lock);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recorder.c — core/v1 Events in the appliance's own store (standalone), so
 * `kubectl describe pod` and `kubectl get events` explain a pending gang, a
 * binding and a preemption as kube-scheduler's Events do in a cluster.
 * (Attach mode posts its Events to the cluster: kernel/attach/recorder.c.)
 *
 * After a round's batch commits, pk_writer_events() says which Events its
 * writes make (Scheduled, FailedScheduling, Preempted).  As client-go's
 * event correlator does, the recorder aggregates: the same type, reason and
 * message about the same object bumps the Event it already wrote (count,
 * lastTimestamp) instead of making a new one, and pk_event_allowed() writes
 * such a repeat at most once per PK_EVENT_REPEAT_S, the repeats in between
 * counted into the next write's count.  The Events of a round are handed to
 * the recorder's own thread, which writes them through the write path, on a
 * writer of its own over the store (a batch is one transaction, holding
 * the Events that came within CTL_EVENT_COALESCE_MS of its last write; an
 * Event written twice in one hand-over goes in the next batch):
 * the loop never waits for an Event's commit, and a binding never waits
 * for, or fails with, its Event.  Events expire as kube-apiserver's
 * --event-ttl makes them (one hour): every CTL_EVENT_SWEEP_MS (or TTL, if
 * shorter) the same thread deletes the Events (anyone's) last written longer
 * ago than that, found by the store's expiry index.  Events
 * are best effort: a failed write is counted, never retried, and never
 * holds a binding back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/controllers/controllers-internal.h"

#define CTL_EVENT_COMPONENT "podkernel"

/* An Event the recorder wrote, for the repeats of its note. */
struct ctl_event_seen {
	char name[256];
	char first[32]; /* firstTimestamp */
	int64_t count;	/* occurrences so far, written or not */
};

struct ctl_recorder {
	struct pk_event_limiter seen; /* the correlator's memory (pk_event_allowed) */
	struct pk_map written;	      /* object, type, reason, note -> struct ctl_event_seen */
	json_t *pending;	      /* the loop's Events to write: [{event, bump}] */
	uint64_t seq;
	int64_t next_sweep_ms;
	/* the writer thread: takes queue, under lock */
	struct pk_ctl *ctl;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	json_t *queue;
	int64_t sweep_before; /* a sweep asked for: Events last written at or before (s); 0 none */
	bool started, stopping;
	struct timespec last_write; /* when the thread last wrote Events (CLOCK_MONOTONIC) */
	bool wrote;		    /* it has written some */
	/* where the Events are written: a writer of the recorder's own on the store (its
	 * thread's, or the caller's when the thread cannot start), under wlock */
	pthread_mutex_t wlock;
	struct pk_writer *writer;
};

int ctl_recorder_new(struct ctl_recorder **ret)
{
	struct ctl_recorder *rec = calloc(1, sizeof(*rec));
	pthread_condattr_t ca;

	if (!rec)
		return -ENOMEM;
	pthread_mutex_init(&rec->lock, NULL);
	pthread_mutex_init(&rec->wlock, NULL);
	/* coalesce() waits by the monotonic clock: a wall clock set back waits no longer */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rec->cond, &ca);
	pthread_condattr_destroy(&ca);
	rec->written = (struct pk_map)PK_MAP_INIT(free);
	if (!(rec->pending = json_array()) || !(rec->queue = json_array())) {
		ctl_recorder_free(rec);
		return -ENOMEM;
	}
	*ret = rec;
	return 0;
}

/* Stops the writer thread once it has written what it was given. */
void ctl_recorder_free(struct ctl_recorder *rec)
{
	if (!rec)
		return;
	if (rec->started) {
		pthread_mutex_lock(&rec->lock);
		rec->stopping = true;
		pthread_cond_signal(&rec->cond);
		pthread_mutex_unlock(&rec->lock);
		pthread_join(rec->thread, NULL);
	}
	pk_event_limiter_free(&rec->seen);
	pk_map_free(&rec->written);
	json_decref(rec->pending);
	json_decref(rec->queue);
	pk_writer_free(rec->writer);
	pthread_mutex_destroy(&rec->lock);
	pthread_mutex_destroy(&rec->wlock);
	pthread_cond_destroy(&rec->cond);
	free(rec);
}

static json_t *event_new(struct ctl_recorder *rec, const struct pk_write_item *it, const char *uid,
			 const char *type, const char *reason, const char *action, const char *note)
{
	const struct pk_type *t = it->kind;
	const char *ns = it->ns && *it->ns ? it->ns : "default";
	char name[256], ts[32];
	int64_t now = (int64_t)time(NULL);
	json_t *ev, *ref;

	/* unique like client-go's: the object's name and a time-based suffix */
	snprintf(name, sizeof(name), "%.230s.%llx%04llx", it->name, (unsigned long long)now,
		 (unsigned long long)(rec->seq++ & 0xffff));
	pk_time_format(now, ts);
	ref = json_pack("{s:s,s:s,s:s,s:s}", "kind", t ? t->kind : "", "apiVersion",
			t ? t->api_version : "v1", "namespace", ns, "name", it->name);
	if (ref && uid && *uid)
		json_object_set_new(ref, "uid", json_string(uid));
	ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:o,s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i,s:s,s:s,s:s}",
		       "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace",
		       ns, "involvedObject", ref, "reason", reason, "message", note, "type", type,
		       "source", "component", CTL_EVENT_COMPONENT, "firstTimestamp", ts,
		       "lastTimestamp", ts, "count", 1, "reportingComponent", CTL_EVENT_COMPONENT,
		       "reportingInstance", "podkerneld", "action", action);
	return ev;
}

/* Remember ev as written for key (forgetting all at PK_EVENT_LIMITER_MAX). */
static void written_note(struct ctl_recorder *rec, const char *key, const json_t *ev)
{
	struct ctl_event_seen *w = calloc(1, sizeof(*w));

	if (!w)
		return;
	if (rec->written.live >= PK_EVENT_LIMITER_MAX)
		pk_map_free(&rec->written);
	snprintf(w->name, sizeof(w->name), "%s", pk_get_string(ev, "metadata.name") ?: "");
	snprintf(w->first, sizeof(w->first), "%s", pk_get_string(ev, "firstTimestamp") ?: "");
	w->count = 1;
	if (pk_map_put(&rec->written, key, w) < 0)
		free(w);
}

/* ev as a repeat of the Event w: its name, first time and count. */
static void event_as_repeat(json_t *ev, const struct ctl_event_seen *w)
{
	json_object_set_new(json_object_get(ev, "metadata"), "name", json_string(w->name));
	json_object_set_new(ev, "firstTimestamp", json_string(w->first));
	json_object_set_new(ev, "count", json_integer(w->count));
}

static void note_one(void *arg, const struct pk_write_item *it, const json_t *obj, const char *type,
		     const char *reason, const char *action, const char *note)
{
	struct pk_ctl *ctl = arg;
	struct ctl_recorder *rec = ctl->recorder;
	const char *uid = obj ? pk_get_string(obj, "metadata.uid") : NULL;
	const struct pk_type *t = it->kind;
	char okey[600], key[768], wkey[2048], shortnote[1024];
	struct ctl_event_seen *w;
	json_t *ev;

	/* an Event's message is limited to 1 kB, as events.k8s.io/v1's note */
	snprintf(shortnote, sizeof(shortnote), "%s", note ? note : "");
	snprintf(key, sizeof(key), "%s/%s",
		 pk_obj_key(okey, sizeof(okey), t, it->ns, it->name) ? okey : "", reason);
	snprintf(wkey, sizeof(wkey), "%s\x1f%s\x1f%s\x1f%s", key, uid ?: "", type, shortnote);
	if (ctl->scfg.event_repeat_ms > 0)
		rec->seen.window_s =
		    ctl->scfg.event_repeat_ms >= 1000 ? ctl->scfg.event_repeat_ms / 1000 : -1;
	w = pk_map_get(&rec->written, wkey);
	if (w)
		w->count++;
	if (!pk_event_allowed(&rec->seen, key, shortnote, (int64_t)time(NULL))) {
		CTL_COUNT(ctl, kevents_limited);
		return;
	}
	ev = event_new(rec, it, uid, type, reason, action, shortnote);
	if (ev && w)
		event_as_repeat(ev, w);
	else if (ev)
		written_note(rec, wkey, ev);
	if (!ev || json_array_append_new(
		       rec->pending, json_pack("{s:o,s:b}", "event", ev, "bump", w != NULL)) < 0)
		CTL_COUNT(ctl, kevents_failed);
}

static void record(struct pk_ctl *ctl, const char *type, const struct pk_type *t, const json_t *obj,
		   const char *reason, const char *note)
{
	struct pk_write_item it = {.kind = t,
				   .ns = t && t->namespaced ? (char *)pk_namespace(obj) : NULL,
				   .name = (char *)pk_name(obj)};

	if (ctl->queues_event && it.name) /* an offline pass's own sink (attach mode) */
		ctl->queues_event(ctl->queues_event_arg, type, t, obj, reason, note);
	else if (ctl->recorder && it.name)
		note_one(ctl, &it, obj, type, reason, reason, note);
}

void ctl_record_warning(struct pk_ctl *ctl, const struct pk_type *kind, const json_t *obj,
			const char *reason, const char *note)
{
	record(ctl, "Warning", kind, obj, reason, note);
}

void ctl_record_normal(struct pk_ctl *ctl, const struct pk_type *kind, const json_t *obj,
		       const char *reason, const char *note)
{
	record(ctl, "Normal", kind, obj, reason, note);
}

/* The Events of a committed batch, handed to the writer thread. */
void ctl_record_batch(struct pk_ctl *ctl, const struct pk_write_batch *batch,
		      const struct pk_write_result *results)
{
	json_t **objects;

	if (!ctl->recorder || !ctl->store || !batch->n)
		return;
	objects = calloc(batch->n, sizeof(*objects));
	if (!objects)
		return;
	for (size_t i = 0; i < batch->n; i++)
		objects[i] = results[i].object;
	pk_writer_events(batch, results, objects, note_one, ctl);
	free(objects);
	ctl_record_flush(ctl);
}

/* The recorder's writer, made on first use (under rec->wlock). */
static int rec_writer(struct ctl_recorder *rec, struct pk_ctl *ctl)
{
	return rec->writer ? 0 : pk_writer_store_new(ctl->store, &rec->writer);
}

static struct pk_write_ref event_ref(const json_t *ev)
{
	return (struct pk_write_ref){
	    .kind = &pk_type_event, .ns = pk_namespace(ev), .name = pk_name(ev)};
}

/*
 * One op into the open batch: a new Event created, a repeat's Event replaced
 * (its count and lastTimestamp are the repeat's).  An Event the batch
 * already writes waits for the next batch (again); 1 when added.
 */
static int add_op(struct pk_writer *w, json_t *op, json_t *names, json_t *again)
{
	json_t *ev = json_object_get(op, "event");
	struct pk_write_ref ref = event_ref(ev);
	char key[600];
	int r;

	snprintf(key, sizeof(key), "%s/%s", ref.ns ?: "", ref.name ?: "");
	if (json_object_get(names, key))
		return json_array_append(again, op) == 0 ? 0 : -ENOMEM;
	if (json_object_set_new(names, key, json_true()) < 0)
		return -ENOMEM;
	r = json_is_true(json_object_get(op, "bump")) ? pk_writer_replace(w, &ref, ev)
						      : pk_writer_create(w, &pk_type_event, ev);
	return r < 0 ? r : 1;
}

/*
 * One batch through the recorder's writer (one transaction): new Events
 * created, repeats written; returns what is left (a new array, NULL on
 * ENOMEM): the repeats whose Event was gone (expired), to be created
 * again, and the ops about an Event the batch already wrote.
 */
static json_t *write_once(struct pk_ctl *ctl, json_t *ops)
{
	struct ctl_recorder *rec = ctl->recorder;
	const struct pk_write_result *res = NULL;
	size_t i, n = json_array_size(ops), nres = 0, k = 0;
	size_t *idx = calloc(n ? n : 1, sizeof(*idx)); /* op of each item */
	json_t *op, *again = json_array(), *names = json_object();
	int r = idx && again && names ? 0 : -ENOMEM;

	pthread_mutex_lock(&rec->wlock);
	if (r == 0 && (r = rec_writer(rec, ctl)) == 0)
		r = pk_writer_batch_begin(rec->writer);
	json_array_foreach(r == 0 ? ops : NULL, i, op)
	{
		int a = add_op(rec->writer, op, names, again);

		if (a == 1)
			idx[k++] = i;
		else if (a < 0)
			CTL_COUNT(ctl, kevents_failed);
	}
	if (r == 0 && k)
		r = pk_writer_batch_commit(rec->writer, &res, &nres);
	for (i = 0; i < (r == 0 ? nres : k); i++) {
		op = json_array_get(ops, idx[i]);
		if (r == 0 && res[i].error == 0)
			CTL_COUNT(ctl, kevents_written);
		else if (r == 0 && res[i].error == -ENOENT &&
			 json_is_true(json_object_get(op, "bump")))
			json_array_append_new(again,
					      json_pack("{s:O,s:b}", "event",
							json_object_get(op, "event"), "bump", 0));
		else
			CTL_COUNT(ctl, kevents_failed);
	}
	pthread_mutex_unlock(&rec->wlock);
	free(idx);
	json_decref(names);
	if (r < 0 && !k) /* nothing was tried: every op failed */
		for (i = 0; i < n; i++)
			CTL_COUNT(ctl, kevents_failed);
	if (r < 0) {
		json_decref(again);
		return NULL;
	}
	return again;
}

/* ops written, in as many batches as Events written twice in them need. */
static void write_ops(struct pk_ctl *ctl, json_t *ops)
{
	json_t *left = json_incref(ops);

	/* each batch writes at least one op: as many batches as ops, at most */
	for (size_t tries = json_array_size(ops) + 1; left && json_array_size(left) && tries;
	     tries--) {
		json_t *next = write_once(ctl, left);

		json_decref(left);
		left = next;
	}
	json_decref(left);
}

static void sweep(struct pk_ctl *ctl, int64_t before_s);

/*
 * Events that come fast share a transaction: Events handed over less than
 * CTL_EVENT_COALESCE_MS after the recorder's last write wait until that
 * much time has passed since it, gathering what the next rounds hand over,
 * so a gang bound over many rounds makes a few batches of Events (one
 * commit, one fsync each), not one per round beside each round's bindings.
 * An Event after a quiet spell is written at once.  Waits under rec->lock
 * until then, until the queue holds CTL_EVENT_COALESCE_MAX ops, or until the
 * recorder stops or a sweep is asked for.
 */
#define CTL_EVENT_COALESCE_MS 20
#define CTL_EVENT_COALESCE_MAX 4096

static void coalesce(struct ctl_recorder *rec)
{
	struct timespec until = rec->last_write;

	if (!rec->wrote)
		return;
	until.tv_nsec += CTL_EVENT_COALESCE_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!rec->stopping && !rec->sweep_before &&
	       json_array_size(rec->queue) < CTL_EVENT_COALESCE_MAX &&
	       pthread_cond_timedwait(&rec->cond, &rec->lock, &until) == 0)
		;
}

static void *writer_main(void *arg)
{
	struct ctl_recorder *rec = arg;

	pthread_mutex_lock(&rec->lock);
	for (;;) {
		json_t *ops = rec->queue;
		int64_t before = rec->sweep_before;

		if (before) {
			rec->sweep_before = 0;
			pthread_mutex_unlock(&rec->lock);
			sweep(rec->ctl, before);
			pthread_mutex_lock(&rec->lock);
			continue;
		}
		if (json_array_size(ops) == 0) {
			if (rec->stopping)
				break;
			pthread_cond_wait(&rec->cond, &rec->lock);
			continue;
		}
		coalesce(rec);
		ops = rec->queue;
		rec->queue = json_array();
		pthread_mutex_unlock(&rec->lock);
		write_ops(rec->ctl, ops);
		clock_gettime(CLOCK_MONOTONIC, &rec->last_write);
		rec->wrote = true;
		json_decref(ops);
		pthread_mutex_lock(&rec->lock);
		if (!rec->queue) /* out of memory: the next flush tries again */
			rec->queue = json_array();
	}
	pthread_mutex_unlock(&rec->lock);
	return NULL;
}

/* The writer thread, started on first use (under rec->lock); false if it cannot be. */
static bool writer_running(struct ctl_recorder *rec, struct pk_ctl *ctl)
{
	if (!rec->started) {
		rec->ctl = ctl;
		rec->started = pthread_create(&rec->thread, NULL, writer_main, rec) == 0;
	}
	return rec->started;
}

/* Hand the pending Events to the writer thread (started on first use; written
 * here when it cannot start). */
void ctl_record_flush(struct pk_ctl *ctl)
{
	struct ctl_recorder *rec = ctl->recorder;

	if (!rec || !ctl->store || json_array_size(rec->pending) == 0)
		return;
	pthread_mutex_lock(&rec->lock);
	if (writer_running(rec, ctl) && rec->queue &&
	    json_array_extend(rec->queue, rec->pending) == 0) {
		pthread_cond_signal(&rec->cond);
		pthread_mutex_unlock(&rec->lock);
	} else {
		pthread_mutex_unlock(&rec->lock);
		write_ops(ctl, rec->pending);
	}
	json_array_clear(rec->pending);
}

/* Delete the Events named in keys ({namespace, name}) in one batch of the recorder's writer. */
static void delete_events(struct pk_ctl *ctl, json_t *keys)
{
	struct ctl_recorder *rec = ctl->recorder;
	const struct pk_write_result *res = NULL;
	size_t i, n = json_array_size(keys), nres = 0;
	json_t *k;
	int r;

	if (!n)
		return;
	pthread_mutex_lock(&rec->wlock);
	if ((r = rec_writer(rec, ctl)) == 0)
		r = pk_writer_batch_begin(rec->writer);
	json_array_foreach(r == 0 ? keys : NULL, i, k)
	{
		struct pk_write_ref ref = {.kind = &pk_type_event,
					   .ns = pk_get_string(k, "namespace"),
					   .name = pk_get_string(k, "name")};

		if ((r = pk_writer_delete(rec->writer, &ref, PK_WRITE_PROPAGATE_DEFAULT)) < 0)
			break;
	}
	if (r == 0 && pk_writer_batch_commit(rec->writer, &res, &nres) == 0)
		for (i = 0; i < nres; i++)
			if (res[i].error == 0)
				CTL_COUNT(ctl, kevents_expired);
	pthread_mutex_unlock(&rec->wlock);
}

/* Delete the Events last written at or before before_s, found by the store's
 * expiry index (pk_store_expired_events()): a sweep reads what expired, not
 * every Event.  One transaction per CTL_EVENT_SWEEP_MAX of them. */
static void sweep(struct pk_ctl *ctl, int64_t before_s)
{
	size_t n;

	do {
		json_t *keys = NULL;

		if (pk_store_expired_events(ctl->store, before_s, CTL_EVENT_SWEEP_MAX, &keys) < 0)
			return;
		n = json_array_size(keys);
		delete_events(ctl, keys);
		json_decref(keys);
	} while (n == CTL_EVENT_SWEEP_MAX);
}

/* Every CTL_EVENT_SWEEP_MS (or TTL, if shorter), the writer thread sweeps the
 * Events last written longer than the TTL ago (here when it cannot start). */
void ctl_record_sweep(struct pk_ctl *ctl, int64_t now_ms)
{
	struct ctl_recorder *rec = ctl->recorder;
	int64_t ttl_s = ctl->scfg.event_ttl_ms > 0 ? ctl->scfg.event_ttl_ms / 1000
						   : PK_STANDALONE_EVENT_TTL_MS / 1000;
	int64_t before = (int64_t)time(NULL) - ttl_s;
	bool queued;

	if (!rec || !ctl->store || now_ms < rec->next_sweep_ms)
		return;
	rec->next_sweep_ms =
	    now_ms + (ttl_s * 1000 < CTL_EVENT_SWEEP_MS ? ttl_s * 1000 : CTL_EVENT_SWEEP_MS);
	pthread_mutex_lock(&rec->lock);
	queued = writer_running(rec, ctl);
	if (queued) {
		rec->sweep_before = before > 0 ? before : 1;
		pthread_cond_signal(&rec->cond);
	}
	pthread_mutex_unlock(&rec->lock);
	if (!queued)
		sweep(ctl, before);
}

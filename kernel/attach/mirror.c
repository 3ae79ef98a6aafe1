/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mirror.c — the cluster as the scheduling loop reads it in attach mode.
 *
 * The informers (kernel/kube/informer.c) deliver each watched resource here
 * from their own threads.  The mirror keeps the latest object of every key
 * ("Kind/ns/name") and appends every change to an event queue numbered by a
 * local sequence; the appliance's loop consumes that queue through the same
 * source calls it uses on the store (list, events since a position, wait,
 * get), so the scheduling loop runs unchanged on a cluster.  Each event
 * carries the object's own resourceVersion, which is what the loop compares
 * and writes back as a precondition.
 *
 * What the scheduler must see is decided here, once: a pod whose
 * spec.schedulerName is another scheduler's is mirrored only when it is
 * bound (it then takes capacity) and a finished pod (Succeeded, Failed) not
 * at all; workload objects served under another group/version get the
 * apiVersion the scheduler knows.  A relist (replace) turns into the adds,
 * changes and deletes the watch missed.  The queue holds what the loop has
 * not consumed yet; past AT_MIRROR_MAX_PENDING events it is dropped and the
 * loop, told "gone", lists the mirror again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/attach/attach-internal.h"

struct at_event {
	enum pk_event_type type;
	uint64_t seq, rv;
	const struct pk_type *kind;
	json_t *obj;
};

struct at_mirror {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	json_t *objects; /* key -> object (shared, never changed in place) */
	struct at_event *ev;
	size_t n, cap;	/* pending events, oldest first */
	uint64_t seq;	/* last assigned */
	uint64_t floor; /* events with seq <= floor are no longer held */
	bool closing;
	char *scheduler_name;
	uint64_t events, filtered;
};

static void key_of(char *buf, size_t len, const struct pk_type *kind, const char *ns,
		   const char *name)
{
	pk_obj_key(buf, len, kind, ns, name);
}

static uint64_t rv_of(const json_t *obj)
{
	const char *s = pk_get_string(obj, "metadata.resourceVersion");

	return s ? strtoull(s, NULL, 10) : 0;
}

int at_mirror_new(const char *scheduler_name, struct at_mirror **ret)
{
	struct at_mirror *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	m->objects = json_object();
	m->scheduler_name = strdup(scheduler_name);
	if (!m->objects || !m->scheduler_name) {
		at_mirror_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

static void events_drop(struct at_mirror *m, size_t count)
{
	if (count == 0)
		return;
	for (size_t i = 0; i < count; i++)
		json_decref(m->ev[i].obj);
	memmove(m->ev, m->ev + count, (m->n - count) * sizeof(*m->ev));
	m->n -= count;
}

void at_mirror_free(struct at_mirror *m)
{
	if (!m)
		return;
	events_drop(m, m->n);
	free(m->ev);
	json_decref(m->objects);
	free(m->scheduler_name);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void at_mirror_close(struct at_mirror *m)
{
	pthread_mutex_lock(&m->lock);
	m->closing = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

void at_mirror_kick(struct at_mirror *m)
{
	pthread_mutex_lock(&m->lock);
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

/* With the lock held: queue one event (obj reference stolen). */
static void push(struct at_mirror *m, enum pk_event_type type, const struct pk_type *kind,
		 json_t *obj)
{
	if (m->n >= AT_MIRROR_MAX_PENDING) {
		/* the loop is far behind: it lists everything again instead */
		events_drop(m, m->n);
		m->floor = m->seq;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		struct at_event *ev = realloc(m->ev, cap * sizeof(*ev));

		if (!ev) {
			events_drop(m, m->n);
			m->floor = ++m->seq;
			json_decref(obj);
			pthread_cond_broadcast(&m->cond);
			return;
		}
		m->ev = ev;
		m->cap = cap;
	}
	m->ev[m->n++] = (struct at_event){type, ++m->seq, rv_of(obj), kind, obj};
	m->events++;
	pthread_cond_broadcast(&m->cond);
}

/* Should the scheduler see this pod at all? */
static bool pod_visible(const struct at_mirror *m, const json_t *pod)
{
	const char *node = pk_get_string(pod, "spec.nodeName");
	const char *sched = pk_get_string(pod, "spec.schedulerName");
	const char *phase = pk_get_string(pod, "status.phase");

	if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0))
		return false;
	if (node && *node)
		return true;
	return strcmp(sched && *sched ? sched : "default-scheduler", m->scheduler_name) == 0;
}

/* The object as the scheduler reads it (a new reference), or NULL to hide it. */
static json_t *as_seen(const struct at_mirror *m, const struct pk_type *t, const json_t *obj)
{
	enum pk_kind k = t->pk;

	if (k == PK_KIND_POD && !pod_visible(m, obj))
		return NULL;
	if (k == PK_KIND_WORKLOAD || k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP) {
		const char *av = json_string_value(json_object_get(obj, "apiVersion"));

		if (av && strcmp(av, t->api_version) != 0) {
			json_t *c = json_copy((json_t *)obj);

			at_api_normalize(c);
			return c;
		}
	}
	return json_incref((json_t *)obj);
}

/* With the lock held: one object's new state (or its deletion). */
static void apply(struct at_mirror *m, const struct pk_type *kind, enum kube_event type,
		  const json_t *obj)
{
	char key[768];
	json_t *seen = type == KUBE_DELETED ? NULL : as_seen(m, kind, obj);
	json_t *old;

	pk_obj_key(key, sizeof(key), kind, pk_get_string(obj, "metadata.namespace"), pk_name(obj));
	old = json_object_get(m->objects, key);
	if (!seen) {
		if (!old) {
			m->filtered += type != KUBE_DELETED;
			return;
		}
		/* deleted, or no longer the scheduler's business: the last state goes */
		json_t *last = type == KUBE_DELETED ? json_incref((json_t *)obj) : json_incref(old);

		json_object_del(m->objects, key);
		push(m, PK_EVENT_DELETED, kind, last);
		return;
	}
	if (old && rv_of(old) == rv_of(seen) && rv_of(seen) != 0) {
		json_decref(seen); /* a relist repeating what is known */
		return;
	}
	json_object_set(m->objects, key, seen);
	push(m, old ? PK_EVENT_MODIFIED : PK_EVENT_ADDED, kind, seen);
}

void at_mirror_event(struct at_mirror *m, const struct pk_type *k, enum kube_event type,
		     const json_t *obj)
{
	if (!k || !pk_name(obj))
		return;
	pthread_mutex_lock(&m->lock);
	apply(m, k, type, obj);
	pthread_mutex_unlock(&m->lock);
}

void at_mirror_replace(struct at_mirror *m, const struct pk_type *k, const json_t *items)
{
	char prefix[128], key[768];
	json_t *listed = json_object(), *gone = json_array(), *it;
	const char *mk;
	size_t i;

	if (!k || !listed || !gone) {
		json_decref(listed);
		json_decref(gone);
		return;
	}
	snprintf(prefix, sizeof(prefix), "%s/", k->kind);
	pthread_mutex_lock(&m->lock);
	json_array_foreach(items, i, it)
	{
		if (!pk_name(it))
			continue;
		pk_obj_key(key, sizeof(key), k, pk_get_string(it, "metadata.namespace"),
			   pk_name(it));
		json_object_set_new(listed, key, json_true());
		apply(m, k, KUBE_MODIFIED, it);
	}
	json_object_foreach(m->objects, mk, it)
	{
		if (strncmp(mk, prefix, strlen(prefix)) == 0 && !json_object_get(listed, mk))
			json_array_append(gone, it);
	}
	json_array_foreach(gone, i, it) apply(m, k, KUBE_DELETED, it);
	pthread_mutex_unlock(&m->lock);
	json_decref(listed);
	json_decref(gone);
}

/* ---- the loop's side: a source like the store ------------------------------------- */

static int src_list(void *arg, const struct pk_type *kind, const struct pk_source_list_opts *opts,
		    json_t **ret_items, char **ret_continue)
{
	struct at_mirror *m = arg;
	char prefix[128];
	json_t *items = json_array(), *obj;
	const char *key;

	(void)opts;
	if (!items)
		return -ENOMEM;
	snprintf(prefix, sizeof(prefix), "%s/", kind->kind);
	pthread_mutex_lock(&m->lock);
	json_object_foreach(m->objects, key, obj)
	{
		if (strncmp(key, prefix, strlen(prefix)) == 0)
			json_array_append(items, obj);
	}
	pthread_mutex_unlock(&m->lock);
	*ret_items = items;
	*ret_continue = NULL;
	return 0;
}

static uint64_t src_rv(void *arg)
{
	struct at_mirror *m = arg;
	uint64_t seq;

	pthread_mutex_lock(&m->lock);
	seq = m->seq;
	pthread_mutex_unlock(&m->lock);
	return seq;
}

static int src_events_since(void *arg, uint64_t since, size_t max, pk_source_event_cb cb,
			    void *cbarg, uint64_t *ret_last)
{
	struct at_mirror *m = arg;
	struct at_event *out;
	size_t n = 0, done = 0;

	pthread_mutex_lock(&m->lock);
	if (since < m->floor) {
		pthread_mutex_unlock(&m->lock);
		return -PK_SOURCE_EGONE;
	}
	while (done < m->n && m->ev[done].seq <= since)
		done++;
	events_drop(m, done); /* one consumer: what it has seen can go */
	if (max == 0 || max > m->n)
		max = m->n;
	out = max ? malloc(max * sizeof(*out)) : NULL;
	for (; out && n < max; n++) {
		out[n] = m->ev[n];
		json_incref(out[n].obj);
	}
	pthread_mutex_unlock(&m->lock);
	if (max && !out)
		return -ENOMEM;
	uint64_t last = since;
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		struct pk_source_event ev = {out[i].type, out[i].rv, out[i].kind, out[i].obj};

		if (r == 0) {
			r = cb(&ev, cbarg);
			last = out[i].seq;
		}
		json_decref(out[i].obj);
	}
	free(out);
	if (ret_last)
		*ret_last = last;
	return r;
}

static struct timespec deadline_in(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/*
 * Wait for an event after since.  An event that wakes an idle loop is
 * usually the first of a burst (the pods of a gang arrive one request after
 * the other): the wait goes on while more follow within AT_MIRROR_QUIET_MS,
 * up to AT_MIRROR_SETTLE_MS, so that one round sees the burst and writes
 * each object once instead of once per intermediate state.
 */
static int src_wait(void *arg, uint64_t since, int timeout_ms)
{
	struct at_mirror *m = arg;
	struct timespec ts = deadline_in(timeout_ms), settle;
	int r = 0;

	pthread_mutex_lock(&m->lock);
	/* one wait at most: at_mirror_kick() wakes it for news that is not an event */
	if (!m->closing && m->seq <= since)
		r = pthread_cond_timedwait(&m->cond, &m->lock, &ts) == ETIMEDOUT ? -ETIMEDOUT : 0;
	if (r == 0 && !m->closing && m->seq > since) {
		settle = deadline_in(AT_MIRROR_SETTLE_MS);
		for (;;) {
			uint64_t seen = m->seq;
			struct timespec quiet = deadline_in(AT_MIRROR_QUIET_MS);
			bool last =
			    quiet.tv_sec > settle.tv_sec ||
			    (quiet.tv_sec == settle.tv_sec && quiet.tv_nsec >= settle.tv_nsec);
			int w = 0;

			if (last)
				quiet = settle;
			while (!m->closing && m->seq == seen && w != ETIMEDOUT)
				w = pthread_cond_timedwait(&m->cond, &m->lock, &quiet);
			if (m->closing || m->seq == seen || last)
				break;
		}
	}
	if (m->closing)
		r = -ECANCELED;
	pthread_mutex_unlock(&m->lock);
	return r;
}

static int src_get(void *arg, const struct pk_type *kind, const char *ns, const char *name,
		   json_t **ret)
{
	struct at_mirror *m = arg;
	char key[768];
	json_t *obj;

	key_of(key, sizeof(key), kind, ns, name);
	pthread_mutex_lock(&m->lock);
	obj = json_incref(json_object_get(m->objects, key));
	pthread_mutex_unlock(&m->lock);
	if (!obj)
		return -ENOENT;
	*ret = obj;
	return 0;
}

const struct pk_appliance_source_ops at_mirror_source_ops = {
    .list = src_list,
    .rv = src_rv,
    .events_since = src_events_since,
    .wait = src_wait,
    .get = src_get,
};

int at_mirror_get(struct at_mirror *m, const struct pk_type *kind, const char *ns, const char *name,
		  json_t **ret)
{
	return src_get(m, kind, ns, name, ret);
}

void at_mirror_stats(struct at_mirror *m, uint64_t *ret_events, uint64_t *ret_filtered,
		     size_t *ret_objects)
{
	pthread_mutex_lock(&m->lock);
	*ret_events = m->events;
	*ret_filtered = m->filtered;
	*ret_objects = json_object_size(m->objects);
	pthread_mutex_unlock(&m->lock);
}

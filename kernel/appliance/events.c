/* SPDX-License-Identifier: Apache-2.0 */
/*
 * events.c — what a change-stream event means for the scheduling loop.
 *
 * The loop must requeue only what an event can help.  The scheduler already
 * wakes exactly the hierarchies an object belongs to (and capacity-failed
 * roots on a node change), so the job here is to keep writes that change
 * nothing the scheduler reads away from it: a node agent's periodic label
 * publish, the appliance's own binding and condition writes echoed back by
 * the stream, status-only updates.  For that the cache keeps, per object,
 * the last resourceVersion seen and the fingerprint of what the scheduler
 * and the loop's controllers read (pk_sched_fingerprint, the one the
 * scheduler uses itself).  Events at or below the cached resourceVersion
 * are replays of what is already known.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance.h"
#include "kernel/builder/builder.h"
#include "kernel/lib/map.h"
#include "kernel/sched/sched.h"

#define AP_KEY_MAX 600 /* pk_obj_key(): a kind, a namespace (63) and a name (253) */

/*
 * Per object, "kind/ns/name" (the kind as its enum's number) -> the last
 * resourceVersion seen and the fingerprint, in the common string map.  The
 * records live in chunks of AP_SEEN_CHUNK (every object of the cluster has
 * one: 16 bytes each, no allocation of its own); a deleted object's record
 * goes on a free list.
 */
union ap_seen {
	struct {
		uint64_t rv, fp;
	};
	union ap_seen *next_free;
};
#define AP_SEEN_CHUNK 1024
struct ap_cache {
	struct pk_map map;	     /* key -> union ap_seen */
	union ap_seen **chunks;	     /* each AP_SEEN_CHUNK records */
	size_t nchunks, used;	     /* used: records handed out of the last chunk */
	union ap_seen *free_records; /* deleted objects' records */
};

int ap_cache_new(struct ap_cache **ret)
{
	struct ap_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

void ap_cache_free(struct ap_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nchunks; i++)
		free(c->chunks[i]);
	free(c->chunks);
	pk_map_free(&c->map);
	free(c);
}

/* A record for a new object: from the free list, else the last chunk; NULL on ENOMEM. */
static union ap_seen *record_new(struct ap_cache *c)
{
	union ap_seen *s = c->free_records, **v;

	if (s) {
		c->free_records = s->next_free;
		return s;
	}
	if (!c->nchunks || c->used == AP_SEEN_CHUNK) {
		v = realloc(c->chunks, (c->nchunks + 1) * sizeof(*v));
		if (!v)
			return NULL;
		c->chunks = v;
		if (!(v[c->nchunks] = malloc(AP_SEEN_CHUNK * sizeof(**v))))
			return NULL;
		c->nchunks++;
		c->used = 0;
	}
	return &c->chunks[c->nchunks - 1][c->used++];
}

static void record_free(struct ap_cache *c, union ap_seen *s)
{
	s->next_free = c->free_records;
	c->free_records = s;
}

size_t ap_cache_size(const struct ap_cache *c)
{
	return c ? c->map.live : 0;
}

static int cache_put(struct ap_cache *c, const char *key, uint64_t rv, uint64_t fp)
{
	union ap_seen *s = pk_map_get(&c->map, key);

	if (!s) {
		s = record_new(c);
		if (!s)
			return -ENOMEM;
		if (pk_map_put(&c->map, key, s) < 0) {
			record_free(c, s);
			return -ENOMEM;
		}
	}
	s->rv = rv;
	s->fp = fp;
	return 0;
}

static void cache_del(struct ap_cache *c, const char *key)
{
	union ap_seen *s = pk_map_get(&c->map, key);

	if (s) {
		pk_map_del(&c->map, key);
		record_free(c, s);
	}
}

/* The key of an object, pk_obj_key() (a namespaced kind's empty namespace is "default"). */
static void cache_key(char *buf, size_t len, const struct pk_type *t, const char *ns,
		      const char *name)
{
	if (!pk_obj_key(buf, len, t, ns, name) && len)
		*buf = '\0'; /* not reached: names are bounded well below AP_KEY_MAX */
}

static void object_key(char *buf, size_t len, const struct pk_type *t, const json_t *obj)
{
	cache_key(buf, len, t, pk_get_string(obj, "metadata.namespace"), pk_name(obj));
}

static uint64_t object_rv(const json_t *obj)
{
	const char *s = pk_get_string(obj, "metadata.resourceVersion");

	return s ? strtoull(s, NULL, 10) : 0;
}

int ap_cache_note(struct ap_cache *c, const struct pk_type *kind, const json_t *obj)
{
	char key[AP_KEY_MAX];

	if (!c || !obj)
		return -EINVAL;
	object_key(key, sizeof(key), kind, obj);
	return cache_put(c, key, object_rv(obj), pk_sched_fingerprint(kind, obj, true));
}

void ap_cache_forget(struct ap_cache *c, const struct pk_type *kind, const char *ns,
		     const char *name)
{
	char key[AP_KEY_MAX];

	if (!c)
		return;
	cache_key(key, sizeof(key), kind, ns, name);
	cache_del(c, key);
}

uint64_t ap_cache_rv(const struct ap_cache *c, const struct pk_type *kind, const char *ns,
		     const char *name)
{
	char key[AP_KEY_MAX];
	const union ap_seen *s;

	if (!c || !name)
		return 0;
	cache_key(key, sizeof(key), kind, ns, name);
	s = pk_map_get(&c->map, key);
	return s ? s->rv : 0;
}

/* Which kinds the scheduler reads (pk_sched_reads), by number: once, not per event. */
static bool sched_reads[_PK_KIND_MAX];
static pthread_once_t sched_reads_once = PTHREAD_ONCE_INIT;

static void sched_reads_init(void)
{
	for (int k = 0; k < _PK_KIND_MAX; k++)
		sched_reads[k] = pk_sched_reads(pk_type_of((enum pk_kind)k));
}

static bool sched_kind(enum pk_kind k)
{
	pthread_once(&sched_reads_once, sched_reads_init);
	return k >= 0 && k < _PK_KIND_MAX && sched_reads[k];
}

int ap_classify(struct ap_cache *c, enum pk_event_type type, const struct pk_type *t,
		const json_t *obj, uint64_t rv, struct ap_decision *ret)
{
	enum pk_kind k = t ? t->pk : PK_KIND_UNKNOWN;
	struct ap_decision d = {.verdict = AP_SKIP};
	const union ap_seen *seen;
	char key[AP_KEY_MAX];
	uint64_t fp;

	if (!c || !obj || !ret)
		return -EINVAL;
	object_key(key, sizeof(key), t, obj);
	seen = pk_map_get(&c->map, key);
	if (type == PK_EVENT_DELETED) {
		cache_del(c, key);
		d.verdict = sched_kind(k) ? AP_REMOVE : AP_SKIP;
		d.fresh = d.changed = true;
		*ret = d;
		return 0;
	}
	if (seen && rv <= seen->rv) {
		*ret = d; /* a replay, or the echo of the appliance's own write */
		return 0;
	}
	fp = pk_sched_fingerprint(t, obj, true);
	d.fresh = true;
	d.changed = !seen || seen->fp != fp;
	if (cache_put(c, key, rv, fp) < 0)
		return -ENOMEM;
	if (d.changed && sched_kind(k))
		d.verdict = AP_FEED;
	/* a pod that ran to its end holds nothing more (as kube-scheduler drops it) */
	if (d.changed && k == PK_KIND_POD && wb_pod_state(obj) != WB_POD_ACTIVE &&
	    wb_pod_state(obj) != WB_POD_DELETING)
		d.verdict = AP_REMOVE;
	*ret = d;
	return 0;
}

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
#include "kernel/lib/hash.h"
#include "kernel/sched/sched.h"

#define AP_KEY_MAX 600 /* pk_obj_key(): a kind, a namespace (63) and a name (253) */

/*
 * Per object, "Kind/ns/name" (pk_obj_key()) -> the last resourceVersion
 * seen and the fingerprint.  Every object of the cluster has a record, so
 * the cache keeps no allocation per object: the records live in chunks of
 * AP_SEEN_CHUNK (a deleted object's goes on a free list), their keys one
 * after another in one arena of text (compacted when deletions left most of
 * it unused), and the table is an open-addressing one of record numbers (4
 * bytes a slot, 0 empty, AP_TOMB deleted, else the number + 1), linear
 * probing on FNV-1a, grown at 2/3 full.  A lookup compares the whole key,
 * so two objects never share a record.
 */
struct ap_seen {
	uint64_t rv, fp;
	uint32_t key;  /* the key's offset in the arena */
	uint32_t hash; /* the key's hash, low bits (rehashing reads no text) */
};
#define AP_SEEN_CHUNK 1024
#define AP_TOMB UINT32_MAX
#define AP_FREE UINT32_MAX /* a free record's key: next_free in rv */
struct ap_cache {
	uint32_t *slots;	  /* cap of them */
	size_t cap, used, live;	  /* used: live and deleted slots */
	struct ap_seen **chunks;  /* each AP_SEEN_CHUNK records */
	size_t nchunks, nrecords; /* nrecords: handed out, free ones included */
	uint64_t free_records;	  /* a free record's number + 1, 0: none */
	char *text;		  /* the keys, each with its NUL */
	size_t text_len, text_cap, text_dead;
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
	free(c->slots);
	free(c->text);
	free(c);
}

static struct ap_seen *record_at(const struct ap_cache *c, uint32_t n)
{
	return &c->chunks[n / AP_SEEN_CHUNK][n % AP_SEEN_CHUNK];
}

size_t ap_cache_size(const struct ap_cache *c)
{
	return c ? c->live : 0;
}

/* The slot holding key (with its hash h), or the empty one ending its probe; NULL: no table. */
static uint32_t *slot_find(const struct ap_cache *c, const char *key, uint32_t h)
{
	if (!c->cap)
		return NULL;
	for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		uint32_t s = c->slots[i];
		const struct ap_seen *r;

		if (!s)
			return &c->slots[i];
		if (s == AP_TOMB)
			continue;
		r = record_at(c, s - 1);
		if (r->hash == h && strcmp(c->text + r->key, key) == 0)
			return &c->slots[i];
	}
}

static struct ap_seen *cache_get(const struct ap_cache *c, const char *key, uint32_t h)
{
	uint32_t *s = slot_find(c, key, h);

	return s && *s ? record_at(c, *s - 1) : NULL;
}

/* Rehash into a table twice as large, or as large when most of it is deleted slots. */
static int table_grow(struct ap_cache *c)
{
	size_t cap = !c->cap ? 64 : c->live * 4 < c->cap ? c->cap : c->cap * 2;
	uint32_t *slots = calloc(cap, sizeof(*slots)), *old = c->slots;

	if (!slots || cap > (size_t)UINT32_MAX) {
		free(slots);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!old[i] || old[i] == AP_TOMB)
			continue;
		for (j = record_at(c, old[i] - 1)->hash & (cap - 1); slots[j];
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = old[i];
	}
	free(old);
	c->slots = slots;
	c->cap = cap;
	c->used = c->live;
	return 0;
}

/* Copy the live keys into a fresh arena: deletions left most of it unused. */
static int text_compact(struct ap_cache *c)
{
	size_t cap = (c->text_len - c->text_dead) * 3 / 2 + 64, len = 0;
	char *text = malloc(cap);

	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		struct ap_seen *r;
		size_t n;

		if (!c->slots[i] || c->slots[i] == AP_TOMB)
			continue;
		r = record_at(c, c->slots[i] - 1);
		n = strlen(c->text + r->key) + 1;
		memcpy(text + len, c->text + r->key, n);
		r->key = (uint32_t)len;
		len += n;
	}
	free(c->text);
	c->text = text;
	c->text_len = len;
	c->text_cap = cap;
	c->text_dead = 0;
	return 0;
}

/* The key copied into the arena; its offset, or -ENOMEM. */
static int64_t text_add(struct ap_cache *c, const char *key)
{
	size_t n = strlen(key) + 1;

	if (c->text_dead > 4096 && c->text_dead * 2 > c->text_len && text_compact(c) < 0)
		return -ENOMEM;
	if (c->text_len + n > c->text_cap) {
		size_t cap = (c->text_len + n) * 3 / 2 + 4096;
		char *t = cap <= UINT32_MAX ? realloc(c->text, cap) : NULL;

		if (!t)
			return -ENOMEM;
		c->text = t;
		c->text_cap = cap;
	}
	memcpy(c->text + c->text_len, key, n);
	c->text_len += n;
	return (int64_t)(c->text_len - n);
}

/* A record for a new object (its number): from the free list, else the last chunk; -ENOMEM. */
static int64_t record_new(struct ap_cache *c)
{
	uint64_t n = c->free_records;
	struct ap_seen **v;

	if (n) {
		c->free_records = record_at(c, (uint32_t)(n - 1))->rv;
		return (int64_t)(n - 1);
	}
	if (c->nrecords == c->nchunks * AP_SEEN_CHUNK) {
		if (c->nrecords >= UINT32_MAX - AP_SEEN_CHUNK)
			return -ENOMEM;
		v = realloc(c->chunks, (c->nchunks + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->chunks = v;
		if (!(v[c->nchunks] = malloc(AP_SEEN_CHUNK * sizeof(**v))))
			return -ENOMEM;
		c->nchunks++;
	}
	return (int64_t)c->nrecords++;
}

static int cache_put(struct ap_cache *c, const char *key, uint32_t h, uint64_t rv, uint64_t fp)
{
	struct ap_seen *r = cache_get(c, key, h);
	int64_t n, off;
	uint32_t *s;

	if (!r) {
		if ((c->used + 1) * 3 > c->cap * 2 && table_grow(c) < 0)
			return -ENOMEM;
		if ((n = record_new(c)) < 0)
			return -ENOMEM;
		r = record_at(c, (uint32_t)n);
		if ((off = text_add(c, key)) < 0) {
			r->key = AP_FREE;
			r->rv = c->free_records;
			c->free_records = (uint64_t)n + 1;
			return -ENOMEM;
		}
		r->key = (uint32_t)off;
		r->hash = h;
		/* the first empty or deleted slot of its probe (it is not in the table) */
		for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1))
			if (!*(s = &c->slots[i]) || *s == AP_TOMB)
				break;
		c->used += !*s;
		*s = (uint32_t)n + 1;
		c->live++;
	}
	r->rv = rv;
	r->fp = fp;
	return 0;
}

static void cache_del(struct ap_cache *c, const char *key, uint32_t h)
{
	uint32_t *s = slot_find(c, key, h);
	struct ap_seen *r;

	if (!s || !*s)
		return;
	r = record_at(c, *s - 1);
	c->text_dead += strlen(c->text + r->key) + 1;
	r->key = AP_FREE;
	r->rv = c->free_records;
	c->free_records = *s; /* its number + 1 */
	*s = AP_TOMB;
	c->live--;
}

/* The key of an object, pk_obj_key() (a namespaced kind's empty namespace is "default"), and its
 * hash. */
static uint32_t cache_key(char *buf, size_t len, const struct pk_type *t, const char *ns,
			  const char *name)
{
	if (!pk_obj_key(buf, len, t, ns, name) && len)
		*buf = '\0'; /* not reached: names are bounded well below AP_KEY_MAX */
	return (uint32_t)pk_fnv1a(PK_FNV1A_INIT, buf);
}

static uint32_t object_key(char *buf, size_t len, const struct pk_type *t, const json_t *obj)
{
	return cache_key(buf, len, t, pk_get_string(obj, "metadata.namespace"), pk_name(obj));
}

static uint64_t object_rv(const json_t *obj)
{
	const char *s = pk_get_string(obj, "metadata.resourceVersion");

	return s ? strtoull(s, NULL, 10) : 0;
}

int ap_cache_note(struct ap_cache *c, const struct pk_type *kind, const json_t *obj)
{
	char key[AP_KEY_MAX];
	uint32_t h;

	if (!c || !obj)
		return -EINVAL;
	h = object_key(key, sizeof(key), kind, obj);
	return cache_put(c, key, h, object_rv(obj), pk_sched_fingerprint(kind, obj, true));
}

void ap_cache_forget(struct ap_cache *c, const struct pk_type *kind, const char *ns,
		     const char *name)
{
	char key[AP_KEY_MAX];
	uint32_t h;

	if (!c)
		return;
	h = cache_key(key, sizeof(key), kind, ns, name);
	cache_del(c, key, h);
}

uint64_t ap_cache_rv(const struct ap_cache *c, const struct pk_type *kind, const char *ns,
		     const char *name)
{
	char key[AP_KEY_MAX];
	const struct ap_seen *s;
	uint32_t h;

	if (!c || !name)
		return 0;
	h = cache_key(key, sizeof(key), kind, ns, name);
	s = cache_get(c, key, h);
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
	const struct ap_seen *seen;
	char key[AP_KEY_MAX];
	uint64_t fp;
	uint32_t h;

	if (!c || !obj || !ret)
		return -EINVAL;
	h = object_key(key, sizeof(key), t, obj);
	seen = cache_get(c, key, h);
	if (type == PK_EVENT_DELETED) {
		cache_del(c, key, h);
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
	if (cache_put(c, key, h, rv, fp) < 0)
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

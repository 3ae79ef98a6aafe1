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
 * the last resourceVersion seen and a fingerprint (FNV-1a over the canonical
 * JSON of the fields the scheduler decodes).  Events at or below the cached
 * resourceVersion are replays of what is already known.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance.h"

/*
 * An open-addressing table (linear probing, backward-shift deletion) of
 * "Kind/ns/name" -> resourceVersion and fingerprint: one key string and 24
 * bytes per object, as every object of the cluster has an entry.
 */
struct ap_cache_slot {
	char *key; /* NULL: empty */
	uint64_t rv, fp;
};
struct ap_cache {
	struct ap_cache_slot *slots;
	size_t cap, n; /* cap a power of two */
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
	for (size_t i = 0; i < c->cap; i++)
		free(c->slots[i].key);
	free(c->slots);
	free(c);
}

size_t ap_cache_size(const struct ap_cache *c)
{
	return c ? c->n : 0;
}

/* The slot of key, or the empty slot where it would go. */
static struct ap_cache_slot *slot_of(const struct ap_cache *c, const char *key)
{
	size_t i = pk_fnv1a(PK_FNV1A_INIT, key) & (c->cap - 1);

	while (c->slots[i].key && strcmp(c->slots[i].key, key) != 0)
		i = (i + 1) & (c->cap - 1);
	return &c->slots[i];
}

static const struct ap_cache_slot *cache_get(const struct ap_cache *c, const char *key)
{
	const struct ap_cache_slot *sl = c->cap ? slot_of(c, key) : NULL;

	return sl && sl->key ? sl : NULL;
}

static int cache_grow(struct ap_cache *c)
{
	struct ap_cache old = *c;

	c->cap = old.cap ? old.cap * 2 : 256;
	c->slots = calloc(c->cap, sizeof(*c->slots));
	if (!c->slots) {
		*c = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*slot_of(c, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

static void cache_del(struct ap_cache *c, const char *key)
{
	struct ap_cache_slot *sl = c->cap ? slot_of(c, key) : NULL;
	size_t i, j, mask = c->cap - 1;

	if (!sl || !sl->key)
		return;
	free(sl->key);
	sl->key = NULL;
	c->n--;
	/* Backward shift: move up every entry whose probe passed the hole. */
	i = (size_t)(sl - c->slots);
	for (j = (i + 1) & mask; c->slots[j].key; j = (j + 1) & mask) {
		size_t home = pk_fnv1a(PK_FNV1A_INIT, c->slots[j].key) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			c->slots[i] = c->slots[j];
			c->slots[j].key = NULL;
			i = j;
		}
	}
}

static void cache_key(char *buf, size_t len, const char *kind, const char *ns, const char *name)
{
	snprintf(buf, len, "%s/%s/%s", kind ? kind : "", ns ? ns : "", name ? name : "");
}

static void object_key(char *buf, size_t len, const char *kind, const json_t *obj)
{
	const char *ns = pk_get_string(obj, "metadata.namespace");
	enum pk_kind k = pk_kind_from_string(kind);

	if (k != PK_KIND_UNKNOWN && !pk_kind_namespaced(k))
		ns = "";
	else if (!ns || !*ns)
		ns = "default";
	cache_key(buf, len, kind, ns, pk_name(obj));
}

static void copy_field(json_t *dst, const json_t *obj, const char *path)
{
	json_t *v = pk_get(obj, path);

	if (v)
		json_object_set(dst, path, v);
}

/* The condition status of type, as a string value, or nothing. */
static void copy_condition(json_t *dst, const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);
	json_t *st = c ? json_object_get(c, "status") : NULL;

	if (st)
		json_object_set(dst, type, st);
}

uint64_t ap_fingerprint(const char *kind, const json_t *obj)
{
	json_t *view = json_object();
	uint64_t h = PK_FNV1A_INIT;
	char *text;

	if (!view)
		return 0;
	copy_field(view, obj, "metadata.labels");
	copy_field(view, obj, "metadata.deletionTimestamp");
	copy_field(view, obj, "metadata.uid");
	switch (pk_kind_from_string(kind)) {
	case PK_KIND_NODE:
		copy_field(view, obj, "spec");
		copy_field(view, obj, "status.allocatable");
		break;
	case PK_KIND_POD_GROUP:
		copy_field(view, obj, "spec");
		copy_condition(view, obj, "PodGroupInitiallyScheduled");
		break;
	case PK_KIND_COMPOSITE_POD_GROUP:
		copy_field(view, obj, "spec");
		copy_condition(view, obj, "CompositePodGroupInitiallyScheduled");
		break;
	case PK_KIND_PRIORITY_CLASS:
		copy_field(view, obj, "value");
		copy_field(view, obj, "globalDefault");
		break;
	default: /* Pod, Workload, Job, JobSet: the spec */
		copy_field(view, obj, "spec");
		break;
	}
	text = json_dumps(view, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(view);
	if (!text)
		return 0;
	h = pk_fnv1a(h, kind ? kind : "");
	h = pk_fnv1a(h, text);
	free(text);
	return h;
}

static uint64_t object_rv(const json_t *obj)
{
	const char *s = pk_get_string(obj, "metadata.resourceVersion");

	return s ? strtoull(s, NULL, 10) : 0;
}

static int cache_put(struct ap_cache *c, const char *key, uint64_t rv, uint64_t fp)
{
	struct ap_cache_slot *sl;

	if ((c->n + 1) * 4 > c->cap * 3 && cache_grow(c) < 0)
		return -ENOMEM;
	sl = slot_of(c, key);
	if (!sl->key) {
		sl->key = strdup(key);
		if (!sl->key)
			return -ENOMEM;
		c->n++;
	}
	sl->rv = rv;
	sl->fp = fp;
	return 0;
}

int ap_cache_note(struct ap_cache *c, const char *kind, const json_t *obj)
{
	char key[512];

	if (!c || !kind || !obj)
		return -EINVAL;
	object_key(key, sizeof(key), kind, obj);
	return cache_put(c, key, object_rv(obj), ap_fingerprint(kind, obj));
}

void ap_cache_forget(struct ap_cache *c, const char *kind, const char *ns, const char *name)
{
	char key[512];

	if (!c)
		return;
	enum pk_kind k = pk_kind_from_string(kind);

	if (k != PK_KIND_UNKNOWN && !pk_kind_namespaced(k))
		ns = "";
	else if (!ns || !*ns)
		ns = "default";
	cache_key(key, sizeof(key), kind, ns, name);
	cache_del(c, key);
}

uint64_t ap_cache_rv(const struct ap_cache *c, const char *kind, const char *ns, const char *name)
{
	char key[512];
	enum pk_kind k = pk_kind_from_string(kind);

	if (!c || !name)
		return 0;
	if (k != PK_KIND_UNKNOWN && !pk_kind_namespaced(k))
		ns = "";
	else if (!ns || !*ns)
		ns = "default";
	cache_key(key, sizeof(key), kind, ns, name);
	const struct ap_cache_slot *sl = cache_get(c, key);

	return sl ? sl->rv : 0;
}

static bool sched_kind(enum pk_kind k)
{
	return k == PK_KIND_NODE || k == PK_KIND_POD || k == PK_KIND_POD_GROUP ||
	       k == PK_KIND_COMPOSITE_POD_GROUP || k == PK_KIND_PRIORITY_CLASS;
}

static bool owner_kind(enum pk_kind k)
{
	return k == PK_KIND_JOB || k == PK_KIND_JOBSET || k == PK_KIND_WORKLOAD;
}

int ap_classify(struct ap_cache *c, enum pk_event_type type, const char *kind, const json_t *obj,
		uint64_t rv, struct ap_decision *ret)
{
	struct ap_decision d = { .verdict = AP_SKIP };
	enum pk_kind k = pk_kind_from_string(kind);
	const struct ap_cache_slot *seen;
	char key[512];
	uint64_t fp;

	if (!c || !kind || !obj || !ret)
		return -EINVAL;
	object_key(key, sizeof(key), kind, obj);
	seen = cache_get(c, key);
	if (type == PK_EVENT_DELETED) {
		cache_del(c, key);
		d.verdict = sched_kind(k) ? AP_REMOVE : AP_SKIP;
		d.gc = owner_kind(k);
		*ret = d;
		return 0;
	}
	if (seen && rv <= seen->rv) {
		*ret = d; /* a replay, or the echo of the appliance's own write */
		return 0;
	}
	fp = ap_fingerprint(kind, obj);
	bool changed = !seen || seen->fp != fp;

	if (cache_put(c, key, rv, fp) < 0)
		return -ENOMEM;
	d.heartbeat = k == PK_KIND_NODE;
	if (changed && sched_kind(k))
		d.verdict = AP_FEED;
	if (changed && (k == PK_KIND_JOB || k == PK_KIND_JOBSET))
		d.reconcile = true;
	*ret = d;
	return 0;
}

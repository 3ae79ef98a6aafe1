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
 * the last resourceVersion seen and a fingerprint (FNV-1a over a canonical
 * walk of the fields the scheduler decodes: object keys in sorted order,
 * every value tagged with its type; no text is built).  Events at or below the cached
 * resourceVersion are replays of what is already known.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance.h"
#include "kernel/builder/builder.h"
#include "kernel/lib/hash.h"
#include "kernel/lib/map.h"

#define AP_KEY_MAX 600 /* a kind's number, a namespace and a name (253 at most each) */

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

/* The key of an object (a namespaced kind's empty namespace is "default"). */
static void cache_key(char *buf, size_t len, enum pk_kind k, const char *ns, const char *name)
{
	if (k != PK_KIND_UNKNOWN && !pk_kind_namespaced(k))
		ns = "";
	else if (!ns || !*ns)
		ns = "default";
	snprintf(buf, len, "%d/%s/%s", (int)k, ns, name ? name : "");
}

static void object_key(char *buf, size_t len, enum pk_kind k, const json_t *obj)
{
	cache_key(buf, len, k, pk_get_string(obj, "metadata.namespace"), pk_name(obj));
}

#define FP_DEPTH_MAX 64 /* deeper values hash by type only (stored objects are shallower) */
#define FP_KEYS_STACK 32

static uint64_t fp_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = pk_fnv1a_byte(h, b[i]);
	return h;
}

/* A string with its length first: "a","bc" and "ab","c" differ. */
static uint64_t fp_string(uint64_t h, const char *s, size_t n)
{
	uint64_t len = n;

	return fp_bytes(fp_bytes(h, &len, sizeof(len)), s, n);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static uint64_t fp_value(uint64_t h, const json_t *v, int depth);

static uint64_t fp_object(uint64_t h, const json_t *v, int depth)
{
	const char *stack[FP_KEYS_STACK], **keys = stack, *key;
	size_t n = json_object_size(v), i = 0;
	json_t *x;

	if (n > FP_KEYS_STACK && !(keys = malloc(n * sizeof(*keys))))
		return pk_fnv1a_byte(h, '!'); /* no memory: a value that matches nothing */
	json_object_foreach((json_t *)v, key, x) keys[i++] = key;
	qsort(keys, n, sizeof(*keys), cmp_key);
	h = fp_bytes(pk_fnv1a_byte(h, '{'), &(uint64_t){n}, sizeof(uint64_t));
	for (i = 0; i < n; i++) {
		h = fp_string(h, keys[i], strlen(keys[i]));
		h = fp_value(h, json_object_get(v, keys[i]), depth + 1);
	}
	if (keys != stack)
		free(keys);
	return h;
}

/* Equal JSON values hash equal whatever the order of their keys. */
static uint64_t fp_value(uint64_t h, const json_t *v, int depth)
{
	if (depth > FP_DEPTH_MAX)
		return pk_fnv1a_byte(h, (unsigned char)json_typeof(v));
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return fp_object(h, v, depth);
	case JSON_ARRAY: {
		size_t n = json_array_size(v);

		h = fp_bytes(pk_fnv1a_byte(h, '['), &(uint64_t){n}, sizeof(uint64_t));
		for (size_t i = 0; i < n; i++)
			h = fp_value(h, json_array_get(v, i), depth + 1);
		return h;
	}
	case JSON_STRING:
		return fp_string(pk_fnv1a_byte(h, '"'), json_string_value(v),
				 json_string_length(v));
	case JSON_INTEGER: {
		json_int_t i = json_integer_value(v);

		return fp_bytes(pk_fnv1a_byte(h, 'i'), &i, sizeof(i));
	}
	case JSON_REAL: {
		double d = json_real_value(v);

		return fp_bytes(pk_fnv1a_byte(h, 'r'), &d, sizeof(d));
	}
	case JSON_TRUE:
		return pk_fnv1a_byte(h, 't');
	case JSON_FALSE:
		return pk_fnv1a_byte(h, 'f');
	default:
		return pk_fnv1a_byte(h, 'n');
	}
}

/* One field: its name, then its value or a mark for "absent". */
static uint64_t fp_field(uint64_t h, const char *name, const json_t *v)
{
	h = fp_string(h, name, strlen(name));
	return v ? fp_value(h, v, 0) : pk_fnv1a_byte(h, '-');
}

/* The condition status of type, as a field named type. */
static uint64_t fp_condition(uint64_t h, const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);

	return fp_field(h, type, c ? json_object_get(c, "status") : NULL);
}

uint64_t ap_fingerprint(enum pk_kind kind, const json_t *obj)
{
	uint64_t h = pk_fnv1a_byte(PK_FNV1A_INIT, (unsigned char)kind);

	h = fp_field(h, "metadata.labels", pk_get(obj, "metadata.labels"));
	h = fp_field(h, "metadata.deletionTimestamp", pk_get(obj, "metadata.deletionTimestamp"));
	h = fp_field(h, "metadata.uid", pk_get(obj, "metadata.uid"));
	switch (kind) {
	case PK_KIND_NODE:
		h = fp_field(h, "spec", pk_get(obj, "spec"));
		return fp_field(h, "status.allocatable", pk_get(obj, "status.allocatable"));
	case PK_KIND_POD_GROUP: /* the spec, the condition, the claims made for the group */
		h = fp_field(h, "spec", pk_get(obj, "spec"));
		h = fp_field(h, "status.resourceClaimStatuses",
			     pk_get(obj, "status.resourceClaimStatuses"));
		return fp_condition(h, obj, "PodGroupInitiallyScheduled");
	case PK_KIND_COMPOSITE_POD_GROUP:
		h = fp_field(h, "spec", pk_get(obj, "spec"));
		return fp_condition(h, obj, "CompositePodGroupInitiallyScheduled");
	case PK_KIND_RESOURCE_CLAIM: /* the requests, the allocation and who reserves it */
		h = fp_field(h, "spec", pk_get(obj, "spec"));
		h = fp_field(h, "status.allocation", pk_get(obj, "status.allocation"));
		return fp_field(h, "status.reservedFor", pk_get(obj, "status.reservedFor"));
	case PK_KIND_PRIORITY_CLASS:
		h = fp_field(h, "value", pk_get(obj, "value"));
		return fp_field(h, "globalDefault", pk_get(obj, "globalDefault"));
	case PK_KIND_PERSISTENT_VOLUME_CLAIM: /* the spec, the selected node, the owner */
		h = fp_field(h, "spec", pk_get(obj, "spec"));
		h = fp_field(h, "metadata.annotations", pk_get(obj, "metadata.annotations"));
		return fp_field(h, "metadata.ownerReferences",
				pk_get(obj, "metadata.ownerReferences"));
	case PK_KIND_PERSISTENT_VOLUME:
		h = fp_field(h, "spec", pk_get(obj, "spec"));
		return fp_field(h, "status.phase", pk_get(obj, "status.phase"));
	case PK_KIND_STORAGE_CLASS:
		h = fp_field(h, "provisioner", pk_get(obj, "provisioner"));
		h = fp_field(h, "volumeBindingMode", pk_get(obj, "volumeBindingMode"));
		return fp_field(h, "allowedTopologies", pk_get(obj, "allowedTopologies"));
	case PK_KIND_POD: /* the spec, and the phase the status controllers count */
		h = fp_field(h, "spec", pk_get(obj, "spec"));
		h = fp_field(h, "status.phase", pk_get(obj, "status.phase"));
		h = fp_field(h, "status.resourceClaimStatuses",
			     pk_get(obj, "status.resourceClaimStatuses"));
		return fp_condition(h, obj, "Ready");
	default: /* Workload, Job, JobSet: the spec */
		return fp_field(h, "spec", pk_get(obj, "spec"));
	}
}

static uint64_t object_rv(const json_t *obj)
{
	const char *s = pk_get_string(obj, "metadata.resourceVersion");

	return s ? strtoull(s, NULL, 10) : 0;
}

int ap_cache_note(struct ap_cache *c, enum pk_kind kind, const json_t *obj)
{
	char key[AP_KEY_MAX];

	if (!c || !obj)
		return -EINVAL;
	object_key(key, sizeof(key), kind, obj);
	return cache_put(c, key, object_rv(obj), ap_fingerprint(kind, obj));
}

void ap_cache_forget(struct ap_cache *c, enum pk_kind kind, const char *ns, const char *name)
{
	char key[AP_KEY_MAX];

	if (!c)
		return;
	cache_key(key, sizeof(key), kind, ns, name);
	cache_del(c, key);
}

uint64_t ap_cache_rv(const struct ap_cache *c, enum pk_kind kind, const char *ns, const char *name)
{
	char key[AP_KEY_MAX];
	const union ap_seen *s;

	if (!c || !name)
		return 0;
	cache_key(key, sizeof(key), kind, ns, name);
	s = pk_map_get(&c->map, key);
	return s ? s->rv : 0;
}

static bool sched_kind(enum pk_kind k)
{
	return k == PK_KIND_NODE || k == PK_KIND_POD || k == PK_KIND_POD_GROUP ||
	       k == PK_KIND_COMPOSITE_POD_GROUP || k == PK_KIND_PRIORITY_CLASS ||
	       k == PK_KIND_DEVICE_CLASS || k == PK_KIND_RESOURCE_SLICE ||
	       k == PK_KIND_RESOURCE_CLAIM || k == PK_KIND_PERSISTENT_VOLUME_CLAIM ||
	       k == PK_KIND_PERSISTENT_VOLUME || k == PK_KIND_STORAGE_CLASS ||
	       k == PK_KIND_CSI_NODE;
}

static bool owner_kind(enum pk_kind k)
{
	return k == PK_KIND_JOB || k == PK_KIND_JOBSET || k == PK_KIND_LEADER_WORKER_SET ||
	       k == PK_KIND_WORKLOAD;
}

int ap_classify(struct ap_cache *c, enum pk_event_type type, enum pk_kind k, const json_t *obj,
		uint64_t rv, struct ap_decision *ret)
{
	struct ap_decision d = {.verdict = AP_SKIP};
	const union ap_seen *seen;
	char key[AP_KEY_MAX];
	uint64_t fp;

	if (!c || !obj || !ret)
		return -EINVAL;
	object_key(key, sizeof(key), k, obj);
	seen = pk_map_get(&c->map, key);
	if (type == PK_EVENT_DELETED) {
		cache_del(c, key);
		d.verdict = sched_kind(k) ? AP_REMOVE : AP_SKIP;
		d.gc = owner_kind(k) || k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP;
		/* what a Job or JobSet made, gone (a pod deleted, evicted, drained; a Job,
		 * a group, a Workload): its controller makes it again */
		d.owner = k == PK_KIND_POD || owner_kind(k) || k == PK_KIND_POD_GROUP ||
			  k == PK_KIND_COMPOSITE_POD_GROUP;
		*ret = d;
		return 0;
	}
	if (seen && rv <= seen->rv) {
		*ret = d; /* a replay, or the echo of the appliance's own write */
		return 0;
	}
	fp = ap_fingerprint(k, obj);
	bool changed = !seen || seen->fp != fp;

	if (cache_put(c, key, rv, fp) < 0)
		return -ENOMEM;
	d.heartbeat = k == PK_KIND_NODE;
	if (changed && sched_kind(k))
		d.verdict = AP_FEED;
	if (changed && (k == PK_KIND_JOB || k == PK_KIND_JOBSET || k == PK_KIND_LEADER_WORKER_SET))
		d.reconcile = true;
	/* a pod that ran to its end holds nothing more (as kube-scheduler drops it) */
	if (changed && k == PK_KIND_POD && wb_pod_state(obj) != WB_POD_ACTIVE &&
	    wb_pod_state(obj) != WB_POD_DELETING)
		d.verdict = AP_REMOVE;
	d.owner = changed && k == PK_KIND_POD;
	*ret = d;
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fingerprint.c — one fingerprint of what scheduling reads of an object.
 *
 * An update that changes nothing the scheduler reads (a status the
 * appliance wrote itself, a node agent's periodic publish of the same
 * labels) must not reschedule anything.  Two readers ask: the scheduler,
 * which skips a pod whose fingerprint did not change (pk_sched_add_pods),
 * and the scheduling loop, which keeps an event from the scheduler and its
 * controllers when the object's fingerprint did not change
 * (kernel/appliance/events.c).  Both use this table, one row per kind:
 * the fields the scheduler reads, and marked "loop" the fields only the
 * loop's controllers read besides (a pod's phase, its Ready condition, an
 * object's uid), so the loop's fields include the scheduler's by
 * construction and the two can never disagree.
 *
 * The hash is FNV-1a over a walk of each field's value without writing it
 * out: a type tag, then a scalar's bytes (a string's with a terminator), an
 * array's elements in order, or, for an object, the sum of its members'
 * mixed hashes (key and value), so member order does not matter and
 * nothing is sorted or allocated.  An absent field hashes as a mark of
 * its own; a condition contributes its status.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/hash.h"
#include "kernel/sched/sched.h"

#define FP_DEPTH_MAX 64 /* deeper values hash by type only (stored objects are shallower) */
#define FP_FIELDS_MAX 8

struct fp_field {
	const char *path;      /* a dotted path, or NULL with condition */
	const char *condition; /* a status.conditions type: its status */
	bool loop;	       /* read by the loop's controllers, not the scheduler */
};

struct fp_kind {
	enum pk_kind kind;
	struct fp_field f[FP_FIELDS_MAX];
};

/* Every kind: what a selector matches, deletion, and (for the loop) a new object of the name. */
static const struct fp_field common[] = {
    {"metadata.labels"},
    {"metadata.deletionTimestamp"},
    {"metadata.uid", .loop = true},
};

static const struct fp_kind kinds[] = {
    {PK_KIND_NODE, {{"spec"}, {"status.allocatable"}}},
    /* the spec, the times the queue orders by, the claims made for it; the
     * phase the status controllers count */
    {PK_KIND_POD,
     {{"spec"},
      {"metadata.creationTimestamp"},
      {"status.resourceClaimStatuses"},
      {"status.phase", .loop = true},
      {NULL, "Ready", true}}},
    /* the spec, the condition, the claims made for the group */
    {PK_KIND_POD_GROUP,
     {{"spec"}, {"status.resourceClaimStatuses"}, {NULL, "PodGroupInitiallyScheduled"}}},
    {PK_KIND_COMPOSITE_POD_GROUP, {{"spec"}, {NULL, "CompositePodGroupInitiallyScheduled"}}},
    /* the requests, the allocation and who reserves it */
    {PK_KIND_RESOURCE_CLAIM, {{"spec"}, {"status.allocation"}, {"status.reservedFor"}}},
    {PK_KIND_PRIORITY_CLASS, {{"value"}, {"globalDefault"}}},
    /* the spec, the selected node, the owner */
    {PK_KIND_PERSISTENT_VOLUME_CLAIM,
     {{"spec"}, {"metadata.annotations"}, {"metadata.ownerReferences"}}},
    {PK_KIND_PERSISTENT_VOLUME, {{"spec"}, {"status.phase"}}},
    {PK_KIND_STORAGE_CLASS, {{"provisioner"}, {"volumeBindingMode"}, {"allowedTopologies"}}},
};

/* Any other kind (Workload, Job, JobSet, DeviceClass, ...): the spec. */
static const struct fp_kind other = {PK_KIND_UNKNOWN, {{"spec"}}};

/* splitmix64's finaliser: spreads a member's hash before members are summed. */
static uint64_t fp_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t fp_bytes(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = pk_fnv1a_byte(h, ((const unsigned char *)p)[i]);
	return h;
}

/*
 * A string and a terminator no UTF-8 text holds (0xff): "a","bc" and
 * "ab","c" differ.
 */
static uint64_t fp_string(uint64_t h, const char *s, size_t n)
{
	return pk_fnv1a_byte(fp_bytes(h, s, n), 0xff);
}

static uint64_t fp_json(uint64_t h, const json_t *v, int depth)
{
	const char *k;
	json_t *m;
	size_t i;

	h = pk_fnv1a_byte(h, (unsigned char)json_typeof(v));
	if (depth > FP_DEPTH_MAX)
		return h;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		uint64_t sum = 0;

		json_object_foreach((json_t *)v, k, m)
		{
			uint64_t e = fp_string(PK_FNV1A_INIT, k, strlen(k));

			sum += fp_mix(fp_json(e, m, depth + 1));
		}
		return fp_bytes(h, &sum, sizeof(sum));
	}
	case JSON_ARRAY:
		json_array_foreach(v, i, m) h = fp_json(h, m, depth + 1);
		return pk_fnv1a_byte(h, ']');
	case JSON_STRING:
		return fp_string(h, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: {
		json_int_t x = json_integer_value(v);

		return fp_bytes(h, &x, sizeof(x));
	}
	case JSON_REAL: {
		double x = json_real_value(v);

		return fp_bytes(h, &x, sizeof(x));
	}
	default: /* true, false, null: the tag says it all */
		return h;
	}
}

/* One field: its value or a mark for "absent", then a separator (a kind's fields are fixed). */
static uint64_t fp_field(uint64_t h, const struct fp_field *f, const json_t *obj)
{
	json_t *v;

	if (f->path) {
		v = pk_get(obj, f->path);
	} else {
		json_t *c = pk_condition_get(obj, f->condition);

		v = c ? json_object_get(c, "status") : NULL;
	}
	return pk_fnv1a_byte(v ? fp_json(h, v, 0) : pk_fnv1a_byte(h, '-'), '|');
}

static const struct fp_kind *kind_row(enum pk_kind kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return &other;
}

uint64_t pk_sched_fingerprint(const struct pk_type *type, const json_t *obj, bool loop)
{
	enum pk_kind kind = type ? type->pk : PK_KIND_UNKNOWN;
	const struct fp_kind *row = kind_row(kind);
	uint64_t h = pk_fnv1a_byte(PK_FNV1A_INIT, (unsigned char)kind);

	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (loop || !common[i].loop)
			h = fp_field(h, &common[i], obj);
	for (size_t i = 0; i < FP_FIELDS_MAX && (row->f[i].path || row->f[i].condition); i++)
		if (loop || !row->f[i].loop)
			h = fp_field(h, &row->f[i], obj);
	return h;
}

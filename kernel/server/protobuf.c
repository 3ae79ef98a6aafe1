/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protobuf.c — the few Kubernetes protobuf request bodies kubectl insists on.
 *
 * kubectl's typed generators (`kubectl create namespace`, `kubectl create
 * priorityclass`) send application/vnd.kubernetes.protobuf with no JSON
 * fallback.  This reader decodes the envelope ("k8s\0" + runtime.Unknown
 * {typeMeta, raw}) and, for Namespace and PriorityClass only, the object in
 * raw: ObjectMeta (name, generateName, namespace, resourceVersion, labels,
 * annotations, finalizers) and the kind's own scalar fields, into the JSON
 * tree every other body becomes.  Every read is bounds-checked; unknown fields
 * are skipped by wire type; anything else is -EPROTONOSUPPORT (HTTP 415).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel/server/server-internal.h"

struct pb {
	const uint8_t *p, *end;
};

struct pb_field {
	unsigned num, wire;
	uint64_t varint; /* wire 0 */
	struct pb sub;	 /* wire 2: the bytes */
};

static int pb_varint(struct pb *b, uint64_t *ret)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return -EINVAL;
		uint8_t c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EINVAL;
}

/* Next field; 1 when one was read, 0 at the end, -EINVAL when malformed. */
static int pb_next(struct pb *b, struct pb_field *f)
{
	if (b->p >= b->end)
		return 0;
	uint64_t key, n;
	if (pb_varint(b, &key) < 0 || key >> 3 == 0 || key >> 3 > 0xffff)
		return -EINVAL;
	f->num = (unsigned)(key >> 3);
	f->wire = (unsigned)(key & 7);
	switch (f->wire) {
	case 0:
		return pb_varint(b, &f->varint) < 0 ? -EINVAL : 1;
	case 1:
	case 5:
		n = f->wire == 1 ? 8 : 4;
		if ((uint64_t)(b->end - b->p) < n)
			return -EINVAL;
		b->p += n;
		return 1;
	case 2:
		if (pb_varint(b, &n) < 0 || n > (uint64_t)(b->end - b->p))
			return -EINVAL;
		f->sub = (struct pb){b->p, b->p + n};
		b->p += n;
		return 1;
	default:
		return -EINVAL;
	}
}

static json_t *pb_string(const struct pb_field *f)
{
	return f->wire == 2 ? json_stringn((const char *)f->sub.p, (size_t)(f->sub.end - f->sub.p))
			    : NULL;
}

static int set_string(json_t *obj, const char *key, const struct pb_field *f)
{
	json_t *s = pb_string(f);
	if (!s)
		return -EINVAL; /* wrong wire type or not UTF-8 */
	json_object_set_new(obj, key, s);
	return 0;
}

/* map<string,string> entry: {1: key, 2: value}. */
static int map_entry(json_t *map, struct pb entry)
{
	struct pb_field f = {0};
	json_t *k = NULL, *v = NULL;
	int r;
	while ((r = pb_next(&entry, &f)) > 0) {
		if (f.num == 1) {
			json_decref(k);
			k = pb_string(&f);
		} else if (f.num == 2) {
			json_decref(v);
			v = pb_string(&f);
		}
	}
	if (r == 0 && k)
		json_object_set_new(map, json_string_value(k), v ? v : json_string(""));
	else
		json_decref(v);
	json_decref(k);
	return r < 0 || !k ? -EINVAL : 0;
}

static int object_meta(struct pb b, json_t **ret)
{
	json_t *m = json_object(), *labels = json_object(), *ann = json_object(),
	       *fins = json_array();
	struct pb_field f = {0};
	int r;
	while ((r = pb_next(&b, &f)) > 0) {
		switch (f.num) {
		case 1:
			r = set_string(m, "name", &f);
			break;
		case 2:
			r = set_string(m, "generateName", &f);
			break;
		case 3:
			r = set_string(m, "namespace", &f);
			break;
		case 6:
			r = set_string(m, "resourceVersion", &f);
			break;
		case 11:
			r = f.wire == 2 ? map_entry(labels, f.sub) : -EINVAL;
			break;
		case 12:
			r = f.wire == 2 ? map_entry(ann, f.sub) : -EINVAL;
			break;
		case 14:
			r = json_array_append_new(fins, pb_string(&f));
			break;
		default:
			r = 0; /* uid, timestamps, managedFields: the server sets them */
		}
		if (r < 0)
			break;
	}
	if (json_object_size(labels))
		json_object_set(m, "labels", labels);
	if (json_object_size(ann))
		json_object_set(m, "annotations", ann);
	if (json_array_size(fins))
		json_object_set(m, "finalizers", fins);
	json_decref(labels);
	json_decref(ann);
	json_decref(fins);
	if (r < 0) {
		json_decref(m);
		return -EINVAL;
	}
	*ret = m;
	return 0;
}

/* Namespace {1 metadata, 2 spec, 3 status} or PriorityClass {1 metadata,
 * 2 value, 3 globalDefault, 4 description, 5 preemptionPolicy}. */
static int decode_raw(const char *kind, struct pb b, json_t *obj)
{
	bool pc = pk_kind_from_string(kind) == PK_KIND_PRIORITY_CLASS;
	struct pb_field f = {0};
	int r;
	while ((r = pb_next(&b, &f)) > 0) {
		json_t *meta = NULL;
		if (f.num == 1 && f.wire == 2) {
			r = object_meta(f.sub, &meta);
			if (r == 0)
				json_object_set_new(obj, "metadata", meta);
		} else if (pc && f.num == 2 && f.wire == 0) {
			json_object_set_new(obj, "value", json_integer((int32_t)f.varint));
		} else if (pc && f.num == 3 && f.wire == 0) {
			json_object_set_new(obj, "globalDefault", json_boolean(f.varint != 0));
		} else if (pc && f.num == 4) {
			r = set_string(obj, "description", &f);
		} else if (pc && f.num == 5) {
			r = set_string(obj, "preemptionPolicy", &f);
		}
		if (r < 0)
			return -EINVAL;
	}
	return r;
}

int pk_protobuf_decode(const char *buf, size_t len, json_t **ret, char *err, size_t errlen)
{
	static const char magic[4] = {'k', '8', 's', 0};
	if (len < 4 || memcmp(buf, magic, 4) != 0) {
		snprintf(err, errlen, "not a Kubernetes protobuf envelope");
		return -EINVAL;
	}
	struct pb b = {(const uint8_t *)buf + 4, (const uint8_t *)buf + len};
	struct pb_field f = {0};
	struct pb raw = {NULL, NULL};
	json_t *obj = json_object();
	int r;
	while ((r = pb_next(&b, &f)) > 0) {
		if (f.num == 1 && f.wire == 2) { /* TypeMeta */
			struct pb tm = f.sub;
			struct pb_field g;
			while ((r = pb_next(&tm, &g)) > 0 && r >= 0) {
				if (g.num == 1 && set_string(obj, "apiVersion", &g) < 0)
					r = -EINVAL;
				if (g.num == 2 && set_string(obj, "kind", &g) < 0)
					r = -EINVAL;
				if (r < 0)
					break;
			}
		} else if (f.num == 2 && f.wire == 2) {
			raw = f.sub;
		}
		if (r < 0)
			break;
	}
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (r == 0 && kind && strcmp(kind, "Namespace") != 0 &&
	    strcmp(kind, "PriorityClass") != 0) {
		snprintf(err, errlen,
			 "protobuf bodies are read for Namespace and PriorityClass only, "
			 "not %s; send JSON or YAML",
			 kind);
		json_decref(obj);
		return -EPROTONOSUPPORT;
	}
	if (r == 0 && (!kind || !raw.p || decode_raw(kind, raw, obj) < 0))
		r = -EINVAL;
	if (r < 0) {
		snprintf(err, errlen, "malformed protobuf body");
		json_decref(obj);
		return -EINVAL;
	}
	*ret = obj;
	return 0;
}

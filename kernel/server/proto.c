/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto.c — Kubernetes protobuf bodies (application/vnd.kubernetes.protobuf)
 * as the JSON trees the rest of the server works on.
 *
 * The messages are kernel/server/proto/NAME.proto, compiled by protoc-c at build
 * time; libprotobuf-c reads the wire.  A body is the envelope "k8s\0" and a
 * runtime.Unknown {typeMeta {apiVersion, kind}, raw}; the kind's row (or,
 * for the few messages that are no kind, the table below) names the
 * message raw holds.  Before libprotobuf-c unpacks it, one bounded
 * walk over the wire checks that messages nest at most PK_MAX_DEPTH deep (the
 * library recurses without a limit).  The unpacked message is then converted
 * by one walk over its descriptors: field names are the JSON names, and the
 * few apimachinery types with their own JSON form (Quantity, IntOrString,
 * Time, MicroTime, RawExtension, FieldsV1, map entries) are recognised by
 * their full message name.  Go writes every non-pointer field, so an empty
 * string and a zero Time are absent, as Go's JSON encoder omits them (but for
 * the few pointer strings whose "" is a value: empty_is_value()); zero
 * numbers and false stay, since a pointer field's zero means something.
 * Embedded Go structs (a Volume's VolumeSource, a PersistentVolumeSpec's
 * PersistentVolumeSource, a DRA config's DeviceConfiguration, ...) are
 * inlined.  A field number the messages do not know is an error naming the
 * path: a body is never silently shortened.  Every served kind has its
 * message.  JobSet's (jobset.proto), LeaderWorkerSet's (lws.proto) and the Kueue kinds'
 * (kueue.proto; kueue_v1beta1.proto for the v1beta1 they are also served in) are
 * schema-only: they are custom resources
 * upstream, served as JSON only, so a protobuf body of one is refused
 * (415, as kube-apiserver answers for custom resources) while field
 * validation and OpenAPI read its message as a CRD's structural schema.
 *
 * pk_srv_pb_shape() tells the JSON form of any field; field validation and the
 * OpenAPI documents walk the same descriptors with it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/server/server-internal.h"

/* gnu11 predefines "linux", a field name of ContainerUser */
#undef linux
#include "authentication.pb-c.h"
#include "authorization.pb-c.h"
#include "core.pb-c.h"
#include "meta.pb-c.h"
#include "policy.pb-c.h"
#include "runtime.pb-c.h"

#define META "k8s.io.apimachinery.pkg.apis.meta.v1."

/*
 * A served kind's message is found by its row: Kubernetes' groups are the
 * package k8s.io.api.GROUP.VERSION (the core group "core"; a group's first
 * label: scheduling.k8s.io is "scheduling"), the x-k8s.io custom resources
 * io.x_k8s.GROUP.VERSION, and the message is named as the kind.  Every
 * message of kernel/server/proto/ is in pk_srv_pb_messages[], generated from
 * the headers at build time, so a kind's message is its .proto only.  The
 * custom resources' messages are schema only.
 */
extern const ProtobufCMessageDescriptor *const pk_srv_pb_messages[];

static bool custom_group(const char *group)
{
	size_t n = strlen(group), s = strlen(".x-k8s.io");

	return n > s && strcmp(group + n - s, ".x-k8s.io") == 0;
}

static const ProtobufCMessageDescriptor *row_message(const struct pk_type *t)
{
	const char *g = *t->group ? t->group : "core";
	char name[256];

	snprintf(name, sizeof(name), "%s.%.*s.%s.%s",
		 custom_group(t->group) ? "io.x_k8s" : "k8s.io.api", (int)strcspn(g, "."), g,
		 t->version, t->kind);
	for (const ProtobufCMessageDescriptor *const *m = pk_srv_pb_messages; *m; m++)
		if (strcmp((*m)->name, name) == 0)
			return *m;
	return NULL;
}

#define PB_ROWS_MAX 64
static struct pk_pb_kind rows[PB_ROWS_MAX + 1];
static pthread_once_t rows_once = PTHREAD_ONCE_INIT;

static void rows_init(void)
{
	const struct pk_type *t;
	size_t n = 0;

	for (size_t i = 0; n < PB_ROWS_MAX && (t = pk_type_served(i)); i++) {
		const ProtobufCMessageDescriptor *d = row_message(t);

		if (d)
			rows[n++] =
			    (struct pk_pb_kind){t->group, t->kind, d, custom_group(t->group),
						t->conversion ? t->version : NULL};
	}
}

/* The messages a body may carry besides the served kinds'; group "*": any group (the
 * options kinds every API group registers). */
static const struct pk_pb_kind kinds[] = {
    {"", "Binding", &k8s__io__api__core__v1__binding__descriptor},
    {"policy", "Eviction", &k8s__io__api__policy__v1__eviction__descriptor},
    {"authorization.k8s.io", "SelfSubjectAccessReview",
     &k8s__io__api__authorization__v1__self_subject_access_review__descriptor},
    {"authorization.k8s.io", "SelfSubjectRulesReview",
     &k8s__io__api__authorization__v1__self_subject_rules_review__descriptor},
    {"authentication.k8s.io", "SelfSubjectReview",
     &k8s__io__api__authentication__v1__self_subject_review__descriptor},
    {"*", "DeleteOptions", &k8s__io__apimachinery__pkg__apis__meta__v1__delete_options__descriptor},
    {"*", "Status", &k8s__io__apimachinery__pkg__apis__meta__v1__status__descriptor},
    {NULL, NULL, NULL},
};

static const struct pk_pb_kind *pb_find(const struct pk_pb_kind *k, const char *group,
					const char *version, const char *kind)
{
	for (; k->kind; k++)
		if (strcmp(k->kind, kind) == 0 &&
		    (strcmp(k->group, group) == 0 || strcmp(k->group, "*") == 0) &&
		    (version ? k->version && strcmp(k->version, version) == 0 : !k->version))
			return k;
	return NULL;
}

/* version NULL: the stored version's message. */
static const struct pk_pb_kind *pb_kind(const char *group, const char *version, const char *kind)
{
	const struct pk_pb_kind *k;

	if (!group || !kind)
		return NULL;
	pthread_once(&rows_once, rows_init);
	k = pb_find(rows, group, version, kind);
	return k ? k : pb_find(kinds, group, version, kind);
}

const struct pk_pb_kind *pk_srv_pb_kind(const char *group, const char *kind)
{
	return pb_kind(group, NULL, kind);
}

const struct pk_pb_kind *pk_srv_pb_kind_of(const struct pk_type *t)
{
	return t ? pb_kind(t->group, t->conversion ? t->version : NULL, t->kind) : NULL;
}

/* ---- shapes ---------------------------------------------------------------- */
static bool is_map_entry(const ProtobufCMessageDescriptor *d)
{
	size_t n = strlen(d->name);
	return n > 5 && strcmp(d->name + n - 5, "Entry") == 0 && d->n_fields == 2 &&
	       strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0;
}

static enum pk_pb_shape message_shape(const ProtobufCMessageDescriptor *d)
{
	static const struct {
		const char *name;
		enum pk_pb_shape shape;
	} special[] = {
	    {"k8s.io.apimachinery.pkg.api.resource.Quantity", PK_PB_QUANTITY},
	    {"k8s.io.apimachinery.pkg.util.intstr.IntOrString", PK_PB_INT_OR_STRING},
	    {META "Time", PK_PB_TIME},
	    {META "MicroTime", PK_PB_MICROTIME},
	    {META "FieldsV1", PK_PB_RAW},
	    {"k8s.io.apimachinery.pkg.runtime.RawExtension", PK_PB_RAW},
	};
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (strcmp(d->name, special[i].name) == 0)
			return special[i].shape;
	return is_map_entry(d) ? PK_PB_MAP : PK_PB_OBJECT;
}

enum pk_pb_shape pk_srv_pb_shape(const ProtobufCFieldDescriptor *f,
				 const ProtobufCMessageDescriptor **ret_msg)
{
	*ret_msg = NULL;
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		return PK_PB_STRING;
	case PROTOBUF_C_TYPE_BOOL:
		return PK_PB_BOOL;
	case PROTOBUF_C_TYPE_BYTES:
		return PK_PB_BYTES;
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		return PK_PB_NUMBER;
	case PROTOBUF_C_TYPE_MESSAGE:
		*ret_msg = f->descriptor;
		return message_shape(f->descriptor);
	default:
		return PK_PB_INT;
	}
}

json_t *pk_srv_pb_scalar_schema(const ProtobufCFieldDescriptor *f, enum pk_pb_shape shape)
{
	switch (shape) {
	case PK_PB_STRING:
		return json_pack("{s:s}", "type", "string");
	case PK_PB_INT:
		return json_pack("{s:s,s:s}", "type", "integer", "format",
				 f->type == PROTOBUF_C_TYPE_INT32 ? "int32" : "int64");
	case PK_PB_BOOL:
		return json_pack("{s:s}", "type", "boolean");
	case PK_PB_NUMBER:
		return json_pack("{s:s,s:s}", "type", "number", "format", "double");
	case PK_PB_BYTES:
		return json_pack("{s:s,s:s}", "type", "string", "format", "byte");
	case PK_PB_QUANTITY:
	case PK_PB_INT_OR_STRING:
		return json_pack("{s:b,s:[{s:s},{s:s}]}", "x-kubernetes-int-or-string", 1, "anyOf",
				 "type", "integer", "type", "string");
	case PK_PB_TIME:
	case PK_PB_MICROTIME:
		return json_pack("{s:s,s:s}", "type", "string", "format", "date-time");
	case PK_PB_RAW:
	case PK_PB_OBJECT:
	case PK_PB_MAP:
		break;
	}
	return NULL;
}

/* Go structs embedded in another: their fields are the parent's in JSON. */
bool pk_srv_pb_inline(const ProtobufCFieldDescriptor *f)
{
	static const char *const embedded[][2] = {
	    {"volumeSource", "VolumeSource"},
	    {"persistentVolumeSource", "PersistentVolumeSource"},
	    {"deviceConfiguration", "DeviceConfiguration"},
	    {"localObjectReference", "LocalObjectReference"},
	    {"handler", "ProbeHandler"},
	    {"ephemeralContainerCommon", "EphemeralContainerCommon"},
	};
	if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label == PROTOBUF_C_LABEL_REPEATED)
		return false;
	const ProtobufCMessageDescriptor *d = f->descriptor;
	for (size_t i = 0; i < sizeof(embedded) / sizeof(embedded[0]); i++)
		if (strcmp(f->name, embedded[i][0]) == 0 &&
		    strcmp(d->short_name, embedded[i][1]) == 0)
			return true;
	return false;
}

/* ---- the wire's depth, before libprotobuf-c recurses into it ------------------- */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *ret)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * What unpacking and converting one field occurrence holds, estimated from the
 * wire alone: libprotobuf-c's struct for a message, a pointer slot when the
 * field repeats, the bytes of a string, and the JSON node the conversion
 * builds (a jansson object with its table, a string, a number).  An empty
 * message is two bytes on the wire but hundreds once decoded: this is what
 * the walk bounds.
 */
#define PB_JSON_OBJECT 256
#define PB_JSON_SCALAR 64

static size_t field_cost(const ProtobufCFieldDescriptor *f, unsigned wire, uint64_t n)
{
	size_t slot = f && f->label == PROTOBUF_C_LABEL_REPEATED ? sizeof(void *) : 0;
	if (!f) /* unknown: libprotobuf-c keeps a copy */
		return 32 + (wire == 2 ? (size_t)n : 8);
	if (wire == 2 && f->type == PROTOBUF_C_TYPE_MESSAGE)
		return ((const ProtobufCMessageDescriptor *)f->descriptor)->sizeof_message + slot +
		       PB_JSON_OBJECT;
	if (wire == 2 && (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES))
		return (size_t)n * 2 + 1 + slot + PB_JSON_SCALAR;
	if (wire == 2) /* packed scalars: up to one element a byte */
		return (size_t)n * (8 + PB_JSON_SCALAR);
	return 8 + PB_JSON_SCALAR;
}

/* One walk over a message's wire: the path of the field at hand, and what
 * decoding what was walked so far holds (-E2BIG past limit). */
struct wire_walk {
	char path[256];
	size_t cost, limit;
};

/* The length of the field at p (wire type wire), p moved past its header. */
static int wire_len(const uint8_t **p, const uint8_t *end, unsigned wire, uint64_t *ret)
{
	*ret = 0;
	switch (wire) {
	case 0:
		return varint(p, end, ret) < 0 ? -EINVAL : 1; /* 1: consumed already */
	case 1:
	case 5:
		*ret = wire == 1 ? 8 : 4;
		break;
	case 2:
		if (varint(p, end, ret) < 0)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return *ret > (uint64_t)(end - *p) ? -EINVAL : 0;
}

/*
 * The wire before libprotobuf-c reads it: nesting past PK_MAX_DEPTH is
 * -ELOOP; a string holding a NUL byte is -EILSEQ with its field path in
 * w->path (libprotobuf-c would hand on a C string cut at the NUL: an object
 * whose name is not what was sent, as JSON and YAML bodies cannot carry one);
 * decoding that would hold more than w->limit is -E2BIG, found before
 * anything is allocated.
 */
static int check_wire(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end,
		      int depth, struct wire_walk *w)
{
	if (depth > PK_MAX_DEPTH)
		return -ELOOP;
	while (p < end) {
		uint64_t key, n = 0;
		if (varint(&p, end, &key) < 0)
			return -EINVAL;
		unsigned wire = (unsigned)(key & 7);
		int lr = wire_len(&p, end, wire, &n);
		if (lr < 0)
			return lr;
		const ProtobufCFieldDescriptor *f =
		    key >> 3 <= UINT32_MAX
			? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3))
			: NULL;
		w->cost += field_cost(f, wire, n);
		if (w->cost > w->limit)
			return -E2BIG;
		if (lr == 1)
			continue;
		size_t at = strlen(w->path);
		if (wire == 2 && f &&
		    (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING))
			snprintf(w->path + at, sizeof(w->path) - at, "%s%s", at ? "." : "",
				 f->name);
		if (wire == 2 && f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			int r = check_wire(f->descriptor, p, p + n, depth + 1, w);
			if (r < 0)
				return r;
		} else if (wire == 2 && f && f->type == PROTOBUF_C_TYPE_STRING && memchr(p, 0, n)) {
			return -EILSEQ;
		}
		w->path[at] = '\0';
		p += n;
	}
	return 0;
}

/* check_wire() of a whole message with its error in err; 0, -E2BIG or -EINVAL. */
static int check_message(const char *kind, const ProtobufCMessageDescriptor *d, const uint8_t *p,
			 size_t len, struct wire_walk *w, char *err, size_t errlen)
{
	w->path[0] = '\0';
	w->cost += d->sizeof_message + PB_JSON_OBJECT;
	int r = w->cost > w->limit ? -E2BIG : check_wire(d, p, p + len, 1, w);

	if (r == -ELOOP)
		snprintf(err, errlen, "%s: nested deeper than %d messages", kind, PK_MAX_DEPTH);
	else if (r == -EILSEQ)
		snprintf(err, errlen, "%s: %s: Invalid value: a string holds a NUL character", kind,
			 w->path);
	else if (r == -E2BIG)
		snprintf(err, errlen,
			 "%s: decoding would take more than %zu bytes (%d times the body, plus "
			 "%d KiB): too many elements",
			 kind, w->limit, PK_SRV_PB_DECODE_FACTOR, PK_SRV_PB_DECODE_FLOOR >> 10);
	else if (r < 0)
		snprintf(err, errlen, "malformed %s message", kind);
	return r == -E2BIG ? r : r < 0 ? -EINVAL : 0;
}

/* ---- message -> JSON ------------------------------------------------------------ */
struct conv {
	char path[512];
	char *err;
	size_t errlen;
};

static int conv_fail(struct conv *c, const char *fmt, const char *what)
{
	snprintf(c->err, c->errlen, fmt, *c->path ? c->path : "(top)", what);
	return -EINVAL;
}

static json_t *time_json(const ProtobufCMessage *m, bool micro)
{
	const K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__Time *t = (const void *)m;
	if (!t->seconds && !t->nanos)
		return NULL; /* Go's zero time: null, left out */
	time_t s = (time_t)t->seconds;
	struct tm tm;
	char buf[64], frac[16] = "";
	if (!gmtime_r(&s, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm))
		return NULL;
	if (micro)
		snprintf(frac, sizeof(frac), ".%06d", (int)(t->nanos / 1000));
	return json_sprintf("%s%sZ", buf, frac);
}

static json_t *base64_json(const ProtobufCBinaryData *b)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(b->len / 3 * 4 + 5), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < b->len; i += 3) {
		uint32_t v = (uint32_t)b->data[i] << 16;
		if (i + 1 < b->len)
			v |= (uint32_t)b->data[i + 1] << 8;
		if (i + 2 < b->len)
			v |= b->data[i + 2];
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < b->len ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < b->len ? tab[v & 63] : '=';
	}
	*o = '\0';
	json_t *s = json_string(out);
	free(out);
	return s;
}

/* RawExtension or FieldsV1: JSON bytes, kept as the value they spell. */
static int raw_json(struct conv *c, const ProtobufCMessage *m, json_t **ret)
{
	const ProtobufCBinaryData *raw =
	    (const void *)((const char *)m + m->descriptor->fields[0].offset);
	json_error_t je;
	*ret = NULL;
	if (!raw->len)
		return 0;
	if (raw->len > PK_SERVER_MAX_BODY)
		return conv_fail(c, "%s: %s", "embedded object too large");
	*ret = json_loadb((const char *)raw->data, raw->len,
			  JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	return *ret ? 0 : conv_fail(c, "%s: %s", "embedded object is not JSON");
}

static int message_json(struct conv *c, const ProtobufCMessage *m, int depth, json_t **ret);

static json_t *zero_json(enum pk_pb_shape s)
{
	switch (s) {
	case PK_PB_QUANTITY:
		return json_string("0");
	case PK_PB_INT_OR_STRING:
		return json_integer(0);
	case PK_PB_OBJECT:
		return json_object();
	default:
		return NULL;
	}
}

/* One value of shape s stored at member; *ret NULL when it is to be left out. */
static int value_json(struct conv *c, const ProtobufCFieldDescriptor *f, const void *member,
		      int depth, json_t **ret)
{
	const ProtobufCMessageDescriptor *md;
	enum pk_pb_shape s = pk_srv_pb_shape(f, &md);
	const ProtobufCMessage *m = md ? *(ProtobufCMessage *const *)member : NULL;
	*ret = NULL;
	if (md && !m) { /* a map entry without its value: Go's zero value */
		*ret = zero_json(s);
		return 0;
	}
	switch (s) {
	case PK_PB_STRING:
		*ret = json_string(*(char *const *)member);
		return *ret ? 0 : conv_fail(c, "%s: %s", "a string is not valid UTF-8");
	case PK_PB_BOOL:
		*ret = json_boolean(*(const protobuf_c_boolean *)member);
		return 0;
	case PK_PB_BYTES:
		*ret = base64_json(member);
		return 0;
	case PK_PB_NUMBER:
		*ret = json_real(f->type == PROTOBUF_C_TYPE_FLOAT ? *(const float *)member
								  : *(const double *)member);
		return 0;
	case PK_PB_INT:
		switch (f->type) {
		case PROTOBUF_C_TYPE_INT64:
		case PROTOBUF_C_TYPE_SINT64:
		case PROTOBUF_C_TYPE_SFIXED64:
		case PROTOBUF_C_TYPE_UINT64:
		case PROTOBUF_C_TYPE_FIXED64:
			*ret = json_integer(*(const int64_t *)member);
			return 0;
		case PROTOBUF_C_TYPE_UINT32:
		case PROTOBUF_C_TYPE_FIXED32:
			*ret = json_integer(*(const uint32_t *)member);
			return 0;
		default:
			*ret = json_integer(*(const int32_t *)member);
			return 0;
		}
	case PK_PB_QUANTITY:
		*ret = json_string(
		    ((const K8s__Io__Apimachinery__Pkg__Api__Resource__Quantity *)m)->string
			?: "0");
		return 0;
	case PK_PB_INT_OR_STRING: {
		const K8s__Io__Apimachinery__Pkg__Util__Intstr__IntOrString *v = (const void *)m;
		*ret = v->type == 1 ? json_string(v->strval ?: "") : json_integer(v->intval);
		return *ret ? 0 : conv_fail(c, "%s: %s", "a string is not valid UTF-8");
	}
	case PK_PB_TIME:
	case PK_PB_MICROTIME:
		*ret = time_json(m, s == PK_PB_MICROTIME);
		return 0;
	case PK_PB_RAW:
		return raw_json(c, m, ret);
	case PK_PB_MAP:
	case PK_PB_OBJECT:
		return message_json(c, m, depth + 1, ret);
	}
	return -EINVAL;
}

/* A repeated field: a list, or an object for map entries. */
static int repeated_json(struct conv *c, const ProtobufCFieldDescriptor *f, const void *base,
			 size_t n, int depth, json_t **ret)
{
	const ProtobufCMessageDescriptor *md;
	bool map = pk_srv_pb_shape(f, &md) == PK_PB_MAP;
	size_t size =
	    f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING ? sizeof(void *)
	    : f->type == PROTOBUF_C_TYPE_BYTES ? sizeof(ProtobufCBinaryData)
	    : f->type == PROTOBUF_C_TYPE_INT64 || f->type == PROTOBUF_C_TYPE_SINT64 ||
		    f->type == PROTOBUF_C_TYPE_SFIXED64 || f->type == PROTOBUF_C_TYPE_UINT64 ||
		    f->type == PROTOBUF_C_TYPE_FIXED64 || f->type == PROTOBUF_C_TYPE_DOUBLE
		? 8
	    : f->type == PROTOBUF_C_TYPE_BOOL ? sizeof(protobuf_c_boolean)
					      : 4;
	json_t *out = map ? json_object() : json_array();
	for (size_t i = 0; i < n; i++) {
		const void *member = (const char *)base + i * size;
		json_t *v = NULL;
		if (map) {
			const ProtobufCMessage *e = *(ProtobufCMessage *const *)member;
			const char *key = *(char *const *)((const char *)e + md->fields[0].offset);
			int r = value_json(c, &md->fields[1],
					   (const char *)e + md->fields[1].offset, depth, &v);
			if (r < 0 || !key) {
				json_decref(v);
				json_decref(out);
				return r < 0 ? r : conv_fail(c, "%s: %s", "a map entry has no key");
			}
			if (json_object_set_new(out, key, v ? v : json_string("")) < 0) {
				json_decref(out);
				return conv_fail(c, "%s: %s", "a map key is not valid UTF-8");
			}
			continue;
		}
		int r = value_json(c, f, member, depth, &v);
		if (r < 0) {
			json_decref(out);
			return r;
		}
		json_array_append_new(out, v ? v : json_null());
	}
	*ret = out;
	return 0;
}

/*
 * Go pointer strings whose "" means something of its own: Go writes them only
 * when set, so an empty one on the wire was sent (a claim's storageClassName ""
 * asks for a volume of no class, never a provisioned one).
 */
static bool empty_is_value(const ProtobufCFieldDescriptor *f, const ProtobufCMessage *m)
{
	static const char *const kept[][2] = {
	    {"PersistentVolumeClaimSpec", "storageClassName"},
	    {"PersistentVolumeClaimSpec", "volumeAttributesClassName"},
	    {"DeviceAttribute", "string"},
	};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (strcmp(m->descriptor->short_name, kept[i][0]) == 0 &&
		    strcmp(f->name, kept[i][1]) == 0)
			return true;
	return false;
}

static bool present(const ProtobufCFieldDescriptor *f, const ProtobufCMessage *m)
{
	const char *member = (const char *)m + f->offset;
	if (f->type == PROTOBUF_C_TYPE_STRING) {
		const char *s = *(char *const *)member;
		/* Go writes "" for every unset non-pointer string */
		return s && (*s || empty_is_value(f, m));
	}
	if (f->type == PROTOBUF_C_TYPE_MESSAGE)
		return *(void *const *)member != NULL;
	return *(const protobuf_c_boolean *)((const char *)m + f->quantifier_offset);
}

static int message_json(struct conv *c, const ProtobufCMessage *m, int depth, json_t **ret)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	if (depth > PK_MAX_DEPTH)
		return conv_fail(c, "%s: %s", "nested too deeply");
	if (m->n_unknown_fields) {
		char what[96];
		snprintf(what, sizeof(what), "field number %u is not a field of %s",
			 m->unknown_fields[0].tag, d->short_name);
		return conv_fail(c, "%s: %s", what);
	}
	json_t *out = json_object();
	size_t plen = strlen(c->path);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *member = (const char *)m + f->offset;
		json_t *v = NULL;
		int r = 0;
		snprintf(c->path + plen, sizeof(c->path) - plen, "%s%s", plen ? "." : "", f->name);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
			if (n)
				r = repeated_json(c, f, *(void *const *)member, n, depth, &v);
		} else if (present(f, m)) {
			r = value_json(c, f, member, depth, &v);
		}
		c->path[plen] = '\0';
		if (r < 0) {
			json_decref(out);
			return r;
		}
		if (v && pk_srv_pb_inline(f)) {
			json_object_update(out, v);
			json_decref(v);
		} else if (v) {
			json_object_set_new(out, f->name, v);
		}
	}
	*ret = out;
	return 0;
}

/* ---- the envelope ---------------------------------------------------------------- */
static void split_api_version(const char *av, char *group, size_t len)
{
	const char *slash = strchr(av, '/');
	snprintf(group, len, "%.*s", slash ? (int)(slash - av) : 0, av);
}

static int unpack_raw(const struct pk_pb_kind *k, const ProtobufCBinaryData *raw, json_t *obj,
		      const struct pk_srv_pb_budget *b, struct wire_walk *w, char *err,
		      size_t errlen)
{
	int r = check_message(k->kind, k->desc, raw->data, raw->len, w, err, errlen);
	if (r < 0)
		return r;
	if (b && b->reserve && !b->reserve(b->ctx, w->cost)) {
		snprintf(err, errlen,
			 "decoding the %s body needs %zu bytes beyond the request's "
			 "budget",
			 k->kind, w->cost);
		return -EAGAIN;
	}
	ProtobufCMessage *m = protobuf_c_message_unpack(k->desc, NULL, raw->len, raw->data);
	if (!m) {
		snprintf(err, errlen, "malformed %s message", k->kind);
		return -EINVAL;
	}
	struct conv c = {.err = err, .errlen = errlen};
	json_t *body = NULL;
	r = message_json(&c, m, 1, &body);
	protobuf_c_message_free_unpacked(m, NULL);
	if (r < 0)
		return r;
	json_object_update(obj, body);
	json_decref(body);
	return 0;
}

size_t pk_srv_pb_decode_limit(size_t len)
{
	return (size_t)PK_SRV_PB_DECODE_FLOOR + len * PK_SRV_PB_DECODE_FACTOR;
}

/* The envelope: a runtime.Unknown, walked (and bounded) before it is unpacked. */
static K8s__Io__Apimachinery__Pkg__Runtime__Unknown *
unpack_envelope(const char *buf, size_t len, struct wire_walk *w, int *ret_rc)
{
	const ProtobufCMessageDescriptor *d =
	    &k8s__io__apimachinery__pkg__runtime__unknown__descriptor;
	w->cost += d->sizeof_message;
	*ret_rc = check_wire(d, (const uint8_t *)buf + 4, (const uint8_t *)buf + len, 1, w);
	if (*ret_rc < 0)
		return NULL;
	return (K8s__Io__Apimachinery__Pkg__Runtime__Unknown *)protobuf_c_message_unpack(
	    d, NULL, len - 4, (const uint8_t *)buf + 4);
}

int pk_srv_proto_decode_budget(const char *buf, size_t len, const struct pk_srv_pb_budget *b,
			       json_t **ret, char *err, size_t errlen)
{
	static const char magic[4] = {'k', '8', 's', 0};
	if (len < 4 || memcmp(buf, magic, 4) != 0) {
		snprintf(err, errlen, "not a Kubernetes protobuf envelope (no \"k8s\\0\" prefix)");
		return -EINVAL;
	}
	struct wire_walk w = {.limit = pk_srv_pb_decode_limit(len)};
	int r = 0;
	K8s__Io__Apimachinery__Pkg__Runtime__Unknown *u = unpack_envelope(buf, len, &w, &r);
	if (r == -E2BIG) {
		snprintf(err, errlen, "protobuf envelope: decoding would take more than %zu bytes",
			 w.limit);
		return r;
	}
	if (!u || !u->typemeta || !u->typemeta->kind || !u->has_raw ||
	    (u->contentencoding && *u->contentencoding)) {
		snprintf(err, errlen, "malformed protobuf envelope");
		if (u)
			protobuf_c_message_free_unpacked(&u->base, NULL);
		return -EINVAL;
	}
	const char *av = u->typemeta->apiversion ?: "", *kind = u->typemeta->kind;
	char group[128];
	split_api_version(av, group, sizeof(group));
	const struct pk_pb_kind *k = pk_srv_pb_kind(group, kind);
	r = -EPROTONOSUPPORT;
	json_t *obj = json_pack("{s:s,s:s}", "apiVersion", av, "kind", kind);
	if (!k || k->schema_only)
		snprintf(err, errlen, "%s %s is not served as protobuf (%s); send JSON or YAML", av,
			 kind,
			 k ? "it is a custom resource"
			   : "podkerneld has no protobuf message for this kind");
	else
		r = obj ? unpack_raw(k, &u->raw, obj, b, &w, err, errlen) : -ENOMEM;
	protobuf_c_message_free_unpacked(&u->base, NULL);
	if (r < 0) {
		json_decref(obj);
		return r;
	}
	*ret = obj;
	return 0;
}

int pk_srv_proto_decode(const char *buf, size_t len, json_t **ret, char *err, size_t errlen)
{
	return pk_srv_proto_decode_budget(buf, len, NULL, ret, err, errlen);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fieldvalidation.c — `fieldValidation=Strict|Warn|Ignore` on create, update
 * and patch, as kube-apiserver does it.
 *
 * The known fields of a kind are the fields of its protobuf message
 * (kernel/server/proto/, proto.c): the same descriptors read protobuf bodies
 * and publish the OpenAPI schemas (openapi.c), so the three never disagree.
 * A body is walked against them: every key of an object that is not a field
 * of its message (nor of a struct the message embeds, nor one of the few
 * podkernel spellings listed below) is an unknown field, named by its path as
 * upstream names it ("spec.containers[0].imagez").  Map keys, RawExtensions
 * and keys of a patch that start with '$' (strategic-merge directives) are not
 * fields; the values of a map are walked when they are messages (a
 * ResourceSlice device's attributes: "spec.devices[0].attributes.index.intt").
 * Strict turns the list into 400 BadRequest ("strict decoding error: unknown
 * field ..."); Warn, the default, into one `Warning` header per field; Ignore
 * into nothing.  The fields stay in the object either way: podkernel keeps
 * what it is given and the scheduler reports fields it does not implement.
 * Duplicate keys (recorded by the codec, the last value kept) are reported the
 * same way: "duplicate field \"metadata.name\"".  Every served kind has a
 * message; a custom resource's (JobSet, jobset.proto) is its structural
 * schema, as kube-apiserver checks a CRD's unknown fields against its
 * OpenAPI schema.  One podkernel form is known beside upstream's: a JobSet's
 * replicated job whose template.spec has no pod template is itself a pod
 * template (the KEP-6089 example's short form, kernel/builder/jobset.c), and
 * is walked as one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"

#define MAX_REPORTED 100

/* Fields podkernel accepts beyond the upstream messages: (message, field). */
static const char *const extensions[][2] = {
    /* KEP-6089 examples spell a topology key "level"; rewritten to "key" */
    {"TopologyConstraint", "level"},
};

static bool is_extension(const ProtobufCMessageDescriptor *d, const char *key)
{
	for (size_t i = 0; i < sizeof(extensions) / sizeof(extensions[0]); i++)
		if (strcmp(d->short_name, extensions[i][0]) == 0 &&
		    strcmp(key, extensions[i][1]) == 0)
			return true;
	return false;
}

const ProtobufCFieldDescriptor *pk_srv_pb_field(const ProtobufCMessageDescriptor *d,
						const char *name)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(d, name);
	if (f && !pk_srv_pb_inline(f))
		return f;
	for (unsigned i = 0; i < d->n_fields; i++) {
		if (!pk_srv_pb_inline(&d->fields[i]))
			continue;
		f = pk_srv_pb_field(d->fields[i].descriptor, name);
		if (f)
			return f;
	}
	return NULL;
}

struct walk {
	json_t *unknown; /* paths */
	bool patch;	 /* skip "$..." keys */
	char path[1024];
};

static void walk_object(struct walk *w, const ProtobufCMessageDescriptor *d, const json_t *obj,
			bool top);

/* A map whose values are messages (a device's attributes): each value, at
 * "PATH.KEY". */
static void walk_map(struct walk *w, const ProtobufCMessageDescriptor *entry, const json_t *v)
{
	const ProtobufCMessageDescriptor *md;
	size_t plen = strlen(w->path);
	const char *key;
	json_t *item;
	if (pk_srv_pb_shape(&entry->fields[1], &md) != PK_PB_OBJECT || !json_is_object(v))
		return; /* strings, quantities: no field names below */
	json_object_foreach((json_t *)v, key, item)
	{
		snprintf(w->path + plen, sizeof(w->path) - plen, ".%s", key);
		walk_object(w, md, item, false);
	}
	w->path[plen] = '\0';
}

/*
 * The message v is read as: f's, or for a JobSet replicated job's template
 * without spec.template (the builder's short form) the pod template the
 * JobTemplateSpec's JobSpec would hold.
 */
static const ProtobufCMessageDescriptor *form_of(const ProtobufCMessageDescriptor *d,
						 const ProtobufCFieldDescriptor *f,
						 const ProtobufCMessageDescriptor *md,
						 const json_t *v)
{
	const ProtobufCFieldDescriptor *spec, *pod;
	if (strcmp(d->name, "io.x_k8s.jobset.v1alpha2.ReplicatedJob") != 0 ||
	    strcmp(f->name, "template") != 0 ||
	    json_is_object(json_object_get(json_object_get(v, "spec"), "template")))
		return md;
	spec = pk_srv_pb_field(md, "spec");
	pod = spec ? pk_srv_pb_field(spec->descriptor, "template") : NULL;
	return pod ? pod->descriptor : md;
}

static void walk_value(struct walk *w, const ProtobufCMessageDescriptor *d,
		       const ProtobufCFieldDescriptor *f, const json_t *v)
{
	const ProtobufCMessageDescriptor *md;
	enum pk_pb_shape s = pk_srv_pb_shape(f, &md);
	if (s == PK_PB_MAP) {
		walk_map(w, md, v);
		return;
	}
	if (s != PK_PB_OBJECT)
		return; /* scalars, raw JSON: no field names below */
	if (f->label != PROTOBUF_C_LABEL_REPEATED) {
		walk_object(w, form_of(d, f, md, v), v, false);
		return;
	}
	size_t plen = strlen(w->path), i;
	json_t *item;
	json_array_foreach(v, i, item)
	{
		snprintf(w->path + plen, sizeof(w->path) - plen, "[%zu]", i);
		walk_object(w, md, item, false);
	}
	w->path[plen] = '\0';
}

static void walk_object(struct walk *w, const ProtobufCMessageDescriptor *d, const json_t *obj,
			bool top)
{
	const char *key;
	json_t *v;
	size_t plen = strlen(w->path);
	if (!json_is_object(obj))
		return; /* a wrong type is the validators' to report */
	json_object_foreach((json_t *)obj, key, v)
	{
		if ((top && (strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0)) ||
		    (w->patch && key[0] == '$') || json_array_size(w->unknown) >= MAX_REPORTED)
			continue;
		snprintf(w->path + plen, sizeof(w->path) - plen, "%s%s", plen ? "." : "", key);
		const ProtobufCFieldDescriptor *f = pk_srv_pb_field(d, key);
		if (f && !json_is_null(v))
			walk_value(w, d, f, v);
		else if (!f && !is_extension(d, key))
			json_array_append_new(w->unknown, json_string(w->path));
		w->path[plen] = '\0';
	}
}

int pk_srv_unknown_fields(const struct pk_type *t, const json_t *obj, bool patch,
			  json_t **ret_paths)
{
	const struct pk_pb_kind *k = pk_srv_pb_kind_of(t);
	struct walk w = {.unknown = json_array(), .patch = patch};
	if (!w.unknown)
		return -ENOMEM;
	if (k)
		walk_object(&w, k->desc, obj, true);
	*ret_paths = w.unknown;
	return 0;
}

int pk_srv_field_validation_mode(const char *value, enum pk_field_validation *ret)
{
	if (!value || strcmp(value, "Warn") == 0)
		*ret = PK_FV_WARN;
	else if (strcmp(value, "Strict") == 0)
		*ret = PK_FV_STRICT;
	else if (strcmp(value, "Ignore") == 0)
		*ret = PK_FV_IGNORE;
	else
		return -EINVAL;
	return 0;
}

/* "duplicate field \"a\", unknown field \"b\"" into buf (n: chars used). */
static size_t join_fields(const char *what, const json_t *paths, char *buf, size_t len, size_t n)
{
	size_t i;
	json_t *p;
	json_array_foreach(paths, i, p)
	{
		if (n + 1 >= len)
			break;
		if (!json_is_string(p)) /* the count of duplicates past those recorded */
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s field \"%s\"", n ? ", " : "", what,
				      json_string_value(p));
	}
	return n;
}

/* Append warning lines to resp->warnings. */
static void add_warnings(struct pk_response *resp, const char *what, const json_t *paths)
{
	size_t i;
	json_t *p;
	json_array_foreach(paths, i, p)
	{
		char line[1200];
		if (json_is_integer(p)) { /* duplicates past those recorded: counted */
			resp->warnings_dropped += (size_t)json_integer_value(p);
			continue;
		}
		snprintf(line, sizeof(line), "%s field \"%s\"", what, json_string_value(p));
		pk_response_warn(resp, line);
	}
}

int pk_srv_field_validate(const struct pk_type *t, enum pk_field_validation mode,
			  const json_t *body, const json_t *dups, bool patch,
			  struct pk_response *resp)
{
	json_t *paths = NULL;
	if (mode == PK_FV_IGNORE)
		return 0;
	if (pk_srv_unknown_fields(t, body, patch, &paths) < 0)
		return 0;
	int rc = 0;
	if ((json_array_size(paths) || json_array_size(dups)) && mode == PK_FV_STRICT) {
		char msg[1700] = "";
		join_fields("unknown", paths, msg, sizeof(msg),
			    join_fields("duplicate", dups, msg, sizeof(msg), 0));
		/* upstream names the version alone: "JobSet in version \"v1alpha2\"" */
		pk_srv_respond_status(resp, 400, "BadRequest", NULL, NULL, NULL,
				      "%s in version \"%s\" cannot be handled as a %s: strict "
				      "decoding error: %s",
				      t->kind, t->version, t->kind, msg);
		rc = -EINVAL;
	} else {
		add_warnings(resp, "duplicate", dups);
		add_warnings(resp, "unknown", paths);
	}
	json_decref(paths);
	return rc;
}

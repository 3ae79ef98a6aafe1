/* SPDX-License-Identifier: Apache-2.0 */
/*
 * openapi.c — the OpenAPI v3 documents (/openapi/v3 and one per group
 * version) that `kubectl explain` and kubectl's validation and patch logic
 * read.
 *
 * The schemas are generated from the same descriptors that read protobuf
 * bodies and decide which fields are unknown (proto.c, fieldvalidation.c), so
 * what is documented is exactly what is accepted.  A message becomes a schema
 * named as upstream names it (k8s.io.api.core.v1.Pod ->
 * io.k8s.api.core.v1.Pod); a field's JSON form comes from pk_srv_pb_shape();
 * embedded structs are flattened into their parent; keyed lists carry
 * x-kubernetes-list-type map with their keys (apply.c's table) and the
 * strategic-merge key kubectl's patches use (the store's patch table).  A
 * served kind's schema gets apiVersion, kind and its
 * x-kubernetes-group-version-kind, and one PATCH operation per kind declares
 * the fieldValidation parameter, which tells kubectl to leave validation to
 * the server.  A custom resource's schema-only message (JobSet) is published
 * the same way, under the names kube-apiserver gives a CRD's schema
 * (io.x-k8s.jobset.v1alpha2.JobSet: its group reversed, then version and
 * kind).  A kind served in another version too (Kueue's v1beta1 beside
 * v1beta2, pk_type_versions[]) has that version's document, from that
 * version's messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/server/server-internal.h"

/* io.k8s.api.core.v1.Pod for k8s.io.api.core.v1.Pod; io.x-k8s.jobset... for
 * io.x_k8s.jobset... (a protobuf package has no '-'). */
static void schema_name(const ProtobufCMessageDescriptor *d, char *buf, size_t len)
{
	if (strncmp(d->name, "k8s.io.", 7) == 0)
		snprintf(buf, len, "io.k8s.%s", d->name + 7);
	else if (strncmp(d->name, "io.x_k8s.", 9) == 0)
		snprintf(buf, len, "io.x-k8s.%s", d->name + 9);
	else
		snprintf(buf, len, "%s", d->name);
}

static json_t *ref_to(const ProtobufCMessageDescriptor *d)
{
	char name[256], ref[300];
	schema_name(d, name, sizeof(name));
	snprintf(ref, sizeof(ref), "#/components/schemas/%s", name);
	return json_pack("{s:[{s:s}]}", "allOf", "$ref", ref);
}

static void add_message(json_t *schemas, const ProtobufCMessageDescriptor *d, int depth);

/* The schema of one value of field f (an element when repeated). */
static json_t *value_schema(json_t *schemas, const ProtobufCFieldDescriptor *f, int depth)
{
	const ProtobufCMessageDescriptor *md;
	enum pk_pb_shape shape = pk_srv_pb_shape(f, &md);
	json_t *scalar = pk_srv_pb_scalar_schema(f, shape);

	if (scalar)
		return scalar;
	switch (shape) {
	case PK_PB_RAW:
		return json_pack("{s:s,s:b}", "type", "object",
				 "x-kubernetes-preserve-unknown-fields", 1);
	case PK_PB_MAP:
		return json_pack("{s:s,s:o}", "type", "object", "additionalProperties",
				 value_schema(schemas, &md->fields[1], depth));
	case PK_PB_OBJECT:
		add_message(schemas, md, depth + 1);
		return ref_to(md);
	default:
		break;
	}
	return json_object();
}

static json_t *field_schema(json_t *schemas, const ProtobufCFieldDescriptor *f, int depth)
{
	const ProtobufCMessageDescriptor *md;
	json_t *v = value_schema(schemas, f, depth);
	if (f->label != PROTOBUF_C_LABEL_REPEATED || pk_srv_pb_shape(f, &md) == PK_PB_MAP)
		return v;
	json_t *a = json_pack("{s:s,s:o}", "type", "array", "items", v);
	const char *const *keys = pk_srv_list_keys(f->name);
	const char *smp = pk_patch_merge_key(f->name);
	if (keys) {
		json_t *k = json_array();
		for (size_t i = 0; i < 2 && keys[i]; i++)
			json_array_append_new(k, json_string(keys[i]));
		json_object_set_new(a, "x-kubernetes-list-type", json_string("map"));
		json_object_set_new(a, "x-kubernetes-list-map-keys", k);
	} else {
		json_object_set_new(a, "x-kubernetes-list-type", json_string("atomic"));
	}
	if (smp) {
		json_object_set_new(a, "x-kubernetes-patch-merge-key", json_string(smp));
		json_object_set_new(a, "x-kubernetes-patch-strategy", json_string("merge"));
	}
	return a;
}

/* d's fields (embedded structs flattened) into props. */
static void add_properties(json_t *schemas, json_t *props, const ProtobufCMessageDescriptor *d,
			   int depth)
{
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (pk_srv_pb_inline(f))
			add_properties(schemas, props, f->descriptor, depth);
		else
			json_object_set_new(props, f->name, field_schema(schemas, f, depth));
	}
}

static void add_message(json_t *schemas, const ProtobufCMessageDescriptor *d, int depth)
{
	char name[256];
	schema_name(d, name, sizeof(name));
	if (json_object_get(schemas, name) || depth > PK_MAX_DEPTH)
		return;
	json_t *props = json_object();
	/* Placed first, so that a message that contains itself stops here. */
	json_object_set_new(schemas, name,
			    json_pack("{s:s,s:o}", "type", "object", "properties", props));
	add_properties(schemas, props, d, depth);
}

/* A served kind's schema: its message, apiVersion, kind and GVK. */
static void add_kind(json_t *schemas, const struct pk_type *t, const ProtobufCMessageDescriptor *d)
{
	char name[256];
	add_message(schemas, d, 0);
	schema_name(d, name, sizeof(name));
	json_t *s = json_object_get(schemas, name), *props = json_object_get(s, "properties");
	if (t->description)
		json_object_set_new(s, "description", json_string(t->description));
	json_object_set_new(props, "apiVersion",
			    json_pack("{s:s,s:s}", "type", "string", "description",
				      "The versioned schema of this object: GROUP/VERSION."));
	json_object_set_new(
	    props, "kind",
	    json_pack("{s:s,s:s}", "type", "string", "description", "The kind of this object."));
	json_object_set_new(s, "x-kubernetes-group-version-kind",
			    json_pack("[{s:s,s:s,s:s}]", "group", t->group, "version", t->version,
				      "kind", t->kind));
}

json_t *pk_srv_openapi_root(void)
{
	json_t *paths = json_object();
	const struct pk_type *t;
	for (size_t i = 0; (t = pk_type_served(i)); i++) {
		char key[128], url[160];
		if (*t->group)
			snprintf(key, sizeof(key), "apis/%s/%s", t->group, t->version);
		else
			snprintf(key, sizeof(key), "api/%s", t->version);
		snprintf(url, sizeof(url), "/openapi/v3/%s?hash=" PODKERNEL_VERSION, key);
		json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
	}
	return json_pack("{s:o}", "paths", paths);
}

static json_t *patch_operation(const struct pk_type *t)
{
	return json_pack("{s:{s:s,s:s,s:s},s:[{s:s,s:s,s:{s:s}}],s:{}}",
			 "x-kubernetes-group-version-kind", "group", t->group, "version",
			 t->version, "kind", t->kind, "parameters", "name", "fieldValidation", "in",
			 "query", "schema", "type", "string", "responses");
}

json_t *pk_srv_openapi_gv(const char *group, const char *version)
{
	json_t *paths = json_object(), *schemas = json_object();
	const struct pk_type *t;
	for (size_t i = 0; (t = pk_type_served(i)); i++) {
		if (strcmp(t->group, group) != 0 || strcmp(t->version, version) != 0)
			continue;
		char path[256];
		snprintf(path, sizeof(path), "/%s%s/%s%s/%s/{name}", *group ? "apis/" : "api",
			 group, version, t->namespaced ? "/namespaces/{namespace}" : "", t->plural);
		json_t *op = patch_operation(t);
		const struct pk_pb_kind *k = pk_srv_pb_kind_of(t);
		if (k) {
			char name[256], ref[300];
			add_kind(schemas, t, k->desc);
			schema_name(k->desc, name, sizeof(name));
			snprintf(ref, sizeof(ref), "#/components/schemas/%s", name);
			json_object_set_new(op, "requestBody",
					    json_pack("{s:{s:{s:{s:s}}}}", "content",
						      "application/json", "schema", "$ref", ref));
		}
		json_object_set_new(paths, path, json_pack("{s:o}", "patch", op));
	}
	if (json_object_size(paths) == 0) {
		json_decref(paths);
		json_decref(schemas);
		return NULL;
	}
	return json_pack("{s:s,s:{s:s,s:s},s:o,s:{s:o}}", "openapi", "3.0.0", "info", "title",
			 "podkerneld", "version", PODKERNEL_VERSION, "paths", paths, "components",
			 "schemas", schemas);
}

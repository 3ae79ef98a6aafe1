/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds.c — the CustomResourceDefinitions of the KEP-6012 alpha kinds
 * (scheduling.k8s.io/v1alpha3 Workload, PodGroup, CompositePodGroup) that
 * attach mode installs on a cluster which does not serve them
 * (deploy/crds/, printed by `podkerneld --print-crds`).
 *
 * They are generated from what standalone serves, so the two cannot drift:
 * the openAPIV3Schema from the same protobuf descriptors as the OpenAPI
 * documents and field validation (openapi.c, fieldvalidation.c), the
 * additionalPrinterColumns from the same column specs as the server's
 * Tables (tables_kinds.c: the columns with a JSONPath).  A CRD's schema is
 * structural (kube-apiserver prunes and validates with it): every message is
 * inlined instead of referenced, a value of any shape (RawExtension) only
 * preserves unknown fields, the object's own metadata is a bare object, and
 * a keyed list (x-kubernetes-list-type map) requires its keys.  Strategic
 * merge keys have no place in a CRD and are left out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"

#define META_OBJECT "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"

/* The messages from the root to the one being written (a message that
 * contains itself, a composite group's templates, is written out as deep as
 * validation allows, PK_HIERARCHY_DEPTH_MAX levels, and no deeper). */
struct chain {
	const ProtobufCMessageDescriptor *at[PK_MAX_DEPTH];
	int n;
};

static json_t *crd_message(const ProtobufCMessageDescriptor *d, struct chain *c);

static json_t *crd_value(const ProtobufCFieldDescriptor *f, struct chain *c)
{
	const ProtobufCMessageDescriptor *md;
	enum pk_pb_shape shape = pk_srv_pb_shape(f, &md);
	json_t *scalar = pk_srv_pb_scalar_schema(f, shape);

	if (scalar)
		return scalar;
	switch (shape) {
	case PK_PB_RAW:
		return json_pack("{s:b}", "x-kubernetes-preserve-unknown-fields", 1);
	case PK_PB_MAP:
		return json_pack("{s:s,s:o}", "type", "object", "additionalProperties",
				 crd_value(&md->fields[1], c));
	case PK_PB_OBJECT:
		return crd_message(md, c);
	default:
		break;
	}
	return json_object();
}

/* A keyed list's items require their keys (a CRD's list-map keys must be). */
static bool keyed_items(json_t *items, const char *const *keys)
{
	json_t *props = json_object_get(items, "properties"), *req = json_array();

	for (size_t i = 0; i < 2 && keys[i]; i++) {
		if (!json_object_get(props, keys[i])) {
			json_decref(req);
			return false;
		}
		json_array_append_new(req, json_string(keys[i]));
	}
	json_object_set_new(items, "required", req);
	return true;
}

static json_t *crd_field(const ProtobufCFieldDescriptor *f, struct chain *c)
{
	const ProtobufCMessageDescriptor *md;
	json_t *v = crd_value(f, c);

	if (f->label != PROTOBUF_C_LABEL_REPEATED || pk_srv_pb_shape(f, &md) == PK_PB_MAP)
		return v;
	const char *const *keys = pk_srv_list_keys(f->name);
	json_t *a = json_pack("{s:s,s:o}", "type", "array", "items", v);
	if (keys && keyed_items(v, keys)) {
		json_t *k = json_array();
		for (size_t i = 0; i < 2 && keys[i]; i++)
			json_array_append_new(k, json_string(keys[i]));
		json_object_set_new(a, "x-kubernetes-list-type", json_string("map"));
		json_object_set_new(a, "x-kubernetes-list-map-keys", k);
	} else {
		json_object_set_new(a, "x-kubernetes-list-type", json_string("atomic"));
	}
	return a;
}

static void crd_properties(json_t *props, const ProtobufCMessageDescriptor *d, struct chain *c)
{
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (pk_srv_pb_inline(f))
			crd_properties(props, f->descriptor, c);
		else
			json_object_set_new(props, f->name, crd_field(f, c));
	}
}

static json_t *crd_message(const ProtobufCMessageDescriptor *d, struct chain *c)
{
	int seen = 0;

	for (int i = 0; i < c->n; i++)
		seen += c->at[i] == d;
	/* a nested ObjectMeta (a template's) keeps what it is given, as does a
	 * level deeper than validation allows (podkerneld refuses it) */
	if (c->n >= PK_MAX_DEPTH || seen >= PK_HIERARCHY_DEPTH_MAX ||
	    strcmp(d->name, META_OBJECT) == 0)
		return json_pack("{s:s,s:b}", "type", "object",
				 "x-kubernetes-preserve-unknown-fields", 1);
	json_t *props = json_object();
	c->at[c->n++] = d;
	crd_properties(props, d, c);
	c->n--;
	return json_pack("{s:s,s:o}", "type", "object", "properties", props);
}

/* The kind's schema: its message, with apiVersion, kind and a bare metadata. */
static json_t *crd_schema(const struct pk_type *t, const ProtobufCMessageDescriptor *d)
{
	struct chain c = {.n = 0};
	json_t *s = crd_message(d, &c), *props = json_object_get(s, "properties");
	const char *what = t->description;

	if (what)
		json_object_set_new(s, "description", json_string(what));
	json_object_set_new(props, "apiVersion", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "kind", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "metadata", json_pack("{s:s}", "type", "object"));
	return s;
}

/* The Table's columns with a JSONPath, but the name (a CRD always has it). */
static json_t *crd_columns(const struct pk_type *t)
{
	json_t *cols = json_array();

	for (const struct pk_srv_column *c = pk_srv_columns_of(t); c->name; c++) {
		if (!c->json_path)
			continue;
		json_t *col = json_pack("{s:s,s:s,s:s}", "name", c->name, "type", c->type,
					"jsonPath", c->json_path);
		if (c->description)
			json_object_set_new(col, "description", json_string(c->description));
		if (c->priority)
			json_object_set_new(col, "priority", json_integer(c->priority));
		json_array_append_new(cols, col);
	}
	return cols;
}

static json_t *crd_names(const struct pk_type *t)
{
	char singular[64], list_kind[96];
	json_t *shorts = json_array();
	const char *p = t->short_names;

	snprintf(singular, sizeof(singular), "%s", t->kind);
	for (char *c = singular; *c; c++)
		*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
	snprintf(list_kind, sizeof(list_kind), "%sList", t->kind);
	while (p && *p) {
		size_t n = strcspn(p, ",");
		json_array_append_new(shorts, json_stringn(p, n));
		p += n + (p[n] == ',');
	}
	return json_pack("{s:s,s:s,s:s,s:s,s:o}", "kind", t->kind, "listKind", list_kind, "plural",
			 t->plural, "singular", singular, "shortNames", shorts);
}

/* kube-apiserver's protected groups: a CRD there must say whether it was approved. */
static bool protected_group(const char *group)
{
	static const char *const suffixes[] = {".k8s.io", ".kubernetes.io"};
	size_t n = strlen(group);

	for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
		size_t m = strlen(suffixes[i]);
		if (strcmp(group, suffixes[i] + 1) == 0 ||
		    (n > m && strcmp(group + n - m, suffixes[i]) == 0))
			return true;
	}
	return false;
}

static json_t *crd_of(const struct pk_type *t, const ProtobufCMessageDescriptor *d,
		      const char *group, const char *version_name)
{
	char name[320];
	json_t *version =
	    json_pack("{s:s,s:b,s:b}", "name", version_name, "served", 1, "storage", 1);

	snprintf(name, sizeof(name), "%s.%s", t->plural, group);
	if (t->has_status)
		json_object_set_new(version, "subresources", json_pack("{s:{}}", "status"));
	json_object_set_new(version, "additionalPrinterColumns", crd_columns(t));
	json_object_set_new(version, "schema",
			    json_pack("{s:o}", "openAPIV3Schema", crd_schema(t, d)));
	json_t *meta = json_pack("{s:s}", "name", name);
	if (protected_group(group))
		json_object_set_new(meta, "annotations",
				    json_pack("{s:s}", "api-approved.kubernetes.io",
					      "unapproved, experimental KEP-6012 alpha API"));
	return json_pack(
	    "{s:s,s:s,s:o,s:{s:s,s:s,s:o,s:[o]}}", "apiVersion", "apiextensions.k8s.io/v1", "kind",
	    "CustomResourceDefinition", "metadata", meta, "spec", "group", group, "scope",
	    t->namespaced ? "Namespaced" : "Cluster", "names", crd_names(t), "versions", version);
}

/* The kinds attach mode may find missing: KEP-6012's, in the order they are applied. */
static const struct pk_type *const crd_kinds[] = {&pk_type_workload, &pk_type_pod_group,
						  &pk_type_composite_pod_group};

int pk_server_print_crds(FILE *f, const char *group, const char *version)
{
	int rc = 0;

	fprintf(f,
		"# The KEP-6012 alpha kinds as CustomResourceDefinitions, for clusters that do\n"
		"# not serve them.  Generated by `podkerneld --print-crds` from the schemas and\n"
		"# columns standalone podkerneld serves; do not edit.\n");
	for (size_t i = 0; i < ELEMENTSOF(crd_kinds) && rc == 0; i++) {
		const struct pk_type *t = crd_kinds[i];
		const struct pk_pb_kind *k = pk_srv_pb_kind_of(t);

		if (!k)
			return -ENOENT;
		json_t *crd = crd_of(t, k->desc, group ?: t->group, version ?: t->version);
		fprintf(f, "---\n");
		rc = crd ? pk_write(f, crd, PK_FORMAT_YAML) : -ENOMEM;
		json_decref(crd);
	}
	return rc < 0 ? rc : (fflush(f) == 0 ? 0 : -EIO);
}

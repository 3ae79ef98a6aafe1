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
 * kind).
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

/* What `kubectl explain KIND` says first. */
static const struct {
	const char *group, *kind, *text;
} descriptions[] = {
    {"", "Pod",
     "A set of containers scheduled onto one node; podkernel places it, alone or "
     "as a member of a PodGroup (spec.schedulingGroup)."},
    {"", "Node",
     "A host of the cluster, with its allocatable resources and the topology "
     "labels podagent publishes."},
    {"", "Namespace", "A scope for names of namespaced objects."},
    {"", "Event", "A report of something that happened to an object (core/v1 form)."},
    {"events.k8s.io", "Event", "A report of something that happened to an object."},
    {"scheduling.k8s.io", "PriorityClass", "A name for a pod or group priority value."},
    {"scheduling.k8s.io", "Workload",
     "The scheduling structure of a workload: templates of "
     "its pod groups and composite pod groups (KEP-6012)."},
    {"scheduling.k8s.io", "PodGroup",
     "A set of pods scheduled together: a gang of at least "
     "minCount, or each on its own (KEP-6012)."},
    {"scheduling.k8s.io", "CompositePodGroup",
     "A group of pod groups and composite pod groups placed together within a topology "
     "domain (KEP-6012)."},
    {"batch", "Job",
     "Pods run to completion; podkernel's builder compiles its Workload and "
     "groups (KEP-6089)."},
    {"jobset.x-k8s.io", "JobSet",
     "A set of Jobs replicated from templates (a custom resource upstream); podkernel's "
     "controller compiles its Workload and groups from spec.scheduling (KEP-6089)."},
    {"leaderworkerset.x-k8s.io", "LeaderWorkerSet",
     "Replicas of a leader pod and its workers (a custom resource upstream); podkernel's "
     "controller compiles each replica into a gang and the set into a CompositePodGroup."},
    {"kueue.x-k8s.io", "ResourceFlavor",
     "A kind of node a ClusterQueue's quota is given in (a custom resource upstream)."},
    {"kueue.x-k8s.io", "ClusterQueue",
     "Quota per flavor and resource for the workloads of the namespaces it selects; the "
     "queue controller admits a queued Job or JobSet while its requests fit."},
    {"kueue.x-k8s.io", "LocalQueue",
     "A namespace's queue: the ClusterQueue its workloads (label "
     "kueue.x-k8s.io/queue-name) are admitted by."},
    {"kueue.x-k8s.io", "Cohort",
     "ClusterQueues that borrow unused quota from each other, with quota of its own; "
     "Cohorts form a tree (spec.parentName)."},
    {"coordination.k8s.io", "Lease",
     "A lease held by a holder for a duration (node heartbeats, "
     "leader election)."},
    {"", "PersistentVolumeClaim",
     "A user's request for storage; the scheduler places a pod only where its claims "
     "can be bound (VolumeBinding)."},
    {"", "PersistentVolume", "A piece of storage, with the nodes that can reach it."},
    {"storage.k8s.io", "StorageClass",
     "A class of storage: its provisioner, binding mode and allowed topologies."},
    {"storage.k8s.io", "CSINode", "The CSI drivers of a node and how many volumes each attaches."},
    {"policy", "PodDisruptionBudget",
     "How many of the pods a selector picks may be down at once; the eviction subresource "
     "refuses (429) an eviction that would go below it, a gang's disruption unit counted whole."},
    {"resource.k8s.io", "DeviceClass",
     "A class of devices: the selectors and configuration a request of it gets."},
    {"resource.k8s.io", "ResourceClaim",
     "A request for devices; its status holds the allocation the scheduler wrote and the "
     "pods it is reserved for."},
    {"resource.k8s.io", "ResourceClaimTemplate",
     "The spec of the ResourceClaims made for each pod that names the template."},
    {"resource.k8s.io", "ResourceSlice",
     "Devices a DRA driver publishes for a node or a set of nodes, with their attributes "
     "and capacity."},
};

const char *pk_srv_openapi_description(const struct pk_type *t)
{
	for (size_t i = 0; i < sizeof(descriptions) / sizeof(descriptions[0]); i++)
		if (strcmp(descriptions[i].group, t->group) == 0 &&
		    strcmp(descriptions[i].kind, t->kind) == 0)
			return descriptions[i].text;
	return NULL;
}

/* A served kind's schema: its message, apiVersion, kind and GVK. */
static void add_kind(json_t *schemas, const struct pk_type *t, const ProtobufCMessageDescriptor *d)
{
	char name[256];
	add_message(schemas, d, 0);
	schema_name(d, name, sizeof(name));
	json_t *s = json_object_get(schemas, name), *props = json_object_get(s, "properties");
	if (pk_srv_openapi_description(t))
		json_object_set_new(s, "description", json_string(pk_srv_openapi_description(t)));
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
	for (const struct pk_type *t = pk_types; t->kind; t++) {
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
	for (const struct pk_type *t = pk_types; t->kind; t++) {
		if (strcmp(t->group, group) != 0 || strcmp(t->version, version) != 0)
			continue;
		char path[256];
		snprintf(path, sizeof(path), "/%s%s/%s%s/%s/{name}", *group ? "apis/" : "api",
			 group, version, t->namespaced ? "/namespaces/{namespace}" : "", t->plural);
		json_t *op = patch_operation(t);
		const struct pk_pb_kind *k = pk_srv_pb_kind(t->group, t->kind);
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kinds.c — the one table of object kinds: name, plural and short names,
 * API group and version, whether objects of the kind live in a namespace and
 * whether they have a status subresource.  Parsers, printers, validation, the
 * store, the API server's discovery and podctl all read this table, so a kind
 * is added in exactly one place.
 */
#include <string.h>

#include "kernel/api/api.h"

#define CORE(v) .group = "", .version = v, .api_version = v
#define GROUP(g, v) .group = g, .version = v, .api_version = g "/" v

const struct pk_type pk_types[] = {
    {"Node", "nodes", CORE("v1"), "no", false, true, PK_KIND_NODE},
    {"Pod", "pods", CORE("v1"), "po", true, true, PK_KIND_POD},
    {"Namespace", "namespaces", CORE("v1"), "ns", false, true, PK_KIND_UNKNOWN},
    {"Event", "events", CORE("v1"), "ev", true, false, PK_KIND_UNKNOWN},
    /* events.k8s.io/v1 is the same resource in another shape (note, regarding, ...) */
    {"Event", "events", GROUP("events.k8s.io", "v1"), "", true, false, PK_KIND_UNKNOWN},
    {"PriorityClass", "priorityclasses", GROUP("scheduling.k8s.io", "v1"), "pc", false, false,
     PK_KIND_PRIORITY_CLASS},
    {"Workload", "workloads", GROUP("scheduling.k8s.io", "v1alpha3"), "wl", true, true,
     PK_KIND_WORKLOAD},
    {"PodGroup", "podgroups", GROUP("scheduling.k8s.io", "v1alpha3"), "pg", true, true,
     PK_KIND_POD_GROUP},
    {"CompositePodGroup", "compositepodgroups", GROUP("scheduling.k8s.io", "v1alpha3"), "cpg", true,
     true, PK_KIND_COMPOSITE_POD_GROUP},
    {"Job", "jobs", GROUP("batch", "v1"), "", true, true, PK_KIND_JOB},
    {"JobSet", "jobsets", GROUP("jobset.x-k8s.io", "v1alpha2"), "js", true, true, PK_KIND_JOBSET},
    {"Lease", "leases", GROUP("coordination.k8s.io", "v1"), "", true, false, PK_KIND_LEASE},
    {"DeviceClass", "deviceclasses", GROUP("resource.k8s.io", "v1"), "", false, false,
     PK_KIND_DEVICE_CLASS},
    {"ResourceClaim", "resourceclaims", GROUP("resource.k8s.io", "v1"), "", true, true,
     PK_KIND_RESOURCE_CLAIM},
    {"ResourceClaimTemplate", "resourceclaimtemplates", GROUP("resource.k8s.io", "v1"), "", true,
     false, PK_KIND_RESOURCE_CLAIM_TEMPLATE},
    {"ResourceSlice", "resourceslices", GROUP("resource.k8s.io", "v1"), "", false, false,
     PK_KIND_RESOURCE_SLICE},
    {"PersistentVolumeClaim", "persistentvolumeclaims", CORE("v1"), "pvc", true, true,
     PK_KIND_PERSISTENT_VOLUME_CLAIM},
    {"PersistentVolume", "persistentvolumes", CORE("v1"), "pv", false, true,
     PK_KIND_PERSISTENT_VOLUME},
    {"StorageClass", "storageclasses", GROUP("storage.k8s.io", "v1"), "sc", false, false,
     PK_KIND_STORAGE_CLASS},
    {"CSINode", "csinodes", GROUP("storage.k8s.io", "v1"), "", false, false, PK_KIND_CSI_NODE},
    {"PodDisruptionBudget", "poddisruptionbudgets", GROUP("policy", "v1"), "pdb", true, true,
     PK_KIND_POD_DISRUPTION_BUDGET},
    {"ResourceFlavor", "resourceflavors", GROUP("kueue.x-k8s.io", "v1beta2"), "rf", false, false,
     PK_KIND_RESOURCE_FLAVOR},
    {"ClusterQueue", "clusterqueues", GROUP("kueue.x-k8s.io", "v1beta2"), "cq", false, true,
     PK_KIND_CLUSTER_QUEUE},
    {"LocalQueue", "localqueues", GROUP("kueue.x-k8s.io", "v1beta2"), "lq", true, true,
     PK_KIND_LOCAL_QUEUE},
    {"LeaderWorkerSet", "leaderworkersets", GROUP("leaderworkerset.x-k8s.io", "v1"), "lws", true,
     true, PK_KIND_LEADER_WORKER_SET},
    {"Cohort", "cohorts", GROUP("kueue.x-k8s.io", "v1beta2"), "", false, true, PK_KIND_COHORT},
    {NULL},
};

const struct pk_type *pk_type_by_kind(const char *kind)
{
	for (const struct pk_type *t = pk_types; kind && t->kind; t++)
		if (strcmp(t->kind, kind) == 0)
			return t;
	return NULL;
}

const struct pk_type *pk_type_by_resource(const char *group, const char *plural)
{
	for (const struct pk_type *t = pk_types; group && plural && t->kind; t++)
		if (strcmp(t->group, group) == 0 && strcmp(t->plural, plural) == 0)
			return t;
	return NULL;
}

const struct pk_type *pk_type_of(enum pk_kind kind)
{
	if (kind <= PK_KIND_UNKNOWN || kind >= _PK_KIND_MAX)
		return NULL;
	for (const struct pk_type *t = pk_types; t->kind; t++)
		if (t->pk == kind)
			return t;
	return NULL;
}

const char *pk_kind_to_string(enum pk_kind kind)
{
	const struct pk_type *t = pk_type_of(kind);

	return t ? t->kind : NULL;
}

enum pk_kind pk_kind_from_string(const char *s)
{
	const struct pk_type *t = pk_type_by_kind(s);

	return t ? t->pk : PK_KIND_UNKNOWN;
}

const char *pk_kind_api_version(enum pk_kind kind)
{
	const struct pk_type *t = pk_type_of(kind);

	return t ? t->api_version : NULL;
}

/*
 * An object whose apiVersion is absent is taken at its kind's word (hand-built
 * trees, tests); one whose apiVersion names another group or version is not
 * the kind podkernel knows, so it is unknown.
 */
enum pk_kind pk_kind_of(const json_t *obj)
{
	const struct pk_type *t;
	const char *av;

	if (!json_is_object(obj))
		return PK_KIND_UNKNOWN;
	t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));
	if (!t || t->pk == PK_KIND_UNKNOWN)
		return PK_KIND_UNKNOWN;
	av = json_string_value(json_object_get(obj, "apiVersion"));
	if (av && strcmp(av, t->api_version) != 0)
		return PK_KIND_UNKNOWN;
	return t->pk;
}

bool pk_kind_namespaced(enum pk_kind kind)
{
	const struct pk_type *t = pk_type_of(kind);

	return t ? t->namespaced : true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kinds.c — the one table of object kinds.  A row says what a kind is: its
 * name, plural and short names, API group and version, whether its objects
 * live in a namespace and have a status subresource, what `kubectl explain`
 * says of it, and how the api library validates it.  Parsers, printers,
 * validation, the store, the API server's discovery and OpenAPI, attach and
 * podctl read the rows; the layers above keep their own per-kind operations
 * in one table each, keyed by the row (docs/STYLE.md, "How to add a kind").
 */
#include <stdio.h>
#include <string.h>

#include "kernel/api/api-internal.h"

#define CORE(v) .group = "", .version = v, .api_version = v
#define GROUP(g, v) .group = g, .version = v, .api_version = g "/" v
#define SCHED(v) GROUP("scheduling.k8s.io", v)
#define KUEUE GROUP("kueue.x-k8s.io", "v1beta2")
#define KUEUE_V1BETA1 GROUP("kueue.x-k8s.io", "v1beta1")

/* The Kueue kinds' descriptions, the same in both versions served. */
#define DESC_RESOURCE_FLAVOR                                                                       \
	"A kind of node a ClusterQueue's quota is given in (a custom resource upstream)."
#define DESC_CLUSTER_QUEUE                                                                         \
	"Quota per flavor and resource for the workloads of the namespaces it selects; the queue " \
	"controller admits a queued Job or JobSet while its requests fit."
#define DESC_LOCAL_QUEUE                                                                           \
	"A namespace's queue: the ClusterQueue its workloads (label kueue.x-k8s.io/queue-name) "   \
	"are admitted by."
#define DESC_COHORT                                                                                \
	"ClusterQueues that borrow unused quota from each other, with quota of its own; Cohorts "  \
	"form a tree (spec.parentName)."
#define DESC_WORKLOAD_PRIORITY_CLASS                                                               \
	"A priority value for Kueue workloads, independent of their pods' priority (a custom "     \
	"resource upstream)."
#define DESC_TOPOLOGY                                                                              \
	"The levels of a data center's hierarchy, each a node label (block, rack, host): a "       \
	"ResourceFlavor's spec.topologyName makes its workloads placed within one domain of a "    \
	"level."
#define RESOURCE GROUP("resource.k8s.io", "v1")
#define STORAGE GROUP("storage.k8s.io", "v1")

const struct pk_type pk_types[] = {
    {"Node", "nodes", CORE("v1"), "no", false, true, PK_KIND_NODE,
     "A host of the cluster, with its allocatable resources and the topology labels podagent "
     "publishes.",
     pk_validate_node},
    {"Pod", "pods", CORE("v1"), "po", true, true, PK_KIND_POD,
     "A set of containers scheduled onto one node; podkernel places it, alone or as a member "
     "of a PodGroup (spec.schedulingGroup).",
     pk_validate_pod},
    {"Namespace", "namespaces", CORE("v1"), "ns", false, true, PK_KIND_NAMESPACE,
     "A scope for names of namespaced objects.", NULL},
    {"Event", "events", CORE("v1"), "ev", true, false, PK_KIND_UNKNOWN,
     "A report of something that happened to an object (core/v1 form).", NULL},
    /* events.k8s.io/v1 is the same resource in another shape (note, regarding, ...) */
    {"Event", "events", GROUP("events.k8s.io", "v1"), "", true, false, PK_KIND_UNKNOWN,
     "A report of something that happened to an object.", NULL},
    {"PriorityClass", "priorityclasses", SCHED("v1"), "pc", false, false, PK_KIND_PRIORITY_CLASS,
     "A name for a pod or group priority value.", pk_validate_priority_class},
    {"Workload", "workloads", SCHED("v1alpha3"), "wl", true, true, PK_KIND_WORKLOAD,
     "The scheduling structure of a workload: templates of its pod groups and composite pod "
     "groups (KEP-6012).",
     pk_validate_workload},
    {"PodGroup", "podgroups", SCHED("v1alpha3"), "pg", true, true, PK_KIND_POD_GROUP,
     "A set of pods scheduled together: a gang of at least minCount, or each on its own "
     "(KEP-6012).",
     pk_validate_group},
    {"CompositePodGroup", "compositepodgroups", SCHED("v1alpha3"), "cpg", true, true,
     PK_KIND_COMPOSITE_POD_GROUP,
     "A group of pod groups and composite pod groups placed together within a topology domain "
     "(KEP-6012).",
     pk_validate_group},
    {"Job", "jobs", GROUP("batch", "v1"), "", true, true, PK_KIND_JOB,
     "Pods run to completion; podkernel's builder compiles its Workload and groups "
     "(KEP-6089).",
     pk_validate_meta},
    {"JobSet", "jobsets", GROUP("jobset.x-k8s.io", "v1alpha2"), "js", true, true, PK_KIND_JOBSET,
     "A set of Jobs replicated from templates (a custom resource upstream); podkernel's "
     "controller compiles its Workload and groups from spec.scheduling (KEP-6089).",
     pk_validate_meta},
    {"Lease", "leases", GROUP("coordination.k8s.io", "v1"), "", true, false, PK_KIND_LEASE,
     "A lease held by a holder for a duration (node heartbeats, leader election).",
     pk_validate_lease},
    {"DeviceClass", "deviceclasses", RESOURCE, "", false, false, PK_KIND_DEVICE_CLASS,
     "A class of devices: the selectors and configuration a request of it gets.", pk_validate_dra},
    {"ResourceClaim", "resourceclaims", RESOURCE, "", true, true, PK_KIND_RESOURCE_CLAIM,
     "A request for devices; its status holds the allocation the scheduler wrote and the pods "
     "it is reserved for.",
     pk_validate_dra},
    {"ResourceClaimTemplate", "resourceclaimtemplates", RESOURCE, "", true, false,
     PK_KIND_RESOURCE_CLAIM_TEMPLATE,
     "The spec of the ResourceClaims made for each pod that names the template.", pk_validate_dra},
    {"ResourceSlice", "resourceslices", RESOURCE, "", false, false, PK_KIND_RESOURCE_SLICE,
     "Devices a DRA driver publishes for a node or a set of nodes, with their attributes and "
     "capacity.",
     pk_validate_dra},
    {"PersistentVolumeClaim", "persistentvolumeclaims", CORE("v1"), "pvc", true, true,
     PK_KIND_PERSISTENT_VOLUME_CLAIM,
     "A user's request for storage; the scheduler places a pod only where its claims can be "
     "bound (VolumeBinding).",
     pk_validate_storage},
    {"PersistentVolume", "persistentvolumes", CORE("v1"), "pv", false, true,
     PK_KIND_PERSISTENT_VOLUME, "A piece of storage, with the nodes that can reach it.",
     pk_validate_storage},
    {"StorageClass", "storageclasses", STORAGE, "sc", false, false, PK_KIND_STORAGE_CLASS,
     "A class of storage: its provisioner, binding mode and allowed topologies.",
     pk_validate_storage},
    {"CSINode", "csinodes", STORAGE, "", false, false, PK_KIND_CSI_NODE,
     "The CSI drivers of a node and how many volumes each attaches.", pk_validate_storage},
    {"PodDisruptionBudget", "poddisruptionbudgets", GROUP("policy", "v1"), "pdb", true, true,
     PK_KIND_POD_DISRUPTION_BUDGET,
     "How many of the pods a selector picks may be down at once; the eviction subresource "
     "refuses (429) an eviction that would go below it, a gang's disruption unit counted whole.",
     pk_validate_budget},
    {"ResourceFlavor", "resourceflavors", KUEUE, "rf", false, false, PK_KIND_RESOURCE_FLAVOR,
     DESC_RESOURCE_FLAVOR, pk_validate_kueue},
    {"ClusterQueue", "clusterqueues", KUEUE, "cq", false, true, PK_KIND_CLUSTER_QUEUE,
     DESC_CLUSTER_QUEUE, pk_validate_kueue},
    {"LocalQueue", "localqueues", KUEUE, "lq", true, true, PK_KIND_LOCAL_QUEUE, DESC_LOCAL_QUEUE,
     pk_validate_kueue},
    {"LeaderWorkerSet", "leaderworkersets", GROUP("leaderworkerset.x-k8s.io", "v1"), "lws", true,
     true, PK_KIND_LEADER_WORKER_SET,
     "Replicas of a leader pod and its workers (a custom resource upstream); podkernel's "
     "controller compiles each replica into a gang and the set into a CompositePodGroup.",
     pk_validate_meta},
    {"Cohort", "cohorts", KUEUE, "", false, true, PK_KIND_COHORT, DESC_COHORT, pk_validate_kueue},
    {"WorkloadPriorityClass", "workloadpriorityclasses", KUEUE, "", false, false, PK_KIND_UNKNOWN,
     DESC_WORKLOAD_PRIORITY_CLASS, pk_validate_workload_priority_class},
    {"Topology", "topologies", KUEUE, "", false, false, PK_KIND_UNKNOWN, DESC_TOPOLOGY,
     pk_validate_topology},
    {NULL},
};

/*
 * Kueue's v1beta1, which its sample manifests are written in: the same kinds,
 * stored as v1beta2 (Kueue's storage version) and converted as Kueue's
 * conversion functions convert them (convert_kueue.c).  Each row is its
 * stored row's but for the version and the conversion.
 */
const struct pk_type pk_type_versions[] = {
    {"ResourceFlavor", "resourceflavors", KUEUE_V1BETA1, "rf", false, false,
     PK_KIND_RESOURCE_FLAVOR, DESC_RESOURCE_FLAVOR, pk_validate_kueue, &pk_kueue_v1beta1_same},
    {"ClusterQueue", "clusterqueues", KUEUE_V1BETA1, "cq", false, true, PK_KIND_CLUSTER_QUEUE,
     DESC_CLUSTER_QUEUE, pk_validate_kueue, &pk_kueue_v1beta1_cluster_queue},
    {"LocalQueue", "localqueues", KUEUE_V1BETA1, "lq", true, true, PK_KIND_LOCAL_QUEUE,
     DESC_LOCAL_QUEUE, pk_validate_kueue, &pk_kueue_v1beta1_local_queue},
    {"Cohort", "cohorts", KUEUE_V1BETA1, "", false, true, PK_KIND_COHORT, DESC_COHORT,
     pk_validate_kueue, &pk_kueue_v1beta1_cohort},
    {"WorkloadPriorityClass", "workloadpriorityclasses", KUEUE_V1BETA1, "", false, false,
     PK_KIND_UNKNOWN, DESC_WORKLOAD_PRIORITY_CLASS, pk_validate_workload_priority_class,
     &pk_kueue_v1beta1_same},
    {"Topology", "topologies", KUEUE_V1BETA1, "", false, false, PK_KIND_UNKNOWN, DESC_TOPOLOGY,
     pk_validate_topology, &pk_kueue_v1beta1_same},
    {NULL},
};

const struct pk_type *pk_type_served(size_t i)
{
	size_t n = 0;

	while (pk_types[n].kind)
		n++;
	if (i < n)
		return &pk_types[i];
	for (size_t j = 0; pk_type_versions[j].kind; j++)
		if (j == i - n)
			return &pk_type_versions[j];
	return NULL;
}

const struct pk_type *pk_type_by_version(const char *group, const char *version, const char *plural)
{
	const struct pk_type *t;

	for (size_t i = 0; group && version && plural && (t = pk_type_served(i)); i++)
		if (strcmp(t->group, group) == 0 && strcmp(t->version, version) == 0 &&
		    strcmp(t->plural, plural) == 0)
			return t;
	return NULL;
}

const struct pk_type *pk_type_stored(const struct pk_type *t)
{
	const struct pk_type *s =
	    t && t->conversion ? pk_type_by_resource(t->group, t->plural) : NULL;

	return s ? s : t;
}

const struct pk_type *pk_type_by_kind(const char *kind)
{
	for (const struct pk_type *t = pk_types; kind && t->kind; t++)
		if (t->kind[0] == kind[0] && strcmp(t->kind, kind) == 0) /* every object asks */
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

const char *pk_obj_key(char *buf, size_t len, const struct pk_type *t, const char *ns,
		       const char *name)
{
	int n;

	if (t && !t->namespaced)
		ns = "";
	else if (!ns || !*ns)
		ns = "default";
	n = snprintf(buf, len, "%s/%s/%s", t ? t->kind : "", ns, name ? name : "");
	return n >= 0 && (size_t)n < len ? buf : NULL;
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

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
#include "kernel/lib/macro.h"

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

const struct pk_type pk_type_node = {
    .kind = "Node",
    .plural = "nodes",
    CORE("v1"),
    .short_names = "no",
    .namespaced = false,
    .has_status = true,
    .pk = PK_KIND_NODE,
    .description =
	"A host of the cluster, with its allocatable resources and the topology labels podagent "
	"publishes.",
    .validate = pk_validate_node,
};

const struct pk_type pk_type_pod = {
    .kind = "Pod",
    .plural = "pods",
    CORE("v1"),
    .short_names = "po",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_POD,
    .description =
	"A set of containers scheduled onto one node; podkernel places it, alone or as a member "
	"of a PodGroup (spec.schedulingGroup).",
    .validate = pk_validate_pod,
};

const struct pk_type pk_type_namespace = {
    .kind = "Namespace",
    .plural = "namespaces",
    CORE("v1"),
    .short_names = "ns",
    .namespaced = false,
    .has_status = true,
    .pk = PK_KIND_NAMESPACE,
    .description = "A scope for names of namespaced objects.",
    .validate = NULL,
};

const struct pk_type pk_type_event = {
    .kind = "Event",
    .plural = "events",
    CORE("v1"),
    .short_names = "ev",
    .namespaced = true,
    .has_status = false,
    .pk = PK_KIND_EVENT,
    .description = "A report of something that happened to an object (core/v1 form).",
    .validate = NULL,
};

/* events.k8s.io/v1 is the same resource in another shape (note, regarding, ...) */
const struct pk_type pk_type_event_v1 = {"Event",
					 "events",
					 GROUP("events.k8s.io", "v1"),
					 "",
					 true,
					 false,
					 PK_KIND_EVENT,
					 "A report of something that happened to an object.",
					 NULL};

const struct pk_type pk_type_priority_class = {"PriorityClass",
					       "priorityclasses",
					       SCHED("v1"),
					       "pc",
					       false,
					       false,
					       PK_KIND_PRIORITY_CLASS,
					       "A name for a pod or group priority value.",
					       pk_validate_priority_class};

const struct pk_type pk_type_workload = {
    .kind = "Workload",
    .plural = "workloads",
    SCHED("v1alpha3"),
    .short_names = "wl",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_WORKLOAD,
    .description =
	"The scheduling structure of a workload: templates of its pod groups and composite pod "
	"groups (KEP-6012).",
    .validate = pk_validate_workload,
};

const struct pk_type pk_type_pod_group = {
    .kind = "PodGroup",
    .plural = "podgroups",
    SCHED("v1alpha3"),
    .short_names = "pg",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_POD_GROUP,
    .description =
	"A set of pods scheduled together: a gang of at least minCount, or each on its own "
	"(KEP-6012).",
    .validate = pk_validate_group,
};

const struct pk_type pk_type_composite_pod_group = {
    .kind = "CompositePodGroup",
    .plural = "compositepodgroups",
    SCHED("v1alpha3"),
    .short_names = "cpg",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_COMPOSITE_POD_GROUP,
    .description =
	"A group of pod groups and composite pod groups placed together within a topology domain "
	"(KEP-6012).",
    .validate = pk_validate_group,
};

const struct pk_type pk_type_job = {
    .kind = "Job",
    .plural = "jobs",
    GROUP("batch", "v1"),
    .short_names = "",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_JOB,
    .description = "Pods run to completion; podkernel's builder compiles its Workload and groups "
		   "(KEP-6089).",
    .validate = pk_validate_meta,
};

const struct pk_type pk_type_jobset = {
    .kind = "JobSet",
    .plural = "jobsets",
    GROUP("jobset.x-k8s.io", "v1alpha2"),
    .short_names = "js",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_JOBSET,
    .description =
	"A set of Jobs replicated from templates (a custom resource upstream); podkernel's "
	"controller compiles its Workload and groups from spec.scheduling (KEP-6089).",
    .validate = pk_validate_meta,
};

const struct pk_type pk_type_lease = {
    .kind = "Lease",
    .plural = "leases",
    GROUP("coordination.k8s.io", "v1"),
    .short_names = "",
    .namespaced = true,
    .has_status = false,
    .pk = PK_KIND_LEASE,
    .description = "A lease held by a holder for a duration (node heartbeats, leader election).",
    .validate = pk_validate_lease,
};

const struct pk_type pk_type_device_class = {
    .kind = "DeviceClass",
    .plural = "deviceclasses",
    RESOURCE,
    .short_names = "",
    .namespaced = false,
    .has_status = false,
    .pk = PK_KIND_DEVICE_CLASS,
    .description = "A class of devices: the selectors and configuration a request of it gets.",
    .validate = pk_validate_dra,
};

const struct pk_type pk_type_resource_claim = {
    .kind = "ResourceClaim",
    .plural = "resourceclaims",
    RESOURCE,
    .short_names = "",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_RESOURCE_CLAIM,
    .description =
	"A request for devices; its status holds the allocation the scheduler wrote and the pods "
	"it is reserved for.",
    .validate = pk_validate_dra,
};

const struct pk_type pk_type_resource_claim_template = {
    .kind = "ResourceClaimTemplate",
    .plural = "resourceclaimtemplates",
    RESOURCE,
    .short_names = "",
    .namespaced = true,
    .has_status = false,
    .pk = PK_KIND_RESOURCE_CLAIM_TEMPLATE,
    .description = "The spec of the ResourceClaims made for each pod that names the template.",
    .validate = pk_validate_dra,
};

const struct pk_type pk_type_resource_slice = {
    .kind = "ResourceSlice",
    .plural = "resourceslices",
    RESOURCE,
    .short_names = "",
    .namespaced = false,
    .has_status = false,
    .pk = PK_KIND_RESOURCE_SLICE,
    .description =
	"Devices a DRA driver publishes for a node or a set of nodes, with their attributes and "
	"capacity.",
    .validate = pk_validate_dra,
};

const struct pk_type pk_type_persistent_volume_claim = {
    .kind = "PersistentVolumeClaim",
    .plural = "persistentvolumeclaims",
    CORE("v1"),
    .short_names = "pvc",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_PERSISTENT_VOLUME_CLAIM,
    .description =
	"A user's request for storage; the scheduler places a pod only where its claims can be "
	"bound (VolumeBinding).",
    .validate = pk_validate_storage,
};

const struct pk_type pk_type_persistent_volume = {
    .kind = "PersistentVolume",
    .plural = "persistentvolumes",
    CORE("v1"),
    .short_names = "pv",
    .namespaced = false,
    .has_status = true,
    .pk = PK_KIND_PERSISTENT_VOLUME,
    .description = "A piece of storage, with the nodes that can reach it.",
    .validate = pk_validate_storage,
};

const struct pk_type pk_type_storage_class = {
    .kind = "StorageClass",
    .plural = "storageclasses",
    STORAGE,
    .short_names = "sc",
    .namespaced = false,
    .has_status = false,
    .pk = PK_KIND_STORAGE_CLASS,
    .description = "A class of storage: its provisioner, binding mode and allowed topologies.",
    .validate = pk_validate_storage,
};

const struct pk_type pk_type_csi_node = {
    .kind = "CSINode",
    .plural = "csinodes",
    STORAGE,
    .short_names = "",
    .namespaced = false,
    .has_status = false,
    .pk = PK_KIND_CSI_NODE,
    .description = "The CSI drivers of a node and how many volumes each attaches.",
    .validate = pk_validate_storage,
};

const struct pk_type pk_type_pod_disruption_budget = {
    .kind = "PodDisruptionBudget",
    .plural = "poddisruptionbudgets",
    GROUP("policy", "v1"),
    .short_names = "pdb",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_POD_DISRUPTION_BUDGET,
    .description =
	"How many of the pods a selector picks may be down at once; the eviction subresource "
	"refuses (429) an eviction that would go below it, a gang's disruption unit counted whole.",
    .validate = pk_validate_budget,
};

const struct pk_type pk_type_resource_flavor = {
    .kind = "ResourceFlavor",
    .plural = "resourceflavors",
    KUEUE,
    .short_names = "rf",
    .namespaced = false,
    .has_status = false,
    .pk = PK_KIND_RESOURCE_FLAVOR,
    .description = DESC_RESOURCE_FLAVOR,
    .validate = pk_validate_kueue,
};

const struct pk_type pk_type_cluster_queue = {
    .kind = "ClusterQueue",
    .plural = "clusterqueues",
    KUEUE,
    .short_names = "cq",
    .namespaced = false,
    .has_status = true,
    .pk = PK_KIND_CLUSTER_QUEUE,
    .description = DESC_CLUSTER_QUEUE,
    .validate = pk_validate_kueue,
};

const struct pk_type pk_type_local_queue = {
    .kind = "LocalQueue",
    .plural = "localqueues",
    KUEUE,
    .short_names = "lq",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_LOCAL_QUEUE,
    .description = DESC_LOCAL_QUEUE,
    .validate = pk_validate_kueue,
};

const struct pk_type pk_type_leader_worker_set = {
    .kind = "LeaderWorkerSet",
    .plural = "leaderworkersets",
    GROUP("leaderworkerset.x-k8s.io", "v1"),
    .short_names = "lws",
    .namespaced = true,
    .has_status = true,
    .pk = PK_KIND_LEADER_WORKER_SET,
    .description =
	"Replicas of a leader pod and its workers (a custom resource upstream); podkernel's "
	"controller compiles each replica into a gang and the set into a CompositePodGroup.",
    .validate = pk_validate_meta,
};

const struct pk_type pk_type_cohort = {
    .kind = "Cohort",
    .plural = "cohorts",
    KUEUE,
    .short_names = "",
    .namespaced = false,
    .has_status = true,
    .pk = PK_KIND_COHORT,
    .description = DESC_COHORT,
    .validate = pk_validate_kueue,
};

const struct pk_type pk_type_workload_priority_class = {
    .kind = "WorkloadPriorityClass",
    .plural = "workloadpriorityclasses",
    KUEUE,
    .short_names = "",
    .namespaced = false,
    .has_status = false,
    .pk = PK_KIND_WORKLOAD_PRIORITY_CLASS,
    .description = DESC_WORKLOAD_PRIORITY_CLASS,
    .validate = pk_validate_workload_priority_class,
};

const struct pk_type pk_type_topology = {
    .kind = "Topology",
    .plural = "topologies",
    KUEUE,
    .short_names = "",
    .namespaced = false,
    .has_status = false,
    .pk = PK_KIND_TOPOLOGY,
    .description = DESC_TOPOLOGY,
    .validate = pk_validate_topology,
};

/* Stored and served; nothing in C reads it, so it has no typed view. */
static const struct pk_type pk_type_config_map = {
    .kind = "ConfigMap",
    .plural = "configmaps",
    CORE("v1"),
    .short_names = "cm",
    .namespaced = true,
    .has_status = false,
    .pk = PK_KIND_UNKNOWN,
    .description = "Configuration data (data: strings, binaryData: base64) for pods to consume.",
    .validate = pk_validate_config_map,
};

const struct pk_type *const pk_types[] = {
    &pk_type_node,
    &pk_type_pod,
    &pk_type_namespace,
    &pk_type_event,
    &pk_type_event_v1,
    &pk_type_priority_class,
    &pk_type_workload,
    &pk_type_pod_group,
    &pk_type_composite_pod_group,
    &pk_type_job,
    &pk_type_jobset,
    &pk_type_lease,
    &pk_type_device_class,
    &pk_type_resource_claim,
    &pk_type_resource_claim_template,
    &pk_type_resource_slice,
    &pk_type_persistent_volume_claim,
    &pk_type_persistent_volume,
    &pk_type_storage_class,
    &pk_type_csi_node,
    &pk_type_pod_disruption_budget,
    &pk_type_resource_flavor,
    &pk_type_cluster_queue,
    &pk_type_local_queue,
    &pk_type_leader_worker_set,
    &pk_type_cohort,
    &pk_type_workload_priority_class,
    &pk_type_topology,
    &pk_type_config_map,
    NULL,
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
     PK_KIND_WORKLOAD_PRIORITY_CLASS, DESC_WORKLOAD_PRIORITY_CLASS,
     pk_validate_workload_priority_class, &pk_kueue_v1beta1_same},
    {"Topology", "topologies", KUEUE_V1BETA1, "", false, false, PK_KIND_TOPOLOGY, DESC_TOPOLOGY,
     pk_validate_topology, &pk_kueue_v1beta1_same},
    {NULL},
};

const struct pk_type *pk_type_served(size_t i)
{
	size_t n = 0;

	while (pk_types[n])
		n++;
	if (i < n)
		return pk_types[i];
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
	const struct pk_type *s = t ? pk_type_of(t->pk) : NULL;

	return s ? s : t;
}

const struct pk_type *pk_type_by_kind(const char *kind)
{
	for (const struct pk_type *const *p = pk_types, *t; kind && (t = *p); p++)
		if (t->kind[0] == kind[0] && strcmp(t->kind, kind) == 0) /* every object asks */
			return t;
	return NULL;
}

const struct pk_type *pk_type_by_resource(const char *group, const char *plural)
{
	for (const struct pk_type *const *p = pk_types, *t; group && plural && (t = *p); p++)
		if (strcmp(t->group, group) == 0 && strcmp(t->plural, plural) == 0)
			return t;
	return NULL;
}

const struct pk_type *pk_type_of(enum pk_kind kind)
{
	if (kind <= PK_KIND_UNKNOWN || kind >= _PK_KIND_MAX)
		return NULL;
	for (const struct pk_type *const *p = pk_types, *t; (t = *p); p++)
		if (t->pk == kind)
			return t;
	return NULL;
}

const char *pk_obj_key(char *buf, size_t len, const struct pk_type *t, const char *ns,
		       const char *name)
{
	const char *part[] = {t ? t->kind : "", "/", ns, "/", name ? name : ""};
	size_t at = 0;

	if (t && !t->namespaced)
		part[2] = "";
	else if (!ns || !*ns)
		part[2] = "default";
	/* "%s/%s/%s" without printf: every write asks for a key or two */
	for (size_t i = 0; i < ELEMENTSOF(part); i++) {
		size_t n = strlen(part[i]);

		if (n >= len - at)
			return NULL;
		memcpy(buf + at, part[i], n);
		at += n;
	}
	buf[at] = '\0';
	return buf;
}

const char *pk_kind_to_string(enum pk_kind kind)
{
	const struct pk_type *t = pk_type_of(kind);

	return t ? t->kind : NULL;
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
/*
 * obj's "kind" and "apiVersion" in one walk of its keys: an object has a few
 * top-level keys, and a walk costs less than two hashed lookups, which every
 * walk of a cluster's objects pays for each object.  Past KIND_WALK_MAX keys,
 * the lookups.
 */
#define KIND_WALK_MAX 8

static void kind_fields(const json_t *obj, const json_t **ret_kind, const json_t **ret_av)
{
	json_t *o = (json_t *)obj; /* the iterator does not change it */
	size_t left = 2;

	*ret_kind = *ret_av = NULL;
	if (json_object_size(o) > KIND_WALK_MAX) {
		*ret_kind = json_object_get(o, "kind");
		*ret_av = json_object_get(o, "apiVersion");
		return;
	}
	for (void *it = json_object_iter(o); it && left; it = json_object_iter_next(o, it)) {
		const char *k = json_object_iter_key(it);

		if (k[0] == 'k' && strcmp(k, "kind") == 0) {
			*ret_kind = json_object_iter_value(it);
			left--;
		} else if (k[0] == 'a' && strcmp(k, "apiVersion") == 0) {
			*ret_av = json_object_iter_value(it);
			left--;
		}
	}
}

enum pk_kind pk_kind_of(const json_t *obj)
{
	const struct pk_type *t;
	const json_t *kind, *avj;
	const char *av;

	if (!json_is_object(obj))
		return PK_KIND_UNKNOWN;
	kind_fields(obj, &kind, &avj);
	t = pk_type_by_kind(json_string_value(kind));
	if (!t || t->pk == PK_KIND_UNKNOWN)
		return PK_KIND_UNKNOWN;
	av = json_string_value(avj);
	if (av && strcmp(av, t->api_version) != 0)
		return PK_KIND_UNKNOWN;
	return t->pk;
}

bool pk_kind_namespaced(enum pk_kind kind)
{
	const struct pk_type *t = pk_type_of(kind);

	return t ? t->namespaced : true;
}

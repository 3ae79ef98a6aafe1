/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.c — the resources attach mode reads and writes on the cluster.
 *
 * Which kinds are watched, in which order; the kinds table says their group,
 * version, plural and scope.  The workload kinds (Workload, PodGroup, CompositePodGroup) sit
 * in scheduling.k8s.io/v1alpha3 by default; --workload-api moves them to
 * another group/version (a CRD group on clusters that do not serve them),
 * and objects read from there are given the apiVersion the scheduler knows.
 * DeviceClasses, ResourceSlices and ResourceClaims are what kube-scheduler's
 * DRA plugin reads (templates are the cluster's claim controller's).  With
 * --queues=podkernel the Kueue kinds (kueue.x-k8s.io/v1beta2) and the Jobs
 * and JobSets they queue are watched too (and written: queues.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/attach/attach-internal.h"

/*
 * The kinds attach mode watches, in the order of enum at_res: names of rows
 * of the kinds table, which says each one's group, version, plural and scope.
 */
static const char *const watched[_AT_RES_MAX] = {
    [AT_RES_NODE] = "Node",
    [AT_RES_PRIORITY_CLASS] = "PriorityClass",
    [AT_RES_NAMESPACE] = "Namespace",
    [AT_RES_STORAGE_CLASS] = "StorageClass",
    [AT_RES_CSI_NODE] = "CSINode",
    [AT_RES_PERSISTENT_VOLUME] = "PersistentVolume",
    [AT_RES_PERSISTENT_VOLUME_CLAIM] = "PersistentVolumeClaim",
    [AT_RES_COMPOSITE_POD_GROUP] = "CompositePodGroup",
    [AT_RES_POD_GROUP] = "PodGroup",
    [AT_RES_WORKLOAD] = "Workload",
    [AT_RES_POD] = "Pod",
    [AT_RES_DEVICE_CLASS] = "DeviceClass",
    [AT_RES_RESOURCE_SLICE] = "ResourceSlice",
    [AT_RES_RESOURCE_CLAIM] = "ResourceClaim",
    [AT_RES_RESOURCE_FLAVOR] = "ResourceFlavor",
    [AT_RES_TOPOLOGY] = "Topology",
    [AT_RES_COHORT] = "Cohort",
    [AT_RES_CLUSTER_QUEUE] = "ClusterQueue",
    [AT_RES_LOCAL_QUEUE] = "LocalQueue",
    [AT_RES_WORKLOAD_PRIORITY_CLASS] = "WorkloadPriorityClass",
    [AT_RES_JOB] = "Job",
    [AT_RES_JOBSET] = "JobSet",
};

/* The kinds --workload-api moves. */
static bool workload_kind(const struct pk_type *t)
{
	return t && (t->pk == PK_KIND_WORKLOAD || t->pk == PK_KIND_POD_GROUP ||
		     t->pk == PK_KIND_COMPOSITE_POD_GROUP);
}

int at_api_init(struct at_api *api, const char *workload_api)
{
	const char *slash = workload_api ? strchr(workload_api, '/') : NULL;

	if (!slash || slash == workload_api || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - workload_api) >= sizeof(api->workload_group) ||
	    strlen(slash + 1) >= sizeof(api->workload_version))
		return -EINVAL;
	snprintf(api->workload_group, sizeof(api->workload_group), "%.*s",
		 (int)(slash - workload_api), workload_api);
	snprintf(api->workload_version, sizeof(api->workload_version), "%s", slash + 1);
	api->queues = false; /* the caller turns the queue kinds on */
	for (int i = 0; i < _AT_RES_MAX; i++) {
		const struct pk_type *t = pk_type_by_kind(watched[i]);
		bool moved = workload_kind(t);

		if (!t)
			return -EINVAL; /* not reached: every watched kind has a row */
		api->res[i] = (struct kube_resource){
		    t->kind, moved ? api->workload_group : t->group,
		    moved ? api->workload_version : t->version, t->plural, t->namespaced};
	}
	return 0;
}

bool at_api_watched(const struct at_api *api, int i)
{
	return i >= 0 && i < _AT_RES_MAX && (i < AT_RES_FIRST_QUEUES || api->queues);
}

const struct kube_resource *at_api_resource(const struct at_api *api, enum pk_kind kind)
{
	const struct pk_type *t = pk_type_of(kind);

	for (int i = 0; t && i < _AT_RES_MAX; i++)
		if (at_api_watched(api, i) && api->res[i].kind == t->kind)
			return &api->res[i];
	return NULL;
}

void at_api_normalize(json_t *obj)
{
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));

	if (workload_kind(t))
		json_object_set_new(obj, "apiVersion", json_string(t->api_version));
}

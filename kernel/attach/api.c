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
 * The kinds attach mode watches, in the order of enum at_res: rows of the
 * kinds table, which says each one's group, version, plural and scope.
 */
static const struct pk_type *const watched[_AT_RES_MAX] = {
    [AT_RES_NODE] = &pk_type_node,
    [AT_RES_PRIORITY_CLASS] = &pk_type_priority_class,
    [AT_RES_NAMESPACE] = &pk_type_namespace,
    [AT_RES_STORAGE_CLASS] = &pk_type_storage_class,
    [AT_RES_CSI_NODE] = &pk_type_csi_node,
    [AT_RES_PERSISTENT_VOLUME] = &pk_type_persistent_volume,
    [AT_RES_PERSISTENT_VOLUME_CLAIM] = &pk_type_persistent_volume_claim,
    [AT_RES_COMPOSITE_POD_GROUP] = &pk_type_composite_pod_group,
    [AT_RES_POD_GROUP] = &pk_type_pod_group,
    [AT_RES_WORKLOAD] = &pk_type_workload,
    [AT_RES_POD] = &pk_type_pod,
    [AT_RES_DEVICE_CLASS] = &pk_type_device_class,
    [AT_RES_RESOURCE_SLICE] = &pk_type_resource_slice,
    [AT_RES_RESOURCE_CLAIM] = &pk_type_resource_claim,
    [AT_RES_RESOURCE_FLAVOR] = &pk_type_resource_flavor,
    [AT_RES_TOPOLOGY] = &pk_type_topology,
    [AT_RES_COHORT] = &pk_type_cohort,
    [AT_RES_CLUSTER_QUEUE] = &pk_type_cluster_queue,
    [AT_RES_LOCAL_QUEUE] = &pk_type_local_queue,
    [AT_RES_WORKLOAD_PRIORITY_CLASS] = &pk_type_workload_priority_class,
    [AT_RES_JOB] = &pk_type_job,
    [AT_RES_JOBSET] = &pk_type_jobset,
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
		const struct pk_type *t = watched[i];
		bool moved = workload_kind(t);

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

const struct kube_resource *at_api_resource(const struct at_api *api, const struct pk_type *t)
{
	for (int i = 0; t && i < _AT_RES_MAX; i++)
		if (at_api_watched(api, i) && watched[i] == t)
			return &api->res[i];
	return NULL;
}

const struct pk_type *at_api_type(const struct at_api *api, const struct kube_resource *res)
{
	/* an informer keeps a copy of its resource: the same kind, group and version */
	for (int i = 0; res && res->kind && i < _AT_RES_MAX; i++)
		if (strcmp(api->res[i].kind, res->kind) == 0 &&
		    strcmp(api->res[i].group, res->group) == 0 &&
		    strcmp(api->res[i].version, res->version) == 0)
			return watched[i];
	return NULL;
}

void at_api_normalize(json_t *obj)
{
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));

	if (workload_kind(t))
		json_object_set_new(obj, "apiVersion", json_string(t->api_version));
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.c — the resources attach mode reads and writes on the cluster.
 *
 * One table: kind, group, version, plural and scope of every watched
 * resource.  The workload kinds (Workload, PodGroup, CompositePodGroup) sit
 * in scheduling.k8s.io/v1alpha3 by default; --workload-api moves them to
 * another group/version (a CRD group on clusters that do not serve them),
 * and objects read from there are given the apiVersion the scheduler knows.
 * DeviceClasses, ResourceSlices and ResourceClaims are what kube-scheduler's
 * DRA plugin reads (templates are the cluster's claim controller's).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/attach/attach-internal.h"

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
	api->res[AT_RES_NODE] = (struct kube_resource){"Node", "", "v1", "nodes", false};
	api->res[AT_RES_PRIORITY_CLASS] = (struct kube_resource){
	    "PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", false};
	api->res[AT_RES_NAMESPACE] =
	    (struct kube_resource){"Namespace", "", "v1", "namespaces", false};
	api->res[AT_RES_STORAGE_CLASS] =
	    (struct kube_resource){"StorageClass", "storage.k8s.io", "v1", "storageclasses", false};
	api->res[AT_RES_CSI_NODE] =
	    (struct kube_resource){"CSINode", "storage.k8s.io", "v1", "csinodes", false};
	api->res[AT_RES_PERSISTENT_VOLUME] =
	    (struct kube_resource){"PersistentVolume", "", "v1", "persistentvolumes", false};
	api->res[AT_RES_PERSISTENT_VOLUME_CLAIM] = (struct kube_resource){
	    "PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", true};
	api->res[AT_RES_COMPOSITE_POD_GROUP] =
	    (struct kube_resource){"CompositePodGroup", api->workload_group, api->workload_version,
				   "compositepodgroups", true};
	api->res[AT_RES_POD_GROUP] = (struct kube_resource){
	    "PodGroup", api->workload_group, api->workload_version, "podgroups", true};
	api->res[AT_RES_WORKLOAD] = (struct kube_resource){
	    "Workload", api->workload_group, api->workload_version, "workloads", true};
	api->res[AT_RES_POD] = (struct kube_resource){"Pod", "", "v1", "pods", true};
	api->res[AT_RES_DEVICE_CLASS] =
	    (struct kube_resource){"DeviceClass", "resource.k8s.io", "v1", "deviceclasses", false};
	api->res[AT_RES_RESOURCE_SLICE] = (struct kube_resource){"ResourceSlice", "resource.k8s.io",
								 "v1", "resourceslices", false};
	api->res[AT_RES_RESOURCE_CLAIM] = (struct kube_resource){"ResourceClaim", "resource.k8s.io",
								 "v1", "resourceclaims", true};
	return 0;
}

const struct kube_resource *at_api_resource(const struct at_api *api, enum pk_kind kind)
{
	const char *name = pk_kind_to_string(kind);

	for (int i = 0; name && i < _AT_RES_MAX; i++)
		if (strcmp(api->res[i].kind, name) == 0)
			return &api->res[i];
	return NULL;
}

void at_api_normalize(json_t *obj)
{
	enum pk_kind k = pk_kind_from_string(json_string_value(json_object_get(obj, "kind")));

	if (k == PK_KIND_WORKLOAD || k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP)
		json_object_set_new(obj, "apiVersion", json_string(pk_kind_api_version(k)));
}

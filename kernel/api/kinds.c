/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kinds.c — the one table of object kinds: name, apiVersion, whether objects
 * of the kind live in a namespace.  Parsers, printers and validation all read
 * this table, so a kind is added in exactly one place.
 */
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"

static const struct pk_kind_info kinds[_PK_KIND_MAX] = {
	[PK_KIND_NODE] = { "Node", "v1", false },
	[PK_KIND_POD] = { "Pod", "v1", true },
	[PK_KIND_PRIORITY_CLASS] = { "PriorityClass", "scheduling.k8s.io/v1", false },
	[PK_KIND_WORKLOAD] = { "Workload", "scheduling.k8s.io/v1alpha3", true },
	[PK_KIND_POD_GROUP] = { "PodGroup", "scheduling.k8s.io/v1alpha3", true },
	[PK_KIND_COMPOSITE_POD_GROUP] = { "CompositePodGroup", "scheduling.k8s.io/v1alpha3", true },
	[PK_KIND_JOB] = { "Job", "batch/v1", true },
	[PK_KIND_JOBSET] = { "JobSet", "jobset.x-k8s.io/v1alpha2", true },
	[PK_KIND_LEASE] = { "Lease", "coordination.k8s.io/v1", true },
};

const struct pk_kind_info *pk_kind_info(enum pk_kind kind)
{
	if (kind <= PK_KIND_UNKNOWN || kind >= _PK_KIND_MAX)
		return NULL;
	return &kinds[kind];
}

const char *pk_kind_to_string(enum pk_kind kind)
{
	const struct pk_kind_info *k = pk_kind_info(kind);

	return k ? k->name : NULL;
}

enum pk_kind pk_kind_from_string(const char *s)
{
	if (!s)
		return PK_KIND_UNKNOWN;
	for (int k = PK_KIND_UNKNOWN + 1; k < _PK_KIND_MAX; k++)
		if (strcmp(kinds[k].name, s) == 0)
			return (enum pk_kind)k;
	return PK_KIND_UNKNOWN;
}

const char *pk_kind_api_version(enum pk_kind kind)
{
	const struct pk_kind_info *k = pk_kind_info(kind);

	return k ? k->api_version : NULL;
}

/*
 * An object whose apiVersion is absent is taken at its kind's word (hand-built
 * trees, tests); one whose apiVersion names another group or version is not
 * the kind podkernel knows, so it is unknown.
 */
enum pk_kind pk_kind_of(const json_t *obj)
{
	const char *av;
	enum pk_kind kind;

	if (!json_is_object(obj))
		return PK_KIND_UNKNOWN;
	kind = pk_kind_from_string(json_string_value(json_object_get(obj, "kind")));
	if (kind == PK_KIND_UNKNOWN)
		return kind;
	av = json_string_value(json_object_get(obj, "apiVersion"));
	if (av && strcmp(av, kinds[kind].api_version) != 0)
		return PK_KIND_UNKNOWN;
	return kind;
}

bool pk_kind_namespaced(enum pk_kind kind)
{
	const struct pk_kind_info *k = pk_kind_info(kind);

	return k ? k->namespaced : true;
}

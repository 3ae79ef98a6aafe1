/* SPDX-License-Identifier: Apache-2.0 */
/*
 * convert_kueue.c — Kueue's kueue.x-k8s.io/v1beta1 to and from v1beta2, the
 * version stored, as Kueue's own conversion functions convert them
 * (the *_conversion.go files of apis/kueue/v1beta1 upstream):
 *
 *   ClusterQueue  spec.cohort <-> spec.cohortName; spec.admissionChecks (a
 *                 list of names, v1beta1 only) -> spec.admissionChecksStrategy
 *                 .admissionChecks[].name; spec.flavorFungibility's
 *                 whenCanBorrow Borrow and whenCanPreempt Preempt ->
 *                 MayStopSearch; status.pendingWorkloadsStatus (v1beta1
 *                 only) is dropped, and spec.concurrentAdmissionPolicy
 *                 (v1beta2 only) on the way out.
 *   LocalQueue    status.flavorUsage <-> status.flavorsUsage; status.flavors
 *                 (v1beta1 only) is dropped.
 *   ClusterQueue, Cohort  status.fairSharing.admissionFairSharingStatus
 *                 (v1beta1 only there) is dropped.
 *   ResourceFlavor, WorkloadPriorityClass, Topology, Cohort's spec: the same
 *                 fields in both (Cohort's spec.parentName included).
 *
 * What is dropped is status the queue controller writes, as Kueue drops it.
 * A v1beta1 field podkernel refuses is refused by its v1beta1 path:
 * spec.admissionChecks, as v1beta2's spec.admissionChecksStrategy is.
 */
#include <string.h>

#include "kernel/api/api-internal.h"

static const char *const cluster_queue_renames[][2] = {
    {"spec.cohortName", "spec.cohort"},
};

static const char *const local_queue_renames[][2] = {
    {"status.flavorsUsage", "status.flavorUsage"},
};

static void del(json_t *obj, const char *parent, const char *key)
{
	json_t *p = pk_get(obj, parent);

	if (json_is_object(p))
		json_object_del(p, key);
}

/* A v1beta1 value of flavorFungibility.<key> renamed in v1beta2. */
static void fungibility_value(json_t *ff, const char *key, const char *old)
{
	const char *v = json_string_value(json_object_get(ff, key));

	if (v && strcmp(v, old) == 0)
		json_object_set_new(ff, key, json_string("MayStopSearch"));
}

/* spec.admissionChecks: [NAME...] -> spec.admissionChecksStrategy.admissionChecks[{name}]. */
static void admission_checks(json_t *spec, struct pk_errors *errs)
{
	json_t *checks = json_object_get(spec, "admissionChecks"), *rules, *it;
	size_t i;

	if (!json_is_array(checks) || json_array_size(checks) == 0) {
		json_object_del(spec, "admissionChecks");
		return;
	}
	pk_errors_add(errs, "spec.admissionChecks: Forbidden: not implemented (admission checks "
			    "are not implemented)");
	rules = json_array();
	json_array_foreach(checks, i, it)
	    json_array_append_new(rules, json_pack("{s:O}", "name", it));
	json_object_set_new(spec, "admissionChecksStrategy",
			    json_pack("{s:o}", "admissionChecks", rules));
	json_object_del(spec, "admissionChecks");
}

static void cluster_queue_in(json_t *obj, struct pk_errors *errs)
{
	json_t *spec = json_object_get(obj, "spec");
	json_t *ff = json_object_get(spec, "flavorFungibility");

	if (json_is_object(spec))
		admission_checks(spec, errs);
	if (json_is_object(ff)) {
		fungibility_value(ff, "whenCanBorrow", "Borrow");
		fungibility_value(ff, "whenCanPreempt", "Preempt");
	}
	del(obj, "status", "pendingWorkloadsStatus");
	del(obj, "status.fairSharing", "admissionFairSharingStatus");
}

static void cluster_queue_out(json_t *obj)
{
	del(obj, "spec", "concurrentAdmissionPolicy");
}

static void local_queue_in(json_t *obj, struct pk_errors *errs)
{
	(void)errs;
	del(obj, "status", "flavors");
}

static void cohort_in(json_t *obj, struct pk_errors *errs)
{
	(void)errs;
	del(obj, "status.fairSharing", "admissionFairSharingStatus");
}

const struct pk_conversion pk_kueue_v1beta1_cluster_queue = {cluster_queue_renames, 1,
							     cluster_queue_in, cluster_queue_out};
const struct pk_conversion pk_kueue_v1beta1_local_queue = {local_queue_renames, 1, local_queue_in,
							   NULL};
const struct pk_conversion pk_kueue_v1beta1_cohort = {NULL, 0, cohort_in, NULL};
const struct pk_conversion pk_kueue_v1beta1_same = {NULL, 0, NULL, NULL};

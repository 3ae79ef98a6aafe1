/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_kueue_topology.c — Kueue's Topology (kueue.x-k8s.io/v1beta2,
 * cluster-scoped): spec.levels, one to 16, each a nodeLabel (a label key),
 * from the outermost level (a block) to the innermost (a host); labels
 * unique; kubernetes.io/hostname only as the last level.  Kueue's CRD rules,
 * at their field paths.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "topology/topology.h"

#define MAX_LEVELS 16
#define HOSTNAME "kubernetes.io/hostname"

static void check_level(struct pk_vctx *v, const json_t *levels, size_t i, size_t n)
{
	const json_t *level = json_array_get(levels, i);
	const char *label;
	char why[400];
	size_t old = pk_path_index(&v->p, i);

	if (!json_is_object(level)) {
		pk_vctx_fail(v, NULL, "Invalid value: must be an object", NULL);
		pk_path_pop(&v->p, old);
		return;
	}
	label = pk_vctx_string(v, level, "nodeLabel", true);
	if (label && *label && !topo_label_key_valid(label, why, sizeof(why)))
		pk_vctx_fail(v, "nodeLabel", "Invalid value: %s", why);
	for (size_t k = 0; label && k < i; k++)
		if (strcmp(label, pk_get_string(json_array_get(levels, k), "nodeLabel") ?: "") ==
		    0) {
			snprintf(why, sizeof(why), "\"%s\": must be unique", label);
			pk_vctx_fail(v, "nodeLabel", "Duplicate value: %s", why);
			break;
		}
	if (label && strcmp(label, HOSTNAME) == 0 && i + 1 < n)
		pk_vctx_fail(v, "nodeLabel",
			     "Invalid value: \"%s\": the kubernetes.io/hostname label can only be "
			     "used at the lowest level of topology",
			     label);
	pk_path_pop(&v->p, old);
}

void pk_validate_topology(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_vctx v = {.errs = errs};
	const json_t *spec, *levels;
	size_t old, o2, n;

	pk_validate_meta(obj, t, errs);
	spec = pk_vctx_object(&v, obj, "spec");
	if (!spec) {
		if (!json_object_get(obj, "spec"))
			pk_errors_add(errs, "spec: Required value");
		return;
	}
	old = pk_path_key(&v.p, "spec");
	levels = pk_vctx_array(&v, spec, "levels", MAX_LEVELS);
	n = json_array_size(levels);
	if (!json_object_get(spec, "levels") || (json_is_array(levels) && n == 0))
		pk_vctx_fail(&v, "levels", "Required value: at least one level", NULL);
	o2 = pk_path_key(&v.p, "levels");
	for (size_t i = 0; i < n; i++)
		check_level(&v, levels, i, n);
	pk_path_pop(&v.p, o2);
	pk_path_pop(&v.p, old);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fields.c — what a pod may say about its placement that this scheduler does
 * not implement.  kube-scheduler reads more of a pod than the core honours;
 * binding such a pod as if the field were not there gives placements the
 * user did not ask for (or that kubelet rejects), so the pod is refused:
 * UnschedulableAndUnresolvable, with a message naming the field path.  The
 * docs/scheduling.md's table of pod fields lists what is honoured and what is refused.
 * (Volumes are volumes.c's: claims are bound, inline disks it does not
 * check for conflicts are refused there.)
 * spec.preemptionPolicy is read here too: a root with a pending pod that
 * says Never does not preempt (preempt.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"

static int fields_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *spec = json_object_get(obj, "spec"),
	       *pp = json_object_get(spec, "preemptionPolicy");

	(void)s;
	if (pp && !json_is_null(pp)) {
		const char *v = json_string_value(pp);

		if (!v || (strcmp(v, "Never") != 0 && strcmp(v, "PreemptLowerPriority") != 0)) {
			sc_buf_printf(why, "spec.preemptionPolicy: Never or PreemptLowerPriority "
					   "expected");
			return -EINVAL;
		}
		pod->cons->never_preempt = strcmp(v, "Never") == 0;
	}
	if (json_object_size(json_object_get(spec, "resources"))) {
		sc_buf_printf(why, "spec.resources: pod-level resources are not implemented by "
				   "this scheduler (set them per container)");
		return -EINVAL;
	}
	return 0;
}

const struct sc_plugin_ops sc_plugin_fields = {
    .name = "UnimplementedFields",
    .parse = fields_parse,
};

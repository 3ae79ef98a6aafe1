/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gates.c — spec.schedulingGates (kube-scheduler's SchedulingGates plugin).
 *
 * A pod with gates is never placed: PreEnqueue (sc_group_admissible) holds
 * back its root, so a gang waits while any member is gated, and the gated
 * pods are told SchedulingGated as kube-scheduler tells them.  Removing the
 * last gate is an update of the pod, which touches its group and wakes the
 * root.  The plugin has no filter: a gated pod never reaches placement.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"

static int gates_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *gates = json_object_get(json_object_get(obj, "spec"), "schedulingGates");
	size_t n = json_array_size(gates);

	(void)s;
	if (gates && !json_is_array(gates) && !json_is_null(gates)) {
		sc_buf_printf(why, "spec.schedulingGates: a list expected");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name =
		    json_string_value(json_object_get(json_array_get(gates, i), "name"));

		if (!name || !*name) {
			sc_buf_printf(why, "spec.schedulingGates[%zu].name: Required value", i);
			return -EINVAL;
		}
		if (!pod->cons->gate0 && !(pod->cons->gate0 = strdup(name)))
			return -ENOMEM;
	}
	pod->cons->ngates = n;
	return 0;
}

const struct sc_plugin_ops sc_plugin_gates = {
    .name = "SchedulingGates",
    .parse = gates_parse,
};

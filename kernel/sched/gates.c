/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gates.c — spec.schedulingGates (kube-scheduler's SchedulingGates plugin).
 *
 * A pod with gates is never placed: the plugin's PreEnqueue says what it
 * waits for, the gang admission (sc_group_admissible) holds back its root
 * accordingly, and the gated pods are told SchedulingGated as
 * kube-scheduler tells them.  Removing the last gate is an update of the
 * pod, which touches its group and wakes the root.  The plugin has no
 * filter: a gated pod never reaches placement.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"

/* What kube-scheduler tells a pod with scheduling gates. */
#define GATED_MESSAGE "Scheduling is blocked due to non-empty scheduling gates"

static int gates_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *gates = json_object_get(json_object_get(obj, "spec"), "schedulingGates");
	size_t n = json_array_size(gates);
	const char *first = NULL;
	char *what;

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
		first = first ? first : name;
	}
	if (!n)
		return 0;
	/* the slot: what the pod waits for, naming its first gate */
	if (asprintf(&what, "has scheduling gates (%s)", first) < 0)
		return -ENOMEM;
	pod->cons->state[SC_PLUGIN_GATES] = what;
	return 0;
}

static void gates_release(struct pk_sched *s, struct sc_pod *pod)
{
	(void)s;
	free(pod->cons->state[SC_PLUGIN_GATES]);
	pod->cons->state[SC_PLUGIN_GATES] = NULL;
}

static const char *gates_pre_enqueue(const struct sc_pod *pod)
{
	return pod->cons->state[SC_PLUGIN_GATES];
}

const struct sc_plugin_ops sc_plugin_gates = {
    .name = "SchedulingGates",
    .parse = gates_parse,
    .release = gates_release,
    .pre_enqueue = gates_pre_enqueue,
    .wait_reason = "SchedulingGated",
    .wait_message = GATED_MESSAGE,
};

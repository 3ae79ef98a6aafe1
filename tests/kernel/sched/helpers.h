/* SPDX-License-Identifier: Apache-2.0 */
/*
 * helpers.h — small builders of API objects for the scheduling unit tests.
 * Objects are added to a scheduler at once through pk_sched_add, the same
 * path the programs use.
 */
#ifndef PODKERNEL_TESTS_SCHED_HELPERS_H
#define PODKERNEL_TESTS_SCHED_HELPERS_H

#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/sched/sched-internal.h"
#include "kernel/sched/sched.h"

static inline void add_obj(struct pk_sched *s, json_t *o)
{
	struct pk_errors errs = {0};
	int r;

	ck_assert_ptr_nonnull(o);
	r = pk_sched_add(s, o, &errs);
	if (r < 0)
		pk_errors_print(&errs, stderr, "add: ");
	ck_assert_int_eq(r, 0);
	pk_errors_clear(&errs);
	json_decref(o);
}

/* Node with cpu and pods allocatable and "k=v,k=v" labels. */
static inline void add_node(struct pk_sched *s, const char *name, const char *cpu,
			    const char *labels)
{
	json_t *l = json_object();
	char *copy = strdup(labels ? labels : ""), *save = NULL;

	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq)
			continue;
		*eq = '\0';
		json_object_set_new(l, kv, json_string(eq + 1));
	}
	free(copy);
	add_obj(s, json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:{s:s}}}", "apiVersion", "v1", "kind",
			     "Node", "metadata", "name", name, "labels", l, "status", "allocatable",
			     "cpu", cpu));
}

/* Pod requesting cpu, in group (or standalone), bound to node (or pending). */
static inline json_t *pod_obj(const char *name, const char *cpu, const char *group,
			      const char *node, int priority)
{
	json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}], s:i}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
			      "namespace", "default", "spec", "containers", "name", "c",
			      "resources", "requests", "cpu", cpu, "priority", priority);
	json_t *spec = json_object_get(p, "spec");

	if (group)
		json_object_set_new(spec, "schedulingGroup",
				    json_pack("{s:s}", "podGroupName", group));
	if (node)
		json_object_set_new(spec, "nodeName", json_string(node));
	return p;
}

static inline void add_pod(struct pk_sched *s, const char *name, const char *cpu, const char *group,
			   const char *node, int priority)
{
	add_obj(s, pod_obj(name, cpu, group, node, priority));
}

/*
 * Group object: composite or not, parent (or NULL), gang min (< 0: basic),
 * disruption "all"/"single"/NULL, workload name.
 */
static inline json_t *group_obj(bool composite, const char *name, const char *parent, int min,
				const char *disruption, const char *workload)
{
	json_t *g = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:s}}}", "apiVersion",
			      "scheduling.k8s.io/v1alpha3", "kind",
			      composite ? "CompositePodGroup" : "PodGroup", "metadata", "name",
			      name, "namespace", "default", "spec", "workloadRef", "workloadName",
			      workload ? workload : "app", "templateName", name);
	json_t *spec = json_object_get(g, "spec");

	if (parent)
		json_object_set_new(spec, "parentCompositePodGroupName", json_string(parent));
	if (min < 0)
		json_object_set_new(spec, "schedulingPolicy", json_pack("{s:{}}", "basic"));
	else
		json_object_set_new(
		    spec, "schedulingPolicy",
		    json_pack("{s:{s:i}}", "gang", composite ? "minGroupCount" : "minCount", min));
	if (disruption)
		json_object_set_new(spec, "disruptionMode", json_pack("{s:{}}", disruption));
	return g;
}

static inline void add_group(struct pk_sched *s, bool composite, const char *name,
			     const char *parent, int min, const char *disruption)
{
	add_obj(s, group_obj(composite, name, parent, min, disruption, NULL));
}

static inline struct pk_sched *new_sched(void)
{
	struct pk_sched_opts o = {.check = true};
	struct pk_sched *s = NULL;

	ck_assert_int_eq(pk_sched_new(&o, &s), 0);
	return s;
}

static inline struct sc_pod *find_pod(struct pk_sched *s, const char *name)
{
	char key[256];

	snprintf(key, sizeof(key), "default/%s", name);
	return pk_map_get(&s->forest.pods, key);
}

static inline struct sc_group *find_group(struct pk_sched *s, const char *name)
{
	char key[256];

	snprintf(key, sizeof(key), "default/%s", name);
	return sc_forest_group(&s->forest, key, false, false)
		   ?: sc_forest_group(&s->forest, key, true, false);
}

/* Run cycles until idle; returns the number of bindings and preemptions seen. */
static inline void run_until_idle(struct pk_sched *s, size_t *ret_bound, size_t *ret_preempted)
{
	size_t bound = 0, preempted = 0;
	int64_t now = 0;

	for (int i = 0; i < 1000; i++) {
		struct pk_sched_result *res = NULL;
		bool idle;

		ck_assert_int_eq(pk_sched_cycle(s, now, &res), 0);
		bound += res->bound;
		preempted += res->preempted;
		idle = res->nactions == 0 &&
		       (res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED);
		if (idle && res->has_retry) {
			now = res->retry_at_ms;
			idle = false;
		}
		pk_sched_result_free(res);
		if (idle)
			break;
	}
	if (ret_bound)
		*ret_bound = bound;
	if (ret_preempted)
		*ret_preempted = preempted;
}

#endif

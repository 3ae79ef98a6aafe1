/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_schedule.c — libFuzzer target for the whole offline path of
 * `podctl schedule`: read any bytes as objects, expand Jobs, JobSets and
 * LeaderWorkerSets with the workload builder, validate them, and run every
 * placement strategy until nothing more can be scheduled, with the snapshot
 * invariant checked after each cycle.
 *
 * Beyond crashes and sanitizer reports, two properties abort (a finding):
 * a node whose bound pods request more of a resource than it has, and a pod
 * bound to a node that does not exist.  Inputs are capped in object count so
 * one run stays fast; the cap is a fuzzing budget, not a product limit.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kernel/api/api.h"
#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers.h"
#include "kernel/sched/sched.h"

#define FUZZ_MAX_OBJECTS 64

/* Sum of one resource requested by the pods bound to node, "pods" as 1 each. */
static int64_t bound_request(const json_t *objects, const char *node, const char *resource)
{
	int64_t sum = 0;
	size_t i;
	json_t *obj;

	json_array_foreach(objects, i, obj)
	{
		struct pk_errors errs = {0};
		struct pk_pod *pod = NULL;

		if (pk_kind_of(obj) != PK_KIND_POD)
			continue;
		if (pk_pod_decode(obj, &pod, &errs) == 0 && pod->node_name &&
		    strcmp(pod->node_name, node) == 0)
			sum += strcmp(resource, "pods") == 0 ? 1000 : pk_pod_request(pod, resource);
		pk_pod_free(pod);
		pk_errors_clear(&errs);
	}
	return sum;
}

/* Index of the last Node called name at or after from, or -1. */
static ssize_t last_node(const json_t *objects, const char *name, size_t from)
{
	ssize_t found = -1;

	for (size_t i = from; i < json_array_size(objects); i++) {
		const json_t *obj = json_array_get(objects, i);

		if (pk_kind_of(obj) == PK_KIND_NODE && pk_name(obj) &&
		    strcmp(pk_name(obj), name) == 0)
			found = (ssize_t)i;
	}
	return found;
}

/* Bindings must name real nodes; what was bound before the run is trusted. */
static void check_result(const json_t *in, const json_t *out)
{
	size_t i, r;
	json_t *obj;

	json_array_foreach(out, i, obj)
	{
		struct pk_errors errs = {0};
		struct pk_node *node = NULL;

		if (pk_kind_of(obj) == PK_KIND_POD) {
			const char *bound = pk_get_string(obj, "spec.nodeName");
			const char *ns = pk_namespace(obj), *name = pk_name(obj);
			bool was_bound = false;
			size_t j;
			json_t *o;

			json_array_foreach(
			    in, j, o) if (pk_kind_of(o) == PK_KIND_POD && pk_name(o) && name &&
					  strcmp(pk_name(o), name) == 0 && ns && pk_namespace(o) &&
					  strcmp(pk_namespace(o), ns) == 0 &&
					  pk_get_string(o, "spec.nodeName")) was_bound = true;
			if (bound && !was_bound && last_node(out, bound, 0) < 0)
				abort();
			continue;
		}
		/* A name given twice: the scheduler keeps the last one. */
		if (pk_kind_of(obj) != PK_KIND_NODE || !pk_name(obj) ||
		    last_node(out, pk_name(obj), i) != (ssize_t)i ||
		    pk_node_decode(obj, &node, &errs) != 0) {
			pk_node_free(node);
			pk_errors_clear(&errs);
			continue;
		}
		for (r = 0; r < node->nallocatable; r++) {
			const char *res = node->allocatable[r].name;

			int64_t before = bound_request(in, node->meta.name, res);
			int64_t after = bound_request(out, node->meta.name, res);

			/* What was bound before the run is the input's business. */
			if (after > before && after > node->allocatable[r].milli)
				abort();
		}
		pk_node_free(node);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pk_errors errs = {0};
	json_t *objects = NULL, *expanded = NULL;
	char err[512];

	if (pk_read_buffer("fuzz", (const char *)data, size, &objects, err, sizeof(err)) != 0)
		return 0;
	if (json_array_size(objects) > FUZZ_MAX_OBJECTS ||
	    wb_expand_objects(objects, &expanded, &errs) != 0)
		goto out;
	/* As podctl schedule and the API server do: only valid objects go on. */
	for (size_t i = 0; i < json_array_size(expanded); i++)
		if (pk_validate(json_array_get(expanded, i), &errs) != 0)
			goto out;
	if (json_array_size(expanded) > 4 * FUZZ_MAX_OBJECTS)
		goto out;
	for (size_t i = 0; i < pk_sched_strategy_count(); i++) {
		struct pk_sched_opts opts = {
		    .strategy = pk_sched_strategy_name(i),
		    .check = true,
		    .controllers = pk_claims_pass,
		};
		json_t *result = NULL, *preempted = NULL;

		pk_errors_clear(&errs);
		int r = pk_sched_run(expanded, &opts, &result, &preempted, &errs);

		if (r == -EUCLEAN) /* the snapshot invariant broke */
			abort();
		if (r == 0)
			check_result(expanded, result);
		json_decref(result);
		json_decref(preempted);
	}
out:
	pk_errors_clear(&errs);
	json_decref(expanded);
	json_decref(objects);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_objects.c — libFuzzer target for the object model: read any bytes as
 * YAML/JSON objects, decode every object into its typed view, validate it,
 * count each PodDisruptionBudget over the input's objects, and check that
 * writing it as YAML or JSON and reading that back gives the
 * same tree.  Crashes, leaks, sanitizer reports and round-trip differences
 * (an abort) are findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"

static void round_trip(const json_t *obj, enum pk_format fmt)
{
	char *text = pk_write_string(obj, fmt), err[512];
	json_t *back = NULL;

	if (!text)
		abort();
	if (pk_read_buffer("rt", text, strlen(text), &back, err, sizeof(err)) != 0 ||
	    json_array_size(back) != 1 || !json_equal(json_array_get(back, 0), obj)) {
		/* A List-kind object is flattened on reading: not a round trip. */
		const char *kind = json_string_value(json_object_get(obj, "kind"));
		size_t n = kind ? strlen(kind) : 0;

		if (!(n >= 4 && strcmp(kind + n - 4, "List") == 0))
			abort();
	}
	json_decref(back);
	free(text);
}

static void decode(json_t *obj)
{
	struct pk_errors errs = {0};

	switch (pk_kind_of(obj)) {
	case PK_KIND_NODE: {
		struct pk_node *v = NULL;

		if (pk_node_decode(obj, &v, &errs) == 0)
			(void)pk_node_allocatable(v, "pods");
		pk_node_free(v);
		break;
	}
	case PK_KIND_POD: {
		struct pk_pod *v = NULL;

		if (pk_pod_decode(obj, &v, &errs) == 0)
			(void)pk_pod_request(v, "cpu");
		pk_pod_free(v);
		break;
	}
	case PK_KIND_PRIORITY_CLASS: {
		struct pk_priority_class *v = NULL;

		pk_priority_class_decode(obj, &v, &errs);
		pk_priority_class_free(v);
		break;
	}
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP: {
		struct pk_group *v = NULL;

		pk_group_decode(obj, &v, &errs);
		pk_group_free(v);
		break;
	}
	case PK_KIND_WORKLOAD: {
		struct pk_workload *v = NULL;

		pk_workload_decode(obj, &v, &errs);
		pk_workload_free(v);
		break;
	}
	default:
		break;
	}
	pk_errors_clear(&errs);
	pk_validate(obj, &errs);
	pk_errors_clear(&errs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	json_t *objs = NULL, *obj;
	size_t i;

	if (pk_read_buffer("fuzz", (const char *)data, size, &objs, err, sizeof(err)) != 0)
		return 0;
	json_array_foreach(objs, i, obj)
	{
		round_trip(obj, PK_FORMAT_YAML);
		round_trip(obj, PK_FORMAT_JSON);
		decode(obj);
		if (pk_kind_of(obj) == PK_KIND_POD_DISRUPTION_BUDGET) {
			struct pk_budget b;

			/* a budget counted over every object of the input as its pods */
			pk_budget_count(obj, objs, &b);
		}
	}
	json_decref(objs);
	return 0;
}

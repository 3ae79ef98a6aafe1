/* SPDX-License-Identifier: Apache-2.0 */
/*
 * table.c — meta.k8s.io/v1 Table output for kubectl.
 *
 * kubectl asks for "as=Table" and prints whatever columns the server sends,
 * so the columns of each kind are defined here, in one table of column
 * specs: a name, a type, a priority (1 = shown by -o wide only) and a cell
 * function.  Rows carry the object's metadata (PartialObjectMetadata) or,
 * with includeObject=Object, the whole object.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kernel/server/server-internal.h"

typedef json_t *(*cell_fn)(json_t *obj);

struct column {
	const char *name, *type;
	int priority;
	cell_fn cell;
};

static const char *sget(json_t *obj, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(obj, a), b));
}

static json_t *cell_name(json_t *o)
{
	return json_string(sget(o, "metadata", "name") ?: "");
}

static json_t *cell_age(json_t *o)
{
	const char *ts = sget(o, "metadata", "creationTimestamp");
	struct tm tm = {0};
	if (!ts || sscanf(ts, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return json_string("<unknown>");
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	long d = (long)(time(NULL) - timegm(&tm));
	char buf[32];
	if (d < 0)
		d = 0;
	if (d < 120)
		snprintf(buf, sizeof(buf), "%lds", d);
	else if (d < 7200)
		snprintf(buf, sizeof(buf), "%ldm", d / 60);
	else if (d < 172800)
		snprintf(buf, sizeof(buf), "%ldh", d / 3600);
	else
		snprintf(buf, sizeof(buf), "%ldd", d / 86400);
	return json_string(buf);
}

static json_t *condition_status(json_t *o, const char *type)
{
	json_t *conds = json_object_get(json_object_get(o, "status"), "conditions");
	size_t i;
	json_t *c;
	json_array_foreach(conds, i,
			   c) if (strcmp(json_string_value(json_object_get(c, "type")) ?: "",
					 type) == 0) return json_object_get(c, "status");
	return NULL;
}

static json_t *cell_node_status(json_t *o)
{
	const char *ready = json_string_value(condition_status(o, "Ready"));
	const char *base = !ready || strcmp(ready, "True") == 0 ? "Ready" : "NotReady";
	char buf[64];
	snprintf(buf, sizeof(buf), "%s%s", base,
		 json_is_true(json_object_get(json_object_get(o, "spec"), "unschedulable"))
		     ? ",SchedulingDisabled"
		     : "");
	return json_string(buf);
}

static json_t *cell_pod_status(json_t *o)
{
	if (sget(o, "metadata", "deletionTimestamp"))
		return json_string("Terminating");
	const char *phase = sget(o, "status", "phase");
	if (phase)
		return json_string(phase);
	return json_string(sget(o, "spec", "nodeName") ? "Scheduled" : "Pending");
}

static json_t *cell_pod_node(json_t *o)
{
	return json_string(sget(o, "spec", "nodeName") ?: "<none>");
}

static json_t *cell_pod_group(json_t *o)
{
	return json_string(pk_pod_group_name(o) ?: "<none>");
}

static json_t *cell_priority(json_t *o)
{
	json_t *p = json_object_get(json_object_get(o, "spec"), "priority");
	return json_integer(json_is_integer(p) ? json_integer_value(p) : 0);
}

static json_t *policy_of(json_t *o)
{
	return json_object_get(json_object_get(o, "spec"), "schedulingPolicy");
}

static json_t *cell_policy(json_t *o)
{
	return json_string(json_object_get(policy_of(o), "gang") ? "gang" : "basic");
}

static json_t *cell_min(json_t *o)
{
	json_t *gang = json_object_get(policy_of(o), "gang");
	json_t *m = json_object_get(gang, "minCount");
	if (!m)
		m = json_object_get(gang, "minGroupCount");
	return json_integer(json_is_integer(m) ? json_integer_value(m) : 0);
}

static json_t *cell_scheduled(json_t *o)
{
	const char *kind = json_string_value(json_object_get(o, "kind")) ?: "";
	json_t *s = condition_status(o, pk_kind_from_string(kind) == PK_KIND_POD_GROUP
					    ? "PodGroupInitiallyScheduled"
					    : "CompositePodGroupInitiallyScheduled");
	return json_string(json_string_value(s) ?: "Unknown");
}

static json_t *cell_parent(json_t *o)
{
	return json_string(sget(o, "spec", "parentCompositePodGroupName") ?: "<none>");
}

static json_t *cell_workload(json_t *o)
{
	json_t *ref = json_object_get(json_object_get(o, "spec"), "workloadRef");
	return json_string(json_string_value(json_object_get(ref, "workloadName")) ?: "<none>");
}

static json_t *cell_pc_value(json_t *o)
{
	json_t *v = json_object_get(o, "value");
	return json_integer(json_is_integer(v) ? json_integer_value(v) : 0);
}

static json_t *cell_pc_default(json_t *o)
{
	return json_boolean(json_is_true(json_object_get(o, "globalDefault")));
}

static json_t *cell_ns_status(json_t *o)
{
	return json_string(sget(o, "status", "phase") ?: "Active");
}

#define NAME_COL                                                                                   \
	{                                                                                          \
		"Name", "string", 0, cell_name                                                     \
	}
#define AGE_COL                                                                                    \
	{                                                                                          \
		"Age", "string", 0, cell_age                                                       \
	}

static const struct column node_cols[] = {
    NAME_COL, {"Status", "string", 0, cell_node_status}, AGE_COL, {NULL}};
static const struct column pod_cols[] = {
    NAME_COL, {"Status", "string", 0, cell_pod_status}, {"Node", "string", 0, cell_pod_node},
    AGE_COL,  {"Group", "string", 1, cell_pod_group},	{"Priority", "integer", 1, cell_priority},
    {NULL}};
static const struct column group_cols[] = {NAME_COL,
					   {"Policy", "string", 0, cell_policy},
					   {"Min", "integer", 0, cell_min},
					   {"Scheduled", "string", 0, cell_scheduled},
					   AGE_COL,
					   {"Parent", "string", 1, cell_parent},
					   {"Workload", "string", 1, cell_workload},
					   {"Priority", "integer", 1, cell_priority},
					   {NULL}};
static const struct column pc_cols[] = {NAME_COL,
					{"Value", "integer", 0, cell_pc_value},
					{"Global-Default", "boolean", 0, cell_pc_default},
					AGE_COL,
					{NULL}};
static const struct column ns_cols[] = {
    NAME_COL, {"Status", "string", 0, cell_ns_status}, AGE_COL, {NULL}};
static const struct column default_cols[] = {NAME_COL, AGE_COL, {NULL}};

static const struct column *columns_of(const struct pk_type *t)
{
	switch (t->pk) {
	case PK_KIND_NODE:
		return node_cols;
	case PK_KIND_POD:
		return pod_cols;
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		return group_cols;
	case PK_KIND_PRIORITY_CLASS:
		return pc_cols;
	default:
		return strcmp(t->kind, "Namespace") == 0 ? ns_cols : default_cols;
	}
}

bool pk_srv_wants_table(const char *accept)
{
	return accept && strstr(accept, "as=Table") != NULL;
}

json_t *pk_srv_table_of(const struct pk_type *t, json_t *items, bool with_header, bool full_object)
{
	const struct column *cols = columns_of(t);
	json_t *defs = json_array(), *rows = json_array();
	for (const struct column *c = cols; with_header && c->name; c++)
		json_array_append_new(defs,
				      json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", c->name, "type",
						c->type, "format", c == cols ? "name" : "",
						"description", "", "priority", c->priority));
	size_t i;
	json_t *obj;
	json_array_foreach(items, i, obj)
	{
		json_t *cells = json_array();
		for (const struct column *c = cols; c->name; c++)
			json_array_append_new(cells, c->cell(obj));
		json_t *row_obj =
		    full_object
			? json_incref(obj)
			: json_pack("{s:s,s:s,s:O}", "kind", "PartialObjectMetadata", "apiVersion",
				    "meta.k8s.io/v1", "metadata", json_object_get(obj, "metadata"));
		json_array_append_new(rows,
				      json_pack("{s:o,s:o}", "cells", cells, "object", row_obj));
	}
	return json_pack("{s:s,s:s,s:{},s:o,s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
			 "metadata", "columnDefinitions", defs, "rows", rows);
}

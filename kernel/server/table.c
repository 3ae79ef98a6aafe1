/* SPDX-License-Identifier: Apache-2.0 */
/*
 * table.c — meta.k8s.io/v1 Table output for kubectl.
 *
 * kubectl asks for "as=Table" and prints whatever columns the server sends,
 * so each kind's columns are defined in one table of column specs
 * (tables_kinds.c): a name, a type, a priority (1 = shown by -o wide only)
 * and either a cell function or a JSONPath, the way a CustomResourceDefinition's
 * additionalPrinterColumns say it (the CRDs attach mode installs are
 * generated from the same specs, crds.c).  The server sends every column,
 * as kube-apiserver does, and kubectl hides the wide ones.  Rows carry the
 * object's metadata (PartialObjectMetadata) or, with includeObject=Object,
 * the whole object.  The cells of an Event are computed on its core v1 shape,
 * whichever of its two groups it is served at.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kernel/server/server-internal.h"

/* upstream's duration.HumanDuration: "5s", "3m20s", "2h10m", "4d5h", "2y3d" */
void pk_srv_human_duration(int64_t s, char *buf, size_t len)
{
	int64_t m = s / 60, h = s / 3600, d = h / 24;

	if (s < -1)
		snprintf(buf, len, "<invalid>");
	else if (s < 0)
		snprintf(buf, len, "0s");
	else if (s < 120)
		snprintf(buf, len, "%llds", (long long)s);
	else if (m < 10 && s % 60)
		snprintf(buf, len, "%lldm%llds", (long long)m, (long long)(s % 60));
	else if (m < 180)
		snprintf(buf, len, "%lldm", (long long)m);
	else if (h < 8 && m % 60)
		snprintf(buf, len, "%lldh%lldm", (long long)h, (long long)(m % 60));
	else if (h < 48)
		snprintf(buf, len, "%lldh", (long long)h);
	else if (h < 24 * 8 && h % 24)
		snprintf(buf, len, "%lldd%lldh", (long long)d, (long long)(h % 24));
	else if (h < 24 * 365 * 2)
		snprintf(buf, len, "%lldd", (long long)d);
	else if (h < 24 * 365 * 8 && d % 365)
		snprintf(buf, len, "%lldy%lldd", (long long)(d / 365), (long long)(d % 365));
	else
		snprintf(buf, len, "%lldy", (long long)(d / 365));
}

json_t *pk_srv_cell_since(const char *ts)
{
	int64_t t;
	char buf[32];

	if (!ts || pk_time_parse(ts, &t) < 0)
		return json_string("<unknown>");
	pk_srv_human_duration((int64_t)time(NULL) - t, buf, sizeof(buf));
	return json_string(buf);
}

/*
 * The JSONPath subset printer columns use: ".a.b.c", and one filter on a
 * list, ".a.b[?(@.key==\"value\")].c" (a condition's status).  Borrowed
 * from obj; NULL: no value.
 */
json_t *pk_srv_json_path(json_t *obj, const char *path)
{
	char seg[128];

	while (obj && *path == '.') {
		size_t n = strcspn(++path, ".[");
		if (n == 0 || n >= sizeof(seg))
			return NULL;
		memcpy(seg, path, n);
		seg[n] = '\0';
		obj = json_object_get(obj, seg);
		path += n;
		if (*path != '[')
			continue;
		char key[64], want[128];
		int used = 0;
		if (sscanf(path, "[?(@.%63[^=]==\"%127[^\"]\")]%n", key, want, &used) != 2 || !used)
			return NULL;
		path += used;
		json_t *found = NULL, *it;
		size_t i;
		json_array_foreach(
		    obj, i, it) if (!found && json_is_string(json_object_get(it, key)) &&
				    strcmp(json_string_value(json_object_get(it, key)), want) == 0)
		    found = it;
		obj = found;
	}
	return *path ? NULL : obj;
}

/* A JSONPath column's cell, as kube-apiserver renders a CRD's column. */
static json_t *path_cell(const struct pk_srv_column *c, json_t *obj)
{
	json_t *v = pk_srv_json_path(obj, c->json_path);
	char buf[64];

	if (!v || json_is_null(v))
		return json_null();
	if (strcmp(c->type, "date") == 0)
		return pk_srv_cell_since(json_string_value(v));
	if (strcmp(c->type, "string") == 0 && !json_is_string(v)) {
		if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		else if (json_is_boolean(v))
			snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
		else
			return json_null();
		return json_string(buf);
	}
	return json_incref(v);
}

bool pk_srv_wants_table(const char *accept)
{
	return accept && strstr(accept, "as=Table") != NULL;
}

static json_t *row_of(const struct pk_type *t, const struct pk_srv_column *cols, json_t *obj,
		      bool full_object)
{
	json_t *cells = json_array();
	/* an Event's cells read its core shape */
	json_t *view =
	    pk_srv_event_type(t) ? pk_srv_event_view(&pk_type_event, obj) : json_incref(obj);

	for (const struct pk_srv_column *c = cols; c->name; c++)
		json_array_append_new(cells, c->cell ? c->cell(view) : path_cell(c, view));
	json_decref(view);
	json_t *meta = json_object_get(obj, "metadata");
	json_t *row_obj = full_object ? json_incref(obj)
				      : json_pack("{s:s,s:s,s:o}", "kind", "PartialObjectMetadata",
						  "apiVersion", "meta.k8s.io/v1", "metadata",
						  meta ? json_incref(meta) : json_object());
	return json_pack("{s:o,s:o}", "cells", cells, "object", row_obj);
}

json_t *pk_srv_table_of(const struct pk_type *t, json_t *items, bool with_header, bool full_object)
{
	const struct pk_srv_column *cols = pk_srv_columns_of(t);
	json_t *defs = json_array(), *rows = json_array();
	for (const struct pk_srv_column *c = cols; with_header && c->name; c++)
		json_array_append_new(
		    defs, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", c->name, "type",
				    strcmp(c->type, "date") == 0 ? "string" : c->type, "format",
				    strcmp(c->name, "Name") == 0 ? "name" : "", "description",
				    c->description ?: "", "priority", c->priority));
	size_t i;
	json_t *obj;
	json_array_foreach(items, i, obj)
	    json_array_append_new(rows, row_of(t, cols, obj, full_object));
	return json_pack("{s:s,s:s,s:{},s:o,s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
			 "metadata", "columnDefinitions", defs, "rows", rows);
}

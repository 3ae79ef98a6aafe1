/* SPDX-License-Identifier: Apache-2.0 */
/*
 * events.c — one Event resource in two shapes, as kube-apiserver serves it:
 * core v1 (/api/v1/.../events: message, involvedObject, source, count, ...)
 * and events.k8s.io/v1 (/apis/events.k8s.io/v1/.../events: note, regarding,
 * deprecatedSource, deprecatedCount, ...).
 *
 * The store keeps the core shape: what is written through events.k8s.io is
 * converted before it is stored, and what is read through events.k8s.io is
 * converted on the way out (get, list, watch, the answer of a write).  So
 * attach mode's Events (posted as events.k8s.io, kernel/attach/recorder.c)
 * are found by `kubectl describe` (a core list with involvedObject field
 * selectors) and shown with their reason by `kubectl events`.  The field
 * renames are kube-apiserver's conversions (pkg/apis/events/v1): note and
 * message, regarding and involvedObject, deprecatedSource and source, the
 * deprecated timestamps and count, reportingController and
 * reportingComponent; eventTime, series, reason, action, type, related and
 * reportingInstance have one name in both.  An object in the shape asked
 * for (a row stored before this conversion existed included) is served as
 * it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/macro.h"
#include "kernel/server/server-internal.h"

#define EVENTS_API "events.k8s.io/v1"

/* {core name, events.k8s.io name}: the fields with another name in the other shape. */
static const char *const renames[][2] = {
    {"message", "note"},
    {"involvedObject", "regarding"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
    {"reportingComponent", "reportingController"},
};

/* The fields both shapes share, under one name. */
static const char *const shared[] = {
    "metadata", "eventTime", "series", "reason", "action", "type", "related", "reportingInstance",
};

bool pk_srv_event_type(const struct pk_type *t)
{
	return t == &pk_type_event || t == &pk_type_event_v1;
}

bool pk_srv_event_api(const struct pk_type *t)
{
	return t == &pk_type_event_v1;
}

static bool is_events_shape(const json_t *ev)
{
	const char *av = json_string_value(json_object_get(ev, "apiVersion"));
	return av && strcmp(av, EVENTS_API) == 0;
}

/* ev (either shape) in the shape of to_events_api; a new object. */
static json_t *convert(const json_t *ev, bool to_events_api)
{
	json_t *out = json_pack("{s:s,s:s}", "apiVersion", to_events_api ? EVENTS_API : "v1",
				"kind", "Event");
	size_t from = to_events_api ? 0 : 1, to = to_events_api ? 1 : 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(shared); i++) {
		json_t *v = json_object_get(ev, shared[i]);
		if (v)
			json_object_set(out, shared[i], v);
	}
	for (size_t i = 0; i < ELEMENTSOF(renames); i++) {
		json_t *v = json_object_get(ev, renames[i][from]);
		if (v)
			json_object_set(out, renames[i][to], v);
	}
	return out;
}

json_t *pk_srv_event_view(const struct pk_type *t, json_t *obj)
{
	if (!pk_srv_event_type(t) || !json_is_object(obj) ||
	    pk_srv_event_api(t) == is_events_shape(obj))
		return json_incref(obj);
	return convert(obj, pk_srv_event_api(t));
}

bool pk_srv_event_needs_view(const struct pk_type *t, const json_t *obj)
{
	return pk_srv_event_type(t) && json_is_object(obj) &&
	       pk_srv_event_api(t) != is_events_shape(obj);
}

json_t *pk_srv_event_stored(const struct pk_type *t, json_t *obj)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));

	/* a body in the core shape already (apiVersion v1) is kept as it is */
	if (!pk_srv_event_api(t) || !json_is_object(obj) || (av && strcmp(av, EVENTS_API) != 0))
		return json_incref(obj);
	return convert(obj, false);
}

json_t *pk_srv_event_answer(const struct pk_type *t, json_t *body)
{
	const char *kind = json_string_value(json_object_get(body, "kind"));

	if (!pk_srv_event_type(t) || !kind || strcmp(kind, "Event") != 0)
		return body;
	json_t *out = pk_srv_event_view(t, body);
	json_decref(body);
	return out;
}

void pk_srv_event_items(const struct pk_type *t, json_t *items)
{
	size_t i;
	json_t *it;

	if (!pk_srv_event_type(t))
		return;
	json_array_foreach(items, i, it)
	{
		if (pk_srv_event_needs_view(t, it))
			json_array_set_new(items, i, pk_srv_event_view(t, it));
	}
}

/* An events.k8s.io field name ("regarding.name") as the stored core one
 * ("involvedObject.name"), in buf; key itself when it has one name. */
static const char *stored_field(const char *key, char *buf, size_t len)
{
	for (size_t i = 0; i < ELEMENTSOF(renames); i++) {
		size_t n = strlen(renames[i][1]);
		if (strncmp(key, renames[i][1], n) == 0 && (key[n] == '\0' || key[n] == '.')) {
			snprintf(buf, len, "%s%s", renames[i][0], key + n);
			return buf;
		}
	}
	return key;
}

int pk_srv_event_fields(const struct pk_type *t, struct pk_selector *fields)
{
	char buf[256];

	if (!pk_srv_event_api(t) || !fields)
		return 0;
	for (size_t i = 0; i < fields->nreqs; i++) {
		const char *key = stored_field(fields->reqs[i].key, buf, sizeof(buf));
		if (key == fields->reqs[i].key)
			continue;
		char *dup = strdup(key);
		if (!dup)
			return -ENOMEM;
		free(fields->reqs[i].key);
		fields->reqs[i].key = dup;
	}
	return 0;
}

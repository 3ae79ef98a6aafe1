/* SPDX-License-Identifier: Apache-2.0 */
/*
 * versions.c — a resource served in a shape other than the one stored, as
 * kube-apiserver serves an Event in two groups and a custom resource in
 * several versions: what is written in that shape is converted before it is
 * stored, and what is read in it is converted on the way out (get, list,
 * watch, the answer of a write).  Two kinds of such rows: the
 * events.k8s.io/v1 Event (events.c) and the rows of pk_type_versions[]
 * (Kueue's v1beta1 kinds, stored as v1beta2: kernel/api/convert_kueue.c).
 * The router calls these for every row; a row stored as it is served passes
 * through untouched.
 */
#include <string.h>

#include "kernel/server/server-internal.h"

bool pk_srv_converts(const struct pk_type *t)
{
	return t && (t->conversion || pk_srv_event_api(t));
}

const struct pk_type *pk_srv_stored_type(const struct pk_type *t)
{
	return pk_type_stored(t);
}

json_t *pk_srv_view(const struct pk_type *t, json_t *obj)
{
	return t && t->conversion ? pk_convert_from_storage(t, obj) : pk_srv_event_view(t, obj);
}

bool pk_srv_needs_view(const struct pk_type *t, const json_t *obj)
{
	return t && t->conversion ? json_is_object(obj) : pk_srv_event_needs_view(t, obj);
}

json_t *pk_srv_stored(const struct pk_type *t, json_t *obj, struct pk_errors *errs)
{
	return t && t->conversion ? pk_convert_to_storage(t, obj, errs)
				  : pk_srv_event_stored(t, obj);
}

json_t *pk_srv_answer(const struct pk_type *t, json_t *body)
{
	const char *kind = json_string_value(json_object_get(body, "kind"));

	if (!t || !t->conversion)
		return pk_srv_event_answer(t, body);
	if (!kind || strcmp(kind, t->kind) != 0) /* a Status passes */
		return body;
	json_t *out = pk_convert_from_storage(t, body);
	json_decref(body);
	return out;
}

void pk_srv_items(const struct pk_type *t, json_t *items)
{
	size_t i;
	json_t *it;

	if (!t || !t->conversion)
		return pk_srv_event_items(t, items);
	json_array_foreach(items, i, it)
	{
		json_t *v = pk_convert_from_storage(t, it);
		if (v)
			json_array_set_new(items, i, v);
	}
}

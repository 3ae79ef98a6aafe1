/* SPDX-License-Identifier: Apache-2.0 */
/*
 * convert.c — objects of a kind's other version (pk_type_versions[],
 * kinds.c) to and from the version the kind is stored in, by the row's
 * conversion (struct pk_conversion): its renamed fields, then or before its
 * hooks.  The API server converts a body on its way in and every object on
 * its way out, so that the store, validation and the controllers see one
 * version only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/api/api-internal.h"

/* The object holding the last step of a dotted path (no list items), and that step. */
static json_t *parent_of(json_t *obj, const char *path, const char **ret_key)
{
	char buf[256];
	const char *dot = strrchr(path, '.');

	*ret_key = dot ? dot + 1 : path;
	if (!dot)
		return json_is_object(obj) ? obj : NULL;
	if ((size_t)(dot - path) >= sizeof(buf))
		return NULL;
	memcpy(buf, path, (size_t)(dot - path));
	buf[dot - path] = '\0';
	json_t *p = pk_get(obj, buf);
	return json_is_object(p) ? p : NULL;
}

/*
 * The value at path from moved to path to.  A value already at to is a field
 * of the other version that this one does not have: it goes, as
 * kube-apiserver prunes a field its schema does not know (field validation
 * has named it to the client).
 */
static int move(json_t *obj, const char *from, const char *to)
{
	const char *fkey, *tkey;
	json_t *fp = parent_of(obj, from, &fkey), *tp = parent_of(obj, to, &tkey);

	if (tp)
		json_object_del(tp, tkey);
	json_t *v = fp ? json_object_get(fp, fkey) : NULL;
	if (!v)
		return 0;
	json_incref(v);
	json_object_del(fp, fkey);
	return pk_set(obj, to, v) < 0 ? -ENOMEM : 0;
}

/* apiVersion `from` becomes `to`; another one is left for validation to refuse. */
static int set_api_version(json_t *obj, const char *from, const char *to)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));

	if (!av || strcmp(av, from) != 0)
		return 0;
	return json_object_set_new(obj, "apiVersion", json_string(to)) < 0 ? -ENOMEM : 0;
}

json_t *pk_convert_to_storage(const struct pk_type *t, const json_t *obj, struct pk_errors *errs)
{
	const struct pk_conversion *c = t ? t->conversion : NULL;
	const struct pk_type *s = pk_type_stored(t);
	int rc = 0;

	if (!c || !json_is_object(obj))
		return json_incref((json_t *)obj);
	json_t *out = json_deep_copy(obj);
	if (!out)
		return NULL;
	for (size_t i = 0; i < c->nrenames && rc == 0; i++)
		rc = move(out, c->renames[i][1], c->renames[i][0]);
	if (rc == 0)
		rc = set_api_version(out, t->api_version, s->api_version);
	if (rc == 0 && c->to_storage)
		c->to_storage(out, errs);
	if (rc < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

json_t *pk_convert_from_storage(const struct pk_type *t, const json_t *obj)
{
	const struct pk_conversion *c = t ? t->conversion : NULL;
	const struct pk_type *s = pk_type_stored(t);
	int rc = 0;

	if (!c || !json_is_object(obj))
		return json_incref((json_t *)obj);
	json_t *out = json_deep_copy(obj);
	if (!out)
		return NULL;
	if (c->from_storage)
		c->from_storage(out);
	for (size_t i = 0; i < c->nrenames && rc == 0; i++)
		rc = move(out, c->renames[i][0], c->renames[i][1]);
	if (rc == 0)
		rc = set_api_version(out, s->api_version, t->api_version);
	if (rc < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

const char *pk_convert_message(const struct pk_type *t, const char *msg, char *buf, size_t len)
{
	const struct pk_conversion *c = t ? t->conversion : NULL;

	for (size_t i = 0; c && msg && i < c->nrenames; i++) {
		size_t n = strlen(c->renames[i][0]);
		char next = msg[n];
		if (strncmp(msg, c->renames[i][0], n) != 0 ||
		    !(next == '\0' || next == '.' || next == '[' || next == ':'))
			continue;
		int w = snprintf(buf, len, "%s%s", c->renames[i][1], msg + n);
		return w >= 0 && (size_t)w < len ? buf : msg;
	}
	return msg;
}

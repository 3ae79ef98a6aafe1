/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c — small helpers of the workload builder: field-path strings, brief
 * JSON renderings for error messages, object skeletons with controller
 * ownerReferences, tolerant member access and checks of known fields.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"

char *wb_strdupf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

char *wb_path_join(const char *a, const char *b)
{
	if (!a || !*a)
		return strdup(b ? b : "");
	if (!b || !*b)
		return strdup(a);
	if (b[0] == '[')
		return wb_strdupf("%s%s", a, b);
	return wb_strdupf("%s.%s", a, b);
}

char *wb_json_brief(const json_t *value)
{
	char *s;

	if (!value)
		return strdup("null");
	if (json_is_string(value))
		return wb_strdupf("\"%.64s\"", json_string_value(value));
	s = json_dumps(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (s && strlen(s) > 96)
		strcpy(s + 90, "...");
	return s;
}

json_t *wb_owner_reference(const struct wb_owner *owner)
{
	json_t *ref;

	if (!owner || !owner->kind || !owner->name)
		return NULL;
	ref =
	    json_pack("{s:s, s:s, s:s}", "apiVersion", owner->api_version ? owner->api_version : "",
		      "kind", owner->kind, "name", owner->name);
	if (!ref)
		return NULL;
	if (owner->uid)
		json_object_set_new(ref, "uid", json_string(owner->uid));
	json_object_set_new(ref, "controller", json_true());
	json_object_set_new(ref, "blockOwnerDeletion", json_true());
	return ref;
}

void wb_owner_of(const json_t *obj, struct wb_owner *ret_owner)
{
	ret_owner->api_version = wb_str(obj, "apiVersion");
	ret_owner->kind = wb_str(obj, "kind");
	ret_owner->name = wb_str(wb_obj(obj, "metadata"), "name");
	ret_owner->uid = wb_str(wb_obj(obj, "metadata"), "uid");
}

json_t *wb_object_new(const char *api_version, const char *kind, const char *name,
		      const char *namespace, const struct wb_owner *owner)
{
	json_t *obj, *meta, *ref;

	obj = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", api_version, "kind", kind,
			"metadata", "name", name, "namespace", namespace ? namespace : "default");
	if (!obj)
		return NULL;
	meta = json_object_get(obj, "metadata");
	ref = wb_owner_reference(owner);
	if (ref && json_object_set_new(meta, "ownerReferences", json_pack("[o]", ref)) < 0) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

void wb_errors_move(struct pk_errors *to, struct pk_errors *from, const char *prefix)
{
	size_t i;

	if (!to || !from)
		return;
	for (i = 0; i < from->n; i++) {
		char *m = prefix && *prefix ? wb_strdupf("%s: %s", prefix, from->msg[i])
					    : strdup(from->msg[i]);
		size_t j;

		/* one block may feed several groups: report each message once */
		for (j = 0; m && j < to->n; j++)
			if (strcmp(to->msg[j], m) == 0)
				break;
		if (!m || j == to->n)
			pk_errors_add(to, "%s", m ? m : from->msg[i]);
		free(m);
	}
	pk_errors_clear(from);
}

json_t *wb_obj(const json_t *obj, const char *key)
{
	json_t *v;

	if (!json_is_object(obj))
		return NULL;
	v = json_object_get(obj, key);
	return json_is_object(v) ? v : NULL;
}

const char *wb_str(const json_t *obj, const char *key)
{
	if (!json_is_object(obj))
		return NULL;
	return json_string_value(json_object_get(obj, key));
}

const char *wb_annotation(const json_t *obj, const char *key)
{
	return wb_str(wb_obj(wb_obj(obj, "metadata"), "annotations"), key);
}

int wb_check_known_fields(const json_t *obj, const char *path, const char *const *allowed,
			  struct pk_errors *errs)
{
	const char *key;
	json_t *v;
	int r = 0;

	json_object_foreach((json_t *)obj, key, v)
	{
		size_t i;

		for (i = 0; allowed[i]; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (!allowed[i]) {
			pk_errors_add(errs, "%s.%s: Forbidden: unknown field", path, key);
			r = -EINVAL;
		}
	}
	return r;
}

int wb_get_int(const json_t *obj, const char *key, const char *path, int64_t def, int64_t min,
	       int64_t max, int64_t *ret, struct pk_errors *errs)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	int64_t x;

	if (!v || json_is_null(v)) {
		*ret = def;
		return 0;
	}
	if (!json_is_integer(v)) {
		char *b = wb_json_brief(v);

		pk_errors_add(errs, "%s.%s: Invalid value: %s: must be an integer", path, key,
			      b ? b : "?");
		free(b);
		return -EINVAL;
	}
	x = json_integer_value(v);
	if (x < min) {
		pk_errors_add(errs,
			      "%s.%s: Invalid value: %lld: must be greater than or equal to %lld",
			      path, key, (long long)x, (long long)min);
		return -EINVAL;
	}
	if (x > max) {
		pk_errors_add(errs,
			      "%s.%s: Invalid value: %lld: must be less than or equal to %lld",
			      path, key, (long long)x, (long long)max);
		return -EINVAL;
	}
	*ret = x;
	return 0;
}

static json_t *find_in_list(const json_t *list, const char *name)
{
	size_t i;
	json_t *t;

	json_array_foreach(list, i, t)
	{
		const char *n = wb_str(t, "name");

		if (n && strcmp(n, name) == 0)
			return t;
	}
	return NULL;
}

json_t *wb_find_child_template(const json_t *tmpl, const char *name, bool *ret_composite)
{
	json_t *t;

	t = find_in_list(json_object_get(tmpl, "compositePodGroupTemplates"), name);
	if (t) {
		if (ret_composite)
			*ret_composite = true;
		return t;
	}
	t = find_in_list(json_object_get(tmpl, "podGroupTemplates"), name);
	if (t && ret_composite)
		*ret_composite = false;
	return t;
}

/* Depth-first search; templates nest at most a few levels (bounded by depth). */
static json_t *find_template(const json_t *tmpl, const char *name, bool *ret_composite,
			     unsigned depth)
{
	json_t *t, *child;
	size_t i;

	if (depth > PK_MAX_DEPTH)
		return NULL;
	t = wb_find_child_template(tmpl, name, ret_composite);
	if (t)
		return t;
	json_array_foreach(json_object_get(tmpl, "compositePodGroupTemplates"), i, child)
	{
		t = find_template(child, name, ret_composite, depth + 1);
		if (t)
			return t;
	}
	return NULL;
}

json_t *wb_find_template(const json_t *workload, const char *name, bool *ret_composite)
{
	const json_t *spec = wb_obj(workload, "spec");

	if (!spec || !name)
		return NULL;
	return find_template(spec, name, ret_composite, 0);
}

int wb_set_downward_annotations(json_t *child, const char *workload, const char *template_name,
				const char *parent)
{
	json_t *meta, *ann;

	if (!json_is_object(child) || !workload || !template_name)
		return -EINVAL;
	meta = wb_obj(child, "metadata");
	if (!meta && (json_object_set_new(child, "metadata", json_object()) < 0 ||
		      !(meta = wb_obj(child, "metadata"))))
		return -ENOMEM;
	ann = wb_obj(meta, "annotations");
	if (!ann && (json_object_set_new(meta, "annotations", json_object()) < 0 ||
		     !(ann = wb_obj(meta, "annotations"))))
		return -ENOMEM;
	if (json_object_set_new(ann, WB_ANNOTATION_WORKLOAD, json_string(workload)) < 0 ||
	    json_object_set_new(ann, WB_ANNOTATION_TEMPLATE, json_string(template_name)) < 0)
		return -ENOMEM;
	if (!parent) {
		json_object_del(ann, WB_ANNOTATION_PARENT);
		return 0;
	}
	return json_object_set_new(ann, WB_ANNOTATION_PARENT, json_string(parent)) < 0 ? -ENOMEM
										       : 0;
}

int wb_check_count_limit(const struct wb_item *item, const char *root_path, int64_t limit,
			 const char *what, struct pk_errors *errs)
{
	const struct wb_input *in = &item->input[WB_BLOCK_POLICY];
	const char *field = wb_item_is_composite(item) ? "minGroupCount" : "minCount";
	json_t *count = json_object_get(wb_obj(in->data, "gang"), field);
	char *path;

	if (!json_is_integer(count) || json_integer_value(count) <= limit)
		return 0;
	path = wb_path_join(root_path, in->path ? in->path : wb_block_name(WB_BLOCK_POLICY));
	pk_errors_add(
	    errs, "%s.gang.%s: Invalid value: %lld: must be less than or equal to %s (%lld)",
	    path ? path : "", field, (long long)json_integer_value(count), what, (long long)limit);
	free(path);
	return -EINVAL;
}

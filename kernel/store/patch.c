/* SPDX-License-Identifier: Apache-2.0 */
/*
 * patch.c — the three patch formats kube-apiserver accepts.
 *
 * JSON merge patch (RFC 7386) merges maps recursively, null deletes a key and
 * anything else replaces.  Strategic merge patch is served as the subset
 * kubectl label/annotate/apply send for the kinds here: a merge patch whose
 * "$"-prefixed directive keys ($setElementOrder/..., $retainKeys, $patch) are
 * dropped; lists are replaced whole except those upstream merges by key
 * (containers by name, conditions by type, ...: merge_keys below), whose items
 * merge one by one and go with "$patch": "delete".  JSON patch (RFC 6902)
 * supports add, remove, replace, move, copy and test with JSON-pointer paths.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store.h"

#define PATCH_MAX_OPS 10000

/* Lists kubectl's strategic merge patch merges item by item (patchMergeKey). */
static const struct {
	const char *field, *key;
} merge_keys[] = {
    {"containers", "name"},	   {"initContainers", "name"},
    {"volumes", "name"},	   {"env", "name"},
    {"volumeMounts", "mountPath"}, {"ports", "containerPort"},
    {"conditions", "type"},	   {"taints", "key"},
    {"imagePullSecrets", "name"},
};

const char *pk_patch_merge_key(const char *field)
{
	for (size_t i = 0; field && i < sizeof(merge_keys) / sizeof(*merge_keys); i++)
		if (strcmp(merge_keys[i].field, field) == 0)
			return merge_keys[i].key;
	return NULL;
}

static json_t *merge(json_t *target, const json_t *patch, bool strategic, int depth,
		     const char *field);

static size_t find_item(json_t *list, const char *key, json_t *value)
{
	size_t i;
	json_t *item;
	json_array_foreach(list, i,
			   item) if (json_equal(json_object_get(item, key), value)) return i;
	return (size_t)-1;
}

/* Items with the same merge key merge; "$patch": "delete" removes; new ones append. */
static json_t *merge_list(json_t *target, const json_t *patch, const char *key, int depth)
{
	json_t *out = json_deep_copy(target);
	size_t i;
	json_t *pitem;
	json_array_foreach(patch, i, pitem)
	{
		json_t *kv = json_object_get(pitem, key);
		size_t at = kv ? find_item(out, key, kv) : (size_t)-1;
		const char *directive = json_string_value(json_object_get(pitem, "$patch"));
		if (directive && strcmp(directive, "delete") == 0) {
			if (at != (size_t)-1)
				json_array_remove(out, at);
			continue;
		}
		json_t *merged = merge(at != (size_t)-1 ? json_array_get(out, at) : NULL, pitem,
				       true, depth + 1, NULL);
		if (!merged) {
			json_decref(out);
			return NULL;
		}
		if (at != (size_t)-1)
			json_array_set_new(out, at, merged);
		else
			json_array_append_new(out, merged);
	}
	return out;
}

static bool all_objects(const json_t *list)
{
	size_t i;
	json_t *item;
	json_array_foreach(list, i, item) if (!json_is_object(item)) return false;
	return true;
}

static json_t *merge(json_t *target, const json_t *patch, bool strategic, int depth,
		     const char *field)
{
	const char *mk = strategic ? pk_patch_merge_key(field) : NULL;
	if (mk && json_is_array(target) && json_is_array(patch) && all_objects(target) &&
	    all_objects(patch) && depth <= PK_MAX_DEPTH)
		return merge_list(target, patch, mk, depth);
	if (!json_is_object(patch) || depth > PK_MAX_DEPTH)
		return json_deep_copy(patch);
	json_t *out = json_is_object(target) ? json_deep_copy(target) : json_object();
	if (!out)
		return NULL;
	const char *key;
	json_t *pv;
	json_object_foreach((json_t *)patch, key, pv)
	{
		if (strategic && key[0] == '$')
			continue;
		if (json_is_null(pv)) {
			json_object_del(out, key);
			continue;
		}
		json_t *merged = merge(json_object_get(out, key), pv, strategic, depth + 1, key);
		if (!merged || json_object_set_new(out, key, merged) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* RFC 6901 pointer: parent container and last token (unescaped, malloc'ed). */
static int pointer_resolve(json_t *doc, const char *ptr, json_t **ret_parent, char **ret_last)
{
	if (ptr[0] != '/')
		return -EINVAL;
	json_t *cur = doc;
	const char *p = ptr + 1;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char *tok = malloc(n + 1);
		if (!tok)
			return -ENOMEM;
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
				tok[k++] = p[i + 1] == '0' ? '~' : '/';
				i++;
			} else {
				tok[k++] = p[i];
			}
		}
		tok[k] = '\0';
		if (!slash) {
			*ret_parent = cur;
			*ret_last = tok;
			return 0;
		}
		if (json_is_object(cur)) {
			cur = json_object_get(cur, tok);
		} else if (json_is_array(cur)) {
			char *end;
			unsigned long idx = strtoul(tok, &end, 10);
			cur = (*tok && !*end) ? json_array_get(cur, idx) : NULL;
		} else {
			cur = NULL;
		}
		free(tok);
		if (!cur)
			return -ENOENT;
		p = slash + 1;
	}
}

static int array_index(json_t *arr, const char *tok, bool allow_end, size_t *ret)
{
	if (allow_end && strcmp(tok, "-") == 0) {
		*ret = json_array_size(arr);
		return 0;
	}
	char *end;
	unsigned long idx = strtoul(tok, &end, 10);
	if (!*tok || *end || idx > json_array_size(arr) ||
	    (!allow_end && idx == json_array_size(arr)))
		return -EINVAL;
	*ret = idx;
	return 0;
}

static json_t *pointer_get(json_t *doc, const char *ptr)
{
	if (!*ptr)
		return doc;
	json_t *parent;
	char *last;
	if (pointer_resolve(doc, ptr, &parent, &last) < 0)
		return NULL;
	json_t *v = NULL;
	size_t idx;
	if (json_is_object(parent))
		v = json_object_get(parent, last);
	else if (json_is_array(parent) && array_index(parent, last, false, &idx) == 0)
		v = json_array_get(parent, idx);
	free(last);
	return v;
}

static int pointer_remove(json_t *doc, const char *ptr)
{
	json_t *parent;
	char *last;
	int rc = pointer_resolve(doc, ptr, &parent, &last);
	if (rc < 0)
		return rc;
	size_t idx;
	if (json_is_object(parent))
		rc = json_object_del(parent, last) == 0 ? 0 : -ENOENT;
	else if (json_is_array(parent) && array_index(parent, last, false, &idx) == 0)
		rc = json_array_remove(parent, idx) == 0 ? 0 : -ENOENT;
	else
		rc = -ENOENT;
	free(last);
	return rc;
}

/* value stolen */
static int pointer_add(json_t *doc, const char *ptr, json_t *value, bool replace)
{
	json_t *parent;
	char *last;
	int rc = pointer_resolve(doc, ptr, &parent, &last);
	if (rc < 0) {
		json_decref(value);
		return rc;
	}
	size_t idx;
	if (json_is_object(parent)) {
		if (replace && !json_object_get(parent, last))
			rc = -ENOENT;
		else
			rc = json_object_set_new(parent, last, value) == 0 ? 0 : -ENOMEM;
		value = rc == 0 ? NULL : value;
	} else if (json_is_array(parent) && array_index(parent, last, !replace, &idx) == 0) {
		if (replace)
			rc = json_array_set_new(parent, idx, value) == 0 ? 0 : -ENOMEM;
		else
			rc = json_array_insert_new(parent, idx, value) == 0 ? 0 : -ENOMEM;
		value = NULL;
	} else {
		rc = -ENOENT;
	}
	json_decref(value);
	free(last);
	return rc;
}

static int json_patch_op(json_t *doc, const json_t *op, size_t i, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(op, "op"));
	const char *path = json_string_value(json_object_get(op, "path"));
	const char *from = json_string_value(json_object_get(op, "from"));
	json_t *value = json_object_get(op, "value");
	if (!name || !path) {
		snprintf(err, errlen, "[%zu]: op and path are required", i);
		return -EINVAL;
	}
	int rc;
	if (strcmp(name, "add") == 0 || strcmp(name, "replace") == 0) {
		if (!value) {
			snprintf(err, errlen, "[%zu].value: Required value", i);
			return -EINVAL;
		}
		rc = pointer_add(doc, path, json_deep_copy(value), name[0] == 'r');
	} else if (strcmp(name, "remove") == 0) {
		rc = pointer_remove(doc, path);
	} else if (strcmp(name, "test") == 0) {
		rc = json_equal(pointer_get(doc, path), value) ? 0 : -EINVAL;
	} else if ((strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) && from) {
		json_t *v = json_deep_copy(pointer_get(doc, from));
		rc = v ? 0 : -ENOENT;
		if (rc == 0 && name[0] == 'm')
			rc = pointer_remove(doc, from);
		if (rc == 0)
			rc = pointer_add(doc, path, v, false);
		else
			json_decref(v);
	} else {
		snprintf(err, errlen, "[%zu].op: Unsupported value: \"%s\"", i, name);
		return -EINVAL;
	}
	if (rc < 0)
		snprintf(err, errlen, "[%zu]: %s %s failed", i, name, path);
	return rc < 0 ? -EINVAL : 0;
}

int pk_patch_apply(const json_t *target, enum pk_patch_type type, const json_t *patch, json_t **ret,
		   char *err, size_t errlen)
{
	if (type != PK_PATCH_JSON) {
		if (!json_is_object(patch)) {
			snprintf(err, errlen, "merge patch must be a JSON object");
			return -EINVAL;
		}
		json_t *out = merge((json_t *)target, patch, type == PK_PATCH_STRATEGIC, 0, NULL);
		if (!out)
			return -ENOMEM;
		*ret = out;
		return 0;
	}
	if (!json_is_array(patch) || json_array_size(patch) > PATCH_MAX_OPS) {
		snprintf(err, errlen, "JSON patch must be an array of at most %d operations",
			 PATCH_MAX_OPS);
		return -EINVAL;
	}
	json_t *doc = json_deep_copy(target);
	if (!doc)
		return -ENOMEM;
	size_t i;
	json_t *op;
	json_array_foreach(patch, i, op)
	{
		int rc = json_patch_op(doc, op, i, err, errlen);
		if (rc < 0) {
			json_decref(doc);
			return rc;
		}
	}
	*ret = doc;
	return 0;
}

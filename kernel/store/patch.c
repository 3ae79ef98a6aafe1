/* SPDX-License-Identifier: Apache-2.0 */
/*
 * patch.c — the three patch formats kube-apiserver accepts.
 *
 * JSON merge patch (RFC 7386) merges maps recursively, null deletes a key and
 * anything else replaces.  Strategic merge patch is served as the subset
 * kubectl label/annotate/apply send for the kinds here: a merge patch whose
 * "$"-prefixed directive keys ($setElementOrder/..., $retainKeys, $patch) are
 * dropped; lists are replaced whole except those upstream merges by key
 * (containers by name, conditions by type, ownerReferences by uid, ...:
 * merge_keys below), whose items
 * merge one by one and go with "$patch": "delete".  JSON patch (RFC 6902)
 * supports add, remove, replace, move, copy and test with JSON-pointer paths.
 *
 * Cost is bounded before it is spent.  Every engine tracks the serialised
 * size of what it builds (json_size(), which stops counting past a cap) and
 * stops at PK_STORE_OBJECT_MAX with -E2BIG: a JSON patch checks each op
 * before it copies anything (and the bytes all its copy ops duplicate are
 * capped too), so 26 doubling copies cost a few kilobytes, not gigabytes.
 * The merges build their result from shared, reference-counted parts of
 * the target and the patch (new containers only, never a change to a shared
 * node), measure it, and make the one private copy the caller gets only
 * when it fits.  Strategic merge finds list items through a hash of their
 * merge keys, so merging two lists costs their lengths, not their product.
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
    {"imagePullSecrets", "name"},  {"ownerReferences", "uid"},
};

const char *pk_patch_merge_key(const char *field)
{
	for (size_t i = 0; field && i < sizeof(merge_keys) / sizeof(*merge_keys); i++)
		if (strcmp(merge_keys[i].field, field) == 0)
			return merge_keys[i].key;
	return NULL;
}

/*
 * Serialised size of v as compact JSON, roughly (escapes not counted,
 * numbers at their widest), counted only up to cap: anything over cap
 * returns cap + 1.  Deeper than PK_MAX_DEPTH counts as over, too.
 */
static size_t json_size_at(const json_t *v, size_t cap, int depth)
{
	size_t n = 0, i;
	const char *key;
	json_t *x;

	if (depth > PK_MAX_DEPTH)
		return cap + 1;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		n = 2;
		json_object_foreach((json_t *)v, key, x)
		{
			n +=
			    strlen(key) + 4 + json_size_at(x, cap - (n < cap ? n : cap), depth + 1);
			if (n > cap)
				return cap + 1;
		}
		return n;
	case JSON_ARRAY:
		n = 2;
		json_array_foreach(v, i, x)
		{
			n += 1 + json_size_at(x, cap - (n < cap ? n : cap), depth + 1);
			if (n > cap)
				return cap + 1;
		}
		return n;
	case JSON_STRING:
		n = json_string_length(v) + 2;
		break;
	case JSON_INTEGER:
	case JSON_REAL:
		n = 24;
		break;
	default:
		n = 5;
	}
	return n > cap ? cap + 1 : n;
}

static size_t json_size(const json_t *v, size_t cap)
{
	return v ? json_size_at(v, cap, 0) : 0;
}

/* The size of v placed at JSON pointer path: its depth counts from there. */
static size_t json_size_under(const json_t *v, const char *path, size_t cap)
{
	int depth = 0;

	for (const char *p = path; *p; p++)
		depth += *p == '/';
	return v ? json_size_at(v, cap, depth) : 0;
}

static json_t *merge(json_t *target, json_t *patch, bool strategic, int depth, const char *field);

/* A merge key's value as a hash key: strings as themselves, the rest as JSON. */
static char *key_text(const json_t *v)
{
	char *s = NULL;

	if (json_is_string(v))
		return asprintf(&s, "s%s", json_string_value(v)) < 0 ? NULL : s;
	char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);

	if (j && asprintf(&s, "j%s", j) < 0)
		s = NULL;
	free(j);
	return s;
}

/* Index item at of list under its merge key (the first of equal keys stays). */
static int index_item(json_t *index, const json_t *item, const char *key, size_t at)
{
	json_t *kv = json_object_get(item, key);
	char *k;
	int r = 0;

	if (!kv)
		return 0;
	k = key_text(kv);
	if (!k)
		return -ENOMEM;
	if (!json_object_get(index, k))
		r = json_object_set_new(index, k, json_integer((json_int_t)at)) < 0 ? -ENOMEM : 0;
	free(k);
	return r;
}

/* Where the item with pitem's merge key is (-1: none); its index entry is
 * dropped when drop (a deleted item). */
static ssize_t lookup_item(json_t *index, const json_t *pitem, const char *key, bool drop)
{
	json_t *kv = json_object_get(pitem, key);
	char *k = kv ? key_text(kv) : NULL;
	json_t *at = k ? json_object_get(index, k) : NULL;
	ssize_t r = at ? (ssize_t)json_integer_value(at) : -1;

	if (at && drop)
		json_object_del(index, k);
	free(k);
	return r;
}

/*
 * Items with the same merge key merge; "$patch": "delete" removes; new ones
 * append.  The output shares the items it keeps; deleted slots are nulls
 * until the end.  Near-linear: one hash lookup per patch item.
 */
static json_t *merge_list(json_t *target, json_t *patch, const char *key, int depth)
{
	json_t *out = json_array(), *index = json_object(), *pitem, *item;
	size_t i;
	bool deleted = false;

	if (!out || !index)
		goto oom;
	json_array_foreach(target, i, item)
	{
		if (json_array_append(out, item) < 0 || index_item(index, item, key, i) < 0)
			goto oom;
	}
	json_array_foreach(patch, i, pitem)
	{
		const char *directive = json_string_value(json_object_get(pitem, "$patch"));
		bool del = directive && strcmp(directive, "delete") == 0;
		ssize_t at = lookup_item(index, pitem, key, del);

		if (del) {
			if (at >= 0 && json_array_set_new(out, (size_t)at, json_null()) == 0)
				deleted = true;
			continue;
		}
		json_t *merged = merge(at >= 0 ? json_array_get(out, (size_t)at) : NULL, pitem,
				       true, depth + 1, NULL);

		if (!merged)
			goto oom;
		if (at >= 0) {
			json_array_set_new(out, (size_t)at, merged);
		} else if (json_array_append_new(out, merged) < 0 ||
			   index_item(index, merged, key, json_array_size(out) - 1) < 0) {
			goto oom;
		}
	}
	for (i = json_array_size(out); deleted && i-- > 0;)
		if (json_is_null(json_array_get(out, i)))
			json_array_remove(out, i); /* (items are never null: all objects) */
	json_decref(index);
	return out;
oom:
	json_decref(out);
	json_decref(index);
	return NULL;
}

static bool all_objects(const json_t *list)
{
	size_t i;
	json_t *item;
	json_array_foreach(list, i, item) if (!json_is_object(item)) return false;
	return true;
}

/* The merge of patch into target, sharing both (never changed here). */
static json_t *merge(json_t *target, json_t *patch, bool strategic, int depth, const char *field)
{
	const char *mk = strategic ? pk_patch_merge_key(field) : NULL;
	if (mk && json_is_array(target) && json_is_array(patch) && all_objects(target) &&
	    all_objects(patch) && depth <= PK_MAX_DEPTH)
		return merge_list(target, patch, mk, depth);
	if (!json_is_object(patch) || depth > PK_MAX_DEPTH)
		return json_incref(patch);
	json_t *out = json_object();
	const char *key;
	json_t *pv, *tv;
	if (!out)
		return NULL;
	if (json_is_object(target))
		json_object_foreach(target, key,
				    tv) if (json_object_set(out, key, tv) < 0) goto oom;
	json_object_foreach(patch, key, pv)
	{
		if (strategic && key[0] == '$')
			continue;
		if (json_is_null(pv)) {
			json_object_del(out, key);
			continue;
		}
		json_t *merged = merge(json_object_get(out, key), pv, strategic, depth + 1, key);
		if (!merged || json_object_set_new(out, key, merged) < 0)
			goto oom;
	}
	return out;
oom:
	json_decref(out);
	return NULL;
}

/* A merge patch's result: measured before the one private copy is made. */
static int merge_apply(const json_t *target, const json_t *patch, bool strategic, json_t **ret,
		       char *err, size_t errlen)
{
	json_t *shared = merge((json_t *)target, (json_t *)patch, strategic, 0, NULL);
	size_t n;

	if (!shared)
		return -ENOMEM;
	n = json_size(shared, PK_STORE_OBJECT_MAX);
	if (n > PK_STORE_OBJECT_MAX) {
		json_decref(shared);
		snprintf(err, errlen,
			 "the patched object would be larger than %d bytes (or nested "
			 "deeper than %d)",
			 PK_STORE_OBJECT_MAX, PK_MAX_DEPTH);
		return -E2BIG;
	}
	*ret = json_deep_copy(shared);
	json_decref(shared);
	return *ret ? 0 : -ENOMEM;
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

/* What a JSON patch has built so far: the document's size, the bytes its
 * copy ops duplicated. */
struct budget {
	size_t doc, copied;
};

#define PATCH_MAX_COPIED (2 * PK_STORE_OBJECT_MAX)

/* Would the document stay within the limit with add bytes more (less drop)? */
static int budget_grow(struct budget *b, size_t add, size_t drop, size_t i, const char *name,
		       char *err, size_t errlen)
{
	size_t next = b->doc - (drop < b->doc ? drop : b->doc) + add;

	if (add <= PK_STORE_OBJECT_MAX && next <= PK_STORE_OBJECT_MAX) {
		b->doc = next;
		return 0;
	}
	snprintf(err, errlen,
		 "[%zu]: %s: the patched object would be larger than %d bytes (or nested deeper "
		 "than %d)",
		 i, name, PK_STORE_OBJECT_MAX, PK_MAX_DEPTH);
	return -E2BIG;
}

/* copy and move: the source's size is known before it is duplicated. */
static int copy_or_move(json_t *doc, const char *name, const char *from, const char *path,
			struct budget *b, size_t i, char *err, size_t errlen)
{
	json_t *src = pointer_get(doc, from);
	size_t n = json_size_under(src, path, PK_STORE_OBJECT_MAX);
	bool move = name[0] == 'm';
	int rc;

	if (!src)
		return -ENOENT;
	if ((rc = budget_grow(b, n, move ? n : 0, i, name, err, errlen)) < 0)
		return rc;
	if (!move && (b->copied += n) > PATCH_MAX_COPIED) {
		snprintf(err, errlen,
			 "[%zu]: copy: the copy ops would duplicate more than %d bytes", i,
			 PATCH_MAX_COPIED);
		return -E2BIG;
	}
	json_t *v = move ? json_incref(src) : json_deep_copy(src);

	rc = v ? 0 : -ENOMEM;
	if (rc == 0 && move)
		rc = pointer_remove(doc, from);
	if (rc == 0)
		rc = pointer_add(doc, path, v, false);
	else
		json_decref(v);
	return rc;
}

static int json_patch_op(json_t *doc, const json_t *op, size_t i, struct budget *b, char *err,
			 size_t errlen)
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
		rc = budget_grow(b, json_size_under(value, path, PK_STORE_OBJECT_MAX),
				 json_size(pointer_get(doc, path), PK_STORE_OBJECT_MAX), i, name,
				 err, errlen);
		if (rc == 0)
			rc = pointer_add(doc, path, json_deep_copy(value), name[0] == 'r');
	} else if (strcmp(name, "remove") == 0) {
		size_t n = json_size(pointer_get(doc, path), PK_STORE_OBJECT_MAX);

		rc = pointer_remove(doc, path);
		b->doc -= rc == 0 && n < b->doc ? n : 0;
	} else if (strcmp(name, "test") == 0) {
		rc = json_equal(pointer_get(doc, path), value) ? 0 : -EINVAL;
	} else if ((strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) && from) {
		rc = copy_or_move(doc, name, from, path, b, i, err, errlen);
	} else {
		snprintf(err, errlen, "[%zu].op: Unsupported value: \"%s\"", i, name);
		return -EINVAL;
	}
	if (rc == -E2BIG)
		return rc;
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
		return merge_apply(target, patch, type == PK_PATCH_STRATEGIC, ret, err, errlen);
	}
	if (!json_is_array(patch) || json_array_size(patch) > PATCH_MAX_OPS) {
		snprintf(err, errlen, "JSON patch must be an array of at most %d operations",
			 PATCH_MAX_OPS);
		return -EINVAL;
	}
	struct budget b = {.doc = json_size(target, PK_STORE_OBJECT_MAX)};
	json_t *doc = json_deep_copy(target);
	if (!doc)
		return -ENOMEM;
	size_t i;
	json_t *op;
	json_array_foreach(patch, i, op)
	{
		int rc = json_patch_op(doc, op, i, &b, err, errlen);
		if (rc < 0) {
			json_decref(doc);
			return rc;
		}
	}
	*ret = doc;
	return 0;
}

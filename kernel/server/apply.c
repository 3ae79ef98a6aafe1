/* SPDX-License-Identifier: Apache-2.0 */
/*
 * apply.c — server-side apply (PATCH application/apply-patch+yaml) and the
 * managedFields it keeps, as kube-apiserver's structured merge does.
 *
 * A field set is a FieldsV1 tree: "f:NAME" for a field or map key, and
 * "k:{KEYS}" for an item of a list whose items are told apart by keys
 * (list_keys below: containers by name, ports by containerPort and protocol,
 * ...), an item's own membership marked ".".  Other lists and scalars are
 * leaves: owned whole.  Each entry of metadata.managedFields is one manager
 * and operation (Apply, or Update for a create naming a fieldManager) with
 * the set it owns.
 *
 * Applying configuration A as manager m to the live object L:
 *   1. the set of A (without apiVersion, kind, identity and server-set
 *      metadata, and without status on the main resource);
 *   2. conflicts: a leaf of that set owned by another manager whose value in
 *      A differs from L's; without force the apply is refused (409, one cause
 *      per field naming the manager), with force the fields move to m;
 *   3. the result is L merged with A (objects by key, keyed lists by item,
 *      anything else replaced), minus the fields m owned before, no longer
 *      applies, and nobody else owns;
 *   4. m's Apply entry becomes the new set; managers left owning nothing go.
 * L absent: the apply creates the object.  The write is an update pinned to
 * L's resourceVersion, retried when another writer came between.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/server/server-internal.h"

#define APPLY_RETRIES 5

/* Lists whose items are told apart by keys (upstream's listMapKeys). */
static const struct {
	const char *field;
	const char *keys[2];
} list_keys[] = {
    {"containers", {"name"}},
    {"initContainers", {"name"}},
    {"ephemeralContainers", {"name"}},
    {"volumes", {"name"}},
    {"env", {"name"}},
    {"volumeMounts", {"mountPath"}},
    {"ports", {"containerPort", "protocol"}},
    {"conditions", {"type"}},
    {"taints", {"key", "effect"}},
    {"podGroupTemplates", {"name"}},
    {"compositePodGroupTemplates", {"name"}},
    {"replicatedJobs", {"name"}},
    {"schedulingGates", {"name"}},
    {"resourceClaims", {"name"}},
    {"ownerReferences", {"uid"}},
};

const char *const *pk_srv_list_keys(const char *field)
{
	for (size_t i = 0; field && i < sizeof(list_keys) / sizeof(list_keys[0]); i++)
		if (strcmp(list_keys[i].field, field) == 0)
			return list_keys[i].keys;
	return NULL;
}

/* "k:{...}" of an item: its key fields, sorted, compact JSON; NULL if it lacks them. */
static char *item_key(const json_t *item, const char *const *keys)
{
	json_t *k = json_object();
	for (size_t i = 0; i < 2 && keys[i]; i++) {
		json_t *v = json_object_get(item, keys[i]);
		if (v)
			json_object_set(k, keys[i], v);
		else if (i == 0) {
			json_decref(k);
			return NULL;
		}
	}
	char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS), *out = NULL;
	json_decref(k);
	if (s && asprintf(&out, "k:%s", s) < 0)
		out = NULL;
	free(s);
	return out;
}

/* ---- field sets ------------------------------------------------------------------ */
static json_t *set_of(const json_t *v, const char *field, int depth);

static json_t *set_of_list(const json_t *list, const char *const *keys, int depth)
{
	json_t *out = json_object(), *item;
	size_t i;
	json_array_foreach(list, i, item)
	{
		char *k = json_is_object(item) ? item_key(item, keys) : NULL;
		if (!k) { /* items without their keys: the list is owned whole */
			json_decref(out);
			return json_object();
		}
		json_t *s = set_of(item, NULL, depth + 1);
		json_object_set_new(s, ".", json_object());
		json_object_set_new(out, k, s);
		free(k);
	}
	return out;
}

static json_t *set_of(const json_t *v, const char *field, int depth)
{
	const char *const *keys = pk_srv_list_keys(field);
	if (depth > PK_MAX_DEPTH)
		return json_object();
	if (json_is_array(v) && keys && json_array_size(v))
		return set_of_list(v, keys, depth);
	json_t *out = json_object();
	const char *k;
	json_t *c;
	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, c)
		{
			char f[512];
			snprintf(f, sizeof(f), "f:%s", k);
			json_object_set_new(out, f, set_of(c, k, depth + 1));
		}
	return out;
}

/* Without identity and server-set metadata (and status unless status_too). */
static json_t *strip_server_fields(json_t *s, bool status_too)
{
	static const char *const server_meta[] = {"f:name",
						  "f:namespace",
						  "f:uid",
						  "f:resourceVersion",
						  "f:generation",
						  "f:creationTimestamp",
						  "f:managedFields",
						  "f:selfLink",
						  "f:deletionTimestamp",
						  "f:deletionGracePeriodSeconds"};
	json_object_del(s, "f:apiVersion");
	json_object_del(s, "f:kind");
	if (!status_too)
		json_object_del(s, "f:status");
	json_t *meta = json_object_get(s, "f:metadata");
	for (size_t i = 0; meta && i < sizeof(server_meta) / sizeof(server_meta[0]); i++)
		json_object_del(meta, server_meta[i]);
	if (meta && json_object_size(meta) == 0)
		json_object_del(s, "f:metadata");
	return s;
}

/* The set a configuration claims. */
static json_t *config_set(const json_t *config, bool status_too)
{
	return strip_server_fields(set_of(config, NULL, 0), status_too);
}

/* A leaf: a node whose only child, if any, is ".". */
static bool is_leaf(const json_t *node)
{
	return json_object_size(node) == 0 ||
	       (json_object_size(node) == 1 && json_object_get(node, "."));
}

/*
 * A keyed list's items by their "k:{...}" (the first of each), built once per
 * list and kept in cache ("%p" of the list -> {a: list, i: index}; the list
 * is held so that its address stays its own): finding the items of a set is
 * linear in the lists, not quadratic.
 */
static json_t *list_index(json_t *cache, json_t *list, const char *const *keys)
{
	char p[32];
	snprintf(p, sizeof(p), "%p", (void *)list);
	json_t *e = json_object_get(cache, p), *idx, *item;
	size_t i;
	if (e)
		return json_object_get(e, "i");
	idx = json_object();
	json_array_foreach(list, i, item)
	{
		char *k = item_key(item, keys);
		if (k && !json_object_get(idx, k))
			json_object_set(idx, k, item);
		free(k);
	}
	json_object_set_new(cache, p, json_pack("{s:O,s:o}", "a", list, "i", idx));
	return idx;
}

/* The item of a keyed list with key k (NULL: none). */
static json_t *list_item(json_t *cache, json_t *list, const char *const *keys, const char *k)
{
	if (!keys || !json_is_array(list))
		return NULL;
	return json_object_get(list_index(cache, list, keys), k);
}

/* The value a set path leads to in obj (NULL: absent); cache as list_index(). */
static json_t *value_at(json_t *cache, json_t *obj, const char *const *path, size_t n,
			const char *field)
{
	if (!n || !obj)
		return obj;
	if (strncmp(path[0], "f:", 2) == 0)
		return value_at(cache, json_object_get(obj, path[0] + 2), path + 1, n - 1,
				path[0] + 2);
	if (strncmp(path[0], "k:", 2) == 0 && json_is_array(obj)) {
		json_t *item = list_item(cache, obj, pk_srv_list_keys(field), path[0]);
		return item ? value_at(cache, item, path + 1, n - 1, field) : NULL;
	}
	return NULL;
}

/* ".spec.containers[name="c"].image" for a set path. */
static void path_text(const char *const *path, size_t n, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && o + 1 < len; i++) {
		if (strncmp(path[i], "f:", 2) == 0) {
			o += (size_t)snprintf(buf + o, len - o, ".%s", path[i] + 2);
			continue;
		}
		json_t *k = json_loads(path[i] + 2, 0, NULL);
		const char *key;
		json_t *v;
		int first = 1;
		o += (size_t)snprintf(buf + o, len - o, "[");
		json_object_foreach(k, key, v)
		{
			char *s = json_dumps(v, JSON_ENCODE_ANY);
			o += (size_t)snprintf(buf + o, len - o, "%s%s=%s", first ? "" : ",", key,
					      s ? s : "");
			free(s);
			first = 0;
		}
		json_decref(k);
		if (o + 1 < len)
			o += (size_t)snprintf(buf + o, len - o, "]");
	}
}

/* ---- conflicts -------------------------------------------------------------------- */
struct apply {
	json_t *live, *config, *managed; /* managed: the live managedFields (a copy) */
	json_t *cache;			 /* list_index() of config and live */
	json_t *out_cache, *gone;	 /* of the object built; its items to remove */
	const char *manager;
	const char *sub; /* "" or "status": the entries of each are apart */
	bool force;
	json_t *conflicts; /* [{manager, field}] */
	const char *path[PK_MAX_DEPTH + 2];
	size_t depth;
};

/* Does entry's set own the leaf at a->path? */
static bool owns(const struct apply *a, const json_t *set)
{
	for (size_t i = 0; set && i < a->depth; i++)
		set = json_object_get(set, a->path[i]);
	return set && is_leaf(set);
}

static void drop_leaf(const struct apply *a, json_t *set)
{
	for (size_t i = 0; set && i + 1 < a->depth; i++)
		set = json_object_get(set, a->path[i]);
	if (set)
		json_object_del(set, a->path[a->depth - 1]);
}

/* Is entry manager's for op on sub ("" the main resource, "status")? */
static bool same_manager(const json_t *entry, const char *manager, const char *op, const char *sub)
{
	const char *m = json_string_value(json_object_get(entry, "manager"));
	const char *o = json_string_value(json_object_get(entry, "operation"));
	const char *s = json_string_value(json_object_get(entry, "subresource"));
	return m && strcmp(m, manager) == 0 && o && strcmp(o, op) == 0 &&
	       strcmp(s ? s : "", sub) == 0;
}

static void check_leaf(struct apply *a)
{
	json_t *want = value_at(a->cache, a->config, a->path, a->depth, NULL);
	json_t *have = value_at(a->cache, a->live, a->path, a->depth, NULL);
	size_t i;
	json_t *e;
	json_array_foreach(a->managed, i, e)
	{
		json_t *set = json_object_get(e, "fieldsV1");
		if (same_manager(e, a->manager, "Apply", a->sub) || !owns(a, set))
			continue;
		if (have && want && json_equal(want, have))
			continue; /* the same value: shared ownership, no conflict */
		if (a->force) {
			drop_leaf(a, set);
			continue;
		}
		char field[1024];
		path_text(a->path, a->depth, field, sizeof(field));
		json_array_append_new(a->conflicts,
				      json_pack("{s:O,s:O,s:s}", "manager",
						json_object_get(e, "manager"), "apiVersion",
						json_object_get(e, "apiVersion"), "field", field));
	}
}

static void walk_conflicts(struct apply *a, const json_t *set)
{
	const char *k;
	json_t *c;
	json_object_foreach((json_t *)set, k, c)
	{
		if (strcmp(k, ".") == 0 || a->depth > PK_MAX_DEPTH)
			continue;
		a->path[a->depth++] = k;
		if (is_leaf(c))
			check_leaf(a);
		else
			walk_conflicts(a, c);
		a->depth--;
	}
}

/* ---- merge and removal ---------------------------------------------------------- */
static json_t *merge(const json_t *live, const json_t *config, const char *field, int depth);

static json_t *merge_list(const json_t *live, const json_t *config, const char *const *keys,
			  int depth)
{
	json_t *out = json_array(), *at = json_object(), *c, *l;
	size_t i;
	json_array_foreach(live, i, l)
	{
		char *k = item_key(l, keys);
		if (k && !json_object_get(at, k))
			json_object_set_new(at, k, json_integer((json_int_t)i));
		free(k);
		json_array_append(out, l);
	}
	json_array_foreach(config, i, c)
	{
		char *ck = item_key(c, keys);
		json_t *j = ck ? json_object_get(at, ck) : NULL;
		if (j) {
			size_t x = (size_t)json_integer_value(j);
			json_array_set_new(out, x,
					   merge(json_array_get(out, x), c, NULL, depth + 1));
		} else {
			if (ck)
				json_object_set_new(at, ck,
						    json_integer((json_int_t)json_array_size(out)));
			json_array_append(out, c);
		}
		free(ck);
	}
	json_decref(at);
	return out;
}

static json_t *merge(const json_t *live, const json_t *config, const char *field, int depth)
{
	const char *const *keys = pk_srv_list_keys(field);
	if (depth > PK_MAX_DEPTH)
		return json_deep_copy(config);
	if (json_is_array(live) && json_is_array(config) && keys)
		return merge_list(live, config, keys, depth);
	if (!json_is_object(live) || !json_is_object(config))
		return json_deep_copy(config);
	json_t *out = json_deep_copy(live), *c;
	const char *k;
	json_object_foreach((json_t *)config, k, c)
	    json_object_set_new(out, k, merge(json_object_get(live, k), c, k, depth + 1));
	return out;
}

/*
 * Remove the value a set path leads to: a field at once; a keyed item is
 * noted in a->gone ("%p" of its list -> {a: list, rm: {"%p" of the item}})
 * and the lists are compacted once the walk is over (remove_gone()), so that
 * removing many items stays linear.
 */
static void remove_at(struct apply *a, json_t *obj, const char *const *path, size_t n)
{
	json_t *parent = value_at(a->out_cache, obj, path, n - 1, NULL);
	const char *last = path[n - 1];
	const char *pfield = n >= 2 && strncmp(path[n - 2], "f:", 2) == 0 ? path[n - 2] + 2 : NULL;
	if (strncmp(last, "f:", 2) == 0 && json_is_object(parent)) {
		json_object_del(parent, last + 2);
		return;
	}
	json_t *item = list_item(a->out_cache, parent, pk_srv_list_keys(pfield), last), *e;
	char lp[32], ip[32];
	if (!item)
		return;
	snprintf(lp, sizeof(lp), "%p", (void *)parent);
	snprintf(ip, sizeof(ip), "%p", (void *)item);
	if (!(e = json_object_get(a->gone, lp))) {
		e = json_pack("{s:O,s:{}}", "a", parent, "rm");
		json_object_set_new(a->gone, lp, e);
	}
	json_object_set(json_object_get(e, "rm"), ip, item);
}

/* The keyed items remove_at() noted leave their lists, each list in one pass. */
static void remove_gone(struct apply *a)
{
	const char *k;
	json_t *e;
	json_object_foreach(a->gone, k, e)
	{
		json_t *list = json_object_get(e, "a"), *rm = json_object_get(e, "rm");
		json_t *keep = json_array(), *item;
		size_t i;
		json_array_foreach(list, i, item)
		{
			char ip[32];
			snprintf(ip, sizeof(ip), "%p", (void *)item);
			if (!json_object_get(rm, ip))
				json_array_append(keep, item);
		}
		json_array_clear(list);
		json_array_extend(list, keep);
		json_decref(keep);
	}
}

static bool owned_by_other(const struct apply *a)
{
	size_t i;
	json_t *e;
	json_array_foreach(a->managed, i, e)
	{
		if (same_manager(e, a->manager, "Apply", a->sub))
			continue;
		json_t *set = json_object_get(e, "fieldsV1");
		for (size_t d = 0; set && d < a->depth; d++)
			set = json_object_get(set, a->path[d]);
		if (set)
			return true;
	}
	return false;
}

/* Leaves of prev missing from next and owned by nobody else leave obj. */
static void walk_removed(struct apply *a, const json_t *prev, const json_t *next, json_t *obj)
{
	const char *k;
	json_t *c;
	json_object_foreach((json_t *)prev, k, c)
	{
		if (strcmp(k, ".") == 0 || a->depth > PK_MAX_DEPTH)
			continue;
		json_t *n = json_object_get(next, k);
		a->path[a->depth++] = k;
		if (!n && !owned_by_other(a))
			remove_at(a, obj, a->path, a->depth);
		else if (n && !is_leaf(c))
			walk_removed(a, c, n, obj);
		a->depth--;
	}
}

/* ---- managedFields ------------------------------------------------------------------- */
static json_t *entry_new(const char *manager, const char *op, const char *sub,
			 const char *api_version, json_t *set)
{
	char now[32];
	pk_time_format((int64_t)time(NULL), now);
	json_t *e = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "manager", manager, "operation", op,
			      "apiVersion", api_version, "time", now, "fieldsType", "FieldsV1",
			      "fieldsV1", set);
	if (e && *sub)
		json_object_set_new(e, "subresource", json_string(sub));
	return e;
}

/* Replace (or add) manager's entry for op; drop entries that own nothing. */
static void managed_set(json_t *managed, const char *manager, const char *op, const char *sub,
			json_t *entry)
{
	size_t i;
	json_t *e;
	for (i = 0; i < json_array_size(managed);) {
		e = json_array_get(managed, i);
		if (same_manager(e, manager, op, sub) ||
		    json_object_size(json_object_get(e, "fieldsV1")) == 0)
			json_array_remove(managed, i);
		else
			i++;
	}
	if (entry)
		json_array_append_new(managed, entry);
}

int pk_srv_managed_create(json_t *obj, const char *manager)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	if (!manager || !json_is_object(meta) || !av)
		return 0;
	json_t *managed = json_array();
	managed_set(managed, manager, "Update", "",
		    entry_new(manager, "Update", "", av, config_set(obj, false)));
	return json_object_set_new(meta, "managedFields", managed);
}

/* ---- apply ------------------------------------------------------------------------------ */
/*
 * What a configuration applies: on the main resource all of it but status;
 * on the status subresource only status (with the identity to find it).
 */
static json_t *applied_part(const json_t *config, bool status)
{
	json_t *cfg;
	if (!status) {
		cfg = json_deep_copy(config);
		json_object_del(cfg, "status");
	} else {
		json_t *meta = json_object_get(config, "metadata");
		cfg = json_object();
		json_object_set(cfg, "apiVersion", json_object_get(config, "apiVersion"));
		json_object_set(cfg, "kind", json_object_get(config, "kind"));
		json_object_set_new(cfg, "metadata", json_object());
		json_object_set(json_object_get(cfg, "metadata"), "name",
				json_object_get(meta, "name"));
		json_object_set(json_object_get(cfg, "metadata"), "namespace",
				json_object_get(meta, "namespace"));
		if (json_object_get(config, "status"))
			json_object_set(cfg, "status", json_object_get(config, "status"));
	}
	json_object_del(json_object_get(cfg, "metadata"), "managedFields");
	return cfg;
}

/* The object applying a->config as a->manager makes of a->live (NULL: create). */
static json_t *apply_once(struct apply *a, bool status)
{
	const char *av = json_string_value(json_object_get(a->config, "apiVersion"));
	json_t *cfg = applied_part(a->config, status);
	json_t *next = config_set(cfg, status), *prev = NULL;
	size_t i;
	json_t *e;
	json_array_foreach(a->managed, i, e) if (same_manager(e, a->manager, "Apply", a->sub))
	    prev = json_object_get(e, "fieldsV1");
	prev = prev ? json_deep_copy(prev) : json_object();
	a->depth = 0;
	a->cache = json_object();
	walk_conflicts(a, next);
	json_decref(a->cache);
	a->cache = NULL;
	if (json_array_size(a->conflicts)) {
		json_decref(cfg);
		json_decref(next);
		json_decref(prev);
		return NULL;
	}
	json_t *out = a->live ? merge(a->live, cfg, NULL, 0) : json_incref(cfg);
	json_decref(cfg);
	a->depth = 0;
	a->out_cache = json_object();
	a->gone = json_object();
	walk_removed(a, prev, next, out);
	remove_gone(a);
	json_decref(a->out_cache);
	json_decref(a->gone);
	json_decref(prev);
	managed_set(a->managed, a->manager, "Apply", a->sub,
		    entry_new(a->manager, "Apply", a->sub, av ?: "", next));
	json_t *meta = json_object_get(out, "metadata");
	if (json_is_object(meta))
		json_object_set(meta, "managedFields", a->managed);
	return out;
}

/* Judge (q->admit) and write the object one attempt produced. */
static int apply_write(const struct pk_srv_apply_req *q, const struct apply *a, json_t *obj,
		       struct pk_errors *errs, json_t **ret)
{
	int rc = q->admit ? q->admit(q->admit_arg, a->live, obj, errs) : 0;
	if (rc < 0)
		return rc;
	if (!a->live)
		return q->status ? -ENOENT : pk_store_create_opts(q->store, obj, q->wo, errs, ret);
	json_object_set(json_object_get(obj, "metadata"), "resourceVersion",
			pk_get(a->live, "metadata.resourceVersion"));
	return pk_store_update_opts(q->store, obj, q->status ? PK_SUB_STATUS : PK_SUB_MAIN, q->wo,
				    errs, ret);
}

int pk_srv_apply(const struct pk_srv_apply_req *q, struct pk_errors *errs, json_t **ret_obj,
		 json_t **ret_conflicts, bool *ret_created)
{
	int rc = -PK_STORE_ECONFLICT;
	*ret_conflicts = NULL;
	for (int attempt = 0; attempt < APPLY_RETRIES && rc == -PK_STORE_ECONFLICT; attempt++) {
		struct apply a = {.config = (json_t *)q->config,
				  .manager = q->manager,
				  .sub = q->status ? "status" : "",
				  .force = q->force,
				  .conflicts = json_array()};
		rc = pk_store_get(q->store, q->t, q->ns, q->name, &a.live);
		if (rc < 0 && rc != -ENOENT) {
			json_decref(a.conflicts);
			return rc;
		}
		a.managed = json_deep_copy(pk_get(a.live, "metadata.managedFields"));
		if (!json_is_array(a.managed)) {
			json_decref(a.managed);
			a.managed = json_array();
		}
		json_t *obj = apply_once(&a, q->status), *out = NULL;
		if (!obj) {
			*ret_conflicts = a.conflicts;
			rc = -EBUSY;
		} else {
			rc = apply_write(q, &a, obj, errs, &out);
		}
		if (rc == 0) {
			*ret_created = !a.live;
			*ret_obj = out ? out : json_incref(obj);
		}
		if (rc != -EBUSY)
			json_decref(a.conflicts);
		json_decref(obj);
		json_decref(a.live);
		json_decref(a.managed);
		if (rc == -PK_STORE_ECONFLICT)
			pk_errors_clear(errs);
	}
	return rc;
}

/* ---- updates: what a non-apply write changes moves to its manager ---------------- */
/* The leaves of next that differ from prev (changed: true) or the leaves of
 * prev gone from next (changed: false), as a field set. */
static json_t *diff_set(json_t *cache, const json_t *prev, const json_t *next, const char *field,
			int depth)
{
	json_t *out = json_object();
	const char *const *keys = pk_srv_list_keys(field);
	if (depth > PK_MAX_DEPTH)
		return out;
	if (json_is_array(prev) && json_is_array(next) && keys) {
		size_t i;
		json_t *item;
		json_array_foreach(next, i, item)
		{
			char *k = item_key(item, keys);
			const char *path[1] = {k};
			json_t *old = k ? value_at(cache, (json_t *)prev, path, 1, field) : NULL;
			if (k && !json_equal(old, item)) {
				json_t *s = old ? diff_set(cache, old, item, NULL, depth + 1)
						: set_of(item, NULL, depth + 1);
				if (!old)
					json_object_set_new(s, ".", json_object());
				json_object_set_new(out, k, s);
			}
			free(k);
		}
		return out;
	}
	const char *k;
	json_t *n;
	json_object_foreach((json_t *)next, k, n)
	{
		json_t *p = json_object_get(prev, k);
		char f[512];
		snprintf(f, sizeof(f), "f:%s", k);
		if (p && json_equal(p, n))
			continue;
		bool deeper =
		    p && ((json_is_object(p) && json_is_object(n) && json_object_size(n)) ||
			  (json_is_array(p) && json_is_array(n) && pk_srv_list_keys(k)));
		json_t *sub = deeper ? diff_set(cache, p, n, k, depth + 1) : json_object();
		if (deeper && json_object_size(sub) == 0)
			json_decref(
			    sub); /* only items were added or removed: no leaf of this side */
		else
			json_object_set_new(out, f, sub);
	}
	return out;
}

/* Remove from set every leaf of gone; empty branches go too. */
static void set_subtract(json_t *set, const json_t *gone)
{
	const char *k;
	json_t *g, *tmp;
	json_object_foreach_safe((json_t *)gone, tmp, k, g)
	{
		json_t *s = json_object_get(set, k);
		if (!s)
			continue;
		if (is_leaf(g)) {
			json_object_del(set, k);
			continue;
		}
		set_subtract(s, g);
		if (json_object_size(s) == 0)
			json_object_del(set, k);
	}
}

static void set_union(json_t *set, const json_t *more)
{
	const char *k;
	json_t *m;
	json_object_foreach((json_t *)more, k, m)
	{
		json_t *s = json_object_get(set, k);
		if (s && json_is_object(s))
			set_union(s, m);
		else
			json_object_set(set, k, m);
	}
}

int pk_srv_managed_update(const json_t *live, json_t *next, const char *manager)
{
	json_t *managed = pk_get(live, "metadata.managedFields"), *meta;
	const char *av = json_string_value(json_object_get(next, "apiVersion"));
	meta = json_object_get(next, "metadata");
	if (!manager || !json_is_array(managed) || !json_array_size(managed) ||
	    !json_is_object(meta) || !av)
		return 0;
	json_t *mine = pk_get(next, "metadata.managedFields");
	if (json_is_array(mine) && json_array_size(mine) && !json_equal(mine, managed))
		return 0; /* the writer set managedFields itself: kept as written */
	json_t *cmp_prev = json_deep_copy(live), *cmp_next = json_deep_copy(next);
	json_object_del(json_object_get(cmp_prev, "metadata"), "managedFields");
	json_object_del(json_object_get(cmp_next, "metadata"), "managedFields");
	json_object_del(cmp_prev, "status");
	json_object_del(cmp_next, "status");
	json_t *cache = json_object();
	json_t *changed = strip_server_fields(diff_set(cache, cmp_prev, cmp_next, NULL, 0), false);
	json_t *removed = strip_server_fields(diff_set(cache, cmp_next, cmp_prev, NULL, 0), false);
	json_decref(cache);
	json_t *out = json_deep_copy(managed), *entry = NULL, *e;
	json_decref(cmp_prev);
	json_decref(cmp_next);
	size_t i;
	json_array_foreach(out, i, e)
	{
		json_t *set = json_object_get(e, "fieldsV1");
		if (!json_is_object(set))
			continue;
		set_subtract(set, changed);
		set_subtract(set, removed);
		if (same_manager(e, manager, "Update", ""))
			entry = e;
	}
	if (entry)
		set_union(json_object_get(entry, "fieldsV1"), changed);
	else if (json_object_size(changed))
		json_array_append_new(out,
				      entry_new(manager, "Update", "", av, json_incref(changed)));
	managed_set(out, "", "", "", NULL); /* no manager "": drops the entries owning nothing */
	json_object_set_new(meta, "managedFields", out);
	json_decref(changed);
	json_decref(removed);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memory.c — the in-memory backend of the write path (writer.h): a JSON
 * array of objects written in place, as the offline runs write the cluster
 * they were given (podctl schedule, the scenario tests, the queue
 * controller's admission pass).
 *
 * The objects the writer holds are indexed by their one key (pk_obj_key()),
 * found again in O(1) per item.  A batch is written as the store's backend
 * writes one: items without dependencies first, then the others, each only
 * if every item it depends on was written; each item under its
 * resourceVersion and uid preconditions, then checked against what
 * pk_write_item_apply() would refuse (a pod bound elsewhere, a claim bound to
 * another volume, a field that is not an object), so that an object changes
 * only when its whole item can be written; then the item is applied to the
 * object itself, which keeps it where it is in the array (no copy of each
 * object written, and whoever holds a reference to it sees it written; in
 * the shared mode an object is copied into its place at its first change
 * instead, and whoever shares the original keeps it as it was).
 * Deletions are gathered and the array is compacted once per batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/lib/hash.h"
#include "kernel/lib/map.h"
#include "kernel/write/writer.h"

#define MEM_KEY_MAX 600 /* a kind, a namespace of 63 and a name of 253, with room */

struct pk_writer_memory_index {
	struct pk_map map;   /* pk_obj_key -> json_t * (borrowed: the array holds it) */
	uint64_t version;    /* the highest resourceVersion of the objects indexed */
	size_t n;	     /* the items of the array the last writer left */
	enum pk_kind *kinds; /* pk_kind_of() of the array's first nkinds items */
	size_t nkinds, capkinds;
};

static const struct pk_writer_ops memory_ops;

struct mem_backend {
	json_t *objects;			      /* the array written (a reference) */
	struct pk_map *index;			      /* &ix->map */
	struct pk_writer_memory_index own_index, *ix; /* ix: opts.index, or &own_index */
	bool indexed;	   /* index_all went well: opts.index holds the array */
	struct pk_map own; /* opts.shared: pk_obj_key -> the copy made before a change */
	struct pk_writer_memory_opts opts;
	uint64_t version; /* the last resourceVersion stamped (opts.versions) */
	uint64_t names;	  /* names made from a generateName */
	json_t **gone;	  /* the objects deleted in this batch, still in the array */
	size_t ngone, capgone;
};

/*
 * The type of an object of the array, or NULL when the writer does not hold it.
 * Every object of the array is asked at each writer's start: one hashed
 * lookup each, not a path parsed.
 */
static const struct pk_type *held_by(bool (*holds)(const struct pk_type *), const json_t *o)
{
	const struct pk_type *t;

	if (!json_is_object(o))
		return NULL;
	t = pk_type_by_kind(json_string_value(json_object_get(o, "kind")));
	if (!t || (holds && !holds(t)))
		return NULL;
	return t;
}

static const struct pk_type *held_type(const struct mem_backend *b, const json_t *o)
{
	return held_by(b->opts.holds, o);
}

static const char *md_string(const json_t *md, const char *key)
{
	return json_string_value(json_object_get(md, key));
}

static const char *obj_key(char *buf, const struct pk_type *t, const json_t *o)
{
	const json_t *md = json_object_get(o, "metadata");

	return pk_obj_key(buf, MEM_KEY_MAX, t, md_string(md, "namespace"),
			  md_string(md, "name") ?: "");
}

static uint64_t obj_rv(const json_t *o)
{
	const char *rv = md_string(json_object_get(o, "metadata"), "resourceVersion");

	return rv ? strtoull(rv, NULL, 10) : 0;
}

static int index_from(struct mem_backend *b, size_t from)
{
	char buf[MEM_KEY_MAX];

	for (size_t i = from; i < json_array_size(b->objects); i++) {
		const json_t *o = json_array_get(b->objects, i);
		const struct pk_type *t = held_type(b, o);
		const char *key = t ? obj_key(buf, t, o) : NULL;
		uint64_t rv = b->opts.versions && json_is_object(o) ? obj_rv(o) : 0;

		if (rv > b->version)
			b->version = rv;
		if (key && pk_map_put(b->index, key, (json_t *)o) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The index: opts.index, holding the array's first opts.indexed objects as
 * the writer before left them, or emptied; then the objects after those.
 */
static int index_all(struct mem_backend *b)
{
	struct pk_writer_memory_index *ix = b->opts.index;
	size_t from = ix ? b->opts.indexed : 0;

	if (!ix) {
		b->own_index.map = (struct pk_map)PK_MAP_INIT(NULL);
		b->ix = &b->own_index;
		b->index = &b->own_index.map;
		return index_from(b, 0);
	}
	b->ix = ix;
	b->index = &ix->map;
	if (from == 0 || from > ix->n || from > json_array_size(b->objects)) {
		pk_map_free(&ix->map);
		ix->map = (struct pk_map)PK_MAP_INIT(NULL);
		ix->version = 0;
		from = 0;
	}
	if (ix->nkinds > from)
		ix->nkinds = from;
	ix->n = 0; /* holds nothing the next writer may trust until this one is done */
	b->version = ix->version;
	return index_from(b, from);
}

int pk_writer_memory_index_new(struct pk_writer_memory_index **ret)
{
	struct pk_writer_memory_index *ix = calloc(1, sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	ix->map = (struct pk_map)PK_MAP_INIT(NULL);
	*ret = ix;
	return 0;
}

void pk_writer_memory_index_free(struct pk_writer_memory_index *ix)
{
	if (!ix)
		return;
	pk_map_free(&ix->map);
	free(ix->kinds);
	free(ix);
}

/* The kinds of the array's items up to n: those not read yet read; -ENOMEM. */
static int kinds_upto(struct pk_writer_memory_index *ix, const json_t *objects, size_t n)
{
	if (n > ix->capkinds) {
		size_t cap = n + n / 2 + 16;
		enum pk_kind *v = realloc(ix->kinds, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ix->kinds = v;
		ix->capkinds = cap;
	}
	for (; ix->nkinds < n; ix->nkinds++)
		ix->kinds[ix->nkinds] = pk_kind_of(json_array_get(objects, ix->nkinds));
	return 0;
}

/* A new item at the array's end: its kind, when those before it are read. */
static void kinds_appended(struct pk_writer_memory_index *ix, const json_t *objects)
{
	size_t n = json_array_size(objects);

	if (ix->nkinds + 1 == n && kinds_upto(ix, objects, n) < 0)
		ix->nkinds = 0;
}

const enum pk_kind *pk_writer_memory_kinds(struct pk_writer *w, const json_t *objects)
{
	struct mem_backend *b = pk_writer_backend(w, &memory_ops);

	if (!b || b->objects != objects || !b->ix)
		return NULL;
	return kinds_upto(b->ix, objects, json_array_size(objects)) < 0 ? NULL : b->ix->kinds;
}

int pk_writer_memory_index_moved(struct pk_writer_memory_index *ix,
				 bool (*holds)(const struct pk_type *kind), const json_t *gone,
				 const json_t *came, size_t n, const enum pk_kind *kinds)
{
	char buf[MEM_KEY_MAX];
	const struct pk_type *t;
	const char *key;
	size_t i;
	json_t *o;
	int r = 0;

	if (!ix)
		return -EINVAL;
	json_array_foreach(gone, i, o)
	{
		t = held_by(holds, o);
		key = t ? obj_key(buf, t, o) : NULL;
		if (key && pk_map_get(&ix->map, key) == o) /* not under a key that came */
			pk_map_del(&ix->map, key);
	}
	json_array_foreach(came, i, o)
	{
		t = held_by(holds, o);
		key = t ? obj_key(buf, t, o) : NULL;
		if (r == 0 && key && pk_map_put(&ix->map, key, o) < 0)
			r = -ENOMEM;
	}
	ix->nkinds = 0; /* the items moved: their kinds are the caller's, or read again */
	if (r == 0 && kinds && n <= ix->capkinds) {
		memcpy(ix->kinds, kinds, n * sizeof(*kinds));
		ix->nkinds = n;
	} else if (r == 0 && kinds) {
		enum pk_kind *v = realloc(ix->kinds, n * sizeof(*v));

		if (v) {
			memcpy(v, kinds, n * sizeof(*v));
			ix->kinds = v;
			ix->capkinds = ix->nkinds = n;
		}
	}
	ix->n = r == 0 ? n : 0;
	return r;
}

json_t *pk_writer_memory_index_get(const struct pk_writer_memory_index *ix, const char *key)
{
	return ix && key ? pk_map_get(&ix->map, key) : NULL;
}

size_t pk_writer_memory_index_count(const struct pk_writer_memory_index *ix)
{
	return ix ? ix->map.live : 0;
}

/* ---- what an item may do to its object ------------------------------------------- */

/* A field an item sets: the value it has (a conflict when another one), and its parent. */
static int field_free(const json_t *obj, const char *path, const char *want)
{
	const char *had = pk_get_string(obj, path);

	if (had && *had && strcmp(had, want) != 0)
		return -PK_WRITE_ECONFLICT;
	return json_is_object(json_object_get(obj, "spec")) ? 0 : -EINVAL;
}

static bool condition_status_ok(const char *s)
{
	return strcmp(s, "True") == 0 || strcmp(s, "False") == 0 || strcmp(s, "Unknown") == 0;
}

/*
 * What pk_write_item_apply() would refuse, checked before anything is
 * written: a changed uid, a pod bound elsewhere, a claim bound to another
 * volume, metadata, spec or status of the wrong type, a condition status
 * that is none.  0: only running out of memory can stop the item.
 */
static int item_check(const struct pk_write_item *it, const json_t *obj)
{
	const json_t *status = json_object_get(obj, "status");
	int r;

	if (it->uid && strcmp(pk_get_string(obj, "metadata.uid") ?: "", it->uid) != 0)
		return -PK_WRITE_ECONFLICT;
	if (it->node && (r = field_free(obj, "spec.nodeName", it->node)) < 0)
		return r;
	if (it->volume && (r = field_free(obj, "spec.volumeName", it->volume)) < 0)
		return r;
	if ((it->annotations || it->replace) && !json_is_object(json_object_get(obj, "metadata")))
		return -EINVAL;
	if (it->replace && !json_is_object(json_object_get(it->replace, "metadata")))
		return -EINVAL;
	if (it->status || !status)
		status = NULL; /* replaced, or made */
	if ((it->nconds || it->claim) && status && !json_is_object(status))
		return -EINVAL;
	if (it->nconds && status) {
		const json_t *conds = json_object_get(status, "conditions");

		if (conds && !json_is_null(conds) && !json_is_array(conds))
			return -EINVAL;
	}
	for (size_t i = 0; i < it->nconds; i++)
		if (!condition_status_ok(it->conds[i].status))
			return -EINVAL;
	return 0;
}

/* ---- writing ----------------------------------------------------------------------- */

static void stamp_version(struct mem_backend *b, json_t *obj)
{
	char rv[24];

	if (!b->opts.versions)
		return;
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)++b->version);
	pk_set(obj, "metadata.resourceVersion", json_string(rv));
}

/* A deletion: out of the index now, out of the array when the batch ends. */
static int remove_obj(struct mem_backend *b, const char *key, json_t *obj)
{
	if (b->ngone == b->capgone) {
		size_t cap = b->capgone ? b->capgone * 2 : 16;
		json_t **v = realloc(b->gone, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->gone = v;
		b->capgone = cap;
	}
	b->gone[b->ngone++] = obj;
	pk_map_del(b->index, key);
	pk_map_del(&b->own, key);
	return 0;
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (json_t *const *)a, y = (uintptr_t) * (json_t *const *)b;

	return x < y ? -1 : x > y;
}

/* The array without the objects deleted in this batch, in one pass. */
static int compact(struct mem_backend *b)
{
	size_t n = json_array_size(b->objects), at = 0;

	struct pk_writer_memory_index *ix = b->ix;
	size_t nk = 0; /* the kinds read of the items kept so far */

	qsort(b->gone, b->ngone, sizeof(*b->gone), ptr_cmp);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(b->objects, i);

		if (bsearch(&o, b->gone, b->ngone, sizeof(*b->gone), ptr_cmp))
			continue;
		if (at != i && json_array_set(b->objects, at, o) < 0) {
			ix->nkinds = 0;
			return -ENOMEM;
		}
		if (i < ix->nkinds && nk == at)
			ix->kinds[nk++] = ix->kinds[i];
		at++;
	}
	ix->nkinds = nk;
	while (json_array_size(b->objects) > at)
		json_array_remove(b->objects, json_array_size(b->objects) - 1);
	b->ngone = 0;
	return 0;
}

/* What a change of generation is about: obj but its metadata and status (a shallow copy). */
static json_t *desired(const json_t *obj)
{
	json_t *c = json_copy((json_t *)obj);

	json_object_del(c, "metadata");
	json_object_del(c, "status");
	return c;
}

/*
 * The item applied to obj; with versions, the next resourceVersion, and
 * metadata.generation one up when the desired state changed (a volume, a
 * replacement; a binding does not change it), as a store keeps them.
 */
static int apply(struct mem_backend *b, const struct pk_write_item *it, json_t *obj, int64_t now)
{
	const char *had = it->volume ? pk_get_string(obj, "spec.volumeName") : NULL;
	bool changed = it->volume && !(had && strcmp(had, it->volume) == 0);
	json_t *before = b->opts.versions && it->replace ? desired(obj) : NULL, *after;
	int r = pk_write_item_apply(it, obj, now);

	if (r < 0 || !b->opts.versions) {
		json_decref(before);
		return r;
	}
	if (before) {
		after = desired(obj);
		changed = changed || !json_equal(before, after);
		json_decref(after);
		json_decref(before);
	}
	if (changed)
		pk_set(obj, "metadata.generation",
		       json_integer(json_integer_value(pk_get(obj, "metadata.generation")) + 1));
	stamp_version(b, obj);
	return 0;
}

/*
 * A copy of obj to apply an item to (pk_write_item_apply): a pod's has its
 * own metadata and status, a new spec holding the same fields and the rest
 * shared, as the store copies a pod it edits (an item sets only top-level
 * fields of its spec, and changes its metadata and status within); any
 * other kind's is deep.
 */
static json_t *copy_for_item(const json_t *obj, const struct pk_type *t)
{
	static const char *const copied[] = {"metadata", "status"};
	json_t *next, *spec;

	if (!t || t->pk != PK_KIND_POD)
		return json_deep_copy(obj);
	next = json_copy((json_t *)obj);
	for (size_t i = 0; next && i < sizeof(copied) / sizeof(copied[0]); i++) {
		json_t *v = json_object_get(obj, copied[i]);

		if (v && json_object_set_new(next, copied[i], json_deep_copy(v)) < 0) {
			json_decref(next);
			return NULL;
		}
	}
	spec = json_object_get(obj, "spec");
	if (next && json_is_object(spec) &&
	    json_object_set_new(next, "spec", json_copy(spec)) < 0) {
		json_decref(next);
		return NULL;
	}
	return next;
}

/*
 * opts.shared: obj (under key, of kind t) as the array's own, a copy
 * (copy_for_item) in its place at the first change (*ret_obj), the shared
 * one left as it was.
 */
static int own_copy(struct mem_backend *b, const struct pk_type *t, const char *key, json_t *obj,
		    json_t **ret_obj)
{
	size_t n = json_array_size(b->objects), i;
	json_t *copy;

	*ret_obj = obj;
	if (!b->opts.shared || pk_map_get(&b->own, key) == obj)
		return 0;
	for (i = 0; i < n && json_array_get(b->objects, i) != obj; i++)
		;
	if (i == n)
		return -ENOENT;
	if (!(copy = copy_for_item(obj, t)))
		return -ENOMEM;
	if (pk_map_put(&b->own, key, copy) < 0) {
		json_decref(copy);
		return -ENOMEM;
	}
	if (json_array_set_new(b->objects, i, copy) < 0) { /* it freed the copy */
		pk_map_del(&b->own, key);
		return -ENOMEM;
	}
	pk_map_put(b->index, key, copy); /* the key is there: a replacement cannot fail */
	*ret_obj = copy;
	return 0;
}

static int modify(struct mem_backend *b, const struct pk_write_item *it, int64_t now,
		  json_t **ret_obj)
{
	const struct pk_type *t = it->kind;
	char buf[MEM_KEY_MAX];
	const char *key = t ? pk_obj_key(buf, sizeof(buf), t, it->ns, it->name) : NULL;
	json_t *obj =
	    key && (!b->opts.holds || b->opts.holds(it->kind)) ? pk_map_get(b->index, key) : NULL;
	bool bare;
	int r;

	if (!obj)
		return -ENOENT;
	if ((it->rv && obj_rv(obj) != it->rv) || (r = item_check(it, obj)) == -PK_WRITE_ECONFLICT) {
		*ret_obj = json_incref(obj);
		return -PK_WRITE_ECONFLICT;
	}
	if (r < 0)
		return r;
	if (it->evict && (it->propagation == PK_WRITE_PROPAGATE_ORPHAN ||
			  it->propagation == PK_WRITE_PROPAGATE_FOREGROUND))
		return -EOPNOTSUPP;
	bare = it->evict && !it->node && !it->volume && !it->annotations && !it->nconds &&
	       !it->claim && !it->replace && !it->status;
	if (!bare && ((r = own_copy(b, t, key, obj, &obj)) < 0 || (r = apply(b, it, obj, now)) < 0))
		return r;
	if (it->evict && (r = remove_obj(b, key, obj)) < 0)
		return r;
	*ret_obj = json_incref(obj);
	return 0;
}

/* A name for prefix in namespace ns that no object of type t has. */
static int make_name(struct mem_backend *b, const struct pk_type *t, const char *ns,
		     const char *prefix, char name[MEM_KEY_MAX])
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	char buf[MEM_KEY_MAX];

	for (int tries = 0; tries < 100; tries++) {
		char count[24];
		uint64_t h;
		int n;

		snprintf(count, sizeof(count), "%llu", (unsigned long long)b->names++);
		h = pk_fnv1a(pk_fnv1a(pk_fnv1a(PK_FNV1A_INIT, ns), prefix), count);
		n = snprintf(name, MEM_KEY_MAX, "%.240s", prefix);
		for (int i = 0; i < 5; i++, h /= sizeof(alphabet) - 1)
			name[n++] = alphabet[h % (sizeof(alphabet) - 1)];
		name[n] = '\0';
		if (!pk_map_get(b->index, pk_obj_key(buf, sizeof(buf), t, ns, name)))
			return 0;
	}
	return -EEXIST;
}

/* metadata of a new object: its name, namespace and (versions) what a store stamps. */
static int new_metadata(struct mem_backend *b, const struct pk_type *t, json_t *obj, int64_t now)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *ns = pk_get_string(obj, "metadata.namespace");
	char name[MEM_KEY_MAX], uid[40], ts[32];
	int r;

	if (!json_is_object(md))
		return -EINVAL;
	if (t->namespaced && (!ns || !*ns) &&
	    json_object_set_new(md, "namespace", json_string("default")) < 0)
		return -ENOMEM;
	if (!t->namespaced)
		json_object_del(md, "namespace");
	if (!pk_get_string(obj, "metadata.name")) {
		const char *prefix = pk_get_string(obj, "metadata.generateName");

		if (!prefix)
			return -EINVAL;
		r = make_name(b, t, t->namespaced ? pk_get_string(obj, "metadata.namespace") : "",
			      prefix, name);
		if (r < 0)
			return r;
		if (json_object_set_new(md, "name", json_string(name)) < 0)
			return -ENOMEM;
	}
	if (!b->opts.versions)
		return 0;
	snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012llx",
		 (unsigned long long)(b->version + 1));
	pk_time_format(now, ts);
	if (json_object_set_new(md, "uid", json_string(uid)) < 0 ||
	    json_object_set_new(md, "creationTimestamp", json_string(ts)) < 0 ||
	    json_object_set_new(md, "generation", json_integer(1)) < 0)
		return -ENOMEM;
	stamp_version(b, obj);
	return 0;
}

static int create(struct mem_backend *b, const struct pk_write_item *it, int64_t now,
		  json_t **ret_obj)
{
	const struct pk_type *t = it->kind;
	char buf[MEM_KEY_MAX];
	const char *key;
	json_t *obj;
	int r;

	if (!t || (b->opts.holds && !b->opts.holds(it->kind)))
		return -EOPNOTSUPP;
	obj = json_deep_copy(it->create);
	if (!obj)
		return -ENOMEM;
	r = new_metadata(b, t, obj, now);
	key = r == 0 ? obj_key(buf, t, obj) : NULL;
	if (r == 0 && !key)
		r = -EINVAL;
	if (r == 0 && pk_map_get(b->index, key))
		r = -EEXIST;
	if (r == 0 && json_array_append(b->objects, obj) < 0)
		r = -ENOMEM;
	if (r == 0 && pk_map_put(b->index, key, obj) < 0) {
		json_array_remove(b->objects, json_array_size(b->objects) - 1);
		r = -ENOMEM;
	}
	if (r == 0)
		kinds_appended(b->ix, b->objects);
	if (r == 0 && b->opts.shared && pk_map_put(&b->own, key, obj) < 0)
		r = -ENOMEM; /* in the array all the same: copied again at its first change */
	if (r == 0)
		*ret_obj = obj;
	else
		json_decref(obj);
	return r;
}

/* Item i, written when the items it depends on were (state: 1 written, else not). */
static int write_item(struct mem_backend *b, const struct pk_write_batch *batch, size_t i,
		      const signed char *state, int64_t now, json_t **ret_obj)
{
	const struct pk_write_item *it = &batch->items[i];

	for (size_t d = 0; d < it->ndeps; d++)
		if (it->deps[d] >= batch->n || state[it->deps[d]] != 1)
			return -PK_WRITE_ECONFLICT;
	return it->create ? create(b, it, now, ret_obj) : modify(b, it, now, ret_obj);
}

static int mem_commit(void *backend, const struct pk_write_batch *batch,
		      struct pk_write_result *results)
{
	struct mem_backend *b = backend;
	int64_t now = b->opts.now ? b->opts.now : (int64_t)time(NULL);
	signed char *state = calloc(batch->n, 1);
	int r;

	if (!state)
		return -ENOMEM;
	/* items without dependencies first, as the store's backend writes them */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < batch->n; i++) {
			if ((batch->items[i].ndeps > 0) != (pass == 1))
				continue;
			results[i].error = write_item(b, batch, i, state, now, &results[i].object);
			state[i] = results[i].error == 0 ? 1 : -1;
			if (results[i].error == -ENOMEM)
				b->indexed = false; /* the index may be half written */
		}
	}
	free(state);
	r = b->ngone ? compact(b) : 0;
	if (r < 0)
		b->indexed = false;
	return r;
}

static int mem_get(void *backend, const struct pk_type *kind, const char *ns, const char *name,
		   json_t **ret)
{
	struct mem_backend *b = backend;
	const struct pk_type *t = kind;
	char buf[MEM_KEY_MAX];
	const char *key = t ? pk_obj_key(buf, sizeof(buf), t, ns, name) : NULL;
	json_t *obj =
	    key && (!b->opts.holds || b->opts.holds(kind)) ? pk_map_get(b->index, key) : NULL;

	if (!obj)
		return -ENOENT;
	*ret = json_incref(obj);
	return 0;
}

static void mem_free(void *backend)
{
	struct mem_backend *b = backend;

	if (!b)
		return;
	if (b->opts.index) { /* kept for the next writer */
		b->opts.index->n = b->indexed ? json_array_size(b->objects) : 0;
		b->opts.index->version = b->version;
	} else {
		pk_map_free(&b->own_index.map);
		free(b->own_index.kinds);
	}
	pk_map_free(&b->own);
	free(b->gone);
	json_decref(b->objects);
	free(b);
}

static const struct pk_writer_ops memory_ops = {
    .name = "memory",
    .commit = mem_commit,
    .get = mem_get,
    .free = mem_free,
};

int pk_writer_memory_new(json_t *objects, const struct pk_writer_memory_opts *opts,
			 struct pk_writer **ret)
{
	struct mem_backend *b;
	int r;

	if (!json_is_array(objects) || !ret)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->objects = json_incref(objects);
	if (opts)
		b->opts = *opts;
	r = index_all(b);
	b->indexed = r == 0;
	if (r == 0)
		r = pk_writer_new(&memory_ops, b, ret);
	if (r < 0)
		mem_free(b);
	return r;
}

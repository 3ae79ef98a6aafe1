/* SPDX-License-Identifier: Apache-2.0 */
/*
 * writer.c — the batching every write-path backend shares (writer.h).
 *
 * A batch is a vector of items, one per object, found again through a
 * string map (kernel/lib/map.h) of "kind/namespace/name" so that a binding, its
 * condition and a later eviction of the same pod land in one item.  The
 * first action on an object fixes its precondition.  Committing hands the
 * finished batch to the backend's commit() and keeps the results until the
 * next batch begins.  pk_write_item_apply() is the one definition of what an
 * item does to an object, used by every backend that writes whole objects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/log.h"
#include "kernel/lib/macro.h"
#include "kernel/lib/map.h"
#include "kernel/write/writer.h"

struct pk_writer {
	const struct pk_writer_ops *ops;
	void *backend;
	struct pk_write_batch batch;
	struct pk_map index; /* "kind/ns/name" -> index into batch.items + 1 */
	struct pk_write_result *results;
	size_t nresults;
};

/* Longer keys than this are no valid object's (a namespace of 63, a name of 253). */
#define PK_NAME_MAX_LEN 253 /* a DNS subdomain, the longest name an object has */
#define PK_WRITE_KEY_MAX (16 + 2 * PK_NAME_MAX_LEN)

const char *pk_write_strerror(int error)
{
	if (error == -PK_WRITE_ECONFLICT || error == PK_WRITE_ECONFLICT)
		return "the object changed: precondition failed (conflict)";
	return pk_errno_text(error);
}

int pk_writer_new(const struct pk_writer_ops *ops, void *backend, struct pk_writer **ret)
{
	struct pk_writer *w;

	if (!ops || !ops->commit || !ops->get || !ret)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ops = ops;
	w->backend = backend;
	*ret = w;
	return 0;
}

void *pk_writer_backend(const struct pk_writer *w, const struct pk_writer_ops *ops)
{
	return w && w->ops == ops ? w->backend : NULL;
}

void pk_write_cond_clear(struct pk_write_cond *c)
{
	free(c->type);
	free(c->status);
	free(c->reason);
	free(c->message);
	memset(c, 0, sizeof(*c));
}

static void item_clear(struct pk_write_item *it)
{
	free(it->ns);
	free(it->name);
	free(it->node);
	free(it->volume);
	json_decref(it->annotations);
	for (size_t i = 0; i < it->nconds; i++)
		pk_write_cond_clear(&it->conds[i]);
	free(it->conds);
	json_decref(it->claim);
	free(it->uid);
	json_decref(it->create);
	json_decref(it->replace);
	json_decref(it->status);
	free(it->deps);
	memset(it, 0, sizeof(*it));
}

static void results_clear(struct pk_writer *w)
{
	for (size_t i = 0; i < w->nresults; i++) {
		json_decref(w->results[i].object);
		free(w->results[i].message);
	}
	free(w->results);
	w->results = NULL;
	w->nresults = 0;
}

static void batch_clear(struct pk_writer *w)
{
	results_clear(w);
	for (size_t i = 0; i < w->batch.n; i++)
		item_clear(&w->batch.items[i]);
	w->batch.n = 0;
	pk_map_free(&w->index);
}

void pk_writer_free(struct pk_writer *w)
{
	if (!w)
		return;
	batch_clear(w);
	free(w->batch.items);
	if (w->ops->free)
		w->ops->free(w->backend);
	free(w);
}

const char *pk_writer_name(const struct pk_writer *w)
{
	return w ? w->ops->name : NULL;
}

int pk_writer_batch_begin(struct pk_writer *w)
{
	if (!w)
		return -EINVAL;
	batch_clear(w);
	return 0;
}

size_t pk_writer_batch_size(const struct pk_writer *w)
{
	return w ? w->batch.n : 0;
}

const struct pk_write_batch *pk_writer_batch(const struct pk_writer *w)
{
	return w ? &w->batch : NULL;
}

/* ---- the per-object index ------------------------------------------------------ */

static bool ref_namespaced(const struct pk_write_ref *ref)
{
	return ref->kind->namespaced;
}

static const char *ns_of(const struct pk_write_ref *ref)
{
	return ref_namespaced(ref) ? (ref->ns && *ref->ns ? ref->ns : "default") : "";
}

/* The index key of an object (pk_obj_key), or NULL when it does not fit. */
static const char *ref_key(char *buf, size_t len, const struct pk_write_ref *ref, const char *ns)
{
	return pk_obj_key(buf, len, ref->kind, ns, ref->name);
}

/* The item of ref, created (with ref's precondition) when new; NULL on ENOMEM. */
static struct pk_write_item *item_of(struct pk_writer *w, const struct pk_write_ref *ref)
{
	const char *ns = ns_of(ref);
	char buf[PK_WRITE_KEY_MAX];
	const char *key = ref_key(buf, sizeof(buf), ref, ns);
	uintptr_t at;
	struct pk_write_item *it;

	if (!key)
		return NULL; /* not reached: ref_ok() bounds the names */
	at = (uintptr_t)pk_map_get(&w->index, key);
	if (at) {
		it = &w->batch.items[at - 1];
		if (!it->uid && ref->uid && !(it->uid = strdup(ref->uid)))
			return NULL;
		return it;
	}
	if (w->batch.n == w->batch.cap) {
		size_t cap = w->batch.cap ? w->batch.cap * 2 : 64;
		struct pk_write_item *v = realloc(w->batch.items, cap * sizeof(*v));

		if (!v)
			return NULL;
		w->batch.items = v;
		w->batch.cap = cap;
	}
	it = &w->batch.items[w->batch.n];
	memset(it, 0, sizeof(*it));
	it->kind = ref->kind;
	it->rv = ref->rv;
	it->ns = strdup(ns);
	it->name = strdup(ref->name);
	if (ref->uid && !(it->uid = strdup(ref->uid))) {
		item_clear(it);
		return NULL;
	}
	if (!it->ns || !it->name || pk_map_put(&w->index, key, (void *)(w->batch.n + 1)) < 0) {
		item_clear(it);
		return NULL;
	}
	w->batch.n++;
	return it;
}

/* A kind is a stored row of the kinds table (never another version's). */
static bool ref_ok(const struct pk_writer *w, const struct pk_write_ref *ref)
{
	return w && ref && ref->kind && pk_type_stored(ref->kind) == ref->kind && ref->name &&
	       *ref->name && strlen(ref->name) <= PK_NAME_MAX_LEN &&
	       (!ref->ns || strlen(ref->ns) <= PK_NAME_MAX_LEN) &&
	       (!ref->uid || strlen(ref->uid) <= PK_NAME_MAX_LEN);
}

/*
 * The item of ref for an action on an existing object: NULL (errno) when it
 * is a create, or when a replacement would share the object with a status
 * action (every backend must be able to write an item as one request, or a
 * binding and then a status write).
 */
enum item_action { ACT_STATUS, ACT_REPLACE, ACT_DELETE };

static struct pk_write_item *edit_item(struct pk_writer *w, const struct pk_write_ref *ref,
				       enum item_action act)
{
	bool replace = act == ACT_REPLACE;
	struct pk_write_item *it;

	if (!ref->kind->has_status && act == ACT_STATUS) {
		errno = EINVAL; /* no status subresource: created, replaced or deleted only */
		return NULL;
	}
	it = item_of(w, ref);

	if (!it) {
		errno = ENOMEM;
		return NULL;
	}
	if (it->create ||
	    (replace && (it->node || it->volume || it->annotations || it->nconds || it->claim ||
			 it->status)) ||
	    (act == ACT_STATUS && it->replace)) {
		errno = EBUSY;
		return NULL;
	}
	return it;
}

/* ---- actions --------------------------------------------------------------------- */

int pk_writer_bind(struct pk_writer *w, const struct pk_write_ref *pod, const char *node,
		   const json_t *annotations)
{
	struct pk_write_item *it;

	if (!ref_ok(w, pod) || pod->kind->pk != PK_KIND_POD || !node || !*node ||
	    (annotations && !json_is_object(annotations)))
		return -EINVAL;
	it = edit_item(w, pod, ACT_STATUS);
	if (!it)
		return -errno;
	free(it->node);
	it->node = strdup(node);
	if (!it->node)
		return -ENOMEM;
	if (annotations) {
		if (!it->annotations)
			it->annotations = json_object();
		if (!it->annotations ||
		    json_object_update(it->annotations, (json_t *)annotations) < 0)
			return -ENOMEM;
	}
	return 0;
}

int pk_writer_volume_claim(struct pk_writer *w, const struct pk_write_ref *claim,
			   const char *volume, const json_t *annotations)
{
	struct pk_write_item *it;

	if (!ref_ok(w, claim) || claim->kind->pk != PK_KIND_PERSISTENT_VOLUME_CLAIM ||
	    (annotations && !json_is_object(annotations)) || (!volume && !annotations))
		return -EINVAL;
	it = edit_item(w, claim, ACT_STATUS);
	if (!it)
		return -errno;
	if (volume) {
		free(it->volume);
		if (!(it->volume = strdup(volume)))
			return -ENOMEM;
	}
	if (annotations) {
		if (!it->annotations)
			it->annotations = json_object();
		if (!it->annotations ||
		    json_object_update(it->annotations, (json_t *)annotations) < 0)
			return -ENOMEM;
	}
	return 0;
}

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

int pk_writer_set_condition(struct pk_writer *w, const struct pk_write_ref *obj, const char *type,
			    const char *status, const char *reason, const char *message)
{
	struct pk_write_item *it;
	struct pk_write_cond *c = NULL;

	if (!ref_ok(w, obj) || !type || !*type || !status)
		return -EINVAL;
	it = edit_item(w, obj, ACT_STATUS);
	if (!it)
		return -errno;
	for (size_t i = 0; i < it->nconds && !c; i++)
		if (strcmp(it->conds[i].type, type) == 0)
			c = &it->conds[i];
	if (!c) {
		struct pk_write_cond *v = realloc(it->conds, (it->nconds + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		it->conds = v;
		c = &v[it->nconds++];
		memset(c, 0, sizeof(*c));
		c->type = strdup(type);
	} else {
		free(c->status);
		free(c->reason);
		free(c->message);
	}
	c->status = strdup(status);
	c->reason = dup0(reason);
	c->message = dup0(message);
	return c->type && c->status && c->reason && c->message ? 0 : -ENOMEM;
}

int pk_writer_evict(struct pk_writer *w, const struct pk_write_ref *pod)
{
	struct pk_write_item *it;

	if (!ref_ok(w, pod) || pod->kind->pk != PK_KIND_POD)
		return -EINVAL;
	it = edit_item(w, pod, ACT_DELETE);
	if (!it)
		return -errno;
	it->evict = true;
	return 0;
}

int pk_writer_delete(struct pk_writer *w, const struct pk_write_ref *ref,
		     enum pk_write_propagation how)
{
	struct pk_write_item *it;

	if (!ref_ok(w, ref) || how > PK_WRITE_PROPAGATE_FOREGROUND)
		return -EINVAL;
	it = edit_item(w, ref, ACT_DELETE);
	if (!it)
		return -errno;
	it->evict = true;
	it->propagation = how;
	return 0;
}

int pk_writer_create(struct pk_writer *w, const struct pk_type *kind, const json_t *obj)
{
	struct pk_write_ref ref = {.kind = kind,
				   .ns = pk_get_string(obj, "metadata.namespace"),
				   .name = pk_get_string(obj, "metadata.name")};
	const char *prefix = pk_get_string(obj, "metadata.generateName");
	size_t n = w ? w->batch.n : 0;
	char gen[PK_NAME_MAX_LEN + 32];
	struct pk_write_item *it;

	/* a name the backend makes: the item goes by a key no object has */
	if ((!ref.name || !*ref.name) && prefix && strlen(prefix) <= PK_NAME_MAX_LEN) {
		snprintf(gen, sizeof(gen), "%s(%zu)", prefix, n);
		ref.name = gen;
	}
	if (!ref_ok(w, &ref) || !json_is_object(obj))
		return -EINVAL;
	it = item_of(w, &ref);
	if (!it)
		return -ENOMEM;
	if (w->batch.n == n) /* the object has an item already */
		return -EBUSY;
	it->create = json_incref((json_t *)obj); /* a backend writes a copy of its own */
	return 0;
}

/* Keep a copy of v in *slot (replacing what was there). */
static int keep_copy(json_t **slot, const json_t *v)
{
	json_t *c = json_deep_copy(v);

	if (!c)
		return -ENOMEM;
	json_decref(*slot);
	*slot = c;
	return 0;
}

/* Hold v itself in *slot (replacing what was there): the caller's tree. */
static int keep_held(json_t **slot, json_t *v)
{
	json_t *old = *slot;

	*slot = json_incref(v);
	json_decref(old);
	return 0;
}

int pk_writer_replace(struct pk_writer *w, const struct pk_write_ref *ref, const json_t *obj)
{
	struct pk_write_item *it;

	if (!ref_ok(w, ref) || !json_is_object(obj))
		return -EINVAL;
	it = edit_item(w, ref, ACT_REPLACE);
	return it ? keep_copy(&it->replace, obj) : -errno;
}

int pk_writer_replace_held(struct pk_writer *w, const struct pk_write_ref *ref, json_t *obj)
{
	struct pk_write_item *it;

	if (!ref_ok(w, ref) || !json_is_object(obj))
		return -EINVAL;
	it = edit_item(w, ref, ACT_REPLACE);
	return it ? keep_held(&it->replace, obj) : -errno;
}

int pk_writer_status(struct pk_writer *w, const struct pk_write_ref *ref, const json_t *status)
{
	struct pk_write_item *it;

	if (!ref_ok(w, ref) || !json_is_object(status))
		return -EINVAL;
	it = edit_item(w, ref, ACT_STATUS);
	return it ? keep_copy(&it->status, status) : -errno;
}

int pk_writer_status_held(struct pk_writer *w, const struct pk_write_ref *ref, json_t *status)
{
	struct pk_write_item *it;

	if (!ref_ok(w, ref) || !json_is_object(status))
		return -EINVAL;
	it = edit_item(w, ref, ACT_STATUS);
	return it ? keep_held(&it->status, status) : -errno;
}

int pk_writer_claim(struct pk_writer *w, const struct pk_write_ref *claim, const json_t *status)
{
	struct pk_write_item *it;

	if (!ref_ok(w, claim) || claim->kind->pk != PK_KIND_RESOURCE_CLAIM ||
	    !json_is_object(status))
		return -EINVAL;
	it = edit_item(w, claim, ACT_STATUS);
	if (!it)
		return -errno;
	json_decref(it->claim);
	it->claim = json_deep_copy(status);
	return it->claim ? 0 : -ENOMEM;
}

int pk_writer_depend(struct pk_writer *w, const struct pk_write_ref *obj,
		     const struct pk_write_ref *dep)
{
	struct pk_write_item *it, *d;
	size_t di, *v;

	if (!ref_ok(w, obj) || !ref_ok(w, dep))
		return -EINVAL;
	d = item_of(w, dep);
	if (!d)
		return -ENOMEM;
	di = (size_t)(d - w->batch.items);
	it = item_of(w, obj); /* may move the items: d is not used again */
	if (!it)
		return -ENOMEM;
	for (size_t i = 0; i < it->ndeps; i++)
		if (it->deps[i] == di)
			return 0;
	v = realloc(it->deps, (it->ndeps + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	it->deps = v;
	v[it->ndeps++] = di;
	return 0;
}

int pk_writer_batch_commit(struct pk_writer *w, const struct pk_write_result **ret_results,
			   size_t *ret_n)
{
	int r = 0;

	if (!w || !ret_results || !ret_n)
		return -EINVAL;
	results_clear(w);
	if (w->batch.n) {
		w->results = calloc(w->batch.n, sizeof(*w->results));
		if (!w->results)
			return -ENOMEM;
		w->nresults = w->batch.n;
		for (size_t i = 0; i < w->batch.n; i++) {
			w->results[i].kind = w->batch.items[i].kind;
			w->results[i].ns = w->batch.items[i].ns;
			w->results[i].name = w->batch.items[i].name;
		}
		r = w->ops->commit(w->backend, &w->batch, w->results);
	}
	*ret_results = w->results;
	*ret_n = w->nresults;
	return r;
}

int pk_writer_get(struct pk_writer *w, const struct pk_type *kind, const char *ns, const char *name,
		  json_t **ret)
{
	if (!w || !name || !ret)
		return -EINVAL;
	return w->ops->get(w->backend, kind, ns, name, ret);
}

/* ---- what an item does to an object ------------------------------------------------ */

static int merge_annotations(json_t *obj, const json_t *ann)
{
	json_t *meta = json_object_get(obj, "metadata"), *have;

	if (!json_is_object(meta))
		return -EINVAL;
	have = json_object_get(meta, "annotations");
	if (!json_is_object(have)) {
		have = json_object();
		if (!have || json_object_set_new(meta, "annotations", have) < 0)
			return -ENOMEM;
	}
	return json_object_update(have, (json_t *)ann) < 0 ? -ENOMEM : 0;
}

/*
 * want as the object's new content: its own metadata and spec (the fields an
 * item sets after it), the rest shared with want, the writer's own copy,
 * which nothing changes (no second copy of a whole Job per write).
 */
static json_t *content_of(const json_t *want)
{
	json_t *next = json_copy((json_t *)want), *meta = json_object_get(want, "metadata"),
	       *spec = json_object_get(want, "spec");

	if (next && meta && json_object_set_new(next, "metadata", json_deep_copy(meta)) < 0) {
		json_decref(next);
		return NULL;
	}
	if (next && json_is_object(spec) &&
	    json_object_set_new(next, "spec", json_copy(spec)) < 0) {
		json_decref(next);
		return NULL;
	}
	return next;
}

/*
 * A PUT of the main resource: every field of want but status, and its
 * metadata but the identity the object keeps (name, namespace, uid,
 * resourceVersion, creationTimestamp, deletionTimestamp, generation).
 */
static int replace_content(json_t *obj, const json_t *want)
{
	static const char *const kept[] = {"name",
					   "namespace",
					   "uid",
					   "resourceVersion",
					   "creationTimestamp",
					   "deletionTimestamp",
					   "generation"};
	const json_t *old = json_object_get(obj, "metadata");
	json_t *next = content_of(want), *meta = json_object_get(next, "metadata");
	int r = 0;

	if (!next)
		return -ENOMEM;
	if (!json_is_object(meta) || !json_is_object(old))
		r = -EINVAL;
	for (size_t i = 0; r == 0 && i < ELEMENTSOF(kept); i++) {
		json_t *k = json_object_get(old, kept[i]);

		if (!k)
			json_object_del(meta, kept[i]);
		else if (json_object_set(meta, kept[i], k) < 0)
			r = -ENOMEM;
	}
	if (r == 0 && json_object_get(obj, "status") &&
	    json_object_set(next, "status", json_object_get(obj, "status")) < 0)
		r = -ENOMEM;
	if (r == 0 && !json_object_get(obj, "status"))
		json_object_del(next, "status");
	if (r == 0) {
		json_object_clear(obj);
		r = json_object_update(obj, next) < 0 ? -ENOMEM : 0;
	}
	json_decref(next);
	return r;
}

int pk_write_item_apply(const struct pk_write_item *it, json_t *obj, int64_t now)
{
	int r;

	if (!it || !json_is_object(obj) || it->create)
		return -EINVAL;
	if (it->uid && strcmp(pk_get_string(obj, "metadata.uid") ?: "", it->uid) != 0)
		return -PK_WRITE_ECONFLICT; /* another object of the same name */
	if (it->replace && (r = replace_content(obj, it->replace)) < 0)
		return r;
	if (it->status && json_object_set_new(obj, "status", json_deep_copy(it->status)) < 0)
		return -ENOMEM;
	if (it->node) {
		const char *bound = pk_get_string(obj, "spec.nodeName");

		if (bound && *bound && strcmp(bound, it->node) != 0)
			return -PK_WRITE_ECONFLICT; /* bound elsewhere meanwhile */
		if (!json_is_object(json_object_get(obj, "spec")))
			return -EINVAL;
		r = pk_set(obj, "spec.nodeName", json_string(it->node));
		if (r < 0)
			return r;
	}
	if (it->volume) {
		const char *had = pk_get_string(obj, "spec.volumeName");

		if (had && *had && strcmp(had, it->volume) != 0)
			return -PK_WRITE_ECONFLICT; /* bound to another volume meanwhile */
		if (!json_is_object(json_object_get(obj, "spec")))
			return -EINVAL;
		r = pk_set(obj, "spec.volumeName", json_string(it->volume));
		if (r < 0)
			return r;
	}
	if (it->annotations && (r = merge_annotations(obj, it->annotations)) < 0)
		return r;
	if (it->claim && (r = pk_claim_status_set(obj, it->claim)) < 0)
		return r;
	for (size_t i = 0; i < it->nconds; i++) {
		const struct pk_write_cond *c = &it->conds[i];

		r = pk_condition_set(obj, c->type, c->status, c->reason, c->message, now);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- Events ---------------------------------------------------------------------- */

void pk_writer_events(const struct pk_write_batch *batch, const struct pk_write_result *results,
		      json_t *const *objects, pk_writer_event_cb cb, void *arg)
{
	char note[1024];

	for (size_t i = 0; i < batch->n; i++) {
		const struct pk_write_item *it = &batch->items[i];
		const json_t *obj = objects ? objects[i] : NULL;

		if (results[i].error != 0)
			continue;
		if (it->node) {
			snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", it->ns,
				 it->name, it->node);
			cb(arg, it, obj, "Normal", "Scheduled", "Binding", note);
		}
		for (size_t c = 0; c < it->nconds; c++) {
			const struct pk_write_cond *cd = &it->conds[c];

			if (strcmp(cd->status, "False") == 0 && !it->node)
				cb(arg, it, obj, "Warning", "FailedScheduling", "Scheduling",
				   cd->message);
			if (it->evict && strcmp(cd->type, "DisruptionTarget") == 0)
				cb(arg, it, obj, "Normal", "Preempted", "Preempting", cd->message);
			if (strcmp(cd->status, "True") == 0 && strlen(cd->type) > 8 &&
			    strcmp(cd->type + strlen(cd->type) - 8, "Repaired") == 0)
				cb(arg, it, obj, "Normal", cd->reason, "Repairing", cd->message);
		}
	}
}

/* What a limiter remembers of a key: when, and which note. */
struct pk_event_seen {
	int64_t at;
	char note[];
};

void pk_event_limiter_free(struct pk_event_limiter *l)
{
	if (l)
		pk_map_free(&l->seen);
}

bool pk_event_allowed(struct pk_event_limiter *l, const char *key, const char *note, int64_t now_s)
{
	struct pk_event_seen *last = pk_map_get(&l->seen, key), *e;
	size_t len = strlen(note);
	int64_t window = l->window_s ? l->window_s : PK_EVENT_REPEAT_S;

	if (last && now_s - last->at < window && strcmp(last->note, note) == 0)
		return false;
	if (!last && l->seen.live >= PK_EVENT_LIMITER_MAX)
		pk_event_limiter_free(l);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return true; /* not remembered: the note goes out */
	e->at = now_s;
	memcpy(e->note, note, len + 1);
	l->seen.free_value = free;	      /* zeroed, the limiter still owns what it remembers */
	if (pk_map_put(&l->seen, key, e) < 0) /* else: last, if any, freed as replaced */
		free(e);
	return true;
}

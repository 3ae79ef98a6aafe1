/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cache.c — the decoded objects the store last wrote, so that a write of an
 * object written a moment ago (the loop binding a pod the API just created,
 * then setting its condition) starts from the tree it already has instead
 * of reading its row back and parsing it again.
 *
 * An entry is the object exactly as its row holds it: the tree a committed
 * batch published to the ring (the ring's own, read only, shared with the
 * watchers: no copy).  It is put there when the batch's COMMIT has
 * returned, and dropped the moment a write of the object enters the open
 * transaction, so that it never says more than the database: a write rolled
 * back or a failed commit leaves no entry, and a later write in the same
 * transaction reads the row it wrote.  Everything here runs under the
 * store's writer lock.
 *
 * At most PK_STORE_CACHE_OBJECTS entries, the oldest put dropped first:
 * as many as the ring keeps events, and mostly the same trees, so the cache
 * costs little memory of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store-internal.h"

struct cache_entry {
	json_t *obj;
	uint64_t seq; /* the put that made it, as its slot in the order says */
};

static void entry_free(void *p)
{
	struct cache_entry *e = p;

	json_decref(e->obj);
	free(e);
}

static const char *key_of(char *buf, size_t len, const struct pk_type *t, const json_t *obj)
{
	const char *name = pk_store_meta_str(obj, "name");

	if (!t || !name)
		return NULL;
	return pk_obj_key(buf, len, t, pk_store_ns_key(t, pk_store_meta_str(obj, "namespace")),
			  name);
}

/* The oldest put's slot, its entry dropped if no later put replaced it. */
static void drop_oldest(struct pk_store_cache *c)
{
	struct cache_order *o = &c->order[c->head];
	struct cache_entry *e = pk_map_get(&c->index, o->key);

	if (e && e->seq == o->seq)
		pk_map_del(&c->index, o->key);
	free(o->key);
	o->key = NULL;
	c->head = (c->head + 1) % PK_STORE_CACHE_OBJECTS;
	c->len--;
}

static void cache_put(struct pk_store_cache *c, const char *key, json_t *obj)
{
	struct cache_entry *e = malloc(sizeof(*e));
	char *k = strdup(key);

	if (!c->order)
		c->order = calloc(PK_STORE_CACHE_OBJECTS, sizeof(*c->order));
	c->index.free_value = entry_free;
	if (!e || !k || !c->order || pk_map_put(&c->index, key, e) < 0) {
		free(e);
		free(k);
		pk_map_del(&c->index, key); /* never an older tree than the row */
		return;
	}
	e->obj = json_incref(obj);
	e->seq = ++c->seq;
	if (c->len == PK_STORE_CACHE_OBJECTS)
		drop_oldest(c);
	c->order[(c->head + c->len) % PK_STORE_CACHE_OBJECTS] =
	    (struct cache_order){.key = k, .seq = e->seq};
	c->len++;
}

void pk_store_cache_forget(struct pk_store *st, const struct pk_type *t, const json_t *obj)
{
	char buf[600];
	const char *key = key_of(buf, sizeof(buf), t, obj);

	if (t && t->pk == PK_KIND_PRIORITY_CLASS) {
		st->cache.pc_gen++;
		st->cache.pc_dirty = true;
	}
	if (key)
		pk_map_del(&st->cache.index, key);
	else
		pk_store_cache_free(st); /* a key that does not fit: forget everything */
}

void pk_store_cache_batch_end(struct pk_store *st)
{
	if (st->cache.pc_dirty)
		st->cache.pc_gen++;
	st->cache.pc_dirty = false;
}

/*
 * The default PriorityClass, as pk_store_db_default_priority_class() finds
 * it, looked up again only once a PriorityClass was written: every Pod
 * created without a priority asks.  Not kept while the open transaction
 * writes a PriorityClass (it may yet roll back).
 */
json_t *pk_store_cache_default_pc(struct pk_store *st)
{
	struct pk_store_cache *c = &st->cache;
	json_t *pc;

	if (c->pc_known && c->pc_seen == c->pc_gen)
		return json_incref(c->pc);
	pc = pk_store_db_default_priority_class(st);
	json_decref(c->pc);
	c->pc = c->pc_dirty ? NULL : json_incref(pc);
	c->pc_known = !c->pc_dirty;
	c->pc_seen = c->pc_gen;
	return pc;
}

void pk_store_cache_publish(struct pk_store *st, const struct ring_slot *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct pk_type *t =
		    pk_type_by_kind(json_string_value(json_object_get(ev[i].object, "kind")));
		char buf[600];
		const char *key = key_of(buf, sizeof(buf), t, ev[i].object);

		if (!key)
			continue;
		if (ev[i].type == PK_EVENT_DELETED)
			pk_map_del(&st->cache.index, key);
		else
			cache_put(&st->cache, key, ev[i].object);
	}
}

json_t *pk_store_cache_get(struct pk_store *st, const struct pk_type *t, const char *ns,
			   const char *name)
{
	char buf[600];
	const char *key = pk_obj_key(buf, sizeof(buf), t, pk_store_ns_key(t, ns), name);
	struct cache_entry *e = key ? pk_map_get(&st->cache.index, key) : NULL;

	if (!e)
		return NULL;
	st->cache.hits++;
	return json_incref(e->obj);
}

void pk_store_cache_free(struct pk_store *st)
{
	struct pk_store_cache *c = &st->cache;

	while (c->len)
		drop_oldest(c);
	pk_map_free(&c->index);
	json_decref(c->pc);
	c->pc = NULL;
	c->pc_known = false;
	free(c->order);
	c->order = NULL;
	c->head = 0;
}

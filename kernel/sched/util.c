/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c — the small containers of the scheduling core: a pointer vector, an
 * open-addressing string map (FNV-1a, linear probing, tombstones, grows at
 * 50% load) and a growable text buffer.  Allocation failures surface as
 * -ENOMEM from the functions that act.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-internal.h"

int sc_vec_push(struct sc_vec *vec, void *item)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 8;
		void **v = realloc(vec->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = item;
	return 0;
}

void sc_vec_remove(struct sc_vec *vec, const void *item)
{
	for (size_t i = 0; i < vec->n; i++) {
		if (vec->v[i] == item) {
			memmove(&vec->v[i], &vec->v[i + 1], (vec->n - i - 1) * sizeof(void *));
			vec->n--;
			return;
		}
	}
}

void sc_vec_free(struct sc_vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

static uint64_t hash(const char *s)
{
	return pk_fnv1a(PK_FNV1A_INIT, s);
}

static struct sc_map_slot *find(const struct sc_map *map, const char *key)
{
	if (!map->cap)
		return NULL;
	for (size_t i = hash(key) & (map->cap - 1);; i = (i + 1) & (map->cap - 1)) {
		struct sc_map_slot *slot = &map->slots[i];

		if (!slot->key)
			return NULL;
		if (slot->key != SC_MAP_TOMB && strcmp(slot->key, key) == 0)
			return slot;
	}
}

void *sc_map_get(const struct sc_map *map, const char *key)
{
	struct sc_map_slot *slot = find(map, key);

	return slot ? slot->value : NULL;
}

/*
 * Rehash into a table twice as large, or as large when deletions left it
 * mostly tombstones (a map with churn, pods coming and going, stays the
 * size its live keys need).
 */
static int grow(struct sc_map *map)
{
	size_t cap = !map->cap ? 16 : map->live * 4 < map->cap ? map->cap : map->cap * 2;
	struct sc_map_slot *slots = calloc(cap, sizeof(*slots));
	struct sc_map_slot *old = map->slots;
	size_t oldcap = map->cap;

	if (!slots)
		return -ENOMEM;
	map->slots = slots;
	map->cap = cap;
	map->used = map->live;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].key || old[i].key == SC_MAP_TOMB)
			continue;
		size_t j = hash(old[i].key) & (cap - 1);

		while (slots[j].key)
			j = (j + 1) & (cap - 1);
		slots[j] = old[i];
	}
	free(old);
	return 0;
}

int sc_map_put(struct sc_map *map, const char *key, void *value)
{
	struct sc_map_slot *slot = find(map, key);

	if (slot) {
		slot->value = value;
		return 0;
	}
	if ((map->used + 1) * 2 > map->cap && grow(map) < 0)
		return -ENOMEM;
	char *copy = strdup(key);

	if (!copy)
		return -ENOMEM;
	for (size_t i = hash(key) & (map->cap - 1);; i = (i + 1) & (map->cap - 1)) {
		slot = &map->slots[i];
		if (!slot->key || slot->key == SC_MAP_TOMB) {
			if (!slot->key)
				map->used++;
			slot->key = copy;
			slot->value = value;
			map->live++;
			return 0;
		}
	}
}

void sc_map_del(struct sc_map *map, const char *key)
{
	struct sc_map_slot *slot = find(map, key);

	if (!slot)
		return;
	free(slot->key);
	slot->key = SC_MAP_TOMB;
	slot->value = NULL;
	map->live--;
}

const char *sc_intern(struct sc_map *pool, const char *s)
{
	struct sc_map_slot *slot = find(pool, s);

	if (!slot) {
		if (sc_map_put(pool, s, NULL) < 0)
			return NULL;
		slot = find(pool, s);
	}
	slot->value = (void *)((uintptr_t)slot->value + 1);
	return slot->key;
}

void sc_unintern(struct sc_map *pool, const char *s)
{
	struct sc_map_slot *slot = s ? find(pool, s) : NULL;

	if (!slot)
		return;
	slot->value = (void *)((uintptr_t)slot->value - 1);
	if (!slot->value)
		sc_map_del(pool, slot->key);
}

void sc_map_free(struct sc_map *map)
{
	for (size_t i = 0; i < map->cap; i++)
		if (map->slots[i].key && map->slots[i].key != SC_MAP_TOMB)
			free(map->slots[i].key);
	free(map->slots);
	memset(map, 0, sizeof(*map));
}

char *sc_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

char *sc_key(const char *ns, const char *name)
{
	char *k = NULL;

	if (asprintf(&k, "%s/%s", ns ? ns : "", name ? name : "") < 0)
		return NULL;
	return k;
}

void sc_buf_printf(struct sc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if (b->n + (size_t)len + 1 > b->cap) {
		size_t cap = (b->n + (size_t)len + 1) * 2;
		char *s = realloc(b->s, cap);

		if (!s)
			return; /* messages are best effort; the text is truncated */
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)len;
}

void sc_buf_free(struct sc_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

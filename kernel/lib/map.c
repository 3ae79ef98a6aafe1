/* SPDX-License-Identifier: Apache-2.0 */
/*
 * map.c — the string map (map.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/hash.h"
#include "kernel/lib/map.h"

static uint64_t hash(const char *s)
{
	return pk_fnv1a(PK_FNV1A_INIT, s);
}

/* A key's tag: the hash's top byte, kept beside its slot, so a probe
 * compares a string only when the tags agree. */
static unsigned char tag_of(uint64_t h)
{
	return (unsigned char)(h >> 56);
}

static struct pk_map_slot *find_hashed(const struct pk_map *map, const char *key, uint64_t h)
{
	unsigned char tag = tag_of(h);

	if (!map->cap)
		return NULL;
	for (size_t i = h & (map->cap - 1);; i = (i + 1) & (map->cap - 1)) {
		struct pk_map_slot *slot = &map->slots[i];

		if (!slot->key)
			return NULL;
		if (map->tags[i] == tag && slot->key != PK_MAP_TOMB && strcmp(slot->key, key) == 0)
			return slot;
	}
}

static struct pk_map_slot *find(const struct pk_map *map, const char *key)
{
	return find_hashed(map, key, hash(key));
}

void *pk_map_get(const struct pk_map *map, const char *key)
{
	struct pk_map_slot *slot = find(map, key);

	return slot ? slot->value : NULL;
}

/* Rehash into a table twice as large, or as large when deletions left it
 * mostly tombstones. */
static int grow(struct pk_map *map)
{
	size_t cap = !map->cap ? 16 : map->live * 4 < map->cap ? map->cap : map->cap * 2;
	/* one allocation: the slots, then a tag byte per slot */
	struct pk_map_slot *slots = calloc(cap, sizeof(*slots) + 1);
	struct pk_map_slot *old = map->slots;
	size_t oldcap = map->cap;

	if (!slots)
		return -ENOMEM;
	map->slots = slots;
	map->tags = (unsigned char *)(slots + cap);
	map->cap = cap;
	map->used = map->live;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].key || old[i].key == PK_MAP_TOMB)
			continue;
		uint64_t h = hash(old[i].key);
		size_t j = h & (cap - 1);

		while (slots[j].key)
			j = (j + 1) & (cap - 1);
		slots[j] = old[i];
		map->tags[j] = tag_of(h);
	}
	free(old);
	return 0;
}

/* Add or replace key, whose hash is h; the slot it is in goes to ret_slot. */
static int put_hashed(struct pk_map *map, const char *key, uint64_t h, void *value,
		      struct pk_map_slot **ret_slot)
{
	struct pk_map_slot *slot = find_hashed(map, key, h);

	if (slot) {
		if (map->free_value && slot->value && slot->value != value)
			map->free_value(slot->value);
		slot->value = value;
		if (map->borrow_keys)
			slot->key = (char *)key;
		*ret_slot = slot;
		return 0;
	}
	if ((map->used + 1) * 3 > map->cap * 2 && grow(map) < 0)
		return -ENOMEM;
	char *copy = map->borrow_keys ? (char *)key : strdup(key);

	if (!copy)
		return -ENOMEM;
	for (size_t i = h & (map->cap - 1);; i = (i + 1) & (map->cap - 1)) {
		slot = &map->slots[i];
		if (!slot->key || slot->key == PK_MAP_TOMB) {
			if (!slot->key)
				map->used++;
			slot->key = copy;
			slot->value = value;
			map->tags[i] = tag_of(h);
			map->live++;
			*ret_slot = slot;
			return 0;
		}
	}
}

int pk_map_put(struct pk_map *map, const char *key, void *value)
{
	struct pk_map_slot *slot;

	return put_hashed(map, key, hash(key), value, &slot);
}

void *pk_map_take(struct pk_map *map, const char *key)
{
	struct pk_map_slot *slot = find(map, key);
	void *value;

	if (!slot)
		return NULL;
	value = slot->value;
	if (!map->borrow_keys)
		free(slot->key);
	slot->key = PK_MAP_TOMB;
	slot->value = NULL;
	map->live--;
	return value;
}

void pk_map_del(struct pk_map *map, const char *key)
{
	void *value = pk_map_take(map, key);

	if (value && map->free_value)
		map->free_value(value);
}

const char *pk_intern(struct pk_map *pool, const char *s)
{
	uint64_t h = hash(s);
	struct pk_map_slot *slot = find_hashed(pool, s, h);

	if (!slot && put_hashed(pool, s, h, NULL, &slot) < 0)
		return NULL;
	slot->value = (void *)((uintptr_t)slot->value + 1);
	return slot->key;
}

void pk_unintern(struct pk_map *pool, const char *s)
{
	struct pk_map_slot *slot = s ? find(pool, s) : NULL;

	if (!slot)
		return;
	slot->value = (void *)((uintptr_t)slot->value - 1);
	if (!slot->value)
		pk_map_del(pool, slot->key);
}

void pk_map_free(struct pk_map *map)
{
	void (*free_value)(void *) = map->free_value;

	for (size_t i = 0; i < map->cap; i++) {
		struct pk_map_slot *slot = &map->slots[i];

		if (!slot->key || slot->key == PK_MAP_TOMB)
			continue;
		if (free_value && slot->value)
			free_value(slot->value);
		if (!map->borrow_keys)
			free(slot->key);
	}
	free(map->slots);
	*map = (struct pk_map){.free_value = free_value, .borrow_keys = map->borrow_keys};
}

bool pk_map_next(const struct pk_map *map, size_t *i, const char **key, void **value)
{
	for (; *i < map->cap; (*i)++) {
		const struct pk_map_slot *slot = &map->slots[*i];

		if (!slot->key || slot->key == PK_MAP_TOMB)
			continue;
		if (key)
			*key = slot->key;
		if (value)
			*value = slot->value;
		(*i)++;
		return true;
	}
	return false;
}

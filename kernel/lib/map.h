/* SPDX-License-Identifier: Apache-2.0 */
/*
 * map.h — the string map of podkernel: an open-addressing table from string
 * keys (copied) to pointers (borrowed), FNV-1a (hash.h), linear probing,
 * a tag byte per slot (a probe compares strings only when tags agree),
 * tombstones, grown at 2/3 load and rehashed in place of its tombstones
 * when deletions left it mostly empty (a map with churn stays the size its
 * live keys need).  A zeroed struct pk_map is an empty map whose values are
 * borrowed; PK_MAP_INIT(destructor) is an empty map that owns its values,
 * as Redis's dictType and Slurm's list_create() take a destructor: a value
 * the map drops (replaced by another, deleted, or at pk_map_free()) is
 * handed to it.  Allocation failures surface as -ENOMEM from the functions
 * that add.  Users: the scheduler's indexes and string pool, the
 * controllers' work queues and memos, the appliance's node heartbeats.
 * A map with borrow_keys set keeps the key pointers it is given (each the
 * value's own string, living as long as the value is in the map), one
 * allocation less per entry: the placement map's entries.
 */
#ifndef PODKERNEL_KERNEL_LIB_MAP_H
#define PODKERNEL_KERNEL_LIB_MAP_H

#include <stdbool.h>
#include <stddef.h>

struct pk_map {
	struct pk_map_slot {
		char *key; /* NULL: empty; PK_MAP_TOMB: deleted */
		void *value;
	} * slots;
	unsigned char *tags;		 /* per slot, its key's hash's top byte (in slots' block) */
	size_t cap, used, live;		 /* used: live and tombstones */
	void (*free_value)(void *value); /* NULL: values are borrowed */
	/* the keys are the values' own (a string inside each value): never copied
	 * nor freed, and a put replacing a value takes the key it is given */
	bool borrow_keys;
};
#define PK_MAP_INIT(destructor)                                                                    \
	{                                                                                          \
		.free_value = (destructor)                                                         \
	}
#define PK_MAP_TOMB ((char *)1)

void *pk_map_get(const struct pk_map *map, const char *key);
/*
 * Add key (copied) or replace its value (the old one goes to the
 * destructor, unless it is value itself); -ENOMEM, and then an owning map
 * has not taken value: the caller still frees it.
 */
int pk_map_put(struct pk_map *map, const char *key, void *value);
/* Remove key; its value goes to the destructor. */
void pk_map_del(struct pk_map *map, const char *key);
/* Remove key and hand its value to the caller (NULL if absent), destructor or not. */
void *pk_map_take(struct pk_map *map, const char *key);
/*
 * Free the keys, the values (to the destructor) and the table; the map is
 * empty again and keeps its destructor and borrow_keys.
 */
void pk_map_free(struct pk_map *map);
/*
 * The live entries, in table order: for (size_t i = 0; pk_map_next(m, &i,
 * &key, &value);) ...; key and value may be NULL.  No adding or deleting
 * while iterating.
 */
bool pk_map_next(const struct pk_map *map, size_t *i, const char **key, void **value);

/*
 * A string pool over a map: pk_intern() returns the pool's copy of s (one
 * more user; NULL on ENOMEM), pk_unintern() drops a user and frees the copy
 * with its last one.  The copies live until then, whatever the map does.
 */
const char *pk_intern(struct pk_map *pool, const char *s);
void pk_unintern(struct pk_map *pool, const char *s);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash.h — FNV-1a, the one string hash of podkernel: the scheduler's string
 * map, change fingerprints of objects and conditions, the appliance's event
 * cache, the store's row checksums (64-bit); the API server's per-address
 * buckets and the placement map's group colours (32-bit, the same function
 * as the page's map.js, so a terminal and a browser colour a gang alike).
 * Fast on short keys, no table, no state; not for anything an attacker could
 * exploit beyond a slower lookup.
 */
#ifndef PODKERNEL_KERNEL_LIB_HASH_H
#define PODKERNEL_KERNEL_LIB_HASH_H

#include <stdint.h>

#define PK_FNV1A_INIT 14695981039346656037ULL /* the 64-bit FNV-1a offset basis */
#define PK_FNV1A32_INIT 2166136261u	      /* the 32-bit one */

/* Fold one byte into the FNV-1a hash h (also a separator between fields). */
static inline uint64_t pk_fnv1a_byte(uint64_t h, unsigned char c)
{
	return (h ^ c) * 1099511628211ULL;
}

/* Fold the bytes of s, up to its NUL, into h; start from PK_FNV1A_INIT. */
static inline uint64_t pk_fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = pk_fnv1a_byte(h, (unsigned char)*s);
	return h;
}

static inline uint32_t pk_fnv1a32_byte(uint32_t h, unsigned char c)
{
	return (h ^ c) * 16777619u;
}

/* 32-bit FNV-1a of s, up to its NUL, from PK_FNV1A32_INIT. */
static inline uint32_t pk_fnv1a32(const char *s)
{
	uint32_t h = PK_FNV1A32_INIT;

	for (; *s; s++)
		h = pk_fnv1a32_byte(h, (unsigned char)*s);
	return h;
}

#endif

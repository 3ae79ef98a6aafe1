/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash.c — FNV-1a (64-bit), the one string hash of podkernel: the
 * scheduler's string map, change fingerprints of objects and conditions, the
 * appliance's event cache.  Fast on short keys, no table, no state; not for
 * anything an attacker could exploit beyond a slower lookup.
 */
#include "kernel/api/api.h"

uint64_t pk_fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = pk_fnv1a_byte(h, (unsigned char)*s);
	return h;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * macro.h — the size of an array and string tables (systemd's macro.h and
 * string-table.h): ELEMENTSOF() refuses a pointer at compile time, so a
 * table that decays to a pointer cannot be measured as one element.
 */
#ifndef PODKERNEL_KERNEL_LIB_MACRO_H
#define PODKERNEL_KERNEL_LIB_MACRO_H

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

/* The number of elements of array x (an error for a pointer). */
#define ELEMENTSOF(x)                                                                              \
	__builtin_choose_expr(!__builtin_types_compatible_p(__typeof__(x), __typeof__(&*(x))),     \
			      sizeof(x) / sizeof((x)[0]), (void)0)

/* The index of s in a table of n strings (NULL entries are holes), or -1; s may be NULL. */
static inline ssize_t pk_string_table_find(const char *const *table, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (table[i] && strcmp(table[i], s) == 0)
			return (ssize_t)i;
	return -1;
}

/* The index of s in the string table (an array), or -1. */
#define PK_STRING_TABLE_FIND(table, s) pk_string_table_find(table, ELEMENTSOF(table), s)
/* The string at index i of the table (an array), or NULL out of range or for a hole. */
#define PK_STRING_TABLE_LOOKUP(table, i)                                                           \
	((size_t)(i) < ELEMENTSOF(table) ? (table)[(size_t)(i)] : NULL)

#endif

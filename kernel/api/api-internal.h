/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api-internal.h — what the files of kernel/api share and nobody else needs:
 * the kind table and YAML scalar resolution (the reader and the writer must
 * agree on which plain scalars are not strings).
 */
#ifndef PODKERNEL_KERNEL_API_INTERNAL_H
#define PODKERNEL_KERNEL_API_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/api/api.h"

struct pk_kind_info {
	const char *name;
	const char *api_version;
	bool namespaced;
};

const struct pk_kind_info *pk_kind_info(enum pk_kind kind);

/*
 * The value a plain (unquoted, untagged) YAML scalar stands for under the
 * YAML 1.2 core schema: null, a bool, an integer (decimal, 0o octal, 0x hex;
 * integers beyond 64 bits become reals) or a real; anything else, including
 * .inf and .nan which JSON cannot hold, is a string.  Returns a new value or
 * NULL on allocation failure.
 */
json_t *pk_scalar_resolve(const char *s, size_t len);

/* True when a string written plain would read back as something else here or
 * in a YAML 1.1 reader (yes/no/on/off, 0777, 1_000, 12:30, ...). */
bool pk_scalar_needs_quotes(const char *s, size_t len);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * podctl-internal.h — what podctl's client (client*.c) shares with its pure
 * helpers (client_text.c) and their unit tests.
 */
#ifndef PODKERNEL_PODCTL_INTERNAL_H
#define PODKERNEL_PODCTL_INTERNAL_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/api/api.h"

/* `podctl store`: the first column of the first row of sql on a store file
 * opened read-only, or dflt (no row, or an error).  store_check.c. */
int64_t podctl_sql_scalar(sqlite3 *db, const char *sql, int64_t dflt);

/* The served type a command-line word names: kind, plural, lower-case
 * singular or short name, in any case; NULL when none. */
const struct pk_type *podctl_resolve_kind(const char *word);
/* /api/v1[/namespaces/NS]/PLURAL[/NAME][SUFFIX] (or /apis/GROUP/VERSION/...);
 * ns is ignored for cluster-scoped types.  malloc'ed, NULL on ENOMEM. */
char *podctl_type_path(const struct pk_type *t, const char *ns, const char *name,
		       const char *suffix);
/* Age of an object at now (seconds): "42s", "17m", "5h", "<unknown>". */
void podctl_age(const json_t *obj, int64_t now, char *buf, size_t len);
/* "gang(N)" or "basic" for a PodGroup or CompositePodGroup. */
void podctl_policy_text(const json_t *group, char *buf, size_t len);
/* A quantity ("2", "500m", "4Gi", "1k") in milli-units; 0 when unreadable. */
int64_t podctl_quantity_milli(const char *s);
/* Sum of the containers' requests of resource over a pod, in milli-units. */
int64_t podctl_pod_request(const json_t *pod, const char *resource);
/* A quantity for a table: memory in Gi, fractions in m, else whole units. */
void podctl_fmt_qty(int64_t milli, const char *resource, char *buf, size_t len);

/* kubectl's JSONPath templates (jsonpath.c). */
struct podctl_jsonpath;
/* NULL with a message naming the action and offset in err on a syntax error. */
struct podctl_jsonpath *podctl_jsonpath_parse(const char *tmpl, char *err, size_t errlen);
void podctl_jsonpath_free(struct podctl_jsonpath *jp);
/* Print the template for doc; -1 with a message in err (index out of bounds). */
int podctl_jsonpath_print(const struct podctl_jsonpath *jp, const json_t *doc, FILE *out, char *err,
			  size_t errlen);
/* The values of the template's expressions (a new array), NULL with err. */
json_t *podctl_jsonpath_find(const struct podctl_jsonpath *jp, const json_t *doc, char *err,
			     size_t errlen);
/* A custom column's cell: the values as Go's %v joined by ',', "<none>" when
 * there are none.  malloc'ed. */
char *podctl_column_text(const json_t *values);
/* kubectl's relaxed column path: "{.a}", ".a" and "a" are all "{.a}".  malloc'ed. */
char *podctl_relaxed_path(const char *expr);

#endif

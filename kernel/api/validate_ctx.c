/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_ctx.c — the small typed readers of a validation walk: each reads
 * one field of an object and reports a wrong type, a missing required value
 * or too many items at the field's path, in kube-apiserver's words.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"

void pk_vctx_fail(struct pk_vctx *v, const char *key, const char *fmt, const char *detail)
{
	size_t old = key ? pk_path_key(&v->p, key) : v->p.len;
	char msg[640];

	snprintf(msg, sizeof(msg), fmt, detail ? detail : "");
	pk_errors_add(v->errs, "%s: %s", v->p.s, msg);
	pk_path_pop(&v->p, old);
}

json_t *pk_vctx_object(struct pk_vctx *v, const json_t *obj, const char *key)
{
	json_t *x = json_object_get(obj, key);

	if (x && !json_is_null(x) && !json_is_object(x))
		pk_vctx_fail(v, key, "Invalid value: must be an object%s", NULL);
	return json_is_object(x) ? x : NULL;
}

json_t *pk_vctx_array(struct pk_vctx *v, const json_t *obj, const char *key, size_t max)
{
	json_t *x = json_object_get(obj, key);
	char n[32];

	if (x && !json_is_null(x) && !json_is_array(x))
		pk_vctx_fail(v, key, "Invalid value: must be a list%s", NULL);
	if (!json_is_array(x))
		return NULL;
	if (json_array_size(x) > max) {
		snprintf(n, sizeof(n), "%zu", max);
		pk_vctx_fail(v, key, "Too many: must have at most %s items", n);
	}
	return x;
}

const char *pk_vctx_string(struct pk_vctx *v, const json_t *obj, const char *key, bool required)
{
	json_t *x = json_object_get(obj, key);

	if (x && !json_is_null(x) && !json_is_string(x)) {
		pk_vctx_fail(v, key, "Invalid value: %s: must be a string",
			     pk_value_text(x, v->text, sizeof(v->text)));
		return NULL;
	}
	if (required && (!x || json_is_null(x) || !*json_string_value(x))) {
		pk_vctx_fail(v, key, "Required value%s", NULL);
		return NULL;
	}
	return json_string_value(x);
}

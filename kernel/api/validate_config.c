/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_config.c — static validation of a core v1 ConfigMap, with
 * kube-apiserver's field paths and messages (ValidateConfigMap): the keys of
 * data and binaryData (config keys, at most 253 characters, never in both
 * maps), data's values strings and binaryData's base64, and at most 1 MiB of
 * both together.  podkernel stores ConfigMaps and reads none; immutable: true
 * is refused, since nothing here would keep the data from changing.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"

#define CONFIG_KEY_MAX 253
#define CONFIG_DATA_MAX (1024 * 1024) /* upstream's MaxSecretSize, the total of both maps */

/* Why key is no config key ([-._a-zA-Z0-9]+, not "." or "..", not ".."-led), or NULL. */
static const char *config_key_problem(const char *key)
{
	if (strlen(key) > CONFIG_KEY_MAX)
		return "must be no more than 253 characters";
	if (!*key || strspn(key, "-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789") != strlen(key))
		return "a valid config key must consist of alphanumeric characters, '-', '_' or "
		       "'.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
		       "validation is '[-._a-zA-Z0-9]+')";
	if (strcmp(key, ".") == 0)
		return "must not be '.'";
	if (strcmp(key, "..") == 0)
		return "must not be '..'";
	if (strncmp(key, "..", 2) == 0)
		return "must not start with '..'";
	return NULL;
}

/* The length s decodes to as padded standard base64 (Go's []byte in JSON), or -1. */
static long base64_len(const char *s)
{
	static const char alphabet[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), body = strspn(s, alphabet), pad = n - body;

	if (n % 4 != 0 || pad > 2 || strspn(s + body, "=") != pad)
		return -1;
	return (long)(n / 4 * 3 - pad);
}

/* One map's keys and values; its bytes added to *total. */
static void config_map(const json_t *obj, const char *field, bool binary, struct pk_errors *errs,
		       size_t *total)
{
	const json_t *m = json_object_get(obj, field), *v;
	const char *key, *why;

	if (!m)
		return;
	if (!json_is_object(m)) {
		pk_errors_add(errs, "%s: Invalid value: must be an object", field);
		return;
	}
	json_object_foreach((json_t *)m, key, v)
	{
		long n = json_is_string(v) ? (long)json_string_length(v) : -1;

		if ((why = config_key_problem(key)))
			pk_errors_add(errs, "%s[%s]: Invalid value: \"%s\": %s", field, key, key,
				      why);
		if (binary && n >= 0)
			n = base64_len(json_string_value(v));
		if (n < 0)
			pk_errors_add(errs, "%s[%s]: Invalid value: must be %s", field, key,
				      binary ? "a base64-encoded string" : "a string");
		if (binary && json_object_get(json_object_get(obj, "data"), key))
			pk_errors_add(errs,
				      "%s[%s]: Invalid value: \"%s\": duplicate of key present "
				      "in data",
				      field, key, key);
		*total += (size_t)(n > 0 ? n : 0);
	}
}

void pk_validate_config_map(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	const json_t *imm = json_object_get(obj, "immutable");
	size_t total = 0;

	pk_validate_meta(obj, t, errs);
	config_map(obj, "data", false, errs, &total);
	config_map(obj, "binaryData", true, errs, &total);
	if (total > CONFIG_DATA_MAX)
		pk_errors_add(errs,
			      "data: Too long: must have at most %d bytes (data and binaryData)",
			      CONFIG_DATA_MAX);
	if (imm && !json_is_boolean(imm))
		pk_errors_add(errs, "immutable: Invalid value: must be a boolean");
	else if (json_is_true(imm))
		pk_errors_add(errs, "immutable: Unsupported value: true: not implemented (the data "
				    "of a ConfigMap can always change here)");
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash.c — the checksum of the store's rows (pk_row_sum(), pk_row_verify()),
 * FNV-1a (kernel/lib/hash.h) over the key, the version and the body: a
 * detector of damage on disk, not of tampering.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"

uint64_t pk_row_sum(const char *kind, const char *ns, const char *name, int64_t rv,
		    const char *body, size_t len)
{
	char num[32];
	uint64_t h = PK_FNV1A_INIT;

	snprintf(num, sizeof(num), "%" PRId64, rv);
	h = pk_fnv1a_byte(pk_fnv1a(h, kind), 0);
	h = pk_fnv1a_byte(pk_fnv1a(h, ns), 0);
	h = pk_fnv1a_byte(pk_fnv1a(h, name), 0);
	h = pk_fnv1a_byte(pk_fnv1a(h, num), 0);
	for (size_t i = 0; i < len; i++)
		h = pk_fnv1a_byte(h, (unsigned char)body[i]);
	return h;
}

/* The body's identity against the row's key and version. */
static int body_matches(const json_t *obj, const char *kind, const char *ns, const char *name,
			int64_t rv, char *why, size_t whylen)
{
	const char *k = json_string_value(json_object_get(obj, "kind"));
	const char *n = pk_get_string(obj, "metadata.name");
	const char *o = pk_get_string(obj, "metadata.namespace");
	const char *v = pk_get_string(obj, "metadata.resourceVersion");
	char num[32];

	snprintf(num, sizeof(num), "%" PRId64, rv);
	if (!k || strcmp(k, kind) != 0 || !n || strcmp(n, name) != 0)
		snprintf(why, whylen, "the body is %s %s", k ? k : "(no kind)",
			 n ? n : "(no name)");
	else if (*ns && (!o || strcmp(o, ns) != 0))
		snprintf(why, whylen, "the body's namespace is %s", o ? o : "(none)");
	else if (!v || strcmp(v, num) != 0)
		snprintf(why, whylen, "the body's metadata.resourceVersion is %s, the row's %s",
			 v ? v : "(none)", num);
	else
		return 0;
	return -EBADMSG;
}

int pk_row_verify(const char *kind, const char *ns, const char *name, int64_t rv, const char *body,
		  size_t len, bool has_sum, uint64_t sum, uint64_t counter, char *why,
		  size_t whylen)
{
	json_t *obj;
	int r;

	if (!kind || !ns || !name || !body) {
		snprintf(why, whylen, "a column is NULL");
		return -EBADMSG;
	}
	if (has_sum && pk_row_sum(kind, ns, name, rv, body, len) != sum) {
		snprintf(why, whylen, "checksum mismatch");
		return -EBADMSG;
	}
	if (rv <= 0 || (uint64_t)rv > counter) {
		snprintf(why, whylen, "resourceVersion %" PRId64 " outside 1..%" PRIu64, rv,
			 counter);
		return -EBADMSG;
	}
	/* A matching checksum says the row is, byte for byte, what the store wrote
	 * (a body it parsed and keyed itself): only a row from before checksums
	 * has its body parsed and checked against its key. */
	if (has_sum)
		return 0;
	obj = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(obj)) {
		snprintf(why, whylen, "the body is not a JSON object");
		json_decref(obj);
		return -EBADMSG;
	}
	r = body_matches(obj, kind, ns, name, rv, why, whylen);
	json_decref(obj);
	return r;
}

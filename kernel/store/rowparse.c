/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rowparse.c — a row's body to a JSON tree in one pass.
 *
 * A stored body is what the store itself wrote (jansson's compact dump,
 * proven by the row's checksum before it is parsed), so almost every body
 * is plain: ASCII strings with the short escapes, integers, objects and
 * arrays.  jansson's decoder reads it a byte at a time through a stream,
 * copies every token through a growing buffer and checks the UTF-8 of each;
 * this parser walks the bytes once and builds the same tree with jansson's
 * constructors.  Anything outside that plain subset (a byte above 0x7f, a
 * \u escape, a real number, an integer out of range, a leading zero,
 * trailing bytes, deep nesting, or any syntax error) makes it give up, and
 * the caller decodes the body with json_loadb() as before: what it accepts
 * is a subset of what json_loadb() accepts, parsed to the same tree
 * (members in order, a repeated key's last value in its first place).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store-internal.h"

#define RP_DEPTH_MAX 256

struct rp {
	const char *p, *end;
	char *scratch; /* an escaped string's unescaped bytes */
	size_t cap;
};

static void rp_space(struct rp *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int rp_unescaped(struct rp *r, size_t n)
{
	if (n <= r->cap)
		return 0;
	char *s = realloc(r->scratch, n);

	if (!s)
		return -ENOMEM;
	r->scratch = s;
	r->cap = n;
	return 0;
}

/*
 * The string at r->p (after its opening quote): *ret_s and *ret_n its bytes,
 * in the body itself when it has no escape, else in r->scratch.
 */
static int rp_string(struct rp *r, const char **ret_s, size_t *ret_n)
{
	const char *s = r->p, *q = s;
	size_t n = 0;

	while (q < r->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20 &&
	       (unsigned char)*q < 0x80)
		q++;
	if (q < r->end && *q == '"') {
		*ret_s = s;
		*ret_n = (size_t)(q - s);
		r->p = q + 1;
		return 0;
	}
	if (rp_unescaped(r, (size_t)(r->end - s)) < 0)
		return -ENOMEM;
	for (q = s; q < r->end && *q != '"'; q++) {
		unsigned char c = (unsigned char)*q;

		if (c < 0x20 || c >= 0x80)
			return -EINVAL;
		if (c == '\\') {
			const char *esc = ++q < r->end ? strchr("\"\\/bfnrt", *q) : NULL;

			if (!esc || !*q)
				return -EINVAL; /* \u and anything else: jansson's */
			c = (unsigned char)"\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
		}
		r->scratch[n++] = (char)c;
	}
	if (q >= r->end)
		return -EINVAL;
	*ret_s = r->scratch;
	*ret_n = n;
	r->p = q + 1;
	return 0;
}

/* An integer: -?(0|[1-9][0-9]*) in range, not followed by a fraction or exponent. */
static json_t *rp_integer(struct rp *r)
{
	const char *q = r->p;
	bool neg = q < r->end && *q == '-';
	unsigned long long v = 0;

	q += neg;
	if (q >= r->end || *q < '0' || *q > '9' ||
	    (*q == '0' && q + 1 < r->end && q[1] >= '0' && q[1] <= '9'))
		return NULL;
	for (; q < r->end && *q >= '0' && *q <= '9'; q++) {
		if (v > ((unsigned long long)LLONG_MAX + 1 - (unsigned)(*q - '0')) / 10)
			return NULL;
		v = v * 10 + (unsigned)(*q - '0');
	}
	if ((q < r->end && (*q == '.' || *q == 'e' || *q == 'E')) ||
	    (!neg && v > (unsigned long long)LLONG_MAX))
		return NULL;
	r->p = q;
	return json_integer(neg ? (json_int_t)(0 - v) : (json_int_t)v);
}

static bool rp_word(struct rp *r, const char *w, size_t n)
{
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0)
		return false;
	r->p += n;
	return true;
}

static json_t *rp_value(struct rp *r, int depth);

static json_t *rp_object(struct rp *r, int depth)
{
	json_t *obj = json_object();

	rp_space(r);
	if (obj && r->p < r->end && *r->p == '}') {
		r->p++;
		return obj;
	}
	while (obj) {
		const char *k;
		size_t kn;
		json_t *v;

		rp_space(r);
		if (r->p >= r->end || *r->p++ != '"' || rp_string(r, &k, &kn) < 0)
			break;
		/* the key is copied out of the scratch before a value's string reuses it */
		char *key = k == r->scratch ? strndup(k, kn) : NULL;

		rp_space(r);
		if ((k == r->scratch && !key) || r->p >= r->end || *r->p++ != ':' ||
		    !(v = rp_value(r, depth + 1))) {
			free(key);
			break;
		}
		int rc = json_object_setn_new_nocheck(obj, key ? key : k, kn, v);

		free(key);
		rp_space(r);
		if (rc < 0 || r->p >= r->end)
			break;
		if (*r->p == '}') {
			r->p++;
			return obj;
		}
		if (*r->p++ != ',')
			break;
	}
	json_decref(obj);
	return NULL;
}

static json_t *rp_array(struct rp *r, int depth)
{
	json_t *arr = json_array(), *v;

	rp_space(r);
	if (arr && r->p < r->end && *r->p == ']') {
		r->p++;
		return arr;
	}
	while (arr && (v = rp_value(r, depth + 1)) && json_array_append_new(arr, v) == 0) {
		rp_space(r);
		if (r->p >= r->end)
			break;
		if (*r->p == ']') {
			r->p++;
			return arr;
		}
		if (*r->p++ != ',')
			break;
	}
	json_decref(arr);
	return NULL;
}

static json_t *rp_value(struct rp *r, int depth)
{
	const char *s;
	size_t n;

	rp_space(r);
	if (r->p >= r->end || depth > RP_DEPTH_MAX)
		return NULL;
	switch (*r->p) {
	case '{':
		r->p++;
		return rp_object(r, depth);
	case '[':
		r->p++;
		return rp_array(r, depth);
	case '"':
		r->p++;
		return rp_string(r, &s, &n) < 0 ? NULL : json_stringn_nocheck(s, n);
	case 't':
		return rp_word(r, "true", 4) ? json_true() : NULL;
	case 'f':
		return rp_word(r, "false", 5) ? json_false() : NULL;
	case 'n':
		return rp_word(r, "null", 4) ? json_null() : NULL;
	default:
		return rp_integer(r);
	}
}

json_t *pk_row_parse(const char *body, size_t len)
{
	struct rp r = {.p = body, .end = body + len};
	json_t *v = NULL;

	rp_space(&r);
	/* jansson's json_loadb() without JSON_DECODE_ANY takes an object or an array */
	if (r.p < r.end && (*r.p == '{' || *r.p == '['))
		v = rp_value(&r, 0);
	rp_space(&r);
	free(r.scratch);
	if (v && r.p != r.end) {
		json_decref(v);
		v = NULL;
	}
	return v ? v : json_loadb(body, len, 0, NULL);
}

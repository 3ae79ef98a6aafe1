/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsondump.c — compact JSON text of a tree, as the store writes its rows and
 * its watch events.
 *
 * The text is jansson's json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY), byte
 * for byte: keys in the object's order, no spaces, '"', '\\' and control
 * characters escaped as jansson escapes them (\b \f \n \r \t, else \u00XX),
 * other characters as they are (a json_t string is valid UTF-8), integers in
 * decimal; a real, rare in an object, is written by jansson itself.  It is
 * an order of magnitude cheaper: one growing buffer and no cycle detection
 * (jansson keeps a table of every container it is inside, keyed by its
 * printed address); nesting deeper than PK_JSON_DUMP_DEPTH is refused
 * instead, as a cycle would be.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"

#define PK_JSON_DUMP_DEPTH 2048

struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

static bool grow(struct buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (b->failed)
		return false;
	while (cap - b->len < more + 1)
		cap *= 2;
	if (cap == b->cap)
		return true;
	p = realloc(b->p, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put(struct buf *b, const char *s, size_t n)
{
	if (!grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void put_c(struct buf *b, char c)
{
	if (b->len + 2 > b->cap && !grow(b, 1))
		return;
	b->p[b->len++] = c;
}

/* The escape of a byte that needs one ('"', '\\', a control character). */
static void put_escape(struct buf *b, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	char esc[6] = {'\\', (char)c, '0', '0', hex[c >> 4], hex[c & 15]};
	size_t elen = 2;

	switch (c) {
	case '"':
	case '\\':
		break;
	case '\b':
		esc[1] = 'b';
		break;
	case '\f':
		esc[1] = 'f';
		break;
	case '\n':
		esc[1] = 'n';
		break;
	case '\r':
		esc[1] = 'r';
		break;
	case '\t':
		esc[1] = 't';
		break;
	default:
		esc[1] = 'u';
		elen = 6;
	}
	put(b, esc, elen);
}

/* The bytes jansson escapes: control characters, '"' and '\\'. */
static const bool needs_escape[256] = {
    [0 ... 0x1f] = true,
    ['"'] = true,
    ['\\'] = true,
};

static void put_string(struct buf *b, const char *s, size_t n)
{
	size_t i = 0;

	put_c(b, '"');
	while (i < n) {
		size_t j = i;

		while (j < n && !needs_escape[(unsigned char)s[j]])
			j++;
		put(b, s + i, j - i);
		if (j == n)
			break;
		put_escape(b, (unsigned char)s[j]);
		i = j + 1;
	}
	put_c(b, '"');
}

static void put_value(struct buf *b, const json_t *v, int depth);

static void put_object(struct buf *b, const json_t *v, int depth)
{
	const char *key;
	json_t *item;
	bool first = true;

	put_c(b, '{');
	json_object_foreach((json_t *)v, key, item)
	{
		if (!first)
			put_c(b, ',');
		first = false;
		put_string(b, key, strlen(key));
		put_c(b, ':');
		put_value(b, item, depth + 1);
	}
	put_c(b, '}');
}

static void put_array(struct buf *b, const json_t *v, int depth)
{
	size_t i;
	json_t *item;

	put_c(b, '[');
	json_array_foreach(v, i, item)
	{
		if (i)
			put_c(b, ',');
		put_value(b, item, depth + 1);
	}
	put_c(b, ']');
}

/* A real as jansson writes it (its own rules for the shortest exact text). */
static void put_real(struct buf *b, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!text) {
		b->failed = true;
		return;
	}
	put(b, text, strlen(text));
	free(text);
}

static void put_value(struct buf *b, const json_t *v, int depth)
{
	char num[32];

	if (b->failed || !v || depth > PK_JSON_DUMP_DEPTH) {
		b->failed = true;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put_object(b, v, depth);
		break;
	case JSON_ARRAY:
		put_array(b, v, depth);
		break;
	case JSON_STRING:
		put_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		put(b, num,
		    (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
				     json_integer_value(v)));
		break;
	case JSON_REAL:
		put_real(b, v);
		break;
	case JSON_TRUE:
		put(b, "true", 4);
		break;
	case JSON_FALSE:
		put(b, "false", 5);
		break;
	case JSON_NULL:
		put(b, "null", 4);
		break;
	}
}

char *pk_json_compact(const json_t *v, size_t *ret_len)
{
	struct buf b = {0};

	put_value(&b, v, 0);
	if (!b.failed && !grow(&b, 0))
		b.failed = true;
	if (b.failed) {
		free(b.p);
		errno = ENOMEM;
		return NULL;
	}
	b.p[b.len] = '\0';
	if (ret_len)
		*ret_len = b.len;
	return b.p;
}

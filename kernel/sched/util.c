/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c — the small containers of the scheduling core: a pointer vector and
 * a growable text buffer (its string map is kernel/lib/map.h).  Allocation
 * failures surface as -ENOMEM from the functions that act.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"

int sc_vec_push(struct sc_vec *vec, void *item)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 8;
		void **v = realloc(vec->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = item;
	return 0;
}

void sc_vec_remove(struct sc_vec *vec, const void *item)
{
	for (size_t i = 0; i < vec->n; i++) {
		if (vec->v[i] == item) {
			memmove(&vec->v[i], &vec->v[i + 1], (vec->n - i - 1) * sizeof(void *));
			vec->n--;
			return;
		}
	}
}

void sc_vec_free(struct sc_vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

char *sc_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

char *sc_key(const char *ns, const char *name)
{
	size_t a = ns ? strlen(ns) : 0, b = name ? strlen(name) : 0;
	char *k = malloc(a + b + 2); /* "ns/name", as "%s/%s" writes it */

	if (!k)
		return NULL;
	if (a)
		memcpy(k, ns, a);
	k[a] = '/';
	if (b)
		memcpy(k + a + 1, name, b);
	k[a + 1 + b] = '\0';
	return k;
}

void sc_buf_printf(struct sc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if (b->n + (size_t)len + 1 > b->cap) {
		size_t cap = (b->n + (size_t)len + 1) * 2;
		char *s = realloc(b->s, cap);

		if (!s)
			return; /* messages are best effort; the text is truncated */
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)len;
}

void sc_buf_free(struct sc_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * labels.c — an ordered set of node labels that only ever holds valid ones.
 *
 * Every key and value passes through libtopo's label syntax checks on the way
 * in: a bad key is dropped, a bad value is sanitized (or dropped when nothing
 * valid is left), and either is reported as a warning.  So whatever reads a
 * set (the Node printer, the NFD writer, the publisher) can send it as is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

static int labels_grow(struct agent_labels *l)
{
	size_t cap = l->cap ? l->cap * 2 : 16;
	char **k, **v;

	k = realloc(l->key, cap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	l->key = k;
	v = realloc(l->value, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->value = v;
	l->cap = cap;
	return 0;
}

static int labels_put(struct agent_labels *l, const char *key, const char *value)
{
	char *k, *v;

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->key[i], key) == 0) {
			v = strdup(value);
			if (!v)
				return -ENOMEM;
			free(l->value[i]);
			l->value[i] = v;
			return 0;
		}
	if (l->n == l->cap && labels_grow(l) < 0)
		return -ENOMEM;
	k = strdup(key);
	v = strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	l->key[l->n] = k;
	l->value[l->n] = v;
	l->n++;
	return 0;
}

int agent_labels_set(struct agent_labels *l, const char *key, const char *value,
		     struct pk_errors *warnings)
{
	char why[256] = "";
	char clean[TOPO_LABEL_NAME_MAX + 1];

	if (!key || !topo_label_key_valid(key, why, sizeof(why))) {
		pk_errors_add(warnings, "label %s: invalid key, dropped: %s", key ? key : "(null)",
			      why);
		return -EINVAL;
	}
	if (!value)
		value = "";
	if (topo_label_value_valid(value, why, sizeof(why)))
		return labels_put(l, key, value);
	if (topo_label_value_sanitize(value, clean, sizeof(clean)) < 0 || !clean[0]) {
		pk_errors_add(warnings, "label %s: invalid value \"%.80s\", dropped: %s", key,
			      value, why);
		return -EINVAL;
	}
	pk_errors_add(warnings, "label %s: invalid value \"%.80s\" sent as \"%s\": %s", key, value,
		      clean, why);
	return labels_put(l, key, clean);
}

const char *agent_labels_get(const struct agent_labels *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->key[i], key) == 0)
			return l->value[i];
	return NULL;
}

void agent_labels_clear(struct agent_labels *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->key[i]);
		free(l->value[i]);
	}
	free(l->key);
	free(l->value);
	memset(l, 0, sizeof(*l));
}

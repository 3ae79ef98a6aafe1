/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.c — what an allocation is once found: its devices marked in use or
 * freed, its status.allocation as the API writes it, and the node selectors
 * (core/v1 NodeSelector: terms ORed, requirements of a term ANDed; In,
 * NotIn, Exists, DoesNotExist, Gt, Lt; matchFields on metadata.name) that
 * decide which nodes see a slice's devices and which nodes an allocation's
 * users may run on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/dra/dra-internal.h"
#include "topology/topology.h"

void dra_allocation_clear(struct dra_allocation *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nresults; i++) {
		free(a->results[i].request);
		free(a->results[i].driver);
		free(a->results[i].pool);
		free(a->results[i].device);
		free(a->results[i].share_id);
		json_decref(a->results[i].consumed);
	}
	free(a->results);
	free(a->node_name);
	json_decref(a->node_selector);
	*a = (struct dra_allocation){0};
}

static char *key_of(const struct dra_result *r)
{
	char *k = NULL;

	return asprintf(&k, "%s/%s/%s", r->driver, r->pool, r->device) < 0 ? NULL : k;
}

/* Room on the (known, shared) device k for a share consuming cons? */
static bool share_fits(struct dra_state *st, const char *k, const json_t *cons)
{
	json_t *at = st->dirty || !st->dev_index ? NULL : json_object_get(st->dev_index, k), *v;
	const struct dra_device *d;
	const char *name;

	if (!at)
		return true; /* unknown until the table is rebuilt, which recounts */
	d = &st->devs[json_integer_value(at)];
	if (!d->multi)
		return false;
	json_object_foreach((json_t *)cons, name, v)
	{
		int64_t m;

		for (size_t c = 0; c < d->cel.ncaps; c++)
			if (strcmp(d->pol[c].key, name) == 0 && json_is_string(v) &&
			    topo_quantity_parse(json_string_value(v), &m) == 0 &&
			    m > d->pol[c].value - d->consumed[c])
				return false;
	}
	return true;
}

/* Record result r on key k: 0, -EBUSY (taken, or no room), -ENOMEM. */
static int mark(struct dra_state *st, const char *k, const struct dra_result *r)
{
	json_t *u = json_object_get(st->used, k);

	if (!r->share_id) {
		if (u)
			return -EBUSY;
		return json_object_set_new(st->used, k, json_true()) < 0 ? -ENOMEM : 0;
	}
	if ((u && !json_is_object(u)) || json_object_get(u, r->share_id) ||
	    !share_fits(st, k, r->consumed))
		return -EBUSY;
	if (!u && (json_object_set_new(st->used, k, json_object()) < 0 ||
		   !(u = json_object_get(st->used, k))))
		return -ENOMEM;
	return json_object_set_new(u, r->share_id,
				   r->consumed ? json_deep_copy(r->consumed) : json_object()) < 0
		   ? -ENOMEM
		   : 0;
}

int dra_commit(struct dra_state *st, const struct dra_allocation *a)
{
	for (size_t i = 0; i < a->nresults; i++) {
		char *k = key_of(&a->results[i]);
		int r = k ? mark(st, k, &a->results[i]) : -ENOMEM;

		if (r < 0) {
			free(k);
			dra_release_n(st, a, i);
			return r;
		}
		dra_note_use(st, k, true);
		free(k);
	}
	return 0;
}

void dra_release_n(struct dra_state *st, const struct dra_allocation *a, size_t n)
{
	for (size_t i = 0; i < n && i < a->nresults; i++) {
		const struct dra_result *r = &a->results[i];
		char *k = key_of(r);
		json_t *u = k ? json_object_get(st->used, k) : NULL;

		if (u && r->share_id && json_is_object(u)) {
			json_object_del(u, r->share_id);
			if (json_object_size(u) == 0)
				json_object_del(st->used, k);
			dra_note_use(st, k, false);
		} else if (u && !r->share_id && json_is_true(u)) {
			json_object_del(st->used, k);
			dra_note_use(st, k, false);
		}
		free(k);
	}
}

void dra_release(struct dra_state *st, const struct dra_allocation *a)
{
	dra_release_n(st, a, a->nresults);
}

json_t *dra_allocation_json(const struct dra_allocation *a)
{
	json_t *results = json_array(), *out;
	json_t *sel = a->node_selector ? json_incref(a->node_selector) : NULL;

	for (size_t i = 0; results && i < a->nresults; i++) {
		const struct dra_result *r = &a->results[i];
		json_t *x = json_pack("{s:s, s:s, s:s, s:s}", "request", r->request, "driver",
				      r->driver, "pool", r->pool, "device", r->device);

		if (x && r->share_id)
			json_object_set_new(x, "shareID", json_string(r->share_id));
		if (x && r->consumed)
			json_object_set_new(x, "consumedCapacity", json_deep_copy(r->consumed));
		json_array_append_new(results, x);
	}
	if (!sel && a->node_name)
		sel = json_pack("{s:[{s:[{s:s, s:s, s:[s]}]}]}", "nodeSelectorTerms", "matchFields",
				"key", "metadata.name", "operator", "In", "values", a->node_name);
	out = json_pack("{s:{s:o}}", "devices", "results", results);
	if (out && sel)
		json_object_set_new(out, "nodeSelector", sel);
	else
		json_decref(sel);
	return out;
}

static const char *label(const struct dra_node *n, const char *key)
{
	for (size_t i = 0; i < n->nlabels; i++)
		if (strcmp(n->labels[i].key, key) == 0)
			return n->labels[i].value;
	return NULL;
}

static bool requirement(const json_t *req, const char *v)
{
	const char *op = pk_get_string(req, "operator");
	json_t *vals = json_object_get(req, "values"), *x;
	bool in = false;
	size_t i;
	char *end;

	if (!op)
		return false;
	json_array_foreach(vals, i, x) in =
	    in || (v && json_string_value(x) && strcmp(v, json_string_value(x)) == 0);
	if (strcmp(op, "In") == 0)
		return in;
	if (strcmp(op, "NotIn") == 0)
		return !in;
	if (strcmp(op, "Exists") == 0)
		return v != NULL;
	if (strcmp(op, "DoesNotExist") == 0)
		return v == NULL;
	if ((strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) && v && json_array_size(vals) == 1) {
		long long a = strtoll(v, &end, 10), b;

		if (*end)
			return false;
		b = strtoll(json_string_value(json_array_get(vals, 0)) ?: "x", &end, 10);
		if (*end)
			return false;
		return op[0] == 'G' ? a > b : a < b;
	}
	return false;
}

static bool term_matches(const json_t *term, const struct dra_node *node)
{
	json_t *exprs = json_object_get(term, "matchExpressions");
	json_t *fields = json_object_get(term, "matchFields"), *r;
	size_t i;

	if (json_array_size(exprs) + json_array_size(fields) == 0)
		return false; /* an empty term matches nothing, as upstream */
	json_array_foreach(exprs, i, r) if (!requirement(r, label(node, pk_get_string(r, "key")
									    ?: ""))) return false;
	json_array_foreach(fields, i, r)
	{
		const char *k = pk_get_string(r, "key");

		if (!k || strcmp(k, "metadata.name") != 0 || !requirement(r, node->name))
			return false;
	}
	return true;
}

bool dra_node_selector_match(const json_t *sel, const struct dra_node *node)
{
	json_t *terms = json_object_get(sel, "nodeSelectorTerms"), *t;
	size_t i;

	json_array_foreach(terms, i, t) if (term_matches(t, node)) return true;
	return false;
}

/* A result's shareID and consumedCapacity, when it has them. */
static int read_share(const json_t *x, struct dra_result *r)
{
	const char *id = pk_get_string(x, "shareID");
	json_t *cons = json_object_get(x, "consumedCapacity");

	if (id && !(r->share_id = strdup(id)))
		return -ENOMEM;
	if (id && json_is_object(cons) && !(r->consumed = json_deep_copy(cons)))
		return -ENOMEM;
	return 0;
}

int dra_allocation_parse(const json_t *alloc, struct dra_allocation *ret)
{
	json_t *results = pk_get(alloc, "devices.results"), *x;
	json_t *sel = json_object_get(alloc, "nodeSelector");
	struct dra_allocation a = {0};
	size_t i;

	a.results = calloc(json_array_size(results) + 1, sizeof(*a.results));
	if (!a.results)
		return -ENOMEM;
	json_array_foreach(results, i, x)
	{
		const char *req = pk_get_string(x, "request"), *drv = pk_get_string(x, "driver"),
			   *pool = pk_get_string(x, "pool"), *dev = pk_get_string(x, "device");
		struct dra_result *r = &a.results[a.nresults++];

		if (!drv || !pool || !dev) {
			dra_allocation_clear(&a);
			return -EINVAL;
		}
		r->request = strdup(req ? req : "");
		r->driver = strdup(drv);
		r->pool = strdup(pool);
		r->device = strdup(dev);
		if (read_share(x, r) < 0 || !r->request || !r->driver || !r->pool || !r->device) {
			dra_allocation_clear(&a);
			return -ENOMEM;
		}
	}
	if (json_is_object(sel) && !(a.node_selector = json_deep_copy(sel))) {
		dra_allocation_clear(&a);
		return -ENOMEM;
	}
	*ret = a;
	return 0;
}

bool dra_allocation_same(const struct dra_allocation *a, const struct dra_allocation *b)
{
	if (a->nresults != b->nresults)
		return false;
	for (size_t i = 0; i < a->nresults; i++)
		if (strcmp(a->results[i].driver, b->results[i].driver) != 0 ||
		    strcmp(a->results[i].pool, b->results[i].pool) != 0 ||
		    strcmp(a->results[i].device, b->results[i].device) != 0 ||
		    strcmp(a->results[i].share_id ?: "", b->results[i].share_id ?: "") != 0)
			return false;
	return true;
}

bool dra_allocation_admits(const struct dra_allocation *a, const struct dra_node *node)
{
	if (a->node_name && (!node->name || strcmp(a->node_name, node->name) != 0))
		return false;
	return !a->node_selector || dra_node_selector_match(a->node_selector, node);
}

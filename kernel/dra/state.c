/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c — the allocator's view of the published devices.
 *
 * DeviceClasses and ResourceSlices are kept as the objects they are (by
 * name); the flat device table the allocator searches is rebuilt from them
 * lazily, after any change: per pool (driver and pool name) only the slices
 * of the highest generation count, and only when all resourceSliceCount of
 * them are there (a pool being republished offers nothing until it is
 * complete, as upstream's allocator does).  Each device's attributes and
 * capacities become a cel_device (qualified names split into domain and
 * name, unqualified ones in the driver's domain).  Class selectors are
 * compiled at the same time; their results are cached per (device, class)
 * in a byte matrix that a rebuild clears.  Devices in use are a set of
 * "driver/pool/device" keys, so they survive rebuilds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/dra/dra-internal.h"
#include "topology/topology.h"

int dra_state_new(struct dra_state **ret)
{
	struct dra_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->classes = json_object();
	st->slices = json_object();
	st->used = json_object();
	if (!st->classes || !st->slices || !st->used) {
		dra_state_free(st);
		return -ENOMEM;
	}
	st->dirty = true;
	*ret = st;
	return 0;
}

static void clear_table(struct dra_state *st)
{
	for (size_t i = 0; i < st->ndev; i++) {
		for (size_t j = 0; j < st->devs[i].ndomains; j++)
			free(st->devs[i].domains[j]);
		free(st->devs[i].domains);
		free(st->devs[i].attrs);
		free(st->devs[i].caps);
		free(st->devs[i].pol);
		free(st->devs[i].consumed);
		free(st->devs[i].key);
	}
	free(st->devs);
	st->devs = NULL;
	st->ndev = 0;
	for (size_t i = 0; i < st->ncls; i++) {
		for (size_t j = 0; j < st->cls[i].nsel; j++)
			cel_program_free(st->cls[i].sel[j]);
		free(st->cls[i].sel);
		free(st->cls[i].err);
	}
	free(st->cls);
	st->cls = NULL;
	st->ncls = 0;
	free(st->cache);
	st->cache = NULL;
	free(st->local);
	free(st->shared);
	st->local = st->shared = NULL;
	st->nshared = 0;
	json_decref(st->by_node);
	st->by_node = NULL;
	free(st->slot_start);
	free(st->slot_len);
	st->slot_start = st->slot_len = NULL;
	json_decref(st->dev_index);
	st->dev_index = NULL;
	free(st->inuse);
	st->inuse = NULL;
}

void dra_note_use(struct dra_state *st, const char *k, bool on)
{
	json_t *i = st->dirty || !st->dev_index ? NULL : json_object_get(st->dev_index, k);

	if (!i)
		return;
	if (st->devs[json_integer_value(i)].multi)
		on = on && json_is_true(json_object_get(st->used, k));
	st->inuse[json_integer_value(i)] = on ? DRA_WHOLE : 0;
	dra_recount(st, (size_t)json_integer_value(i));
}

void dra_state_free(struct dra_state *st)
{
	if (!st)
		return;
	clear_table(st);
	json_decref(st->classes);
	json_decref(st->slices);
	json_decref(st->used);
	free(st);
}

int dra_state_set(struct dra_state *st, json_t *obj)
{
	enum pk_kind k = pk_kind_of(obj);
	const char *name = pk_name(obj);

	if (!name || (k != PK_KIND_DEVICE_CLASS && k != PK_KIND_RESOURCE_SLICE))
		return -EINVAL;
	if (json_object_set(k == PK_KIND_DEVICE_CLASS ? st->classes : st->slices, name, obj) < 0)
		return -ENOMEM;
	st->dirty = true;
	return 0;
}

int dra_state_remove(struct dra_state *st, enum pk_kind kind, const char *name)
{
	json_t *set = kind == PK_KIND_DEVICE_CLASS ? st->classes : st->slices;

	if ((kind != PK_KIND_DEVICE_CLASS && kind != PK_KIND_RESOURCE_SLICE) || !name ||
	    json_object_del(set, name) < 0)
		return -ENOENT;
	st->dirty = true;
	return 0;
}

/* "driver\npool" -> [generation, slices seen of it, resourceSliceCount]. */
static int pool_generations(struct dra_state *st, json_t *pools)
{
	const char *name;
	json_t *s;

	json_object_foreach(st->slices, name, s)
	{
		const char *drv = pk_get_string(s, "spec.driver"),
			   *pool = pk_get_string(s, "spec.pool.name");
		json_int_t gen = json_integer_value(pk_get(s, "spec.pool.generation"));
		json_int_t count = json_integer_value(pk_get(s, "spec.pool.resourceSliceCount"));
		char key[600];
		json_t *cur;

		if (!drv || !pool)
			continue;
		snprintf(key, sizeof(key), "%s\n%s", drv, pool);
		cur = json_object_get(pools, key);
		if (!cur || json_integer_value(json_array_get(cur, 0)) < gen) {
			if (json_object_set_new(pools, key, json_pack("[I,i,I]", gen, 1, count)) <
			    0)
				return -ENOMEM;
		} else if (json_integer_value(json_array_get(cur, 0)) == gen) {
			json_array_set_new(
			    cur, 1, json_integer(json_integer_value(json_array_get(cur, 1)) + 1));
		}
	}
	return 0;
}

static bool slice_counts(const json_t *s, json_t *pools)
{
	char key[600];
	json_t *cur;

	snprintf(key, sizeof(key), "%s\n%s", pk_get_string(s, "spec.driver"),
		 pk_get_string(s, "spec.pool.name"));
	cur = json_object_get(pools, key);
	return cur &&
	       json_integer_value(json_array_get(cur, 0)) ==
		   json_integer_value(pk_get(s, "spec.pool.generation")) &&
	       json_integer_value(json_array_get(cur, 1)) ==
		   json_integer_value(json_array_get(cur, 2));
}

/* Split "domain/name" (or "name": the driver's domain) into d's domains. */
static int split_name(struct dra_device *d, const char *qname, const char **ret_dom,
		      const char **ret_name)
{
	const char *slash = strchr(qname, '/');
	char **grown;

	if (!slash) {
		*ret_dom = d->driver;
		*ret_name = qname;
		return 0;
	}
	grown = realloc(d->domains, (d->ndomains + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	d->domains = grown;
	d->domains[d->ndomains] = strndup(qname, (size_t)(slash - qname));
	if (!d->domains[d->ndomains])
		return -ENOMEM;
	*ret_dom = d->domains[d->ndomains++];
	*ret_name = slash + 1;
	return 0;
}

/* A capacity's value: a quantity string or a number. */
static int quantity(const json_t *v, int64_t *ret_milli)
{
	if (json_is_integer(v) && json_integer_value(v) >= -INT64_MAX / 1000 &&
	    json_integer_value(v) <= INT64_MAX / 1000) {
		*ret_milli = json_integer_value(v) * 1000;
		return 0;
	}
	return json_is_string(v) ? topo_quantity_parse(json_string_value(v), ret_milli) : -EINVAL;
}

static int device_attrs(struct dra_device *d, const json_t *dev)
{
	json_t *attrs = json_object_get(dev, "attributes"),
	       *caps = json_object_get(dev, "capacity");
	const char *k;
	json_t *v;
	int r = 0;

	d->attrs = calloc(json_object_size(attrs) + 1, sizeof(*d->attrs));
	d->caps = calloc(json_object_size(caps) + 1, sizeof(*d->caps));
	d->pol = calloc(json_object_size(caps) + 1, sizeof(*d->pol));
	d->consumed = calloc(json_object_size(caps) + 1, sizeof(*d->consumed));
	d->multi = json_is_true(json_object_get(dev, "allowMultipleAllocations"));
	d->cel.multi = d->multi;
	if (!d->attrs || !d->caps || !d->pol || !d->consumed)
		return -ENOMEM;
	json_object_foreach(attrs, k, v)
	{
		struct cel_attr *a = &d->attrs[d->cel.nattrs];
		json_t *x;

		if ((r = split_name(d, k, &a->domain, &a->name)) < 0)
			return r;
		if ((x = json_object_get(v, "int")) && json_is_integer(x))
			a->type = CEL_ATTR_INT, a->i = json_integer_value(x);
		else if ((x = json_object_get(v, "bool")) && json_is_boolean(x))
			a->type = CEL_ATTR_BOOL, a->b = json_is_true(x);
		else if ((x = json_object_get(v, "string")) && json_is_string(x))
			a->type = CEL_ATTR_STRING, a->s = json_string_value(x);
		else if (!(x = json_object_get(v, "version")) ||
			 cel_semver_parse(json_string_value(x), &a->v) < 0)
			continue; /* validation refuses it; an unreadable value is absent */
		else
			a->type = CEL_ATTR_VERSION;
		d->cel.nattrs++;
	}
	json_object_foreach(caps, k, v)
	{
		struct cel_capacity *c = &d->caps[d->cel.ncaps];

		if ((r = split_name(d, k, &c->domain, &c->name)) < 0)
			return r;
		if (quantity(json_object_get(v, "value"), &c->milli) == 0)
			dra_read_policy(&d->pol[d->cel.ncaps++], k, c->milli, v);
	}
	d->cel.attrs = d->attrs;
	d->cel.caps = d->caps;
	return 0;
}

static int add_slice_devices(struct dra_state *st, json_t *s, size_t *cap)
{
	json_t *devs = pk_get(s, "spec.devices"), *dev;
	size_t i;
	int r;

	if (json_is_true(pk_get(s, "spec.perDeviceNodeSelection")))
		return 0; /* not offered (README): devices with their own node scope */
	json_array_foreach(devs, i, dev)
	{
		struct dra_device *d;

		if (st->ndev == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			struct dra_device *g = realloc(st->devs, nc * sizeof(*g));

			if (!g)
				return -ENOMEM;
			st->devs = g;
			*cap = nc;
		}
		d = &st->devs[st->ndev++];
		*d = (struct dra_device){.driver = pk_get_string(s, "spec.driver"),
					 .pool = pk_get_string(s, "spec.pool.name"),
					 .name = pk_get_string(dev, "name"),
					 .node_name = pk_get_string(s, "spec.nodeName"),
					 .node_sel = pk_get(s, "spec.nodeSelector"),
					 .all = json_is_true(pk_get(s, "spec.allNodes")),
					 .taints = json_object_get(dev, "taints")};
		d->cel.driver = d->driver;
		if (!d->name || asprintf(&d->key, "%s/%s/%s", d->driver, d->pool, d->name) < 0) {
			d->key = NULL;
			return -ENOMEM;
		}
		if ((r = device_attrs(d, dev)) < 0)
			return r;
	}
	return 0;
}

static int compile_classes(struct dra_state *st)
{
	const char *name;
	json_t *c;

	st->cls = calloc(json_object_size(st->classes) + 1, sizeof(*st->cls));
	if (!st->cls)
		return -ENOMEM;
	json_object_foreach(st->classes, name, c)
	{
		struct dra_class *k = &st->cls[st->ncls++];
		json_t *sels = pk_get(c, "spec.selectors"), *sel;
		size_t i;

		k->name = name;
		k->sel = calloc(json_array_size(sels) + 1, sizeof(*k->sel));
		if (!k->sel)
			return -ENOMEM;
		json_array_foreach(sels, i, sel)
		{
			const char *expr = pk_get_string(sel, "cel.expression");
			struct cel_error e = {0};

			if (k->err)
				break;
			if (!expr || cel_compile(expr, &k->sel[k->nsel], &e) < 0) {
				if (asprintf(&k->err,
					     "DeviceClass %s: spec.selectors[%zu].cel.expression: "
					     "column %u: %s (expression: %s)",
					     name, i, e.col, expr ? e.msg : "Required value",
					     expr ? expr : "") < 0)
					return -ENOMEM;
				break;
			}
			k->nsel++;
		}
	}
	return 0;
}

/* The per-node index: node-local devices grouped by node (slots), the rest shared. */
static int index_nodes(struct dra_state *st)
{
	size_t nslot = 0, start = 0;
	json_t *at;

	st->by_node = json_object();
	st->dev_index = json_object();
	st->local = calloc(st->ndev + 1, sizeof(int));
	st->shared = calloc(st->ndev + 1, sizeof(int));
	st->inuse = calloc(st->ndev + 1, 1);
	st->slot_start = calloc(st->ndev + 1, sizeof(size_t));
	st->slot_len = calloc(st->ndev + 1, sizeof(size_t));
	if (!st->by_node || !st->local || !st->shared || !st->dev_index || !st->inuse ||
	    !st->slot_start || !st->slot_len)
		return -ENOMEM;
	for (size_t i = 0; i < st->ndev; i++) {
		const char *n = st->devs[i].node_name;

		json_t *u = json_object_get(st->used, st->devs[i].key);

		/* a shared device is in use whole only when allocated whole */
		st->inuse[i] = (st->devs[i].multi ? json_is_true(u) : u != NULL) ? DRA_WHOLE : 0;
		dra_recount(st, i);
		if (json_object_set_new(st->dev_index, st->devs[i].key,
					json_integer((json_int_t)i)) < 0)
			return -ENOMEM;
		if (!n) {
			st->shared[st->nshared++] = (int)i;
			continue;
		}
		at = json_object_get(st->by_node, n);
		if (!at && json_object_set_new(st->by_node, n,
					       (at = json_integer((json_int_t)nslot++))) < 0)
			return -ENOMEM;
		st->slot_len[json_integer_value(at)]++;
	}
	for (size_t k = 0; k < nslot; k++) {
		st->slot_start[k] = start;
		start += st->slot_len[k];
		st->slot_len[k] = 0;
	}
	for (size_t i = 0; i < st->ndev; i++) {
		size_t k;

		if (!st->devs[i].node_name)
			continue;
		k = (size_t)json_integer_value(json_object_get(st->by_node, st->devs[i].node_name));
		st->local[st->slot_start[k] + st->slot_len[k]++] = (int)i;
	}
	return 0;
}

int dra_node_slot(struct dra_state *st, const char *name)
{
	json_t *at;

	if (dra_state_rebuild(st) < 0 || !name)
		return -1;
	at = json_object_get(st->by_node, name);
	return at ? (int)json_integer_value(at) : -1;
}

uint64_t dra_state_generation(struct dra_state *st)
{
	return dra_state_rebuild(st) < 0 ? 0 : st->gen;
}

int dra_state_rebuild(struct dra_state *st)
{
	json_t *pools;
	const char *name;
	json_t *s;
	size_t cap = 0;
	int r;

	if (!st->dirty)
		return 0;
	clear_table(st);
	pools = json_object();
	if (!pools)
		return -ENOMEM;
	r = pool_generations(st, pools);
	json_object_foreach(st->slices, name, s)
	{
		if (r == 0 && pk_get_string(s, "spec.driver") &&
		    pk_get_string(s, "spec.pool.name") && slice_counts(s, pools))
			r = add_slice_devices(st, s, &cap);
	}
	json_decref(pools);
	if (r == 0)
		r = compile_classes(st);
	if (r == 0 && !(st->cache = calloc(st->ndev * st->ncls + 1, 1)))
		r = -ENOMEM;
	if (r == 0)
		r = index_nodes(st);
	st->gen++;
	if (r < 0) {
		clear_table(st);
		return r;
	}
	st->dirty = false;
	return 0;
}

size_t dra_device_count(struct dra_state *st)
{
	return dra_state_rebuild(st) < 0 ? 0 : st->ndev;
}

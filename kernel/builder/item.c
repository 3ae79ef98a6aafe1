/* SPDX-License-Identifier: Apache-2.0 */
/*
 * item.c — workload items and their resolution.
 *
 * An item is one node of a controller's logical workload tree.  Resolution
 * walks the tree top-down; for each item it copies the controller's defaults,
 * lets every block the user set replace the matching defaults (field by
 * field: policy, constraints, disruption mode, claims), runs the item's
 * callbacks in order, and finally fills in what the library itself defaults
 * (basic policy, single disruption).  The result lands in item->resolved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"

int wb_item_new(const char *name, struct wb_item **ret_item)
{
	struct wb_item *item;

	if (!name || !ret_item)
		return -EINVAL;
	item = calloc(1, sizeof(*item));
	if (!item)
		return -ENOMEM;
	item->name = strdup(name);
	if (!item->name) {
		free(item);
		return -ENOMEM;
	}
	wb_config_init(&item->defaults);
	wb_config_init(&item->resolved);
	*ret_item = item;
	return 0;
}

void wb_item_free(struct wb_item *item)
{
	size_t i;

	if (!item)
		return;
	for (i = 0; i < item->nchildren; i++)
		wb_item_free(item->children[i]);
	free(item->children);
	for (i = 0; i < _WB_BLOCK_MAX; i++) {
		json_decref(item->input[i].data);
		free(item->input[i].path);
	}
	free(item->callbacks);
	wb_config_clear(&item->defaults);
	wb_config_clear(&item->resolved);
	free(item->name);
	free(item);
}

int wb_item_set_input(struct wb_item *item, enum wb_block block, json_t *data, const char *path)
{
	char *p = NULL;

	if (!item || block >= _WB_BLOCK_MAX)
		return -EINVAL;
	if (path && !(p = strdup(path)))
		return -ENOMEM;
	json_decref(item->input[block].data);
	free(item->input[block].path);
	item->input[block].data = json_is_null(data) ? NULL : json_incref(data);
	item->input[block].path = p;
	return 0;
}

int wb_item_add_callback(struct wb_item *item, wb_config_fn fn, void *userdata)
{
	struct wb_callback *n;

	if (!item || !fn)
		return -EINVAL;
	n = realloc(item->callbacks, (item->ncallbacks + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	item->callbacks = n;
	item->callbacks[item->ncallbacks++] = (struct wb_callback){fn, userdata};
	return 0;
}

int wb_item_add_child(struct wb_item *parent, struct wb_item *child)
{
	struct wb_item **n;

	if (!parent || !child) {
		wb_item_free(child);
		return -EINVAL;
	}
	n = realloc(parent->children, (parent->nchildren + 1) * sizeof(*n));
	if (!n) {
		wb_item_free(child);
		return -ENOMEM;
	}
	parent->children = n;
	parent->children[parent->nchildren++] = child;
	return 0;
}

/* Field-by-field override of cfg by the blocks the user set (mapped into u). */
int wb_config_override(struct wb_config *cfg, const struct wb_config *u, const struct wb_item *item)
{
	if (item->input[WB_BLOCK_POLICY].data && u->policy != WB_POLICY_UNSET) {
		cfg->policy = u->policy;
		cfg->has_min_count = u->has_min_count;
		cfg->min_count = u->min_count;
	}
	if (item->input[WB_BLOCK_CONSTRAINTS].data &&
	    wb_config_set_topology(cfg, u->topology_key) < 0)
		return -ENOMEM;
	if (item->input[WB_BLOCK_DISRUPTION].data && u->disruption != WB_DISRUPTION_UNSET)
		cfg->disruption = u->disruption;
	if (item->input[WB_BLOCK_CLAIMS].data) {
		struct wb_config tmp;
		size_t i;

		wb_config_init(&tmp);
		for (i = 0; i < u->nclaims; i++)
			if (wb_config_add_claim(&tmp, u->claims[i].name, u->claims[i].claim_name,
						u->claims[i].claim_template_name) < 0) {
				wb_config_clear(&tmp);
				return -ENOMEM;
			}
		while (cfg->nclaims) {
			struct wb_claim *c = &cfg->claims[--cfg->nclaims];

			free(c->name);
			free(c->claim_name);
			free(c->claim_template_name);
		}
		free(cfg->claims);
		cfg->claims = tmp.claims;
		cfg->nclaims = tmp.nclaims;
		cfg->has_claims = true;
	}
	return 0;
}

/* Map the user's blocks of one item into u (a fresh config). */
int wb_item_map_input(const struct wb_item *item, const char *root_path, bool declarative,
		      struct wb_config *u, struct pk_errors *errs)
{
	int r = 0;
	size_t b;

	for (b = 0; b < _WB_BLOCK_MAX; b++) {
		char *path;
		int k;

		if (!item->input[b].data)
			continue;
		path = wb_path_join(root_path,
				    item->input[b].path ? item->input[b].path : wb_block_name(b));
		if (!path)
			return -ENOMEM;
		k = wb_map_block(b, item->input[b].data, path, wb_item_is_composite(item),
				 declarative, u, errs);
		free(path);
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			r = k;
	}
	return r;
}

static int resolve_one(struct wb_item *item, const char *root_path, bool declarative,
		       unsigned depth, struct pk_errors *errs)
{
	struct wb_config u, cfg;
	int r, k;
	size_t i;

	if (depth > PK_MAX_DEPTH)
		return -ELOOP;
	wb_config_clear(&item->resolved);
	item->resolved_ok = false;
	wb_config_init(&u);
	r = wb_item_map_input(item, root_path, declarative, &u, errs);
	if (r == -ENOMEM || wb_config_copy(&cfg, &item->defaults) < 0) {
		wb_config_clear(&u);
		return -ENOMEM;
	}
	if (wb_config_override(&cfg, &u, item) < 0) {
		wb_config_clear(&u);
		wb_config_clear(&cfg);
		return -ENOMEM;
	}
	wb_config_clear(&u);
	for (i = 0; i < item->ncallbacks; i++)
		item->callbacks[i].fn(&cfg, item->callbacks[i].userdata);
	wb_config_finalize(&cfg);
	item->resolved = cfg;
	item->resolved_ok = r == 0;
	for (i = 0; i < item->nchildren; i++) {
		k = resolve_one(item->children[i], root_path, declarative, depth + 1, errs);
		if (k == -ENOMEM || k == -ELOOP)
			return k;
		if (k < 0)
			r = k;
	}
	return r;
}

int wb_item_resolve_ex(struct wb_item *root, const char *root_path, bool declarative,
		       struct pk_errors *errs)
{
	int r;

	if (!root)
		return -EINVAL;
	r = resolve_one(root, root_path, declarative, 0, errs);
	if (r == -ELOOP) {
		pk_errors_add(errs, "%s: Invalid value: the group tree is too deep",
			      root_path && *root_path ? root_path : "<root>");
		return -EINVAL;
	}
	return r;
}

int wb_item_resolve(struct wb_item *root, const char *root_path, struct pk_errors *errs)
{
	return wb_item_resolve_ex(root, root_path, true, errs);
}

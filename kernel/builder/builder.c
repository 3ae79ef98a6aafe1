/* SPDX-License-Identifier: Apache-2.0 */
/*
 * builder.c — the builder: validation and compilation of a resolved item tree.
 *
 * Validation runs, over the resolved tree, the rules the building blocks
 * cannot express on their own: the controller's allow-lists (opt-in: a
 * policy or disruption mode a controller did not list is rejected, including
 * ones this library does not know), the cross-field rules of KEP-6012
 * (`all` disruption needs a gang; an `all` parent needs `all` children; a
 * gang parent needs gang children), the
 * Workload limits (depth 4, 8 templates per list, unique DNS-label names) and,
 * given the previous tree, the update rules.  Compilation turns the tree into
 * a Workload whose template tree mirrors the item tree; runtime groups are
 * then copied out of the named templates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"
#include "topology/topology.h"

struct wb_builder {
	struct wb_item *root; /* borrowed; NULL for a builder over a Workload */
	char *name, *namespace;
	char *owner_api_version, *owner_kind, *owner_name, *owner_uid;
	struct wb_options opts; /* strings point into the copies above */
	json_t *workload;
};

static int dup_or_null(const char *s, char **ret)
{
	*ret = NULL;
	if (s && !(*ret = strdup(s)))
		return -ENOMEM;
	return 0;
}

static int builder_alloc(const struct wb_options *opts, struct wb_builder **ret)
{
	struct wb_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	if (opts)
		b->opts = *opts;
	if (dup_or_null(b->opts.name, &b->name) < 0 ||
	    dup_or_null(b->opts.namespace ? b->opts.namespace : "default", &b->namespace) < 0 ||
	    dup_or_null(b->opts.owner.api_version, &b->owner_api_version) < 0 ||
	    dup_or_null(b->opts.owner.kind, &b->owner_kind) < 0 ||
	    dup_or_null(b->opts.owner.name, &b->owner_name) < 0 ||
	    dup_or_null(b->opts.owner.uid, &b->owner_uid) < 0) {
		wb_builder_free(b);
		return -ENOMEM;
	}
	b->opts.name = b->name;
	b->opts.namespace = b->namespace;
	b->opts.owner =
	    (struct wb_owner){b->owner_api_version, b->owner_kind, b->owner_name, b->owner_uid};
	*ret = b;
	return 0;
}

int wb_builder_new(struct wb_item *root, const struct wb_options *opts, struct wb_builder **ret)
{
	struct wb_builder *b;
	int r;

	if (!root || !opts || !opts->name || !ret)
		return -EINVAL;
	r = builder_alloc(opts, &b);
	if (r < 0)
		return r;
	b->root = root;
	*ret = b;
	return 0;
}

int wb_builder_from_workload(const json_t *workload, const struct wb_options *opts,
			     struct wb_builder **ret)
{
	struct wb_builder *b;
	struct wb_options o = {0};
	int r;

	if (!json_is_object(workload) || !pk_name(workload) || !ret)
		return -EINVAL;
	if (opts)
		o = *opts;
	o.name = pk_name(workload);
	if (!o.namespace)
		o.namespace = wb_str(wb_obj(workload, "metadata"), "namespace");
	r = builder_alloc(&o, &b);
	if (r < 0)
		return r;
	b->workload = json_deep_copy(workload);
	if (!b->workload) {
		wb_builder_free(b);
		return -ENOMEM;
	}
	*ret = b;
	return 0;
}

void wb_builder_free(struct wb_builder *b)
{
	if (!b)
		return;
	json_decref(b->workload);
	free(b->name);
	free(b->namespace);
	free(b->owner_api_version);
	free(b->owner_kind);
	free(b->owner_name);
	free(b->owner_uid);
	free(b);
}

/* ---- validation ---------------------------------------------------------------- */
struct vctx {
	const struct wb_builder *b;
	const char *root_path;
	struct pk_errors *errs;
	int r;
};

/* Path of a block the user set, else of any block of the item, else the root. */
static char *where(const struct vctx *v, const struct wb_item *item, enum wb_block block)
{
	size_t i;

	if (item->input[block].data)
		return wb_path_join(v->root_path, item->input[block].path ? item->input[block].path
									  : wb_block_name(block));
	for (i = 0; i < _WB_BLOCK_MAX; i++)
		if (item->input[i].data && item->input[i].path) {
			char *p = strdup(item->input[i].path), *dot = p ? strrchr(p, '.') : NULL;
			char *full;

			if (!p)
				return NULL;
			if (dot)
				*dot = '\0';
			full =
			    dot ? wb_path_join(v->root_path, p) : wb_path_join(v->root_path, NULL);
			free(p);
			return full;
		}
	return wb_path_join(v->root_path, NULL);
}

static void verror(struct vctx *v, const struct wb_item *item, enum wb_block block, const char *fmt,
		   const char *a, const char *b)
{
	char *p = where(v, item, block);

	v->r = -EINVAL;
	pk_errors_add(v->errs, fmt, p && *p ? p : "<root>", a ? a : "", b ? b : "");
	free(p);
}

static char *allowed_list(const char *const *names, unsigned mask, size_t n)
{
	char *s = strdup(""), *t;
	size_t i;

	for (i = 0; s && i < n; i++) {
		if (!(mask & (1u << i)))
			continue;
		t = wb_strdupf("%s%s\"%s\"", s, *s ? ", " : "", names[i]);
		free(s);
		s = t;
	}
	if (s && !*s) {
		free(s);
		s = strdup("(none)");
	}
	return s;
}

/* One allow-list over a union block: every set member and the resolved variant. */
static void check_allowed(struct vctx *v, const struct wb_item *item, enum wb_block block,
			  const char *const *names, size_t n, unsigned mask, const char *resolved)
{
	const json_t *data = item->input[block].data;
	char *list = allowed_list(names, mask, n);
	bool reported = false;
	const char *key;
	json_t *val;

	if (json_is_object(data)) {
		json_object_foreach((json_t *)data, key, val)
		{
			size_t i;

			if (json_is_null(val))
				continue;
			for (i = 0; i < n; i++)
				if (strcmp(names[i], key) == 0 && (mask & (1u << i)))
					break;
			if (i < n)
				continue;
			verror(v, item, block,
			       "%s: Unsupported value: \"%s\": supported values: %s", key, list);
			reported = true;
		}
	}
	if (!reported && resolved) {
		size_t i;

		for (i = 0; i < n; i++)
			if (strcmp(names[i], resolved) == 0 && (mask & (1u << i)))
				break;
		if (i == n)
			verror(v, item, block,
			       "%s: Unsupported value: \"%s\": supported values: %s", resolved,
			       list);
	}
	free(list);
}

static void check_item(struct vctx *v, const struct wb_item *item, const struct wb_item *parent,
		       bool allow_lists)
{
	static const char *const policies[] = {"basic", "gang"};
	static const char *const modes[] = {"single", "all"};
	const struct wb_config *c = &item->resolved;

	if (allow_lists) {
		check_allowed(v, item, WB_BLOCK_POLICY, policies, 2, v->b->opts.allowed_policies,
			      wb_policy_name(c->policy));
		check_allowed(v, item, WB_BLOCK_DISRUPTION, modes, 2,
			      v->b->opts.allowed_disruption_modes,
			      wb_disruption_name(c->disruption));
	}
	if (c->policy == WB_POLICY_GANG && !c->has_min_count && item->resolved_ok)
		verror(v, item, WB_BLOCK_POLICY,
		       "%s.gang.%s: Required value: no default is known for this group%s",
		       wb_item_is_composite(item) ? "minGroupCount" : "minCount", NULL);
	if (c->disruption == WB_DISRUPTION_ALL && c->policy == WB_POLICY_BASIC)
		verror(v, item,
		       item->input[WB_BLOCK_DISRUPTION].data ? WB_BLOCK_DISRUPTION
							     : WB_BLOCK_POLICY,
		       "%s: Invalid value: \"all\": the `all` disruption mode requires the gang "
		       "scheduling policy%s%s",
		       NULL, NULL);
	if (parent && parent->resolved.policy == WB_POLICY_GANG && c->policy == WB_POLICY_BASIC)
		verror(v, item, WB_BLOCK_POLICY,
		       "%s: Invalid value: \"basic\": must be gang because the parent group \"%s\" "
		       "uses the gang policy (a gang counts whole child groups)%s",
		       parent->name, NULL);
	if (parent && parent->resolved.disruption == WB_DISRUPTION_ALL &&
	    c->disruption != WB_DISRUPTION_ALL)
		verror(v, item, WB_BLOCK_DISRUPTION,
		       "%s: Invalid value: \"%s\": must be `all` because the parent group \"%s\" "
		       "has the `all` disruption mode",
		       wb_disruption_name(c->disruption), parent->name);
}

struct name_seen {
	const char **names;
	size_t n, cap;
};

static void check_limits(struct vctx *v, const struct wb_item *item, unsigned depth,
			 struct name_seen *seen)
{
	size_t i, ncomp = 0, nleaf = 0;
	char *root = wb_path_join(v->root_path, NULL);
	const char *rp = root && *root ? root : "<root>";

	if (!*item->name || !topo_dns_label_valid(item->name)) {
		pk_errors_add(
		    v->errs,
		    "%s: Invalid value: \"%.80s\": group template name must be a DNS label", rp,
		    item->name);
		v->r = -EINVAL;
	}
	for (i = 0; i < seen->n; i++)
		if (strcmp(seen->names[i], item->name) == 0) {
			pk_errors_add(v->errs,
				      "%s: Duplicate value: \"%.80s\": group template names must "
				      "be unique in a Workload",
				      rp, item->name);
			v->r = -EINVAL;
			break;
		}
	if (i == seen->n) {
		if (seen->n == seen->cap) {
			size_t cap = seen->cap ? 2 * seen->cap : 16;
			const char **n = realloc(seen->names, cap * sizeof(*n));

			if (!n) {
				free(root);
				v->r = -ENOMEM;
				return;
			}
			seen->names = n;
			seen->cap = cap;
		}
		seen->names[seen->n++] = item->name;
	}
	if (depth > PK_HIERARCHY_DEPTH_MAX) {
		pk_errors_add(v->errs,
			      "%s: Invalid value: %u: group template \"%.80s\" is nested too deep: "
			      "depth must be at most %d",
			      rp, depth, item->name, PK_HIERARCHY_DEPTH_MAX);
		v->r = -EINVAL;
		free(root);
		return;
	}
	for (i = 0; i < item->nchildren; i++) {
		if (wb_item_is_composite(item->children[i]))
			ncomp++;
		else
			nleaf++;
	}
	if (ncomp > WB_MAX_TEMPLATES || nleaf > WB_MAX_TEMPLATES) {
		pk_errors_add(v->errs,
			      "%s: Too many: %zu: group template \"%.80s\" must have at most %d "
			      "child templates of each kind",
			      rp, ncomp > nleaf ? ncomp : nleaf, item->name, WB_MAX_TEMPLATES);
		v->r = -EINVAL;
	}
	free(root);
	for (i = 0; i < item->nchildren && v->r != -ENOMEM; i++)
		check_limits(v, item->children[i], depth + 1, seen);
}

static void check_tree(struct vctx *v, const struct wb_item *item, const struct wb_item *parent,
		       bool allow_lists, unsigned depth)
{
	size_t i;

	if (depth > PK_HIERARCHY_DEPTH_MAX + 1)
		return; /* reported by check_limits */
	check_item(v, item, parent, allow_lists);
	for (i = 0; i < item->nchildren; i++)
		check_tree(v, item->children[i], item, allow_lists, depth + 1);
}

/* The value a block has for the user: their input, else the controller default. */
static int effective(const struct wb_item *item, const struct wb_item *defaults_from,
		     struct wb_config *ret)
{
	struct wb_config u, cfg;
	int r;

	wb_config_init(&u);
	r = wb_item_map_input(item, NULL, false, &u, NULL);
	if (r != -ENOMEM)
		r = wb_config_copy(&cfg, &defaults_from->defaults);
	if (r == -ENOMEM) {
		wb_config_clear(&u);
		return r;
	}
	r = wb_config_override(&cfg, &u, item);
	wb_config_clear(&u);
	if (r < 0) {
		wb_config_clear(&cfg);
		return r;
	}
	wb_config_finalize(&cfg);
	*ret = cfg;
	return 0;
}

static void check_update(struct vctx *v, const struct wb_item *item, const struct wb_item *old)
{
	static const enum wb_block frozen[] = {WB_BLOCK_CONSTRAINTS, WB_BLOCK_DISRUPTION,
					       WB_BLOCK_CLAIMS};
	struct wb_config o, n;
	size_t i, j;

	if (effective(old, item, &o) < 0) {
		v->r = -ENOMEM;
		return;
	}
	if (effective(item, item, &n) < 0) {
		wb_config_clear(&o);
		v->r = -ENOMEM;
		return;
	}
	if (o.policy != n.policy)
		verror(
		    v, item, WB_BLOCK_POLICY,
		    "%s: Invalid value: \"%s\": field is immutable: the scheduling policy cannot "
		    "change from %s (only the gang count may change)",
		    wb_policy_name(n.policy), wb_policy_name(o.policy));
	for (i = 0; i < sizeof(frozen) / sizeof(frozen[0]); i++) {
		char *b;

		if (wb_block_equal(frozen[i], &o, &n))
			continue;
		b = wb_json_brief(item->input[frozen[i]].data);
		verror(v, item, frozen[i], "%s: Invalid value: %s: field is immutable%s", b, NULL);
		free(b);
	}
	wb_config_clear(&o);
	wb_config_clear(&n);
	for (i = 0; i < item->nchildren; i++)
		for (j = 0; j < old->nchildren; j++)
			if (strcmp(item->children[i]->name, old->children[j]->name) == 0) {
				check_update(v, item->children[i], old->children[j]);
				break;
			}
}

static int validate(struct wb_builder *b, const char *root_path, const struct wb_item *old_root,
		    bool allow_lists, struct pk_errors *errs)
{
	struct vctx v = {.b = b, .root_path = root_path, .errs = errs};
	struct name_seen seen = {0};
	int r;

	if (!b->root)
		return 0;
	r = wb_item_resolve_ex(b->root, root_path, !b->opts.disable_declarative_validation, errs);
	if (r == -ENOMEM)
		return r;
	v.r = r;
	if (old_root && strcmp(old_root->name, b->root->name) != 0) {
		char *p = wb_path_join(root_path, NULL);

		pk_errors_add(errs,
			      "%s: Internal error: the previous group tree \"%.80s\" does not "
			      "match \"%.80s\"",
			      p && *p ? p : "<root>", old_root->name, b->root->name);
		free(p);
		return -EINVAL;
	}
	check_limits(&v, b->root, 1, &seen);
	free(seen.names);
	if (v.r == -ENOMEM)
		return v.r;
	check_tree(&v, b->root, NULL, allow_lists, 1);
	if (old_root)
		check_update(&v, b->root, old_root);
	return v.r;
}

int wb_builder_validate(struct wb_builder *b, const char *root_path, const struct wb_item *old_root,
			struct pk_errors *errs)
{
	if (!b)
		return -EINVAL;
	return validate(b, root_path, old_root, true, errs);
}

/* ---- compilation ---------------------------------------------------------------- */
static json_t *template_of(const struct wb_item *item)
{
	json_t *t = json_pack("{s:s}", "name", item->name);
	json_t *comp = NULL, *leaf = NULL;
	size_t i;

	if (!t || wb_config_to_json(&item->resolved, wb_item_is_composite(item), t) < 0)
		goto fail;
	for (i = 0; i < item->nchildren; i++) {
		const struct wb_item *c = item->children[i];
		json_t **list = wb_item_is_composite(c) ? &comp : &leaf;
		json_t *ct = template_of(c);

		if (!ct || (!*list && !(*list = json_array())) ||
		    json_array_append_new(*list, ct) < 0)
			goto fail;
	}
	if (comp && json_object_set_new(t, "compositePodGroupTemplates", comp) < 0) {
		comp = NULL;
		goto fail;
	}
	comp = NULL;
	if (leaf && json_object_set_new(t, "podGroupTemplates", leaf) < 0) {
		leaf = NULL;
		goto fail;
	}
	return t;
fail:
	json_decref(comp);
	json_decref(leaf);
	json_decref(t);
	return NULL;
}

static const char *api_group_of(const char *api_version, char *buf, size_t len)
{
	const char *slash = api_version ? strchr(api_version, '/') : NULL;
	size_t n;

	if (!slash)
		return "";
	n = (size_t)(slash - api_version);
	if (n >= len)
		n = len - 1;
	memcpy(buf, api_version, n);
	buf[n] = '\0';
	return buf;
}

int wb_builder_build_workload(struct wb_builder *b, const char *root_path, json_t **ret_workload,
			      struct pk_errors *errs)
{
	struct pk_errors local = {0};
	json_t *w, *spec, *tmpl;
	int r;

	if (!b || !ret_workload)
		return -EINVAL;
	if (!b->root)
		return -EPERM;
	r = validate(b, root_path, NULL, false, errs ? errs : &local);
	pk_errors_clear(&local);
	if (r < 0)
		return r;
	w = wb_object_new(WB_SCHED_API, "Workload", b->name, b->namespace, &b->opts.owner);
	tmpl = template_of(b->root);
	spec = json_object();
	if (!w || !tmpl || !spec)
		goto nomem;
	if (b->opts.owner.kind) {
		char buf[128];

		json_object_set_new(
		    spec, "controllerRef",
		    json_pack("{s:s, s:s, s:s}", "apiGroup",
			      api_group_of(b->opts.owner.api_version, buf, sizeof(buf)), "kind",
			      b->opts.owner.kind, "name", b->opts.owner.name));
	}
	if (json_object_set_new(spec,
				wb_item_is_composite(b->root) ? "compositePodGroupTemplates"
							      : "podGroupTemplates",
				json_pack("[o]", tmpl)) < 0) {
		tmpl = NULL;
		goto nomem;
	}
	tmpl = NULL;
	if (json_object_set_new(w, "spec", spec) < 0) {
		spec = NULL;
		goto nomem;
	}
	json_decref(b->workload);
	b->workload = json_deep_copy(w);
	if (!b->workload) {
		json_decref(w);
		return -ENOMEM;
	}
	*ret_workload = w;
	return 0;
nomem:
	json_decref(w);
	json_decref(tmpl);
	json_decref(spec);
	return -ENOMEM;
}

/* Copy the scheduling fields of a template into a group spec (level -> key). */
static int copy_template_fields(const json_t *tmpl, json_t *spec)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)tmpl, key, val)
	{
		json_t *copy;

		if (strcmp(key, "name") == 0 || strcmp(key, "podGroupTemplates") == 0 ||
		    strcmp(key, "compositePodGroupTemplates") == 0)
			continue;
		copy = json_deep_copy(val);
		if (!copy || json_object_set_new(spec, key, copy) < 0)
			return -ENOMEM;
		if (strcmp(key, "schedulingConstraints") == 0) {
			json_t *topo = json_object_get(copy, "topology"), *c;
			size_t i;

			json_array_foreach(topo, i, c)
			{
				json_t *level = json_object_get(c, "level");

				if (level && !json_object_get(c, "key"))
					json_object_set(c, "key", level);
				json_object_del(c, "level");
			}
		}
	}
	return 0;
}

static int new_group(struct wb_builder *b, bool composite, const char *name,
		     const char *template_name, const char *parent, json_t **ret)
{
	json_t *tmpl, *obj, *spec;
	bool is_comp = false;

	if (!b || !name || !template_name || !ret)
		return -EINVAL;
	if (!b->workload)
		return -EINVAL;
	tmpl = wb_find_template(b->workload, template_name, &is_comp);
	if (!tmpl || is_comp != composite)
		return -ENOENT;
	obj = wb_object_new(WB_SCHED_API, composite ? "CompositePodGroup" : "PodGroup", name,
			    b->namespace, &b->opts.owner);
	spec = json_pack("{s:{s:s, s:s}}", "workloadRef", "workloadName", pk_name(b->workload),
			 "templateName", template_name);
	if (!obj || !spec)
		goto nomem;
	if (parent &&
	    json_object_set_new(spec, "parentCompositePodGroupName", json_string(parent)) < 0)
		goto nomem;
	if (copy_template_fields(tmpl, spec) < 0)
		goto nomem;
	if (json_object_set_new(obj, "spec", spec) < 0) {
		spec = NULL;
		goto nomem;
	}
	*ret = obj;
	return 0;
nomem:
	json_decref(obj);
	json_decref(spec);
	return -ENOMEM;
}

int wb_builder_new_pod_group(struct wb_builder *b, const char *name, const char *template_name,
			     const char *parent, json_t **ret_group)
{
	return new_group(b, false, name, template_name, parent, ret_group);
}

int wb_builder_new_composite_pod_group(struct wb_builder *b, const char *name,
				       const char *template_name, const char *parent,
				       json_t **ret_group)
{
	return new_group(b, true, name, template_name, parent, ret_group);
}

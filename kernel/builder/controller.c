/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller.c — the validate/reconcile skeleton that the Job and JobSet
 * controllers share, driven by one struct wb_controller per kind.
 *
 * A kind parses its object into a view whose first member is struct
 * wb_view (name, namespace, spec.scheduling, the downward annotations,
 * whether the object compiles its own Workload).  Validation parses the
 * object and the previous version, builds the kind's item tree for both and
 * runs the builder's rules with the update rules against the old tree, then
 * the kind's gang-count limits.  Reconciliation validates, then either
 * compiles the tree into a Workload and lets the kind append its groups and
 * objects, or hands over to the kind for an object whose groups a parent
 * made (delegated through the downward annotations, or bound).
 *
 * The pieces of a view and of an item tree that every kind builds the same
 * way are here too: the kind check, spec.scheduling and its known fields,
 * the downward annotations, items whose gang count defaults to a count of
 * the kind, the user's four blocks under a field-path prefix, the builder
 * options, the lookup of a parent's Workload and appending a group.
 */
#include <errno.h>
#include <stdlib.h>

#include "kernel/builder/builder-internal.h"
#include "kernel/lib/macro.h"

const char *const wb_block_fields[] = {"schedulingPolicy", "schedulingConstraints",
				       "disruptionMode", "resourceClaims", NULL};

/* ---- views ---------------------------------------------------------------------- */
int wb_view_check_kind(const json_t *obj, enum pk_kind kind, const char *what,
		       struct pk_errors *errs)
{
	if (pk_kind_of(obj) == kind)
		return 0;
	pk_errors_add(errs, "kind: Invalid value: \"%s\": expected %s",
		      wb_str(obj, "kind") ? wb_str(obj, "kind") : "", what);
	return -EINVAL;
}

int wb_view_parse_name(const json_t *obj, struct wb_view *v, bool (*valid)(const char *name),
		       const char *rule, struct pk_errors *errs)
{
	v->name = pk_name(obj);
	v->namespace = pk_namespace(obj);
	if (!v->name || !*v->name) {
		pk_errors_add(errs, "metadata.name: Required value");
		return -EINVAL;
	}
	if (!valid(v->name)) {
		pk_errors_add(errs, "metadata.name: Invalid value: \"%.80s\": must be %s", v->name,
			      rule);
		return -EINVAL;
	}
	return 0;
}

int wb_view_parse_scheduling(struct wb_view *v, const json_t *spec, const char *const *fields,
			     struct pk_errors *errs)
{
	v->scheduling = json_object_get(spec, "scheduling");
	if (json_is_null(v->scheduling))
		v->scheduling = NULL;
	if (v->scheduling && !json_is_object(v->scheduling)) {
		pk_errors_add(errs, WB_SCHEDULING_PATH ": Invalid value: must be an object");
		v->scheduling = NULL;
		return -EINVAL;
	}
	if (v->scheduling &&
	    wb_check_known_fields(v->scheduling, WB_SCHEDULING_PATH, fields, errs) < 0)
		return -EINVAL;
	return 0;
}

void wb_view_read_downward(const json_t *obj, struct wb_view *v)
{
	v->a_workload = wb_annotation(obj, WB_ANNOTATION_WORKLOAD);
	v->a_template = wb_annotation(obj, WB_ANNOTATION_TEMPLATE);
	v->a_parent = wb_annotation(obj, WB_ANNOTATION_PARENT);
}

int wb_view_parse_downward(const json_t *obj, struct wb_view *v, const char *kind,
			   struct pk_errors *errs)
{
	int r = 0;

	wb_view_read_downward(obj, v);
	v->compiles = !v->a_template;
	if (!!v->a_workload != !!v->a_template || (v->a_parent && !v->a_template)) {
		pk_errors_add(errs,
			      "metadata.annotations[%s]: Required value: the downward "
			      "annotations " WB_ANNOTATION_WORKLOAD " and " WB_ANNOTATION_TEMPLATE
			      " go together",
			      v->a_template ? WB_ANNOTATION_WORKLOAD : WB_ANNOTATION_TEMPLATE);
		r = -EINVAL;
	}
	if (v->a_template && v->scheduling) {
		pk_errors_add(errs,
			      WB_SCHEDULING_PATH ": Forbidden: scheduling of this %s is managed by "
						 "its parent (" WB_ANNOTATION_TEMPLATE ")",
			      kind);
		r = -EINVAL;
	}
	return r;
}

/* A zeroed view of the kind parsed from obj; *ret_view is set unless allocation fails. */
static int view_parse(const struct wb_controller *c, const json_t *obj, struct wb_view **ret_view,
		      struct pk_errors *errs)
{
	struct wb_view *v = calloc(1, c->view_size);

	*ret_view = v;
	return v ? c->parse(obj, v, errs) : -ENOMEM;
}

static void view_free(const struct wb_controller *c, struct wb_view *v)
{
	if (v && c->view_clear)
		c->view_clear(v);
	free(v);
}

/* ---- items ---------------------------------------------------------------------- */
/* An omitted gang count defaults to the kind's count (userdata), at least 1. */
static void default_min_count(struct wb_config *cfg, void *userdata)
{
	const int64_t *n = userdata;

	if (cfg->policy != WB_POLICY_GANG || cfg->has_min_count)
		return;
	cfg->has_min_count = true;
	cfg->min_count = *n < 1 ? 1 : (int32_t)*n;
}

int wb_item_new_counted(const char *name, const char *priority_class, const int64_t *count,
			struct wb_item **ret)
{
	struct wb_item *item;
	int r;

	r = wb_item_new(name, &item);
	if (r < 0)
		return r;
	item->defaults.policy = WB_POLICY_BASIC;
	r = wb_config_set_priority_class(&item->defaults, priority_class);
	if (r >= 0)
		r = wb_item_add_callback(item, default_min_count, (void *)count);
	if (r < 0) {
		wb_item_free(item);
		return r;
	}
	*ret = item;
	return 0;
}

int wb_item_set_blocks(struct wb_item *item, const json_t *blocks, const char *prefix)
{
	static const enum wb_block all[] = {WB_BLOCK_POLICY, WB_BLOCK_CONSTRAINTS,
					    WB_BLOCK_DISRUPTION, WB_BLOCK_CLAIMS};
	size_t i;
	int r;

	for (i = 0; i < ELEMENTSOF(all); i++) {
		char *path = wb_path_join(prefix, wb_block_name(all[i]));

		if (!path)
			return -ENOMEM;
		r = wb_item_set_input(item, all[i], json_object_get(blocks, wb_block_name(all[i])),
				      path);
		free(path);
		if (r < 0)
			return r;
	}
	return 0;
}

int wb_view_root_item(const struct wb_view *v, const char *name, const int64_t *count,
		      struct wb_item **ret)
{
	struct wb_item *item;
	int r;

	r = wb_item_new_counted(name, v->priority_class, count, &item);
	if (r < 0)
		return r;
	r = wb_item_set_blocks(item, v->scheduling, NULL);
	if (r < 0) {
		wb_item_free(item);
		return r;
	}
	*ret = item;
	return 0;
}

/* The builder of a compiling object: basic or gang, single or all, owned by obj. */
static int controller_builder(const json_t *obj, const struct wb_view *v, struct wb_item *root,
			      struct wb_builder **ret)
{
	struct wb_options opts = {
	    .name = v->name,
	    .namespace = v->namespace,
	    .allowed_policies = WB_ALLOW_BASIC | WB_ALLOW_GANG,
	    .allowed_disruption_modes = WB_ALLOW_SINGLE | WB_ALLOW_ALL,
	};

	wb_owner_of(obj, &opts.owner);
	return wb_builder_new(root, &opts, ret);
}

/* ---- validation ----------------------------------------------------------------- */
/* The builder's rules on the tree of v (updates against old_root), then the counts. */
static int validate_tree(const struct wb_controller *c, const json_t *obj, const struct wb_view *v,
			 const struct wb_item *old_root, struct pk_errors *errs)
{
	struct wb_item *root = NULL;
	struct wb_builder *b = NULL;
	int r;

	r = c->tree(v, &root);
	if (r >= 0)
		r = controller_builder(obj, v, root, &b);
	if (r >= 0)
		r = wb_builder_validate(b, WB_SCHEDULING_PATH, old_root, errs);
	if (r >= 0 || r == -EINVAL) {
		int k = c->check_counts(v, root, errs);

		if (k < 0)
			r = k;
	}
	wb_builder_free(b);
	wb_item_free(root);
	return r;
}

int wb_controller_validate(const struct wb_controller *c, const json_t *obj, const json_t *old_obj,
			   struct pk_errors *errs)
{
	struct wb_view *v = NULL, *ov = NULL;
	struct wb_item *old_root = NULL;
	struct pk_errors local = {0};
	int r;

	r = view_parse(c, obj, &v, errs);
	if (c->check && c->check(obj, errs) < 0)
		r = -EINVAL;
	if (r < 0 || !v->compiles)
		goto out;
	if (old_obj && view_parse(c, old_obj, &ov, &local) == 0 && ov->compiles &&
	    c->tree(ov, &old_root) < 0) {
		r = -ENOMEM;
		goto out;
	}
	pk_errors_clear(&local);
	r = validate_tree(c, obj, v, old_root, c->shared_blocks ? &local : errs);
	wb_errors_move(errs, &local, NULL);
out:
	pk_errors_clear(&local);
	wb_item_free(old_root);
	view_free(c, ov);
	view_free(c, v);
	return r;
}

/*
 * The queue controller's admission annotation is its own write: an object
 * created with it would run as admitted without ever having been.
 */
int wb_check_admission_annotation(const json_t *obj, const json_t *old_obj, struct pk_errors *errs)
{
	if (old_obj ||
	    !json_object_get(pk_get(obj, "metadata.annotations"), WB_ANNOTATION_QUEUE_ADMISSION))
		return 0;
	pk_errors_add(errs, "metadata.annotations[" WB_ANNOTATION_QUEUE_ADMISSION "]: Forbidden: "
			    "written by the queue controller when it admits the workload");
	return -EINVAL;
}

static const char *admission_of(const json_t *obj)
{
	return json_string_value(
	    json_object_get(pk_get(obj, "metadata.annotations"), WB_ANNOTATION_QUEUE_ADMISSION));
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * A user's update may not admit a queued workload, nor take back or move
 * one the queue controller admitted: the admission annotation is the
 * controller's alone (added, changed or removed), a suspended queued
 * workload is resumed by the controller only (when admitted, or admitted
 * again after its quota was given back), and the queue name is never
 * removed and does not change while admitted (Kueue's webhook keeps it so
 * as well).
 */
int wb_check_queue_user_update(const json_t *obj, const json_t *old_obj, struct pk_errors *errs)
{
	const char *a = admission_of(obj), *q = wb_queue_name(obj), *oq;
	bool admitted_before;
	int r = 0;

	if (!old_obj)
		return 0;
	oq = wb_queue_name(old_obj);
	admitted_before = admission_of(old_obj) && !json_is_true(pk_get(old_obj, "spec.suspend"));
	if (!same_str(a, admission_of(old_obj))) {
		pk_errors_add(errs, "metadata.annotations[" WB_ANNOTATION_QUEUE_ADMISSION
				    "]: Forbidden: written by the queue controller only");
		r = -EINVAL;
	}
	if (oq && (!q || (admitted_before && strcmp(q, oq) != 0))) {
		pk_errors_add(errs, "metadata.labels[" WB_LABEL_QUEUE_NAME "]: Forbidden: %s",
			      q ? "may not change while the workload is admitted"
				: "may not be removed from a queued workload");
		r = -EINVAL;
	}
	if (q && json_is_true(pk_get(old_obj, "spec.suspend")) &&
	    !json_is_true(pk_get(obj, "spec.suspend"))) {
		pk_errors_add(errs, "spec.suspend: Forbidden: a queued workload is resumed by the "
				    "queue controller when its ClusterQueue admits it");
		r = -EINVAL;
	}
	return r;
}

/* ---- reconciliation ------------------------------------------------------------- */
/* A compiling object: its Workload, then what the kind materializes from it. */
static int reconcile_compiled(const struct wb_controller *c, const json_t *obj,
			      const struct wb_view *v, json_t *out, struct pk_errors *errs)
{
	struct wb_item *root = NULL;
	struct wb_builder *b = NULL;
	json_t *w = NULL;
	int r;

	r = c->tree(v, &root);
	if (r >= 0)
		r = controller_builder(obj, v, root, &b);
	if (r >= 0)
		r = wb_builder_build_workload(b, WB_SCHEDULING_PATH, &w, errs);
	if (r >= 0 && json_array_append_new(out, w) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = c->materialize(obj, v, b, out);
	wb_builder_free(b);
	wb_item_free(root);
	return r;
}

int wb_controller_reconcile(const struct wb_controller *c, const json_t *obj,
			    const struct wb_lookup *lookup, json_t **ret_objects,
			    struct pk_errors *errs)
{
	struct wb_view *v = NULL;
	json_t *out = NULL;
	int r;

	if (!obj || !ret_objects)
		return -EINVAL;
	r = wb_controller_validate(c, obj, NULL, errs);
	if (r < 0)
		return r;
	r = view_parse(c, obj, &v, errs);
	if (r >= 0)
		v->lookup = lookup;
	if (r >= 0 && !(out = json_array()))
		r = -ENOMEM;
	if (r >= 0)
		r = v->compiles ? reconcile_compiled(c, obj, v, out, errs)
				: c->reconcile_managed(obj, v, lookup, out, errs);
	view_free(c, v);
	if (r < 0) {
		json_decref(out);
		return r;
	}
	*ret_objects = out;
	return 0;
}

const json_t *wb_view_workload(const struct wb_view *v, const struct wb_lookup *lookup,
			       struct pk_errors *errs)
{
	const json_t *wl = NULL;

	if (lookup && lookup->fn)
		wl = lookup->fn(lookup->userdata, PK_KIND_WORKLOAD, v->namespace, v->a_workload);
	if (!wl)
		pk_errors_add(
		    errs, "metadata.annotations[" WB_ANNOTATION_WORKLOAD "]: Not found: \"%.253s\"",
		    v->a_workload);
	return wl;
}

int wb_view_delegated_builder(const json_t *obj, const struct wb_view *v, const json_t *workload,
			      struct wb_builder **ret)
{
	struct wb_options opts = {.namespace = v->namespace};

	wb_owner_of(obj, &opts.owner);
	return wb_builder_from_workload(workload, &opts, ret);
}

int wb_append_group(struct wb_builder *b, json_t *out, bool composite, const char *name,
		    const char *tmpl, const char *parent)
{
	json_t *g;
	int r;

	r = composite ? wb_builder_new_composite_pod_group(b, name, tmpl, parent, &g)
		      : wb_builder_new_pod_group(b, name, tmpl, parent, &g);
	if (r < 0)
		return r;
	return json_array_append_new(out, g) < 0 ? -ENOMEM : 0;
}

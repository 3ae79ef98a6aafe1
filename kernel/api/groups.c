/* SPDX-License-Identifier: Apache-2.0 */
/*
 * groups.c — typed views of PodGroups, CompositePodGroups and Workloads.
 *
 * A group and every Workload template carry the same scheduling fields
 * (struct pk_group_spec): a policy union (basic | gang with minCount, or
 * minGroupCount for composites), at most one topology constraint, a
 * disruption-mode union (single | all, default single) and a priority.  One
 * decoder reads them for all three places.  Topology constraints written with
 * the KEP-6089 alias "level" are rewritten to "key" in the tree itself, so
 * everything downstream (and every writer) sees the upstream field name.
 * Workload templates form a tree (composite templates hold composite and
 * leaf children) decoded recursively; each view node borrows its strings.
 * The disruption unit of a group is found by one walk up its parents, over
 * whatever handles the caller keeps (pk_disruption_unit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "topology/topology.h"

/*
 * A union of empty-ish members ("basic"/"gang", "single"/"all") at path p:
 * which member is set, -1 when none or several (reported).
 */
static int union_member(const json_t *u, const char *a, const char *b, struct pk_path *p,
			struct pk_errors *errs)
{
	json_t *va = json_object_get(u, a), *vb = json_object_get(u, b);
	bool has_a = va && !json_is_null(va), has_b = vb && !json_is_null(vb);

	if (has_a && has_b) {
		pk_errors_add(errs,
			      "%s: Invalid value: \"{%s, %s}\": must specify exactly one of: "
			      "`%s`, `%s`",
			      p->s, a, b, a, b);
		return -1;
	}
	if (!has_a && !has_b) {
		pk_errors_add(errs, "%s: Invalid value: \"\": must specify one of: `%s`, `%s`",
			      p->s, a, b);
		return -1;
	}
	if (!json_is_object(has_a ? va : vb)) {
		char text[96];
		size_t old = pk_path_key(p, has_a ? a : b);

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(has_a ? va : vb, text, sizeof(text)));
		pk_path_pop(p, old);
		return -1;
	}
	return has_a ? 0 : 1;
}

static void policy_decode(const json_t *spec, bool composite, struct pk_path *p,
			  struct pk_errors *errs, struct pk_group_spec *gs)
{
	const char *min_key = composite ? "minGroupCount" : "minCount";
	json_t *pol = pk_field_object(spec, "schedulingPolicy", p, errs), *gang;
	size_t old = pk_path_key(p, "schedulingPolicy");
	bool has = false;
	int32_t min = 0;

	gs->policy = PK_POLICY_BASIC;
	if (!json_object_get(spec, "schedulingPolicy") ||
	    json_is_null(json_object_get(spec, "schedulingPolicy"))) {
		pk_errors_add(errs, "%s: Required value", p->s);
		goto out;
	}
	if (!pol || union_member(pol, "basic", "gang", p, errs) != 1)
		goto out;
	gs->policy = PK_POLICY_GANG;
	gang = json_object_get(pol, "gang");
	pk_path_key(p, "gang");
	if (!pk_field_int32(gang, min_key, p, errs, &has, &min))
		goto out;
	pk_path_key(p, min_key);
	if (!has)
		pk_errors_add(errs, "%s: Required value", p->s);
	else if (min < 1)
		pk_errors_add(errs, "%s: Invalid value: %d: must be greater than or equal to 1",
			      p->s, min);
	else
		gs->min_count = min;
out:
	pk_path_pop(p, old);
}

/* topology[i]: "key", or its alias "level" rewritten to "key". */
static void topology_item_decode(json_t *item, struct pk_path *p, struct pk_errors *errs,
				 const char **ret_key)
{
	const char *key = NULL, *level = NULL;
	size_t old;

	if (!json_is_object(item)) {
		char text[96];

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(item, text, sizeof(text)));
		return;
	}
	if (!pk_field_string(item, "key", p, errs, &key) ||
	    !pk_field_string(item, "level", p, errs, &level))
		return;
	if (level && key && strcmp(level, key) != 0) {
		old = pk_path_key(p, "level");
		pk_errors_add(errs,
			      "%s: Invalid value: \"%s\": must equal `key` (\"%s\"); `level` "
			      "is another name for `key`",
			      p->s, level, key);
		pk_path_pop(p, old);
		return;
	}
	if (level) {
		if (!key)
			json_object_set(item, "key", json_object_get(item, "level"));
		json_object_del(item, "level");
		key = json_string_value(json_object_get(item, "key"));
	}
	if (!key || !*key) {
		old = pk_path_key(p, "key");
		pk_errors_add(errs, "%s: Required value", p->s);
		pk_path_pop(p, old);
		return;
	}
	*ret_key = key;
}

static void constraints_decode(const json_t *spec, struct pk_path *p, struct pk_errors *errs,
			       struct pk_group_spec *gs)
{
	json_t *sc = pk_field_object(spec, "schedulingConstraints", p, errs), *topo;
	size_t old = pk_path_key(p, "schedulingConstraints");

	topo = pk_field_array(sc, "topology", p, errs);
	pk_path_key(p, "topology");
	if (json_array_size(topo) > 1)
		pk_errors_add(errs, "%s: Too many: %zu: must have at most 1 item", p->s,
			      json_array_size(topo));
	for (size_t i = 0; i < json_array_size(topo); i++) {
		size_t o2 = pk_path_index(p, i);
		const char *key = NULL;

		topology_item_decode(json_array_get(topo, i), p, errs, &key);
		if (i == 0)
			gs->topology_key = key;
		pk_path_pop(p, o2);
	}
	pk_path_pop(p, old);
}

static void disruption_decode(const json_t *spec, struct pk_path *p, struct pk_errors *errs,
			      struct pk_group_spec *gs)
{
	json_t *dm = pk_field_object(spec, "disruptionMode", p, errs);
	size_t old = pk_path_key(p, "disruptionMode");

	gs->disruption = PK_DISRUPTION_SINGLE;
	if (dm && union_member(dm, "single", "all", p, errs) == 1)
		gs->disruption = PK_DISRUPTION_ALL;
	pk_path_pop(p, old);
}

/* The scheduling fields of a group spec or a template at path p. */
static void group_spec_decode(const json_t *spec, bool composite, struct pk_path *p,
			      struct pk_errors *errs, struct pk_group_spec *gs)
{
	memset(gs, 0, sizeof(*gs));
	policy_decode(spec, composite, p, errs, gs);
	constraints_decode(spec, p, errs, gs);
	disruption_decode(spec, p, errs, gs);
	pk_field_string(spec, "priorityClassName", p, errs, &gs->priority_class);
	pk_field_int32(spec, "priority", p, errs, &gs->has_priority, &gs->priority);
}

/* ---- PodGroup and CompositePodGroup ----------------------------------------------------- */

/* The slice-shape annotation (a string; its syntax is validation's business). */
static void slice_decode(const json_t *obj, struct pk_errors *errs, const char **ret)
{
	const json_t *v = json_object_get(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"), TOPO_ANN_SLICE_SHAPE);
	char text[96];

	if (!v)
		return;
	if (json_is_string(v))
		*ret = json_string_value(v);
	else
		pk_errors_add(errs,
			      "metadata.annotations[" TOPO_ANN_SLICE_SHAPE "]: Invalid "
			      "value: %s: must be a string",
			      pk_value_text(v, text, sizeof(text)));
}

struct pk_group *pk_group_decode_partial(json_t *obj, struct pk_errors *errs)
{
	struct pk_group *g = calloc(1, sizeof(*g));
	/* The kind decides the shape; apiVersion is validation's business. */
	const struct pk_type *t = pk_type_by_kind(pk_get_string(obj, "kind"));
	struct pk_path p = {0};
	json_t *spec, *ref;
	size_t old;

	if (!g)
		return NULL;
	g->raw = json_incref(obj);
	g->kind = t ? t->pk : PK_KIND_UNKNOWN;
	if (g->kind != PK_KIND_POD_GROUP && g->kind != PK_KIND_COMPOSITE_POD_GROUP) {
		const char *kind = json_string_value(json_object_get(obj, "kind"));

		pk_errors_add(errs,
			      "kind: Unsupported value: \"%s\": supported values: "
			      "\"CompositePodGroup\", \"PodGroup\"",
			      kind ? kind : "");
		g->kind = PK_KIND_POD_GROUP;
	}
	if (pk_meta_decode(obj, pk_type_of(g->kind), &g->meta, errs) < 0) {
		pk_group_free(g);
		return NULL;
	}
	spec = pk_field_object(obj, "spec", &p, errs);
	pk_path_key(&p, "spec");
	ref = pk_field_object(spec, "workloadRef", &p, errs);
	old = pk_path_key(&p, "workloadRef");
	pk_field_string(ref, "workloadName", &p, errs, &g->workload_name);
	pk_field_string(ref, "templateName", &p, errs, &g->template_name);
	pk_path_pop(&p, old);
	pk_field_string(spec, "parentCompositePodGroupName", &p, errs, &g->parent);
	if (g->parent && !*g->parent)
		g->parent = NULL;
	group_spec_decode(spec, g->kind == PK_KIND_COMPOSITE_POD_GROUP, &p, errs, &g->spec);
	slice_decode(obj, errs, &g->slice_shape);
	return g;
}

void pk_group_free(struct pk_group *group)
{
	if (!group)
		return;
	pk_meta_clear(&group->meta);
	json_decref(group->raw);
	free(group);
}

/* ---- Workload ----------------------------------------------------------------------------- */

static int templates_decode(const json_t *parent, struct pk_path *p, struct pk_errors *errs,
			    int depth, struct pk_template **ret_tpl, size_t *ret_n);

static int template_decode(json_t *t, bool composite, struct pk_path *p, struct pk_errors *errs,
			   int depth, struct pk_template *tpl)
{
	tpl->composite = composite;
	if (!json_is_object(t)) {
		char text[96];

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(t, text, sizeof(text)));
		return 0;
	}
	pk_field_string(t, "name", p, errs, &tpl->name);
	group_spec_decode(t, composite, p, errs, &tpl->spec);
	if (!composite)
		return 0;
	return templates_decode(t, p, errs, depth + 1, &tpl->children, &tpl->nchildren);
}

/* compositePodGroupTemplates, then podGroupTemplates, of parent. */
static int templates_decode(const json_t *parent, struct pk_path *p, struct pk_errors *errs,
			    int depth, struct pk_template **ret_tpl, size_t *ret_n)
{
	json_t *lists[2] = {
	    pk_field_array(parent, "compositePodGroupTemplates", p, errs),
	    pk_field_array(parent, "podGroupTemplates", p, errs),
	};
	size_t n = json_array_size(lists[0]) + json_array_size(lists[1]), k = 0;
	int ret = 0;

	if (!n)
		return 0;
	if (depth > PK_MAX_DEPTH) {
		pk_errors_add(errs, "%s: Forbidden: templates nested deeper than %d levels", p->s,
			      PK_MAX_DEPTH);
		return 0;
	}
	*ret_tpl = calloc(n, sizeof(**ret_tpl));
	if (!*ret_tpl)
		return -ENOMEM;
	*ret_n = n;
	for (int l = 0; l < 2 && ret == 0; l++) {
		size_t old = pk_path_key(p, l ? "podGroupTemplates" : "compositePodGroupTemplates");

		for (size_t i = 0; i < json_array_size(lists[l]) && ret == 0; i++) {
			size_t o2 = pk_path_index(p, i);

			ret = template_decode(json_array_get(lists[l], i), l == 0, p, errs, depth,
					      &(*ret_tpl)[k++]);
			pk_path_pop(p, o2);
		}
		pk_path_pop(p, old);
	}
	return ret;
}

static void templates_free(struct pk_template *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		templates_free(t[i].children, t[i].nchildren);
	free(t);
}

struct pk_workload *pk_workload_decode_partial(json_t *obj, struct pk_errors *errs)
{
	struct pk_workload *w = calloc(1, sizeof(*w));
	struct pk_path p = {0};
	json_t *spec;

	if (!w)
		return NULL;
	w->raw = json_incref(obj);
	if (pk_meta_decode(obj, &pk_type_workload, &w->meta, errs) < 0)
		goto oom;
	spec = pk_field_object(obj, "spec", &p, errs);
	pk_path_key(&p, "spec");
	w->composite = json_array_size(json_object_get(spec, "compositePodGroupTemplates")) > 0;
	if (templates_decode(spec, &p, errs, 1, &w->templates, &w->ntemplates) < 0)
		goto oom;
	return w;
oom:
	pk_workload_free(w);
	return NULL;
}

void pk_workload_free(struct pk_workload *workload)
{
	if (!workload)
		return;
	pk_meta_clear(&workload->meta);
	templates_free(workload->templates, workload->ntemplates);
	json_decref(workload->raw);
	free(workload);
}

void *pk_disruption_unit(void *group, const struct pk_group_walk *walk)
{
	void *top = NULL;

	for (int i = 0; group && i < PK_HIERARCHY_WALK_MAX; i++) {
		if (walk->is_all(walk->arg, group))
			top = group;
		group = walk->up(walk->arg, group);
	}
	return top;
}

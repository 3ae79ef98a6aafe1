/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate.c — static validation of one object, with Kubernetes messages.
 *
 * Validation works on a private copy of the object: the partial decoders
 * (objects.c, groups.c) run first and contribute every structural problem
 * (types, unions, enums, quantities); the rules that need more than one field
 * or Kubernetes name syntax are then checked here.  A Workload's template
 * tree is walked on the tree itself so that every message carries the exact
 * path: list sizes (at most 8), depth (at most 4 levels), names (DNS labels,
 * unique across the whole tree), composite templates with children, and the
 * disruption rule (an `all` template has only `all` children).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "topology/topology.h"

#define MAX_TEMPLATES 8
#define MAX_USER_PRIORITY 1000000000
#define SYSTEM_CRITICAL_PRIORITY 2000000000
#define SYSTEM_NODE_CRITICAL_PRIORITY 2000001000

#define SUBDOMAIN_MSG                                                                              \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "  \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "      \
	"regex used for validation is "                                                            \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_MSG                                                                                  \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "   \
	"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "   \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

/* ---- small rules ------------------------------------------------------------------------- */

static void check_subdomain(const char *path, const char *s, struct pk_errors *errs)
{
	if (s && !topo_dns_subdomain_valid(s))
		pk_errors_add(errs, "%s: Invalid value: \"%s\": %s", path, s,
			      strlen(s) > TOPO_DNS_SUBDOMAIN_MAX
				  ? "must be no more than 253 characters"
				  : SUBDOMAIN_MSG);
}

static void check_dns_label(const char *path, const char *s, struct pk_errors *errs)
{
	if (s && !topo_dns_label_valid(s))
		pk_errors_add(errs, "%s: Invalid value: \"%s\": %s", path, s,
			      strlen(s) > TOPO_LABEL_NAME_MAX ? "must be no more than 63 characters"
							      : LABEL_MSG);
}

static void check_label_key(const char *path, const char *key, struct pk_errors *errs)
{
	char why[256];

	if (key && !topo_label_key_valid(key, why, sizeof(why)))
		pk_errors_add(errs, "%s: Invalid value: \"%s\": %s", path, key, why);
}

static void check_label_value(const char *path, const char *value, struct pk_errors *errs)
{
	char why[256];

	if (value && !topo_label_value_valid(value, why, sizeof(why)))
		pk_errors_add(errs, "%s: Invalid value: \"%s\": %s", path, value, why);
}

static void check_labels(const char *path, const struct pk_kv *kv, size_t n, struct pk_errors *errs)
{
	for (size_t i = 0; i < n; i++) {
		check_label_key(path, kv[i].key, errs);
		check_label_value(path, kv[i].value, errs);
	}
}

static void check_max_priority(const char *path, bool has, int32_t prio, int32_t max,
			       struct pk_errors *errs)
{
	if (has && prio > max)
		pk_errors_add(errs, "%s: Invalid value: %d: must be less than or equal to %d", path,
			      prio, max);
}

static void check_meta(const json_t *obj, const struct pk_meta *meta, const struct pk_type *t,
		       struct pk_errors *errs)
{
	const char *ns = pk_get_string(obj, "metadata.namespace");

	if (!meta->name || !*meta->name)
		pk_errors_add(errs, "metadata.name: Required value: name is required");
	else
		check_subdomain("metadata.name", meta->name, errs);
	if (ns && *ns) {
		if (!t->namespaced)
			pk_errors_add(errs,
				      "metadata.namespace: Forbidden: not allowed on this type");
		else
			check_dns_label("metadata.namespace", ns, errs);
	}
	check_labels("metadata.labels", meta->labels, meta->nlabels, errs);
}

/* ---- metadata.ownerReferences ------------------------------------------------------------ */

/* A required string field of reference i: present, a string, not empty. */
static const char *owner_field(const json_t *ref, size_t i, const char *key, const char *empty_msg,
			       struct pk_errors *errs)
{
	const json_t *v = json_object_get(ref, key);
	const char *s = json_string_value(v);
	char text[96];

	if (v && !json_is_string(v))
		pk_errors_add(
		    errs, "metadata.ownerReferences[%zu].%s: Invalid value: %s: must be a string",
		    i, key, pk_value_text(v, text, sizeof(text)));
	else if (!s || !*s)
		pk_errors_add(errs, "metadata.ownerReferences[%zu].%s: Invalid value: \"\": %s", i,
			      key, empty_msg);
	return s && *s ? s : NULL;
}

/* The version part of "group/version" or "version", as schema.ParseGroupVersion reads it. */
static bool owner_version_ok(const char *av)
{
	const char *slash = strchr(av, '/');

	return !slash || (slash[1] && !strchr(slash + 1, '/'));
}

static void owner_reference(const json_t *ref, size_t i, struct pk_errors *errs)
{
	const json_t *ctl = json_object_get(ref, "controller");
	const char *av, *kind;
	char text[96];

	if (!json_is_object(ref)) {
		pk_errors_add(errs,
			      "metadata.ownerReferences[%zu]: Invalid value: %s: must be an object",
			      i, pk_value_text(ref, text, sizeof(text)));
		return;
	}
	av = owner_field(ref, i, "apiVersion", "version must not be empty", errs);
	if (av && !owner_version_ok(av))
		pk_errors_add(
		    errs,
		    "metadata.ownerReferences[%zu].apiVersion: Invalid value: \"%s\": version "
		    "must not be empty",
		    i, av);
	kind = owner_field(ref, i, "kind", "must not be empty", errs);
	owner_field(ref, i, "name", "must not be empty", errs);
	owner_field(ref, i, "uid", "must not be empty", errs);
	if (av && kind && strcmp(av, "v1") == 0 && strcmp(kind, "Event") == 0)
		pk_errors_add(errs,
			      "metadata.ownerReferences[%zu]: Invalid value: \"/v1, Kind=Event\": "
			      "/v1, Kind=Event is disallowed from being an owner",
			      i);
	if (ctl && !json_is_boolean(ctl) && !json_is_null(ctl))
		pk_errors_add(
		    errs,
		    "metadata.ownerReferences[%zu].controller: Invalid value: %s: must be "
		    "a boolean",
		    i, pk_value_text(ctl, text, sizeof(text)));
}

int pk_validate_owner_references(const json_t *obj, struct pk_errors *errs)
{
	const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
	const json_t *first = NULL, *ref;
	size_t n0 = errs->n, i;
	char text[96];

	if (!refs || json_is_null(refs))
		return 0;
	if (!json_is_array(refs)) {
		pk_errors_add(errs, "metadata.ownerReferences: Invalid value: %s: must be a list",
			      pk_value_text(refs, text, sizeof(text)));
		return -EINVAL;
	}
	json_array_foreach(refs, i, ref)
	{
		owner_reference(ref, i, errs);
		if (!json_is_true(json_object_get(ref, "controller")))
			continue;
		if (!first) {
			first = ref;
			continue;
		}
		pk_errors_add(
		    errs,
		    "metadata.ownerReferences[%zu].controller: Invalid value: true: Only one "
		    "reference can "
		    "have Controller set to true. Found \"true\" in references for %s/%s and "
		    "%s/%s",
		    i, json_string_value(json_object_get(first, "kind")) ?: "",
		    json_string_value(json_object_get(first, "name")) ?: "",
		    json_string_value(json_object_get(ref, "kind")) ?: "",
		    json_string_value(json_object_get(ref, "name")) ?: "");
	}
	return errs->n == n0 ? 0 : -EINVAL;
}

/* ---- kinds ---------------------------------------------------------------------------------- */

void pk_validate_node(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_node *node = pk_node_decode_partial(obj, errs);
	json_t *cap = pk_get(obj, "status.capacity"), *v;
	const char *name;
	char path[320];

	if (!node)
		return;
	check_meta(obj, &node->meta, t, errs);
	for (size_t i = 0; i < node->ntaints; i++) {
		snprintf(path, sizeof(path), "spec.taints[%zu].key", i);
		check_label_key(path, node->taints[i].key, errs);
		snprintf(path, sizeof(path), "spec.taints[%zu].value", i);
		check_label_value(path, node->taints[i].value, errs);
	}
	/* capacity is checked too when allocatable is what the view used */
	if (json_is_object(pk_get(obj, "status.allocatable")) && json_is_object(cap)) {
		json_object_foreach(cap, name, v)
		{
			int64_t milli;
			char text[96];

			if (pk_quantity_of(v, &milli) < 0 || milli < 0)
				pk_errors_add(errs,
					      "status.capacity[%s]: Invalid value: %s: must be a "
					      "valid non-negative quantity",
					      name, pk_value_text(v, text, sizeof(text)));
		}
	}
	pk_node_free(node);
}

static void validate_selector_terms(const struct pk_pod *pod, struct pk_errors *errs)
{
	char path[384];

	for (size_t t = 0; t < pod->naffinity; t++) {
		for (size_t r = 0; r < pod->affinity[t].nreqs; r++) {
			const struct pk_selector_req *req = &pod->affinity[t].reqs[r];

			if (req->field || !req->key || !*req->key)
				continue;
			snprintf(path, sizeof(path),
				 "spec.affinity.nodeAffinity."
				 "requiredDuringSchedulingIgnoredDuringExecution"
				 ".nodeSelectorTerms[%zu].matchExpressions[%zu].key",
				 t, r);
			check_label_key(path, req->key, errs);
			if (req->op != PK_SEL_IN && req->op != PK_SEL_NOT_IN)
				continue;
			for (size_t v = 0; v < req->nvalues; v++) {
				snprintf(
				    path, sizeof(path),
				    "spec.affinity.nodeAffinity."
				    "requiredDuringSchedulingIgnoredDuringExecution"
				    ".nodeSelectorTerms[%zu].matchExpressions[%zu].values[%zu]",
				    t, r, v);
				check_label_value(path, req->values[v], errs);
			}
		}
	}
}

/* The group named in the spec or by a label; labels naming another group are refused. */
static void validate_pod_group(json_t *obj, const struct pk_pod *pod, struct pk_errors *errs)
{
	static const char *const keys[] = {TOPO_LABEL_POD_GROUP, TOPO_LABEL_POD_GROUP_COSCHED};
	json_t *labels = pk_get(obj, "metadata.labels");
	char path[96];

	if (!pod->pod_group_label) {
		check_subdomain("spec.schedulingGroup.podGroupName", pod->pod_group, errs);
	} else {
		snprintf(path, sizeof(path), "metadata.labels[%s]", pod->pod_group_label);
		check_subdomain(path, pod->pod_group, errs);
	}
	for (size_t k = 0; pod->pod_group && k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *v = json_string_value(json_object_get(labels, keys[k]));

		if (v && strcmp(v, pod->pod_group) != 0)
			pk_errors_add(
			    errs,
			    "metadata.labels[%s]: Invalid value: \"%s\": the pod's group is "
			    "\"%s\" (%s)",
			    keys[k], v, pod->pod_group,
			    pod->pod_group_label ? pod->pod_group_label
						 : "spec.schedulingGroup.podGroupName");
	}
}

/*
 * A Pod runs containers: spec.containers is required and not empty, as
 * kube-apiserver's ValidatePodSpec has it.  A pod without them could never
 * be written back once bound (there is no spec to hold spec.nodeName).
 */
static void check_pod_containers(const json_t *obj, struct pk_errors *errs)
{
	const json_t *spec = json_object_get(obj, "spec"), *cs;

	if (!spec || json_is_null(spec)) {
		pk_errors_add(errs, "spec: Required value");
		return;
	}
	if (!json_is_object(spec))
		return; /* the decoder says what is wrong with it */
	cs = json_object_get(spec, "containers");
	if (!cs || json_is_null(cs) || (json_is_array(cs) && json_array_size(cs) == 0))
		pk_errors_add(errs, "spec.containers: Required value");
}

void pk_validate_pod(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_pod *pod = pk_pod_decode_partial(obj, errs);
	char path[64];

	check_pod_containers(obj, errs);
	if (!pod)
		return;
	check_meta(obj, &pod->meta, t, errs);
	validate_pod_group(obj, pod, errs);
	pk_validate_kueue_pod(obj, errs);
	check_subdomain("spec.nodeName", pod->node_name, errs);
	check_subdomain("spec.priorityClassName", pod->priority_class, errs);
	check_max_priority("spec.priority", pod->has_priority, pod->priority,
			   SYSTEM_NODE_CRITICAL_PRIORITY, errs);
	check_labels("spec.nodeSelector", pod->node_selector, pod->nnode_selector, errs);
	validate_selector_terms(pod, errs);
	for (size_t i = 0; i < pod->ntolerations; i++) {
		snprintf(path, sizeof(path), "spec.tolerations[%zu].key", i);
		if (pod->tolerations[i].key && *pod->tolerations[i].key)
			check_label_key(path, pod->tolerations[i].key, errs);
	}
	pk_pod_free(pod);
}

void pk_validate_priority_class(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_priority_class *pc = pk_priority_class_decode_partial(obj, errs);
	const char *name;

	if (!pc)
		return;
	check_meta(obj, &pc->meta, t, errs);
	name = pc->meta.name ? pc->meta.name : "";
	if (strncmp(name, "system-", 7) == 0) {
		int32_t want =
		    strcmp(name, "system-node-critical") == 0	   ? SYSTEM_NODE_CRITICAL_PRIORITY
		    : strcmp(name, "system-cluster-critical") == 0 ? SYSTEM_CRITICAL_PRIORITY
								   : 0;

		if (!want)
			pk_errors_add(errs, "metadata.name: Forbidden: priority class names with "
					    "'system-' prefix are reserved for system use only");
		else if (pc->value != want)
			pk_errors_add(errs, "value: Invalid value: %d: must be %d for %s",
				      pc->value, want, name);
	} else if (pc->value > MAX_USER_PRIORITY) {
		pk_errors_add(errs,
			      "value: Forbidden: maximum allowed value of a user defined "
			      "priority is %d",
			      MAX_USER_PRIORITY);
	}
	pk_priority_class_free(pc);
}

/* Fields shared by groups and templates, spec at path prefix. */
static void check_group_spec(const char *prefix, const struct pk_group_spec *gs,
			     struct pk_errors *errs)
{
	char path[512];

	if (gs->topology_key) {
		snprintf(path, sizeof(path), "%s%sschedulingConstraints.topology[0].key", prefix,
			 *prefix ? "." : "");
		check_label_key(path, gs->topology_key, errs);
	}
	snprintf(path, sizeof(path), "%s%spriorityClassName", prefix, *prefix ? "." : "");
	check_subdomain(path, gs->priority_class, errs);
	snprintf(path, sizeof(path), "%s%spriority", prefix, *prefix ? "." : "");
	check_max_priority(path, gs->has_priority, gs->priority, MAX_USER_PRIORITY, errs);
}

#define SLICE_PATH "metadata.annotations[" TOPO_ANN_SLICE_SHAPE "]"
#define SLICE_MAX_CHIPS 65536 /* one superslice torus at most */

/*
 * The slice-shape annotation, as far as it can be checked without the board:
 * syntax, a PodGroup with a gang policy, and chips that minCount pods (one
 * per host) split evenly.  Whether the shape tiles into whole hosts of the
 * board and whether its host count equals minCount needs the host block,
 * which only the nodes' labels give: the scheduler checks that.
 */
static void check_slice(const struct pk_group *g, struct pk_errors *errs)
{
	struct topo_shape shape;
	int64_t chips;

	if (!g->slice_shape)
		return;
	if (g->kind == PK_KIND_COMPOSITE_POD_GROUP) {
		pk_errors_add(errs,
			      SLICE_PATH ": Invalid value: \"%s\": only a PodGroup (one pod "
					 "per host of the slice) can ask for a slice",
			      g->slice_shape);
		return;
	}
	if (topo_shape_parse(g->slice_shape, &shape) < 0) {
		pk_errors_add(errs,
			      SLICE_PATH ": Invalid value: \"%s\": expected chip extents "
					 "AxBxC, e.g. 4x4x8",
			      g->slice_shape);
		return;
	}
	chips = topo_shape_volume(&shape);
	if (chips > SLICE_MAX_CHIPS)
		pk_errors_add(errs,
			      SLICE_PATH ": Invalid value: \"%s\": must be at most %d chips "
					 "(one superslice)",
			      g->slice_shape, SLICE_MAX_CHIPS);
	else if (g->spec.policy != PK_POLICY_GANG)
		pk_errors_add(errs,
			      SLICE_PATH ": Invalid value: \"%s\": a slice needs "
					 "spec.schedulingPolicy.gang (one pod per host)",
			      g->slice_shape);
	else if (g->spec.min_count >= 1 && chips % g->spec.min_count != 0)
		pk_errors_add(errs,
			      SLICE_PATH ": Invalid value: \"%s\": %lld chips cannot be "
					 "split evenly among minCount %d pods (one pod per host)",
			      g->slice_shape, (long long)chips, g->spec.min_count);
}

void pk_validate_group(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_group *g = pk_group_decode_partial(obj, errs);
	bool has_ref;

	if (!g)
		return;
	check_meta(obj, &g->meta, t, errs);
	has_ref = json_is_object(pk_get(obj, "spec.workloadRef"));
	if (g->kind == PK_KIND_COMPOSITE_POD_GROUP && !has_ref)
		pk_errors_add(errs, "spec.workloadRef: Required value");
	else if (g->parent && !has_ref)
		pk_errors_add(errs, "spec.workloadRef: Required value: must be set when "
				    "`parentCompositePodGroupName` is set");
	if (has_ref) {
		if (!g->workload_name || !*g->workload_name)
			pk_errors_add(errs, "spec.workloadRef.workloadName: Required value");
		check_subdomain("spec.workloadRef.workloadName", g->workload_name, errs);
		if (!g->template_name || !*g->template_name)
			pk_errors_add(errs, "spec.workloadRef.templateName: Required value");
		check_dns_label("spec.workloadRef.templateName", g->template_name, errs);
	}
	check_subdomain("spec.parentCompositePodGroupName", g->parent, errs);
	if (g->parent && g->meta.name && strcmp(g->parent, g->meta.name) == 0 &&
	    g->kind == PK_KIND_COMPOSITE_POD_GROUP)
		pk_errors_add(errs,
			      "spec.parentCompositePodGroupName: Invalid value: \"%s\": must "
			      "not name the group itself",
			      g->parent);
	check_group_spec("spec", &g->spec, errs);
	check_slice(g, errs);
	pk_group_free(g);
}

/* ---- Workload template trees -------------------------------------------------------------- */

struct tree_walk {
	struct pk_errors *errs;
	json_t *names; /* every template name seen, for uniqueness */
};

static bool template_all(const json_t *t)
{
	json_t *all = pk_get(t, "disruptionMode.all");

	return all && !json_is_null(all);
}

static void walk_templates(struct tree_walk *w, const json_t *parent, struct pk_path *p, int level,
			   bool parent_all);

static void walk_template(struct tree_walk *w, const json_t *t, bool composite, struct pk_path *p,
			  int level, bool parent_all)
{
	const char *name = json_string_value(json_object_get(t, "name"));
	json_t *name_v = json_object_get(t, "name"), *prio = json_object_get(t, "priority");
	struct pk_group_spec gs = {0};
	size_t old;

	if (!json_is_object(t))
		return; /* reported by the decoder */
	old = pk_path_key(p, "name");
	if (!name_v || json_is_null(name_v) || (name && !*name)) {
		pk_errors_add(w->errs, "%s: Required value", p->s);
	} else if (name) {
		check_dns_label(p->s, name, w->errs);
		if (json_object_get(w->names, name))
			pk_errors_add(w->errs, "%s: Duplicate value: \"%s\"", p->s, name);
		else
			json_object_set_new(w->names, name, json_true());
	}
	pk_path_pop(p, old);
	if (parent_all && !template_all(t)) {
		old = pk_path_key(p, "disruptionMode");
		pk_errors_add(w->errs,
			      "%s: Forbidden: must be `all` when the parent template's "
			      "disruption mode is `all`",
			      p->s);
		pk_path_pop(p, old);
	}
	/* The decoder already reported structural problems; only rules here. */
	gs.topology_key = pk_get_string(t, "schedulingConstraints.topology[0].key");
	gs.priority_class = json_string_value(json_object_get(t, "priorityClassName"));
	if (json_is_integer(prio) && json_integer_value(prio) <= INT32_MAX &&
	    json_integer_value(prio) >= INT32_MIN) {
		gs.has_priority = true;
		gs.priority = (int32_t)json_integer_value(prio);
	}
	check_group_spec(p->s, &gs, w->errs);
	if (!composite)
		return;
	if (!json_array_size(json_object_get(t, "compositePodGroupTemplates")) &&
	    !json_array_size(json_object_get(t, "podGroupTemplates"))) {
		pk_errors_add(w->errs,
			      "%s: Required value: a composite template must have at least "
			      "one of `compositePodGroupTemplates`, `podGroupTemplates`",
			      p->s);
		return;
	}
	walk_templates(w, t, p, level + 1, template_all(t));
}

static void walk_templates(struct tree_walk *w, const json_t *parent, struct pk_path *p, int level,
			   bool parent_all)
{
	static const char *const lists[] = {"compositePodGroupTemplates", "podGroupTemplates"};

	for (int l = 0; l < 2; l++) {
		json_t *list = json_object_get(parent, lists[l]);
		size_t old = pk_path_key(p, lists[l]);

		if (json_is_array(list) && json_array_size(list) > 0) {
			if (json_array_size(list) > MAX_TEMPLATES)
				pk_errors_add(w->errs,
					      "%s: Too many: %zu: must have at most %d items", p->s,
					      json_array_size(list), MAX_TEMPLATES);
			if (level > PK_HIERARCHY_DEPTH_MAX) {
				pk_errors_add(w->errs,
					      "%s: Forbidden: the template hierarchy must not "
					      "be deeper than %d levels",
					      p->s, PK_HIERARCHY_DEPTH_MAX);
			} else {
				for (size_t i = 0; i < json_array_size(list); i++) {
					size_t o2 = pk_path_index(p, i);

					walk_template(w, json_array_get(list, i), l == 0, p, level,
						      parent_all);
					pk_path_pop(p, o2);
				}
			}
		}
		pk_path_pop(p, old);
	}
}

void pk_validate_workload(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_workload *wl = pk_workload_decode_partial(obj, errs);
	struct tree_walk w = {.errs = errs, .names = json_object()};
	struct pk_path p = {0};
	json_t *spec = json_object_get(obj, "spec");
	bool has_c, has_p;

	if (!wl || !w.names)
		goto out;
	check_meta(obj, &wl->meta, t, errs);
	if (!spec || json_is_null(spec)) {
		pk_errors_add(errs, "spec: Required value");
		goto out;
	}
	has_c = json_array_size(json_object_get(spec, "compositePodGroupTemplates")) > 0;
	has_p = json_array_size(json_object_get(spec, "podGroupTemplates")) > 0;
	if (has_c && has_p)
		pk_errors_add(errs, "spec: Invalid value: \"{compositePodGroupTemplates, "
				    "podGroupTemplates}\": must specify exactly one of: "
				    "`compositePodGroupTemplates`, `podGroupTemplates`");
	else if (!has_c && !has_p && json_is_object(spec))
		pk_errors_add(errs, "spec: Invalid value: \"\": must specify one of: "
				    "`compositePodGroupTemplates`, `podGroupTemplates`");
	pk_path_key(&p, "spec");
	walk_templates(&w, spec, &p, 1, false);
out:
	json_decref(w.names);
	pk_workload_free(wl);
}

void pk_validate_meta(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	struct pk_meta meta;

	if (pk_meta_decode(obj, t, &meta, errs) < 0)
		return;
	check_meta(obj, &meta, t, errs);
	pk_meta_clear(&meta);
}

/*
 * Lease (coordination.k8s.io/v1), as kube-apiserver's ValidateLeaseSpec:
 * holderIdentity a string, leaseDurationSeconds above 0, leaseTransitions not
 * negative, acquireTime and renewTime RFC 3339 (MicroTime) strings.
 */
void pk_validate_lease(json_t *obj, const struct pk_type *t, struct pk_errors *errs)
{
	static const char *const times[] = {"acquireTime", "renewTime"};
	json_t *spec = json_object_get(obj, "spec"), *v;
	struct pk_meta meta;
	char text[96];
	int64_t secs;

	if (pk_meta_decode(obj, t, &meta, errs) < 0)
		return;
	check_meta(obj, &meta, t, errs);
	pk_meta_clear(&meta);
	if (!spec || json_is_null(spec))
		return;
	if (!json_is_object(spec)) {
		pk_errors_add(errs, "spec: Invalid value: %s: must be an object",
			      pk_value_text(spec, text, sizeof(text)));
		return;
	}
	v = json_object_get(spec, "holderIdentity");
	if (v && !json_is_null(v) && !json_is_string(v))
		pk_errors_add(errs, "spec.holderIdentity: Invalid value: %s: must be a string",
			      pk_value_text(v, text, sizeof(text)));
	v = json_object_get(spec, "leaseDurationSeconds");
	if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) <= 0))
		pk_errors_add(errs,
			      "spec.leaseDurationSeconds: Invalid value: %s: must be greater "
			      "than 0",
			      pk_value_text(v, text, sizeof(text)));
	v = json_object_get(spec, "leaseTransitions");
	if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0))
		pk_errors_add(errs,
			      "spec.leaseTransitions: Invalid value: %s: must be greater than "
			      "or equal to 0",
			      pk_value_text(v, text, sizeof(text)));
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		v = json_object_get(spec, times[i]);
		if (v && !json_is_null(v) &&
		    (!json_is_string(v) || pk_time_parse(json_string_value(v), &secs) < 0))
			pk_errors_add(errs,
				      "spec.%s: Invalid value: %s: must be an RFC 3339 time "
				      "(e.g. 2024-05-01T10:00:00.000000Z)",
				      times[i], pk_value_text(v, text, sizeof(text)));
	}
}

/* ---- entry --------------------------------------------------------------------------------------
 */

/* The served type obj names, when podkernel validates it; NULL with the problem in errs. */
static const struct pk_type *check_kind(const json_t *obj, struct pk_errors *errs)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const struct pk_type *t = pk_type_by_kind(kind);

	if (!kind || !*kind) {
		pk_errors_add(errs, "kind: Required value");
		return NULL;
	}
	if (!t || !t->validate) {
		char list[1024] = "";
		size_t n = 0;

		for (const struct pk_type *const *p_o = pk_types, *o; (o = *p_o); p_o++)
			if (o->validate)
				n += (size_t)snprintf(list + n,
						      n < sizeof(list) ? sizeof(list) - n : 0,
						      "%s\"%s\"", n ? ", " : "", o->kind);
		pk_errors_add(errs, "kind: Unsupported value: \"%s\": supported values: %s", kind,
			      list);
		return NULL;
	}
	if (!av || !*av) {
		pk_errors_add(errs, "apiVersion: Required value");
		return NULL;
	}
	if (strcmp(av, t->api_version) != 0) {
		pk_errors_add(errs,
			      "apiVersion: Unsupported value: \"%s\": supported values: \"%s\"", av,
			      t->api_version);
		return NULL;
	}
	return t;
}

/* Metadata problems first, then the rest, each group in the order found. */
static void metadata_first(struct pk_errors *e, size_t from)
{
	size_t n = e->n - from, k = 0;
	char **tmp;

	if (n < 2 || !(tmp = malloc(n * sizeof(*tmp))))
		return;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = from; i < e->n; i++)
			if ((strncmp(e->msg[i], "metadata.", 9) == 0) == (pass == 0))
				tmp[k++] = e->msg[i];
	memcpy(e->msg + from, tmp, n * sizeof(*tmp));
	free(tmp);
}

int pk_validate(const json_t *obj, struct pk_errors *errs)
{
	struct pk_errors local = {0}, *e = errs ? errs : &local;
	size_t n0 = e->n;
	const struct pk_type *t;
	json_t *copy;

	if (!json_is_object(obj)) {
		pk_errors_add(e, "<object>: Invalid value: must be an object (a mapping)");
		pk_errors_clear(&local);
		return -EINVAL;
	}
	t = check_kind(obj, e);
	if (!t) {
		pk_errors_clear(&local);
		return -EINVAL;
	}
	/* Group and workload decoders normalise legacy fields in place, so
	 * they read a copy; a pod's decoder only reads (and pods are most of
	 * what a scheduling round writes), as does the metadata's alone (the
	 * kinds validated no further: Jobs, JobSets, the queue controller
	 * writes them at each admission and pending reason), and Kueue's
	 * (its queues' status, written at each pass). */
	copy = t->pk == PK_KIND_POD || t->validate == pk_validate_meta ||
		       t->validate == pk_validate_kueue
		   ? json_incref((json_t *)obj)
		   : json_deep_copy(obj);
	if (!copy)
		return -ENOMEM;
	t->validate(copy, t, e);
	json_decref(copy);
	metadata_first(e, n0);
	pk_errors_clear(&local);
	return e->n == n0 ? 0 : -EINVAL;
}

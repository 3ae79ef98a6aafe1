/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobset.c — the jobset.x-k8s.io/v1alpha2 JobSet controller with the
 * centralized "targeted policies" model of KEP-6089 (JobSet KEP-969).
 *
 * All scheduling lives in the JobSet's spec.scheduling: a root policy for the
 * whole JobSet, and entries that target replicated jobs by name with a policy
 * across the replicas of that replicated job and a `job:` block for every
 * single replica.  The controller compiles a three-level tree:
 *
 *   CompositePodGroupTemplate "jobset"          (root; children: replicated jobs)
 *     CompositePodGroupTemplate "<rjob>"        (children: the replicas)
 *       PodGroupTemplate "<rjob>-job"           (the pods of one Job replica)
 *
 * and materializes the root CompositePodGroup <jobset>, one CompositePodGroup
 * <jobset>-<rjob> per replicated job, one PodGroup <jobset>-<rjob>-<i> per
 * replica, and the Jobs <jobset>-<rjob>-<i> whose pod templates are bound to
 * their PodGroups (centralized management).  Gang counts left out default to
 * the number of children: replicated jobs at the root, replicas for a
 * replicated job, the Job's parallelism for a replica.  A level without a
 * policy or disruption mode of its own inherits gang and `all` from the
 * level above, since a gang's children must be gangs and an `all` group's
 * children `all`.
 *
 * Templates inside replicatedJobs must not carry scheduling fields (no split
 * brain).  A JobSet carrying the downward annotations is part of a parent's
 * Workload: it compiles nothing, materializes its groups from the annotated
 * template under the annotated parent, and delegates the PodGroups of its
 * Jobs to the Job controller through the same annotations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"
#include "kernel/lib/macro.h"
#include "topology/topology.h"

#define ROOT_TEMPLATE "jobset"
#define LEAF_SUFFIX "-job"

struct rjob {
	const char *name;
	int64_t replicas;
	int64_t parallelism;	/* of each Job replica */
	int64_t pods;		/* pods each Job replica creates */
	const json_t *template; /* replicatedJobs[i].template */
	bool shorthand;		/* template is a pod template (KEP example form) */
	const char *priority_class;
	long target; /* index of the spec.scheduling.replicatedJobs entry, or -1 */
};

struct jobset_view {
	struct wb_view base; /* first: the shared skeleton passes &base */
	struct rjob *rjobs;
	size_t nrjobs;
	int64_t nrjobs_count; /* for the root's gang default */
};

static const char *const root_fields[] = {"schedulingPolicy", "schedulingConstraints",
					  "disruptionMode",   "resourceClaims",
					  "replicatedJobs",   NULL};
static const char *const entry_fields[] = {"targetReplicatedJobs",
					   "schedulingPolicy",
					   "schedulingConstraints",
					   "disruptionMode",
					   "resourceClaims",
					   "job",
					   NULL};
static const char *const downward[] = {WB_ANNOTATION_WORKLOAD, WB_ANNOTATION_TEMPLATE,
				       WB_ANNOTATION_PARENT};

static const struct jobset_view *jobset_view_of(const struct wb_view *base)
{
	return (const struct jobset_view *)base;
}

static void view_clear(struct wb_view *base)
{
	struct jobset_view *v = (struct jobset_view *)base;

	free(v->rjobs);
	v->rjobs = NULL;
}

/* Templates must stay clean of scheduling directives and downward annotations. */
static int check_split_brain(const struct rjob *rj, size_t i, struct pk_errors *errs)
{
	const json_t *t = rj->template;
	const json_t *pod = rj->shorthand ? t : wb_obj(wb_obj(t, "spec"), "template");
	const json_t *metas[2] = {wb_obj(t, "metadata"),
				  rj->shorthand ? NULL : wb_obj(pod, "metadata")};
	const char *meta_paths[2] = {"template.metadata", "template.spec.template.metadata"};
	int r = 0;
	size_t m, k;

	if (json_object_get(wb_obj(t, "spec"), "scheduling")) {
		pk_errors_add(errs,
			      "spec.replicatedJobs[%zu].template.spec.scheduling: Forbidden: "
			      "scheduling of a JobSet is configured in spec.scheduling "
			      "(targetReplicatedJobs), not in its templates",
			      i);
		r = -EINVAL;
	}
	if (json_object_get(wb_obj(pod, "spec"), "schedulingGroup")) {
		pk_errors_add(errs,
			      "spec.replicatedJobs[%zu].%s.schedulingGroup: Forbidden: the "
			      "JobSet binds the pods of its Jobs to their groups",
			      i, rj->shorthand ? "template.spec" : "template.spec.template.spec");
		r = -EINVAL;
	}
	for (m = 0; m < 2; m++)
		for (k = 0; k < 3; k++)
			if (json_object_get(wb_obj(metas[m], "annotations"), downward[k])) {
				pk_errors_add(
				    errs,
				    "spec.replicatedJobs[%zu].%s.annotations[%s]: Forbidden: "
				    "set by the JobSet controller only",
				    i, meta_paths[m], downward[k]);
				r = -EINVAL;
			}
	return r;
}

static int parse_rjob(const json_t *rjs, size_t i, struct rjob *rj, struct pk_errors *errs)
{
	const json_t *o = json_array_get(rjs, i), *jspec, *pod;
	char path[64];
	size_t j;
	int r = 0;

	snprintf(path, sizeof(path), "spec.replicatedJobs[%zu]", i);
	memset(rj, 0, sizeof(*rj));
	rj->target = -1;
	if (!json_is_object(o)) {
		pk_errors_add(errs, "%s: Invalid value: must be an object", path);
		return -EINVAL;
	}
	rj->name = wb_str(o, "name");
	if (!rj->name || !topo_dns_label_valid(rj->name)) {
		pk_errors_add(errs,
			      rj->name ? "%s.name: Invalid value: \"%.80s\": must be a DNS label"
				       : "%s.name: Required value%.0s",
			      path, rj->name ? rj->name : "");
		r = -EINVAL;
		rj->name = NULL;
	}
	for (j = 0; rj->name && j < i; j++) {
		const char *other = wb_str(json_array_get(rjs, j), "name");

		if (other && strcmp(other, rj->name) == 0) {
			pk_errors_add(errs, "%s.name: Duplicate value: \"%s\"", path, rj->name);
			r = -EINVAL;
		}
	}
	if (wb_get_int(o, "replicas", path, 1, 1, WB_MAX_PODS, &rj->replicas, errs) < 0)
		r = -EINVAL;
	rj->template = wb_obj(o, "template");
	if (!rj->template) {
		pk_errors_add(errs, "%s.template: Required value", path);
		return -EINVAL;
	}
	jspec = wb_obj(rj->template, "spec");
	rj->shorthand = !wb_obj(jspec, "template");
	rj->parallelism = 1;
	rj->pods = 1;
	if (!rj->shorthand) {
		int64_t completions = -1;

		snprintf(path, sizeof(path), "spec.replicatedJobs[%zu].template.spec", i);
		if (wb_get_int(jspec, "parallelism", path, 1, 0, WB_MAX_PODS, &rj->parallelism,
			       errs) < 0 ||
		    wb_get_int(jspec, "completions", path, -1, 0, INT32_MAX, &completions, errs) <
			0)
			r = -EINVAL;
		rj->pods = json_is_true(json_object_get(jspec, "suspend")) ? 0 : rj->parallelism;
		if (r == 0 && completions >= 0 && completions < rj->pods)
			rj->pods = completions;
	}
	pod = rj->shorthand ? rj->template : wb_obj(jspec, "template");
	rj->priority_class = wb_str(wb_obj(pod, "spec"), "priorityClassName");
	if (check_split_brain(rj, i, errs) < 0)
		r = -EINVAL;
	return r;
}

static int parse_targets(struct jobset_view *v, struct pk_errors *errs)
{
	const json_t *entries = json_object_get(v->base.scheduling, "replicatedJobs"), *e;
	size_t k;
	int r = 0;

	if (!entries || json_is_null(entries))
		return 0;
	if (!json_is_array(entries)) {
		pk_errors_add(errs,
			      WB_SCHEDULING_PATH ".replicatedJobs: Invalid value: must be a list");
		return -EINVAL;
	}
	json_array_foreach(entries, k, e)
	{
		const json_t *targets = json_object_get(e, "targetReplicatedJobs"), *t;
		char path[96];
		size_t j, n;

		snprintf(path, sizeof(path), WB_SCHEDULING_PATH ".replicatedJobs[%zu]", k);
		if (!json_is_object(e)) {
			pk_errors_add(errs, "%s: Invalid value: must be an object", path);
			r = -EINVAL;
			continue;
		}
		if (wb_check_known_fields(e, path, entry_fields, errs) < 0)
			r = -EINVAL;
		if (json_object_get(e, "job") && !json_is_object(json_object_get(e, "job"))) {
			pk_errors_add(errs, "%s.job: Invalid value: must be an object", path);
			r = -EINVAL;
		} else if (wb_obj(e, "job")) {
			char jp[112];

			snprintf(jp, sizeof(jp), "%s.job", path);
			if (wb_check_known_fields(wb_obj(e, "job"), jp, wb_block_fields, errs) < 0)
				r = -EINVAL;
		}
		if (!json_is_array(targets) || !json_array_size(targets)) {
			pk_errors_add(errs,
				      "%s.targetReplicatedJobs: Required value: names of "
				      "spec.replicatedJobs",
				      path);
			r = -EINVAL;
			continue;
		}
		json_array_foreach(targets, j, t)
		{
			const char *name = json_string_value(t);

			for (n = 0; name && n < v->nrjobs; n++)
				if (v->rjobs[n].name && strcmp(v->rjobs[n].name, name) == 0)
					break;
			if (!name || n == v->nrjobs) {
				char *b = wb_json_brief(t);

				pk_errors_add(errs, "%s.targetReplicatedJobs[%zu]: Not found: %s",
					      path, j, b ? b : "?");
				free(b);
				r = -EINVAL;
			} else if (v->rjobs[n].target >= 0) {
				pk_errors_add(
				    errs,
				    "%s.targetReplicatedJobs[%zu]: Duplicate value: \"%s\": "
				    "already targeted by " WB_SCHEDULING_PATH
				    ".replicatedJobs[%ld]",
				    path, j, name, v->rjobs[n].target);
				r = -EINVAL;
			} else {
				v->rjobs[n].target = (long)k;
			}
		}
	}
	return r;
}

static int check_priorities(struct jobset_view *v, struct pk_errors *errs)
{
	size_t i;

	if (!v->nrjobs)
		return 0;
	v->base.priority_class = v->rjobs[0].priority_class;
	for (i = 1; i < v->nrjobs; i++) {
		const char *a = v->base.priority_class ? v->base.priority_class : "";
		const char *b = v->rjobs[i].priority_class ? v->rjobs[i].priority_class : "";

		if (strcmp(a, b) != 0) {
			pk_errors_add(
			    errs,
			    "spec.replicatedJobs[%zu].template.%spriorityClassName: Invalid value: "
			    "\"%s\": must equal \"%s\" (all groups of a workload share one "
			    "priority)",
			    i, v->rjobs[i].shorthand ? "spec." : "spec.template.spec.", b, a);
			return -EINVAL;
		}
	}
	return 0;
}

/* spec.replicatedJobs: each entry, the Job names they make and the pods in all. */
static int parse_rjobs(const json_t *rjs, struct jobset_view *v, int64_t *ret_total,
		       struct pk_errors *errs)
{
	const char *name = v->base.name;
	int64_t total = 0;
	size_t i;
	int r = 0;

	v->nrjobs = json_array_size(rjs);
	v->nrjobs_count = (int64_t)v->nrjobs;
	v->rjobs = calloc(v->nrjobs, sizeof(*v->rjobs));
	if (!v->rjobs)
		return -ENOMEM;
	for (i = 0; i < v->nrjobs; i++) {
		const struct rjob *rj = &v->rjobs[i];

		if (parse_rjob(rjs, i, &v->rjobs[i], errs) < 0)
			r = -EINVAL;
		total += rj->replicas * rj->pods;
		if (name && rj->name &&
		    strlen(name) + strlen(rj->name) + 2 +
			    (size_t)snprintf(NULL, 0, "%lld", (long long)rj->replicas - 1) >
			63) {
			pk_errors_add(
			    errs,
			    "spec.replicatedJobs[%zu].name: Invalid value: \"%s\": the Job "
			    "names %s-%s-<index> must be at most 63 characters",
			    i, rj->name, name, rj->name);
			r = -EINVAL;
		}
	}
	*ret_total = total;
	return r;
}

static int jobset_parse(const json_t *js, struct wb_view *base, struct pk_errors *errs)
{
	struct jobset_view *v = (struct jobset_view *)base;
	const json_t *spec, *rjs;
	int64_t total = 0;
	int k, r = 0;

	if (wb_view_check_kind(js, PK_KIND_JOBSET, "jobset.x-k8s.io/v1alpha2 JobSet", errs) < 0)
		return -EINVAL;
	if (wb_view_parse_name(js, base, topo_dns_label_valid, "a DNS label", errs) < 0)
		r = -EINVAL;
	spec = wb_obj(js, "spec");
	rjs = json_object_get(spec, "replicatedJobs");
	if (!json_is_array(rjs) || !json_array_size(rjs)) {
		pk_errors_add(errs, "spec.replicatedJobs: Required value");
		return -EINVAL;
	}
	if (json_array_size(rjs) > WB_MAX_TEMPLATES) {
		pk_errors_add(errs,
			      "spec.replicatedJobs: Too many: %zu: must have at most %d items "
			      "(one group template each)",
			      json_array_size(rjs), WB_MAX_TEMPLATES);
		return -EINVAL;
	}
	k = parse_rjobs(rjs, v, &total, errs);
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		r = -EINVAL;
	if (r == 0 && total > WB_MAX_PODS) {
		pk_errors_add(errs,
			      "spec.replicatedJobs: Too many: %lld: the JobSet would create more "
			      "than %d pods",
			      (long long)total, WB_MAX_PODS);
		r = -EINVAL;
	}
	if (wb_view_parse_scheduling(base, spec, root_fields, errs) < 0)
		r = -EINVAL;
	if (parse_targets(v, errs) < 0)
		r = -EINVAL;
	if (check_priorities(v, errs) < 0)
		r = -EINVAL;
	if (wb_view_parse_downward(js, base, "JobSet", errs) < 0)
		r = -EINVAL;
	return r;
}

/* ---- the item tree ------------------------------------------------------------- */
/*
 * What a level defaults to, given the level above: a gang's children must be
 * gangs and an `all` group's children `all` (KEP-6012), so a level the user
 * left unset follows its parent instead of failing validation.
 */
struct inherited {
	bool gang, all;
};

static bool block_has(const json_t *parent, const char *block, const char *member)
{
	json_t *v = json_object_get(wb_obj(parent, block), member);

	return v && !json_is_null(v);
}

static struct inherited inherit(const json_t *blocks, struct inherited up)
{
	struct inherited r = up;

	if (wb_obj(blocks, "schedulingPolicy"))
		r.gang = block_has(blocks, "schedulingPolicy", "gang");
	if (wb_obj(blocks, "disruptionMode"))
		r.all = block_has(blocks, "disruptionMode", "all");
	return r;
}

static void apply_inherited(struct wb_item *item, struct inherited in)
{
	if (in.gang)
		item->defaults.policy = WB_POLICY_GANG;
	if (in.all)
		item->defaults.disruption = WB_DISRUPTION_ALL;
}

static int rjob_items(const struct jobset_view *v, const struct rjob *rj, struct wb_item **ret)
{
	struct inherited root_in = inherit(v->base.scheduling, (struct inherited){false, false});
	struct inherited group_in, leaf_in;
	const json_t *entry =
	    rj->target >= 0 ? json_array_get(json_object_get(v->base.scheduling, "replicatedJobs"),
					     (size_t)rj->target)
			    : NULL;
	struct wb_item *group = NULL, *leaf = NULL;
	char prefix[80], jprefix[96], *leaf_name;
	int r;

	snprintf(prefix, sizeof(prefix), "replicatedJobs[%ld]", rj->target);
	snprintf(jprefix, sizeof(jprefix), "replicatedJobs[%ld].job", rj->target);
	leaf_name = wb_strdupf("%s" LEAF_SUFFIX, rj->name);
	if (!leaf_name)
		return -ENOMEM;
	r = wb_item_new_counted(rj->name, v->base.priority_class, &rj->replicas, &group);
	if (r >= 0)
		r = wb_item_new_counted(leaf_name, v->base.priority_class, &rj->parallelism, &leaf);
	free(leaf_name);
	group_in = inherit(entry, root_in);
	leaf_in = inherit(wb_obj(entry, "job"), group_in);
	if (r >= 0) {
		apply_inherited(group, group_in);
		apply_inherited(leaf, leaf_in);
	}
	if (r >= 0 && entry)
		r = wb_item_set_blocks(group, entry, prefix);
	if (r >= 0 && entry)
		r = wb_item_set_blocks(leaf, wb_obj(entry, "job"), jprefix);
	if (r >= 0) {
		r = wb_item_add_child(group, leaf);
		leaf = NULL;
	}
	if (r < 0) {
		wb_item_free(leaf);
		wb_item_free(group);
		return r;
	}
	*ret = group;
	return 0;
}

static int jobset_tree(const struct wb_view *base, struct wb_item **ret)
{
	const struct jobset_view *v = jobset_view_of(base);
	struct wb_item *root = NULL, *child = NULL;
	size_t i;
	int r;

	r = wb_view_root_item(base, ROOT_TEMPLATE, &v->nrjobs_count, &root);
	if (r < 0)
		return r;
	for (i = 0; r >= 0 && i < v->nrjobs; i++) {
		r = rjob_items(v, &v->rjobs[i], &child);
		if (r >= 0)
			r = wb_item_add_child(root, child);
	}
	if (r < 0) {
		wb_item_free(root);
		return r;
	}
	*ret = root;
	return 0;
}

/* Gang counts no group can reach: more groups or pods than the JobSet has. */
static int check_counts(const struct wb_view *base, const struct wb_item *root,
			struct pk_errors *errs)
{
	const struct jobset_view *v = jobset_view_of(base);
	size_t i;
	int r = 0;

	if (wb_check_count_limit(root, WB_SCHEDULING_PATH, (int64_t)v->nrjobs,
				 "the number of replicatedJobs", errs) < 0)
		r = -EINVAL;
	for (i = 0; i < v->nrjobs && i < root->nchildren; i++) {
		const struct wb_item *group = root->children[i];

		if (wb_check_count_limit(group, WB_SCHEDULING_PATH, v->rjobs[i].replicas,
					 "its replicas", errs) < 0)
			r = -EINVAL;
		if (group->nchildren && wb_check_count_limit(group->children[0], WB_SCHEDULING_PATH,
							     v->rjobs[i].parallelism,
							     "the Job's parallelism", errs) < 0)
			r = -EINVAL;
	}
	return r;
}

/*
 * Upstream JobSet fields this controller does not act on.  Each is refused
 * at its path unless it holds the value whose behaviour is the one built here
 * (a JobSet must not run as if the field were absent: a JobSet managed
 * elsewhere would run twice).
 */
enum accept { ACCEPT_ABSENT, ACCEPT_FALSE, ACCEPT_EMPTY_OBJECT, ACCEPT_EMPTY_LIST, ACCEPT_STRING };

static const struct unimplemented {
	const char *field; /* below spec */
	enum accept accept;
	const char *value; /* the one string accepted (ACCEPT_STRING) */
	const char *error; /* after "spec.<field>: " */
} unimplemented[] = {
    {"network", ACCEPT_EMPTY_OBJECT, NULL,
     "Forbidden: not implemented (no headless Service, pod hostnames or subdomain are "
     "created)"},
    {"startupPolicy.startupPolicyOrder", ACCEPT_STRING, "AnyOrder",
     "Unsupported value: supported values: \"AnyOrder\" (every replicated job starts at once)"},
    {"coordinator", ACCEPT_ABSENT, NULL,
     "Forbidden: not implemented (no coordinator label or annotation is written)"},
    {"managedBy", ACCEPT_STRING, "jobset.sigs.k8s.io/jobset-controller",
     "Unsupported value: supported values: \"jobset.sigs.k8s.io/jobset-controller\" (this "
     "controller manages every JobSet it admits)"},
    {"ttlSecondsAfterFinished", ACCEPT_ABSENT, NULL,
     "Forbidden: not implemented (finished JobSets are kept until deleted)"},
    {"failurePolicy.rules", ACCEPT_EMPTY_LIST, NULL,
     "Forbidden: not implemented (every failed Job counts toward maxRestarts)"},
    {"failurePolicy.restartStrategy", ACCEPT_STRING, "Recreate",
     "Unsupported value: supported values: \"Recreate\""},
};

/* Fields of each replicatedJobs entry, refused unless absent, and why. */
static const char *const unimplemented_rjob[][2] = {
    {"groupName", "no group-name label is written"},
    {"dependsOn", "every replicated job starts at once"},
};

static bool accepted(const struct unimplemented *u, const json_t *v)
{
	if (!v || json_is_null(v))
		return true;
	switch (u->accept) {
	case ACCEPT_FALSE:
		return json_is_false(v);
	case ACCEPT_EMPTY_OBJECT:
		return json_is_object(v) && json_object_size(v) == 0;
	case ACCEPT_EMPTY_LIST:
		return json_is_array(v) && json_array_size(v) == 0;
	case ACCEPT_STRING:
		return json_is_string(v) && strcmp(json_string_value(v), u->value) == 0;
	case ACCEPT_ABSENT:
		break;
	}
	return false;
}

static int check_unimplemented(const json_t *jobset, struct pk_errors *errs)
{
	const json_t *spec = wb_obj(jobset, "spec");
	const json_t *rjs = json_object_get(spec, "replicatedJobs");
	size_t i, k;
	int r = 0;

	for (k = 0; k < ELEMENTSOF(unimplemented); k++) {
		const struct unimplemented *u = &unimplemented[k];

		if (!accepted(u, pk_get(spec, u->field))) {
			pk_errors_add(errs, "spec.%s: %s", u->field, u->error);
			r = -EINVAL;
		}
	}
	for (i = 0; json_is_array(rjs) && i < json_array_size(rjs); i++)
		for (k = 0; k < ELEMENTSOF(unimplemented_rjob); k++) {
			json_t *v =
			    json_object_get(json_array_get(rjs, i), unimplemented_rjob[k][0]);

			if (v && !json_is_null(v)) {
				pk_errors_add(errs,
					      "spec.replicatedJobs[%zu].%s: Forbidden: not "
					      "implemented (%s)",
					      i, unimplemented_rjob[k][0],
					      unimplemented_rjob[k][1]);
				r = -EINVAL;
			}
		}
	return r;
}

/* What the whole JobSet must not ask for: policies and fields not built here. */
static int jobset_check(const json_t *jobset, struct pk_errors *errs)
{
	const json_t *suspend = pk_get(jobset, "spec.suspend");
	int r = 0;

	if (wb_jobset_check_policies(jobset, errs) < 0)
		r = -EINVAL;
	if (check_unimplemented(jobset, errs) < 0)
		r = -EINVAL;
	if (suspend && !json_is_boolean(suspend) && !json_is_null(suspend)) {
		pk_errors_add(errs, "spec.suspend: Invalid value: must be a boolean");
		r = -EINVAL;
	}
	return r;
}

/* ---- objects -------------------------------------------------------------------- */
static int add_labels(json_t *meta, const json_t *jobset, const char *js, const char *rjob,
		      int64_t index)
{
	json_t *labels = json_object_get(meta, "labels");
	char idx[24], attempt[24];

	if (!json_is_object(labels)) {
		labels = json_object();
		if (!labels || json_object_set_new(meta, "labels", labels) < 0)
			return -ENOMEM;
	}
	snprintf(idx, sizeof(idx), "%lld", (long long)index);
	if (json_object_set_new(labels, "jobset.sigs.k8s.io/jobset-name", json_string(js)) < 0 ||
	    json_object_set_new(labels, "jobset.sigs.k8s.io/replicatedjob-name",
				json_string(rjob)) < 0 ||
	    json_object_set_new(labels, "jobset.sigs.k8s.io/job-index", json_string(idx)) < 0)
		return -ENOMEM;
	/* which restart attempt the Job belongs to (status.restarts, 0 before any) */
	snprintf(attempt, sizeof(attempt), "%lld", (long long)wb_jobset_restarts(jobset));
	if (json_object_set_new(labels, WB_LABEL_RESTART_ATTEMPT, json_string(attempt)) < 0)
		return -ENOMEM;
	return 0;
}

struct job_binding {
	const char *group;			       /* centralized: bind the pod template */
	const char *workload, *template_name, *parent; /* delegated: annotations */
};

static json_t *make_job(const json_t *js, const struct jobset_view *v, const struct rjob *rj,
			int64_t index, const struct job_binding *bind)
{
	const char *created = wb_str(wb_obj(js, "metadata"), "creationTimestamp");
	struct wb_owner owner;
	json_t *job, *meta, *spec, *pod, *pmeta;
	char name[200];

	snprintf(name, sizeof(name), "%s-%s-%lld", v->base.name, rj->name, (long long)index);
	wb_owner_of(js, &owner);
	job = wb_object_new("batch/v1", "Job", name, v->base.namespace, &owner);
	if (!job)
		return NULL;
	meta = json_object_get(job, "metadata");
	if (rj->shorthand) {
		spec = json_pack("{s:i, s:i}", "parallelism", 1, "completions", 1);
		if (spec &&
		    json_object_set_new(spec, "template", json_deep_copy(rj->template)) < 0) {
			json_decref(spec);
			spec = NULL;
		}
	} else {
		const json_t *tmeta = wb_obj(rj->template, "metadata");

		if (wb_obj(tmeta, "labels"))
			json_object_set_new(meta, "labels",
					    json_deep_copy(wb_obj(tmeta, "labels")));
		if (wb_obj(tmeta, "annotations"))
			json_object_set_new(meta, "annotations",
					    json_deep_copy(wb_obj(tmeta, "annotations")));
		spec = json_deep_copy(wb_obj(rj->template, "spec"));
	}
	if (!spec || json_object_set_new(job, "spec", spec) < 0)
		goto fail;
	/* a suspended (or queued) JobSet's Jobs are suspended; resuming it resumes them */
	if (wb_suspended(js) && json_object_set_new(spec, "suspend", json_true()) < 0)
		goto fail;
	if (created && json_object_set_new(meta, "creationTimestamp", json_string(created)) < 0)
		goto fail;
	pod = wb_obj(spec, "template");
	if (!pod)
		goto fail;
	pmeta = wb_obj(pod, "metadata");
	if (!pmeta && (json_object_set_new(pod, "metadata", json_object()) < 0 ||
		       !(pmeta = wb_obj(pod, "metadata"))))
		goto fail;
	if (add_labels(meta, js, v->base.name, rj->name, index) < 0 ||
	    add_labels(pmeta, js, v->base.name, rj->name, index) < 0)
		goto fail;
	if (bind->group) {
		if (!wb_obj(pod, "spec") && json_object_set_new(pod, "spec", json_object()) < 0)
			goto fail;
		if (json_object_set_new(wb_obj(pod, "spec"), "schedulingGroup",
					json_pack("{s:s}", "podGroupName", bind->group)) < 0)
			goto fail;
	} else if (wb_set_downward_annotations(job, bind->workload, bind->template_name,
					       bind->parent) < 0) {
		goto fail;
	}
	return job;
fail:
	json_decref(job);
	return NULL;
}

/* Centralized: the root, per replicated job and per replica groups, then the Jobs. */
static int jobset_materialize(const json_t *js, const struct wb_view *base, struct wb_builder *b,
			      json_t *out)
{
	const struct jobset_view *v = jobset_view_of(base);
	size_t i;
	int64_t k;
	int r;

	r = wb_append_group(b, out, true, v->base.name, ROOT_TEMPLATE, NULL);
	for (i = 0; r >= 0 && i < v->nrjobs; i++) {
		const struct rjob *rj = &v->rjobs[i];
		char *gname = wb_strdupf("%s-%s", v->base.name, rj->name);
		char *leaf = wb_strdupf("%s" LEAF_SUFFIX, rj->name);

		r = gname && leaf ? wb_append_group(b, out, true, gname, rj->name, v->base.name)
				  : -ENOMEM;
		for (k = 0; r >= 0 && k < rj->replicas; k++) {
			char *pg = wb_strdupf("%s-%lld", gname, (long long)k);

			r = pg ? wb_append_group(b, out, false, pg, leaf, gname) : -ENOMEM;
			free(pg);
		}
		free(gname);
		free(leaf);
	}
	for (i = 0; r >= 0 && i < v->nrjobs; i++) {
		const struct rjob *rj = &v->rjobs[i];

		for (k = 0; r >= 0 && k < rj->replicas; k++) {
			char *pg = wb_strdupf("%s-%s-%lld", v->base.name, rj->name, (long long)k);
			struct job_binding bind = {.group = pg};
			json_t *job = pg ? make_job(js, v, rj, k, &bind) : NULL;

			if (!job || json_array_append_new(out, job) < 0)
				r = -ENOMEM;
			free(pg);
		}
	}
	return r;
}

/* Where the Jobs of one replicated job find their PodGroupTemplate in T. */
static int delegated_leaf(const json_t *tmpl, const struct rjob *rj, const json_t **ret_group,
			  const char **ret_leaf)
{
	char leaf_name[96];
	const json_t *g, *leaf;
	bool comp = false;

	snprintf(leaf_name, sizeof(leaf_name), "%s" LEAF_SUFFIX, rj->name);
	g = wb_find_child_template(tmpl, rj->name, &comp);
	if (g && comp) {
		const json_t *leaves = json_object_get(g, "podGroupTemplates");

		leaf = wb_find_child_template(g, leaf_name, &comp);
		if (!leaf || comp)
			leaf = json_array_size(leaves) == 1 ? json_array_get(leaves, 0) : NULL;
		if (!leaf || !wb_str(leaf, "name"))
			return -ENOENT;
		*ret_group = g;
		*ret_leaf = wb_str(leaf, "name");
		return 0;
	}
	leaf = wb_find_child_template(tmpl, leaf_name, &comp);
	if (!leaf || comp)
		leaf = wb_find_child_template(tmpl, rj->name, &comp);
	if (!leaf || comp)
		return -ENOENT;
	*ret_group = NULL;
	*ret_leaf = wb_str(leaf, "name");
	return 0;
}

static int reconcile_delegated(const json_t *js, const struct wb_view *base,
			       const struct wb_lookup *lookup, json_t *out, struct pk_errors *errs)
{
	const struct jobset_view *v = jobset_view_of(base);
	struct wb_builder *b = NULL;
	const json_t *tmpl, *wl;
	bool comp = false;
	size_t i;
	int64_t k;
	int r;

	wl = wb_view_workload(base, lookup, errs);
	if (!wl)
		return -ENOENT;
	tmpl = wb_find_template(wl, v->base.a_template, &comp);
	if (!tmpl || !comp) {
		pk_errors_add(errs,
			      "metadata.annotations[" WB_ANNOTATION_TEMPLATE
			      "]: Not found: \"%.63s\": "
			      "Workload \"%.253s\" has no CompositePodGroupTemplate of that name",
			      v->base.a_template, v->base.a_workload);
		return -ENOENT;
	}
	r = wb_view_delegated_builder(js, base, wl, &b);
	if (r >= 0)
		r = wb_append_group(b, out, true, v->base.name, v->base.a_template,
				    v->base.a_parent);
	for (i = 0; r >= 0 && i < v->nrjobs; i++) {
		const struct rjob *rj = &v->rjobs[i];
		const json_t *group;
		const char *leaf;
		char *gname = NULL;

		if (delegated_leaf(tmpl, rj, &group, &leaf) < 0) {
			pk_errors_add(
			    errs,
			    "spec.replicatedJobs[%zu].name: Not found: \"%s\": template \"%s\" "
			    "of Workload \"%s\" has no group template for it",
			    i, rj->name, v->base.a_template, v->base.a_workload);
			r = -ENOENT;
			break;
		}
		if (group) {
			gname = wb_strdupf("%s-%s", v->base.name, rj->name);
			r = gname ? wb_append_group(b, out, true, gname, wb_str(group, "name"),
						    v->base.name)
				  : -ENOMEM;
		}
		for (k = 0; r >= 0 && k < rj->replicas; k++) {
			struct job_binding bind = {.workload = v->base.a_workload,
						   .template_name = leaf,
						   .parent = gname ? gname : v->base.name};
			json_t *job = make_job(js, v, rj, k, &bind);

			if (!job || json_array_append_new(out, job) < 0)
				r = -ENOMEM;
		}
		free(gname);
	}
	wb_builder_free(b);
	return r;
}

static const struct wb_controller jobset_controller = {
    .view_size = sizeof(struct jobset_view),
    .parse = jobset_parse,
    .view_clear = view_clear,
    .check = jobset_check,
    .tree = jobset_tree,
    .check_counts = check_counts,
    .materialize = jobset_materialize,
    .reconcile_managed = reconcile_delegated,
    .shared_blocks = true,
};

int wb_jobset_validate(const json_t *jobset, const json_t *old_jobset, struct pk_errors *errs)
{
	int r = wb_controller_validate(&jobset_controller, jobset, old_jobset, errs);

	if (wb_check_admission_annotation(jobset, old_jobset, errs) < 0 && r == 0)
		r = -EINVAL;
	return r;
}

int wb_jobset_reconcile(const json_t *jobset, const struct wb_lookup *lookup, json_t **ret_objects,
			struct pk_errors *errs)
{
	return wb_controller_reconcile(&jobset_controller, jobset, lookup, ret_objects, errs);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * job.c — the batch/v1 Job controller (KEP-6089 "Job integration").
 *
 * A Job's spec.scheduling composes the leaf building blocks
 * (schedulingPolicy, schedulingConstraints, disruptionMode, resourceClaims).
 * The controller maps it onto a single-leaf item whose default is the basic
 * policy (a Job without the block schedules pod by pod, as it always did) and
 * whose callback defaults an omitted gang minCount to the Job's parallelism,
 * clamped to at least 1.  It then works in one of three modes:
 *
 *  - standalone: it compiles and creates the Workload, the PodGroup and pods;
 *  - bound by a parent (JobSet) through spec.template.spec.schedulingGroup:
 *    only pods, the parent made the groups;
 *  - delegated through the downward annotations: it materializes its PodGroup
 *    from the named template of the named Workload under the named parent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"
#include "topology/topology.h"

#define JOB_TEMPLATE_NAME "job"
#define ROOT_PATH "spec.scheduling"

enum job_mode { JOB_STANDALONE, JOB_BOUND, JOB_DELEGATED };

struct job_view {
	const char *name, *namespace;
	const json_t *spec, *scheduling;
	int64_t parallelism, completions, pods;
	const char *bound_group;
	const char *a_workload, *a_template, *a_parent;
	const char *priority_class;
	enum job_mode mode;
};

static const char *const scheduling_fields[] = {"schedulingPolicy", "schedulingConstraints",
						"disruptionMode", "resourceClaims", NULL};

static int check_annotations(const json_t *job, struct job_view *v, struct pk_errors *errs)
{
	int r = 0;

	v->a_workload = wb_annotation(job, WB_ANNOTATION_WORKLOAD);
	v->a_template = wb_annotation(job, WB_ANNOTATION_TEMPLATE);
	v->a_parent = wb_annotation(job, WB_ANNOTATION_PARENT);
	if (v->a_template && !v->a_workload) {
		pk_errors_add(errs,
			      "metadata.annotations[" WB_ANNOTATION_WORKLOAD "]: Required value: "
			      "required with " WB_ANNOTATION_TEMPLATE);
		r = -EINVAL;
	}
	if ((v->a_workload || v->a_parent) && !v->a_template) {
		pk_errors_add(errs,
			      "metadata.annotations[" WB_ANNOTATION_TEMPLATE "]: Required value: "
			      "required with %s",
			      v->a_workload ? WB_ANNOTATION_WORKLOAD : WB_ANNOTATION_PARENT);
		r = -EINVAL;
	}
	return r;
}

static int job_parse(const json_t *job, struct job_view *v, struct pk_errors *errs)
{
	const json_t *tmpl;
	json_t *suspend;
	int r = 0;

	memset(v, 0, sizeof(*v));
	if (pk_kind_of(job) != PK_KIND_JOB) {
		pk_errors_add(errs, "kind: Invalid value: \"%s\": expected batch/v1 Job",
			      wb_str(job, "kind") ? wb_str(job, "kind") : "");
		return -EINVAL;
	}
	v->name = pk_name(job);
	v->namespace = pk_namespace(job);
	if (!v->name || !*v->name) {
		pk_errors_add(errs, "metadata.name: Required value");
		r = -EINVAL;
	} else if (strlen(v->name) > 63 || !topo_dns_subdomain_valid(v->name)) {
		pk_errors_add(errs,
			      "metadata.name: Invalid value: \"%.80s\": must be a DNS subdomain "
			      "of at most 63 characters (it becomes a label value)",
			      v->name);
		r = -EINVAL;
	}
	v->spec = wb_obj(job, "spec");
	if (!v->spec) {
		pk_errors_add(errs, "spec: Required value");
		return -EINVAL;
	}
	if (wb_get_int(v->spec, "parallelism", "spec", 1, 0, WB_MAX_PODS, &v->parallelism, errs) <
	    0)
		r = -EINVAL;
	if (wb_get_int(v->spec, "completions", "spec", -1, 0, INT32_MAX, &v->completions, errs) < 0)
		r = -EINVAL;
	suspend = json_object_get(v->spec, "suspend");
	if (suspend && !json_is_boolean(suspend) && !json_is_null(suspend)) {
		pk_errors_add(errs, "spec.suspend: Invalid value: must be a boolean");
		r = -EINVAL;
	}
	/*
	 * Indexes 0..pods-1 exist: parallelism of them beyond those that
	 * succeeded (status.succeeded), never past completions.
	 */
	v->pods = json_is_true(suspend) ? 0 : v->parallelism;
	if (v->completions >= 0) {
		json_t *done = pk_get(job, "status.succeeded");
		int64_t s = json_is_integer(done) ? json_integer_value(done) : 0;

		if (s > 0 && s < v->completions && v->pods > 0)
			v->pods += s;
		if (v->completions < v->pods)
			v->pods = v->completions;
	}
	tmpl = wb_obj(v->spec, "template");
	if (!tmpl) {
		pk_errors_add(errs, "spec.template: Required value");
		r = -EINVAL;
	}
	v->bound_group = wb_str(wb_obj(wb_obj(tmpl, "spec"), "schedulingGroup"), "podGroupName");
	v->priority_class = wb_str(wb_obj(tmpl, "spec"), "priorityClassName");
	v->scheduling = json_object_get(v->spec, "scheduling");
	if (json_is_null(v->scheduling))
		v->scheduling = NULL;
	if (v->scheduling && !json_is_object(v->scheduling)) {
		pk_errors_add(errs, ROOT_PATH ": Invalid value: must be an object");
		r = -EINVAL;
		v->scheduling = NULL;
	}
	if (v->scheduling &&
	    wb_check_known_fields(v->scheduling, ROOT_PATH, scheduling_fields, errs) < 0)
		r = -EINVAL;
	if (check_annotations(job, v, errs) < 0)
		r = -EINVAL;
	v->mode = v->a_template ? JOB_DELEGATED : v->bound_group ? JOB_BOUND : JOB_STANDALONE;
	if (v->a_template && v->bound_group) {
		pk_errors_add(errs, "spec.template.spec.schedulingGroup: Forbidden: the group is "
				    "delegated through the " WB_ANNOTATION_TEMPLATE " annotation");
		r = -EINVAL;
	}
	if (v->scheduling && v->mode != JOB_STANDALONE) {
		pk_errors_add(errs,
			      ROOT_PATH ": Forbidden: scheduling of this Job is managed by %s",
			      v->mode == JOB_DELEGATED ? "its parent (" WB_ANNOTATION_TEMPLATE ")"
						       : "the group its pod template is bound to");
		r = -EINVAL;
	}
	return r;
}

static void default_min_count(struct wb_config *cfg, void *userdata)
{
	const int64_t *parallelism = userdata;

	if (cfg->policy != WB_POLICY_GANG || cfg->has_min_count)
		return;
	cfg->has_min_count = true;
	cfg->min_count = *parallelism < 1 ? 1 : (int32_t)*parallelism;
}

static int job_item(const struct job_view *v, struct wb_item **ret)
{
	static const enum wb_block blocks[] = {WB_BLOCK_POLICY, WB_BLOCK_CONSTRAINTS,
					       WB_BLOCK_DISRUPTION, WB_BLOCK_CLAIMS};
	struct wb_item *item;
	size_t i;
	int r;

	r = wb_item_new(JOB_TEMPLATE_NAME, &item);
	if (r < 0)
		return r;
	item->defaults.policy = WB_POLICY_BASIC;
	r = wb_config_set_priority_class(&item->defaults, v->priority_class);
	for (i = 0; r >= 0 && i < sizeof(blocks) / sizeof(blocks[0]); i++)
		r = wb_item_set_input(item, blocks[i],
				      json_object_get(v->scheduling, wb_block_name(blocks[i])),
				      wb_block_name(blocks[i]));
	if (r >= 0)
		r = wb_item_add_callback(item, default_min_count, (void *)&v->parallelism);
	if (r < 0) {
		wb_item_free(item);
		return r;
	}
	*ret = item;
	return 0;
}

static int job_builder(const json_t *job, const struct job_view *v, struct wb_item *item,
		       struct wb_builder **ret)
{
	struct wb_options opts = {
	    .name = v->name,
	    .namespace = v->namespace,
	    .allowed_policies = WB_ALLOW_BASIC | WB_ALLOW_GANG,
	    .allowed_disruption_modes = WB_ALLOW_SINGLE | WB_ALLOW_ALL,
	};

	wb_owner_of(job, &opts.owner);
	return wb_builder_new(item, &opts, ret);
}

const struct pk_admission wb_admission[WB_ADMISSION_N] = {
    {PK_KIND_JOB, "workloadbuilder: Job", wb_job_validate},
    {PK_KIND_JOBSET, "workloadbuilder: JobSet", wb_jobset_validate},
};

int wb_job_validate(const json_t *job, const json_t *old_job, struct pk_errors *errs)
{
	struct job_view v, ov;
	struct wb_item *item = NULL, *old_item = NULL;
	struct wb_builder *b = NULL;
	struct pk_errors ignore = {0};
	int r;

	r = job_parse(job, &v, errs);
	if (r < 0 || v.mode != JOB_STANDALONE)
		return r;
	if (old_job && job_parse(old_job, &ov, &ignore) == 0 && ov.mode == JOB_STANDALONE &&
	    job_item(&ov, &old_item) < 0) {
		r = -ENOMEM;
		goto out;
	}
	r = job_item(&v, &item);
	if (r >= 0)
		r = job_builder(job, &v, item, &b);
	if (r >= 0)
		r = wb_builder_validate(b, ROOT_PATH, old_item, errs);
	if (r >= 0 || r == -EINVAL) {
		int k =
		    wb_check_count_limit(item, ROOT_PATH, v.parallelism, "spec.parallelism", errs);

		if (k < 0)
			r = k;
	}
out:
	pk_errors_clear(&ignore);
	wb_builder_free(b);
	wb_item_free(item);
	wb_item_free(old_item);
	return r;
}

static int reconcile_standalone(const json_t *job, const struct job_view *v, json_t *out,
				struct pk_errors *errs)
{
	struct wb_item *item = NULL;
	struct wb_builder *b = NULL;
	json_t *w = NULL, *pg = NULL;
	struct wb_owner owner;
	int r;

	r = job_item(v, &item);
	if (r >= 0)
		r = job_builder(job, v, item, &b);
	if (r >= 0)
		r = wb_builder_build_workload(b, ROOT_PATH, &w, errs);
	if (r >= 0 && json_array_append_new(out, w) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = wb_builder_new_pod_group(b, v->name, JOB_TEMPLATE_NAME, NULL, &pg);
	if (r >= 0 && json_array_append_new(out, pg) < 0)
		r = -ENOMEM;
	wb_owner_of(job, &owner);
	if (r >= 0)
		r = wb_stamp_pods(job, v->name, v->namespace, v->pods, v->name, &owner, out);
	wb_builder_free(b);
	wb_item_free(item);
	return r;
}

static int reconcile_delegated(const json_t *job, const struct job_view *v,
			       const struct wb_lookup *lookup, json_t *out, struct pk_errors *errs)
{
	struct wb_options opts = {.namespace = v->namespace};
	struct wb_builder *b = NULL;
	json_t *wl = NULL, *pg = NULL;
	int r;

	if (lookup && lookup->fn)
		wl = lookup->fn(lookup->userdata, PK_KIND_WORKLOAD, v->namespace, v->a_workload);
	if (!wl) {
		pk_errors_add(
		    errs, "metadata.annotations[" WB_ANNOTATION_WORKLOAD "]: Not found: \"%.253s\"",
		    v->a_workload);
		return -ENOENT;
	}
	wb_owner_of(job, &opts.owner);
	r = wb_builder_from_workload(wl, &opts, &b);
	if (r >= 0)
		r = wb_builder_new_pod_group(b, v->name, v->a_template, v->a_parent, &pg);
	if (r == -ENOENT)
		pk_errors_add(errs,
			      "metadata.annotations[" WB_ANNOTATION_TEMPLATE
			      "]: Not found: \"%.63s\": "
			      "Workload \"%.253s\" has no PodGroupTemplate of that name",
			      v->a_template, v->a_workload);
	if (r >= 0 && json_array_append_new(out, pg) < 0)
		r = -ENOMEM;
	if (r >= 0)
		r = wb_stamp_pods(job, v->name, v->namespace, v->pods, v->name, &opts.owner, out);
	wb_builder_free(b);
	return r;
}

int wb_job_reconcile(const json_t *job, const struct wb_lookup *lookup, json_t **ret_objects,
		     struct pk_errors *errs)
{
	struct job_view v;
	struct wb_owner owner;
	json_t *out;
	int r;

	if (!job || !ret_objects)
		return -EINVAL;
	r = wb_job_validate(job, NULL, errs);
	if (r < 0)
		return r;
	r = job_parse(job, &v, errs);
	if (r < 0)
		return r;
	out = json_array();
	if (!out)
		return -ENOMEM;
	switch (v.mode) {
	case JOB_STANDALONE:
		r = reconcile_standalone(job, &v, out, errs);
		break;
	case JOB_DELEGATED:
		r = reconcile_delegated(job, &v, lookup, out, errs);
		break;
	case JOB_BOUND:
		wb_owner_of(job, &owner);
		r = wb_stamp_pods(job, v.name, v.namespace, v.pods, NULL, &owner, out);
		break;
	}
	if (r < 0) {
		json_decref(out);
		return r;
	}
	*ret_objects = out;
	return 0;
}

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

enum job_mode { JOB_STANDALONE, JOB_BOUND, JOB_DELEGATED };

struct job_view {
	struct wb_view base; /* first: the shared skeleton passes &base */
	const json_t *spec;
	int64_t parallelism, completions, pods;
	const char *bound_group;
	enum job_mode mode;
};

static const struct job_view *job_view_of(const struct wb_view *base)
{
	return (const struct job_view *)base;
}

static int check_annotations(const json_t *job, struct wb_view *v, struct pk_errors *errs)
{
	int r = 0;

	wb_view_read_downward(job, v);
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

/* The counts: parallelism, completions, suspend and the pods that exist. */
static int parse_counts(const json_t *job, struct job_view *v, struct pk_errors *errs)
{
	json_t *suspend;
	int r = 0;

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
	v->pods = wb_suspended(job) ? 0 : v->parallelism;
	if (v->completions >= 0) {
		json_t *done = pk_get(job, "status.succeeded");
		int64_t s = json_is_integer(done) ? json_integer_value(done) : 0;

		if (s > 0 && s < v->completions && v->pods > 0)
			v->pods += s;
		if (v->completions < v->pods)
			v->pods = v->completions;
	}
	return r;
}

/* Standalone, bound by a parent or delegated; scheduling only when standalone. */
static int parse_mode(const json_t *job, struct job_view *v, struct pk_errors *errs)
{
	int r = 0;

	if (check_annotations(job, &v->base, errs) < 0)
		r = -EINVAL;
	v->mode = v->base.a_template ? JOB_DELEGATED : v->bound_group ? JOB_BOUND : JOB_STANDALONE;
	v->base.compiles = v->mode == JOB_STANDALONE;
	if (v->base.a_template && v->bound_group) {
		pk_errors_add(errs, "spec.template.spec.schedulingGroup: Forbidden: the group is "
				    "delegated through the " WB_ANNOTATION_TEMPLATE " annotation");
		r = -EINVAL;
	}
	if (v->base.scheduling && v->mode != JOB_STANDALONE) {
		pk_errors_add(
		    errs, WB_SCHEDULING_PATH ": Forbidden: scheduling of this Job is managed by %s",
		    v->mode == JOB_DELEGATED ? "its parent (" WB_ANNOTATION_TEMPLATE ")"
					     : "the group its pod template is bound to");
		r = -EINVAL;
	}
	return r;
}

/* The name becomes the value of the pods' job-name label. */
static bool name_valid(const char *name)
{
	return strlen(name) <= 63 && topo_dns_subdomain_valid(name);
}

static int job_parse(const json_t *job, struct wb_view *base, struct pk_errors *errs)
{
	struct job_view *v = (struct job_view *)base;
	const json_t *tmpl;
	int r = 0;

	if (wb_view_check_kind(job, PK_KIND_JOB, "batch/v1 Job", errs) < 0)
		return -EINVAL;
	if (wb_view_parse_name(
		job, base, name_valid,
		"a DNS subdomain of at most 63 characters (it becomes a label value)", errs) < 0)
		r = -EINVAL;
	v->spec = wb_obj(job, "spec");
	if (!v->spec) {
		pk_errors_add(errs, "spec: Required value");
		return -EINVAL;
	}
	if (parse_counts(job, v, errs) < 0)
		r = -EINVAL;
	tmpl = wb_obj(v->spec, "template");
	if (!tmpl) {
		pk_errors_add(errs, "spec.template: Required value");
		r = -EINVAL;
	}
	v->bound_group = wb_str(wb_obj(wb_obj(tmpl, "spec"), "schedulingGroup"), "podGroupName");
	base->priority_class = wb_str(wb_obj(tmpl, "spec"), "priorityClassName");
	if (wb_view_parse_scheduling(base, v->spec, wb_block_fields, errs) < 0)
		r = -EINVAL;
	if (parse_mode(job, v, errs) < 0)
		r = -EINVAL;
	return r;
}

/* One leaf whose gang count defaults to the Job's parallelism. */
static int job_item(const struct wb_view *base, struct wb_item **ret)
{
	return wb_view_root_item(base, JOB_TEMPLATE_NAME, &job_view_of(base)->parallelism, ret);
}

static int job_check_counts(const struct wb_view *base, const struct wb_item *item,
			    struct pk_errors *errs)
{
	return wb_check_count_limit(item, WB_SCHEDULING_PATH, job_view_of(base)->parallelism,
				    "spec.parallelism", errs);
}

/* Standalone: the PodGroup after the Workload, then the pods bound to it. */
static int job_materialize(const json_t *job, const struct wb_view *base, struct wb_builder *b,
			   json_t *out)
{
	struct wb_owner owner;
	int r;

	r = wb_append_group(b, out, false, base->name, JOB_TEMPLATE_NAME, NULL);
	wb_owner_of(job, &owner);
	if (r >= 0)
		r = wb_stamp_pods(job, base->name, base->namespace, job_view_of(base)->pods,
				  base->name, &owner, out);
	return r;
}

static int reconcile_delegated(const json_t *job, const struct wb_view *v,
			       const struct wb_lookup *lookup, json_t *out, struct pk_errors *errs)
{
	struct wb_builder *b = NULL;
	const json_t *wl;
	struct wb_owner owner;
	int r;

	wl = wb_view_workload(v, lookup, errs);
	if (!wl)
		return -ENOENT;
	r = wb_view_delegated_builder(job, v, wl, &b);
	if (r >= 0)
		r = wb_append_group(b, out, false, v->name, v->a_template, v->a_parent);
	if (r == -ENOENT)
		pk_errors_add(errs,
			      "metadata.annotations[" WB_ANNOTATION_TEMPLATE
			      "]: Not found: \"%.63s\": "
			      "Workload \"%.253s\" has no PodGroupTemplate of that name",
			      v->a_template, v->a_workload);
	wb_owner_of(job, &owner);
	if (r >= 0)
		r = wb_stamp_pods(job, v->name, v->namespace, job_view_of(v)->pods, v->name, &owner,
				  out);
	wb_builder_free(b);
	return r;
}

/* Delegated: the PodGroup from the parent's Workload; bound: only the pods. */
static int job_reconcile_managed(const json_t *job, const struct wb_view *v,
				 const struct wb_lookup *lookup, json_t *out,
				 struct pk_errors *errs)
{
	struct wb_owner owner;

	if (job_view_of(v)->mode == JOB_DELEGATED)
		return reconcile_delegated(job, v, lookup, out, errs);
	wb_owner_of(job, &owner);
	return wb_stamp_pods(job, v->name, v->namespace, job_view_of(v)->pods, NULL, &owner, out);
}

/* A Job's view owns nothing, its blocks feed one group and nothing else is checked. */
static const struct wb_controller job_controller = {.parse = job_parse,
						    .tree = job_item,
						    .check_counts = job_check_counts,
						    .materialize = job_materialize,
						    .reconcile_managed = job_reconcile_managed,
						    .view_size = sizeof(struct job_view)};

const struct pk_admission wb_admission[WB_ADMISSION_N] = {
    {PK_KIND_JOB, "workloadbuilder: Job", wb_job_validate, wb_check_queue_user_update},
    {PK_KIND_JOBSET, "workloadbuilder: JobSet", wb_jobset_validate, wb_check_queue_user_update},
    {PK_KIND_LEADER_WORKER_SET, "workloadbuilder: LeaderWorkerSet", wb_lws_validate, NULL},
};

int wb_job_validate(const json_t *job, const json_t *old_job, struct pk_errors *errs)
{
	int r = wb_controller_validate(&job_controller, job, old_job, errs);

	if (wb_check_admission_annotation(job, old_job, errs) < 0 && r == 0)
		r = -EINVAL;
	return r;
}

int wb_job_reconcile(const json_t *job, const struct wb_lookup *lookup, json_t **ret_objects,
		     struct pk_errors *errs)
{
	return wb_controller_reconcile(&job_controller, job, lookup, ret_objects, errs);
}

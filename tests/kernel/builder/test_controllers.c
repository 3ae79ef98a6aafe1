/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_controllers.c — the Job and JobSet controllers: the KEP-6089 examples
 * (examples/jobs) compiled to the expected objects in
 * tests/kernel/builder/expected (compared structurally), validation with
 * field paths (allow-lists, split brain, targets, updates), defaults of the
 * targeted-policies model, the delegated TrainJob -> JobSet -> Job chain
 * driven by the downward annotations, and pk_validate on everything emitted.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"

#define SRC PODKERNEL_SRCDIR

static json_t *yaml(const char *text)
{
	char err[256] = "";
	json_t *objs = NULL;

	ck_assert_msg(pk_read_buffer("test", text, strlen(text), &objs, err, sizeof(err)) == 0,
		      "bad test YAML: %s", err);
	return objs;
}

static const char *wb_annotation_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(pk_get(o, "metadata.annotations"), key));
}

static json_t *first(json_t *objs)
{
	json_t *o = json_incref(json_array_get(objs, 0));

	json_decref(objs);
	return o;
}

static json_t *obj(const char *text)
{
	return first(yaml(text));
}

static bool errors_have(const struct pk_errors *errs, const char *needle)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		if (strstr(errs->msg[i], needle))
			return true;
	for (i = 0; i < errs->n; i++)
		fprintf(stderr, "  got: %s\n", errs->msg[i]);
	if (!errs->n)
		fprintf(stderr, "  got no errors\n");
	return false;
}

/* Expand the objects; ck-fails on errors. */
static json_t *expand(json_t *objs)
{
	struct pk_errors errs = {0};
	json_t *out = NULL;
	int r = wb_expand_objects(objs, &out, &errs);

	ck_assert_msg(r == 0, "expand failed (%d): %s", r, errs.n ? errs.msg[0] : "(no message)");
	ck_assert_uint_eq(errs.n, 0);
	pk_errors_clear(&errs);
	return out;
}

static json_t *by_name(const json_t *objs, const char *kind, const char *name)
{
	json_t *o;
	size_t i;

	json_array_foreach(
	    objs, i, o) if (strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0 &&
			    strcmp(pk_name(o), name) == 0) return o;
	ck_abort_msg("no %s %s", kind, name);
	return NULL;
}

static size_t count_kind(const json_t *objs, const char *kind)
{
	json_t *o;
	size_t i, n = 0;

	json_array_foreach(
	    objs, i, o) if (strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0) n++;
	return n;
}

static void all_pass_pk_validate(const json_t *objs)
{
	json_t *o;
	size_t i;

	json_array_foreach(objs, i, o)
	{
		struct pk_errors errs = {0};

		if (pk_validate(o, &errs) < 0)
			ck_abort_msg("%s %s fails pk_validate: %s",
				     json_string_value(json_object_get(o, "kind")), pk_name(o),
				     errs.n ? errs.msg[0] : "?");
		pk_errors_clear(&errs);
	}
}

static void check_example(const char *name)
{
	char path[512], err[256] = "";
	json_t *objs = NULL, *out, *want, *got;
	json_error_t je;
	size_t i;

	snprintf(path, sizeof(path), SRC "/examples/jobs/%s.yaml", name);
	ck_assert_msg(pk_read_file(path, &objs, err, sizeof(err)) == 0, "%s: %s", path, err);
	out = expand(objs);
	snprintf(path, sizeof(path), SRC "/tests/kernel/builder/expected/%s.json", name);
	want = json_load_file(path, 0, &je);
	ck_assert_msg(want != NULL, "%s: %s", path, je.text);
	got = json_object_get(want, "items");
	ck_assert_uint_eq(json_array_size(out), json_array_size(got));
	for (i = 0; i < json_array_size(out); i++)
		if (!json_equal(json_array_get(out, i), json_array_get(got, i))) {
			char *g = json_dumps(json_array_get(out, i), JSON_SORT_KEYS | JSON_COMPACT);

			ck_abort_msg("%s: item %zu differs from the expected file: %s", name, i, g);
		}
	all_pass_pk_validate(out);
	json_decref(want);
	json_decref(out);
	json_decref(objs);
}

START_TEST(kep_job_example_gang_zone_all)
{
	check_example("job-gang-zone");
}
END_TEST

START_TEST(kep_job_example_backward_compatible_basic)
{
	check_example("job-basic");
}
END_TEST

START_TEST(kep_jobset_example_targeted_policies)
{
	check_example("jobset-distributed-training");
}
END_TEST

START_TEST(delegated_example_file)
{
	check_example("trainjob-delegated");
}
END_TEST

static const char job_head[] =
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n"
    "spec:\n  parallelism: 3\n  template: {spec: {containers: [{name: c}]}}\n";

static json_t *job_with(const char *scheduling)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "%s  scheduling: %s\n", job_head, scheduling);
	return obj(buf);
}

static void job_rejects(const char *scheduling, const char *want)
{
	struct pk_errors errs = {0};
	json_t *job = job_with(scheduling), *out = NULL;

	ck_assert_int_eq(wb_job_validate(job, NULL, &errs), -EINVAL);
	ck_assert_msg(errors_have(&errs, want), "want %s", want);
	pk_errors_clear(&errs);
	ck_assert_int_eq(wb_job_reconcile(job, NULL, &out, &errs), -EINVAL);
	ck_assert_ptr_null(out);
	pk_errors_clear(&errs);
	json_decref(job);
}

START_TEST(job_validation_errors_carry_field_paths)
{
	job_rejects("{schedulingPolicy: {gang: {minCount: 0}}}",
		    "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be "
		    "greater than or equal to 1");
	job_rejects("{disruptionMode: {all: {}}}",
		    "spec.scheduling.disruptionMode: Invalid value: \"all\": the `all` disruption "
		    "mode requires the gang scheduling policy");
	job_rejects("{schedulingConstraints: {topology: [{key: a}, {key: b}]}}",
		    "spec.scheduling.schedulingConstraints.topology: Too many: 2");
	job_rejects(
	    "{resourceClaims: [{name: x, resourceClaimName: a, resourceClaimTemplateName: b}]}",
	    "spec.scheduling.resourceClaims[0]: Invalid value: both set");
	job_rejects("{gang: {}}", "spec.scheduling.gang: Forbidden: unknown field");
	job_rejects("{schedulingPolicy: {gang: {minCount: 4}}}",
		    "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 4: must be "
		    "less than or equal to spec.parallelism (3)");
	job_rejects("[]", "spec.scheduling: Invalid value: must be an object");
}
END_TEST

START_TEST(job_allow_list_rejects_policies_it_did_not_opt_into)
{
	job_rejects("{schedulingPolicy: {fairShare: {}}}",
		    "spec.scheduling.schedulingPolicy: Unsupported value: \"fairShare\": supported "
		    "values: \"basic\", \"gang\"");
	job_rejects("{schedulingPolicy: {gang: {}}, disruptionMode: {some: {}}}",
		    "spec.scheduling.disruptionMode: Unsupported value: \"some\": supported "
		    "values: \"single\", \"all\"");
}
END_TEST

START_TEST(job_gang_defaults_to_parallelism_and_clamps)
{
	struct pk_errors errs = {0};
	json_t *job = job_with("{schedulingPolicy: {gang: {}}}"), *out = NULL, *pg;
	size_t i;

	ck_assert_int_eq(wb_job_reconcile(job, NULL, &out, &errs), 0);
	pg = by_name(out, "PodGroup", "j");
	ck_assert_int_eq(json_integer_value(pk_get(pg, "spec.schedulingPolicy.gang.minCount")), 3);
	ck_assert_uint_eq(count_kind(out, "Pod"), 3);
	ck_assert_str_eq(
	    pk_get_string(by_name(out, "Pod", "j-2"), "spec.schedulingGroup.podGroupName"), "j");
	json_decref(out);
	json_decref(job);
	/* pods come in index order and share the Job's creationTimestamp, if any */
	job = obj("apiVersion: batch/v1\nkind: Job\n"
		  "metadata: {name: t, creationTimestamp: \"2026-01-02T03:04:05Z\"}\n"
		  "spec: {parallelism: 12, template: {spec: {containers: [{name: c}]}}}\n");
	ck_assert_int_eq(wb_job_reconcile(job, NULL, &out, &errs), 0);
	ck_assert_uint_eq(json_array_size(out), 14);
	for (i = 0; i < 12; i++) {
		char name[16];

		snprintf(name, sizeof(name), "t-%zu", i);
		ck_assert_str_eq(pk_name(json_array_get(out, 2 + i)), name);
		ck_assert_str_eq(
		    pk_get_string(json_array_get(out, 2 + i), "metadata.creationTimestamp"),
		    "2026-01-02T03:04:05Z");
	}
	json_decref(out);
	json_decref(job);
	/* suspended with parallelism 0: no pods, minCount 1 */
	job =
	    obj("apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\n"
		"spec: {parallelism: 0, suspend: true, scheduling: {schedulingPolicy: {gang: {}}},"
		" template: {spec: {containers: [{name: c}]}}}\n");
	ck_assert_int_eq(wb_job_reconcile(job, NULL, &out, &errs), 0);
	ck_assert_uint_eq(count_kind(out, "Pod"), 0);
	ck_assert_int_eq(json_integer_value(pk_get(by_name(out, "PodGroup", "s"),
						   "spec.schedulingPolicy.gang.minCount")),
			 1);
	ck_assert_uint_eq(errs.n, 0);
	json_decref(out);
	json_decref(job);
}
END_TEST

START_TEST(job_update_rules)
{
	struct pk_errors errs = {0};
	json_t *old = job_with("{schedulingPolicy: {gang: {minCount: 3}}, schedulingConstraints: "
			       "{topology: [{key: zone}]}}");
	json_t *scaled = job_with("{schedulingPolicy: {gang: {minCount: 2}}, "
				  "schedulingConstraints: {topology: [{key: zone}]}}");
	json_t *basic = job_with(
	    "{schedulingPolicy: {basic: {}}, schedulingConstraints: {topology: [{key: zone}]}}");
	json_t *moved = job_with("{schedulingPolicy: {gang: {minCount: 3}}, schedulingConstraints: "
				 "{topology: [{key: rack}]}}");

	ck_assert_int_eq(wb_job_validate(scaled, old, &errs), 0);
	ck_assert_int_eq(wb_job_validate(basic, old, &errs), -EINVAL);
	ck_assert(errors_have(
	    &errs,
	    "spec.scheduling.schedulingPolicy: Invalid value: \"basic\": field is immutable"));
	pk_errors_clear(&errs);
	ck_assert_int_eq(wb_job_validate(moved, old, &errs), -EINVAL);
	ck_assert(errors_have(&errs, "spec.scheduling.schedulingConstraints: Invalid value: "
				     "{\"topology\":[{\"key\":\"rack\"}]}: field is immutable"));
	pk_errors_clear(&errs);
	json_decref(old);
	json_decref(scaled);
	json_decref(basic);
	json_decref(moved);
}
END_TEST

START_TEST(job_bound_by_a_parent_only_creates_pods)
{
	struct pk_errors errs = {0};
	json_t *job =
	    obj("apiVersion: batch/v1\nkind: Job\nmetadata: {name: b, namespace: x, uid: u1}\n"
		"spec: {parallelism: 2, completionMode: Indexed, template: {spec: "
		"{schedulingGroup: {podGroupName: pg}}}}\n");
	json_t *out = NULL, *pod;

	ck_assert_int_eq(wb_job_reconcile(job, NULL, &out, &errs), 0);
	ck_assert_uint_eq(json_array_size(out), 2);
	pod = by_name(out, "Pod", "b-1");
	ck_assert_str_eq(pk_get_string(pod, "spec.schedulingGroup.podGroupName"), "pg");
	ck_assert_str_eq(pk_get_string(pod, "metadata.namespace"), "x");
	ck_assert_str_eq(
	    json_string_value(json_object_get(pk_get(pod, "metadata.labels"),
					      "batch.kubernetes.io/job-completion-index")),
	    "1");
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(pk_get(pod, "metadata.ownerReferences"), 0), "uid")),
			 "u1");
	json_decref(out);
	json_decref(job);
	/* and refuses a scheduling block of its own */
	job = obj("apiVersion: batch/v1\nkind: Job\nmetadata: {name: b}\n"
		  "spec: {scheduling: {schedulingPolicy: {gang: {}}}, template: {spec: "
		  "{schedulingGroup: {podGroupName: pg}}}}\n");
	ck_assert_int_eq(wb_job_reconcile(job, NULL, &out, &errs), -EINVAL);
	ck_assert(errors_have(&errs, "spec.scheduling: Forbidden"));
	pk_errors_clear(&errs);
	json_decref(job);
}
END_TEST

static const char jobset_tail[] =
    "  replicatedJobs:\n"
    "  - name: driver\n"
    "    template: {spec: {parallelism: 1, template: {spec: {containers: [{name: d}]}}}}\n"
    "  - name: worker\n"
    "    replicas: 3\n"
    "    template: {spec: {parallelism: 2, template: {spec: {containers: [{name: w}]}}}}\n";

static json_t *jobset_with(const char *scheduling)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n"
		 "  scheduling: %s\n%s",
		 scheduling, jobset_tail);
	return obj(buf);
}

static void jobset_rejects(json_t *js, const json_t *old, const char *want)
{
	struct pk_errors errs = {0};

	ck_assert_int_eq(wb_jobset_validate(js, old, &errs), -EINVAL);
	ck_assert_msg(errors_have(&errs, want), "want %s", want);
	pk_errors_clear(&errs);
	json_decref(js);
}

START_TEST(jobset_gang_defaults_and_inheritance)
{
	struct pk_errors errs = {0};
	json_t *js = jobset_with("{schedulingPolicy: {gang: {}}, disruptionMode: {all: {}}}");
	json_t *out = NULL, *w, *o;
	size_t i;

	ck_assert_int_eq(wb_jobset_reconcile(js, NULL, &out, &errs), 0);
	w = by_name(out, "Workload", "js");
	/* root: one child group per replicated job */
	ck_assert_int_eq(json_integer_value(pk_get(by_name(out, "CompositePodGroup", "js"),
						   "spec.schedulingPolicy.gang.minGroupCount")),
			 2);
	/* replicated job: its replicas; levels inherit gang and all */
	ck_assert_int_eq(json_integer_value(pk_get(by_name(out, "CompositePodGroup", "js-worker"),
						   "spec.schedulingPolicy.gang.minGroupCount")),
			 3);
	ck_assert_ptr_nonnull(
	    pk_get(by_name(out, "CompositePodGroup", "js-worker"), "spec.disruptionMode.all"));
	/* replica: the Job's parallelism */
	o = by_name(out, "PodGroup", "js-worker-2");
	ck_assert_int_eq(json_integer_value(pk_get(o, "spec.schedulingPolicy.gang.minCount")), 2);
	ck_assert_ptr_nonnull(pk_get(o, "spec.disruptionMode.all"));
	ck_assert_str_eq(pk_get_string(o, "spec.parentCompositePodGroupName"), "js-worker");
	/* Jobs bound to their groups, owned by the JobSet */
	o = by_name(out, "Job", "js-worker-1");
	ck_assert_str_eq(pk_get_string(o, "spec.template.spec.schedulingGroup.podGroupName"),
			 "js-worker-1");
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(pk_get(o, "metadata.ownerReferences"), 0), "kind")),
			 "JobSet");
	ck_assert_uint_eq(count_kind(out, "Job"), 4);
	ck_assert_uint_eq(count_kind(out, "PodGroup"), 4);
	ck_assert_uint_eq(count_kind(out, "CompositePodGroup"), 3);
	ck_assert_uint_eq(count_kind(out, "Workload"), 1);
	ck_assert_ptr_nonnull(w);
	json_array_foreach(out, i, o) ck_assert_ptr_nonnull(pk_get(o, "metadata.ownerReferences"));
	json_decref(out);
	/* through expand the Jobs become pods */
	w = json_pack("[O]", js);
	out = expand(w);
	json_decref(w);
	ck_assert_uint_eq(count_kind(out, "Job"), 0);
	ck_assert_uint_eq(count_kind(out, "Pod"), 1 + 3 * 2);
	ck_assert_str_eq(pk_get_string(by_name(out, "Pod", "js-worker-2-1"),
				       "spec.schedulingGroup.podGroupName"),
			 "js-worker-2");
	all_pass_pk_validate(out);
	json_decref(out);
	json_decref(js);
}
END_TEST

START_TEST(jobset_validation)
{
	json_t *old;

	jobset_rejects(
	    jobset_with("{replicatedJobs: [{targetReplicatedJobs: [wrker]}]}"), NULL,
	    "spec.scheduling.replicatedJobs[0].targetReplicatedJobs[0]: Not found: \"wrker\"");
	jobset_rejects(jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker]}, "
				   "{targetReplicatedJobs: [driver, worker]}]}"),
		       NULL,
		       "spec.scheduling.replicatedJobs[1].targetReplicatedJobs[1]: Duplicate "
		       "value: \"worker\"");
	jobset_rejects(jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], job: "
				   "{schedulingPolicy: {gang: {minCount: 0}}}}]}"),
		       NULL,
		       "spec.scheduling.replicatedJobs[0].job.schedulingPolicy.gang.minCount: "
		       "Invalid value: 0");
	jobset_rejects(
	    jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], schedulingPolicy: "
			"{gang: {minCount: 2}}}]}"),
	    NULL, "spec.scheduling.replicatedJobs[0].schedulingPolicy.gang.minCount: Forbidden");
	jobset_rejects(
	    jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], schedulingPolicy: "
			"{gang: {}}, job: {schedulingPolicy: {basic: {}}}}]}"),
	    NULL,
	    "spec.scheduling.replicatedJobs[0].job.schedulingPolicy: Invalid value: \"basic\": "
	    "must be gang");
	jobset_rejects(
	    jobset_with("{schedulingPolicy: {gang: {}}, disruptionMode: {all: {}}, replicatedJobs: "
			"[{targetReplicatedJobs: [worker], disruptionMode: {single: {}}}]}"),
	    NULL,
	    "spec.scheduling.replicatedJobs[0].disruptionMode: Invalid value: \"single\": must be "
	    "`all`");
	jobset_rejects(jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], job: "
				   "{schedulingPolicy: {fairShare: {}}}}]}"),
		       NULL,
		       "spec.scheduling.replicatedJobs[0].job.schedulingPolicy: Unsupported value: "
		       "\"fairShare\"");
	jobset_rejects(jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], "
				   "schedulingPolicy: {gang: {minGroupCount: 4}}}]}"),
		       NULL,
		       "spec.scheduling.replicatedJobs[0].schedulingPolicy.gang.minGroupCount: "
		       "Invalid value: 4: must be less than or equal to its replicas (3)");
	jobset_rejects(jobset_with("{schedulingPolicy: {gang: {minGroupCount: 3}}}"), NULL,
		       "spec.scheduling.schedulingPolicy.gang.minGroupCount: Invalid value: 3: "
		       "must be less than or equal to the number of replicatedJobs (2)");
	jobset_rejects(jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], job: "
				   "{schedulingPolicy: {gang: {minCount: 3}}}}]}"),
		       NULL,
		       "spec.scheduling.replicatedJobs[0].job.schedulingPolicy.gang.minCount: "
		       "Invalid value: 3: must be less than or equal to the Job's parallelism (2)");
	jobset_rejects(
	    jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], job: {gang: {}}}]}"),
	    NULL, "spec.scheduling.replicatedJobs[0].job.gang: Forbidden: unknown field");
	/* updates: the replica level's constraints are immutable, counts may change */
	old = jobset_with(
	    "{replicatedJobs: [{targetReplicatedJobs: [worker], schedulingPolicy: {gang: "
	    "{minGroupCount: 3}}, job: {schedulingConstraints: {topology: [{key: rack}]}}}]}");
	{
		struct pk_errors errs = {0};
		json_t *js = jobset_with("{replicatedJobs: [{targetReplicatedJobs: [worker], "
					 "schedulingPolicy: {gang: {minGroupCount: 2}}, job: "
					 "{schedulingConstraints: {topology: [{key: rack}]}}}]}");

		ck_assert_int_eq(wb_jobset_validate(js, old, &errs), 0);
		json_decref(js);
	}
	jobset_rejects(
	    jobset_with(
		"{replicatedJobs: [{targetReplicatedJobs: [worker], schedulingPolicy: {gang: "
		"{minGroupCount: 3}}, job: {schedulingConstraints: {topology: [{key: zone}]}}}]}"),
	    old,
	    "spec.scheduling.replicatedJobs[0].job.schedulingConstraints: Invalid value: "
	    "{\"topology\":[{\"key\":\"zone\"}]}: field is immutable");
	json_decref(old);
}
END_TEST

START_TEST(jobset_templates_must_not_carry_scheduling)
{
	jobset_rejects(
	    obj("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n"
		"  replicatedJobs:\n  - name: a\n    template: {spec: {scheduling: "
		"{schedulingPolicy: {gang: {}}},"
		" template: {spec: {containers: [{name: c}]}}}}\n"),
	    NULL, "spec.replicatedJobs[0].template.spec.scheduling: Forbidden");
	jobset_rejects(
	    obj("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n"
		"  replicatedJobs:\n  - name: a\n    template: {spec: {template: {spec: "
		"{schedulingGroup: {podGroupName: x}}}}}\n"),
	    NULL, "spec.replicatedJobs[0].template.spec.template.spec.schedulingGroup: Forbidden");
	jobset_rejects(
	    obj("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n"
		"  replicatedJobs:\n  - name: a\n    template: {metadata: {annotations: "
		"{scheduling.k8s.io/group-template-name: t}},"
		" spec: {template: {spec: {}}}}\n"),
	    NULL,
	    "spec.replicatedJobs[0].template.metadata.annotations[scheduling.k8s.io/"
	    "group-template-name]: Forbidden");
	jobset_rejects(
	    obj("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n"
		"  replicatedJobs:\n  - name: a\n    template: {spec: {template: {spec: "
		"{priorityClassName: hi}}}}\n"
		"  - name: b\n    template: {spec: {template: {spec: {priorityClassName: lo}}}}\n"),
	    NULL,
	    "spec.replicatedJobs[1].template.spec.template.spec.priorityClassName: Invalid value: "
	    "\"lo\": must equal \"hi\"");
}
END_TEST

/* The TrainJob controller's part, played by the test with the library. */
static void trainjob_compiles(json_t *objects)
{
	struct wb_item *root, *trainer, *node, *node_job;
	struct wb_options opts = {
	    .name = "tj",
	    .namespace = "ml",
	    .owner = {"trainer.kubeflow.org/v1alpha1", "TrainJob", "tj", "tj-uid"},
	    .allowed_policies = WB_ALLOW_BASIC | WB_ALLOW_GANG,
	    .allowed_disruption_modes = WB_ALLOW_SINGLE | WB_ALLOW_ALL,
	};
	struct wb_builder *b;
	json_t *w = NULL, *cpg = NULL;

	ck_assert_int_eq(wb_item_new("trainjob", &root), 0);
	ck_assert_int_eq(wb_item_new("trainer", &trainer), 0);
	ck_assert_int_eq(wb_item_new("node", &node), 0);
	ck_assert_int_eq(wb_item_new("node-job", &node_job), 0);
	root->defaults.policy = WB_POLICY_GANG;
	root->defaults.has_min_count = true;
	root->defaults.min_count = 1;
	trainer->defaults = root->defaults;
	node->defaults.policy = WB_POLICY_GANG;
	node->defaults.has_min_count = true;
	node->defaults.min_count = 2;
	node_job->defaults = node->defaults;
	node_job->defaults.min_count = 4;
	ck_assert_int_eq(wb_config_set_topology(&node_job->defaults, "topology.kubernetes.io/rack"),
			 0);
	ck_assert_int_eq(wb_item_add_child(node, node_job), 0);
	ck_assert_int_eq(wb_item_add_child(trainer, node), 0);
	ck_assert_int_eq(wb_item_add_child(root, trainer), 0);
	ck_assert_int_eq(wb_builder_new(root, &opts, &b), 0);
	ck_assert_int_eq(wb_builder_validate(b, "spec", NULL, NULL), 0);
	ck_assert_int_eq(wb_builder_build_workload(b, "spec", &w, NULL), 0);
	ck_assert_int_eq(wb_builder_new_composite_pod_group(b, "tj", "trainjob", NULL, &cpg), 0);
	json_array_append_new(objects, w);
	json_array_append_new(objects, cpg);
	wb_builder_free(b);
	wb_item_free(root);
}

START_TEST(delegated_trainjob_jobset_job_chain)
{
	json_t *objects = json_array(), *out, *o, *js;
	struct pk_errors errs = {0};
	size_t i;

	trainjob_compiles(objects);
	js = obj("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
		 "metadata:\n  name: tj-trainer\n  namespace: ml\n"
		 "spec:\n  replicatedJobs:\n  - name: node\n    replicas: 2\n"
		 "    template: {spec: {parallelism: 4, template: {spec: {containers: [{name: "
		 "t}]}}}}\n");
	/* the TrainJob delegates the subtree "trainer" under its group "tj" */
	ck_assert_int_eq(wb_set_downward_annotations(js, "tj", "trainer", "tj"), 0);
	ck_assert_str_eq(wb_annotation_of(js, "scheduling.k8s.io/parent-compositepodgroup"), "tj");
	json_array_append_new(objects, js);
	out = expand(objects);
	{ /* the TrainJob's objects taken as they are: the JobSet finds its Workload there */
		json_t *from = NULL;

		ck_assert_int_eq(wb_expand_objects_from(objects, 2, &from, &errs), 0);
		ck_assert_uint_eq(errs.n, 0);
		ck_assert(json_equal(from, out));
		ck_assert_ptr_eq(json_array_get(from, 0), json_array_get(objects, 0));
		json_decref(from);
		ck_assert_int_eq(wb_expand_objects_from(objects, 4, &from, &errs), -EINVAL);
	}
	/* one Workload: the TrainJob's; the JobSet compiled none */
	ck_assert_uint_eq(count_kind(out, "Workload"), 1);
	/* JobSet level: its CompositePodGroup under the TrainJob's, from the annotated template */
	o = by_name(out, "CompositePodGroup", "tj-trainer");
	ck_assert_str_eq(pk_get_string(o, "spec.workloadRef.workloadName"), "tj");
	ck_assert_str_eq(pk_get_string(o, "spec.workloadRef.templateName"), "trainer");
	ck_assert_str_eq(pk_get_string(o, "spec.parentCompositePodGroupName"), "tj");
	o = by_name(out, "CompositePodGroup", "tj-trainer-node");
	ck_assert_str_eq(pk_get_string(o, "spec.parentCompositePodGroupName"), "tj-trainer");
	ck_assert_int_eq(json_integer_value(pk_get(o, "spec.schedulingPolicy.gang.minGroupCount")),
			 2);
	/* Job level: PodGroups materialized by the Job controller from the leaf template */
	for (i = 0; i < 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "tj-trainer-node-%zu", i);
		o = by_name(out, "PodGroup", name);
		ck_assert_str_eq(pk_get_string(o, "spec.workloadRef.templateName"), "node-job");
		ck_assert_str_eq(pk_get_string(o, "spec.parentCompositePodGroupName"),
				 "tj-trainer-node");
		ck_assert_str_eq(
		    json_string_value(json_object_get(
			json_array_get(pk_get(o, "spec.schedulingConstraints.topology"), 0),
			"key")),
		    "topology.kubernetes.io/rack");
		ck_assert_str_eq(
		    json_string_value(json_object_get(
			json_array_get(pk_get(o, "metadata.ownerReferences"), 0), "kind")),
		    "Job");
	}
	ck_assert_uint_eq(count_kind(out, "Pod"), 8);
	ck_assert_str_eq(pk_get_string(by_name(out, "Pod", "tj-trainer-node-1-3"),
				       "spec.schedulingGroup.podGroupName"),
			 "tj-trainer-node-1");
	all_pass_pk_validate(out);
	json_decref(out);

	/* without the parent's Workload the chain stops with the annotation's path */
	json_array_remove(objects, 0);
	ck_assert_int_eq(wb_expand_objects(objects, &out, &errs), -EINVAL);
	ck_assert(errors_have(
	    &errs, "JobSet ml/tj-trainer: metadata.annotations[scheduling.k8s.io/workload-name]: "
		   "Not found: \"tj\""));
	pk_errors_clear(&errs);
	json_decref(objects);
}
END_TEST

START_TEST(delegated_job_needs_a_known_template)
{
	struct pk_errors errs = {0};
	json_t *objects =
	    yaml("apiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\nmetadata: {name: w}\n"
		 "spec: {podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}]}\n---\n"
		 "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n"
		 "    scheduling.k8s.io/workload-name: w\n    "
		 "scheduling.k8s.io/group-template-name: nope\n"
		 "spec: {template: {spec: {}}}\n---\n"
		 "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: k\n  annotations:\n"
		 "    scheduling.k8s.io/group-template-name: t\n"
		 "spec: {template: {spec: {}}}\n");
	json_t *out = NULL;

	ck_assert_int_eq(wb_expand_objects(objects, &out, &errs), -EINVAL);
	ck_assert(errors_have(
	    &errs, "Job default/j: metadata.annotations[scheduling.k8s.io/group-template-name]: "
		   "Not found: \"nope\""));
	ck_assert(errors_have(
	    &errs, "Job default/k: metadata.annotations[scheduling.k8s.io/workload-name]: Required "
		   "value"));
	pk_errors_clear(&errs);
	json_decref(objects);
}
END_TEST

START_TEST(expand_passes_other_objects_through_in_order)
{
	json_t *objects = yaml("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
			       "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: "
			       "{template: {spec: {}}}\n---\n"
			       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n");
	json_t *out = expand(objects);

	ck_assert_uint_eq(json_array_size(out), 5);
	ck_assert_str_eq(pk_name(json_array_get(out, 0)), "n1");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(out, 1), "kind")),
			 "Workload");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(out, 2), "kind")),
			 "PodGroup");
	ck_assert_str_eq(pk_name(json_array_get(out, 3)), "j-0");
	ck_assert_str_eq(pk_name(json_array_get(out, 4)), "p");
	ck_assert_ptr_eq(json_array_get(out, 0), json_array_get(objects, 0));
	json_decref(out);
	json_decref(objects);
	ck_assert_int_eq(wb_expand_objects(NULL, &out, NULL), -EINVAL);
}
END_TEST

START_TEST(hostile_objects_are_errors_not_crashes)
{
	static const char *docs[] = {
	    "apiVersion: batch/v1\nkind: Job\n",
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: 7\n",
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 1000000, "
	    "template: {}}\n",
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: -1, "
	    "template: {}}\n",
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: x, "
	    "template: {}}\n",
	    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: s}\nspec: {}\n",
	    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: s}\nspec: "
	    "{replicatedJobs: [1, {name: 2}]}\n",
	    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: s}\n"
	    "spec: {replicatedJobs: [{name: a, replicas: 5000, template: {spec: {parallelism: "
	    "5000, template: {}}}}]}\n",
	    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: s}\n"
	    "spec: {scheduling: {replicatedJobs: [7, {targetReplicatedJobs: [1]}]}, "
	    "replicatedJobs: [{name: a, template: {}}]}\n",
	};
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct pk_errors errs = {0};
		json_t *objects = yaml(docs[i]), *out = NULL;

		ck_assert_msg(wb_expand_objects(objects, &out, &errs) == -EINVAL,
			      "doc %zu accepted", i);
		ck_assert_msg(errs.n > 0, "doc %zu: no message", i);
		pk_errors_clear(&errs);
		json_decref(objects);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controllers");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, kep_job_example_gang_zone_all);
	tcase_add_test(tc, kep_job_example_backward_compatible_basic);
	tcase_add_test(tc, kep_jobset_example_targeted_policies);
	tcase_add_test(tc, delegated_example_file);
	tcase_add_test(tc, job_validation_errors_carry_field_paths);
	tcase_add_test(tc, job_allow_list_rejects_policies_it_did_not_opt_into);
	tcase_add_test(tc, job_gang_defaults_to_parallelism_and_clamps);
	tcase_add_test(tc, job_update_rules);
	tcase_add_test(tc, job_bound_by_a_parent_only_creates_pods);
	tcase_add_test(tc, jobset_gang_defaults_and_inheritance);
	tcase_add_test(tc, jobset_validation);
	tcase_add_test(tc, jobset_templates_must_not_carry_scheduling);
	tcase_add_test(tc, delegated_trainjob_jobset_job_chain);
	tcase_add_test(tc, delegated_job_needs_a_known_template);
	tcase_add_test(tc, expand_passes_other_objects_through_in_order);
	tcase_add_test(tc, hostile_objects_are_errors_not_crashes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

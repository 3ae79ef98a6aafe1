/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_builder.c — unit tests of the workloadbuilder library (KEP-6089 test
 * plan): basic and gang compilation, mapping of topology, disruption mode and
 * claims, default/override merge, callbacks, validation rejects, flat and
 * multi-level trees, composite policy translation, allow-lists, update rules
 * and materialization from an existing Workload.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &e);

	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, e.text);
	return v;
}

static const char *bname(enum wb_block block)
{
	static const char *const names[] = {"schedulingPolicy", "schedulingConstraints",
					    "disruptionMode", "resourceClaims"};

	return names[block];
}

static void set_input(struct wb_item *item, enum wb_block block, const char *json, const char *path)
{
	json_t *v = json ? J(json) : NULL;

	ck_assert_int_eq(wb_item_set_input(item, block, v, path), 0);
	json_decref(v);
}

static struct wb_item *leaf(const char *name)
{
	struct wb_item *item;

	ck_assert_int_eq(wb_item_new(name, &item), 0);
	item->defaults.policy = WB_POLICY_BASIC;
	return item;
}

static const struct wb_options all_allowed = {
    .name = "w",
    .namespace = "ns",
    .owner = {"batch/v1", "Job", "j", "uid-1"},
    .allowed_policies = WB_ALLOW_BASIC | WB_ALLOW_GANG,
    .allowed_disruption_modes = WB_ALLOW_SINGLE | WB_ALLOW_ALL,
};

/* Build a Workload from root; ck-fails with the errors on failure. */
static json_t *build(struct wb_item *root, const struct wb_options *opts)
{
	struct pk_errors errs = {0};
	struct wb_builder *b;
	json_t *w = NULL;
	int r;

	ck_assert_int_eq(wb_builder_new(root, opts, &b), 0);
	r = wb_builder_build_workload(b, "spec.scheduling", &w, &errs);
	ck_assert_msg(r == 0, "build failed: %s", errs.n ? errs.msg[0] : "(no message)");
	wb_builder_free(b);
	pk_errors_clear(&errs);
	return w;
}

/* Validate; returns the error count and copies the first message. */
static size_t validate(struct wb_item *root, const struct wb_options *opts,
		       const struct wb_item *old, char *first, size_t len)
{
	struct pk_errors errs = {0};
	struct wb_builder *b;
	size_t n;
	int r;

	ck_assert_int_eq(wb_builder_new(root, opts, &b), 0);
	r = wb_builder_validate(b, "spec.scheduling", old, &errs);
	n = errs.n;
	ck_assert_int_eq(r == 0, n == 0);
	if (first)
		snprintf(first, len, "%s", n ? errs.msg[0] : "");
	pk_errors_clear(&errs);
	wb_builder_free(b);
	return n;
}

static bool has_error(struct wb_item *root, const struct wb_options *opts,
		      const struct wb_item *old, const char *needle)
{
	struct pk_errors errs = {0};
	struct wb_builder *b;
	bool found = false;
	size_t i;

	ck_assert_int_eq(wb_builder_new(root, opts, &b), 0);
	wb_builder_validate(b, "spec.scheduling", old, &errs);
	for (i = 0; i < errs.n; i++)
		if (strstr(errs.msg[i], needle))
			found = true;
	if (!found)
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "  got: %s\n", errs.msg[i]);
	pk_errors_clear(&errs);
	wb_builder_free(b);
	return found;
}

static void assert_json(const json_t *got, const char *want_text)
{
	json_t *want = J(want_text);

	if (!json_equal(got, want)) {
		char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);

		ck_abort_msg("got %s\nwant %s", g, want_text);
	}
	json_decref(want);
}

START_TEST(basic_leaf_compiles_to_one_pod_group_template)
{
	struct wb_item *item = leaf("job");
	json_t *w;

	ck_assert_int_eq(wb_config_set_priority_class(&item->defaults, "high"), 0);
	w = build(item, &all_allowed);
	assert_json(
	    w,
	    "{\"apiVersion\":\"scheduling.k8s.io/v1alpha3\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"ownerReferences\":[{"
	    "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"uid-1\","
	    "\"controller\":true,\"blockOwnerDeletion\":true}]},"
	    "\"spec\":{\"controllerRef\":{\"apiGroup\":\"batch\",\"kind\":\"Job\",\"name\":\"j\"},"
	    "\"podGroupTemplates\":[{\"name\":\"job\",\"schedulingPolicy\":{\"basic\":{}},"
	    "\"disruptionMode\":{\"single\":{}},\"priorityClassName\":\"high\"}]}}");
	json_decref(w);
	wb_item_free(item);
}
END_TEST

START_TEST(gang_leaf_and_pod_group)
{
	struct wb_item *item = leaf("job");
	struct wb_builder *b;
	json_t *w = NULL, *pg = NULL;

	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":3}}", "schedulingPolicy");
	ck_assert_int_eq(wb_builder_new(item, &all_allowed, &b), 0);
	ck_assert_int_eq(wb_builder_new_pod_group(b, "pg", "job", NULL, &pg), -EINVAL);
	ck_assert_int_eq(wb_builder_build_workload(b, "spec.scheduling", &w, NULL), 0);
	assert_json(json_object_get(w, "spec"),
		    "{\"controllerRef\":{\"apiGroup\":\"batch\",\"kind\":\"Job\",\"name\":\"j\"},"
		    "\"podGroupTemplates\":[{\"name\":\"job\",\"schedulingPolicy\":{\"gang\":{"
		    "\"minCount\":3}},"
		    "\"disruptionMode\":{\"single\":{}}}]}");
	ck_assert_int_eq(wb_builder_new_pod_group(b, "pg", "job", NULL, &pg), 0);
	assert_json(
	    json_object_get(pg, "spec"),
	    "{\"workloadRef\":{\"workloadName\":\"w\",\"templateName\":\"job\"},"
	    "\"schedulingPolicy\":{\"gang\":{\"minCount\":3}},\"disruptionMode\":{\"single\":{}}}");
	ck_assert_str_eq(json_string_value(json_object_get(pg, "kind")), "PodGroup");
	ck_assert_ptr_nonnull(json_object_get(json_object_get(pg, "metadata"), "ownerReferences"));
	json_decref(pg);
	/* a composite of that name does not exist, nor does another template */
	ck_assert_int_eq(wb_builder_new_composite_pod_group(b, "x", "job", NULL, &pg), -ENOENT);
	ck_assert_int_eq(wb_builder_new_pod_group(b, "x", "nope", NULL, &pg), -ENOENT);
	json_decref(w);
	wb_builder_free(b);
	wb_item_free(item);
}
END_TEST

START_TEST(maps_topology_disruption_and_claims)
{
	struct wb_item *item = leaf("job");
	json_t *w;

	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":2}}", "schedulingPolicy");
	set_input(item, WB_BLOCK_CONSTRAINTS,
		  "{\"topology\":[{\"level\":\"topology.kubernetes.io/rack\"}]}",
		  "schedulingConstraints");
	set_input(item, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "disruptionMode");
	set_input(item, WB_BLOCK_CLAIMS,
		  "[{\"name\":\"imex\",\"resourceClaimTemplateName\":\"imex-tmpl\"},"
		  "{\"name\":\"fs\",\"resourceClaimName\":\"shared-fs\"}]",
		  "resourceClaims");
	w = build(item, &all_allowed);
	assert_json(
	    json_array_get(json_object_get(json_object_get(w, "spec"), "podGroupTemplates"), 0),
	    "{\"name\":\"job\",\"schedulingPolicy\":{\"gang\":{\"minCount\":2}},"
	    "\"schedulingConstraints\":{\"topology\":[{\"key\":\"topology.kubernetes.io/rack\"}]},"
	    "\"disruptionMode\":{\"all\":{}},\"resourceClaims\":["
	    "{\"name\":\"imex\",\"resourceClaimTemplateName\":\"imex-tmpl\"},"
	    "{\"name\":\"fs\",\"resourceClaimName\":\"shared-fs\"}]}");
	/* the intermediate form holds the same */
	ck_assert_str_eq(item->resolved.topology_key, "topology.kubernetes.io/rack");
	ck_assert_int_eq(item->resolved.disruption, WB_DISRUPTION_ALL);
	ck_assert_uint_eq(item->resolved.nclaims, 2);
	ck_assert_str_eq(item->resolved.claims[1].claim_name, "shared-fs");
	ck_assert_ptr_null(item->resolved.claims[1].claim_template_name);
	json_decref(w);
	wb_item_free(item);
}
END_TEST

START_TEST(user_input_overrides_defaults_field_by_field)
{
	struct wb_item *item = leaf("job");
	struct pk_errors errs = {0};

	/* controller defaults: basic, rack topology, all, a claim, priority */
	ck_assert_int_eq(wb_config_set_topology(&item->defaults, "rack"), 0);
	item->defaults.disruption = WB_DISRUPTION_SINGLE;
	ck_assert_int_eq(wb_config_add_claim(&item->defaults, "c", "claim", NULL), 0);
	ck_assert_int_eq(wb_config_set_priority_class(&item->defaults, "p"), 0);
	/* the user only asks for a gang and a zone */
	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":5}}", "schedulingPolicy");
	set_input(item, WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"zone\"}]}",
		  "schedulingConstraints");
	ck_assert_int_eq(wb_item_resolve(item, "spec.scheduling", &errs), 0);
	ck_assert_int_eq(item->resolved.policy, WB_POLICY_GANG);
	ck_assert_int_eq(item->resolved.min_count, 5);
	ck_assert_str_eq(item->resolved.topology_key, "zone");
	ck_assert_int_eq(item->resolved.disruption, WB_DISRUPTION_SINGLE);
	ck_assert_uint_eq(item->resolved.nclaims, 1);
	ck_assert_str_eq(item->resolved.priority_class_name, "p");
	/* an empty constraints block clears the default topology; an empty claim list the claims */
	set_input(item, WB_BLOCK_CONSTRAINTS, "{}", "schedulingConstraints");
	set_input(item, WB_BLOCK_CLAIMS, "[]", "resourceClaims");
	ck_assert_int_eq(wb_item_resolve(item, "spec.scheduling", &errs), 0);
	ck_assert_ptr_null(item->resolved.topology_key);
	ck_assert_uint_eq(item->resolved.nclaims, 0);
	/* the defaults themselves are untouched */
	ck_assert_str_eq(item->defaults.topology_key, "rack");
	ck_assert_int_eq(item->defaults.policy, WB_POLICY_BASIC);
	pk_errors_clear(&errs);
	wb_item_free(item);
}
END_TEST

static void default_to_parallelism(struct wb_config *cfg, void *userdata)
{
	const int *parallelism = userdata;

	if (cfg->policy == WB_POLICY_GANG && !cfg->has_min_count) {
		cfg->has_min_count = true;
		cfg->min_count = *parallelism < 1 ? 1 : *parallelism;
	}
}

static void times_ten(struct wb_config *cfg, void *userdata)
{
	(void)userdata;
	if (cfg->policy == WB_POLICY_GANG && cfg->has_min_count)
		cfg->min_count *= 10;
}

START_TEST(callbacks_run_in_order_after_the_merge)
{
	struct wb_item *item = leaf("job");
	struct pk_errors errs = {0};
	int parallelism = 4;

	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{}}", "schedulingPolicy");
	ck_assert_int_eq(wb_item_add_callback(item, default_to_parallelism, &parallelism), 0);
	ck_assert_int_eq(wb_item_add_callback(item, times_ten, NULL), 0);
	ck_assert_int_eq(wb_item_resolve(item, "spec.scheduling", &errs), 0);
	ck_assert_int_eq(item->resolved.min_count, 40);
	/* a user count wins over the defaulting callback; the adjustment still runs */
	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":2}}", "schedulingPolicy");
	ck_assert_int_eq(wb_item_resolve(item, "spec.scheduling", &errs), 0);
	ck_assert_int_eq(item->resolved.min_count, 20);
	/* parallelism 0 (a suspended Job) clamps to 1 */
	parallelism = 0;
	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{}}", "schedulingPolicy");
	ck_assert_int_eq(wb_item_resolve(item, "spec.scheduling", &errs), 0);
	ck_assert_int_eq(item->resolved.min_count, 10);
	/* a basic policy is left alone */
	set_input(item, WB_BLOCK_POLICY, "{\"basic\":{}}", "schedulingPolicy");
	ck_assert_int_eq(wb_item_resolve(item, "spec.scheduling", &errs), 0);
	ck_assert(!item->resolved.has_min_count);
	ck_assert_uint_eq(errs.n, 0);
	wb_item_free(item);
}
END_TEST

START_TEST(validation_rejects_at_the_field_path)
{
	static const struct {
		enum wb_block block;
		const char *json, *want;
	} cases[] = {
	    {WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":0}}",
	     "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater "
	     "than or equal to 1"},
	    {WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":\"4\"}}",
	     "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: \"4\": must be an "
	     "integer"},
	    {WB_BLOCK_POLICY, "{\"basic\":{},\"gang\":{}}",
	     "spec.scheduling.schedulingPolicy: Invalid value: both set: must specify exactly one "
	     "of: `basic`, `gang`"},
	    {WB_BLOCK_POLICY, "{}",
	     "spec.scheduling.schedulingPolicy: Required value: must specify exactly one of"},
	    {WB_BLOCK_POLICY, "{\"gang\":{\"minGroupCount\":2}}",
	     "spec.scheduling.schedulingPolicy.gang.minGroupCount: Forbidden"},
	    {WB_BLOCK_POLICY, "[1]",
	     "spec.scheduling.schedulingPolicy: Invalid value: [1]: must be an object"},
	    {WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"a\"},{\"key\":\"b\"}]}",
	     "spec.scheduling.schedulingConstraints.topology: Too many: 2: must have at most 1 "
	     "items"},
	    {WB_BLOCK_CONSTRAINTS, "{\"topology\":[{}]}",
	     "spec.scheduling.schedulingConstraints.topology[0].key: Required value"},
	    {WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"bad key!\"}]}",
	     "spec.scheduling.schedulingConstraints.topology[0].key: Invalid value: \"bad key!\""},
	    {WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"a\",\"level\":\"b\"}]}",
	     "spec.scheduling.schedulingConstraints.topology[0].level: Invalid value: b: must "
	     "equal key"},
	    {WB_BLOCK_DISRUPTION, "{\"single\":{},\"all\":{}}",
	     "spec.scheduling.disruptionMode: Invalid value: both set"},
	    {WB_BLOCK_CLAIMS, "[{\"name\":\"a\"}]",
	     "spec.scheduling.resourceClaims[0]: Required value: must specify exactly one of: "
	     "`resourceClaimName`, `resourceClaimTemplateName`"},
	    {WB_BLOCK_CLAIMS,
	     "[{\"name\":\"a\",\"resourceClaimName\":\"x\"},{\"name\":\"a\",\"resourceClaimName\":"
	     "\"y\"}]",
	     "spec.scheduling.resourceClaims[1].name: Duplicate value: \"a\""},
	    {WB_BLOCK_CLAIMS, "[{\"resourceClaimName\":\"x\"}]",
	     "spec.scheduling.resourceClaims[0].name: Required value"},
	    {WB_BLOCK_CLAIMS,
	     "[{\"name\":\"a\",\"resourceClaimName\":\"x\"},{\"name\":\"b\",\"resourceClaimName\":"
	     "\"x\"},"
	     "{\"name\":\"c\",\"resourceClaimName\":\"x\"},{\"name\":\"d\",\"resourceClaimName\":"
	     "\"x\"},"
	     "{\"name\":\"e\",\"resourceClaimName\":\"x\"}]",
	     "spec.scheduling.resourceClaims: Too many: 5: must have at most 4 items"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wb_item *item = leaf("job");

		set_input(item, cases[i].block, cases[i].json, bname(cases[i].block));
		ck_assert_msg(has_error(item, &all_allowed, NULL, cases[i].want),
			      "case %zu: want %s", i, cases[i].want);
		wb_item_free(item);
	}
}
END_TEST

START_TEST(declarative_validation_can_be_switched_off)
{
	struct wb_options opts = all_allowed;
	struct wb_item *item = leaf("job");
	char first[256];

	set_input(item, WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"a\"},{\"key\":\"b\"}]}",
		  "schedulingConstraints");
	ck_assert_uint_eq(validate(item, &opts, NULL, first, sizeof(first)), 1);
	opts.disable_declarative_validation = true;
	ck_assert_uint_eq(validate(item, &opts, NULL, first, sizeof(first)), 0);
	/* the first constraint wins */
	ck_assert_str_eq(item->resolved.topology_key, "a");
	/* type errors cannot be mapped and stay errors */
	set_input(item, WB_BLOCK_CONSTRAINTS, "{\"topology\":\"a\"}", "schedulingConstraints");
	ck_assert_uint_eq(validate(item, &opts, NULL, first, sizeof(first)), 1);
	ck_assert_ptr_nonnull(
	    strstr(first, "spec.scheduling.schedulingConstraints.topology: Invalid value"));
	wb_item_free(item);
}
END_TEST

START_TEST(cross_field_rules)
{
	struct wb_item *item = leaf("job"), *root, *child;

	/* all disruption with the basic policy */
	set_input(item, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "disruptionMode");
	ck_assert(has_error(item, &all_allowed, NULL,
			    "spec.scheduling.disruptionMode: Invalid value: \"all\": the `all` "
			    "disruption mode requires the gang scheduling policy"));
	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":1}}", "schedulingPolicy");
	ck_assert_uint_eq(validate(item, &all_allowed, NULL, NULL, 0), 0);
	wb_item_free(item);

	/* a single child under an all parent; a basic child under a gang parent */
	ck_assert_int_eq(wb_item_new("root", &root), 0);
	child = leaf("child");
	ck_assert_int_eq(wb_item_add_child(root, child), 0);
	set_input(root, WB_BLOCK_POLICY, "{\"gang\":{\"minGroupCount\":1}}", "schedulingPolicy");
	set_input(root, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "disruptionMode");
	set_input(child, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":2}}",
		  "groups[0].schedulingPolicy");
	set_input(child, WB_BLOCK_DISRUPTION, "{\"single\":{}}", "groups[0].disruptionMode");
	ck_assert(has_error(root, &all_allowed, NULL,
			    "spec.scheduling.groups[0].disruptionMode: Invalid value: \"single\": "
			    "must be `all` because the parent group \"root\""));
	set_input(child, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "groups[0].disruptionMode");
	ck_assert_uint_eq(validate(root, &all_allowed, NULL, NULL, 0), 0);
	set_input(child, WB_BLOCK_POLICY, "{\"basic\":{}}", "groups[0].schedulingPolicy");
	ck_assert(has_error(root, &all_allowed, NULL,
			    "spec.scheduling.groups[0].schedulingPolicy: Invalid value: \"basic\": "
			    "must be gang because the parent group \"root\""));
	wb_item_free(root);
}
END_TEST

START_TEST(allow_list_rejects_what_the_controller_did_not_opt_into)
{
	struct wb_options basic_only = all_allowed;
	struct wb_item *item = leaf("job");

	basic_only.allowed_policies = WB_ALLOW_BASIC;
	basic_only.allowed_disruption_modes = WB_ALLOW_SINGLE;
	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":2}}", "schedulingPolicy");
	ck_assert(has_error(item, &basic_only, NULL,
			    "spec.scheduling.schedulingPolicy: Unsupported value: \"gang\": "
			    "supported values: \"basic\""));
	ck_assert_uint_eq(validate(item, &all_allowed, NULL, NULL, 0), 0);
	/* a policy this library does not know is denied by default */
	set_input(item, WB_BLOCK_POLICY, "{\"fairShare\":{}}", "schedulingPolicy");
	ck_assert(has_error(item, &all_allowed, NULL,
			    "spec.scheduling.schedulingPolicy: Unsupported value: \"fairShare\": "
			    "supported values: \"basic\", \"gang\""));
	/* the same for disruption modes */
	set_input(item, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":2}}", "schedulingPolicy");
	set_input(item, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "disruptionMode");
	basic_only.allowed_policies = WB_ALLOW_BASIC | WB_ALLOW_GANG;
	ck_assert(has_error(item, &basic_only, NULL,
			    "spec.scheduling.disruptionMode: Unsupported value: \"all\": supported "
			    "values: \"single\""));
	/* a controller's own default outside its allow-list is rejected too */
	set_input(item, WB_BLOCK_DISRUPTION, NULL, NULL);
	set_input(item, WB_BLOCK_POLICY, NULL, NULL);
	basic_only.allowed_policies = WB_ALLOW_GANG;
	ck_assert(has_error(item, &basic_only, NULL,
			    "Unsupported value: \"basic\": supported values: \"gang\""));
	wb_item_free(item);
}
END_TEST

static struct wb_item *two_level(const char *child_names[], size_t n)
{
	struct wb_item *root;
	size_t i;

	ck_assert_int_eq(wb_item_new("root", &root), 0);
	root->defaults.policy = WB_POLICY_BASIC;
	for (i = 0; i < n; i++)
		ck_assert_int_eq(wb_item_add_child(root, leaf(child_names[i])), 0);
	return root;
}

START_TEST(flat_tree_has_no_composites)
{
	struct wb_item *item = leaf("only");
	json_t *w = build(item, &all_allowed), *spec = json_object_get(w, "spec");

	ck_assert_ptr_null(json_object_get(spec, "compositePodGroupTemplates"));
	ck_assert_uint_eq(json_array_size(json_object_get(spec, "podGroupTemplates")), 1);
	json_decref(w);
	wb_item_free(item);
}
END_TEST

START_TEST(multi_level_tree_compiles_to_nested_composites)
{
	const char *names[] = {"driver", "workers"};
	struct wb_item *root = two_level(names, 2), *mid, *deep;
	struct wb_builder *b;
	json_t *w = NULL, *g = NULL;

	/* root -> [driver, workers, replica -> [leader]] */
	ck_assert_int_eq(wb_item_new("replica", &mid), 0);
	set_input(mid, WB_BLOCK_POLICY, "{\"gang\":{\"minGroupCount\":2}}",
		  "replica.schedulingPolicy");
	deep = leaf("leader");
	set_input(deep, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":1}}",
		  "replica.leader.schedulingPolicy");
	ck_assert_int_eq(wb_item_add_child(mid, deep), 0);
	ck_assert_int_eq(wb_item_add_child(root, mid), 0);
	set_input(root, WB_BLOCK_POLICY, "{\"basic\":{}}", "schedulingPolicy");
	ck_assert_int_eq(wb_builder_new(root, &all_allowed, &b), 0);
	ck_assert_int_eq(wb_builder_build_workload(b, "spec", &w, NULL), 0);
	assert_json(
	    json_object_get(json_object_get(w, "spec"), "compositePodGroupTemplates"),
	    "[{\"name\":\"root\",\"schedulingPolicy\":{\"basic\":{}},\"disruptionMode\":{"
	    "\"single\":{}},"
	    "\"compositePodGroupTemplates\":[{\"name\":\"replica\",\"schedulingPolicy\":{\"gang\":{"
	    "\"minGroupCount\":2}},"
	    "\"disruptionMode\":{\"single\":{}},\"podGroupTemplates\":[{\"name\":\"leader\","
	    "\"schedulingPolicy\":{\"gang\":{\"minCount\":1}},\"disruptionMode\":{\"single\":{}}}]}"
	    "],"
	    "\"podGroupTemplates\":[{\"name\":\"driver\",\"schedulingPolicy\":{\"basic\":{}},"
	    "\"disruptionMode\":{\"single\":{}}},"
	    "{\"name\":\"workers\",\"schedulingPolicy\":{\"basic\":{}},\"disruptionMode\":{"
	    "\"single\":{}}}]}]");
	/* runtime groups from any level, with parent links */
	ck_assert_int_eq(wb_builder_new_composite_pod_group(b, "r-0", "replica", "top", &g), 0);
	assert_json(json_object_get(g, "spec"),
		    "{\"workloadRef\":{\"workloadName\":\"w\",\"templateName\":\"replica\"},"
		    "\"parentCompositePodGroupName\":\"top\",\"schedulingPolicy\":{\"gang\":{"
		    "\"minGroupCount\":2}},"
		    "\"disruptionMode\":{\"single\":{}}}");
	ck_assert_str_eq(json_string_value(json_object_get(g, "kind")), "CompositePodGroup");
	json_decref(g);
	ck_assert_int_eq(wb_builder_new_pod_group(b, "r-0-leader", "leader", "r-0", &g), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(g, "spec"),
							   "parentCompositePodGroupName")),
			 "r-0");
	json_decref(g);
	json_decref(w);
	wb_builder_free(b);
	wb_item_free(root);
}
END_TEST

START_TEST(composite_policy_translation)
{
	const char *names[] = {"a"};
	struct wb_item *root = two_level(names, 1);
	struct pk_errors errs = {0};

	set_input(root, WB_BLOCK_POLICY, "{\"gang\":{\"minGroupCount\":3}}", "schedulingPolicy");
	set_input(root->children[0], WB_BLOCK_POLICY, "{\"gang\":{}}", "a.schedulingPolicy");
	ck_assert_int_eq(wb_item_resolve(root, "spec", &errs), 0);
	ck_assert_int_eq(root->resolved.policy, WB_POLICY_GANG);
	ck_assert(root->resolved.has_min_count);
	ck_assert_int_eq(root->resolved.min_count, 3);
	/* minCount on a composite is a leaf field */
	set_input(root, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":3}}", "schedulingPolicy");
	ck_assert(has_error(root, &all_allowed, NULL,
			    "spec.scheduling.schedulingPolicy.gang.minCount: Forbidden: composite "
			    "groups count child groups; use minGroupCount"));
	/* a gang without a count and no callback to default it */
	ck_assert(has_error(root, &all_allowed, NULL,
			    "spec.scheduling.a.schedulingPolicy.gang.minCount: Required value"));
	pk_errors_clear(&errs);
	wb_item_free(root);
}
END_TEST

START_TEST(workload_limits)
{
	const char *dup[] = {"x", "x"};
	const char *nine[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
	struct wb_item *root = two_level(dup, 2), *cur, *next;
	int depth;

	ck_assert(has_error(root, &all_allowed, NULL, "spec.scheduling: Duplicate value: \"x\""));
	wb_item_free(root);
	root = two_level(nine, 9);
	ck_assert(has_error(root, &all_allowed, NULL, "spec.scheduling: Too many: 9"));
	wb_item_free(root);
	/* five levels */
	ck_assert_int_eq(wb_item_new("l0", &root), 0);
	cur = root;
	for (depth = 1; depth < 5; depth++) {
		char name[8];

		snprintf(name, sizeof(name), "l%d", depth);
		next = leaf(name);
		ck_assert_int_eq(wb_item_add_child(cur, next), 0);
		cur = next;
	}
	ck_assert(has_error(root, &all_allowed, NULL, "depth must be at most 4"));
	/* four levels are fine */
	wb_item_free(root->children[0]->children[0]->children[0]->children[0]);
	root->children[0]->children[0]->children[0]->nchildren = 0;
	ck_assert_uint_eq(validate(root, &all_allowed, NULL, NULL, 0), 0);
	wb_item_free(root);
	/* names must be DNS labels */
	root = leaf("Not_A_Label");
	ck_assert(has_error(root, &all_allowed, NULL, "group template name must be a DNS label"));
	wb_item_free(root);
}
END_TEST

START_TEST(update_rules)
{
	struct wb_item *old = leaf("job"), *cur = leaf("job"), *other = leaf("other");
	char first[256];

	set_input(old, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":4}}", "schedulingPolicy");
	set_input(old, WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"zone\"}]}",
		  "schedulingConstraints");
	set_input(old, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "disruptionMode");
	/* minCount may change (scaling) */
	set_input(cur, WB_BLOCK_POLICY, "{\"gang\":{\"minCount\":8}}", "schedulingPolicy");
	set_input(cur, WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"level\":\"zone\"}]}",
		  "schedulingConstraints");
	set_input(cur, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "disruptionMode");
	ck_assert_uint_eq(validate(cur, &all_allowed, old, first, sizeof(first)), 0);
	/* constraints are immutable */
	set_input(cur, WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"rack\"}]}",
		  "schedulingConstraints");
	ck_assert(has_error(cur, &all_allowed, old,
			    "spec.scheduling.schedulingConstraints: Invalid value: "
			    "{\"topology\":[{\"key\":\"rack\"}]}: field is immutable"));
	set_input(cur, WB_BLOCK_CONSTRAINTS, "{\"topology\":[{\"key\":\"zone\"}]}",
		  "schedulingConstraints");
	/* the disruption mode is immutable */
	set_input(cur, WB_BLOCK_DISRUPTION, "{\"single\":{}}", "disruptionMode");
	ck_assert(has_error(
	    cur, &all_allowed, old,
	    "spec.scheduling.disruptionMode: Invalid value: {\"single\":{}}: field is immutable"));
	set_input(cur, WB_BLOCK_DISRUPTION, "{\"all\":{}}", "disruptionMode");
	/* claims are immutable */
	set_input(cur, WB_BLOCK_CLAIMS, "[{\"name\":\"c\",\"resourceClaimName\":\"x\"}]",
		  "resourceClaims");
	ck_assert(
	    has_error(cur, &all_allowed, old, "spec.scheduling.resourceClaims: Invalid value"));
	set_input(cur, WB_BLOCK_CLAIMS, NULL, NULL);
	/* the variant is frozen: gang -> basic (also through an omitted block) */
	set_input(cur, WB_BLOCK_DISRUPTION, NULL, NULL);
	set_input(old, WB_BLOCK_DISRUPTION, NULL, NULL);
	set_input(cur, WB_BLOCK_POLICY, "{\"basic\":{}}", "schedulingPolicy");
	ck_assert(has_error(
	    cur, &all_allowed, old,
	    "spec.scheduling.schedulingPolicy: Invalid value: \"basic\": field is immutable"));
	set_input(cur, WB_BLOCK_POLICY, NULL, NULL);
	ck_assert(has_error(cur, &all_allowed, old,
			    "field is immutable: the scheduling policy cannot change from gang"));
	/* a root that does not match is an internal error */
	ck_assert(has_error(cur, &all_allowed, other, "spec.scheduling: Internal error"));
	wb_item_free(old);
	wb_item_free(cur);
	wb_item_free(other);
}
END_TEST

START_TEST(materialize_from_existing_workload)
{
	json_t *wl = J(
	    "{\"apiVersion\":\"scheduling.k8s.io/v1alpha3\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"parent\",\"namespace\":\"ml\"},\"spec\":{"
	    "\"compositePodGroupTemplates\":[{\"name\":\"top\",\"schedulingPolicy\":{\"basic\":{}},"
	    "\"podGroupTemplates\":[{\"name\":\"leaf\",\"schedulingPolicy\":{\"gang\":{"
	    "\"minCount\":2}},"
	    "\"schedulingConstraints\":{\"topology\":[{\"level\":\"rack\"}]}}]}]}}");
	struct wb_options opts = {.owner = {"batch/v1", "Job", "child", NULL}};
	struct wb_builder *b;
	json_t *pg = NULL, *w = NULL;

	ck_assert_int_eq(wb_builder_from_workload(wl, &opts, &b), 0);
	ck_assert_int_eq(wb_builder_build_workload(b, "spec", &w, NULL), -EPERM);
	ck_assert_int_eq(wb_builder_validate(b, "spec", NULL, NULL), 0);
	ck_assert_int_eq(wb_builder_new_pod_group(b, "child", "leaf", "top-0", &pg), 0);
	assert_json(
	    pg,
	    "{\"apiVersion\":\"scheduling.k8s.io/v1alpha3\",\"kind\":\"PodGroup\","
	    "\"metadata\":{\"name\":\"child\",\"namespace\":\"ml\",\"ownerReferences\":[{"
	    "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"child\",\"controller\":true,"
	    "\"blockOwnerDeletion\":true}]},\"spec\":{\"workloadRef\":{\"workloadName\":\"parent\","
	    "\"templateName\":\"leaf\"},\"parentCompositePodGroupName\":\"top-0\","
	    "\"schedulingPolicy\":{\"gang\":{\"minCount\":2}},"
	    "\"schedulingConstraints\":{\"topology\":[{\"key\":\"rack\"}]}}}");
	json_decref(pg);
	wb_builder_free(b);
	json_decref(wl);
}
END_TEST

START_TEST(hostile_inputs_do_not_crash)
{
	static const char *blocks[] = {"null",
				       "1",
				       "\"x\"",
				       "[]",
				       "{\"gang\":[]}",
				       "{\"gang\":{\"minCount\":1e300}}",
				       "{\"gang\":{\"minCount\":99999999999}}",
				       "{\"topology\":[1,2,3]}",
				       "{\"topology\":[{\"key\":7}]}",
				       "[{\"name\":7}]",
				       "[null]",
				       "{\"all\":1}"};
	size_t i, b;

	for (b = 0; b < _WB_BLOCK_MAX; b++)
		for (i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
			struct wb_item *item = leaf("job");
			json_t *w = NULL;
			struct wb_builder *bd;

			set_input(item, b, blocks[i], "x");
			ck_assert_int_eq(wb_builder_new(item, &all_allowed, &bd), 0);
			if (wb_builder_build_workload(bd, "spec", &w, NULL) == 0)
				json_decref(w);
			wb_builder_free(bd);
			wb_item_free(item);
		}
	ck_assert_int_eq(wb_item_new(NULL, NULL), -EINVAL);
	wb_item_free(NULL);
	wb_builder_free(NULL);
}
END_TEST

/* The queue order joined piece by piece is the text the format writes, truncated as it is. */
START_TEST(queue_order_is_the_formatted_text)
{
	static const char *const words[] = {
	    "",	   "cq",   "a-much-longer-cluster-queue-name", "-", "2026-01-02T03:04:05Z",
	    "ns1", "job-7"};
	static const int64_t prios[] = {0, 1, -1, 42, -1000000, INT64_MAX, INT64_MIN};
	unsigned seed = 7;

	for (int i = 0; i < 5000; i++) {
		const char *w[5];
		int64_t prio = prios[rand_r(&seed) % 7];
		size_t n = (size_t)rand_r(&seed) % 90 + 1;
		char got[128], want[128];
		int len, r;

		for (int k = 0; k < 5; k++)
			w[k] = words[rand_r(&seed) % 7];
		len = snprintf(want, n, "%s %" PRId64 " %s %s/%s/%s", w[0], prio,
			       *w[1] ? w[1] : "-", w[2], w[3], w[4]);
		memset(got, 'x', sizeof(got));
		r = wb_queue_order_format(got, n, w[0], prio, w[1], w[2], w[3], w[4]);
		ck_assert_str_eq(got, want);
		ck_assert_int_eq(r, (size_t)len >= n ? -ENAMETOOLONG : 0);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("builder");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, basic_leaf_compiles_to_one_pod_group_template);
	tcase_add_test(tc, gang_leaf_and_pod_group);
	tcase_add_test(tc, maps_topology_disruption_and_claims);
	tcase_add_test(tc, user_input_overrides_defaults_field_by_field);
	tcase_add_test(tc, callbacks_run_in_order_after_the_merge);
	tcase_add_test(tc, validation_rejects_at_the_field_path);
	tcase_add_test(tc, declarative_validation_can_be_switched_off);
	tcase_add_test(tc, cross_field_rules);
	tcase_add_test(tc, allow_list_rejects_what_the_controller_did_not_opt_into);
	tcase_add_test(tc, flat_tree_has_no_composites);
	tcase_add_test(tc, multi_level_tree_compiles_to_nested_composites);
	tcase_add_test(tc, composite_policy_translation);
	tcase_add_test(tc, workload_limits);
	tcase_add_test(tc, update_rules);
	tcase_add_test(tc, materialize_from_existing_workload);
	tcase_add_test(tc, hostile_inputs_do_not_crash);
	tcase_add_test(tc, queue_order_is_the_formatted_text);
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

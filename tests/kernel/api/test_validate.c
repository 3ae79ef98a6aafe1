/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_validate.c — pk_validate, one test per rule: a valid object passes
 * and a violating one yields exactly the Kubernetes-style message.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"

#define WL "apiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\nmetadata: {name: job}\n"
#define PG "apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\n"
#define CPG "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n"
#define POD "apiVersion: v1\nkind: Pod\n"
#define CONTAINERS "spec: {containers: [{name: c, image: i}]}\n"
#define NODE "apiVersion: v1\nkind: Node\n"
#define PC "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
#define GANG(n) "schedulingPolicy: {gang: {minCount: " #n "}}"
#define CGANG(n) "schedulingPolicy: {gang: {minGroupCount: " #n "}}"

/*
 * The objects below are YAML written line by line as it reads, joined with
 * the macros above; clang-format does not converge on such concatenations.
 */
/* clang-format off */

static json_t *obj_of(const char *yaml)
{
	char err[512];
	json_t *objs = NULL, *o;

	ck_assert_msg(pk_read_buffer("t.yaml", yaml, strlen(yaml), &objs, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(json_array_size(objs), 1);
	o = json_incref(json_array_get(objs, 0));
	json_decref(objs);
	return o;
}

/* Validation never changes the object it reads. */
static int validate_unchanged(json_t *o, struct pk_errors *errs)
{
	json_t *before = json_deep_copy(o);
	int ret = pk_validate(o, errs);

	ck_assert(json_equal(o, before));
	json_decref(before);
	return ret;
}

static void valid(const char *yaml)
{
	struct pk_errors errs = { 0 };
	json_t *o = obj_of(yaml);
	int ret = validate_unchanged(o, &errs);

	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "unexpected: %s\n", errs.msg[i]);
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(errs.n, 0);
	json_decref(o);
}

/* Invalid, with exactly one message, the one given. */
static void invalid(const char *yaml, const char *want)
{
	struct pk_errors errs = { 0 };
	json_t *o = obj_of(yaml);
	int ret = validate_unchanged(o, &errs);

	for (size_t i = 0; i < errs.n; i++)
		if (errs.n != 1 || strcmp(errs.msg[i], want) != 0)
			fprintf(stderr, "got: %s\n", errs.msg[i]);
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msg[0], want);
	pk_errors_clear(&errs);
	json_decref(o);
}

START_TEST(test_kind_and_api_version)
{
	invalid("metadata: {name: a}\n", "kind: Required value");
	invalid("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n",
		"kind: Unsupported value: \"Deployment\": supported values: \"Node\", \"Pod\", "
		"\"PriorityClass\", \"Workload\", \"PodGroup\", \"CompositePodGroup\", \"Job\", "
		"\"JobSet\", \"Lease\", \"DeviceClass\", \"ResourceClaim\", "
		"\"ResourceClaimTemplate\", \"ResourceSlice\", \"PersistentVolumeClaim\", "
		"\"PersistentVolume\", \"StorageClass\", \"CSINode\", \"PodDisruptionBudget\", "
		"\"ResourceFlavor\", \"ClusterQueue\", \"LocalQueue\", \"LeaderWorkerSet\", \"Cohort\", "
		"\"WorkloadPriorityClass\", \"Topology\", \"ConfigMap\"");
	invalid("kind: Pod\nmetadata: {name: a}\n", "apiVersion: Required value");
	invalid("apiVersion: scheduling.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: a}\n",
		"apiVersion: Unsupported value: \"scheduling.k8s.io/v1alpha1\": supported values: "
		"\"scheduling.k8s.io/v1alpha3\"");
	valid("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec: {}\n");
}
END_TEST

START_TEST(test_names)
{
	valid(POD "metadata: {name: a.b-c, namespace: team-1}\n" CONTAINERS);
	invalid(POD "metadata: {}\n" CONTAINERS, "metadata.name: Required value: name is required");
	invalid(POD "metadata: {name: Bad_Name}\n" CONTAINERS,
		"metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must "
		"consist of lower case alphanumeric characters, '-' or '.', and must start and end "
		"with an alphanumeric character (e.g. 'example.com', regex used for validation is "
		"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
	invalid(POD "metadata: {name: a, namespace: a.b}\n" CONTAINERS,
		"metadata.namespace: Invalid value: \"a.b\": a lowercase RFC 1123 label must consist "
		"of lower case alphanumeric characters or '-', and must start and end with an "
		"alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
		"is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
	invalid(NODE "metadata: {name: n, namespace: x}\n",
		"metadata.namespace: Forbidden: not allowed on this type");
}
END_TEST

START_TEST(test_labels)
{
	valid(NODE "metadata: {name: n, labels: {topology.podkernel.dev/cube: c-0, a: \"\"}}\n");
	invalid(NODE "metadata: {name: n, labels: {\"bad key\": x}}\n",
		"metadata.labels: Invalid value: \"bad key\": label key name part must consist of "
		"alphanumeric characters, '-', '_' or '.', and must start and end with an "
		"alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')");
	invalid(NODE "metadata: {name: n, labels: {a: \"-x\"}}\n",
		"metadata.labels: Invalid value: \"-x\": label value must consist of alphanumeric "
		"characters, '-', '_' or '.', and must start and end with an alphanumeric character "
		"(e.g. 'MyName', 'my.name' or '123-abc')");
}
END_TEST

/* Exactly one message from the ownerReferences rules, the one given; "" for none. */
static void owners(const char *yaml, const char *want)
{
	struct pk_errors errs = {0};
	json_t *o = obj_of(yaml);
	int ret = pk_validate_owner_references(o, &errs);

	for (size_t i = 0; i < errs.n; i++)
		if (errs.n != 1 || strcmp(errs.msg[i], want) != 0)
			fprintf(stderr, "got: %s\n", errs.msg[i]);
	ck_assert_int_eq(ret, *want ? -EINVAL : 0);
	ck_assert_uint_eq(errs.n, *want ? 1 : 0);
	if (*want)
		ck_assert_str_eq(errs.msg[0], want);
	pk_errors_clear(&errs);
	json_decref(o);
}

/* metadata.ownerReferences as kube-apiserver's ValidateOwnerReferences. */
START_TEST(test_owner_references)
{
#define OWNER(ref) "metadata:\n  name: a\n  ownerReferences:\n" ref CONTAINERS
	owners(POD OWNER("  - {apiVersion: batch/v1, kind: Job, name: j, uid: u1, controller: true}\n"
			"  - {apiVersion: v1, kind: Pod, name: p, uid: u2, controller: false}\n"),
	       "");
	owners(POD OWNER("  - {apiVersion: batch/v1, kind: Job, name: j, controller: true}\n"),
		"metadata.ownerReferences[0].uid: Invalid value: \"\": must not be empty");
	owners(POD OWNER("  - {kind: Job, name: j, uid: u}\n"),
		"metadata.ownerReferences[0].apiVersion: Invalid value: \"\": version must not be "
		"empty");
	owners(POD OWNER("  - {apiVersion: batch/, kind: Job, name: j, uid: u}\n"),
		"metadata.ownerReferences[0].apiVersion: Invalid value: \"batch/\": version must "
		"not be empty");
	owners(POD OWNER("  - {apiVersion: batch/v1, name: j, uid: u}\n"),
		"metadata.ownerReferences[0].kind: Invalid value: \"\": must not be empty");
	owners(POD OWNER("  - {apiVersion: batch/v1, kind: Job, name: \"\", uid: u}\n"),
		"metadata.ownerReferences[0].name: Invalid value: \"\": must not be empty");
	owners(POD OWNER("  - {apiVersion: v1, kind: Event, name: e, uid: u}\n"),
		"metadata.ownerReferences[0]: Invalid value: \"/v1, Kind=Event\": /v1, Kind=Event "
		"is disallowed from being an owner");
	owners(POD OWNER("  - {apiVersion: batch/v1, kind: Job, name: a, uid: u1, controller: true}\n"
			  "  - {apiVersion: batch/v1, kind: Job, name: b, uid: u2, controller: true}\n"),
		"metadata.ownerReferences[1].controller: Invalid value: true: Only one reference "
		"can have Controller set to true. Found \"true\" in references for Job/a and Job/b");
	owners(POD OWNER("  - {apiVersion: batch/v1, kind: Job, name: j, uid: 7}\n"),
		"metadata.ownerReferences[0].uid: Invalid value: 7: must be a string");
	owners(POD "metadata: {name: a, ownerReferences: {}}\n" CONTAINERS,
		"metadata.ownerReferences: Invalid value: {}: must be a list");
#undef OWNER
}
END_TEST

START_TEST(test_workload_union)
{
	valid(WL "spec:\n  podGroupTemplates: [{name: a, " GANG(1) "}]\n");
	invalid(WL "spec: {podGroupTemplates: []}\n",
		"spec: Invalid value: \"\": must specify one of: `compositePodGroupTemplates`, "
		"`podGroupTemplates`");
	invalid(WL "spec:\n  podGroupTemplates: [{name: a, " GANG(1) "}]\n"
		   "  compositePodGroupTemplates:\n"
		   "  - {name: b, " CGANG(1) ", podGroupTemplates: [{name: c, " GANG(1) "}]}\n",
		"spec: Invalid value: \"{compositePodGroupTemplates, podGroupTemplates}\": must "
		"specify exactly one of: `compositePodGroupTemplates`, `podGroupTemplates`");
	invalid(WL, "spec: Required value");
}
END_TEST

START_TEST(test_workload_max_templates)
{
	const char *eight = WL "spec:\n  podGroupTemplates:\n"
			       "  - {name: a1, " GANG(1) "}\n  - {name: a2, " GANG(1) "}\n"
			       "  - {name: a3, " GANG(1) "}\n  - {name: a4, " GANG(1) "}\n"
			       "  - {name: a5, " GANG(1) "}\n  - {name: a6, " GANG(1) "}\n"
			       "  - {name: a7, " GANG(1) "}\n  - {name: a8, " GANG(1) "}\n";
	char nine[2048];

	valid(eight);
	snprintf(nine, sizeof(nine), "%s  - {name: a9, " GANG(1) "}\n", eight);
	invalid(nine, "spec.podGroupTemplates: Too many: 9: must have at most 8 items");
	/* Inside a composite template too. */
	invalid(WL "spec:\n  compositePodGroupTemplates:\n  - name: r\n    " CGANG(1) "\n"
		   "    compositePodGroupTemplates:\n"
		   "    - {name: c1, " CGANG(1) ", podGroupTemplates: [{name: l1, " GANG(1) "}]}\n"
		   "    - {name: c2, " CGANG(1) ", podGroupTemplates: [{name: l2, " GANG(1) "}]}\n"
		   "    - {name: c3, " CGANG(1) ", podGroupTemplates: [{name: l3, " GANG(1) "}]}\n"
		   "    - {name: c4, " CGANG(1) ", podGroupTemplates: [{name: l4, " GANG(1) "}]}\n"
		   "    - {name: c5, " CGANG(1) ", podGroupTemplates: [{name: l5, " GANG(1) "}]}\n"
		   "    - {name: c6, " CGANG(1) ", podGroupTemplates: [{name: l6, " GANG(1) "}]}\n"
		   "    - {name: c7, " CGANG(1) ", podGroupTemplates: [{name: l7, " GANG(1) "}]}\n"
		   "    - {name: c8, " CGANG(1) ", podGroupTemplates: [{name: l8, " GANG(1) "}]}\n"
		   "    - {name: c9, " CGANG(1) ", podGroupTemplates: [{name: l9, " GANG(1) "}]}\n",
		"spec.compositePodGroupTemplates[0].compositePodGroupTemplates: Too many: 9: must "
		"have at most 8 items");
}
END_TEST

START_TEST(test_workload_depth)
{
	/* Four levels: three composites and a leaf. */
	valid(WL "spec:\n  compositePodGroupTemplates:\n  - name: l1\n    " CGANG(1) "\n"
		 "    compositePodGroupTemplates:\n    - name: l2\n      " CGANG(1) "\n"
		 "      compositePodGroupTemplates:\n      - name: l3\n        " CGANG(1) "\n"
		 "        podGroupTemplates: [{name: l4, " GANG(1) "}]\n");
	invalid(WL "spec:\n  compositePodGroupTemplates:\n  - name: l1\n    " CGANG(1) "\n"
		   "    compositePodGroupTemplates:\n    - name: l2\n      " CGANG(1) "\n"
		   "      compositePodGroupTemplates:\n      - name: l3\n        " CGANG(1) "\n"
		   "        compositePodGroupTemplates:\n        - name: l4\n          " CGANG(1) "\n"
		   "          podGroupTemplates: [{name: l5, " GANG(1) "}]\n",
		"spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0]."
		"compositePodGroupTemplates[0].compositePodGroupTemplates[0].podGroupTemplates: "
		"Forbidden: the template hierarchy must not be deeper than 4 levels");
}
END_TEST

START_TEST(test_workload_names)
{
	invalid(WL "spec:\n  compositePodGroupTemplates:\n  - name: replica\n    " CGANG(1) "\n"
		   "    podGroupTemplates:\n    - {name: driver, " GANG(1) "}\n"
		   "    - {name: workers, " GANG(1) "}\n"
		   "  - name: other\n    " CGANG(1) "\n"
		   "    podGroupTemplates: [{name: workers, " GANG(1) "}]\n",
		"spec.compositePodGroupTemplates[1].podGroupTemplates[0].name: Duplicate value: "
		"\"workers\"");
	invalid(WL "spec:\n  compositePodGroupTemplates:\n  - name: w\n    " CGANG(1) "\n"
		   "    podGroupTemplates:\n    - {name: x, " GANG(1) "}\n"
		   "    - {name: workers, " GANG(1) "}\n  - name: workers\n    " CGANG(1) "\n"
		   "    podGroupTemplates: [{name: y, " GANG(1) "}]\n",
		"spec.compositePodGroupTemplates[1].name: Duplicate value: \"workers\"");
	invalid(WL "spec:\n  podGroupTemplates: [{" GANG(1) "}]\n",
		"spec.podGroupTemplates[0].name: Required value");
	invalid(WL "spec:\n  podGroupTemplates: [{name: a.b, " GANG(1) "}]\n",
		"spec.podGroupTemplates[0].name: Invalid value: \"a.b\": a lowercase RFC 1123 label "
		"must consist of lower case alphanumeric characters or '-', and must start and end "
		"with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
		"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
}
END_TEST

START_TEST(test_workload_composite_needs_child)
{
	invalid(WL "spec:\n  compositePodGroupTemplates: [{name: r, " CGANG(1) "}]\n",
		"spec.compositePodGroupTemplates[0]: Required value: a composite template must have "
		"at least one of `compositePodGroupTemplates`, `podGroupTemplates`");
}
END_TEST

START_TEST(test_workload_disruption_all)
{
	valid(WL "spec:\n  compositePodGroupTemplates:\n  - name: r\n    " CGANG(1) "\n"
		 "    podGroupTemplates:\n"
		 "    - {name: a, " GANG(1) ", disruptionMode: {all: {}}}\n"
		 "    - {name: b, " GANG(1) "}\n");
	valid(WL "spec:\n  compositePodGroupTemplates:\n  - name: r\n    " CGANG(1) "\n"
		 "    disruptionMode: {all: {}}\n"
		 "    podGroupTemplates: [{name: a, " GANG(1) ", disruptionMode: {all: {}}}]\n");
	invalid(WL "spec:\n  compositePodGroupTemplates:\n  - name: r\n    " CGANG(1) "\n"
		   "    disruptionMode: {all: {}}\n"
		   "    podGroupTemplates:\n"
		   "    - {name: a, " GANG(1) ", disruptionMode: {all: {}}}\n"
		   "    - {name: b, " GANG(1) ", disruptionMode: {single: {}}}\n",
		"spec.compositePodGroupTemplates[0].podGroupTemplates[1].disruptionMode: Forbidden: "
		"must be `all` when the parent template's disruption mode is `all`");
}
END_TEST

START_TEST(test_min_count)
{
	valid(PG "metadata: {name: g}\nspec: {" GANG(1) "}\n");
	invalid(PG "metadata: {name: g}\nspec: {" GANG(0) "}\n",
		"spec.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or "
		"equal to 1");
	invalid(WL "spec:\n  compositePodGroupTemplates:\n  - name: r\n    " CGANG(-1) "\n"
		   "    podGroupTemplates: [{name: a, " GANG(1) "}]\n",
		"spec.compositePodGroupTemplates[0].schedulingPolicy.gang.minGroupCount: Invalid "
		"value: -1: must be greater than or equal to 1");
}
END_TEST

#define SLICE(s) "metadata: {name: g, annotations: {scheduling.podkernel.dev/slice-shape: " s "}}\n"
#define SLICE_PATH "metadata.annotations[scheduling.podkernel.dev/slice-shape]: "

/* What can be checked without the board; tiling into hosts is the scheduler's. */
START_TEST(test_slice_shape)
{
	valid(PG SLICE("4x4x8") "spec: {" GANG(32) "}\n");
	valid(PG SLICE("3x2x1") "spec: {" GANG(1) "}\n"); /* tiles no 2x2x1 host: at run time */
	invalid(PG SLICE("4x4") "spec: {" GANG(8) "}\n",
		SLICE_PATH "Invalid value: \"4x4\": expected chip extents AxBxC, e.g. 4x4x8");
	invalid(PG SLICE("0x4x4") "spec: {" GANG(8) "}\n",
		SLICE_PATH "Invalid value: \"0x4x4\": expected chip extents AxBxC, e.g. 4x4x8");
	invalid(PG SLICE("4x4x8") "spec: {" GANG(3) "}\n",
		SLICE_PATH "Invalid value: \"4x4x8\": 128 chips cannot be split evenly among "
			   "minCount 3 pods (one pod per host)");
	invalid(PG SLICE("4x4x8") "spec: {schedulingPolicy: {basic: {}}}\n",
		SLICE_PATH "Invalid value: \"4x4x8\": a slice needs spec.schedulingPolicy.gang "
			   "(one pod per host)");
	invalid(PG SLICE("64x64x32") "spec: {" GANG(1) "}\n",
		SLICE_PATH "Invalid value: \"64x64x32\": must be at most 65536 chips (one "
			   "superslice)");
	invalid(PG "metadata: {name: g, annotations: {scheduling.podkernel.dev/slice-shape: 8}}\n"
		   "spec: {" GANG(1) "}\n",
		SLICE_PATH "Invalid value: 8: must be a string");
	invalid(CPG SLICE("4x4x4") "spec: {workloadRef: {workloadName: w, templateName: t}, "
		    CGANG(1) "}\n",
		SLICE_PATH "Invalid value: \"4x4x4\": only a PodGroup (one pod per host of the "
			   "slice) can ask for a slice");
}
END_TEST

START_TEST(test_topology_constraints)
{
	valid(PG "metadata: {name: g}\nspec:\n  " GANG(2) "\n"
		 "  schedulingConstraints: {topology: [{level: topology.podkernel.dev/rack}]}\n");
	invalid(PG "metadata: {name: g}\nspec:\n  " GANG(2) "\n"
		   "  schedulingConstraints: {topology: [{key: a}, {key: b}]}\n",
		"spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item");
	invalid(PG "metadata: {name: g}\nspec:\n  " GANG(2) "\n"
		   "  schedulingConstraints: {topology: [{key: \"not a key\"}]}\n",
		"spec.schedulingConstraints.topology[0].key: Invalid value: \"not a key\": label key "
		"name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
		"and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')");
	invalid(PG "metadata: {name: g}\nspec:\n  " GANG(2) "\n"
		   "  schedulingConstraints: {topology: [{}]}\n",
		"spec.schedulingConstraints.topology[0].key: Required value");
}
END_TEST

START_TEST(test_priority)
{
	valid(PG "metadata: {name: g}\nspec: {" GANG(1) ", priority: 1000000000}\n");
	invalid(PG "metadata: {name: g}\nspec: {" GANG(1) ", priority: 1000000001}\n",
		"spec.priority: Invalid value: 1000000001: must be less than or equal to 1000000000");
	invalid(WL "spec:\n  podGroupTemplates: [{name: a, " GANG(1) ", priority: 2000000000}]\n",
		"spec.podGroupTemplates[0].priority: Invalid value: 2000000000: must be less than or "
		"equal to 1000000000");
	valid(POD "metadata: {name: p}\nspec: {containers: [{name: c}], priority: 2000001000}\n");
	invalid(POD "metadata: {name: p}\nspec: {containers: [{name: c}], priority: 2000001001}\n",
		"spec.priority: Invalid value: 2000001001: must be less than or equal to 2000001000");
}
END_TEST

START_TEST(test_pod_group_parent_needs_workload)
{
	valid(PG "metadata: {name: g}\nspec:\n  " GANG(1) "\n  parentCompositePodGroupName: r\n"
		 "  workloadRef: {workloadName: job, templateName: workers}\n");
	invalid(PG "metadata: {name: g}\nspec:\n  " GANG(1) "\n  parentCompositePodGroupName: r\n",
		"spec.workloadRef: Required value: must be set when `parentCompositePodGroupName` is "
		"set");
	valid(PG "metadata: {name: standalone}\nspec: {" GANG(3) "}\n");
}
END_TEST

START_TEST(test_composite_pod_group)
{
	valid(CPG "metadata: {name: r}\nspec:\n  " CGANG(2) "\n"
		  "  workloadRef: {workloadName: job, templateName: root}\n");
	invalid(CPG "metadata: {name: r}\nspec:\n  " CGANG(2) "\n",
		"spec.workloadRef: Required value");
	invalid(CPG "metadata: {name: r}\nspec:\n  workloadRef: {workloadName: job, templateName: "
		    "root}\n",
		"spec.schedulingPolicy: Required value");
	invalid(CPG "metadata: {name: r}\nspec:\n  workloadRef: {workloadName: job, templateName: "
		    "root}\n  schedulingPolicy: {basic: {}, gang: {minGroupCount: 1}}\n",
		"spec.schedulingPolicy: Invalid value: \"{basic, gang}\": must specify exactly one "
		"of: `basic`, `gang`");
	invalid(CPG "metadata: {name: r}\nspec:\n  " CGANG(2) "\n  workloadRef: {workloadName: job}\n",
		"spec.workloadRef.templateName: Required value");
}
END_TEST

START_TEST(test_pod_rules)
{
	valid(POD "metadata: {name: p}\nspec:\n  containers:\n"
		  "  - {name: a, resources: {requests: {cpu: 250m, memory: 1Gi}}}\n"
		  "  nodeSelector: {kubernetes.io/hostname: n1}\n");
	invalid(POD "metadata: {name: p}\nspec:\n  containers:\n"
		    "  - {name: a, resources: {requests: {cpu: abc}}}\n",
		"spec.containers[0].resources.requests[cpu]: Invalid value: \"abc\": must be a valid "
		"quantity");
	invalid(POD "metadata: {name: p}\nspec:\n  containers: [{name: c}]\n  nodeSelector: {zone: \"a b\"}\n",
		"spec.nodeSelector: Invalid value: \"a b\": label value must consist of alphanumeric "
		"characters, '-', '_' or '.', and must start and end with an alphanumeric character "
		"(e.g. 'MyName', 'my.name' or '123-abc')");
	invalid(POD "metadata: {name: p}\nspec: {containers: [{name: c}], schedulingGroup: {podGroupName: Bad}}\n",
		"spec.schedulingGroup.podGroupName: Invalid value: \"Bad\": a lowercase RFC 1123 "
		"subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
		"start and end with an alphanumeric character (e.g. 'example.com', regex used for "
		"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
	/* A pod runs containers: without them it could never be bound. */
	invalid(POD "metadata: {name: p}\n", "spec: Required value");
	invalid(POD "metadata: {name: p}\nspec: {}\n", "spec.containers: Required value");
	invalid(POD "metadata: {name: p}\nspec: {containers: []}\n",
		"spec.containers: Required value");
	invalid(POD "metadata: {name: p}\nspec: {containers: null, nodeName: n1}\n",
		"spec.containers: Required value");
}
END_TEST

START_TEST(test_node_rules)
{
	valid(NODE "metadata: {name: n}\nstatus: {allocatable: {cpu: \"8\"}, capacity: {cpu: \"8\"}}\n");
	invalid(NODE "metadata: {name: n}\nstatus: {allocatable: {cpu: 8x}}\n",
		"status.allocatable[cpu]: Invalid value: \"8x\": must be a valid quantity");
	invalid(NODE "metadata: {name: n}\nstatus: {allocatable: {cpu: \"8\"}, capacity: {cpu: q}}\n",
		"status.capacity[cpu]: Invalid value: \"q\": must be a valid non-negative quantity");
}
END_TEST

START_TEST(test_priority_class_rules)
{
	valid(PC "metadata: {name: high}\nvalue: 1000000000\n");
	invalid(PC "metadata: {name: high}\nvalue: 1000000001\n",
		"value: Forbidden: maximum allowed value of a user defined priority is 1000000000");
	valid(PC "metadata: {name: system-node-critical}\nvalue: 2000001000\n");
	invalid(PC "metadata: {name: system-mine}\nvalue: 5\n",
		"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
		"for system use only");
}
END_TEST

#define LEASE "apiVersion: coordination.k8s.io/v1\nkind: Lease\n"
START_TEST(test_lease_rules)
{
	valid(LEASE "metadata: {name: n1, namespace: kube-node-lease}\n"
		    "spec: {holderIdentity: n1, leaseDurationSeconds: 40,"
		    " renewTime: \"2026-01-01T00:00:00.123456Z\"}\n");
	valid(LEASE "metadata: {name: n1}\n");
	invalid(LEASE "metadata: {name: n1}\nspec: {leaseDurationSeconds: 0}\n",
		"spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0");
	invalid(LEASE "metadata: {name: n1}\nspec: {leaseTransitions: -1}\n",
		"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0");
	invalid(LEASE "metadata: {name: n1}\nspec: {renewTime: yesterday}\n",
		"spec.renewTime: Invalid value: \"yesterday\": must be an RFC 3339 time "
		"(e.g. 2024-05-01T10:00:00.000000Z)");
	invalid(LEASE "metadata: {name: n1}\nspec: {holderIdentity: 3}\n",
		"spec.holderIdentity: Invalid value: 3: must be a string");
	invalid("apiVersion: coordination.k8s.io/v1beta1\nkind: Lease\nmetadata: {name: n1}\n",
		"apiVersion: Unsupported value: \"coordination.k8s.io/v1beta1\": supported values: "
		"\"coordination.k8s.io/v1\"");
}
END_TEST

#define KUEUE "apiVersion: kueue.x-k8s.io/v1beta2\n"
#define CQ_HEAD KUEUE "kind: ClusterQueue\nmetadata: {name: cluster-queue}\n"
#define CQ_GROUPS                                                                                  \
	"  resourceGroups:\n"                                                                       \
	"  - coveredResources: [cpu, memory]\n"                                                     \
	"    flavors:\n"                                                                            \
	"    - name: default-flavor\n"                                                              \
	"      resources:\n"                                                                        \
	"      - {name: cpu, nominalQuota: 9}\n"

/* Kueue's single ClusterQueue setup, and each field not implemented refused by path. */
START_TEST(test_kueue_rules)
{
	valid(KUEUE "kind: ResourceFlavor\nmetadata: {name: default-flavor}\n");
	valid(CQ_HEAD "spec:\n  namespaceSelector: {}\n  queueingStrategy: StrictFIFO\n" CQ_GROUPS
		      "      - {name: memory, nominalQuota: 36Gi}\n");
	valid(KUEUE "kind: LocalQueue\nmetadata: {name: user-queue, namespace: default}\n"
		    "spec: {clusterQueue: cluster-queue}\n");
	valid(CQ_HEAD "spec:\n  cohortName: team\n" CQ_GROUPS
		      "      - {name: memory, nominalQuota: 1Gi, borrowingLimit: 1Gi, lendingLimit: 0}\n");
	invalid(CQ_HEAD "spec:\n  cohortName: Team\n",
		"spec.cohortName: Invalid value: \"Team\": a lowercase RFC 1123 subdomain must "
		"consist of lower case alphanumeric characters, '-' or '.', and must start and end "
		"with an alphanumeric character");
	valid(CQ_HEAD "spec:\n  preemption: {withinClusterQueue: LowerPriority, "
		      "reclaimWithinCohort: Any, borrowWithinCohort: {policy: Never}}\n");
	valid(CQ_HEAD "spec:\n  fairSharing: {weight: \"0.5\"}\n");
	invalid(CQ_HEAD "spec:\n  fairSharing: {weight: -1}\n",
		"spec.fairSharing.weight: Invalid value: -1: must be greater than or equal to 0");
	invalid(CQ_HEAD "spec:\n  preemption: {withinClusterQueue: LowerOrNewerEqualPriority}\n",
		"spec.preemption.withinClusterQueue: Unsupported value: \"LowerOrNewerEqualPriority\": "
		"supported values: \"Never\", \"LowerPriority\" (LowerOrNewerEqualPriority is not "
		"implemented)");
	/* Kueue's preemption while borrowing: LowerPriority, under a threshold */
	valid(CQ_HEAD "spec:\n  cohortName: team\n  preemption: {reclaimWithinCohort: Any, "
		      "borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}}\n");
	invalid(CQ_HEAD "spec:\n  preemption: {borrowWithinCohort: {policy: LowerPriority}}\n",
		"spec.preemption.borrowWithinCohort.policy: Invalid value: \"LowerPriority\": "
		"reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never");
	invalid(CQ_HEAD "spec:\n  preemption: {reclaimWithinCohort: Any, borrowWithinCohort: "
			"{policy: Any}}\n",
		"spec.preemption.borrowWithinCohort.policy: Unsupported value: \"Any\": "
		"supported values: \"Never\", \"LowerPriority\"");
	invalid(CQ_HEAD "spec:\n  preemption: {reclaimWithinCohort: Any, borrowWithinCohort: "
			"{policy: LowerPriority, maxPriorityThreshold: high}}\n",
		"spec.preemption.borrowWithinCohort.maxPriorityThreshold: Invalid value: must be "
		"an integer (int32)");
	/* Kueue's flavorFungibility: MayStopSearch or TryNextFlavor; no preference */
	valid(CQ_HEAD "spec:\n  flavorFungibility: {whenCanBorrow: TryNextFlavor, "
		      "whenCanPreempt: MayStopSearch}\n");
	invalid(CQ_HEAD "spec:\n  flavorFungibility: {whenCanBorrow: Borrow}\n",
		"spec.flavorFungibility.whenCanBorrow: Unsupported value: \"Borrow\": supported "
		"values: \"MayStopSearch\", \"TryNextFlavor\"");
	invalid(CQ_HEAD "spec:\n  flavorFungibility: {whenCanPreempt: Always}\n",
		"spec.flavorFungibility.whenCanPreempt: Unsupported value: \"Always\": supported "
		"values: \"MayStopSearch\", \"TryNextFlavor\"");
	invalid(CQ_HEAD "spec:\n  flavorFungibility: {whenCanBorrow: TryNextFlavor, "
			"whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}\n",
		"spec.flavorFungibility.preference: Forbidden: not implemented (a flavor that "
		"borrows is preferred to one that preempts)");
	valid(CQ_HEAD "spec:\n  stopPolicy: HoldAndDrain\n");
	invalid(CQ_HEAD "spec:\n  queueingStrategy: LIFO\n",
		"spec.queueingStrategy: Unsupported value: \"LIFO\": supported values: "
		"\"StrictFIFO\", \"BestEffortFIFO\"");
	invalid(CQ_HEAD "spec:\n" CQ_GROUPS "      - {name: memory, nominalQuota: 1Gi, "
			"borrowingLimit: 1Gi}\n",
		"spec.resourceGroups[0].flavors[0].resources[1].borrowingLimit: Invalid value: "
		"must be nil when cohortName is empty");
	invalid(CQ_HEAD "spec:\n" CQ_GROUPS "      - {name: gpu, nominalQuota: 1}\n",
		"spec.resourceGroups[0].flavors[0].resources[1].name: Invalid value: \"gpu\": "
		"must match the name in coveredResources");
	invalid(CQ_HEAD "spec:\n" CQ_GROUPS "      - {name: memory, nominalQuota: -1}\n",
		"spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: Invalid value: -1: "
		"must be greater than or equal to 0");
	invalid(CQ_HEAD "spec:\n  namespaceSelector:\n    matchExpressions: [{key: team, "
			"operator: In}]\n",
		"spec.namespaceSelector.matchExpressions[0].values: Required value: must be "
		"specified when `operator` is 'In' or 'NotIn'");
	invalid(KUEUE "kind: LocalQueue\nmetadata: {name: q, namespace: default}\nspec: {}\n",
		"spec.clusterQueue: Required value");
	valid(KUEUE "kind: ResourceFlavor\nmetadata: {name: spot}\nspec:\n"
		    "  nodeLabels: {instance-type: spot}\n"
		    "  nodeTaints: [{key: spot, value: \"true\", effect: NoSchedule}]\n"
		    "  tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]\n");
	invalid(KUEUE "kind: ResourceFlavor\nmetadata: {name: a}\nspec:\n"
		      "  nodeTaints: [{key: spot, effect: Sometimes}]\n",
		"spec.nodeTaints[0].effect: Unsupported value: \"Sometimes\": supported values: "
		"\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
	valid(KUEUE "kind: ResourceFlavor\nmetadata: {name: a}\nspec: {topologyName: default}\n");
	invalid(KUEUE "kind: ResourceFlavor\nmetadata: {name: a}\nspec: {topologyName: No_Such}\n",
		"spec.topologyName: Invalid value: \"No_Such\": a lowercase RFC 1123 subdomain must "
		"consist of lower case alphanumeric characters, '-' or '.', and must start and end "
		"with an alphanumeric character");
	valid(KUEUE "kind: LocalQueue\nmetadata: {name: q, namespace: default}\n"
		    "spec: {clusterQueue: cq, stopPolicy: Hold}\n");
	invalid(KUEUE "kind: LocalQueue\nmetadata: {name: q, namespace: default}\n"
		      "spec: {clusterQueue: cq, stopPolicy: Pause}\n",
		"spec.stopPolicy: Unsupported value: \"Pause\": supported values: \"None\", "
		"\"Hold\", \"HoldAndDrain\"");
	/* Kueue's hierarchical cohorts: a root with quota, a child that may borrow from it */
	valid(KUEUE "kind: Cohort\nmetadata: {name: root}\nspec:\n" CQ_GROUPS
		    "      - {name: memory, nominalQuota: 36Gi}\n");
	valid(KUEUE "kind: Cohort\nmetadata: {name: team}\nspec:\n  parentName: root\n" CQ_GROUPS
		    "      - {name: memory, nominalQuota: 4Gi, borrowingLimit: 8Gi, "
		    "lendingLimit: 2Gi}\n");
	invalid(KUEUE "kind: Cohort\nmetadata: {name: team}\nspec: {parentName: team}\n",
		"spec.parentName: Invalid value: \"team\": a Cohort is not its own parent");
	invalid(KUEUE "kind: Cohort\nmetadata: {name: root}\nspec:\n" CQ_GROUPS
		      "      - {name: memory, nominalQuota: 1Gi, lendingLimit: 1Gi}\n",
		"spec.resourceGroups[0].flavors[0].resources[1].lendingLimit: Invalid value: "
		"must be nil when parentName is empty");
	invalid(KUEUE "kind: Cohort\nmetadata: {name: team}\nspec:\n  parentName: root\n" CQ_GROUPS
		      "      - {name: memory, nominalQuota: 1Gi, lendingLimit: 2Gi}\n",
		"spec.resourceGroups[0].flavors[0].resources[1].lendingLimit: Invalid value: "
		"\"2Gi\": must be less than or equal to the nominalQuota");
	invalid(KUEUE "kind: Cohort\nmetadata: {name: root}\nspec: {fairSharing: {weight: 1}}\n",
		"spec.fairSharing: Forbidden: not implemented (fair sharing is not implemented)");
}
END_TEST

/* A ConfigMap: config keys in one of data and binaryData, strings and base64. */
START_TEST(test_config_map_rules)
{
	char key[255], yaml[512], want[1024];

	valid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team}\n"
	      "data: {a.conf: \"x=1\", KEY_2: \"\"}\nbinaryData: {blob: aGk=, empty: \"\"}\n"
	      "immutable: false\n");
	valid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a/b: x}\n",
		"data[a/b]: Invalid value: \"a/b\": a valid config key must consist of alphanumeric "
		"characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
		"used for validation is '[-._a-zA-Z0-9]+')");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {..: x}\n",
		"data[..]: Invalid value: \"..\": must not be '..'");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {..a: x}\n",
		"data[..a]: Invalid value: \"..a\": must not start with '..'");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 7}\n",
		"data[a]: Invalid value: must be a string");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData: {a: \"a=b\"}\n",
		"binaryData[a]: Invalid value: must be a base64-encoded string");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: x}\n"
		"binaryData: {a: aGk=}\n",
		"binaryData[a]: Invalid value: \"a\": duplicate of key present in data");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nimmutable: true\n",
		"immutable: Unsupported value: true: not implemented (the data of a ConfigMap can "
		"always change here)");
	memset(key, 'k', 254);
	key[254] = '\0';
	snprintf(yaml, sizeof(yaml),
		 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {%s: x}\n", key);
	snprintf(want, sizeof(want),
		 "data[%s]: Invalid value: \"%s\": must be no more than 253 characters", key, key);
	invalid(yaml, want);
}
END_TEST

/* Kueue's plain pod group on a queued pod: label and annotation together, a count of at least 1. */
START_TEST(test_kueue_pod_group_rules)
{
#define QPOD(labels, ann, spec)                                                                    \
	POD "metadata:\n  name: p\n  labels: {kueue.x-k8s.io/queue-name: q" labels "}\n"          \
	    "  annotations: {" ann "}\nspec:\n" spec "  containers: [{name: c, image: x}]\n"
	valid(QPOD(", kueue.x-k8s.io/pod-group-name: g", "kueue.x-k8s.io/pod-group-total-count: \"2\"",
		   "  schedulingGroup: {podGroupName: g}\n"));
	invalid(QPOD(", kueue.x-k8s.io/pod-group-name: g", "", ""),
		"metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Required value: both "
		"the 'kueue.x-k8s.io/pod-group-total-count' annotation and the "
		"'kueue.x-k8s.io/pod-group-name' label should be set");
	invalid(QPOD("", "kueue.x-k8s.io/pod-group-total-count: \"2\"", ""),
		"metadata.labels[kueue.x-k8s.io/pod-group-name]: Required value: both the "
		"'kueue.x-k8s.io/pod-group-total-count' annotation and the "
		"'kueue.x-k8s.io/pod-group-name' label should be set");
	invalid(QPOD(", kueue.x-k8s.io/pod-group-name: g", "kueue.x-k8s.io/pod-group-total-count: two",
		     ""),
		"metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Invalid value: \"two\": "
		"group total count should be an integer greater than zero");
	invalid(QPOD(", kueue.x-k8s.io/pod-group-name: g", "kueue.x-k8s.io/pod-group-total-count: \"2\"",
		     "  schedulingGroup: {podGroupName: h}\n"),
		"spec.schedulingGroup.podGroupName: Invalid value: \"h\": a queued pod of Kueue's pod "
		"group \"g\" (metadata.labels[kueue.x-k8s.io/pod-group-name]) is in the PodGroup "
		"of that name");
	/* not queued: Kueue's labels are not Kueue's business */
	valid(POD "metadata:\n  name: p\n  annotations: {kueue.x-k8s.io/pod-group-total-count: "
		  "\"0\"}\nspec:\n  containers: [{name: c, image: x}]\n");
#undef QPOD
}
END_TEST

/* Kueue's sample WorkloadPriorityClass: cluster-scoped, value required and an int32. */
START_TEST(test_workload_priority_class_rules)
{
	valid(KUEUE "kind: WorkloadPriorityClass\nmetadata: {name: sample-priority}\n"
		    "value: 10000\ndescription: \"Sample priority\"\n");
	invalid(KUEUE "kind: WorkloadPriorityClass\nmetadata: {name: p}\n",
		"value: Required value");
	invalid(KUEUE "kind: WorkloadPriorityClass\nmetadata: {name: p}\nvalue: 3000000000\n",
		"value: Invalid value: 3000000000: must be a 32-bit integer");
	invalid(KUEUE "kind: WorkloadPriorityClass\nmetadata: {name: p, namespace: team}\n"
		      "value: 1\n",
		"metadata.namespace: Forbidden: not allowed on this type");
	invalid(KUEUE "kind: WorkloadPriorityClass\nmetadata: {name: p}\nvalue: 1\n"
		      "description: 7\n",
		"description: Invalid value: 7: must be a string");
}
END_TEST

/* Kueue's Topology: levels of node labels, unique, the hostname last. */
START_TEST(test_topology_rules)
{
	valid(KUEUE "kind: Topology\nmetadata: {name: default}\nspec:\n  levels:\n"
		    "  - nodeLabel: cloud.provider.com/topology-block\n"
		    "  - nodeLabel: cloud.provider.com/topology-rack\n"
		    "  - nodeLabel: kubernetes.io/hostname\n");
	invalid(KUEUE "kind: Topology\nmetadata: {name: t}\n", "spec: Required value");
	invalid(KUEUE "kind: Topology\nmetadata: {name: t}\nspec: {levels: []}\n",
		"spec.levels: Required value: at least one level");
	invalid(KUEUE "kind: Topology\nmetadata: {name: t}\nspec: {levels: [{}]}\n",
		"spec.levels[0].nodeLabel: Required value");
	invalid(KUEUE "kind: Topology\nmetadata: {name: t}\nspec:\n  levels: [{nodeLabel: a/b}, "
		      "{nodeLabel: a/b}]\n",
		"spec.levels[1].nodeLabel: Duplicate value: \"a/b\": must be unique");
	invalid(KUEUE "kind: Topology\nmetadata: {name: t}\nspec:\n  levels: [{nodeLabel: "
		      "kubernetes.io/hostname}, {nodeLabel: rack}]\n",
		"spec.levels[0].nodeLabel: Invalid value: \"kubernetes.io/hostname\": the "
		"kubernetes.io/hostname label can only be used at the lowest level of topology");
	invalid(KUEUE "kind: Topology\nmetadata: {name: t}\nspec: {levels: [{nodeLabel: \"a b\"}]}\n",
		"spec.levels[0].nodeLabel: Invalid value: label key name part must consist of "
		"alphanumeric characters, '-', '_' or '.', and must start and end with an "
		"alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')");
	invalid(KUEUE "kind: Topology\nmetadata: {name: t, namespace: x}\nspec: {levels: "
		      "[{nodeLabel: rack}]}\n",
		"metadata.namespace: Forbidden: not allowed on this type");
}
END_TEST

START_TEST(test_all_errors_reported)
{
	struct pk_errors errs = { 0 };
	json_t *o = obj_of(WL "spec:\n  compositePodGroupTemplates:\n  - name: r\n    " CGANG(0) "\n"
			      "    podGroupTemplates: [{name: r, " GANG(1) "}]\n");

	ck_assert_int_eq(pk_validate(o, &errs), -EINVAL);
	ck_assert_uint_eq(errs.n, 2);
	pk_errors_clear(&errs);
	json_decref(o);
	/* Metadata problems come first even when the decoder found others earlier. */
	o = obj_of(POD "metadata: {name: Bad}\nspec: {containers: [{name: c}], priority: x}\n");
	ck_assert_int_eq(pk_validate(o, &errs), -EINVAL);
	ck_assert_uint_eq(errs.n, 2);
	ck_assert_ptr_nonnull(strstr(errs.msg[0], "metadata.name: Invalid value: \"Bad\""));
	ck_assert_str_eq(errs.msg[1], "spec.priority: Invalid value: \"x\": must be an integer");
	pk_errors_clear(&errs);
	/* The caller's tree is not modified by validation. */
	json_decref(o);
	o = obj_of(PG "metadata: {name: g}\nspec: {" GANG(1) ", schedulingConstraints: "
		      "{topology: [{level: rack}]}}\n");
	ck_assert_int_eq(pk_validate(o, NULL), 0);
	ck_assert_str_eq(pk_get_string(o, "spec.schedulingConstraints.topology[0].level"), "rack");
	json_decref(o);
	ck_assert_int_eq(pk_validate(NULL, NULL), -EINVAL);
}
END_TEST

/* clang-format on */

int main(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("validate");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_kind_and_api_version);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_labels);
	tcase_add_test(tc, test_owner_references);
	tcase_add_test(tc, test_workload_union);
	tcase_add_test(tc, test_workload_max_templates);
	tcase_add_test(tc, test_workload_depth);
	tcase_add_test(tc, test_workload_names);
	tcase_add_test(tc, test_workload_composite_needs_child);
	tcase_add_test(tc, test_workload_disruption_all);
	tcase_add_test(tc, test_min_count);
	tcase_add_test(tc, test_topology_constraints);
	tcase_add_test(tc, test_slice_shape);
	tcase_add_test(tc, test_priority);
	tcase_add_test(tc, test_pod_group_parent_needs_workload);
	tcase_add_test(tc, test_composite_pod_group);
	tcase_add_test(tc, test_pod_rules);
	tcase_add_test(tc, test_node_rules);
	tcase_add_test(tc, test_priority_class_rules);
	tcase_add_test(tc, test_lease_rules);
	tcase_add_test(tc, test_all_errors_reported);
	tcase_add_test(tc, test_kueue_rules);
	tcase_add_test(tc, test_kueue_pod_group_rules);
	tcase_add_test(tc, test_workload_priority_class_rules);
	tcase_add_test(tc, test_config_map_rules);
	tcase_add_test(tc, test_topology_rules);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

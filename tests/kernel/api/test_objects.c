/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_objects.c — typed views: Nodes, Pods, PriorityClasses, PodGroups,
 * CompositePodGroups and Workload template trees, and the field-path errors
 * their decoders report.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"

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

static bool has_error(const struct pk_errors *errs, const char *want)
{
	for (size_t i = 0; i < errs->n; i++)
		if (strcmp(errs->msg[i], want) == 0)
			return true;
	return false;
}

static void dump(const struct pk_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		fprintf(stderr, "  error: %s\n", errs->msg[i]);
}

#define ck_assert_error(errs, want)                                                                \
	do {                                                                                       \
		if (!has_error((errs), (want)))                                                    \
			dump(errs);                                                                \
		ck_assert_msg(has_error((errs), (want)), "missing error: %s", (want));             \
	} while (0)

START_TEST(test_node)
{
	json_t *o =
	    obj_of("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
		   "  creationTimestamp: \"2024-01-01T00:00:10Z\"\n"
		   "  labels: {topology.podkernel.dev/cube: c0, kubernetes.io/hostname: n1}\n"
		   "spec:\n  unschedulable: true\n  taints:\n"
		   "  - {key: dedicated, value: tpu, effect: NoSchedule}\n"
		   "  - {key: gone, effect: NoExecute}\n"
		   "status:\n  capacity: {cpu: \"999\"}\n"
		   "  allocatable: {cpu: \"64\", memory: 256Gi, google.com/tpu: 4, x: 500m}\n");
	struct pk_errors errs = {0};
	struct pk_node *n = NULL;

	ck_assert_int_eq(pk_node_decode(o, &n, &errs), 0);
	ck_assert_uint_eq(errs.n, 0);
	ck_assert_str_eq(n->meta.name, "n1");
	ck_assert_ptr_null(n->meta.namespace);
	ck_assert_int_eq(n->meta.creation, 1704067210);
	ck_assert_str_eq(pk_meta_label(&n->meta, "topology.podkernel.dev/cube"), "c0");
	ck_assert_ptr_null(pk_meta_label(&n->meta, "nope"));
	ck_assert(n->unschedulable);
	ck_assert_uint_eq(n->ntaints, 2);
	ck_assert_str_eq(n->taints[0].value, "tpu");
	ck_assert_int_eq(n->taints[1].effect, PK_TAINT_NO_EXECUTE);
	ck_assert_int_eq(pk_node_allocatable(n, "cpu"), 64000);
	ck_assert_int_eq(pk_node_allocatable(n, "memory"), 256LL * 1024 * 1024 * 1024 * 1000);
	ck_assert_int_eq(pk_node_allocatable(n, "google.com/tpu"), 4000);
	ck_assert_int_eq(pk_node_allocatable(n, "x"), 500);
	ck_assert_int_eq(pk_node_allocatable(n, "pods"), 110000);
	ck_assert_int_eq(pk_node_allocatable(n, "nvidia.com/gpu"), 0);
	ck_assert_ptr_eq(n->raw, o);
	pk_node_free(n);
	json_decref(o);
}
END_TEST

START_TEST(test_node_capacity_fallback_and_errors)
{
	json_t *o = obj_of("kind: Node\nmetadata: {name: n}\n"
			   "status: {capacity: {cpu: 8, pods: \"32\"}}\n");
	struct pk_errors errs = {0};
	struct pk_node *n = NULL;

	ck_assert_int_eq(pk_node_decode(o, &n, &errs), 0);
	ck_assert_int_eq(pk_node_allocatable(n, "cpu"), 8000);
	ck_assert_int_eq(pk_node_allocatable(n, "pods"), 32000);
	pk_node_free(n);
	json_decref(o);

	n = NULL;
	o = obj_of(
	    "kind: Node\nmetadata: {name: n, labels: {a: 1}}\n"
	    "spec: {unschedulable: maybe, taints: [{key: k, effect: Sometimes}, {value: v}]}\n"
	    "status: {allocatable: {cpu: lots, memory: \"-1\"}}\n");
	ck_assert_int_eq(pk_node_decode(o, &n, &errs), -EINVAL);
	ck_assert_ptr_null(n);
	ck_assert_error(&errs, "metadata.labels[a]: Invalid value: 1: must be a string");
	ck_assert_error(&errs, "spec.unschedulable: Invalid value: \"maybe\": must be a boolean");
	ck_assert_error(&errs, "spec.taints[0].effect: Unsupported value: \"Sometimes\": supported "
			       "values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"");
	ck_assert_error(&errs, "spec.taints[1].key: Required value");
	ck_assert_error(&errs, "spec.taints[1].effect: Required value");
	ck_assert_error(&errs, "status.allocatable[cpu]: Invalid value: \"lots\": must be a valid "
			       "quantity");
	ck_assert_error(&errs, "status.allocatable[memory]: Invalid value: \"-1\": must be greater "
			       "than or equal to 0");
	pk_errors_clear(&errs);
	/* Without an error list the call still fails cleanly. */
	ck_assert_int_eq(pk_node_decode(o, &n, NULL), -EINVAL);
	json_decref(o);
}
END_TEST

START_TEST(test_pod)
{
	json_t *o = obj_of(
	    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: u-1, labels: {app: x}}\n"
	    "spec:\n  schedulingGroup: {podGroupName: workers-0}\n  priority: 7\n"
	    "  priorityClassName: high\n  nodeSelector: {kubernetes.io/arch: amd64}\n"
	    "  affinity:\n    nodeAffinity:\n      "
	    "requiredDuringSchedulingIgnoredDuringExecution:\n"
	    "        nodeSelectorTerms:\n"
	    "        - matchExpressions:\n"
	    "          - {key: zone, operator: In, values: [a, b]}\n"
	    "          - {key: gpu, operator: Exists}\n"
	    "          - {key: cores, operator: Gt, values: [\"8\"]}\n"
	    "        - matchFields:\n"
	    "          - {key: metadata.name, operator: NotIn, values: [bad]}\n"
	    "  tolerations:\n  - {key: dedicated, operator: Equal, value: tpu, effect: "
	    "NoSchedule}\n"
	    "  - {operator: Exists}\n"
	    "  initContainers:\n  - {name: i, resources: {requests: {cpu: \"3\", memory: 1Gi}}}\n"
	    "  containers:\n  - {name: a, resources: {requests: {cpu: 500m, google.com/tpu: 4}}}\n"
	    "  - {name: b, resources: {requests: {cpu: \"1\"}, limits: {cpu: \"2\", memory: "
	    "2Gi}}}\n"
	    "  - {name: c}\n"
	    "  overhead: {cpu: 100m}\n");
	struct pk_errors errs = {0};
	struct pk_pod *p = NULL;

	ck_assert_int_eq(pk_pod_decode(o, &p, &errs), 0);
	ck_assert_str_eq(p->meta.namespace, "default");
	ck_assert_str_eq(p->meta.uid, "u-1");
	ck_assert_int_eq(p->meta.creation, INT64_MIN);
	ck_assert_str_eq(p->pod_group, "workers-0");
	ck_assert_ptr_null(p->node_name);
	ck_assert(p->has_priority);
	ck_assert_int_eq(p->priority, 7);
	ck_assert_str_eq(p->priority_class, "high");
	ck_assert_uint_eq(p->nnode_selector, 1);
	ck_assert_str_eq(p->node_selector[0].value, "amd64");
	ck_assert_uint_eq(p->naffinity, 2);
	ck_assert_uint_eq(p->affinity[0].nreqs, 3);
	ck_assert_int_eq(p->affinity[0].reqs[0].op, PK_SEL_IN);
	ck_assert_uint_eq(p->affinity[0].reqs[0].nvalues, 2);
	ck_assert_str_eq(p->affinity[0].reqs[0].values[1], "b");
	ck_assert_int_eq(p->affinity[0].reqs[1].op, PK_SEL_EXISTS);
	ck_assert_int_eq(p->affinity[0].reqs[2].op, PK_SEL_GT);
	ck_assert(p->affinity[1].reqs[0].field);
	ck_assert_int_eq(p->affinity[1].reqs[0].op, PK_SEL_NOT_IN);
	ck_assert_uint_eq(p->ntolerations, 2);
	ck_assert(p->tolerations[0].has_effect);
	ck_assert_int_eq(p->tolerations[1].op, PK_TOL_EXISTS);
	ck_assert(!p->tolerations[1].has_effect);
	/* cpu: max(0.5 + 1, init 3) + overhead 0.1; memory defaults from limits. */
	ck_assert_int_eq(pk_pod_request(p, "cpu"), 3100);
	ck_assert_int_eq(pk_pod_request(p, "memory"), 2LL * 1024 * 1024 * 1024 * 1000);
	ck_assert_int_eq(pk_pod_request(p, "google.com/tpu"), 4000);
	ck_assert_int_eq(pk_pod_request(p, "pods"), 0);
	pk_pod_free(p);
	json_decref(o);
}
END_TEST

START_TEST(test_pod_errors)
{
	json_t *o = obj_of(
	    "kind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n"
	    "spec:\n  priority: high\n  nodeName: 5\n"
	    "  affinity:\n    nodeAffinity:\n      "
	    "requiredDuringSchedulingIgnoredDuringExecution:\n"
	    "        nodeSelectorTerms:\n"
	    "        - matchExpressions:\n"
	    "          - {key: zone, operator: Near}\n"
	    "          - {key: zone, operator: In}\n"
	    "          - {key: zone, operator: Exists, values: [a]}\n"
	    "          - {key: zone, operator: Lt, values: [ten]}\n"
	    "          - {operator: Exists}\n"
	    "  tolerations:\n  - {operator: Maybe}\n  - {key: k, operator: Exists, value: v}\n"
	    "  - {value: v}\n"
	    "  containers:\n  - resources: {requests: {cpu: 1x}}\n  - 7\n");
	struct pk_errors errs = {0};
	struct pk_pod *p = NULL;
	const char *aff =
	    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
	    "nodeSelectorTerms[0].matchExpressions";
	char want[512];

	ck_assert_int_eq(pk_pod_decode(o, &p, &errs), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_error(&errs,
			"metadata.creationTimestamp: Invalid value: \"yesterday\": must be an "
			"RFC 3339 time (e.g. 2024-05-01T10:00:00Z)");
	ck_assert_error(&errs, "spec.priority: Invalid value: \"high\": must be an integer");
	ck_assert_error(&errs, "spec.nodeName: Invalid value: 5: must be a string");
	snprintf(want, sizeof(want),
		 "%s[0].operator: Unsupported value: \"Near\": supported values: "
		 "\"DoesNotExist\", \"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\"",
		 aff);
	ck_assert_error(&errs, want);
	snprintf(want, sizeof(want),
		 "%s[1].values: Required value: must be specified when "
		 "`operator` is 'In' or 'NotIn'",
		 aff);
	ck_assert_error(&errs, want);
	snprintf(want, sizeof(want),
		 "%s[2].values: Forbidden: may not be specified when `operator` "
		 "is 'Exists' or 'DoesNotExist'",
		 aff);
	ck_assert_error(&errs, want);
	snprintf(want, sizeof(want), "%s[3].values[0]: Invalid value: \"ten\": must be an integer",
		 aff);
	ck_assert_error(&errs, want);
	snprintf(want, sizeof(want), "%s[4].key: Required value", aff);
	ck_assert_error(&errs, want);
	ck_assert_error(&errs, "spec.tolerations[0].operator: Unsupported value: \"Maybe\": "
			       "supported values: \"Equal\", \"Exists\"");
	ck_assert_error(&errs, "spec.tolerations[1].operator: Invalid value: \"v\": value must be "
			       "empty when `operator` is 'Exists'");
	ck_assert_error(&errs, "spec.tolerations[2].operator: Invalid value: \"Equal\": operator "
			       "must be Exists when `key` is empty, which means \"match all values "
			       "and all keys\"");
	ck_assert_error(&errs, "spec.containers[0].resources.requests[cpu]: Invalid value: \"1x\": "
			       "must be a valid quantity");
	ck_assert_error(&errs, "spec.containers[1]: Invalid value: 7: must be an object");
	pk_errors_clear(&errs);
	json_decref(o);
}
END_TEST

START_TEST(test_pod_sidecars)
{
	/* Sidecars keep running: the later init container needs 1 + 2 cpu, and
	 * the regular containers run next to the 1 cpu sidecar. */
	json_t *o =
	    obj_of("kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n"
		   "  - {name: side, restartPolicy: Always, resources: {requests: {cpu: \"1\"}}}\n"
		   "  - {name: setup, resources: {requests: {cpu: \"2\"}}}\n"
		   "  containers:\n  - {name: a, resources: {requests: {cpu: 500m}}}\n");
	struct pk_pod *p = NULL;

	ck_assert_int_eq(pk_pod_decode(o, &p, NULL), 0);
	ck_assert_int_eq(pk_pod_request(p, "cpu"), 3000);
	pk_pod_free(p);
	json_decref(o);
	o = obj_of("kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n"
		   "  - {name: side, restartPolicy: Always, resources: {requests: {cpu: \"1\"}}}\n"
		   "  containers:\n  - {name: a, resources: {requests: {cpu: \"4\"}}}\n");
	ck_assert_int_eq(pk_pod_decode(o, &p, NULL), 0);
	ck_assert_int_eq(pk_pod_request(p, "cpu"), 5000);
	pk_pod_free(p);
	json_decref(o);
}
END_TEST

/* status.qosClass as kube-apiserver's ComputePodQOS gives it. */
static const char *qos_of(const char *spec)
{
	char yaml[1024];
	json_t *o;
	const char *q;

	snprintf(yaml, sizeof(yaml), "kind: Pod\nmetadata: {name: p}\nspec:\n%s", spec);
	o = obj_of(yaml);
	q = pk_pod_qos_class(o);
	json_decref(o);
	return q;
}

START_TEST(test_pod_qos_class)
{
	static const struct {
		const char *spec, *want;
	} cases[] = {
	    {"  containers: [{name: a}]\n", "BestEffort"},
	    /* only cpu and memory count, and only above zero */
	    {"  containers: [{name: a, resources: {requests: {nvidia.com/gpu: 1, cpu: \"0\"}}}]\n",
	     "BestEffort"},
	    {"  containers: [{name: a, resources: {requests: {cpu: 100m}}}]\n", "Burstable"},
	    /* requests default to limits */
	    {"  containers: [{name: a, resources: {limits: {cpu: \"1\", memory: 1Gi}}}]\n",
	     "Guaranteed"},
	    {"  containers:\n  - {name: a, resources: {requests: {cpu: \"1\", memory: 1Gi}, "
	     "limits: {cpu: 1000m, memory: 1Gi}}}\n"
	     "  - {name: b, resources: {limits: {cpu: \"2\", memory: 2Gi}}}\n",
	     "Guaranteed"},
	    {"  containers: [{name: a, resources: {requests: {cpu: 500m, memory: 1Gi}, "
	     "limits: {cpu: \"1\", memory: 1Gi}}}]\n",
	     "Burstable"},
	    /* a limit for cpu alone */
	    {"  containers: [{name: a, resources: {limits: {cpu: \"1\"}}}]\n", "Burstable"},
	    /* a container without limits spoils the others */
	    {"  containers:\n  - {name: a, resources: {limits: {cpu: \"1\", memory: 1Gi}}}\n"
	     "  - {name: b}\n",
	     "Burstable"},
	    /* init containers count */
	    {"  initContainers: [{name: i, resources: {requests: {memory: 1Gi}}}]\n"
	     "  containers: [{name: a}]\n",
	     "Burstable"},
	    /* pod-level resources decide when given */
	    {"  resources: {limits: {cpu: \"2\", memory: 2Gi}}\n"
	     "  containers: [{name: a, resources: {requests: {cpu: 100m}}}]\n",
	     "Guaranteed"},
	    {"  resources: {requests: {cpu: \"1\"}}\n  containers: [{name: a}]\n", "Burstable"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(strcmp(qos_of(cases[i].spec), cases[i].want) == 0,
			      "case %zu: %s, want %s", i, qos_of(cases[i].spec), cases[i].want);
}
END_TEST

START_TEST(test_priority_class)
{
	json_t *o = obj_of("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
			   "metadata: {name: high}\nvalue: 1000\nglobalDefault: true\n");
	struct pk_errors errs = {0};
	struct pk_priority_class *pc = NULL;

	ck_assert_int_eq(pk_priority_class_decode(o, &pc, &errs), 0);
	ck_assert_int_eq(pc->value, 1000);
	ck_assert(pc->global_default);
	ck_assert_ptr_null(pc->meta.namespace);
	pk_priority_class_free(pc);
	json_decref(o);
	o = obj_of("kind: PriorityClass\nmetadata: {name: x}\nvalue: 9999999999\n");
	ck_assert_int_eq(pk_priority_class_decode(o, &pc, &errs), -EINVAL);
	ck_assert_error(&errs, "value: Invalid value: 9999999999: must be a 32-bit integer");
	pk_errors_clear(&errs);
	json_decref(o);
	o = obj_of("kind: PriorityClass\nmetadata: {name: x}\n");
	ck_assert_int_eq(pk_priority_class_decode(o, &pc, &errs), -EINVAL);
	ck_assert_error(&errs, "value: Required value");
	pk_errors_clear(&errs);
	json_decref(o);
}
END_TEST

START_TEST(test_pod_group)
{
	json_t *o =
	    obj_of("apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\n"
		   "metadata: {name: workers-0, namespace: team}\n"
		   "spec:\n  workloadRef: {workloadName: job, templateName: workers}\n"
		   "  parentCompositePodGroupName: replica-0\n"
		   "  schedulingPolicy: {gang: {minCount: 4}}\n"
		   "  schedulingConstraints: {topology: [{level: topology.podkernel.dev/cube}]}\n"
		   "  priorityClassName: high\n  priority: 100\n");
	struct pk_errors errs = {0};
	struct pk_group *g = NULL;
	char *json;

	ck_assert_int_eq(pk_group_decode(o, &g, &errs), 0);
	ck_assert_int_eq(g->kind, PK_KIND_POD_GROUP);
	ck_assert_str_eq(g->meta.namespace, "team");
	ck_assert_str_eq(g->workload_name, "job");
	ck_assert_str_eq(g->template_name, "workers");
	ck_assert_str_eq(g->parent, "replica-0");
	ck_assert_int_eq(g->spec.policy, PK_POLICY_GANG);
	ck_assert_int_eq(g->spec.min_count, 4);
	ck_assert_str_eq(g->spec.topology_key, "topology.podkernel.dev/cube");
	ck_assert_int_eq(g->spec.disruption, PK_DISRUPTION_SINGLE);
	ck_assert(g->spec.has_priority);
	ck_assert_int_eq(g->spec.priority, 100);
	ck_assert_str_eq(g->spec.priority_class, "high");
	/* The alias "level" was rewritten to "key" in the tree. */
	json = pk_write_string(o, PK_FORMAT_JSON);
	ck_assert_ptr_nonnull(strstr(json, "\"key\": \"topology.podkernel.dev/cube\""));
	ck_assert_ptr_null(strstr(json, "\"level\""));
	free(json);
	pk_group_free(g);
	json_decref(o);
}
END_TEST

START_TEST(test_composite_pod_group)
{
	json_t *o = obj_of("apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n"
			   "metadata: {name: root}\n"
			   "spec:\n  workloadRef: {workloadName: job, templateName: root}\n"
			   "  schedulingPolicy: {gang: {minGroupCount: 2}}\n"
			   "  schedulingConstraints: {topology: [{key: block}]}\n"
			   "  disruptionMode: {all: {}}\n");
	struct pk_errors errs = {0};
	struct pk_group *g = NULL;

	ck_assert_int_eq(pk_group_decode(o, &g, &errs), 0);
	ck_assert_int_eq(g->kind, PK_KIND_COMPOSITE_POD_GROUP);
	ck_assert_ptr_null(g->parent);
	ck_assert_int_eq(g->spec.min_count, 2);
	ck_assert_str_eq(g->spec.topology_key, "block");
	ck_assert_int_eq(g->spec.disruption, PK_DISRUPTION_ALL);
	ck_assert(!g->spec.has_priority);
	pk_group_free(g);
	json_decref(o);

	o = obj_of("kind: PodGroup\nmetadata: {name: b}\nspec: {schedulingPolicy: {basic: {}}}\n");
	ck_assert_int_eq(pk_group_decode(o, &g, &errs), 0);
	ck_assert_int_eq(g->spec.policy, PK_POLICY_BASIC);
	ck_assert_int_eq(g->spec.min_count, 0);
	ck_assert_ptr_null(g->spec.topology_key);
	pk_group_free(g);
	json_decref(o);
}
END_TEST

START_TEST(test_group_errors)
{
	struct pk_errors errs = {0};
	struct pk_group *g = NULL;
	json_t *o = obj_of("kind: CompositePodGroup\nmetadata: {name: c}\n"
			   "spec:\n  schedulingPolicy: {gang: {minCount: 3}}\n"
			   "  schedulingConstraints: {topology: [{key: a}, {key: b, level: c}]}\n"
			   "  disruptionMode: {single: {}, all: {}}\n");

	ck_assert_int_eq(pk_group_decode(o, &g, &errs), -EINVAL);
	ck_assert_ptr_null(g);
	ck_assert_error(&errs, "spec.schedulingPolicy.gang.minGroupCount: Required value");
	ck_assert_error(&errs,
			"spec.schedulingConstraints.topology: Too many: 2: must have at most "
			"1 item");
	ck_assert_error(&errs,
			"spec.schedulingConstraints.topology[1].level: Invalid value: \"c\": "
			"must equal `key` (\"b\"); `level` is another name for `key`");
	ck_assert_error(&errs,
			"spec.disruptionMode: Invalid value: \"{single, all}\": must specify "
			"exactly one of: `single`, `all`");
	pk_errors_clear(&errs);
	json_decref(o);

	o = obj_of("kind: PodGroup\nmetadata: {name: p}\n"
		   "spec: {schedulingPolicy: {gang: {minCount: 0}}}\n");
	ck_assert_int_eq(pk_group_decode(o, &g, &errs), -EINVAL);
	ck_assert_error(&errs, "spec.schedulingPolicy.gang.minCount: Invalid value: 0: must be "
			       "greater than or equal to 1");
	pk_errors_clear(&errs);
	json_decref(o);

	o = obj_of("kind: PodGroup\nmetadata: {name: p}\nspec: {schedulingPolicy: {}}\n");
	ck_assert_int_eq(pk_group_decode(o, &g, &errs), -EINVAL);
	ck_assert_error(&errs, "spec.schedulingPolicy: Invalid value: \"\": must specify one of: "
			       "`basic`, `gang`");
	pk_errors_clear(&errs);
	json_decref(o);

	o = obj_of("kind: PodGroup\nmetadata: {name: p}\nspec: {}\n");
	ck_assert_int_eq(pk_group_decode(o, &g, &errs), -EINVAL);
	ck_assert_error(&errs, "spec.schedulingPolicy: Required value");
	pk_errors_clear(&errs);
	json_decref(o);

	o = obj_of("kind: Pod\nmetadata: {name: p}\n");
	ck_assert_int_eq(pk_group_decode(o, &g, &errs), -EINVAL);
	ck_assert_error(&errs, "kind: Unsupported value: \"Pod\": supported values: "
			       "\"CompositePodGroup\", \"PodGroup\"");
	pk_errors_clear(&errs);
	json_decref(o);
}
END_TEST

START_TEST(test_workload_tree)
{
	json_t *o = obj_of(
	    "apiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\nmetadata: {name: job}\n"
	    "spec:\n  compositePodGroupTemplates:\n  - name: root\n"
	    "    schedulingPolicy: {gang: {minGroupCount: 2}}\n"
	    "    schedulingConstraints: {topology: [{key: block}]}\n"
	    "    compositePodGroupTemplates:\n    - name: replica\n"
	    "      schedulingPolicy: {gang: {minGroupCount: 2}}\n"
	    "      disruptionMode: {all: {}}\n"
	    "      podGroupTemplates:\n"
	    "      - {name: workers, schedulingPolicy: {gang: {minCount: 8}}, disruptionMode: "
	    "{all: {}},\n"
	    "         schedulingConstraints: {topology: [{level: rack}]}}\n"
	    "      - {name: driver, schedulingPolicy: {basic: {}}, disruptionMode: {all: {}}}\n"
	    "    podGroupTemplates:\n    - {name: extra, schedulingPolicy: {basic: {}}, priority: "
	    "5}\n");
	struct pk_errors errs = {0};
	struct pk_workload *w = NULL;
	struct pk_template *root, *replica;

	ck_assert_int_eq(pk_workload_decode(o, &w, &errs), 0);
	ck_assert(w->composite);
	ck_assert_uint_eq(w->ntemplates, 1);
	root = &w->templates[0];
	ck_assert_str_eq(root->name, "root");
	ck_assert(root->composite);
	ck_assert_int_eq(root->spec.min_count, 2);
	ck_assert_str_eq(root->spec.topology_key, "block");
	ck_assert_uint_eq(root->nchildren, 2);
	replica = &root->children[0];
	ck_assert_str_eq(replica->name, "replica");
	ck_assert(replica->composite);
	ck_assert_int_eq(replica->spec.disruption, PK_DISRUPTION_ALL);
	ck_assert_uint_eq(replica->nchildren, 2);
	ck_assert_str_eq(replica->children[0].name, "workers");
	ck_assert(!replica->children[0].composite);
	ck_assert_int_eq(replica->children[0].spec.min_count, 8);
	ck_assert_str_eq(replica->children[0].spec.topology_key, "rack");
	ck_assert_int_eq(replica->children[1].spec.policy, PK_POLICY_BASIC);
	ck_assert_str_eq(root->children[1].name, "extra");
	ck_assert(root->children[1].spec.has_priority);
	ck_assert_int_eq(root->children[1].spec.priority, 5);
	ck_assert_ptr_null(root->children[1].children);
	pk_workload_free(w);
	json_decref(o);

	o = obj_of("kind: Workload\nmetadata: {name: flat}\nspec:\n  podGroupTemplates:\n"
		   "  - {name: a, schedulingPolicy: {gang: {minCount: 2}}}\n");
	ck_assert_int_eq(pk_workload_decode(o, &w, &errs), 0);
	ck_assert(!w->composite);
	ck_assert_uint_eq(w->ntemplates, 1);
	ck_assert(!w->templates[0].composite);
	pk_workload_free(w);
	json_decref(o);

	o = obj_of("kind: Workload\nmetadata: {name: bad}\nspec:\n  compositePodGroupTemplates:\n"
		   "  - name: r\n    schedulingPolicy: {gang: {minCount: 2}}\n"
		   "    podGroupTemplates: [{name: a, schedulingPolicy: {gang: {}}}, 3]\n");
	ck_assert_int_eq(pk_workload_decode(o, &w, &errs), -EINVAL);
	ck_assert_error(&errs, "spec.compositePodGroupTemplates[0].schedulingPolicy.gang."
			       "minGroupCount: Required value");
	ck_assert_error(&errs, "spec.compositePodGroupTemplates[0].podGroupTemplates[0]."
			       "schedulingPolicy.gang.minCount: Required value");
	ck_assert_error(&errs, "spec.compositePodGroupTemplates[0].podGroupTemplates[1]: Invalid "
			       "value: 3: must be an object");
	pk_errors_clear(&errs);
	json_decref(o);
}
END_TEST

START_TEST(test_free_null)
{
	pk_node_free(NULL);
	pk_pod_free(NULL);
	pk_priority_class_free(NULL);
	pk_group_free(NULL);
	pk_workload_free(NULL);
	ck_assert_int_eq(pk_pod_request(NULL, "cpu"), 0);
	ck_assert_int_eq(pk_node_allocatable(NULL, "cpu"), 0);
	ck_assert_ptr_null(pk_meta_label(NULL, "a"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("objects");
	TCase *tc = tcase_create("objects");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_node);
	tcase_add_test(tc, test_node_capacity_fallback_and_errors);
	tcase_add_test(tc, test_pod);
	tcase_add_test(tc, test_pod_errors);
	tcase_add_test(tc, test_pod_sidecars);
	tcase_add_test(tc, test_pod_qos_class);
	tcase_add_test(tc, test_priority_class);
	tcase_add_test(tc, test_pod_group);
	tcase_add_test(tc, test_composite_pod_group);
	tcase_add_test(tc, test_group_errors);
	tcase_add_test(tc, test_workload_tree);
	tcase_add_test(tc, test_free_null);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_validate_dra.c — pk_validate on the resource.k8s.io/v1 kinds
 * (DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice): valid
 * objects as the upstream documentation writes them pass, and each rule's
 * violation yields exactly kube-apiserver's field path.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"

/* clang-format off */
#define CLAIM "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
#define CLASS "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
#define SLICE "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
#define TMPL "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
/* clang-format on */

static json_t *obj_of(const char *yaml)
{
	char err[512];
	json_t *objs = NULL, *o;

	ck_assert_msg(pk_read_buffer("t.yaml", yaml, strlen(yaml), &objs, err, sizeof(err)) == 0,
		      "%s", err);
	o = json_incref(json_array_get(objs, 0));
	json_decref(objs);
	return o;
}

static void valid(const char *yaml)
{
	struct pk_errors errs = {0};
	json_t *o = obj_of(yaml);
	int ret = pk_validate(o, &errs);

	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "unexpected: %s\n", errs.msg[i]);
	ck_assert_int_eq(ret, 0);
	json_decref(o);
}

static void invalid(const char *yaml, const char *want)
{
	struct pk_errors errs = {0};
	json_t *o = obj_of(yaml);
	int ret = pk_validate(o, &errs);

	for (size_t i = 0; i < errs.n; i++)
		if (errs.n != 1 || strcmp(errs.msg[i], want) != 0)
			fprintf(stderr, "got: %s\n", errs.msg[i]);
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msg[0], want);
	pk_errors_clear(&errs);
	json_decref(o);
}

/* clang-format off */

START_TEST(test_kinds_table)
{
	const struct pk_type *t = pk_type_by_resource("resource.k8s.io", "resourceclaims");

	ck_assert_ptr_nonnull(t);
	ck_assert(t->namespaced && t->has_status);
	t = pk_type_by_resource("resource.k8s.io", "resourceslices");
	ck_assert(t && !t->namespaced);
	t = pk_type_by_resource("resource.k8s.io", "deviceclasses");
	ck_assert(t && !t->namespaced);
	t = pk_type_by_resource("resource.k8s.io", "resourceclaimtemplates");
	ck_assert(t && t->namespaced && !t->has_status);
	invalid("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\n",
		"apiVersion: Unsupported value: \"resource.k8s.io/v1beta1\": supported values: "
		"\"resource.k8s.io/v1\"");
}
END_TEST

START_TEST(test_device_class)
{
	valid(CLASS "spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"gpu.example.com\"'}\n"
	      "  config:\n  - opaque: {driver: gpu.example.com, parameters: {sharing: none}}\n");
	invalid(CLASS "spec:\n  selectors:\n  - cel: {}\n",
		"spec.selectors[0].cel.expression: Required value");
	invalid(CLASS "spec:\n  selectors:\n  - {}\n", "spec.selectors[0].cel: Required value");
	invalid(CLASS "spec:\n  config:\n  - opaque: {driver: Bad_Driver, parameters: {}}\n",
		"spec.config[0].opaque.driver: Invalid value: \"Bad_Driver\": a lowercase RFC 1123 "
		"subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
		"start and end with an alphanumeric character");
	invalid("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: g, namespace: x}\n",
		"metadata.namespace: Forbidden: not allowed on this type");
}
END_TEST

START_TEST(test_claim_requests)
{
	valid(CLAIM "spec:\n  devices:\n    requests:\n"
	      "    - name: gpu\n      exactly:\n        deviceClassName: gpu.example.com\n"
	      "        allocationMode: ExactCount\n        count: 2\n"
	      "        selectors:\n        - cel: {expression: 'device.attributes[\"gpu.example.com\"].index < 4'}\n"
	      "    - name: nic\n      firstAvailable:\n"
	      "      - {name: fast, deviceClassName: nic.example.com}\n"
	      "      - {name: any, deviceClassName: nic.example.com, allocationMode: All}\n"
	      "    constraints:\n    - {requests: [gpu, nic/fast], matchAttribute: resource.kubernetes.io/pcieRoot}\n"
	      "    config:\n    - {requests: [gpu], opaque: {driver: gpu.example.com, parameters: {a: 1}}}\n");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n    - name: gpu\n",
		"spec.devices.requests[0]: Invalid value: exactly one of `exactly` or "
		"`firstAvailable` is required");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {}\n",
		"spec.devices.requests[0].exactly.deviceClassName: Required value");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, exactly: {deviceClassName: g, count: 0}}\n",
		"spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, exactly: {deviceClassName: g, allocationMode: All, count: 2}}\n",
		"spec.devices.requests[0].exactly.count: Invalid value: must not be specified when "
		"allocationMode is 'All'");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, exactly: {deviceClassName: g, allocationMode: Some}}\n",
		"spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Some\": "
		"supported values: \"All\", \"ExactCount\"");
	/* consumable capacity (KEP-5075): capacity.requests names quantities */
	valid(CLAIM "spec:\n  devices:\n    requests:\n"
	      "    - {name: gpu, exactly: {deviceClassName: g, capacity: {requests: {memory: 10Gi, "
	      "gpu.example.com/share: 250m}}}}\n");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, exactly: {deviceClassName: g, capacity: {requests: {memory: lots}}}}\n",
		"spec.devices.requests[0].exactly.capacity.requests[memory]: Invalid value: must be a "
		"non-negative quantity");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - name: gpu\n      firstAvailable:\n"
		"      - {name: a, deviceClassName: g, capacity: {requests: {mem-ory: 10Gi}}}\n",
		"spec.devices.requests[0].firstAvailable[0].capacity.requests[mem-ory]: Invalid value: "
		"\"mem-ory\": must be a C identifier, optionally prefixed by a DNS subdomain and '/'");
	invalid(CLAIM "spec:\n  devices:\n    requests: [{name: gpu, exactly: {deviceClassName: g}}]\n"
		"status:\n  allocation:\n    devices:\n      results:\n"
		"      - {request: gpu, driver: d, pool: p, device: a, shareID: x, consumedCapacity: {share: -1}}\n",
		"status.allocation.devices.results[0].consumedCapacity[share]: Invalid value: must be a "
		"non-negative quantity");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, exactly: {deviceClassName: g}}\n"
		"    - {name: gpu, exactly: {deviceClassName: g}}\n",
		"spec.devices.requests[1].name: Duplicate value: \"gpu\"");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, firstAvailable: [{name: a, deviceClassName: g}, {name: a, deviceClassName: g}]}\n",
		"spec.devices.requests[0].firstAvailable[1].name: Duplicate value: \"a\"");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, exactly: {deviceClassName: g}}\n"
		"    constraints:\n    - {requests: [tpu], matchAttribute: x.com/a}\n",
		"spec.devices.constraints[0].requests[0]: Invalid value: \"tpu\": must be the name of "
		"a request in the claim or the name of a request and a subrequest separated by '/'");
	invalid(CLAIM "spec:\n  devices:\n    requests:\n"
		"    - {name: gpu, exactly: {deviceClassName: g}}\n"
		"    constraints:\n    - {matchAttribute: model}\n",
		"spec.devices.constraints[0].matchAttribute: Invalid value: \"model\": must be a fully "
		"qualified name (domain/name)");
}
END_TEST

START_TEST(test_claim_status)
{
	valid(CLAIM "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: g}}]}}\n"
	      "status:\n  allocation:\n    devices:\n      results:\n"
	      "      - {request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}\n"
	      "  reservedFor:\n  - {resource: pods, name: p, uid: u1}\n");
	invalid(CLAIM "status:\n  allocation:\n    devices:\n      results:\n"
		"      - {request: gpu, driver: gpu.example.com, pool: n1}\n",
		"status.allocation.devices.results[0].device: Required value");
	invalid(CLAIM "status:\n  reservedFor:\n  - {resource: pods, name: p, uid: u1}\n",
		"status.reservedFor: Forbidden: may not be specified when `allocation` is not set");
}
END_TEST

START_TEST(test_claim_template)
{
	valid(TMPL "spec:\n  spec:\n    devices:\n      requests:\n"
	      "      - {name: channel, exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}}\n");
	invalid(TMPL "spec:\n  spec:\n    devices:\n      requests:\n      - {name: Channel, exactly: {deviceClassName: c}}\n",
		"spec.spec.devices.requests[0].name: Invalid value: \"Channel\": a lowercase RFC 1123 "
		"label must consist of lower case alphanumeric characters or '-', and must start and "
		"end with an alphanumeric character");
	invalid(TMPL, "spec: Required value");
}
END_TEST

START_TEST(test_slice)
{
	valid(SLICE "spec:\n  driver: gpu.example.com\n  nodeName: n1\n"
	      "  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n  devices:\n"
	      "  - name: gpu-0\n    attributes:\n      index: {int: 0}\n      model: {string: H100}\n"
	      "      driverVersion: {version: 550.54.15}\n      resource.kubernetes.io/pcieRoot: {string: pci0000:00}\n"
	      "    capacity:\n      memory: {value: 80Gi}\n");
	valid(SLICE "spec:\n  driver: compute-domain.nvidia.com\n"
	      "  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r0]}]}]}\n"
	      "  pool: {name: r0, generation: 0, resourceSliceCount: 1}\n  devices: [{name: channel-0}]\n");
	invalid(SLICE "spec:\n  driver: d.example.com\n  pool: {name: p, resourceSliceCount: 1}\n",
		"spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
		"`perDeviceNodeSelection` is required");
	invalid(SLICE "spec:\n  driver: d.example.com\n  nodeName: n1\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n",
		"spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
		"`perDeviceNodeSelection` is required");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n  pool: {name: p}\n",
		"spec.pool.resourceSliceCount: Invalid value: must be greater than zero");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, attributes: {index: {int: 0, string: x}}}\n",
		"spec.devices[0].attributes[index]: Invalid value: exactly one value must be specified");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, attributes: {v: {version: '1.0'}}}\n",
		"spec.devices[0].attributes[v].version: Invalid value: \"1.0\": must be a semantic version");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, capacity: {memory: {value: lots}}}\n",
		"spec.devices[0].capacity[memory].value: Invalid value: must be a quantity");
	/* consumable capacity (KEP-5075): shared devices and request policies */
	valid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
	      "  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
	      "  - {name: a, allowMultipleAllocations: true, capacity: {share: {value: '1', requestPolicy: "
	      "{default: '1', validRange: {min: 10m, max: '1', step: 10m}}}, memory: {value: 80Gi, "
	      "requestPolicy: {default: 10Gi, validValues: [10Gi, 20Gi, 40Gi]}}}}\n");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, allowMultipleAllocations: 1, capacity: {memory: {value: 80Gi}}}\n",
		"spec.devices[0].allowMultipleAllocations: Invalid value: must be a boolean");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, capacity: {memory: {value: 80Gi, requestPolicy: {default: 15Gi, "
		"validValues: [10Gi, 20Gi]}}}}\n",
		"spec.devices[0].capacity[memory].requestPolicy.default: Invalid value: must be a value "
		"the policy allows, at most the capacity's value");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, capacity: {memory: {value: 80Gi, requestPolicy: {validValues: [20Gi, 10Gi]}}}}\n",
		"spec.devices[0].capacity[memory].requestPolicy.validValues[1]: Invalid value: must be in "
		"strictly ascending order, at most the capacity's value");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, capacity: {memory: {value: 80Gi, requestPolicy: {validRange: {max: 8Gi}}}}}\n",
		"spec.devices[0].capacity[memory].requestPolicy.validRange.min: Required value");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, capacity: {memory: {value: 80Gi, requestPolicy: {validRange: {min: 1Gi, step: '0'}}}}}\n",
		"spec.devices[0].capacity[memory].requestPolicy.validRange.step: Invalid value: must be "
		"greater than zero");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, capacity: {memory: {value: 80Gi, requestPolicy: {validRange: {min: 1Gi}, "
		"validValues: [2Gi]}}}}\n",
		"spec.devices[0].capacity[memory].requestPolicy: Invalid value: `validValues` and "
		"`validRange` are mutually exclusive");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices: [{name: a}, {name: a}]\n",
		"spec.devices[1].name: Duplicate value: \"a\"");
	invalid(SLICE "spec:\n  driver: d.example.com\n  allNodes: true\n"
		"  pool: {name: p, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: a, attributes: {1bad: {int: 1}}}\n",
		"spec.devices[0].attributes[1bad]: Invalid value: \"1bad\": must be a C identifier of at "
		"most 32 characters, optionally prefixed by a DNS subdomain and '/'");
}
END_TEST

/* clang-format on */

int main(void)
{
	Suite *s = suite_create("validate_dra");
	TCase *tc = tcase_create("dra");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_kinds_table);
	tcase_add_test(tc, test_device_class);
	tcase_add_test(tc, test_claim_requests);
	tcase_add_test(tc, test_claim_status);
	tcase_add_test(tc, test_claim_template);
	tcase_add_test(tc, test_slice);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

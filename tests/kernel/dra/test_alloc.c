/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_alloc.c — the structured-parameters allocator (kernel/dra): devices
 * per node, per node selector and for all nodes; pools and generations;
 * exactly (ExactCount, All) and firstAvailable requests; matchAttribute;
 * devices never allocated twice; device taints and request tolerations; the
 * messages of each failure; fields not implemented refused by path; the search
 * budget one scheduling cycle shares; consumable capacity (shared devices).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/dra/dra.h"

/* clang-format off */
static const char *const objects =
	"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
	"spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"gpu.example.com\" && "
	"device.attributes[\"gpu.example.com\"].type == \"gpu\"'}\n"
	"---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: channel}\n"
	"spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"compute-domain.nvidia.com\"'}\n"
	"---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: broken}\n"
	"spec:\n  selectors:\n  - cel: {expression: 'device.attributes[\"gpu.example.com\"].color == \"red\"'}\n"
	"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpu}\n"
	"spec:\n  driver: gpu.example.com\n  nodeName: n1\n"
	"  pool: {name: n1, generation: 0, resourceSliceCount: 1}\n  devices:\n"
	"  - {name: gpu-0, attributes: {type: {string: gpu}, index: {int: 0}, resource.kubernetes.io/pcieRoot: {string: a}}}\n"
	"  - {name: gpu-1, attributes: {type: {string: gpu}, index: {int: 1}, resource.kubernetes.io/pcieRoot: {string: b}}}\n"
	"  - {name: gpu-2, attributes: {type: {string: gpu}, index: {int: 2}, resource.kubernetes.io/pcieRoot: {string: b}}}\n"
	"  - {name: nic-0, attributes: {type: {string: nic}}}\n"
	"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: rack-r0}\n"
	"spec:\n  driver: compute-domain.nvidia.com\n"
	"  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r0]}]}]}\n"
	"  pool: {name: r0, generation: 0, resourceSliceCount: 1}\n  devices: [{name: channel-0}]\n";
/* clang-format on */

static struct dra_state *st;
static const struct pk_kv r0[] = {{"rack", "r0"}}, r1[] = {{"rack", "r1"}};
static const struct dra_node n1 = {"n1", r0, 1}, n2 = {"n2", r1, 1};

static json_t *parse(const char *yaml)
{
	char err[256];
	json_t *objs = NULL;

	ck_assert_msg(pk_read_buffer("t", yaml, strlen(yaml), &objs, err, sizeof(err)) == 0, "%s",
		      err);
	return objs;
}

static void setup(void)
{
	json_t *objs = parse(objects), *o;
	size_t i;

	ck_assert_int_eq(dra_state_new(&st), 0);
	json_array_foreach(objs, i, o) ck_assert_int_eq(dra_state_set(st, o), 0);
	json_decref(objs);
}

static void teardown(void)
{
	dra_state_free(st);
}

/* Allocate a claim spec given as YAML; returns the code, why in why. */
static int alloc(const char *spec, const struct dra_node *node, struct dra_allocation *a, char *why)
{
	json_t *objs = parse(spec);
	int r = dra_allocate(st, json_array_get(objs, 0), node, a, why, 512);

	json_decref(objs);
	return r;
}

#define ONE_GPU "devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}\n"

START_TEST(test_node_local_never_twice)
{
	struct dra_allocation a[4] = {0};
	char why[512];

	/* the fast count agrees with the search as devices are taken and freed */
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n1, DRA_SLOT_LOOKUP, 8), 3);
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n1, DRA_SLOT_LOOKUP, 2), 2);
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n2, DRA_SLOT_LOOKUP, 8), 0);
	ck_assert_int_eq(dra_free_count(st, "tpu", &n1, DRA_SLOT_LOOKUP, 8), -ENOENT);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(
		    dra_free_count(st, "gpu.example.com", &n1, dra_node_slot(st, "n1"), 8), 3 - i);
		ck_assert_int_eq(alloc(ONE_GPU, &n1, &a[i], why), 0);
		ck_assert_uint_eq(a[i].nresults, 1);
		ck_assert_str_eq(a[i].node_name, "n1");
		ck_assert_int_eq(dra_commit(st, &a[i]), 0);
		ck_assert_int_eq(dra_commit(st, &a[i]), -EBUSY);
	}
	ck_assert_str_eq(a[0].results[0].device, "gpu-0");
	ck_assert_str_eq(a[2].results[0].device, "gpu-2");
	ck_assert_int_eq(alloc(ONE_GPU, &n1, &a[3], why), -ENOSPC);
	ck_assert_str_eq(why, "request gpu: devices taken: 3 of class gpu.example.com match on "
			      "node n1, 0 free, 1 wanted");
	ck_assert_int_eq(alloc(ONE_GPU, &n2, &a[3], why), -ENOSPC);
	ck_assert_str_eq(why, "request gpu: no device of class gpu.example.com matches on node n2");
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n1, DRA_SLOT_LOOKUP, 8), 0);
	dra_release(st, &a[1]);
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n1, DRA_SLOT_LOOKUP, 8), 1);
	ck_assert_int_eq(alloc(ONE_GPU, &n1, &a[3], why), 0);
	ck_assert_str_eq(a[3].results[0].device, "gpu-1");
	for (int i = 0; i < 4; i++)
		dra_allocation_clear(&a[i]);
}
END_TEST

START_TEST(test_node_selector_slice)
{
	struct dra_allocation a = {0};
	char why[512];
	json_t *j;

	ck_assert_int_eq(
	    alloc("devices: {requests: [{name: ch, exactly: {deviceClassName: channel}}]}\n", &n1,
		  &a, why),
	    0);
	ck_assert_ptr_null(a.node_name);
	ck_assert_ptr_nonnull(a.node_selector);
	ck_assert(dra_node_selector_match(a.node_selector, &n1));
	ck_assert(!dra_node_selector_match(a.node_selector, &n2));
	j = dra_allocation_json(&a);
	ck_assert_str_eq(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(j, "devices"), "results"), 0),
		"device")),
	    "channel-0");
	ck_assert_ptr_nonnull(json_object_get(j, "nodeSelector"));
	json_decref(j);
	dra_allocation_clear(&a);
	ck_assert_int_eq(
	    alloc("devices: {requests: [{name: ch, exactly: {deviceClassName: channel}}]}\n", &n2,
		  &a, why),
	    -ENOSPC);
}
END_TEST

START_TEST(test_match_attribute)
{
	struct dra_allocation a = {0};
	char why[512];
	const char *two = "devices:\n  requests: [{name: g, exactly: {deviceClassName: "
			  "gpu.example.com, count: 2}}]\n"
			  "  constraints: [{matchAttribute: resource.kubernetes.io/pcieRoot}]\n";

	ck_assert_int_eq(alloc(two, &n1, &a, why), 0);
	ck_assert_uint_eq(a.nresults, 2);
	ck_assert_str_eq(a.results[0].device, "gpu-1"); /* gpu-0 is alone on root a */
	ck_assert_str_eq(a.results[1].device, "gpu-2");
	ck_assert_int_eq(dra_commit(st, &a), 0);
	dra_allocation_clear(&a);
	ck_assert_int_eq(
	    alloc("devices:\n  requests: [{name: g, exactly: {deviceClassName: gpu.example.com}},"
		  " {name: h, exactly: {deviceClassName: gpu.example.com}}]\n"
		  "  constraints: [{requests: [g, h], matchAttribute: "
		  "resource.kubernetes.io/pcieRoot}]\n",
		  &n1, &a, why),
	    -ENOSPC);
	ck_assert_msg(strstr(why, "constraint") != NULL, "%s", why);
}
END_TEST

START_TEST(test_first_available_and_all)
{
	struct dra_allocation a = {0}, b = {0};
	char why[512];

	ck_assert_int_eq(alloc("devices: {requests: [{name: g, firstAvailable: ["
			       "{name: four, deviceClassName: gpu.example.com, count: 4},"
			       "{name: two, deviceClassName: gpu.example.com, count: 2}]}]}\n",
			       &n1, &a, why),
			 0);
	ck_assert_uint_eq(a.nresults, 2);
	ck_assert_str_eq(a.results[0].request, "g/two");
	ck_assert_int_eq(dra_commit(st, &a), 0);
	/* All: every matching device, and one is in use */
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, allocationMode: All}}]}\n",
			       &n1, &b, why),
			 -ENOSPC);
	ck_assert_msg(strstr(why, "devices taken") != NULL, "%s", why);
	dra_release(st, &a);
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, allocationMode: All}}]}\n",
			       &n1, &b, why),
			 0);
	ck_assert_uint_eq(b.nresults, 3);
	dra_allocation_clear(&a);
	dra_allocation_clear(&b);
}
END_TEST

START_TEST(test_refusals)
{
	struct dra_allocation a = {0};
	char why[512];

	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, adminAccess: true}}]}\n",
			       &n1, &a, why),
			 -EOPNOTSUPP);
	ck_assert_str_eq(why, "spec.devices.requests[0].exactly.adminAccess: admin access is not "
			      "implemented by this scheduler");
	ck_assert_int_eq(
	    alloc("devices: {requests: [{name: g, exactly: {deviceClassName: tpu}}]}\n", &n1, &a,
		  why),
	    -ENOENT);
	ck_assert_str_eq(why, "request g: DeviceClass \"tpu\" not found");
	ck_assert_int_eq(
	    alloc("devices: {requests: [{name: g, exactly: {deviceClassName: gpu.example.com,"
		  " selectors: [{cel: {expression: 'size(device.driver) > 1'}}]}}]}\n",
		  &n1, &a, why),
	    -EINVAL);
	ck_assert_str_eq(why,
			 "spec.devices.requests[0].exactly.selectors[0].cel.expression: column 1: "
			 "function 'size' is outside the supported CEL subset (expression: "
			 "size(device.driver) > 1)");
	/* a selector that fails at evaluation is an error, never a match */
	ck_assert_int_eq(
	    alloc("devices: {requests: [{name: g, exactly: {deviceClassName: broken}}]}\n", &n1, &a,
		  why),
	    -EINVAL);
	ck_assert_msg(
	    strstr(why, "DeviceClass broken: spec.selectors[0]: column 38: no such key: color") ==
		why,
	    "%s", why);
}
END_TEST

/* clang-format off */
static const char *const shared_slice =
	"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n3-gpu}\n"
	"spec:\n  driver: gpu.example.com\n  nodeName: n3\n"
	"  pool: {name: n3, generation: 0, resourceSliceCount: 1}\n  devices:\n"
	"  - name: gpu-s0\n    allowMultipleAllocations: true\n"
	"    attributes: {type: {string: gpu}}\n    capacity:\n"
	"      share: {value: '1', requestPolicy: {default: '1', validRange: {min: 10m, max: '1', step: 10m}}}\n"
	"      memory: {value: 80Gi, requestPolicy: {default: 10Gi, validValues: [10Gi, 20Gi, 40Gi, 80Gi]}}\n";
/* clang-format on */
#define SHARE(q)                                                                                   \
	"devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, "            \
	"capacity: {requests: {" q "}}}}]}\n"

/* What result 0 of a consumed of capacity name. */
static const char *consumed(const struct dra_allocation *a, const char *name)
{
	return json_string_value(json_object_get(a->results[0].consumed, name));
}

/*
 * Consumable capacity (KEP-5075): a shared device takes allocations while
 * its capacity lasts, each with a shareID and its consumedCapacity (requests
 * rounded up by the requestPolicy, defaults for the rest); releasing one
 * frees its share; a device without the capacity never serves the request.
 */
START_TEST(test_consumable_capacity)
{
	static const struct pk_kv none[] = {{"rack", "r3"}};
	const struct dra_node n3 = {"n3", none, 1};
	struct dra_allocation a[6] = {0}, back = {0};
	json_t *objs = parse(shared_slice), *js;
	char why[512];

	ck_assert_int_eq(dra_state_set(st, json_array_get(objs, 0)), 0);
	json_decref(objs);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(alloc(SHARE("share: 245m"), &n3, &a[i], why), 0);
		ck_assert_str_eq(a[i].results[0].device, "gpu-s0");
		ck_assert_str_eq(consumed(&a[i], "share"), "250m");  /* min + k*step */
		ck_assert_str_eq(consumed(&a[i], "memory"), "10Gi"); /* the default */
		ck_assert_int_eq(dra_commit(st, &a[i]), 0);
		ck_assert_int_eq(dra_commit(st, &a[i]), -EBUSY); /* the same share twice */
		if (i > 0)
			ck_assert_str_ne(a[i].results[0].share_id, a[i - 1].results[0].share_id);
	}
	/* the device is full: its four shares consumed it */
	ck_assert_int_eq(alloc(SHARE("share: 5m"), &n3, &a[4], why), -ENOSPC);
	ck_assert_str_eq(why, "request gpu: spec.devices.requests[0].exactly.capacity: 1 devices "
			      "of class gpu.example.com on node n3 lack the capacity asked "
			      "(requestPolicy or what their shares left), 0 have it, 1 wanted");
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n3, DRA_SLOT_LOOKUP, 8), 0);
	/* the status round-trips, and a parsed share is counted like the found one */
	js = dra_allocation_json(&a[1]);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(pk_get(js, "devices.results"), 0), "shareID")),
			 a[1].results[0].share_id);
	ck_assert_int_eq(dra_allocation_parse(js, &back), 0);
	json_decref(js);
	dra_release(st, &back);
	ck_assert_int_eq(alloc(SHARE("share: 5m"), &n3, &a[4], why), 0);
	ck_assert_str_eq(consumed(&a[4], "share"), "10m");
	ck_assert_int_eq(dra_commit(st, &back), 0);
	ck_assert_int_eq(dra_commit(st, &a[4]), -EBUSY); /* no room left for it */
	dra_allocation_clear(&a[4]);
	/* validValues round up; beyond the policy or the capacity, no device */
	for (int i = 0; i < 4; i++)
		dra_release(st, &a[i]);
	ck_assert_int_eq(alloc(SHARE("memory: 15Gi, share: 100m"), &n3, &a[4], why), 0);
	ck_assert_str_eq(consumed(&a[4], "memory"), "20Gi");
	dra_allocation_clear(&a[4]);
	ck_assert_int_eq(alloc(SHARE("memory: 90Gi"), &n3, &a[4], why), -ENOSPC);
	ck_assert_int_eq(alloc(SHARE("share: 1001m"), &n3, &a[4], why), -ENOSPC);
	/* a request without capacity takes the defaults: the whole share */
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n3, DRA_SLOT_LOOKUP, 8), 1);
	ck_assert_int_eq(alloc(ONE_GPU, &n3, &a[4], why), 0);
	ck_assert_str_eq(consumed(&a[4], "share"), "1");
	ck_assert_int_eq(dra_commit(st, &a[4]), 0);
	ck_assert_int_eq(alloc(SHARE("share: 10m"), &n3, &a[5], why), -ENOSPC);
	dra_release(st, &a[4]);
	/* CEL sees whether a device is shared */
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, selectors: [{cel: {expression: "
			       "'device.allowMultipleAllocations'}}]}}]}\n",
			       &n3, &a[5], why),
			 0);
	dra_allocation_clear(&a[5]);
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, selectors: [{cel: {expression: "
			       "'device.allowMultipleAllocations'}}]}}]}\n",
			       &n1, &a[5], why),
			 -ENOSPC);
	/* a device without the capacity never serves a request for it */
	ck_assert_int_eq(alloc(SHARE("share: 10m"), &n1, &a[5], why), -ENOSPC);
	ck_assert_msg(strstr(why, "lack the capacity asked") != NULL, "%s", why);
	for (int i = 0; i < 6; i++)
		dra_allocation_clear(&a[i]);
	dra_allocation_clear(&back);
}
END_TEST

/*
 * DRADeviceTaints: a device tainted NoSchedule or NoExecute is allocated only
 * to a request that tolerates the taint (key and value, or Exists; the
 * effect, or none for every effect); other effects do not keep it.
 */
START_TEST(test_device_taints)
{
	json_t *objs =
	    parse("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n3}\n"
		  "spec:\n  driver: gpu.example.com\n  nodeName: n3\n"
		  "  pool: {name: n3, generation: 0, resourceSliceCount: 1}\n  devices:\n"
		  "  - {name: sick, attributes: {type: {string: gpu}},\n"
		  "     taints: [{key: health, value: bad, effect: NoSchedule}]}\n"
		  "  - {name: going, attributes: {type: {string: gpu}},\n"
		  "     taints: [{key: drain, effect: NoExecute}]}\n"
		  "  - {name: marked, attributes: {type: {string: gpu}},\n"
		  "     taints: [{key: note, effect: None}]}\n");
	static const struct pk_kv none[] = {{"rack", "r9"}};
	static const struct dra_node n3 = {"n3", none, 1};
	struct dra_allocation a = {0};
	char why[512];

	ck_assert_int_eq(dra_state_set(st, json_array_get(objs, 0)), 0);
	json_decref(objs);
	/* only the device whose taint has effect None is free for a request without tolerations */
	ck_assert_int_eq(dra_free_count(st, "gpu.example.com", &n3, DRA_SLOT_LOOKUP, 8), 1);
	ck_assert_int_eq(alloc(ONE_GPU, &n3, &a, why), 0);
	ck_assert_str_eq(a.results[0].device, "marked");
	ck_assert_int_eq(dra_commit(st, &a), 0);
	dra_allocation_clear(&a);
	ck_assert_int_eq(alloc(ONE_GPU, &n3, &a, why), -ENOSPC);
	ck_assert_int_eq(alloc(ONE_GPU, &n2, &a, why), -ENOSPC);
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, tolerations: [{key: health, value: good, "
			       "effect: NoSchedule}]}}]}\n",
			       &n3, &a, why),
			 -ENOSPC);
	ck_assert_str_eq(why, "request g: devices taken: 1 of class gpu.example.com match on node "
			      "n3, 0 free, 1 wanted (others have taints the request does not "
			      "tolerate)");
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, tolerations: [{key: health, value: bad}]}}]}\n",
			       &n3, &a, why),
			 0);
	ck_assert_str_eq(a.results[0].device, "sick");
	dra_allocation_clear(&a);
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, tolerations: [{key: drain, operator: Exists, "
			       "effect: NoExecute}]}}]}\n",
			       &n3, &a, why),
			 0);
	ck_assert_str_eq(a.results[0].device, "going");
	dra_allocation_clear(&a);
	ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
			       "gpu.example.com, count: 2, tolerations: [{operator: Exists}]}}]}\n",
			       &n3, &a, why),
			 0);
	dra_allocation_clear(&a);
}
END_TEST

/*
 * The searches of one scheduling cycle share a budget: a hostile claim (8
 * of 48 devices, then one that never matches: every combination is tried)
 * costs each search its own budget, and once ten such searches spent the
 * cycle's, every allocation fails at once, saying so, until the next cycle.
 */
START_TEST(test_cycle_budget)
{
	struct dra_allocation a = {0};
	char why[512], yaml[8192];
	size_t o = 0;
	json_t *objs;
	size_t i;
	json_t *obj;

	o +=
	    (size_t)snprintf(yaml + o, sizeof(yaml) - o,
			     "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: "
			     "{name: nothing}\nspec:\n  selectors:\n  - cel: {expression: "
			     "'device.driver == \"none\"'}\n---\napiVersion: resource.k8s.io/v1\n"
			     "kind: ResourceSlice\nmetadata: {name: n1-many}\nspec:\n  driver: "
			     "gpu.example.com\n  nodeName: n1\n  pool: {name: n1-many, generation: "
			     "0, resourceSliceCount: 1}\n  devices:\n");
	for (int d = 0; d < 48; d++)
		o +=
		    (size_t)snprintf(yaml + o, sizeof(yaml) - o,
				     "  - {name: many-%d, attributes: {type: {string: gpu}}}\n", d);
	objs = parse(yaml);
	json_array_foreach(objs, i, obj) ck_assert_int_eq(dra_state_set(st, obj), 0);
	json_decref(objs);
	dra_cycle_begin(st);
	for (int k = 0; k < 10; k++) {
		ck_assert_int_eq(alloc("devices: {requests: [{name: g, exactly: {deviceClassName: "
				       "gpu.example.com, count: 8}}, {name: x, exactly: "
				       "{deviceClassName: nothing}}]}\n",
				       &n1, &a, why),
				 -ENOSPC);
	}
	ck_assert_int_eq(alloc(ONE_GPU, &n1, &a, why), -ENOSPC);
	ck_assert_msg(strstr(why, "this scheduling cycle took their 1000000 steps"), "%s", why);
	dra_cycle_begin(st);
	ck_assert_int_eq(alloc(ONE_GPU, &n1, &a, why), 0);
	dra_allocation_clear(&a);

	/* Compiling a request's patterns is work of the cycle too: 9000 atoms a search. */
	static const char big[] =
	    "devices: {requests: [{name: g, exactly: {deviceClassName: gpu.example.com, "
	    "selectors: [{cel: {expression: \"!device.driver.matches('a{1000}b{1000}c{1000}"
	    "d{1000}e{1000}f{1000}g{1000}h{1000}i{1000}')\"}}]}}]}\n";
	int ok = 0, r;
	dra_cycle_begin(st);
	while ((r = alloc(big, &n1, &a, why)) == 0 && ok < 200) {
		dra_allocation_clear(&a);
		ok++;
	}
	ck_assert_int_eq(r, -ENOSPC);
	ck_assert_msg(strstr(why, "this scheduling cycle"), "%s", why);
	ck_assert_msg(ok >= 100 && ok <= 112, "%d searches before the budget was spent", ok);
}
END_TEST

START_TEST(test_pool_generations)
{
	json_t *objs = parse(
	    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpu-a}\n"
	    "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 1, "
	    "resourceSliceCount: 2},"
	    " devices: [{name: gpu-7, attributes: {type: {string: gpu}}}]}\n"
	    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpu-b}\n"
	    "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 1, "
	    "resourceSliceCount: 2},"
	    " devices: [{name: gpu-8, attributes: {type: {string: gpu}}}]}\n");
	struct dra_allocation a = {0};
	char why[512];

	ck_assert_uint_eq(dra_device_count(st), 5);
	/* generation 1 is newer but incomplete: the pool offers nothing */
	ck_assert_int_eq(dra_state_set(st, json_array_get(objs, 0)), 0);
	ck_assert_uint_eq(dra_device_count(st), 1); /* the rack's channel only */
	ck_assert_int_eq(alloc(ONE_GPU, &n1, &a, why), -ENOSPC);
	/* complete: generation 1 replaces generation 0 */
	ck_assert_int_eq(dra_state_set(st, json_array_get(objs, 1)), 0);
	ck_assert_uint_eq(dra_device_count(st), 3);
	ck_assert_int_eq(alloc(ONE_GPU, &n1, &a, why), 0);
	ck_assert_str_eq(a.results[0].device, "gpu-7");
	dra_allocation_clear(&a);
	ck_assert_int_eq(dra_state_remove(st, PK_KIND_RESOURCE_SLICE, "n1-gpu-b"), 0);
	ck_assert_uint_eq(dra_device_count(st), 1);
	json_decref(objs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dra");
	TCase *tc = tcase_create("alloc");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_node_local_never_twice);
	tcase_add_test(tc, test_node_selector_slice);
	tcase_add_test(tc, test_match_attribute);
	tcase_add_test(tc, test_first_available_and_all);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_pool_generations);
	tcase_add_test(tc, test_device_taints);
	tcase_add_test(tc, test_cycle_budget);
	tcase_add_test(tc, test_consumable_capacity);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_nodes.c — a board's simulated cluster as Kubernetes Node objects.
 *
 * Each host of the cluster (topo_board_host) becomes the v1 Node podagent
 * would publish on that machine: the labels of CONTRACT.md (hostname,
 * accelerator count and vendor, NUMA count, one topology label per board
 * level, torus coordinates) and capacity = allocatable = the board's host
 * allocatable.  `podctl board nodes` prints them and the appliance's
 * --simulate-board stores them, with the ResourceSlices of the board's DRA
 * drivers (spec.dra).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "topology/topology.h"

/* Memory-like resources read best in binary units (256Gi), others in SI. */
enum topo_quantity_format pk_board_quantity_format(const char *resource)
{
	if (strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
	    strncmp(resource, "hugepages-", 10) == 0)
		return TOPO_QUANTITY_BINARY_SI;
	return TOPO_QUANTITY_DECIMAL_SI;
}

static json_t *resources_json(const struct topo_board *b)
{
	json_t *res = json_object();

	for (size_t i = 0; res && i < topo_board_allocatable_count(b); i++) {
		const char *name = topo_board_allocatable_name(b, i);
		char q[64];

		if (topo_quantity_format(topo_board_allocatable_milli(b, i),
					 pk_board_quantity_format(name), q, sizeof(q)) < 0 ||
		    json_object_set_new(res, name, json_string(q)) < 0) {
			json_decref(res);
			return NULL;
		}
	}
	return res;
}

static int set_label(json_t *labels, const char *key, const char *value)
{
	return json_object_set_new(labels, key, json_string(value)) < 0 ? -ENOMEM : 0;
}

static int labels_json(const struct topo_board *b, const struct topo_host *h, json_t **ret)
{
	json_t *labels = json_object();
	char num[16], vbuf[8];
	size_t nlevels = topo_board_level_count(b);
	int r;

	if (!labels)
		return -ENOMEM;
	r = set_label(labels, TOPO_LABEL_HOSTNAME, h->name);
	snprintf(num, sizeof(num), "%d", topo_board_chips_per_host(b));
	if (r == 0)
		r = set_label(labels, TOPO_LABEL_ACCEL_COUNT, num);
	if (r == 0)
		r = set_label(labels, TOPO_LABEL_ACCEL_VENDOR,
			      topo_pci_vendor_label(topo_board_accel_vendor(b), vbuf));
	snprintf(num, sizeof(num), "%d", topo_board_numa_per_host(b));
	if (r == 0)
		r = set_label(labels, TOPO_LABEL_NUMA_COUNT, num);
	/* The host level's key is kubernetes.io/hostname, already set. */
	for (size_t l = 0; r == 0 && l + 1 < nlevels; l++)
		r = set_label(labels, topo_board_level_key(b, l), h->domain[l]);
	struct topo_label tl[TOPO_TORUS_LABELS];
	int ntl = topo_board_torus_labels(b, h, tl);

	for (int i = 0; r == 0 && i < ntl; i++)
		r = set_label(labels, tl[i].key, tl[i].value);
	if (r < 0) {
		json_decref(labels);
		return r;
	}
	*ret = labels;
	return 0;
}

int pk_board_node_json(const struct topo_board *b, int superslices, int64_t index,
		       json_t **ret_node)
{
	struct topo_host h;
	json_t *labels, *node, *cap, *alloc;
	int r;

	r = topo_board_host(b, superslices, index, &h);
	if (r < 0)
		return r;
	r = labels_json(b, &h, &labels);
	if (r < 0)
		return r;
	cap = resources_json(b);
	alloc = resources_json(b);
	node = json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:o*, s:o*}}", "apiVersion", "v1", "kind",
			 "Node", "metadata", "name", h.name, "labels", labels, "status", "capacity",
			 cap, "allocatable", alloc);
	if (!node || !cap || !alloc) {
		json_decref(node);
		return -ENOMEM;
	}
	*ret_node = node;
	return 0;
}

int pk_board_nodes_json(const struct topo_board *b, int superslices, json_t **ret_items)
{
	int64_t n = topo_board_host_count(b, superslices);
	json_t *items;

	if (n < 0)
		return (int)n;
	items = json_array();
	if (!items)
		return -ENOMEM;
	for (int64_t i = 0; i < n; i++) {
		json_t *node;
		int r = pk_board_node_json(b, superslices, i, &node);

		if (r == 0 && json_array_append_new(items, node) < 0)
			r = -ENOMEM;
		if (r < 0) {
			json_decref(items);
			return r;
		}
	}
	*ret_items = items;
	return 0;
}

/*
 * Shareable chips (KEP-5075): each device takes several allocations, a
 * request asking capacity `share` for a fraction of the chip (10m steps),
 * one asking nothing for the whole of it.
 */
static void share_devices(json_t *devs)
{
	/* one capacity object, never changed, that the slice's devices all refer to */
	json_t *cap = json_pack("{s:{s:s, s:{s:s, s:{s:s, s:s, s:s}}}}", "share", "value", "1",
				"requestPolicy", "default", "1", "validRange", "min", "10m", "max",
				"1", "step", "10m");
	size_t i;
	json_t *d;

	json_array_foreach(devs, i, d)
	{
		json_object_set_new(d, "allowMultipleAllocations", json_true());
		if (cap)
			json_object_set(d, "capacity", cap);
	}
	json_decref(cap);
}

/* Host h's slice: one device per chip. */
static json_t *host_slice(const struct topo_board *b, const struct topo_host *h, const char *drv)
{
	int chips = topo_board_chips_per_host(b), numa = topo_board_numa_per_host(b);
	int per_numa = numa > 0 && chips >= numa ? chips / numa : chips;
	json_t *devs = json_array(), *s;
	char name[300];

	for (int i = 0; devs && i < chips; i++) {
		char dev[32], root[32];

		snprintf(dev, sizeof(dev), "gpu-%d", i);
		snprintf(root, sizeof(root), "pci%04x:00", i / 2);
		json_array_append_new(
		    devs, json_pack("{s:s, s:{s:{s:s}, s:{s:i}, s:{s:i}, s:{s:s}}}", "name", dev,
				    "attributes", "type", "string", "gpu", "index", "int", i,
				    "numaNode", "int", per_numa ? i / per_numa : 0,
				    "resource.kubernetes.io/pcieRoot", "string", root));
	}
	if (topo_board_dra_shareable(b))
		share_devices(devs);
	snprintf(name, sizeof(name), "%s-%s", h->name, drv);
	s = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o*}}", "apiVersion",
		      "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", name,
		      "spec", "driver", drv, "nodeName", h->name, "pool", "name", h->name,
		      "generation", 0, "resourceSliceCount", 1, "devices", devs);
	return s;
}

/* The channel slice of domain value of level key. */
static json_t *channel_slice(const char *key, const char *value, const char *drv)
{
	char name[300];

	snprintf(name, sizeof(name), "%s-%s", value, drv);
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}, "
			 "s:{s:s, s:i, s:i}, s:[{s:s, s:{s:{s:s}, s:{s:i}}}]}}",
			 "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata",
			 "name", name, "spec", "driver", drv, "nodeSelector", "nodeSelectorTerms",
			 "matchExpressions", "key", key, "operator", "In", "values", value, "pool",
			 "name", value, "generation", 0, "resourceSliceCount", 1, "devices", "name",
			 "channel-0", "attributes", "type", "string", "channel", "id", "int", 0);
}

int pk_board_slices_json(const struct topo_board *b, int superslices, json_t **ret_items)
{
	const char *drv = topo_board_dra_driver(b), *cdrv = topo_board_dra_channel_driver(b);
	int level = topo_board_dra_channel_level(b);
	int64_t n = topo_board_host_count(b, superslices);
	json_t *items = json_array(), *seen = json_object();
	int r = items && seen && n >= 0 ? 0 : n < 0 ? (int)n : -ENOMEM;

	for (int64_t i = 0; r == 0 && drv && i < n; i++) {
		struct topo_host h;
		json_t *s;

		if ((r = topo_board_host(b, superslices, i, &h)) < 0)
			break;
		s = host_slice(b, &h, drv);
		if (!s || json_array_append_new(items, s) < 0)
			r = -ENOMEM;
		if (r == 0 && cdrv && level >= 0 && !json_object_get(seen, h.domain[level])) {
			s = channel_slice(topo_board_level_key(b, (size_t)level), h.domain[level],
					  cdrv);
			if (!s || json_array_append_new(items, s) < 0 ||
			    json_object_set_new(seen, h.domain[level], json_true()) < 0)
				r = -ENOMEM;
		}
	}
	json_decref(seen);
	if (r < 0) {
		json_decref(items);
		return r;
	}
	*ret_items = items;
	return 0;
}

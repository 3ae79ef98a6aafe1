/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_nodes.c — a board's simulated cluster as Kubernetes Node objects.
 *
 * Each host of the cluster (topo_board_host) becomes the v1 Node podagent
 * would publish on that machine: the labels of CONTRACT.md (hostname,
 * accelerator count and vendor, NUMA count, one topology label per board
 * level, torus coordinates) and capacity = allocatable = the board's host
 * allocatable.  `podctl board nodes` prints them and the appliance's
 * --simulate-board stores them.
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node.c — a discovery report as the v1 Node podagent publishes.
 *
 * metadata.labels are the report's (already valid) labels; annotations carry
 * the accelerator list, the ICI link report, the keys the agent owns (so a
 * later run can remove the ones it no longer finds) and, when hwloc and udev
 * disagree, the differences.  status.capacity holds what was discovered (cpu
 * = PUs, memory, pods, the accelerator resource); status.allocatable is the
 * same, lowered to the board's host allocatable where the board says less.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

json_t *agent_devices_json(const struct agent_pci *accels, size_t n)
{
	json_t *arr = json_array();
	char id[8];

	for (size_t i = 0; arr && i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "pciBusId", json_string(accels[i].bus_id));
		snprintf(id, sizeof(id), "%04x", accels[i].vendor & 0xffff);
		json_object_set_new(o, "vendorId", json_string(id));
		snprintf(id, sizeof(id), "%04x", accels[i].device & 0xffff);
		json_object_set_new(o, "deviceId", json_string(id));
		json_object_set_new(o, "numaNode", json_integer(accels[i].numa));
		if (accels[i].accel_node[0])
			json_object_set_new(o, "devnode", json_string(accels[i].accel_node));
		if (accels[i].vfio_group[0])
			json_object_set_new(o, "vfioGroup", json_string(accels[i].vfio_group));
		if (accels[i].product[0])
			json_object_set_new(o, "product", json_string(accels[i].product));
		json_array_append_new(arr, o);
	}
	return arr;
}

json_t *agent_link_report_json(const struct agent_report *r)
{
	json_t *rep = json_object(), *links = json_array();

	json_object_set_new(rep, "apiVersion", json_string("podkernel.dev/v1alpha1"));
	json_object_set_new(rep, "kind", json_string("LinkReport"));
	json_object_set_new(rep, "host", json_string(r->node_name));
	if (r->id.index >= 0)
		json_object_set_new(rep, "hostIndex", json_integer(r->id.index));
	for (size_t i = 0; i < r->links.n; i++) {
		const struct agent_link *l = &r->links.v[i];
		json_t *o = json_object();

		json_object_set_new(o, "port", json_string(l->name));
		json_object_set_new(o, "operstate", json_string(l->operstate));
		json_object_set_new(o, "carrier", json_boolean(l->carrier));
		json_object_set_new(o, "peer", json_string(l->peer));
		json_array_append_new(links, o);
	}
	json_object_set_new(rep, "links", links);
	return rep;
}

/* A compact JSON text as an annotation value. */
static json_t *json_text(json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_t *str = s ? json_string(s) : NULL;

	free(s);
	json_decref(v);
	return str;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "key1,key2,..." sorted: the labels this agent owns on the node. */
static json_t *owned_keys(const struct agent_labels *l)
{
	const char **keys = calloc(l->n + 1, sizeof(*keys));
	size_t len = 1;
	char *buf, *p;
	json_t *out;

	if (!keys)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		keys[i] = l->key[i];
		len += strlen(l->key[i]) + 1;
	}
	qsort(keys, l->n, sizeof(*keys), cmp_str);
	buf = p = malloc(len);
	if (!buf) {
		free(keys);
		return NULL;
	}
	*p = '\0';
	for (size_t i = 0; i < l->n; i++)
		p += sprintf(p, "%s%s", i ? "," : "", keys[i]);
	out = json_string(buf);
	free(buf);
	free(keys);
	return out;
}

static const char *accel_resource(const struct agent_report *r, const struct topo_board *board)
{
	const char *res = board ? topo_board_accel_resource(board) : NULL;

	if (res && *res)
		return res;
	if (r->naccels == 0)
		return NULL;
	switch (r->accels[0].vendor) {
	case 0x10de:
		return "nvidia.com/gpu";
	case 0x1002:
		return "amd.com/gpu";
	case 0x1ae0:
		return "google.com/tpu";
	default:
		return "podkernel.dev/accelerator";
	}
}

static void set_quantity(json_t *obj, const char *name, int64_t milli,
			 enum topo_quantity_format fmt)
{
	char buf[64];

	if (topo_quantity_format(milli, fmt, buf, sizeof(buf)) == 0)
		json_object_set_new(obj, name, json_string(buf));
}

static json_t *capacity_json(const struct agent_report *r, const struct topo_board *board)
{
	json_t *cap = json_object();
	const char *res = accel_resource(r, board);

	if (r->hw.pus > 0)
		set_quantity(cap, "cpu", (int64_t)r->hw.pus * 1000, TOPO_QUANTITY_DECIMAL_SI);
	if (r->hw.memory > 0 && r->hw.memory < INT64_MAX / 1000)
		set_quantity(cap, "memory", (int64_t)r->hw.memory / 1024 * 1024 * 1000,
			     TOPO_QUANTITY_BINARY_SI);
	set_quantity(cap, "pods", 110 * 1000, TOPO_QUANTITY_DECIMAL_SI);
	if (res)
		set_quantity(cap, res, (int64_t)r->naccels * 1000, TOPO_QUANTITY_DECIMAL_SI);
	return cap;
}

static json_t *allocatable_json(const json_t *cap, const struct topo_board *board)
{
	json_t *alloc = json_deep_copy(cap);
	size_t n = board ? topo_board_allocatable_count(board) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *name = topo_board_allocatable_name(board, i);
		int64_t want = topo_board_allocatable_milli(board, i), have;
		const char *c = json_string_value(json_object_get(cap, name));

		if (!name)
			continue;
		if (c && topo_quantity_parse(c, &have) == 0 && have < want)
			continue; /* the board promises more than the host has */
		set_quantity(alloc, name, want,
			     c ? topo_quantity_format_of(c) : TOPO_QUANTITY_DECIMAL_SI);
	}
	return alloc;
}

json_t *agent_node_json(const struct agent_report *r, const struct topo_board *board)
{
	json_t *node = json_object(), *meta = json_object(), *labels = json_object();
	json_t *ann = json_object(), *status = json_object(), *cap;

	json_object_set_new(node, "apiVersion", json_string("v1"));
	json_object_set_new(node, "kind", json_string("Node"));
	json_object_set_new(meta, "name", json_string(r->node_name));
	for (size_t i = 0; i < r->labels.n; i++)
		json_object_set_new(labels, r->labels.key[i], json_string(r->labels.value[i]));
	json_object_set_new(meta, "labels", labels);
	json_object_set_new(ann, TOPO_ANN_DEVICES,
			    json_text(agent_devices_json(r->accels, r->naccels)));
	json_object_set_new(ann, TOPO_ANN_LINKS, json_text(agent_link_report_json(r)));
	if (json_array_size(r->disagreement) > 0)
		json_object_set_new(ann, AGENT_ANN_DISAGREE,
				    json_text(json_incref(r->disagreement)));
	json_object_set_new(ann, TOPO_ANN_AGENT_OWNED, owned_keys(&r->labels));
	json_object_set_new(meta, "annotations", ann);
	json_object_set_new(node, "metadata", meta);
	cap = capacity_json(r, board);
	json_object_set_new(status, "capacity", cap);
	json_object_set_new(status, "allocatable", allocatable_json(cap, board));
	json_object_set_new(node, "status", status);
	return node;
}

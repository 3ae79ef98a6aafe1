/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_nodes.c — a board's simulated cluster as Kubernetes objects and text.
 *
 * Each host of the cluster (topo_board_host) becomes the v1 Node podagent
 * would publish on that machine: the labels of CONTRACT.md (hostname,
 * accelerator count and vendor, NUMA count, one topology label per board
 * level, torus coordinates) and capacity = allocatable = the board's host
 * allocatable.  The summary of `podctl board show` is derived from the same
 * accessors, so what it prints is what the loader understood.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "topology/tools/board_tools.h"

/* Memory-like resources read best in binary units (256Gi), others in SI. */
static enum topo_quantity_format format_for(const char *resource)
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

		if (topo_quantity_format(topo_board_allocatable_milli(b, i), format_for(name), q,
					 sizeof(q)) < 0 ||
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

int board_node_json(const struct topo_board *b, int superslices, int64_t index, json_t **ret_node)
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

int board_nodes_json(const struct topo_board *b, int superslices, json_t **ret_items)
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
		int r = board_node_json(b, superslices, i, &node);

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

/* ---- podctl board show ------------------------------------------------------------ */

static void show_shape(FILE *f, const char *what, const struct topo_shape *s)
{
	char buf[48];

	if (topo_shape_format(s, buf, sizeof(buf)) == 0)
		fprintf(f, "%s %s (%" PRId64 " chips)", what, buf, topo_shape_volume(s));
}

static void show_torus(FILE *f, const struct topo_board *b)
{
	const struct topo_shape *ss = topo_board_superslice_shape(b);
	const struct topo_shape *cube = topo_board_cube_shape(b);

	if (!topo_board_has_torus(b)) {
		fputs("torus:        none (hosts are linked by the network fabric)\n", f);
		return;
	}
	fputs("torus:        ", f);
	show_shape(f, "superslice", ss);
	fputs(", ", f);
	show_shape(f, "cube", cube);
	fputs(", ", f);
	show_shape(f, "host", topo_board_host_shape(b));
	fprintf(f, ", %s\n", topo_board_wraparound(b) ? "wraparound" : "no wraparound");
	fprintf(f, "cubes:        %" PRId64 " per superslice\n",
		topo_shape_volume(ss) / topo_shape_volume(cube));
	fprintf(f, "ici:          %d ports per chip, %zu leave each host:",
		topo_board_ici_ports_per_chip(b), topo_board_ici_port_count(b));
	for (size_t i = 0; i < topo_board_ici_port_count(b); i++)
		fprintf(f, " %s", topo_board_ici_port_name(b, i));
	fputs(topo_board_ici_port_count(b) ? ", torus wiring\n" : "\n", f);
}

static void show_levels(FILE *f, const struct topo_board *b, int superslices, int64_t hosts)
{
	size_t n = topo_board_level_count(b);
	int64_t domains = 1;

	fputs("levels:       (outermost first)\n", f);
	for (size_t l = 0; l < n; l++) {
		int64_t per = l == 0 ? (superslices > 0 ? superslices : topo_board_level_domains(b, 0))
				     : topo_board_level_domains(b, l) / topo_board_level_domains(b, l - 1);

		domains *= per;
		fprintf(f, "  %-14s %-40s %6" PRId64 " domains, %" PRId64 " host%s each\n",
			topo_board_level_name(b, l), topo_board_level_key(b, l), domains,
			hosts / domains, hosts / domains == 1 ? "" : "s");
	}
}

int board_show(FILE *f, const struct topo_board *b, int superslices)
{
	int64_t hosts = topo_board_host_count(b, superslices);
	struct topo_host first, last;
	char vbuf[8];
	size_t nlevels = topo_board_level_count(b);
	int r;

	if (hosts <= 0)
		return hosts < 0 ? (int)hosts : -EINVAL;
	r = topo_board_host(b, superslices, 0, &first);
	if (r == 0)
		r = topo_board_host(b, superslices, hosts - 1, &last);
	if (r < 0)
		return r;
	fprintf(f, "board:        %s\n", topo_board_name(b));
	if (topo_board_description(b))
		fprintf(f, "description:  %s\n", topo_board_description(b));
	fprintf(f, "accelerator:  %s, PCI vendor %04x (%s), devices", topo_board_accel_resource(b),
		topo_board_accel_vendor(b), topo_pci_vendor_label(topo_board_accel_vendor(b), vbuf));
	for (size_t i = 0; i < topo_board_accel_device_count(b); i++)
		fprintf(f, " %04x", topo_board_accel_device(b, i));
	fprintf(f, "\nhost:         %d chips, %d NUMA nodes, allocatable",
		topo_board_chips_per_host(b), topo_board_numa_per_host(b));
	for (size_t i = 0; i < topo_board_allocatable_count(b); i++) {
		const char *name = topo_board_allocatable_name(b, i);
		char q[64];

		if (topo_quantity_format(topo_board_allocatable_milli(b, i), format_for(name), q,
					 sizeof(q)) == 0)
			fprintf(f, " %s=%s", name, q);
	}
	fputc('\n', f);
	show_torus(f, b);
	fprintf(f, "cluster:      %" PRId64 " hosts, %" PRId64 " chips\n", hosts,
		hosts * topo_board_chips_per_host(b));
	show_levels(f, b, superslices, hosts);
	fprintf(f, "hostnames:    %s .. %s", first.name, last.name);
	if (topo_board_hostname_pattern(b))
		fprintf(f, " (%s)", topo_board_hostname_pattern(b));
	fputs("\nlabel keys:   " TOPO_LABEL_HOSTNAME " " TOPO_LABEL_ACCEL_COUNT " "
	      TOPO_LABEL_ACCEL_VENDOR " " TOPO_LABEL_NUMA_COUNT,
	      f);
	for (size_t l = 0; l + 1 < nlevels; l++)
		fprintf(f, " %s", topo_board_level_key(b, l));
	if (topo_board_has_torus(b))
		fputs(" " TOPO_LABEL_COORDS, f);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

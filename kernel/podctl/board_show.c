/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_show.c — the summary `podctl board show FILE` prints.
 *
 * Every line is derived from the board's accessors (and the host names from
 * topo_board_host), so what it prints is what the loader understood.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

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
		int64_t per =
		    l == 0 ? (superslices > 0 ? superslices : topo_board_level_domains(b, 0))
			   : topo_board_level_domains(b, l) / topo_board_level_domains(b, l - 1);

		domains *= per;
		fprintf(f, "  %-14s %-40s %6" PRId64 " domains, %" PRId64 " host%s each\n",
			topo_board_level_name(b, l), topo_board_level_key(b, l), domains,
			hosts / domains, hosts / domains == 1 ? "" : "s");
	}
}

int podctl_board_show(FILE *f, const struct topo_board *b, int superslices)
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
		topo_board_accel_vendor(b),
		topo_pci_vendor_label(topo_board_accel_vendor(b), vbuf));
	for (size_t i = 0; i < topo_board_accel_device_count(b); i++)
		fprintf(f, " %04x", topo_board_accel_device(b, i));
	fprintf(f, "\nhost:         %d chips, %d NUMA nodes, allocatable",
		topo_board_chips_per_host(b), topo_board_numa_per_host(b));
	for (size_t i = 0; i < topo_board_allocatable_count(b); i++) {
		const char *name = topo_board_allocatable_name(b, i);
		char q[64];

		if (topo_quantity_format(topo_board_allocatable_milli(b, i),
					 pk_board_quantity_format(name), q, sizeof(q)) == 0)
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
	fputs("\nlabel keys:   " TOPO_LABEL_HOSTNAME " " TOPO_LABEL_ACCEL_COUNT
	      " " TOPO_LABEL_ACCEL_VENDOR " " TOPO_LABEL_NUMA_COUNT,
	      f);
	for (size_t l = 0; l + 1 < nlevels; l++)
		fprintf(f, " %s", topo_board_level_key(b, l));
	if (topo_board_has_torus(b))
		fputs(" " TOPO_LABEL_COORDS, f);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

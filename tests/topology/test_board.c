/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of topology/board.c and topology/board_yaml.c: every board in
 * boards/ loads, broken boards fail at the exact FILE:LINE:COL, hosts are
 * enumerated with the labels podagent publishes, and the ICI wiring is
 * symmetric.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"

#define BOARDS PODKERNEL_SRCDIR "/boards"

static struct topo_board *load(const char *file)
{
	struct topo_board *b = topo_board_new();
	char path[512], err[TOPO_ERR_MAX] = "";

	snprintf(path, sizeof(path), BOARDS "/%s", file);
	ck_assert_ptr_nonnull(b);
	ck_assert_msg(topo_board_load_file(b, path, err, sizeof(err)) == 0, "%s: %s", file, err);
	return b;
}

/* A valid GPU board to break line by line in the tests below. */
static const char gpu_board[] = "apiVersion: podkernel.dev/v1alpha1\n"	   /* 1 */
				"kind: Board\n"				   /* 2 */
				"metadata:\n"				   /* 3 */
				"  name: small\n"			   /* 4 */
				"spec:\n"				   /* 5 */
				"  accelerator:\n"			   /* 6 */
				"    resource: nvidia.com/gpu\n"	   /* 7 */
				"    vendorId: \"10de\"\n"		   /* 8 */
				"    deviceIds: [\"2330\"]\n"		   /* 9 */
				"    chipsPerHost: 8\n"			   /* 10 */
				"  host:\n"				   /* 11 */
				"    allocatable:\n"			   /* 12 */
				"      cpu: \"64\"\n"			   /* 13 */
				"      nvidia.com/gpu: \"8\"\n"		   /* 14 */
				"    numaNodes: 2\n"			   /* 15 */
				"  levels:\n"				   /* 16 */
				"    - name: rack\n"			   /* 17 */
				"      key: topology.podkernel.dev/rack\n" /* 18 */
				"      count: 2\n"			   /* 19 */
				"    - name: host\n"			   /* 20 */
				"      key: kubernetes.io/hostname\n"	   /* 21 */
				"      count: 3\n";			   /* 22 */

static int load_text(const char *text, char *err, size_t errlen)
{
	struct topo_board *b = topo_board_new();
	int r = topo_board_load_buffer(b, "t.yaml", text, strlen(text), err, errlen);

	topo_board_free(b);
	return r;
}

/* Replace the first occurrence of from by to in the sample and load it. */
static void expect_error(const char *from, const char *to, const char *want)
{
	char text[4096], err[TOPO_ERR_MAX] = "";
	const char *at = strstr(gpu_board, from);
	int r;

	ck_assert_msg(at, "sample lacks '%s'", from);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - gpu_board), gpu_board, to,
		 at + strlen(from));
	r = load_text(text, err, sizeof(err));
	ck_assert_msg(r == -EINVAL, "'%s' -> '%s' loaded (%d)", from, to, r);
	ck_assert_str_eq(err, want);
}

/* Levels may use the label keys a provider already puts on its nodes. */
/* Domain levels are told apart from the per-host geometry under the same prefix. */
START_TEST(level_keys_not_geometry)
{
	ck_assert(topo_label_is_level("topology.podkernel.dev/cube"));
	ck_assert(topo_label_is_level("topology.podkernel.dev/superslice"));
	ck_assert(!topo_label_is_level(TOPO_LABEL_COORDS));
	ck_assert(!topo_label_is_level(TOPO_LABEL_TORUS));
	ck_assert(!topo_label_is_level(TOPO_LABEL_TORUS_SHAPE));
	ck_assert(!topo_label_is_level(TOPO_LABEL_CUBE_SHAPE));
	ck_assert(!topo_label_is_level(TOPO_LABEL_HOST_SHAPE));
	ck_assert(!topo_label_is_level(TOPO_LABEL_WRAPAROUND));
	ck_assert(!topo_label_is_level(TOPO_LABEL_HOST_INDEX));
	ck_assert(!topo_label_is_level(TOPO_LABEL_HOSTNAME));
	ck_assert(!topo_label_is_level("accelerator.podkernel.dev/count"));
}
END_TEST

START_TEST(provider_level_keys)
{
	static const struct {
		const char *key;
	} keys[] = {{"cloud.google.com/gce-topology-block"},
		    {"network.topology.nvidia.com/spine"},
		    {"rack"}};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char text[4096], err[TOPO_ERR_MAX] = "";
		const char *from = "key: topology.podkernel.dev/rack";
		const char *at = strstr(gpu_board, from);
		struct topo_board *b = topo_board_new();
		struct topo_host h;

		snprintf(text, sizeof(text), "%.*skey: %s%s", (int)(at - gpu_board), gpu_board,
			 keys[i].key, at + strlen(from));
		ck_assert_msg(
		    topo_board_load_buffer(b, "t.yaml", text, strlen(text), err, sizeof(err)) == 0,
		    "%s: %s", keys[i].key, err);
		ck_assert_str_eq(topo_board_level_key(b, 0), keys[i].key);
		ck_assert_int_eq(topo_board_host(b, 0, 4, &h), 0);
		ck_assert_str_eq(h.domain[0], "rack1");
		topo_board_free(b);
	}
}
END_TEST

START_TEST(all_boards_load)
{
	DIR *d = opendir(BOARDS);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		struct topo_board *b;
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		b = load(e->d_name);
		ck_assert_ptr_nonnull(topo_board_name(b));
		ck_assert_int_gt(topo_board_host_count(b, 0), 0);
		ck_assert_uint_gt(topo_board_level_count(b), 0);
		ck_assert_str_eq(topo_board_level_key(b, topo_board_level_count(b) - 1),
				 "kubernetes.io/hostname");
		topo_board_free(b);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 4);
}
END_TEST

START_TEST(superslice_facts)
{
	struct topo_board *b = load("tpu-superslice.yaml");
	const struct topo_shape *ss = topo_board_superslice_shape(b);

	ck_assert_str_eq(topo_board_name(b), "tpu-superslice");
	ck_assert_str_eq(topo_board_accel_resource(b), "google.com/tpu");
	ck_assert_uint_eq(topo_board_accel_vendor(b), 0x1ae0);
	ck_assert(topo_board_is_accel(b, 0x1ae0, 0x005e));
	ck_assert(!topo_board_is_accel(b, 0x10de, 0x005e));
	ck_assert(!topo_board_is_accel(b, 0x1ae0, 0x1234));
	ck_assert_int_eq(topo_board_chips_per_host(b), 4);
	ck_assert_int_eq(topo_board_numa_per_host(b), 2);
	ck_assert(topo_board_has_torus(b));
	ck_assert(topo_board_wraparound(b));
	ck_assert_int_eq(topo_shape_volume(ss), 1024);
	ck_assert_int_eq(topo_shape_volume(topo_board_cube_shape(b)), 64);
	ck_assert_int_eq(topo_shape_volume(topo_board_host_shape(b)), 4);
	ck_assert_uint_eq(topo_board_level_count(b), 3);
	ck_assert_str_eq(topo_board_level_name(b, 1), "cube");
	ck_assert_str_eq(topo_board_level_key(b, 0), "topology.podkernel.dev/superslice");
	ck_assert_int_eq(topo_board_level_domains(b, 0), 2);
	ck_assert_int_eq(topo_board_level_domains(b, 1), 32);
	ck_assert_int_eq(topo_board_level_domains(b, 2), 512);
	ck_assert_int_eq(topo_board_host_count(b, 0), 512);
	ck_assert_int_eq(topo_board_host_count(b, 1), 256);
	ck_assert_int_eq(topo_board_host_count(b, 5), 1280);
	ck_assert_int_eq(topo_board_ici_ports_per_chip(b), 6);
	ck_assert_uint_eq(topo_board_ici_port_count(b), 16);
	ck_assert_str_eq(topo_board_ici_port_name(b, 0), "ici0xm");
	ck_assert_ptr_null(topo_board_ici_port_name(b, 16));
	ck_assert_str_eq(topo_board_hostname_pattern(b), "tpu-ss{superslice}-h{host}");
	for (size_t i = 0; i < topo_board_allocatable_count(b); i++)
		if (strcmp(topo_board_allocatable_name(b, i), "memory") == 0)
			ck_assert_int_eq(topo_board_allocatable_milli(b, i), (400LL << 30) * 1000);
	topo_board_free(b);
}
END_TEST

START_TEST(hosts_superslice)
{
	struct topo_board *b = load("tpu-superslice.yaml");
	struct topo_host h;
	char *seen;

	ck_assert_int_eq(topo_board_host(b, 0, 103, &h), 0);
	/* Host 103: cube 6 of superslice 0 (cube origin 0.4.4), host 7 in it (2.2.1). */
	ck_assert_str_eq(h.name, "tpu-ss0-h103");
	ck_assert_str_eq(h.coords, "2.6.5");
	ck_assert_str_eq(h.domain[0], "ss0");
	ck_assert_str_eq(h.domain[1], "ss0-c6");
	ck_assert_str_eq(h.domain[2], "tpu-ss0-h103");
	ck_assert_int_eq(h.coord.c[1], 6);
	ck_assert_int_eq(topo_board_host(b, 0, 256 + 17, &h), 0);
	ck_assert_str_eq(h.name, "tpu-ss1-h17");
	ck_assert_str_eq(h.domain[1], "ss1-c1");
	ck_assert_str_eq(h.coords, "6.0.0"); /* cube 1 at 4.0.0, host 1 in it */
	ck_assert_int_eq(topo_board_host(b, 0, 512, &h), -ERANGE);
	ck_assert_int_eq(topo_board_host(b, 0, -1, &h), -ERANGE);
	ck_assert_int_eq(topo_board_host(b, 3, 700, &h), 0);
	ck_assert_str_eq(h.name, "tpu-ss2-h188");
	/* Every chip of a superslice belongs to exactly one host. */
	seen = calloc(1024, 1);
	for (int64_t i = 0; i < 256; i++) {
		ck_assert_int_eq(topo_board_host(b, 1, i, &h), 0);
		ck_assert(topo_label_value_valid(h.coords, NULL, 0));
		for (int dx = 0; dx < 2; dx++)
			for (int dy = 0; dy < 2; dy++) {
				struct topo_coord c = {
				    {h.coord.c[0] + dx, h.coord.c[1] + dy, h.coord.c[2]}};
				int64_t k = topo_coord_index(topo_board_superslice_shape(b), &c);

				ck_assert(topo_coord_in(topo_board_superslice_shape(b), &c));
				ck_assert_int_eq(seen[k], 0);
				seen[k] = 1;
			}
	}
	free(seen);
	topo_board_free(b);
}
END_TEST

START_TEST(hosts_gpu)
{
	struct topo_board *b = load("gpu-cluster.yaml");
	struct topo_host h;

	ck_assert(!topo_board_has_torus(b));
	ck_assert_ptr_null(topo_board_cube_shape(b));
	ck_assert_int_eq(topo_board_host_count(b, 0), 64);
	ck_assert_int_eq(topo_board_host(b, 0, 45, &h), 0);
	ck_assert_str_eq(h.name, "gpu-b1-r1-n5");
	ck_assert_str_eq(h.domain[0], "b1");
	ck_assert_str_eq(h.domain[1], "b1-r1");
	ck_assert_str_eq(h.coords, "");
	ck_assert_uint_eq(topo_board_ici_port_count(b), 0);
	ck_assert_int_eq(topo_board_ici_peer(b, 0, 0, 0, &(int64_t){0}, &(size_t){0}), -ENOENT);
	topo_board_free(b);

	b = load("gb200-nvl72.yaml");
	ck_assert_int_eq(topo_board_host_count(b, 0), 144);
	ck_assert_int_eq(topo_board_host(b, 0, 18 * 5 + 3, &h), 0);
	ck_assert_str_eq(h.name, "gb200-b1-nvl1-t3");
	ck_assert_str_eq(h.domain[1], "b1-nvl1");
	ck_assert_str_eq(topo_board_level_key(b, 1), "topology.podkernel.dev/nvlink-domain");
	topo_board_free(b);
}
END_TEST

/* Peer of the peer is the port itself, for every port of every host. */
static void check_wiring(struct topo_board *b, int superslices, int64_t *ret_wired)
{
	int64_t n = topo_board_host_count(b, superslices), wired = 0;

	for (int64_t h = 0; h < n; h++)
		for (size_t p = 0; p < topo_board_ici_port_count(b); p++) {
			int64_t ph, bh;
			size_t pp, bp;
			int r = topo_board_ici_peer(b, superslices, h, p, &ph, &pp);

			if (r == -ENOENT)
				continue;
			ck_assert_int_eq(r, 0);
			wired++;
			ck_assert_int_eq(topo_board_ici_peer(b, superslices, ph, pp, &bh, &bp), 0);
			ck_assert_int_eq(bh, h);
			ck_assert_uint_eq(bp, p);
			/* Peers stay inside one superslice torus. */
			ck_assert_int_eq(ph / topo_board_host_count(b, 1),
					 h / topo_board_host_count(b, 1));
		}
	*ret_wired = wired;
}

START_TEST(wiring)
{
	struct topo_board *b = load("tpu-superslice.yaml");
	int64_t wired, ph;
	size_t pp;

	check_wiring(b, 2, &wired);
	ck_assert_int_eq(wired, 512 * 16); /* wraparound: every port is cabled */
	/* Host 0 (chips 0..1 x 0..1 at z=0): port 0 is chip 0 x-, which wraps to x=7. */
	ck_assert_int_eq(topo_board_ici_peer(b, 0, 0, 0, &ph, &pp), 0);
	ck_assert_str_eq(topo_board_ici_port_name(b, pp), "ici1xp");
	{
		struct topo_host h;

		ck_assert_int_eq(topo_board_host(b, 0, ph, &h), 0);
		ck_assert_str_eq(h.coords, "6.0.0");
	}
	/* Port 3 (chip 0 z+) reaches the host above: z=1. */
	ck_assert_int_eq(topo_board_ici_peer(b, 0, 0, 3, &ph, &pp), 0);
	ck_assert_str_eq(topo_board_ici_port_name(b, pp), "ici0zm");
	ck_assert_int_eq(ph, 4); /* host grid of a cube is 2x2x4, x fastest */
	ck_assert_int_eq(topo_board_ici_peer(b, 0, 0, 16, &ph, &pp), -ENOENT);
	ck_assert_int_eq(topo_board_ici_peer(b, 0, 512, 0, &ph, &pp), -ERANGE);
	topo_board_free(b);

	b = load("tpu-cube.yaml");
	check_wiring(b, 0, &wired);
	ck_assert_int_eq(wired, 16 * 16);
	topo_board_free(b);
}
END_TEST

START_TEST(wiring_without_wraparound)
{
	static const char text[] =
	    "apiVersion: podkernel.dev/v1alpha1\nkind: Board\nmetadata: {name: mesh}\n"
	    "spec:\n"
	    "  accelerator: {resource: google.com/tpu, vendorId: 1ae0, deviceIds: [005e], "
	    "chipsPerHost: 1}\n"
	    "  host: {allocatable: {google.com/tpu: 1}, numaNodes: 1}\n"
	    "  torus: {host: 1x1x1, cube: 2x2x1, superslice: 4x2x1, wraparound: false}\n"
	    "  ici: {portsPerChip: 4, ports: [a, b, c, d], wiring: torus}\n"
	    "  levels:\n"
	    "    - {name: slice, key: topology.podkernel.dev/slice, shape: superslice, "
	    "count: 1}\n"
	    "    - {name: host, key: kubernetes.io/hostname}\n";
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX] = "";
	int64_t wired, ph;
	size_t pp;

	ck_assert_msg(topo_board_load_buffer(b, "mesh", text, sizeof(text) - 1, err, sizeof(err)) ==
			  0,
		      "%s", err);
	ck_assert_int_eq(topo_board_host_count(b, 0), 8);
	check_wiring(b, 0, &wired);
	/* A 4x2 mesh: 3*2 x-links and 4*1 y-links, both ends counted. */
	ck_assert_int_eq(wired, 2 * (6 + 4));
	ck_assert_int_eq(topo_board_ici_peer(b, 0, 0, 0, &ph, &pp), -ENOENT); /* x- at x=0 */
	ck_assert_int_eq(topo_board_host(b, 0, 7, &(struct topo_host){0}), 0);
	topo_board_free(b);
}
END_TEST

START_TEST(levels_above_torus)
{
	static const char text[] =
	    "apiVersion: podkernel.dev/v1alpha1\nkind: Board\nmetadata: {name: pods}\n"
	    "spec:\n"
	    "  accelerator: {resource: google.com/tpu, vendorId: 1ae0, deviceIds: [005e], "
	    "chipsPerHost: 2}\n"
	    "  host: {allocatable: {google.com/tpu: 2}, numaNodes: 1}\n"
	    "  torus: {host: 2x1x1, cube: 2x2x2, superslice: 4x2x2, wraparound: true}\n"
	    "  ici: {portsPerChip: 6, ports: [a, b, c, d, e, f, g, h, i, j], wiring: torus}\n"
	    "  levels:\n"
	    "    - {name: pod, key: topology.podkernel.dev/pod, prefix: p, count: 3}\n"
	    "    - {name: slice, key: topology.podkernel.dev/slice, prefix: s, shape: superslice, "
	    "count: 2}\n"
	    "    - {name: cube, key: topology.podkernel.dev/cube, prefix: c, shape: cube}\n"
	    "    - {name: host, key: kubernetes.io/hostname}\n"
	    "  hostnamePattern: \"n{index}\"\n";
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX] = "";
	struct topo_host h;
	int64_t wired;

	ck_assert_msg(topo_board_load_buffer(b, "pods", text, sizeof(text) - 1, err, sizeof(err)) ==
			  0,
		      "%s", err);
	/* 3 pods x 2 slices x 2 cubes x 4 hosts. */
	ck_assert_int_eq(topo_board_host_count(b, 0), 48);
	ck_assert_int_eq(topo_board_level_domains(b, 2), 12);
	ck_assert_int_eq(topo_board_host(b, 0, 47, &h), 0);
	ck_assert_str_eq(h.name, "n47");
	ck_assert_str_eq(h.domain[0], "p2");
	ck_assert_str_eq(h.domain[1], "p2-s1");
	ck_assert_str_eq(h.domain[2], "p2-s1-c1");
	ck_assert_str_eq(h.coords, "2.1.1");
	/* Two 2x1x1 hosts share each x link pair in a 4-wide ring: all ports cabled. */
	check_wiring(b, 0, &wired);
	ck_assert_int_eq(wired, 48 * 10);
	topo_board_free(b);
}
END_TEST

START_TEST(broken_positions)
{
	expect_error("kind: Board", "kind: Bored",
		     "t.yaml:2:7: kind: expected Board, got \"Bored\"");
	expect_error("      count: 3\n", "      count: 3\n  dra: {driver: GPU_x}\n",
		     "t.yaml:23:17: spec.dra.driver: expected a DRA driver name: a DNS subdomain "
		     "of at most 63 characters like gpu.example.com");
	expect_error("      count: 3\n",
		     "      count: 3\n  dra: {driver: g.example.com, channels: {driver: c.x, "
		     "level: host}}\n",
		     "t.yaml:23:63: spec.dra.channels.level: expected the name of a level above "
		     "the host");
	expect_error("      count: 3\n", "      count: 3\n  dra: {channels: {}}\n",
		     "t.yaml:23:8: spec.dra: missing required field \"driver\"");
	expect_error("  name: small\n", "  name: small\n  nick: x\n",
		     "t.yaml:5:3: metadata: unknown field \"nick\"");
	expect_error("    vendorId: \"10de\"", "    vendorId: \"10dex\"",
		     "t.yaml:8:15: spec.accelerator.vendorId: expected a PCI ID of 4 hex digits, "
		     "got \"10dex\"");
	expect_error("[\"2330\"]", "[\"2330\", 12]",
		     "t.yaml:9:25: spec.accelerator.deviceIds[1]: expected a PCI ID of 4 hex "
		     "digits, got \"12\"");
	expect_error("chipsPerHost: 8", "chipsPerHost: eight",
		     "t.yaml:10:19: spec.accelerator.chipsPerHost: expected an integer, got "
		     "\"eight\"");
	expect_error("chipsPerHost: 8", "chipsPerHost: 1000",
		     "t.yaml:10:19: spec.accelerator.chipsPerHost: must be between 1 and 64");
	expect_error("cpu: \"64\"", "cpu: \"64x\"",
		     "t.yaml:13:12: spec.host.allocatable[cpu]: expected a quantity like 500m, 64 "
		     "or 256Gi, got \"64x\"");
	expect_error("cpu: \"64\"", "cpu: 1E",
		     "t.yaml:13:12: spec.host.allocatable[cpu]: quantity \"1E\" is too large");
	expect_error("nvidia.com/gpu: \"8\"", "nvidia.com/gpu: \"4\"",
		     "t.yaml:14:23: spec.host.allocatable[nvidia.com/gpu]: must equal "
		     "spec.accelerator.chipsPerHost (8)");
	expect_error("    numaNodes: 2\n", "",
		     "t.yaml:12:5: spec.host: missing required field \"numaNodes\"");
	expect_error("    numaNodes: 2\n", "    numaNodes: 2\n    numaNodes: 2\n",
		     "t.yaml:16:5: spec.host: duplicate field \"numaNodes\"");
	expect_error(
	    "key: topology.podkernel.dev/rack", "key: topology.podkernel.dev/coords",
	    "t.yaml:18:12: spec.levels[0].key: \"topology.podkernel.dev/coords\" is a label "
	    "podagent sets itself: a level needs a key of its own (e.g. "
	    "topology.podkernel.dev/rack, or a provider's such as "
	    "cloud.google.com/gce-topology-block)");
	expect_error("key: topology.podkernel.dev/rack", "key: accelerator.podkernel.dev/count",
		     "t.yaml:18:12: spec.levels[0].key: \"accelerator.podkernel.dev/count\" is a "
		     "label podagent sets itself: a level needs a key of its own (e.g. "
		     "topology.podkernel.dev/rack, or a provider's such as "
		     "cloud.google.com/gce-topology-block)");

	expect_error(
	    "key: topology.podkernel.dev/rack", "key: topology.podkernel.dev/torus",
	    "t.yaml:18:12: spec.levels[0].key: \"topology.podkernel.dev/torus\" is a label "
	    "podagent sets itself: a level needs a key of its own (e.g. "
	    "topology.podkernel.dev/rack, or a provider's such as "
	    "cloud.google.com/gce-topology-block)");
	expect_error("key: kubernetes.io/hostname", "key: topology.podkernel.dev/host",
		     "t.yaml:21:12: spec.levels[1].key: the last level is the host: expected "
		     "kubernetes.io/hostname");
	expect_error("      count: 3\n", "",
		     "t.yaml:20:7: spec.levels[1]: missing required field \"count\"");
	expect_error("    - name: host", "    - name: rack",
		     "t.yaml:20:13: spec.levels[1].name: duplicate level \"rack\"");
	expect_error("  levels:\n", "  hostnamePattern: \"n-{rack}\"\n  levels:\n",
		     "t.yaml:16:20: spec.hostnamePattern: names would not be unique: use {host} "
		     "or {index}");
	expect_error("  levels:\n", "  hostnamePattern: \"n{rack}{host}\"\n  levels:\n",
		     "t.yaml:16:20: spec.hostnamePattern: placeholders need text between them");
	expect_error("  levels:\n", "  hostnamePattern: \"N-{host}\"\n  levels:\n",
		     "t.yaml:16:20: spec.hostnamePattern: 'N' is not allowed in a node name");
	expect_error("  levels:\n", "  shape: 4x4x4\n  levels:\n",
		     "t.yaml:16:3: spec: unknown field \"shape\"");
	expect_error("      count: 2\n", "      count: 2\n      shape: cube\n",
		     "t.yaml:20:14: spec.levels[0]: shape needs spec.torus");
	expect_error("  accelerator:\n",
		     "  torus: {host: 2x2x2, cube: 4x4x4, wraparound: yes}\n"
		     "  accelerator:\n",
		     "t.yaml:6:49: spec.torus.wraparound: expected true or false, got \"yes\"");
	expect_error("  accelerator:\n",
		     "  torus: {host: 2x2x1, cube: 4x4x4, wraparound: true}\n"
		     "  accelerator:\n",
		     "t.yaml:6:17: spec.torus.host: holds 4 chips, spec.accelerator.chipsPerHost "
		     "is 8");
	expect_error("  accelerator:\n",
		     "  torus: {host: 2x2x2, cube: 3x4x4, wraparound: true}\n"
		     "  accelerator:\n",
		     "t.yaml:6:30: spec.torus.cube: is not tiled by the host shape");
	expect_error("  accelerator:\n",
		     "  torus: {host: 2x2x2, cube: 4x4, wraparound: true}\n"
		     "  accelerator:\n",
		     "t.yaml:6:30: spec.torus.cube: expected a shape like 4x4x4, got \"4x4\"");
	expect_error("apiVersion: podkernel.dev/v1alpha1", "apiVersion: v1",
		     "t.yaml:1:13: apiVersion: expected podkernel.dev/v1alpha1, got \"v1\"");
	expect_error("spec:\n", "spec:\n  bogus: 1\n", "t.yaml:6:3: spec: unknown field \"bogus\"");
	expect_error("    resource: nvidia.com/gpu", "    resource: gpu",
		     "t.yaml:7:15: spec.accelerator.resource: expected an extended resource name "
		     "like google.com/tpu");
	expect_error("  levels:\n",
		     "  ici: {portsPerChip: 6, ports: [], wiring: torus}\n"
		     "  levels:\n",
		     "t.yaml:16:8: spec.ici: ICI wiring needs spec.torus");
}
END_TEST

START_TEST(broken_yaml)
{
	char err[TOPO_ERR_MAX];
	static const char *docs[][2] = {
	    {"a: [1, 2\n", "t.yaml:2:1: did not find expected ',' or ']' while parsing a "
			   "flow sequence"},
	    {"", "t.yaml:1:1: empty file: expected a Board"},
	    {"- 1\n- 2\n", "t.yaml:1:1: expected a mapping"},
	    {"kind: Board\n", "t.yaml:1:1: missing required field \"apiVersion\""},
	    {"a: 1\n---\nb: 2\n", "t.yaml:3:1: a board file holds one document"},
	    {"a: 1\n  b: 2\n", "t.yaml:2:4: mapping values are not allowed in this context"},
	    {"? [a]\n: 1\n", "t.yaml:1:3: expected a string key"},
	    {"apiVersion: podkernel.dev/v1alpha1\nkind: \"Bo\\0ard\"\nmetadata: {}\nspec: {}\n",
	     "t.yaml:2:7: kind: contains a NUL character"},
	    {"apiVersion: &v podkernel.dev/v1alpha1\nkind: Board\nmetadata: *v\nspec: {}\n",
	     "t.yaml:1:13: metadata: expected a mapping"},
	};

	char deep[200];

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		ck_assert_int_eq(load_text(docs[i][0], err, sizeof(err)), -EINVAL);
		ck_assert_str_eq(err, docs[i][1]);
	}
	/* Flow nesting is bounded before libyaml (quadratic in depth) sees it. */
	snprintf(deep, sizeof(deep), "a: %.40s", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
	ck_assert_int_eq(load_text(deep, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.yaml:1:36: nested deeper than 32 levels");
	/* Brackets in quotes and comments do not count. */
	snprintf(
	    deep, sizeof(deep),
	    "# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\na: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[''s'\n"
	    "b: \"\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n");
	ck_assert_int_eq(load_text(deep, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.yaml:2:1: unknown field \"a\"");
}
END_TEST

START_TEST(limits_and_states)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX] = "", *big;
	size_t n = 2 * 1024 * 1024;

	/* Not loaded: accessors answer NULL/0. */
	ck_assert_ptr_null(topo_board_name(b));
	ck_assert_int_eq(topo_board_host_count(b, 0), 0);
	ck_assert_int_eq(topo_board_host(b, 0, 0, &(struct topo_host){0}), -EINVAL);
	big = malloc(n);
	memset(big, ' ', n);
	ck_assert_int_eq(topo_board_load_buffer(b, "big", big, n, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "big:1:1: larger than 1048576 bytes");
	free(big);
	ck_assert_int_eq(topo_board_load_file(b, "/nonexistent/board.yaml", err, sizeof(err)),
			 -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/board.yaml: No such file or directory");
	ck_assert_int_eq(topo_board_load_file(b, "/", err, sizeof(err)), -EISDIR);
	/* A failed load leaves it unloaded; a good one loads; a second load is refused. */
	ck_assert_int_eq(
	    topo_board_load_buffer(b, "g", gpu_board, strlen(gpu_board), err, sizeof(err)), 0);
	ck_assert_str_eq(topo_board_name(b), "small");
	ck_assert_int_eq(topo_board_host_count(b, 0), 6);
	ck_assert_int_eq(topo_board_host_count(b, 4097), -ERANGE);
	ck_assert_int_eq(
	    topo_board_load_buffer(b, "g", gpu_board, strlen(gpu_board), err, sizeof(err)), -EBUSY);
	topo_board_free(b);
	topo_board_free(NULL);
	/* Too many levels. */
	{
		char text[4096];
		int len = snprintf(text, sizeof(text), "%.*s",
				   (int)(strstr(gpu_board, "  levels:") - gpu_board), gpu_board);

		len += snprintf(text + len, sizeof(text) - len, "  levels:\n");
		for (int i = 0; i < 7; i++)
			len += snprintf(
			    text + len, sizeof(text) - len,
			    "    - {name: l%d, key: topology.podkernel.dev/l%d, count: 1}\n", i, i);
		ck_assert_int_eq(load_text(text, err, sizeof(err)), -EINVAL);
		ck_assert_str_eq(err, "t.yaml:17:5: spec.levels: more than 6 items");
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("board");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, all_boards_load);
	tcase_add_test(tc, provider_level_keys);
	tcase_add_test(tc, level_keys_not_geometry);
	tcase_add_test(tc, superslice_facts);
	tcase_add_test(tc, hosts_superslice);
	tcase_add_test(tc, hosts_gpu);
	tcase_add_test(tc, wiring);
	tcase_add_test(tc, wiring_without_wraparound);
	tcase_add_test(tc, levels_above_torus);
	tcase_add_test(tc, broken_positions);
	tcase_add_test(tc, broken_yaml);
	tcase_add_test(tc, limits_and_states);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of kernel/api/board_nodes.c: the Nodes of every board's simulated
 * cluster decode and validate as v1 Nodes, carry the labels of CONTRACT.md
 * (the torus labels on torus boards), and their level labels rebuild the
 * board's domain tree: every domain in one parent, the board's counts.
 * The ResourceSlices of a board's DRA drivers validate as resource.k8s.io/v1
 * objects: gpu-cluster one slice per host with a device per GPU (index,
 * NUMA node, PCIe root), gb200-nvl72 also one IMEX channel slice per NVL72
 * domain whose nodeSelector picks that domain's hosts.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "topology/topology.h"

#define BOARDS PODKERNEL_SRCDIR "/boards"

static struct topo_board *load(const char *file)
{
	struct topo_board *b = topo_board_new();
	char path[512], err[TOPO_ERR_MAX] = "";

	snprintf(path, sizeof(path), BOARDS "/%s", file);
	ck_assert_msg(topo_board_load_file(b, path, err, sizeof(err)) == 0, "%s", err);
	return b;
}

/* Nodes decode, validate, have valid and unique names, and the contract's labels. */
static void check_nodes(const struct topo_board *b, int superslices)
{
	json_t *items;
	size_t n;
	const char **keys = NULL;
	size_t nlevels = topo_board_level_count(b);
	json_t *parent_of = json_array(); /* per level: value -> value one level up */

	ck_assert_int_eq(pk_board_nodes_json(b, superslices, &items), 0);
	n = json_array_size(items);
	ck_assert_int_eq((int64_t)n, topo_board_host_count(b, superslices));
	keys = calloc(nlevels, sizeof(*keys));
	for (size_t l = 0; l < nlevels; l++) {
		keys[l] = topo_board_level_key(b, l);
		json_array_append_new(parent_of, json_object());
	}
	for (size_t i = 0; i < n; i++) {
		json_t *obj = json_array_get(items, i), *labels, *v;
		struct pk_errors errs = {0};
		struct pk_node *node = NULL;
		const char *key, *up = "";

		ck_assert_int_eq(pk_kind_of(obj), PK_KIND_NODE);
		ck_assert_msg(pk_validate(obj, &errs) == 0, "%s", errs.n ? errs.msg[0] : "");
		ck_assert_int_eq(pk_node_decode(obj, &node, &errs), 0);
		ck_assert_int_eq(pk_node_allocatable(node, topo_board_accel_resource(b)),
				 topo_board_chips_per_host(b) * 1000LL);
		ck_assert_str_eq(pk_meta_label(&node->meta, "kubernetes.io/hostname"),
				 node->meta.name);
		ck_assert_ptr_nonnull(
		    pk_meta_label(&node->meta, "accelerator.podkernel.dev/vendor"));
		ck_assert_ptr_nonnull(pk_meta_label(&node->meta, "numa.podkernel.dev/count"));
		ck_assert_int_eq(topo_board_has_torus(b),
				 pk_meta_label(&node->meta, "topology.podkernel.dev/coords") !=
				     NULL);
		ck_assert_int_eq(topo_board_has_torus(b),
				 pk_meta_label(&node->meta, TOPO_LABEL_TORUS) != NULL &&
				     pk_meta_label(&node->meta, TOPO_LABEL_WRAPAROUND) != NULL);
		labels = pk_get(obj, "metadata.labels");
		json_object_foreach(labels, key, v)
		{
			ck_assert(topo_label_key_valid(key, NULL, 0));
			ck_assert(topo_label_value_valid(json_string_value(v), NULL, 0));
		}
		/* Every domain sits in one domain of the level above. */
		for (size_t l = 0; l < nlevels; l++) {
			const char *val = json_string_value(json_object_get(labels, keys[l]));
			json_t *seen;

			ck_assert_ptr_nonnull(val);
			seen = json_object_get(json_array_get(parent_of, l), val);
			if (seen)
				ck_assert_str_eq(json_string_value(seen), up);
			else
				json_object_set_new(json_array_get(parent_of, l), val,
						    json_string(up));
			up = val;
		}
		pk_node_free(node);
		pk_errors_clear(&errs);
	}
	/* Labels rebuild the board's levels: same domain counts. */
	if (superslices == 0)
		for (size_t l = 0; l < nlevels; l++)
			ck_assert_int_eq((int)json_object_size(json_array_get(parent_of, l)),
					 topo_board_level_domains(b, l));
	/* One host-level domain per node: names are unique. */
	ck_assert_uint_eq(json_object_size(json_array_get(parent_of, nlevels - 1)), n);
	json_decref(parent_of);
	free(keys);
	json_decref(items);
}

START_TEST(every_board)
{
	DIR *d = opendir(BOARDS);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct topo_board *b;

		if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		b = load(e->d_name);
		check_nodes(b, 0);
		check_nodes(b, 1);
		topo_board_free(b);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 4);
}
END_TEST

static size_t check_slices(const char *file, json_t **ret)
{
	struct topo_board *b = load(file);
	json_t *items, *s;
	size_t i;

	ck_assert_int_eq(pk_board_slices_json(b, 0, &items), 0);
	json_array_foreach(items, i, s)
	{
		struct pk_errors errs = {0};

		ck_assert_msg(pk_validate(s, &errs) == 0, "%s: %s: %s", file, pk_name(s),
			      errs.n ? errs.msg[0] : "");
		pk_errors_clear(&errs);
	}
	topo_board_free(b);
	*ret = items;
	return json_array_size(items);
}

START_TEST(board_slices)
{
	json_t *items, *dev, *ch = NULL, *s;
	size_t i, channels = 0;

	ck_assert_uint_eq(check_slices("gpu-cluster.yaml", &items), 64);
	dev = json_array_get(pk_get(json_array_get(items, 0), "spec.devices"), 5);
	ck_assert_str_eq(pk_get_string(json_array_get(items, 0), "spec.nodeName"), "gpu-b0-r0-n0");
	ck_assert_str_eq(pk_get_string(dev, "name"), "gpu-5");
	ck_assert_int_eq(json_integer_value(pk_get(dev, "attributes.index.int")), 5);
	ck_assert_int_eq(json_integer_value(pk_get(dev, "attributes.numaNode.int")), 1);
	ck_assert_str_eq(pk_get_string(json_object_get(pk_get(dev, "attributes"),
						       "resource.kubernetes.io/pcieRoot"),
				       "string"),
			 "pci0002:00");
	/* spec.dra.shareable: the GPU takes fractions (consumable capacity `share`) */
	ck_assert(json_is_true(json_object_get(dev, "allowMultipleAllocations")));
	ck_assert_str_eq(pk_get_string(dev, "capacity.share.value"), "1");
	ck_assert_str_eq(pk_get_string(dev, "capacity.share.requestPolicy.validRange.step"), "10m");
	json_decref(items);
	/* 2 blocks x 4 NVL72 domains x 18 hosts, and a channel slice per domain */
	ck_assert_uint_eq(check_slices("gb200-nvl72.yaml", &items), 144 + 8);
	json_array_foreach(items, i, s) if (pk_get(s, "spec.nodeSelector"))
	{
		channels++;
		ch = ch ? ch : s;
	}
	ck_assert_uint_eq(channels, 8);
	ck_assert_str_eq(pk_get_string(ch, "spec.driver"), "compute-domain.nvidia.com");
	ck_assert_str_eq(pk_get_string(json_array_get(pk_get(ch, "spec.devices"), 0), "name"),
			 "channel-0");
	ck_assert_str_eq(
	    pk_get_string(json_array_get(pk_get(json_array_get(pk_get(ch, "spec.nodeSelector."
									  "nodeSelectorTerms"),
							       0),
						"matchExpressions"),
					 0),
			  "key"),
	    "topology.podkernel.dev/nvlink-domain");
	json_decref(items);
	ck_assert_uint_eq(check_slices("tpu-cube.yaml", &items), 0);
	json_decref(items);
}
END_TEST

START_TEST(one_node)
{
	struct topo_board *b = load("tpu-superslice.yaml");
	json_t *node;

	ck_assert_int_eq(pk_board_node_json(b, 3, 700, &node), 0);
	ck_assert_str_eq(pk_get_string(node, "metadata.name"), "tpu-ss2-h188");
	ck_assert_str_eq(json_string_value(json_object_get(pk_get(node, "metadata.labels"),
							   "topology.podkernel.dev/cube")),
			 "ss2-c11");
	ck_assert_str_eq(
	    json_string_value(json_object_get(pk_get(node, "status.allocatable"), "memory")),
	    "400Gi");
	ck_assert_str_eq(
	    json_string_value(json_object_get(pk_get(node, "status.capacity"), "google.com/tpu")),
	    "4");
	json_decref(node);
	ck_assert_int_eq(pk_board_node_json(b, 3, 768, &node), -ERANGE);
	topo_board_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("board_nodes");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, every_board);
	tcase_add_test(tc, one_node);
	tcase_add_test(tc, board_slices);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

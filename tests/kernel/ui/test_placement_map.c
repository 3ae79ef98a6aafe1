/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_placement_map.c — kernel/ui/placement_map.c and placement_layout.c:
 * the PlacementMap document for the Nodes of the real board files
 * (boards/tpu-superslice.yaml, boards/gpu-cluster.yaml) with pods and groups
 * fed as the scheduling loop feeds them.  Checks the drawn grid (every host
 * once, no two on one cell), the states and their precedence, the pending
 * gangs with their reasons, the largest free box, slice shapes, the node
 * detail, the "unchanged" answer, the /ui/ answers, and the map registered
 * as hooks on a running standalone loop (a pod the loop binds shows).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/store/store.h"
#include "kernel/api/api.h"
#include "kernel/appliance/appliance.h"
#include "kernel/controllers/controllers.h"
#include "kernel/builder/builder.h"
#include "kernel/ui/ui.h"

static struct pk_ui_map *pm;

static void setup(void)
{
	ck_assert_int_eq(pk_ui_map_new(&pm), 0);
}

static void teardown(void)
{
	pk_ui_map_free(pm);
	pm = NULL;
}

/* Feed the Nodes of a board file (as --simulate-board registers them). */
static void feed_board(const char *file)
{
	char path[512], err[512];
	struct topo_board *b = topo_board_new();
	json_t *nodes = NULL, *n;
	size_t i;

	snprintf(path, sizeof(path), "%s/boards/%s", PODKERNEL_SRCDIR, file);
	ck_assert_int_eq(topo_board_load_file(b, path, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_board_nodes_json(b, 0, &nodes), 0);
	topo_board_free(b);
	json_array_foreach(nodes, i, n) ck_assert_int_eq(pk_ui_map_update(pm, &pk_type_node, n), 0);
	json_decref(nodes);
}

static void feed(enum pk_kind kind, json_t *obj)
{
	ck_assert_ptr_nonnull(obj);
	ck_assert_int_eq(pk_ui_map_update(pm, pk_type_of(kind), obj), 0);
	json_decref(obj);
}

static json_t *pod(const char *name, const char *group, const char *node)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s},s:{}}", "apiVersion", "v1", "kind", "Pod",
			      "metadata", "name", name, "namespace", "ml", "spec");

	if (group)
		pk_set(p, "spec.schedulingGroup.podGroupName", json_string(group));
	if (node)
		pk_set(p, "spec.nodeName", json_string(node));
	return p;
}

static json_t *group(const char *kind, const char *name, const char *parent, const char *status,
		     const char *reason, const char *message)
{
	json_t *g =
	    json_pack("{s:s,s:s,s:{s:s,s:s},s:{}}", "apiVersion", "scheduling.k8s.io/v1alpha3",
		      "kind", kind, "metadata", "name", name, "namespace", "ml", "spec");

	if (parent)
		pk_set(g, "spec.parentCompositePodGroupName", json_string(parent));
	if (status) {
		char type[64];

		snprintf(type, sizeof(type), "%sInitiallyScheduled", kind);
		pk_condition_set(g, type, status, reason, message, 1700000000);
	}
	return g;
}

static json_t *render(void)
{
	char *text = NULL;
	size_t len = 0;
	json_t *doc;

	ck_assert_int_eq(pk_ui_map_render(pm, 0, &text, &len), 0);
	doc = json_loadb(text, len, 0, NULL);
	free(text);
	ck_assert_ptr_nonnull(doc);
	return doc;
}

static json_t *domain_named(json_t *doc, const char *name)
{
	size_t i;
	json_t *d;

	json_array_foreach(json_object_get(doc, "domains"), i,
			   d) if (strcmp(json_string_value(json_object_get(d, "name")), name) ==
				  0) return d;
	ck_abort_msg("no domain %s", name);
	return NULL;
}

static int count(json_t *o, const char *key)
{
	return (int)json_integer_value(json_object_get(json_object_get(o, "counts"), key));
}

/* Every host once, inside its cube's cells, no two hosts on one cell, cubes on distinct grid cells.
 */
static void check_grid(json_t *doc, int want_hosts)
{
	json_t *d, *c, *h;
	size_t i, j, k;
	int hosts = 0;
	json_t *names = json_object();

	json_array_foreach(json_object_get(doc, "domains"), i, d)
	{
		json_t *cubes_at = json_object();
		int gc = (int)json_integer_value(pk_get(d, "grid.cols"));
		int gr = (int)json_integer_value(pk_get(d, "grid.rows"));

		json_array_foreach(json_object_get(d, "cubes"), j, c)
		{
			char key[64];
			int col = (int)json_integer_value(json_object_get(c, "col"));
			int row = (int)json_integer_value(json_object_get(c, "row"));
			int w = (int)json_integer_value(json_object_get(c, "cols"));
			int hgt = (int)json_integer_value(json_object_get(c, "rows"));
			json_t *cells = json_object();

			ck_assert(col >= 0 && col < gc && row >= 0 && row < gr);
			snprintf(key, sizeof(key), "%d,%d", col, row);
			ck_assert_msg(!json_object_get(cubes_at, key), "two cubes at %s", key);
			json_object_set_new(cubes_at, key, json_true());
			json_array_foreach(json_object_get(c, "hosts"), k, h)
			{
				int x = (int)json_integer_value(json_object_get(h, "x"));
				int y = (int)json_integer_value(json_object_get(h, "y"));
				const char *name = json_string_value(json_object_get(h, "name"));

				ck_assert(x >= 0 && x < w && y >= 0 && y < hgt);
				snprintf(key, sizeof(key), "%d,%d", x, y);
				ck_assert_msg(!json_object_get(cells, key), "two hosts at %s", key);
				json_object_set_new(cells, key, json_true());
				ck_assert(!json_object_get(names, name));
				json_object_set_new(names, name, json_true());
				hosts++;
			}
			json_decref(cells);
		}
		json_decref(cubes_at);
	}
	json_decref(names);
	ck_assert_int_eq(hosts, want_hosts);
}

START_TEST(test_torus_layout_and_states)
{
	feed_board("tpu-superslice.yaml");
	/* a composite gang of two PodGroups, each on one host of cube ss0-c0 */
	feed(PK_KIND_COMPOSITE_POD_GROUP,
	     group("CompositePodGroup", "train", NULL, "True", "Scheduled", "ok"));
	feed(PK_KIND_POD_GROUP, group("PodGroup", "shard-0", "train", "True", "Scheduled", "ok"));
	feed(PK_KIND_POD_GROUP, group("PodGroup", "shard-1", "train", "True", "Scheduled", "ok"));
	feed(PK_KIND_POD, pod("a0", "shard-0", "tpu-ss0-h0"));
	feed(PK_KIND_POD, pod("a1", "shard-0", "tpu-ss0-h0"));
	feed(PK_KIND_POD, pod("b0", "shard-1", "tpu-ss0-h1"));
	/* a pending gang */
	feed(PK_KIND_POD_GROUP,
	     group("PodGroup", "big", NULL, "False", "Unschedulable", "0/512 nodes fit 600 pods"));
	feed(PK_KIND_POD, pod("big-0", "big", NULL));
	/* a standalone pod, a finished pod (holds nothing) */
	feed(PK_KIND_POD, pod("solo", NULL, "tpu-ss1-h5"));
	json_t *done = pod("done", NULL, "tpu-ss1-h6");
	pk_set(done, "status.phase", json_string("Succeeded"));
	feed(PK_KIND_POD, done);
	/* cordoned, and unreachable with a pod (unreachable wins) */
	json_t *n =
	    json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s}},s:{s:b}}", "apiVersion", "v1", "kind",
		      "Node", "metadata", "name", "tpu-ss1-h7", "labels",
		      TOPO_LABEL_LEVEL_PREFIX "superslice", "ss1", TOPO_LABEL_LEVEL_PREFIX "cube",
		      "ss1-c0", TOPO_LABEL_COORDS, "2.2.1", "spec", "unschedulable", 1);
	feed(PK_KIND_NODE, n);
	n = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s}},s:{s:[{s:s,s:s}]}}", "apiVersion", "v1",
		      "kind", "Node", "metadata", "name", "tpu-ss1-h8", "labels",
		      TOPO_LABEL_LEVEL_PREFIX "superslice", "ss1", TOPO_LABEL_LEVEL_PREFIX "cube",
		      "ss1-c0", TOPO_LABEL_COORDS, "0.0.2", "spec", "taints", "key",
		      "node.kubernetes.io/unreachable", "effect", "NoExecute");
	feed(PK_KIND_NODE, n);
	feed(PK_KIND_POD, pod("stranded", NULL, "tpu-ss1-h8"));

	json_t *doc = render();
	check_grid(doc, 512);
	ck_assert_str_eq(json_string_value(pk_get(doc, "levels.domain")),
			 TOPO_LABEL_LEVEL_PREFIX "superslice");
	ck_assert_str_eq(json_string_value(pk_get(doc, "levels.cube")),
			 TOPO_LABEL_LEVEL_PREFIX "cube");
	ck_assert_int_eq(json_array_size(json_object_get(doc, "domains")), 2);
	json_t *ss0 = domain_named(doc, "ss0"), *ss1 = domain_named(doc, "ss1");
	ck_assert_str_eq(json_string_value(json_object_get(ss0, "layout")), "torus");
	ck_assert_int_eq(json_array_size(json_object_get(ss0, "cubes")), 16);
	/* 2x2x4-host cubes: z layers on a 2x2 grid with a blank cell between: 5x5 */
	ck_assert_int_eq(json_integer_value(pk_get(ss0, "cubeSize.cols")), 5);
	ck_assert_int_eq(json_integer_value(pk_get(ss0, "cubeSize.rows")), 5);
	ck_assert_int_eq(count(ss0, "busy"), 2);
	ck_assert_int_eq(count(ss0, "free"), 254);
	ck_assert_int_eq(count(ss1, "busy"), 1);
	ck_assert_int_eq(count(ss1, "cordoned"), 1);
	ck_assert_int_eq(count(ss1, "unreachable"), 1);
	ck_assert_int_eq(count(ss1, "free"), 253);
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.busy")), 3);
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.pods")), 7);
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.boundPods")), 5);

	/* host h0 is coloured by shard-0, whose root is train */
	json_t *h0 = json_array_get(
	    json_object_get(json_array_get(json_object_get(ss0, "cubes"), 0), "hosts"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(h0, "name")), "tpu-ss0-h0");
	ck_assert_int_eq(json_integer_value(json_object_get(h0, "pods")), 2);
	json_t *g = json_array_get(json_object_get(doc, "groups"),
				   json_integer_value(json_object_get(h0, "group")));
	ck_assert_str_eq(json_string_value(json_object_get(g, "name")), "shard-0");
	json_t *root = json_array_get(json_object_get(doc, "groups"),
				      json_integer_value(json_object_get(g, "root")));
	ck_assert_str_eq(json_string_value(json_object_get(root, "name")), "train");

	/* pending: only the root that is not scheduled, with its condition */
	json_t *pending = json_object_get(doc, "pending");
	ck_assert_int_eq(json_array_size(pending), 1);
	g = json_array_get(json_object_get(doc, "groups"),
			   json_integer_value(json_array_get(pending, 0)));
	ck_assert_str_eq(json_string_value(json_object_get(g, "name")), "big");
	ck_assert_str_eq(json_string_value(json_object_get(g, "reason")), "Unschedulable");
	ck_assert_str_eq(json_string_value(json_object_get(g, "message")),
			 "0/512 nodes fit 600 pods");
	ck_assert_int_eq(json_integer_value(json_object_get(g, "pods")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(g, "boundPods")), 0);
	json_decref(doc);
}
END_TEST

/* Fill cube ss1-c0 (chips x 0-3, y 0-3, z 0-3): the largest free box is z 4-15 of all x, y. */
START_TEST(test_largest_free_box)
{
	char name[64];

	feed_board("tpu-superslice.yaml");
	json_t *doc = render();
	ck_assert_int_eq(json_integer_value(pk_get(domain_named(doc, "ss1"), "largestFree.hosts")),
			 256);
	ck_assert_str_eq(json_string_value(pk_get(domain_named(doc, "ss1"), "largestFree.shape")),
			 "8x8x16");
	json_decref(doc);
	for (int h = 0; h < 16; h++) {
		snprintf(name, sizeof(name), "tpu-ss1-h%d", h);
		feed(PK_KIND_POD, pod(name, NULL, name));
	}
	doc = render();
	json_t *lf = pk_get(domain_named(doc, "ss1"), "largestFree");
	ck_assert_int_eq(json_integer_value(json_object_get(lf, "hosts")), 192);
	ck_assert_str_eq(json_string_value(json_object_get(lf, "shape")), "8x8x12");
	ck_assert_str_eq(json_string_value(json_object_get(lf, "origin")), "0.0.4");
	ck_assert_int_eq(json_integer_value(json_object_get(lf, "freeCubes")), 15);
	json_decref(doc);
}
END_TEST

/* The board wraps around (its torus labels say so): a free box may cross the seam. */
START_TEST(test_largest_free_box_wraps)
{
	char name[64];

	feed_board("tpu-superslice.yaml");
	/* cubes 4..11 of ss1 (chips z 4-11) busy: free are z 12-15 and 0-3 */
	for (int h = 64; h < 192; h++) {
		snprintf(name, sizeof(name), "tpu-ss1-h%d", h);
		feed(PK_KIND_POD, pod(name, NULL, name));
	}
	json_t *doc = render();
	json_t *lf = pk_get(domain_named(doc, "ss1"), "largestFree");
	ck_assert_int_eq(json_integer_value(json_object_get(lf, "hosts")), 128);
	ck_assert_str_eq(json_string_value(json_object_get(lf, "shape")), "8x8x8");
	ck_assert_str_eq(json_string_value(json_object_get(lf, "origin")), "0.0.12");
	json_decref(doc);
}
END_TEST

START_TEST(test_list_layout_gpu_racks)
{
	feed_board("gpu-cluster.yaml");
	feed(PK_KIND_POD, pod("p", NULL, "gpu-b0-r1-n3"));
	json_t *doc = render();
	check_grid(doc, 64);
	json_t *b0 = json_array_get(json_object_get(doc, "domains"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(b0, "name")), "b0");
	ck_assert_str_eq(json_string_value(json_object_get(b0, "layout")), "list");
	ck_assert_int_eq(json_array_size(json_object_get(b0, "cubes")), 4);
	ck_assert_int_eq(json_integer_value(pk_get(b0, "grid.cols")), 2);
	ck_assert_int_eq(json_integer_value(pk_get(b0, "largestFree.hosts")), 8);
	ck_assert_int_eq(json_integer_value(pk_get(b0, "largestFree.freeCubes")), 3);
	ck_assert_int_eq(count(b0, "busy"), 1);
	json_decref(doc);
}
END_TEST

START_TEST(test_slice_shape_and_node_detail)
{
	feed_board("tpu-cube.yaml");
	json_t *g = group("PodGroup", "slice", NULL, "True", "Scheduled", "ok");
	pk_set(g, "metadata.annotations", json_pack("{s:s}", TOPO_ANN_SLICE_SHAPE, "4x4x2"));
	feed(PK_KIND_POD_GROUP, g);
	json_t *p = pod("w0", "slice", "tpu-cube0-h0");
	pk_set(p, "metadata.annotations",
	       json_pack("{s:s,s:s}", TOPO_ANN_SLICE_COORDS, "0.0.0", TOPO_ANN_WORKER_ID, "0"));
	feed(PK_KIND_POD, p);
	json_t *doc = render();
	check_grid(doc, 16);
	ck_assert_str_eq(json_string_value(pk_get(json_array_get(json_object_get(doc, "groups"), 0),
						  "sliceShape")),
			 "4x4x2");
	json_decref(doc);

	json_t *d = NULL;
	ck_assert_int_eq(pk_ui_map_node(pm, "tpu-cube0-h0", &d), 0);
	ck_assert_str_eq(json_string_value(json_object_get(d, "state")), "busy");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(d, "labels"), TOPO_LABEL_COORDS)),
	    "0.0.0");
	json_t *p0 = json_array_get(json_object_get(d, "pods"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(p0, "group")), "slice");
	ck_assert_str_eq(json_string_value(json_object_get(p0, "root")), "slice");
	ck_assert_str_eq(json_string_value(json_object_get(p0, "sliceCoords")), "0.0.0");
	ck_assert_str_eq(json_string_value(json_object_get(p0, "workerId")), "0");
	json_decref(d);
	ck_assert_int_eq(pk_ui_map_node(pm, "nope", &d), -ENOENT);
}
END_TEST

/* One Node of a board file, as --simulate-board registers it. */
static json_t *board_node(const char *file, const char *name)
{
	char path[512], err[512];
	struct topo_board *b = topo_board_new();
	json_t *nodes = NULL, *n, *found = NULL;
	size_t i;

	snprintf(path, sizeof(path), "%s/boards/%s", PODKERNEL_SRCDIR, file);
	ck_assert_int_eq(topo_board_load_file(b, path, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_board_nodes_json(b, 0, &nodes), 0);
	topo_board_free(b);
	json_array_foreach(nodes, i, n) if (strcmp(pk_name(n), name) == 0) found = json_incref(n);
	json_decref(nodes);
	ck_assert_ptr_nonnull(found);
	return found;
}

static json_t *host_named(json_t *doc, const char *name)
{
	size_t i, j, k;
	json_t *d, *c, *h;

	json_array_foreach(json_object_get(doc, "domains"), i, d)
	    json_array_foreach(json_object_get(d, "cubes"), j, c) json_array_foreach(
		json_object_get(c, "hosts"), k,
		h) if (strcmp(json_string_value(json_object_get(h, "name")), name) == 0) return h;
	ck_abort_msg("no host %s", name);
	return NULL;
}

static json_t *pod_requesting(const char *name, const char *node, const char *cpu, const char *tpu)
{
	json_t *p = pod(name, NULL, node), *req = json_object();

	if (cpu)
		json_object_set_new(req, "cpu", json_string(cpu));
	if (tpu)
		json_object_set_new(req, "google.com/tpu", json_string(tpu));
	pk_set(p, "spec.containers",
	       json_pack("[{s:s,s:s,s:{s:o}}]", "name", "c", "image", "x", "resources", "requests",
			 req));
	return p;
}

static json_t *gang_pod(const char *name, const char *group, const char *node, const char *tpu)
{
	json_t *p = pod_requesting(name, node, "1", tpu);

	pk_set(p, "spec.schedulingGroup.podGroupName", json_string(group));
	return p;
}

static bool pending_has(json_t *doc, const char *name)
{
	size_t i;
	json_t *id;

	json_array_foreach(json_object_get(doc, "pending"), i, id)
	{
		json_t *g = json_array_get(json_object_get(doc, "groups"), json_integer_value(id));

		if (strcmp(json_string_value(json_object_get(g, "name")), name) == 0)
			return true;
	}
	return false;
}

/*
 * Pending gangs at every level (a child not scheduled, a scheduled child with
 * pods still unbound, under a scheduled root), never for a finished pod; a
 * host takes the colour of the gang holding most of its accelerators; the
 * accelerators allocated are counted.
 */
START_TEST(test_pending_levels_colour_and_accelerators)
{
	feed_board("tpu-cube.yaml");
	feed(PK_KIND_COMPOSITE_POD_GROUP,
	     group("CompositePodGroup", "train", NULL, "True", "Scheduled", "ok"));
	feed(PK_KIND_POD_GROUP, group("PodGroup", "w-0", "train", "True", "Scheduled", "ok"));
	feed(PK_KIND_POD_GROUP,
	     group("PodGroup", "w-1", "train", "False", "Unschedulable", "no room"));
	feed(PK_KIND_POD_GROUP, group("PodGroup", "small", NULL, "True", "Scheduled", "ok"));
	feed(PK_KIND_POD_GROUP, group("PodGroup", "big", NULL, "True", "Scheduled", "ok"));
	feed(PK_KIND_POD_GROUP, group("PodGroup", "batch", NULL, "True", "Scheduled", "ok"));
	feed(PK_KIND_POD, gang_pod("w0-a", "w-0", "tpu-cube0-h0", "4"));
	feed(PK_KIND_POD, gang_pod("w0-b", "w-0", NULL, "4"));
	feed(PK_KIND_POD, gang_pod("w1-a", "w-1", NULL, "4"));
	feed(PK_KIND_POD, gang_pod("small-a", "small", "tpu-cube0-h1", "1"));
	feed(PK_KIND_POD, gang_pod("big-a", "big", "tpu-cube0-h1", "3"));
	json_t *done = gang_pod("batch-done", "batch", "tpu-cube0-h2", "2");
	pk_set(done, "status.phase", json_string("Succeeded"));
	feed(PK_KIND_POD, done);
	feed(PK_KIND_POD, gang_pod("batch-a", "batch", "tpu-cube0-h2", "2"));

	json_t *doc = render();
	ck_assert_int_eq(json_array_size(json_object_get(doc, "pending")), 2);
	ck_assert(pending_has(doc, "w-0"));
	ck_assert(pending_has(doc, "w-1"));
	json_t *h1 = host_named(doc, "tpu-cube0-h1");
	json_t *g = json_array_get(json_object_get(doc, "groups"),
				   json_integer_value(json_object_get(h1, "group")));
	ck_assert_str_eq(json_string_value(json_object_get(g, "name")), "big");
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.accelerators")), 64);
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.acceleratorsAllocated")), 10);
	ck_assert_double_eq_tol(json_real_value(pk_get(doc, "summary.acceleratorShare")), 0.16,
				1e-9);
	/* the same as metrics: per namespace, per domain allocated and free */
	char *text = NULL, want[200];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *dom =
	    json_string_value(pk_get(json_array_get(json_object_get(doc, "domains"), 0), "name"));

	pk_ui_map_metrics(pm, f);
	fclose(f);
	ck_assert_ptr_nonnull(
	    strstr(text, "podkernel_namespace_accelerators_allocated{namespace=\"ml\"} 10\n"));
	snprintf(want, sizeof(want),
		 "podkernel_domain_accelerators{domain=\"%s\",state=\"free\"} 54\n", dom);
	ck_assert_msg(strstr(text, want), "%s", text);
	free(text);
	json_decref(doc);
}
END_TEST

/* Partial occupancy: the scarcest resource's share; taints; the time of the data; pod search. */
START_TEST(test_fill_taints_time_and_pod_search)
{
	feed_board("tpu-cube.yaml");
	json_t *n1 = board_node("tpu-cube.yaml", "tpu-cube0-h1");
	int64_t cpu = 0, tpu = 0;

	ck_assert_int_eq(topo_quantity_parse(pk_get_string(n1, "status.allocatable.cpu"), &cpu), 0);
	ck_assert_int_eq(
	    topo_quantity_parse(json_string_value(json_object_get(pk_get(n1, "status.allocatable"),
								  "google.com/tpu")),
				&tpu),
	    0);
	json_decref(n1);
	ck_assert_int_gt(cpu, 2000);
	feed(PK_KIND_POD, pod_requesting("one-cpu", "tpu-cube0-h1", "1", NULL));
	feed(PK_KIND_POD, pod_requesting("all-tpu", "tpu-cube0-h2", "1", "4"));
	feed(PK_KIND_POD, pod_requesting("half-a", "tpu-cube0-h3", "1", "1"));
	feed(PK_KIND_POD, pod_requesting("half-b", "tpu-cube0-h3", "1", "1"));
	json_t *n4 = board_node("tpu-cube.yaml", "tpu-cube0-h4");
	pk_set(n4, "spec.taints",
	       json_pack("[{s:s,s:s,s:s},{s:s,s:s}]", "key", "maintenance", "value", "yes",
			 "effect", "NoSchedule", "key", "node.kubernetes.io/unschedulable",
			 "effect", "NoSchedule"));
	feed(PK_KIND_NODE, n4);

	time_t before = time(NULL);
	json_t *doc = render();
	json_t *h1 = host_named(doc, "tpu-cube0-h1"), *h2 = host_named(doc, "tpu-cube0-h2");
	json_t *h3 = host_named(doc, "tpu-cube0-h3"), *h4 = host_named(doc, "tpu-cube0-h4");
	double want1 = (double)(long)(1000.0 / (double)cpu * 100 + 0.5) / 100;

	ck_assert_double_eq_tol(json_real_value(json_object_get(h1, "fill")), want1, 1e-9);
	ck_assert_str_eq(json_string_value(json_object_get(h1, "scarce")), "cpu");
	ck_assert_double_eq_tol(json_real_value(json_object_get(h2, "fill")), 1.0, 1e-9);
	ck_assert_str_eq(json_string_value(json_object_get(h2, "scarce")), "google.com/tpu");
	/* two pods of one TPU each: TPUs are scarcer than CPUs */
	ck_assert_double_eq_tol(json_real_value(json_object_get(h3, "fill")),
				(double)(long)(2000.0 / (double)tpu * 100 + 0.5) / 100, 1e-9);
	ck_assert_ptr_null(json_object_get(host_named(doc, "tpu-cube0-h5"), "fill"));
	/* the cordon's own taint is the cordoned state, not a taint */
	ck_assert_int_eq(json_array_size(json_object_get(h4, "taints")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(h4, "taints"), 0)),
			 "maintenance=yes:NoSchedule");
	ck_assert_str_eq(json_string_value(json_object_get(h4, "state")), "free");
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.tainted")), 1);
	ck_assert_double_gt(json_real_value(pk_get(doc, "summary.utilisation")), 0);
	/* the time of the data: when it last changed, UTC */
	const char *when = json_string_value(json_object_get(doc, "time"));
	struct tm tm = {0};

	ck_assert_ptr_nonnull(when);
	ck_assert_ptr_nonnull(strptime(when, "%Y-%m-%dT%H:%M:%SZ", &tm));
	ck_assert(llabs((long long)(timegm(&tm) - before)) <= 5);
	json_decref(doc);

	json_t *d = NULL;
	ck_assert_int_eq(pk_ui_map_node(pm, "tpu-cube0-h3", &d), 0);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(json_object_get(d, "requested"), "google.com/tpu")),
	    2000);
	ck_assert_int_eq(json_integer_value(
			     json_object_get(json_object_get(d, "allocatable"), "google.com/tpu")),
			 tpu);
	json_decref(d);
	ck_assert_int_eq(pk_ui_map_pods(pm, "half-", 10, &d), 0);
	ck_assert_int_eq(json_array_size(json_object_get(d, "items")), 2);
	ck_assert_str_eq(pk_get_string(json_array_get(json_object_get(d, "items"), 0), "node"),
			 "tpu-cube0-h3");
	ck_assert(!json_is_true(json_object_get(d, "truncated")));
	json_decref(d);
	ck_assert_int_eq(pk_ui_map_pods(pm, "ml/", 1, &d), 0);
	ck_assert_int_eq(json_array_size(json_object_get(d, "items")), 1);
	ck_assert(json_is_true(json_object_get(d, "truncated")));
	json_decref(d);
}
END_TEST

START_TEST(test_generation_and_unchanged)
{
	char *text = NULL;
	size_t len;

	feed_board("tpu-cube.yaml");
	uint64_t g0 = pk_ui_map_generation(pm);
	/* the same Node again (an unchanged heartbeat publish): no new generation */
	feed_board("tpu-cube.yaml");
	ck_assert_uint_eq(pk_ui_map_generation(pm), g0);
	ck_assert_int_eq(pk_ui_map_render(pm, g0, &text, &len), 0);
	json_t *doc = json_loadb(text, len, 0, NULL);
	free(text);
	ck_assert(json_is_true(json_object_get(doc, "unchanged")));
	ck_assert_ptr_null(json_object_get(doc, "domains"));
	json_decref(doc);
	json_t *p = pod("x", NULL, "tpu-cube0-h3");
	ck_assert_int_eq(pk_ui_map_update(pm, &pk_type_pod, p), 0);
	ck_assert_uint_gt(pk_ui_map_generation(pm), g0);
	doc = render();
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.busy")), 1);
	json_decref(doc);
	pk_ui_map_remove(pm, &pk_type_pod, p);
	json_decref(p);
	doc = render();
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.busy")), 0);
	json_decref(doc);
	/* kinds the map does not keep change nothing */
	uint64_t g1 = pk_ui_map_generation(pm);
	feed(PK_KIND_JOB, json_pack("{s:s,s:{s:s,s:s}}", "kind", "Job", "metadata", "name", "j",
				    "namespace", "ml"));
	ck_assert_uint_eq(pk_ui_map_generation(pm), g1);
}
END_TEST

/* A queued Job, JobSet or Pod, with what the queue controller wrote on it (order: its keys). */
static json_t *queued(const char *kind, const char *name, const char *order, const char *reason)
{
	json_t *o = json_pack("{s:s,s:{s:s,s:s,s:{s:s},s:{}}}", "kind", kind, "metadata", "name",
			      name, "namespace", "ml", "labels", "kueue.x-k8s.io/queue-name", "lq",
			      "annotations");
	json_t *ann = pk_get(o, "metadata.annotations");

	if (order)
		json_object_set_new(ann, "queue.podkernel.dev/queue-order", json_string(order));
	if (reason)
		json_object_set_new(ann, "queue.podkernel.dev/pending-reason", json_string(reason));
	return o;
}

/*
 * Pending queued workloads: in queue order, with what they wait for; gone
 * once admitted.  Positions are ranked from the queue-order keys, queued
 * pods included (the two pods of one group share a place).
 */
START_TEST(test_queued_workloads)
{
	json_t *doc, *q, *adm, *pod;

	feed_board("gpu-cluster.yaml");
	feed(PK_KIND_JOBSET,
	     queued("JobSet", "second", "cq 0 2026-01-01T00:00:02Z JobSet/ml/second",
		    "pod second-w-0-0: 0/64 nodes are available"));
	feed(PK_KIND_JOB,
	     queued("Job", "first", "cq 5 2026-01-01T00:00:09Z Job/ml/first",
		    "insufficient unused quota for nvidia.com/gpu in flavor default-flavor "
		    "of ClusterQueue cq, 8 more needed"));
	feed(PK_KIND_JOB, queued("Job", "fresh", NULL, NULL));
	for (int i = 0; i < 2; i++) { /* one group's pods, between the two */
		pod = queued("Pod", i ? "g-1" : "g-0", "cq 0 2026-01-01T00:00:01Z PodGroup/ml/g",
			     NULL);
		json_object_set_new(pod, "spec", json_object());
		feed(PK_KIND_POD, pod);
	}
	doc = render();
	q = json_object_get(doc, "queued");
	ck_assert_uint_eq(json_array_size(q), 3);
	ck_assert_int_eq(json_integer_value(pk_get(doc, "summary.queuedWorkloads")), 3);
	ck_assert_str_eq(pk_get_string(json_array_get(q, 0), "name"), "first");
	ck_assert_str_eq(pk_get_string(json_array_get(q, 0), "wait"), "quota");
	ck_assert_str_eq(pk_get_string(json_array_get(q, 0), "resource"), "nvidia.com/gpu");
	ck_assert_str_eq(pk_get_string(json_array_get(q, 0), "flavor"), "default-flavor");
	ck_assert_str_eq(pk_get_string(json_array_get(q, 0), "clusterQueue"), "cq");
	ck_assert_str_eq(pk_get_string(json_array_get(q, 0), "more"), "8");
	ck_assert_int_eq(json_integer_value(pk_get(json_array_get(q, 0), "position")), 1);
	ck_assert_str_eq(pk_get_string(json_array_get(q, 1), "kind"), "JobSet");
	ck_assert_int_eq(json_integer_value(pk_get(json_array_get(q, 1), "position")), 3);
	ck_assert_str_eq(pk_get_string(json_array_get(q, 1), "wait"), "placement");
	ck_assert_str_eq(pk_get_string(json_array_get(q, 1), "localQueue"), "lq");
	ck_assert_str_eq(pk_get_string(json_array_get(q, 2), "name"), "fresh");
	ck_assert(json_is_null(pk_get(json_array_get(q, 2), "position")));
	ck_assert_str_eq(pk_get_string(json_array_get(q, 2), "wait"), "queue");
	json_decref(doc);
	/* admitted: off the list */
	adm = queued("Job", "first", NULL, NULL);
	json_object_set_new(pk_get(adm, "metadata.annotations"), "queue.podkernel.dev/admission",
			    json_string("cq/default-flavor"));
	feed(PK_KIND_JOB, adm);
	/* deleted: off the list too */
	adm = queued("Job", "fresh", NULL, NULL);
	pk_ui_map_remove(pm, &pk_type_job, adm);
	json_decref(adm);
	doc = render();
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "queued")), 1);
	ck_assert_str_eq(pk_get_string(json_array_get(json_object_get(doc, "queued"), 0), "name"),
			 "second");
	json_decref(doc);
}
END_TEST

/* Levels under another key (a provider's): the torus labels still make the domain. */
START_TEST(test_torus_without_level_labels)
{
	char path[512], err[512];
	struct topo_board *b = topo_board_new();
	json_t *nodes = NULL, *n, *labels, *v;
	size_t i;
	const char *k;
	void *tmp;

	snprintf(path, sizeof(path), "%s/boards/tpu-cube.yaml", PODKERNEL_SRCDIR);
	ck_assert_int_eq(topo_board_load_file(b, path, err, sizeof(err)), 0);
	ck_assert_int_eq(pk_board_nodes_json(b, 0, &nodes), 0);
	topo_board_free(b);
	json_array_foreach(nodes, i, n)
	{
		labels = pk_get(n, "metadata.labels");
		json_object_foreach_safe(labels, tmp, k,
					 v) if (strcmp(k, TOPO_LABEL_LEVEL_PREFIX "cube") == 0)
		    json_object_del(labels, k);
	}
	json_array_foreach(nodes, i, n) ck_assert_int_eq(pk_ui_map_update(pm, &pk_type_node, n), 0);
	json_decref(nodes);
	json_t *doc = render();
	check_grid(doc, 16);
	json_t *d = json_array_get(json_object_get(doc, "domains"), 0);
	ck_assert_str_ne(json_string_value(json_object_get(d, "name")), "-");
	ck_assert_str_eq(json_string_value(json_object_get(d, "layout")), "torus");
	ck_assert_int_eq(json_integer_value(pk_get(d, "largestFree.hosts")), 16);
	json_decref(doc);
}
END_TEST

/* Labels from a hostile or broken agent: no crash, no overflow, a sane document. */
START_TEST(test_hostile_labels)
{
	static const char *const coords[] = {
	    "65535.65535.65535", "0.0.0", "1.1.1", "1.2", "x.y.z", "-1.0.0", "99999999999.0.0", ""};
	char name[32];

	for (size_t i = 0; i < sizeof(coords) / sizeof(coords[0]); i++) {
		snprintf(name, sizeof(name), "odd-%zu", i);
		feed(PK_KIND_NODE,
		     json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s}}}", "apiVersion", "v1", "kind",
			       "Node", "metadata", "name", name, "labels",
			       TOPO_LABEL_LEVEL_PREFIX "superslice", i < 3 ? "far" : "odd",
			       TOPO_LABEL_LEVEL_PREFIX "cube", i < 3 ? "far-c0" : "odd-c0",
			       TOPO_LABEL_COORDS, coords[i]));
	}
	json_t *doc = render();
	check_grid(doc, 8);
	/* hosts 1 and 65535 chips apart: a torus too large to search for a free box */
	json_t *far = domain_named(doc, "far");
	ck_assert_str_eq(json_string_value(json_object_get(far, "layout")), "torus");
	ck_assert(json_is_null(pk_get(far, "largestFree.hosts")));
	/* unparsable coordinates: the list layout */
	ck_assert_str_eq(json_string_value(json_object_get(domain_named(doc, "odd"), "layout")),
			 "list");
	json_decref(doc);
}
END_TEST

static void response_clear(struct pk_response *r)
{
	free(r->body);
	free(r->warnings);
	memset(r, 0, sizeof(*r));
}

static int serve(const char *path, const char *key, const char *value, struct pk_response *resp)
{
	struct pk_query_arg arg = {key, value};
	struct pk_request req = {.method = "GET", .path = path, .args = &arg, .nargs = key ? 1 : 0};

	memset(resp, 0, sizeof(*resp));
	return pk_ui_map_serve(pm, &req, resp);
}

START_TEST(test_serve)
{
	struct pk_response r;

	feed_board("tpu-cube.yaml");
	ck_assert_int_eq(serve("/ui/", NULL, NULL, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.content_type, "text/html; charset=utf-8");
	ck_assert_ptr_nonnull(memmem(r.body, r.body_len, "/ui/map.js", 10));
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/map.js", NULL, NULL, &r), 0);
	ck_assert_ptr_nonnull(memmem(r.body, r.body_len, "/ui/api/placement", 17));
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/api/placement", NULL, NULL, &r), 0);
	ck_assert_str_eq(r.content_type, "application/json");
	ck_assert_ptr_nonnull(memmem(r.body, r.body_len, "\"PlacementMap\"", 14));
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/api/placement", "since", "12x", &r), 0);
	ck_assert_int_eq(r.status, 400);
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/api/placement", "node", "tpu-cube0-h1", &r), 0);
	ck_assert_int_eq(r.status, 200);
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/api/placement", "node", "nope", &r), 0);
	ck_assert_int_eq(r.status, 404);
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/api/placement", "pod", "x", &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(memmem(r.body, r.body_len, "\"PlacementPodList\"", 18));
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/api/placement", "pod", "", &r), 0);
	ck_assert_int_eq(r.status, 400);
	response_clear(&r);
	ck_assert_int_eq(serve("/ui/../etc/passwd", NULL, NULL, &r), -ENOENT);
	ck_assert_int_eq(serve("/ui/other.js", NULL, NULL, &r), -ENOENT);
}
END_TEST

/* ---- fed by a running scheduling loop ------------------------------------------------ */

static const struct pk_store_open_opts store_opts = {.admission = wb_admission,
						     .nadmission = WB_ADMISSION_N};

static void store_create(struct pk_store *st, json_t *obj)
{
	struct pk_errors errs = {0};
	int r = pk_store_create(st, obj, &errs, NULL);

	for (size_t i = 0; r < 0 && i < errs.n; i++)
		fprintf(stderr, "create: %s\n", errs.msg[i]);
	pk_errors_clear(&errs);
	json_decref(obj);
	ck_assert_int_eq(r, 0);
}

/* The state of node name in the map and the name of its first pod ("" without). */
static const char *node_state(const char *name, char *pod_buf, size_t len)
{
	static char state[32];
	json_t *d = NULL;

	ck_assert_int_eq(pk_ui_map_node(pm, name, &d), 0);
	snprintf(state, sizeof(state), "%s", json_string_value(json_object_get(d, "state")));
	snprintf(pod_buf, len, "%s",
		 pk_get_string(json_array_get(json_object_get(d, "pods"), 0), "name") ?: "");
	json_decref(d);
	return state;
}

/*
 * Registered as hooks on a standalone loop: the listing brings the Node,
 * and the binding the loop writes itself (an event the scheduler skips)
 * puts the pod on it.
 */
START_TEST(test_fed_by_the_loop)
{
	char dir[] = "/tmp/pk-ui-map-test-XXXXXX", err[256] = "", cmd[300], name[64];
	struct pk_appliance_config cfg = {.backoff_initial_ms = 50, .backoff_max_ms = 200};
	struct pk_appliance *app = NULL;
	struct pk_store *st = NULL;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pk_store_open_opts(dir, &store_opts, &st, err, sizeof(err)), 0);
	store_create(st, json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s}}}", "apiVersion", "v1", "kind",
				   "Node", "metadata", "name", "n0", "status", "allocatable", "cpu",
				   "8", "pods", "110"));
	ck_assert_int_eq(pk_appliance_config_add_hooks(&cfg, &pk_ui_map_hooks, pm), 0);
	ck_assert_int_eq(pk_standalone_start(st, &cfg, NULL, &app, err, sizeof(err)), 0);
	ck_assert_str_eq(node_state("n0", name, sizeof(name)), "free");
	store_create(st, json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s,s:{s:{s:s}}}]}}",
				   "apiVersion", "v1", "kind", "Pod", "metadata", "name", "p0",
				   "namespace", "default", "spec", "containers", "name", "c",
				   "image", "x", "resources", "requests", "cpu", "1"));
	for (int i = 0; i < 1000 && strcmp(node_state("n0", name, sizeof(name)), "busy"); i++)
		nanosleep(&(struct timespec){0, 10000000L}, NULL);
	ck_assert_str_eq(node_state("n0", name, sizeof(name)), "busy");
	ck_assert_str_eq(name, "p0");
	pk_appliance_stop(app);
	pk_store_shutdown(st);
	pk_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("placement-map");
	TCase *tc = tcase_create("map");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_torus_layout_and_states);
	tcase_add_test(tc, test_pending_levels_colour_and_accelerators);
	tcase_add_test(tc, test_largest_free_box);
	tcase_add_test(tc, test_largest_free_box_wraps);
	tcase_add_test(tc, test_list_layout_gpu_racks);
	tcase_add_test(tc, test_slice_shape_and_node_detail);
	tcase_add_test(tc, test_generation_and_unchanged);
	tcase_add_test(tc, test_serve);
	tcase_add_test(tc, test_hostile_labels);
	tcase_add_test(tc, test_torus_without_level_labels);
	tcase_add_test(tc, test_fill_taints_time_and_pod_search);
	tcase_add_test(tc, test_queued_workloads);
	suite_add_tcase(s, tc);
	tc = tcase_create("loop");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_fed_by_the_loop);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * board_occupancy.c — `podctl board occupancy`: which hosts of each
 * superslice (torus) are used and which are free, as boxes, from a file of
 * Nodes and Pods (what `podctl board nodes` and `podctl schedule` print, or
 * a `kubectl get nodes,pods -o json`).
 *
 * Nodes are read through their torus labels (topo_torus_host_parse); a host
 * is used when a pod that is not finished is bound to it (spec.nodeName),
 * and out of use when it is cordoned or missing (no node has its
 * coordinates).  Each torus becomes a topology/occupancy.c grid; the used
 * and the free hosts are each covered by boxes grown greedily in raster
 * order (topo_occ_cover), and the largest free box is the one the scheduler
 * names when a slice does not fit (wraparound included).  --map adds one
 * picture per z layer of hosts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

#define OCC_MAX_TORI 4096

struct otorus {
	struct topo_torus_host geo; /* of its first node; others must agree */
	struct topo_shape grid;
	struct topo_occ *occ; /* pods, cordoned and missing hosts */
	int64_t hosts, pods_on, cordoned;
	char *state; /* per cell: '.' free, '#' pods, 'c' cordoned, 'x' missing */
};

struct occupancy {
	struct otorus *t;
	size_t nt;
	json_t *node_torus; /* node name -> [torus index, cell] */
	int inconsistent;   /* nodes whose labels disagree with their torus */
};

static void usage(FILE *f)
{
	fputs("Usage: podctl board occupancy -f FILE [-f FILE...] [--superslice NAME] [--map]\n"
	      "\n"
	      "Used and free hosts of each superslice (torus) as boxes of chips, from a\n"
	      "file of Nodes (with the torus labels podagent and `podctl board nodes`\n"
	      "publish) and Pods (bound with spec.nodeName).  --map draws every z layer:\n"
	      "'#' pods, '.' free, 'c' cordoned, 'x' missing host.\n",
	      f);
}

static const char *label_of(const char *key, void *arg)
{
	return json_string_value(json_object_get(arg, key));
}

static struct otorus *torus_for(struct occupancy *o, const struct topo_torus_host *g, size_t *ret_k)
{
	struct otorus *t, *v;

	for (size_t k = 0; k < o->nt; k++)
		if (strcmp(o->t[k].geo.torus, g->torus) == 0) {
			*ret_k = k;
			return &o->t[k];
		}
	if (o->nt == OCC_MAX_TORI || !(v = realloc(o->t, (o->nt + 1) * sizeof(*v))))
		return NULL;
	o->t = v;
	t = &o->t[o->nt];
	memset(t, 0, sizeof(*t));
	t->geo = *g;
	for (int a = 0; a < TOPO_DIMS; a++)
		t->grid.dim[a] = g->chips.dim[a] / g->host.dim[a];
	if (g->has_cube) {
		struct topo_shape cube;

		for (int a = 0; a < TOPO_DIMS; a++)
			cube.dim[a] = g->cube.dim[a] / g->host.dim[a];
		t->occ = topo_occ_new(&t->grid, &cube, g->wrap);
	} else {
		t->occ = topo_occ_new(&t->grid, NULL, g->wrap);
	}
	t->hosts = topo_shape_volume(&t->grid);
	t->state = t->occ ? malloc((size_t)t->hosts) : NULL;
	if (!t->state) {
		topo_occ_free(t->occ);
		return NULL;
	}
	memset(t->state, 'x', (size_t)t->hosts);
	*ret_k = o->nt++;
	return t;
}

static int add_node(struct occupancy *o, json_t *node)
{
	json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
	const char *name = pk_name(node);
	struct topo_torus_host g;
	struct otorus *t;
	size_t k;
	int64_t cell;

	if (!name || json_object_get(o->node_torus, name) ||
	    topo_torus_host_parse(label_of, labels, &g) < 0)
		return 0; /* not a torus host, or seen in an earlier file */
	if (!(t = torus_for(o, &g, &k)))
		return -ENOMEM;
	if (memcmp(&t->geo.chips, &g.chips, sizeof(g.chips)) ||
	    memcmp(&t->geo.host, &g.host, sizeof(g.host)) || t->geo.wrap != g.wrap) {
		o->inconsistent++;
		return 0;
	}
	cell = topo_coord_index(&t->grid, &g.cell);
	if (t->state[cell] != 'x') {
		o->inconsistent++;
		return 0;
	}
	t->state[cell] = json_is_true(pk_get(node, "spec.unschedulable")) ? 'c' : '.';
	return json_object_set_new(o->node_torus, name,
				   json_pack("[I,I]", (json_int_t)k, (json_int_t)cell));
}

/* A pod that holds its node: bound and not finished. */
static void add_pod(struct occupancy *o, json_t *pod)
{
	const char *node = pk_get_string(pod, "spec.nodeName");
	const char *phase = pk_get_string(pod, "status.phase");
	json_t *at = node ? json_object_get(o->node_torus, node) : NULL;
	struct otorus *t;
	int64_t cell;

	if (!at || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
		return;
	t = &o->t[json_integer_value(json_array_get(at, 0))];
	cell = json_integer_value(json_array_get(at, 1));
	if (t->state[cell] == '.')
		t->state[cell] = '#';
}

static void fill_grids(struct occupancy *o)
{
	for (size_t k = 0; k < o->nt; k++) {
		struct otorus *t = &o->t[k];

		for (int64_t i = 0; i < t->hosts; i++) {
			struct topo_coord c;

			topo_coord_of_index(&t->grid, i, &c);
			if (t->state[i] != '.')
				topo_occ_add(t->occ, &c, 1);
			t->pods_on += t->state[i] == '#';
			t->cordoned += t->state[i] == 'c';
		}
	}
}

static int cmp_torus(const void *a, const void *b)
{
	return strverscmp(((const struct otorus *)a)->geo.torus,
			  ((const struct otorus *)b)->geo.torus);
}

struct printer {
	const struct otorus *t;
	int n;
};

static void box_text(const struct otorus *t, const struct topo_box *b, char *buf, size_t len)
{
	snprintf(buf, len, "%dx%dx%d at %d.%d.%d", b->ext.dim[0] * t->geo.host.dim[0],
		 b->ext.dim[1] * t->geo.host.dim[1], b->ext.dim[2] * t->geo.host.dim[2],
		 b->origin.c[0] * t->geo.host.dim[0], b->origin.c[1] * t->geo.host.dim[1],
		 b->origin.c[2] * t->geo.host.dim[2]);
}

static int print_box(const struct topo_box *b, void *arg)
{
	struct printer *p = arg;
	char buf[96];

	box_text(p->t, b, buf, sizeof(buf));
	printf("%s%s", p->n++ % 6 ? ", " : "\n    ", buf);
	return 0;
}

static int free_cubes(const struct otorus *t, int *ret_total)
{
	struct topo_shape cube;
	int n = 0, total = 0;

	for (int a = 0; a < TOPO_DIMS; a++)
		cube.dim[a] = t->geo.cube.dim[a] / t->geo.host.dim[a];
	for (int z = 0; z < t->grid.dim[2]; z += cube.dim[2])
		for (int y = 0; y < t->grid.dim[1]; y += cube.dim[1])
			for (int x = 0; x < t->grid.dim[0]; x += cube.dim[0]) {
				struct topo_box b = {.origin = {{x, y, z}}, .ext = cube};

				total++;
				n += topo_occ_box_busy(t->occ, &b) == 0;
			}
	*ret_total = total;
	return n;
}

static void print_map(const struct otorus *t)
{
	for (int z = 0; z < t->grid.dim[2]; z++) {
		printf("  z=%d (chips %d..%d)\n", z * t->geo.host.dim[2], z * t->geo.host.dim[2],
		       (z + 1) * t->geo.host.dim[2] - 1);
		for (int y = 0; y < t->grid.dim[1]; y++) {
			fputs("    ", stdout);
			for (int x = 0; x < t->grid.dim[0]; x++)
				putchar(t->state[x + (int64_t)t->grid.dim[0] *
							 (y + (int64_t)t->grid.dim[1] * z)]);
			putchar('\n');
		}
	}
}

static void print_torus(struct otorus *t, bool map)
{
	char s[3][48], buf[96];
	struct topo_box b;
	struct printer p = {.t = t};
	int64_t busy = topo_occ_busy_cells(t->occ);

	topo_shape_format(&t->geo.chips, s[0], sizeof(s[0]));
	topo_shape_format(&t->geo.host, s[1], sizeof(s[1]));
	printf("superslice %s: torus %s chips, hosts %s%s%s, %s\n", t->geo.torus, s[0], s[1],
	       t->geo.has_cube ? ", cubes " : "",
	       t->geo.has_cube ? (topo_shape_format(&t->geo.cube, s[2], sizeof(s[2])), s[2]) : "",
	       t->geo.wrap ? "wraparound" : "no wraparound");
	printf("  hosts %lld: used %lld (pods on %lld, cordoned %lld, missing %lld), free %lld\n",
	       (long long)t->hosts, (long long)busy, (long long)t->pods_on, (long long)t->cordoned,
	       (long long)(busy - t->pods_on - t->cordoned), (long long)(t->hosts - busy));
	if (topo_occ_largest_free_box(t->occ, &b) == 1) {
		box_text(t, &b, buf, sizeof(buf));
		printf("  largest free box: %s\n", buf);
	} else {
		printf("  largest free box: none\n");
	}
	if (t->geo.has_cube) {
		int total, n = free_cubes(t, &total);

		printf("  free cubes: %d of %d\n", n, total);
	}
	printf("  used boxes (chips at chip origin):");
	topo_occ_cover(t->occ, true, print_box, &p);
	printf("%s\n  free boxes:", p.n ? "" : " none");
	p.n = 0;
	topo_occ_cover(t->occ, false, print_box, &p);
	printf("%s\n", p.n ? "" : " none");
	if (map)
		print_map(t);
}

static void occupancy_free(struct occupancy *o)
{
	for (size_t k = 0; k < o->nt; k++) {
		topo_occ_free(o->t[k].occ);
		free(o->t[k].state);
	}
	free(o->t);
	json_decref(o->node_torus);
}

/* Nodes first (so pods find them), then pods, over every file's objects. */
static int load(struct occupancy *o, json_t *all)
{
	size_t i;
	json_t *x;
	int r = 0;

	json_array_foreach(all, i, x) if (r == 0 && pk_kind_of(x) == PK_KIND_NODE) r =
	    add_node(o, x);
	if (r < 0)
		return r;
	json_array_foreach(all, i, x) if (pk_kind_of(x) == PK_KIND_POD) add_pod(o, x);
	fill_grids(o);
	if (o->nt > 1)
		qsort(o->t, o->nt, sizeof(o->t[0]), cmp_torus);
	return 0;
}

int podctl_board_occupancy(int argc, char **argv)
{
	struct occupancy o = {.node_torus = json_object()};
	json_t *all = json_array();
	const char *only = NULL;
	bool map = false, any = false;
	int rc = PODCTL_EXIT_OK, shown = 0;

	for (int i = 1; i < argc && rc == PODCTL_EXIT_OK; i++) {
		char err[1024];
		json_t *objs = NULL;

		if (!strcmp(argv[i], "--map")) {
			map = true;
		} else if (!strcmp(argv[i], "--superslice") && i + 1 < argc) {
			only = argv[++i];
		} else if ((!strcmp(argv[i], "-f") || !strcmp(argv[i], "--filename")) &&
			   i + 1 < argc) {
			int r = pk_read_file(argv[++i], &objs, err, sizeof(err));

			if (r < 0) {
				fprintf(stderr, "podctl board occupancy: %s\n", err);
				rc = podctl_input_exit(r);
			} else {
				json_array_extend(all, objs);
				json_decref(objs);
				any = true;
			}
		} else {
			fprintf(stderr, "podctl board occupancy: unexpected argument '%s'\n",
				argv[i]);
			usage(stderr);
			rc = PODCTL_EXIT_USAGE;
		}
	}
	if (rc == PODCTL_EXIT_OK && !any) {
		fputs("podctl board occupancy: no -f FILE\n", stderr);
		usage(stderr);
		rc = PODCTL_EXIT_USAGE;
	}
	if (rc == PODCTL_EXIT_OK && (!o.node_torus || !all || load(&o, all) < 0)) {
		fputs("podctl board occupancy: out of memory\n", stderr);
		rc = PODCTL_EXIT_FAILURE;
	}
	for (size_t k = 0; rc == PODCTL_EXIT_OK && k < o.nt; k++)
		if (!only || !strcmp(only, o.t[k].geo.torus)) {
			print_torus(&o.t[k], map);
			shown++;
		}
	if (rc == PODCTL_EXIT_OK && o.inconsistent)
		fprintf(stderr,
			"podctl board occupancy: %d nodes left out: their torus labels "
			"disagree with their torus or repeat a host's coordinates\n",
			o.inconsistent);
	if (rc == PODCTL_EXIT_OK && !shown) {
		fprintf(stderr, "podctl board occupancy: %s\n",
			only ? "no such superslice" : "no node carries the torus labels");
		rc = PODCTL_EXIT_USAGE;
	}
	if (fflush(stdout) != 0 && rc == PODCTL_EXIT_OK)
		rc = PODCTL_EXIT_FAILURE;
	occupancy_free(&o);
	json_decref(all);
	return rc;
}

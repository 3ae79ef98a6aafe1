/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_top.c — `podctl top`: requests of bound pods summed against
 * allocatable per topology domain, one table per level.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/kube/kube.h"
#include "kernel/podctl/podctl-client.h"
#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "topology/topology.h"

/* ---- top ----------------------------------------------------------------------------------------
 */

static const char *const top_resources[] = {"google.com/tpu", "nvidia.com/gpu", "cpu", "memory",
					    "pods"};
#define NTOP (sizeof(top_resources) / sizeof(top_resources[0]))

struct dom_use {
	int64_t used[NTOP], total[NTOP];
	int nodes;
};

static void add_use(json_t *map, const char *domain, const struct dom_use *u)
{
	json_t *e = json_object_get(map, domain);
	struct dom_use *d;

	if (!e) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return;
		json_object_set_new(map, domain, json_integer((json_int_t)(intptr_t)d));
	} else {
		d = (struct dom_use *)(intptr_t)json_integer_value(e);
	}
	for (size_t i = 0; i < NTOP; i++) {
		d->used[i] += u->used[i];
		d->total[i] += u->total[i];
	}
	d->nodes += u->nodes;
}

static int dom_cmp(const void *a, const void *b)
{
	return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

/* Domains with pods, in natural order; idle ones summed up in one line. */
static void print_level(const char *level, json_t *map, const bool *shown)
{
	size_t n = json_object_size(map), k = 0, idle = 0;
	const char **keys = calloc(n + 1, sizeof(*keys));
	const char *dom;
	json_t *e;

	if (!keys)
		return;
	json_object_foreach(map, dom, e) keys[k++] = dom;
	qsort(keys, n, sizeof(*keys), dom_cmp);
	for (k = 0; k < n; k++) {
		struct dom_use *d =
		    (struct dom_use *)(intptr_t)json_integer_value(json_object_get(map, keys[k]));

		if (d->used[NTOP - 1] == 0 && n > 1) {
			idle++;
			free(d);
			continue;
		}
		printf("%-12s %-16s %5d", level, keys[k], d->nodes);
		for (size_t i = 0; i < NTOP; i++) {
			char a[32], b[32], cell[80];

			if (!shown[i])
				continue;
			podctl_fmt_qty(d->used[i], top_resources[i], a, sizeof(a));
			podctl_fmt_qty(d->total[i], top_resources[i], b, sizeof(b));
			snprintf(cell, sizeof(cell), "%s/%s", a, b);
			printf("  %-16s", cell);
		}
		printf("\n");
		free(d);
	}
	if (idle)
		printf("%-12s (%zu more without pods)\n", level, idle);
	free(keys);
}

/* top --level NAME: keep only that level (its name, or its label key). */
static int keep_level(struct ctx *x, const char *name)
{
	json_t *k;
	size_t i;

	json_array_foreach(x->levels, i, k)
	{
		const char *key = json_string_value(k);
		if (strcmp(cl_level_name(key), name) == 0 || strcmp(key, name) == 0) {
			json_t *only = json_pack("[O]", k);
			json_decref(x->levels);
			x->levels = only;
			return only ? 0 : PODCTL_EXIT_FAILURE;
		}
	}
	fprintf(stderr, "podctl: top --level %s: no such level; the nodes have:", name);
	json_array_foreach(x->levels, i, k)
	    fprintf(stderr, " %s", cl_level_name(json_string_value(k)));
	fputc('\n', stderr);
	return PODCTL_EXIT_USAGE;
}

int cl_cmd_top(struct http *h, int argc, char **argv)
{
	struct opts o = {0};
	struct ctx x = {.h = h, .o = &o};
	json_t *pods = NULL, *n, *p;
	const char *name;
	bool shown[NTOP] = {false};
	int r = cl_parse_opts(h, argc, argv, &o);
	size_t i, j;

	if (r)
		return r;
	if (o.nargs > 1 || (o.nargs == 1 && strcmp(o.args[0], "nodes") != 0))
		return cl_usage_error("usage: podctl top [nodes] [--level LEVEL]");
	if ((r = cl_load_nodes(&x)) || (r = cl_list_items(h, "Pod", NULL, &pods)))
		goto out;
	if (o.level && (r = keep_level(&x, o.level)))
		goto out;
	size_t nlev = json_array_size(x.levels);
	json_t **maps = calloc(nlev + 1, sizeof(*maps));
	struct dom_use cluster = {0};

	if (!maps) {
		r = PODCTL_EXIT_FAILURE;
		goto out;
	}
	for (j = 0; j < nlev; j++)
		maps[j] = json_object();
	json_object_foreach(x.nodes, name, n)
	{
		struct dom_use u = {.nodes = 1};

		for (size_t k = 0; k < NTOP; k++) {
			const char *q = json_string_value(
			    json_object_get(pk_get(n, "status.allocatable"), top_resources[k]));

			u.total[k] = q ? podctl_quantity_milli(q)
				       : (strcmp(top_resources[k], "pods") == 0 ? 110000 : 0);
			if (q && strcmp(top_resources[k], "pods") != 0)
				shown[k] = true;
		}
		json_array_foreach(pods, i, p)
		{
			const char *node = pk_get_string(p, "spec.nodeName");

			if (!node || strcmp(node, name) != 0)
				continue;
			for (size_t k = 0; k < NTOP; k++)
				u.used[k] += strcmp(top_resources[k], "pods") == 0
						 ? 1000
						 : podctl_pod_request(p, top_resources[k]);
		}
		for (j = 0; j < nlev; j++) {
			const char *v = json_string_value(
			    json_object_get(pk_get(n, "metadata.labels"),
					    json_string_value(json_array_get(x.levels, j))));

			add_use(maps[j], v ? v : "-", &u);
		}
		u.nodes = 1;
		for (size_t k = 0; k < NTOP; k++) {
			cluster.used[k] += u.used[k];
			cluster.total[k] += u.total[k];
		}
		cluster.nodes++;
	}
	shown[NTOP - 1] = true;
	printf("%-12s %-16s %5s", "LEVEL", "DOMAIN", "NODES");
	for (size_t k = 0; k < NTOP; k++)
		if (shown[k])
			printf("  %-16s", top_resources[k]);
	printf("\n");
	{
		json_t *cm = json_object();

		add_use(cm, "all", &cluster);
		print_level("cluster", cm, shown);
		json_decref(cm);
	}
	for (j = 0; j < nlev; j++) {
		print_level(cl_level_name(json_string_value(json_array_get(x.levels, j))), maps[j],
			    shown);
		json_decref(maps[j]);
	}
	printf("(used/allocatable: requests of bound pods against allocatable)\n");
	free(maps);
out:
	json_decref(pods);
	json_decref(x.nodes);
	json_decref(x.levels);
	return r;
}

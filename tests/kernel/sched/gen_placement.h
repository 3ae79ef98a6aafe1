/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gen_placement.h — random small placement instances and a validity checker,
 * shared by tests/kernel/sched/test_placement.c and
 * tests/bench/bench_placement.c.
 *
 * An instance is a fragmented cluster (2 zones of racks, 2-3 nodes a rack,
 * 1-2 CPU slots a node, some nodes with one GPU, random busy pods already
 * bound) and one root: a CompositePodGroup of 2-3 gang PodGroups (some
 * rack-bound, some asking for a GPU, random minCount), sometimes itself
 * zone-bound, or a single PodGroup.  Small enough for the exhaustive oracle.
 *
 * gp_check() proves a scheduler's first cycle valid from its actions alone:
 * no node over capacity, a group that did not reach its minimum places
 * nothing, every group with a topology key has all its pods (bound before or
 * now) in one domain, and bindings happen only with root Success.
 */
#ifndef PODKERNEL_TESTS_SCHED_GEN_PLACEMENT_H
#define PODKERNEL_TESTS_SCHED_GEN_PLACEMENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/sched/sched.h"

#define GP_MAX_NODES 8
#define GP_MAX_GROUPS 4
#define GP_MAX_PODS 16

struct gp_node {
	char name[16], rack[8], zone[8];
	int cpu, gpu;
};
struct gp_group {
	char name[16];
	int min, npods, cpu, gpu;
	bool rack; /* topology key rack */
};
struct gp_inst {
	struct gp_node nodes[GP_MAX_NODES];
	int nn;
	int busy[GP_MAX_NODES]; /* CPU slots taken by bound pods */
	bool composite, zone;	/* root composite; root key zone */
	int root_min;
	struct gp_group g[GP_MAX_GROUPS];
	int ng;
};

static inline int gp_rnd(unsigned *seed, int n)
{
	return (int)(rand_r(seed) % (unsigned)n);
}

static inline void gp_generate(struct gp_inst *in, unsigned seed)
{
	int nracks = 2 + gp_rnd(&seed, 2), pods = 0;

	memset(in, 0, sizeof(*in));
	for (int r = 0; r < nracks && in->nn < GP_MAX_NODES; r++) {
		int per = 2 + gp_rnd(&seed, 2);

		for (int i = 0; i < per && in->nn < GP_MAX_NODES; i++) {
			struct gp_node *n = &in->nodes[in->nn];

			snprintf(n->name, sizeof(n->name), "n%d", in->nn);
			snprintf(n->rack, sizeof(n->rack), "r%d", r);
			snprintf(n->zone, sizeof(n->zone), "z%d", r / 2);
			n->cpu = 1 + gp_rnd(&seed, 2);
			n->gpu = gp_rnd(&seed, 4) == 0;
			in->busy[in->nn] = gp_rnd(&seed, 3) == 0 ? 1 : 0;
			in->nn++;
		}
	}
	in->composite = gp_rnd(&seed, 5) != 0;
	in->ng = in->composite ? 2 + gp_rnd(&seed, 2) : 1;
	in->zone = in->composite && gp_rnd(&seed, 4) == 0;
	for (int i = 0; i < in->ng; i++) {
		struct gp_group *g = &in->g[i];

		snprintf(g->name, sizeof(g->name), "g%d", i);
		g->npods = 1 + gp_rnd(&seed, 4);
		if (pods + g->npods > 10)
			g->npods = 10 - pods > 0 ? 10 - pods : 1;
		pods += g->npods;
		g->min = 1 + gp_rnd(&seed, g->npods);
		g->cpu = 1;
		g->gpu = gp_rnd(&seed, 6) == 0;
		g->rack = gp_rnd(&seed, 2) == 0;
	}
	in->root_min = in->composite ? 1 + gp_rnd(&seed, in->ng) : 0;
	if (in->composite && gp_rnd(&seed, 2))
		in->root_min = in->ng;
}

static inline json_t *gp_objects(const struct gp_inst *in)
{
	json_t *objs = json_array();
	char ts[64];

	for (int i = 0; i < in->nn; i++) {
		const struct gp_node *n = &in->nodes[i];
		char q[16];
		json_t *alloc;

		snprintf(q, sizeof(q), "%d", n->cpu);
		alloc = json_pack("{s:s, s:s}", "cpu", q, "pods", "8");

		if (n->gpu)
			json_object_set_new(alloc, "nvidia.com/gpu", json_string("1"));
		json_array_append_new(
		    objs, json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}}, s:{s:o}}", "apiVersion",
				    "v1", "kind", "Node", "metadata", "name", n->name, "labels",
				    "rack", n->rack, "zone", n->zone, "kubernetes.io/hostname",
				    n->name, "status", "allocatable", alloc));
		for (int b = 0; b < in->busy[i]; b++) {
			char name[32];

			snprintf(name, sizeof(name), "busy-%d-%d", i, b);
			json_array_append_new(
			    objs,
			    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s}}}]}}",
				      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
				      "namespace", "default", "spec", "nodeName", n->name,
				      "containers", "name", "c", "resources", "requests", "cpu",
				      "1"));
		}
	}
	if (in->composite) {
		json_t *root = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:s}, s:{s:{s:i}}}}",
					 "apiVersion", "scheduling.k8s.io/v1alpha3", "kind",
					 "CompositePodGroup", "metadata", "name", "root",
					 "creationTimestamp", "2026-01-01T00:00:00Z", "spec",
					 "workloadRef", "workloadName", "w", "templateName", "root",
					 "schedulingPolicy", "gang", "minGroupCount", in->root_min);

		if (in->zone)
			json_object_set_new(json_object_get(root, "spec"), "schedulingConstraints",
					    json_pack("{s:[{s:s}]}", "topology", "key", "zone"));
		json_array_append_new(objs, root);
	}
	for (int i = 0; i < in->ng; i++) {
		const struct gp_group *g = &in->g[i];
		json_t *grp;

		snprintf(ts, sizeof(ts), "2026-01-01T00:00:%02dZ", i + 1);
		grp = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:s}, s:{s:{s:i}}}}",
				"apiVersion", "scheduling.k8s.io/v1alpha3", "kind", "PodGroup",
				"metadata", "name", g->name, "creationTimestamp", ts, "spec",
				"workloadRef", "workloadName", "w", "templateName", g->name,
				"schedulingPolicy", "gang", "minCount", g->min);
		if (in->composite)
			json_object_set_new(json_object_get(grp, "spec"),
					    "parentCompositePodGroupName", json_string("root"));
		if (g->rack)
			json_object_set_new(json_object_get(grp, "spec"), "schedulingConstraints",
					    json_pack("{s:[{s:s}]}", "topology", "key", "rack"));
		json_array_append_new(objs, grp);
		for (int p = 0; p < g->npods; p++) {
			char name[32], q[16];
			json_t *req;

			snprintf(q, sizeof(q), "%d", g->cpu);
			req = json_pack("{s:s}", "cpu", q);

			if (g->gpu)
				json_object_set_new(req, "nvidia.com/gpu", json_string("1"));
			snprintf(name, sizeof(name), "%s-%d", g->name, p);
			json_array_append_new(
			    objs,
			    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}, s:[{s:s, s:{s:o}}]}}",
				      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
				      "namespace", "default", "spec", "schedulingGroup",
				      "podGroupName", g->name, "containers", "name", "c",
				      "resources", "requests", req));
		}
	}
	return objs;
}

/* A scheduler with the instance added; NULL on failure. */
static inline struct pk_sched *gp_sched(const struct gp_inst *in, const char *strategy)
{
	struct pk_sched_opts opts = {.strategy = strategy, .check = true};
	struct pk_sched *s = NULL;
	json_t *objs = gp_objects(in), *o;
	size_t i;

	if (pk_sched_new(&opts, &s) < 0) {
		json_decref(objs);
		return NULL;
	}
	json_array_foreach(objs, i, o)
	{
		struct pk_errors errs = {0};

		if (pk_sched_add(s, o, &errs) < 0) {
			pk_errors_print(&errs, stderr, "gen_placement: ");
			pk_errors_clear(&errs);
			pk_sched_free(s);
			json_decref(objs);
			return NULL;
		}
		pk_errors_clear(&errs);
	}
	json_decref(objs);
	return s;
}

static inline int gp_node_index(const struct gp_inst *in, const char *name)
{
	for (int i = 0; i < in->nn; i++)
		if (strcmp(in->nodes[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * Validity of one cycle's result; 0, or -1 with why.  *ret_ok gets whether
 * the root was scheduled (it bound pods or had nothing to bind).
 */
static inline int gp_check(const struct gp_inst *in, const struct pk_sched_result *res,
			   bool *ret_ok, char *why, size_t whylen)
{
	int cpu[GP_MAX_NODES], gpu[GP_MAX_NODES], placed[GP_MAX_GROUPS] = {0};
	int where[GP_MAX_GROUPS][GP_MAX_PODS];
	bool ok[GP_MAX_GROUPS];
	int nok = 0, total = 0;

	for (int i = 0; i < in->nn; i++) {
		cpu[i] = in->busy[i];
		gpu[i] = 0;
	}
	for (size_t a = 0; a < res->nactions; a++) {
		const struct pk_sched_action *act = &res->actions[a];
		int n, g;

		if (act->action == PK_SCHED_PREEMPT) {
			snprintf(why, whylen, "preempted %s with no lower priority pod", act->name);
			return -1;
		}
		if (act->action != PK_SCHED_BIND)
			continue;
		n = gp_node_index(in, act->node);
		if (n < 0 || sscanf(act->name, "g%d-", &g) != 1 || g < 0 || g >= in->ng) {
			snprintf(why, whylen, "bind of %s to %s", act->name, act->node);
			return -1;
		}
		cpu[n] += in->g[g].cpu;
		gpu[n] += in->g[g].gpu;
		if (cpu[n] > in->nodes[n].cpu || gpu[n] > in->nodes[n].gpu) {
			snprintf(why, whylen, "node %s over capacity", act->node);
			return -1;
		}
		where[g][placed[g]++] = n;
		total++;
	}
	for (int g = 0; g < in->ng; g++) {
		ok[g] = placed[g] >= in->g[g].min;
		if (placed[g] && !ok[g]) {
			snprintf(why, whylen, "%s: %d pods placed, minCount %d", in->g[g].name,
				 placed[g], in->g[g].min);
			return -1;
		}
		for (int i = 1; i < placed[g]; i++)
			if (in->g[g].rack &&
			    strcmp(in->nodes[where[g][i]].rack, in->nodes[where[g][0]].rack) != 0) {
				snprintf(why, whylen, "%s: pods in two racks", in->g[g].name);
				return -1;
			}
		nok += ok[g];
	}
	if (in->zone) {
		const char *z = NULL;

		for (int g = 0; g < in->ng; g++)
			for (int i = 0; i < placed[g]; i++) {
				const char *zi = in->nodes[where[g][i]].zone;

				if (z && strcmp(z, zi) != 0) {
					snprintf(why, whylen, "root: pods in two zones");
					return -1;
				}
				z = zi;
			}
	}
	bool root_ok = in->composite ? nok >= in->root_min : ok[0];

	if (total && !root_ok) {
		snprintf(why, whylen, "pods bound without root Success");
		return -1;
	}
	if (root_ok != (res->outcome == PK_SCHED_SCHEDULED)) {
		snprintf(why, whylen, "outcome %d disagrees with the bindings", res->outcome);
		return -1;
	}
	*ret_ok = root_ok;
	return 0;
}

/*
 * Run one cycle of strategy on the instance; 1 scheduled, 0 not, -1 invalid.
 * ret_bound (optional) gets the number of pods the cycle bound.
 */
static inline int gp_run_bound(const struct gp_inst *in, const char *strategy, char *why,
			       size_t whylen, size_t *ret_bound)
{
	struct pk_sched *s = gp_sched(in, strategy);
	struct pk_sched_result *res = NULL;
	bool ok = false;
	int r;

	if (!s) {
		snprintf(why, whylen, "cannot build the scheduler");
		return -1;
	}
	r = pk_sched_cycle(s, 0, &res);
	if (r < 0) {
		snprintf(why, whylen, "pk_sched_cycle: %d (invariant check)", r);
		pk_sched_free(s);
		return -1;
	}
	r = gp_check(in, res, &ok, why, whylen);
	if (ret_bound)
		*ret_bound = res->bound;
	pk_sched_result_free(res);
	pk_sched_free(s);
	return r < 0 ? -1 : ok;
}

static inline int gp_run(const struct gp_inst *in, const char *strategy, char *why, size_t whylen)
{
	return gp_run_bound(in, strategy, why, whylen, NULL);
}

#endif

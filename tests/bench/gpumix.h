/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpumix.h — a deterministic generator of heterogeneous GPU clusters and of
 * pod arrival sequences for them, shaped like the published production
 * trace of a 1,213-node GPU cluster (several accelerator models; nodes of 1,
 * 2, 4 and 8 devices with their CPU and memory; pods asking 0, 1, 2, 4 or 8
 * devices, about a third of them restricted to one model, CPU-only pods
 * with large CPU requests).
 *
 * Everything is drawn from one seed (splitmix64), so a seed gives the same
 * cluster and the same sequence on every machine.  The node table and the
 * pod mix below are the parameters; README.md ("Placement quality") lists
 * them so that others can set them to their own cluster.
 *
 * Nodes carry the model in accelerator.podkernel.dev/product (the label
 * podagent publishes) and allocatable nvidia.com/gpu, cpu, memory and pods.
 * A model-constrained pod requires its model through required node affinity
 * (operator In), as such workloads are written.  Nodes are added in a
 * seeded shuffle, so no policy gains from the order of the table.
 */
#ifndef PODKERNEL_TESTS_BENCH_GPUMIX_H
#define PODKERNEL_TESTS_BENCH_GPUMIX_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define GM_MODEL_LABEL "accelerator.podkernel.dev/product"
#define GM_RESOURCE "nvidia.com/gpu"

/* One kind of node: count nodes of gpus devices of model, cpu cores, mem_gib. */
struct gm_node_type {
	const char *model;
	int gpus, cpu, mem_gib, count;
};

/* 1,213 nodes, 5,412 GPUs. */
static const struct gm_node_type gm_node_types[] = {
    {"A100-SXM4-80GB", 8, 128, 1024, 120},
    {"V100-SXM2-32GB", 8, 96, 512, 260},
    {"V100-SXM2-16GB", 8, 96, 384, 90},
    {"P100-PCIE-16GB", 4, 64, 256, 110},
    {"A10", 4, 64, 256, 93},
    {"T4", 2, 96, 384, 300},
    {"T4", 1, 64, 256, 160},
    {"A10", 1, 32, 128, 80},
};
#define GM_NODE_TYPES (sizeof(gm_node_types) / sizeof(gm_node_types[0]))

/* The pod mix. */
struct gm_mix {
	double gpus_share[5];	/* of pods asking 0, 1, 2, 4, 8 GPUs */
	double constrained;	/* of GPU pods: required model */
	int cpu_per_gpu[5];	/* cores per GPU, drawn uniformly */
	int mem_per_gpu_gib[4]; /* GiB per GPU, drawn uniformly */
	int cpu_only_cpu[6];	/* cores of a CPU-only pod, drawn uniformly */
	int cpu_only_mem_per_cpu_gib;
};

static const struct gm_mix gm_default_mix = {
    .gpus_share = {0.15, 0.55, 0.12, 0.10, 0.08},
    .constrained = 1.0 / 3.0,
    .cpu_per_gpu = {2, 4, 8, 8, 12},
    .mem_per_gpu_gib = {16, 32, 48, 64},
    .cpu_only_cpu = {16, 24, 32, 48, 64, 96},
    .cpu_only_mem_per_cpu_gib = 2,
};

static const int gm_sizes[5] = {0, 1, 2, 4, 8};

struct gm_rng {
	uint64_t s;
};

static uint64_t gm_next(struct gm_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double gm_unit(struct gm_rng *r) /* [0, 1) */
{
	return (double)(gm_next(r) >> 11) / 9007199254740992.0;
}

static int gm_below(struct gm_rng *r, int n)
{
	return (int)(gm_unit(r) * n);
}

static int gm_total_gpus(void)
{
	int t = 0;

	for (size_t i = 0; i < GM_NODE_TYPES; i++)
		t += gm_node_types[i].gpus * gm_node_types[i].count;
	return t;
}

static json_t *gm_node(const char *name, const struct gm_node_type *t)
{
	char cpu[16], mem[16], gpu[16];

	snprintf(cpu, sizeof(cpu), "%d", t->cpu);
	snprintf(mem, sizeof(mem), "%dGi", t->mem_gib);
	snprintf(gpu, sizeof(gpu), "%d", t->gpus);
	return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:{s:s, s:s, s:s, s:s}}}",
			 "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "labels",
			 "kubernetes.io/hostname", name, GM_MODEL_LABEL, t->model, "status",
			 "allocatable", "cpu", cpu, "memory", mem, GM_RESOURCE, gpu, "pods", "110");
}

/* The cluster's Node objects, in a seeded order; NULL on ENOMEM. */
static json_t *gm_nodes(uint64_t seed)
{
	struct gm_rng rng = {seed ^ 0x6e6f646573ULL};
	json_t *out = json_array();
	int total = 0, *order;

	for (size_t i = 0; i < GM_NODE_TYPES; i++)
		total += gm_node_types[i].count;
	order = malloc((size_t)total * sizeof(int));
	if (!out || !order) {
		free(order);
		json_decref(out);
		return NULL;
	}
	for (int i = 0; i < total; i++)
		order[i] = i;
	for (int i = total - 1; i > 0; i--) { /* Fisher-Yates */
		int j = gm_below(&rng, i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (int i = 0; i < total; i++) {
		int k = order[i];
		size_t t = 0;
		char name[48];

		while (k >= gm_node_types[t].count)
			k -= gm_node_types[t++].count;
		snprintf(name, sizeof(name), "gpu-%04d", i);
		json_array_append_new(out, gm_node(name, &gm_node_types[t]));
	}
	free(order);
	return out;
}

/* A model for a pod of k GPUs, weighted by the GPUs on nodes that can hold it. */
static const char *gm_model_for(struct gm_rng *rng, int k)
{
	int total = 0, x;

	for (size_t i = 0; i < GM_NODE_TYPES; i++)
		if (gm_node_types[i].gpus >= k)
			total += gm_node_types[i].gpus * gm_node_types[i].count;
	x = gm_below(rng, total);
	for (size_t i = 0; i < GM_NODE_TYPES; i++) {
		if (gm_node_types[i].gpus < k)
			continue;
		x -= gm_node_types[i].gpus * gm_node_types[i].count;
		if (x < 0)
			return gm_node_types[i].model;
	}
	return gm_node_types[0].model;
}

static json_t *gm_pod(int i, int gpus, int cpu, int mem_gib, const char *model)
{
	char name[32], c[16], m[16], g[16];
	json_t *req, *pod;

	snprintf(name, sizeof(name), "p-%05d", i);
	snprintf(c, sizeof(c), "%d", cpu);
	snprintf(m, sizeof(m), "%dGi", mem_gib);
	snprintf(g, sizeof(g), "%d", gpus);
	req = json_pack("{s:s, s:s}", "cpu", c, "memory", m);
	if (gpus)
		json_object_set_new(req, GM_RESOURCE, json_string(g));
	pod = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:o}}]}}", "apiVersion", "v1",
			"kind", "Pod", "metadata", "name", name, "namespace", "bench", "spec",
			"containers", "name", "c", "resources", "requests", req);
	if (model)
		json_object_set_new(json_object_get(pod, "spec"), "affinity",
				    json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}",
					      "nodeAffinity",
					      "requiredDuringSchedulingIgnoredDuringExecution",
					      "nodeSelectorTerms", "matchExpressions", "key",
					      GM_MODEL_LABEL, "operator", "In", "values", model));
	return pod;
}

/*
 * Pods in arrival order until their GPU requests reach until (a fraction of
 * the cluster's GPUs, e.g. 1.3); NULL on ENOMEM.
 */
static json_t *gm_pods(uint64_t seed, const struct gm_mix *mix, double until)
{
	struct gm_rng rng = {seed ^ 0x706f6473ULL};
	json_t *out = json_array();
	double want = until * gm_total_gpus();
	int asked = 0;

	for (int i = 0; out && asked < want; i++) {
		double u = gm_unit(&rng), acc = 0;
		int s = 4;

		for (int j = 0; j < 5; j++) {
			acc += mix->gpus_share[j];
			if (u < acc) {
				s = j;
				break;
			}
		}
		int k = gm_sizes[s];
		json_t *pod;

		if (!k) {
			int cpu = mix->cpu_only_cpu[gm_below(&rng, 6)];

			pod = gm_pod(i, 0, cpu, cpu * mix->cpu_only_mem_per_cpu_gib, NULL);
		} else {
			int cpu = k * mix->cpu_per_gpu[gm_below(&rng, 5)];
			int mem = k * mix->mem_per_gpu_gib[gm_below(&rng, 4)];
			const char *model =
			    gm_unit(&rng) < mix->constrained ? gm_model_for(&rng, k) : NULL;

			pod = gm_pod(i, k, cpu, mem, model);
		}
		if (!pod || json_array_append_new(out, pod) < 0) {
			json_decref(out);
			return NULL;
		}
		asked += k;
	}
	return out;
}

#endif /* PODKERNEL_TESTS_BENCH_GPUMIX_H */

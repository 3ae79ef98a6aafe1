/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_dra.c — the cost of dynamic resource allocation in the scheduling
 * core, on 16,384 hosts of the gpu-cluster board (8 GPUs each):
 *
 *   gpu1024-16384   one 1,024-pod gang, each pod asking nvidia.com/gpu: 1
 *   dra1024-16384   the same gang, each pod with a one-GPU ResourceClaim
 *                   made from a template (as the claim controller makes it,
 *                   recorded in the pod's status.resourceClaimStatuses),
 *                   against the ResourceSlices the board's DRA driver
 *                   publishes (131,072 devices) and the DeviceClass of
 *                   examples/dra/deviceclasses.yaml (a CEL selector)
 *
 * Both under the default strategy and "kep"; medians over several runs; the
 * ratio dra/gpu is the price of allocating devices with the placement.
 * Objects are added outside the timed region; each run starts from the same
 * cluster (the gang and, for dra, its claims are removed again).
 */
#define BENCH_NAME "bench_dra"
#include "tests/bench/bench_common.h"

#define RUNS 3
#define PODS 1024

static json_t *pod(int i, bool dra)
{
	char name[32];
	json_t *p;

	snprintf(name, sizeof(name), "w-%d", i);
	p = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}, s:[{s:s, s:{s:{s:s}}}]}}", "apiVersion",
		      "v1", "kind", "Pod", "metadata", "name", name, "namespace", "bench", "spec",
		      "schedulingGroup", "podGroupName", "ring", "containers", "name", "c",
		      "resources", "requests", "cpu", "1");
	if (!dra) {
		json_object_set_new(
		    pk_get(json_array_get(pk_get(p, "spec.containers"), 0), "resources.requests"),
		    "nvidia.com/gpu", json_string("1"));
		return p;
	}
	json_object_set_new(
	    json_object_get(p, "spec"), "resourceClaims",
	    json_pack("[{s:s, s:s}]", "name", "gpu", "resourceClaimTemplateName", "one-gpu"));
	json_object_set_new(p, "status",
			    json_pack("{s:[{s:s, s:s}]}", "resourceClaimStatuses", "name", "gpu",
				      "resourceClaimName", name));
	return p;
}

static json_t *claim(int i)
{
	char name[32];

	snprintf(name, sizeof(name), "w-%d", i);
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name,
			 "namespace", "bench", "spec", "devices", "requests", "name", "gpu",
			 "exactly", "deviceClassName", "gpu.example.com");
}

static void publish(struct pk_sched *s, const struct topo_board *b, int blocks)
{
	json_t *slices = NULL, *o;
	size_t i;
	int r = pk_board_slices_json(b, blocks, &slices);

	if (r < 0)
		die("pk_board_slices_json", r);
	json_array_foreach(slices, i, o) add(s, json_incref(o));
	json_decref(slices);
	add(s, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name",
			 "gpu.example.com", "spec", "selectors", "cel", "expression",
			 "device.driver == \"gpu.example.com\" && "
			 "device.attributes[\"gpu.example.com\"].type == \"gpu\""));
}

static double bench(const struct topo_board *b, int blocks, const char *strategy, bool dra)
{
	struct pk_sched *s = cluster(b, blocks, strategy);
	double t[RUNS];

	if (dra)
		publish(s, b, blocks);
	for (int run = 0; run < RUNS; run++) {
		add(s, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:i}}}}", "apiVersion",
				 "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata",
				 "name", "ring", "namespace", "bench", "spec", "schedulingPolicy",
				 "gang", "minCount", PODS));
		for (int i = 0; i < PODS; i++) {
			if (dra)
				add(s, claim(i));
			add(s, pod(i, dra));
		}
		double t0 = now_ms();
		size_t bound = run_cycles(s);

		t[run] = now_ms() - t0;
		if (bound != PODS) {
			fprintf(stderr, "bench_dra: %s gang bound %zu of %d pods\n",
				dra ? "dra" : "gpu", bound, PODS);
			exit(1);
		}
		for (int i = 0; i < PODS; i++) {
			char p[32];

			snprintf(p, sizeof(p), "w-%d", i);
			pk_sched_remove(s, &pk_type_pod, "bench", p);
			if (dra)
				pk_sched_remove(s, &pk_type_resource_claim, "bench", p);
		}
		pk_sched_remove(s, &pk_type_pod_group, "bench", "ring");
	}
	double tm = median(t, RUNS);

	printf("%-14s %-4s %10.3f ms %12.0f pods/s %8ld KiB peak RSS\n",
	       dra ? "dra1024-16384" : "gpu1024-16384", strategy, tm, PODS / (tm / 1e3),
	       peak_rss_kb());
	pk_sched_free(s);
	return tm;
}

int main(void)
{
	struct topo_board *b = topo_board_new();
	char err[TOPO_ERR_MAX];
	int64_t per_block;
	int r;

	if (!b)
		die("topo_board_new", -ENOMEM);
	r = topo_board_load_file(b, PODKERNEL_SRCDIR "/boards/gpu-cluster.yaml", err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "bench_dra: %s\n", err);
		return 1;
	}
	per_block = topo_board_host_count(b, 1);
	printf("bench_dra: board %s, %lld hosts, %d-pod gang, medians of %d runs\n",
	       topo_board_name(b), (long long)(16384 / per_block * per_block), PODS, RUNS);
	for (int k = 0; k < 2; k++) {
		const char *st = k ? "kep" : pk_sched_strategy_name(0);
		const char *only = getenv("BENCH_DRA_ONLY"); /* "gpu" or "dra" */
		double gpu = only && strcmp(only, "gpu") != 0
				 ? 0
				 : bench(b, (int)(16384 / per_block), st, false);
		double dra = only && strcmp(only, "dra") != 0
				 ? 0
				 : bench(b, (int)(16384 / per_block), st, true);

		printf("%-14s %-4s %10.2fx dra1024 / gpu1024 (target <= 3x)\n", "dra-ratio", st,
		       gpu > 0 ? dra / gpu : 0.0);
	}
	topo_board_free(b);
	return 0;
}

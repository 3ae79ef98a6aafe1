/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_common.h — what the scheduling benchmarks share: a monotonic clock,
 * medians, peak memory, a scheduler holding the simulated cluster of a board
 * (one Node per host, the labels and allocatable podagent would publish),
 * gang objects, the linear-pass floor and a run of cycles to quiescence.
 * Each benchmark defines BENCH_NAME (its program name, for errors) first.
 */
#ifndef PODKERNEL_TESTS_BENCH_COMMON_H
#define PODKERNEL_TESTS_BENCH_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kernel/api/api.h"
#include "kernel/sched/sched-internal.h"
#include "kernel/sched/sched.h"
#include "topology/topology.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void die(const char *what, int r)
{
	fprintf(stderr, BENCH_NAME ": %s: %s\n", what, strerror(-r));
	exit(1);
}

static void add(struct pk_sched *s, json_t *o)
{
	struct pk_errors errs = {0};
	int r = pk_sched_add(s, o, &errs);

	if (r < 0) {
		pk_errors_print(&errs, stderr, BENCH_NAME ": ");
		die("add", r);
	}
	json_decref(o);
}

static struct pk_sched *cluster(const struct topo_board *b, int superslices, const char *strategy)
{
	struct pk_sched_opts opts = {.strategy = strategy};
	struct pk_sched *s = NULL;
	int64_t hosts = topo_board_host_count(b, superslices);
	int r = pk_sched_new(&opts, &s);

	if (r < 0)
		die("pk_sched_new", r);
	for (int64_t i = 0; i < hosts; i++) {
		struct topo_host h;
		json_t *labels = json_object(), *alloc = json_object();

		if ((r = topo_board_host(b, superslices, i, &h)) < 0)
			die("topo_board_host", r);
		for (size_t l = 0; l < topo_board_level_count(b); l++)
			json_object_set_new(labels, topo_board_level_key(b, l),
					    json_string(h.domain[l]));
		json_object_set_new(labels, "kubernetes.io/hostname", json_string(h.name));
		struct topo_label tl[TOPO_TORUS_LABELS];
		int ntl = topo_board_torus_labels(b, &h, tl);

		for (int k = 0; k < ntl; k++)
			json_object_set_new(labels, tl[k].key, json_string(tl[k].value));
		for (size_t a = 0; a < topo_board_allocatable_count(b); a++) {
			char q[64];

			topo_quantity_format(topo_board_allocatable_milli(b, a),
					     TOPO_QUANTITY_DECIMAL_SI, q, sizeof(q));
			json_object_set_new(alloc, topo_board_allocatable_name(b, a),
					    json_string(q));
		}
		add(s, json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:o}}", "apiVersion", "v1", "kind",
				 "Node", "metadata", "name", h.name, "labels", labels, "status",
				 "allocatable", alloc));
	}
	return s;
}

__attribute__((unused)) static json_t *group(bool composite, const char *name, const char *parent,
					     int min, const char *key)
{
	json_t *g = json_pack(
	    "{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:s}, s:{s:{s:i}}, s:{s:[{s:s}]}}}", "apiVersion",
	    "scheduling.k8s.io/v1alpha3", "kind", composite ? "CompositePodGroup" : "PodGroup",
	    "metadata", "name", name, "namespace", "bench", "spec", "workloadRef", "workloadName",
	    "bench", "templateName", "t", "schedulingPolicy", "gang",
	    composite ? "minGroupCount" : "minCount", min, "schedulingConstraints", "topology",
	    "key", key);

	if (parent)
		json_object_set_new(json_object_get(g, "spec"), "parentCompositePodGroupName",
				    json_string(parent));
	return g;
}

__attribute__((unused)) static double linear_pass(struct pk_sched *s)
{
	int64_t sum[SC_MAX_RES] = {0};
	volatile int64_t sink = 0;
	double t0 = now_ms();

	for (size_t i = 0; i < s->snap.nnodes; i++)
		for (int r = 0; r < s->snap.nres; r++)
			sum[r] += s->snap.nodes[i]->alloc[r] - s->snap.nodes[i]->used[r];
	for (int r = 0; r < SC_MAX_RES; r++)
		sink += sum[r];
	(void)sink;
	return now_ms() - t0;
}

__attribute__((unused)) static size_t run_cycles(struct pk_sched *s)
{
	size_t bound = 0;

	for (;;) {
		struct pk_sched_result *res = NULL;
		int r = pk_sched_cycle(s, 0, &res);
		bool idle;

		if (r < 0)
			die("pk_sched_cycle", r);
		bound += res->bound;
		idle = res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED;
		pk_sched_result_free(res);
		if (idle)
			return bound;
	}
}

#endif

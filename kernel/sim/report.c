/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c — a run's report as JSON, and the JSON and terminal forms of
 * several runs.
 *
 * A run's report (the JSON contract of `podctl simulate -o FILE.json`):
 * what ran (label, strategy, seed, hosts, accelerators), job and pod counts,
 * queueing delay percentiles (nearest rank) for all jobs and by gang size,
 * with their distribution (cdf: the delay at 0%, 5%, ..., 100% of the jobs),
 * preemptions, failures, allocation and stranded accelerators (time-weighted
 * mean and peak), fragmentation per superslice (the largest box of entirely
 * free hosts: minimum and time-weighted mean), the events played, the jobs
 * never placed (the first 100), and the series the charts draw.  Times are
 * seconds, ratios are rounded to 1e-4; keys are written sorted.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sim/sim-run.h"

#define NEVER_PLACED_LISTED 100

static const struct {
	const char *name;
	int32_t lo, hi;
} gang_buckets[SIM_GANG_BUCKETS] = {
    {"all", 1, INT32_MAX}, {"1", 1, 1},		{"2-8", 2, 8},
    {"9-32", 9, 32},	   {"33-128", 33, 128}, {"129+", 129, INT32_MAX},
};

static json_t *ratio(double x)
{
	return json_real(round(x * 10000.0) / 10000.0);
}

static json_t *seconds(int64_t ms)
{
	return json_real((double)ms / 1000.0);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t rank(const int64_t *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	return v[k ? k - 1 : 0];
}

/*
 * The distribution of sorted delays v as SIM_CDF_POINTS quantiles, evenly
 * spaced from the smallest (0) to the largest (1): the CDF the report draws.
 */
#define SIM_CDF_POINTS 21
static json_t *cdf(const int64_t *v, size_t n)
{
	json_t *out = json_array();

	for (int i = 0; n && out && i < SIM_CDF_POINTS; i++) {
		double q = (double)i / (SIM_CDF_POINTS - 1);

		json_array_append_new(out, seconds(i == 0 ? v[0] : rank(v, n, q)));
	}
	return out;
}

static json_t *delays(const struct sim_run *s)
{
	json_t *out = json_array();
	int64_t *v = malloc((s->trace->n ? s->trace->n : 1) * sizeof(*v));

	if (!out || !v) {
		free(v);
		json_decref(out);
		return NULL;
	}
	for (int b = 0; b < SIM_GANG_BUCKETS; b++) {
		size_t n = 0;

		for (size_t j = 0; j < s->trace->n; j++) {
			int32_t pods = s->trace->jobs[j].pods;

			if (s->delay_ms[j] >= 0 && pods >= gang_buckets[b].lo &&
			    pods <= gang_buckets[b].hi)
				v[n++] = s->delay_ms[j];
		}
		if (!n && b > 0)
			continue;
		qsort(v, n, sizeof(*v), cmp_i64);
		json_array_append_new(out, json_pack("{s:s,s:I,s:o,s:o,s:o,s:o,s:o}", "gang",
						     gang_buckets[b].name, "jobs", (json_int_t)n,
						     "p50", seconds(n ? rank(v, n, 0.5) : 0), "p95",
						     seconds(n ? rank(v, n, 0.95) : 0), "p99",
						     seconds(n ? rank(v, n, 0.99) : 0), "max",
						     seconds(n ? v[n - 1] : 0), "cdf", cdf(v, n)));
	}
	free(v);
	return out;
}

static json_t *never_placed(const struct sim_run *s, json_int_t *ret_count)
{
	json_t *list = json_array();
	json_int_t n = 0;

	for (size_t j = 0; j < s->trace->n; j++) {
		const struct sim_job *job = &s->trace->jobs[j];

		if (s->delay_ms[j] >= 0 || s->runs[j].state == SIM_FUTURE)
			continue;
		if (n++ < NEVER_PLACED_LISTED)
			json_array_append_new(
			    list,
			    json_pack("{s:I,s:o,s:i,s:I}", "job", (json_int_t)j, "arrival",
				      seconds(job->arrival_ms), "pods", (int)job->pods,
				      "accelerators",
				      (json_int_t)(sim_pod_req(s, (uint32_t)j, 0).accel / 1000)));
	}
	*ret_count = n;
	return list;
}

static json_t *series(const struct sim_run *s)
{
	json_t *t = json_array(), *alloc = json_array(), *str = json_array(), *frag = json_array();
	size_t nss = s->nss < SIM_MAX_SS ? s->nss : SIM_MAX_SS;

	for (size_t i = 0; i < nss; i++)
		json_array_append_new(frag, json_array());
	for (size_t i = 0; i < s->nsamples; i++) {
		const struct sim_sample *p = &s->samples[i];

		json_array_append_new(t, seconds(p->t));
		json_array_append_new(alloc, json_integer(p->alloc / 1000));
		json_array_append_new(str, json_integer(p->stranded / 1000));
		for (size_t k = 0; k < nss; k++)
			json_array_append_new(json_array_get(frag, k), json_integer(p->frag[k]));
	}
	return json_pack("{s:o,s:o,s:o,s:o}", "t", t, "allocated", alloc, "stranded", str,
			 "largest_free_box", frag);
}

static json_t *fragmentation(const struct sim_run *s, double span)
{
	json_t *out = json_array();
	size_t nss = s->nss < SIM_MAX_SS ? s->nss : SIM_MAX_SS;

	for (size_t i = 0; i < nss; i++)
		json_array_append_new(
		    out, json_pack("{s:s,s:i,s:o}", "superslice",
				   s->ss_names[i] ? s->ss_names[i] : "", "min_largest_free_box",
				   s->frag_min[i] == INT32_MAX ? 0 : (int)s->frag_min[i],
				   "mean_largest_free_box",
				   ratio(span > 0 ? s->frag_area[i] / span : s->held.frag[i])));
	return out;
}

static json_t *counts(const struct sim_run *s, json_int_t never, json_int_t waiting,
		      json_int_t running)
{
	return json_pack(
	    "{s:{s:I,s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I},s:{s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I,s:I},"
	    "s:{s:I,s:I}}",
	    "jobs", "total", (json_int_t)s->trace->n, "completed",
	    (json_int_t)s->count.jobs_completed, "failed", (json_int_t)s->count.jobs_failed,
	    "never_placed", never, "waiting_at_end", waiting, "running_at_end", running,
	    "preemptions", "jobs", (json_int_t)s->count.preempted_jobs, "pods",
	    (json_int_t)s->count.preempted_pods, "failures", "injected",
	    (json_int_t)s->count.injected_failures, "node_loss",
	    (json_int_t)s->count.node_loss_failures, "retries", (json_int_t)s->count.retries,
	    "events", "cycles", (json_int_t)s->count.cycles, "arrivals",
	    (json_int_t)s->count.arrivals, "bindings", (json_int_t)s->count.bindings, "completions",
	    (json_int_t)s->count.pods_succeeded, "failures",
	    (json_int_t)(s->count.injected_failures + s->count.node_loss_failures), "preemptions",
	    (json_int_t)s->count.preempted_pods, "repairs", "in_place",
	    (json_int_t)s->count.repairs_in_place, "whole", (json_int_t)s->count.repairs_whole);
}

int sim_stats_report(struct sim_run *s, json_t **ret)
{
	int64_t end = s->until_ms > 0 ? s->until_ms : s->last_t;
	json_int_t never = 0, waiting = 0, running = 0;
	double span, total = (double)(s->total_accel > 0 ? s->total_accel : 1);
	json_t *rep, *np;

	sim_stats_sample(s, end); /* close the integrals at the end */
	span = (double)end;
	for (size_t j = 0; j < s->trace->n; j++) {
		waiting += s->runs[j].state == SIM_WAITING || s->runs[j].state == SIM_QUEUED;
		running += s->runs[j].state == SIM_RUNNING;
	}
	np = never_placed(s, &never);
	rep = counts(s, never, waiting, running);
	if (!rep || !np) {
		json_decref(rep);
		json_decref(np);
		return -ENOMEM;
	}
	json_object_set_new(rep, "label", json_string(s->label));
	json_object_set_new(rep, "strategy", json_string(s->strategy));
	json_object_set_new(rep, "seed", json_integer((json_int_t)s->seed));
	json_object_set_new(rep, "hosts", json_integer((json_int_t)s->nnodes));
	json_object_set_new(rep, "accelerators", json_integer(s->total_accel / 1000));
	json_object_set_new(rep, "resource", json_string(s->resource));
	json_object_set_new(rep, "end", seconds(end));
	json_object_set_new(rep, "allocation",
			    json_pack("{s:o,s:o}", "mean",
				      ratio(span > 0 ? s->alloc_area / span / total : 0), "peak",
				      ratio((double)s->peak_alloc / total)));
	json_object_set_new(rep, "stranded",
			    json_pack("{s:o,s:I}", "mean_accelerators",
				      ratio(span > 0 ? s->stranded_area / span / 1000.0 : 0),
				      "peak_accelerators", (json_int_t)(s->peak_stranded / 1000)));
	json_object_set_new(rep, "queueing_delay", delays(s));
	json_object_set_new(rep, "fragmentation", fragmentation(s, span));
	json_object_set_new(rep, "never_placed_jobs", np);
	json_object_set(rep, "node_loss_not_on_board", s->loss_unknown);
	json_object_set_new(rep, "series", series(s));
	*ret = rep;
	return 0;
}

/* ---- forms ------------------------------------------------------------------------------ */

int pk_sim_report_json(FILE *f, const json_t *runs, const json_t *provenance)
{
	json_t *doc = json_pack("{s:s,s:s,s:O}", "apiVersion", "podkernel.dev/v1alpha1", "kind",
				"SimulationReport", "runs", runs);

	if (doc && provenance)
		json_object_set(doc, "provenance", (json_t *)provenance);
	int r;

	if (!doc)
		return -ENOMEM;
	r = json_dumpf(doc, f, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	fputc('\n', f);
	json_decref(doc);
	return r < 0 || ferror(f) ? -EIO : 0;
}

static double num(const json_t *run, const char *path)
{
	return json_number_value(pk_get(run, path));
}

int pk_sim_report_text(FILE *f, const json_t *runs)
{
	size_t i, k;
	json_t *run, *d;

	json_array_foreach(runs, i, run)
	{
		char span[64];

		pk_sim_duration(num(run, "end"), span, sizeof(span));
		fprintf(f, "run %zu: %s, strategy %s, seed %.0f: %.0f hosts, %.0f %s, %s\n", i + 1,
			json_string_value(json_object_get(run, "label")),
			json_string_value(json_object_get(run, "strategy")), num(run, "seed"),
			num(run, "hosts"), num(run, "accelerators"),
			json_string_value(json_object_get(run, "resource")), span);
		fprintf(f,
			"  jobs        %.0f: %.0f completed, %.0f failed, %.0f never placed, %.0f "
			"running and %.0f waiting at the end\n",
			num(run, "jobs.total"), num(run, "jobs.completed"), num(run, "jobs.failed"),
			num(run, "jobs.never_placed"), num(run, "jobs.running_at_end"),
			num(run, "jobs.waiting_at_end"));
		fprintf(f, "  allocation  mean %.1f%%, peak %.1f%%\n",
			100 * num(run, "allocation.mean"), 100 * num(run, "allocation.peak"));
		fprintf(f, "  stranded    mean %.1f, peak %.0f accelerators\n",
			num(run, "stranded.mean_accelerators"),
			num(run, "stranded.peak_accelerators"));
		fprintf(f,
			"  preempted   %.0f jobs (%.0f pods); failures %.0f injected, %.0f node "
			"loss, %.0f retries\n",
			num(run, "preemptions.jobs"), num(run, "preemptions.pods"),
			num(run, "failures.injected"), num(run, "failures.node_loss"),
			num(run, "failures.retries"));
		if (num(run, "repairs.in_place") + num(run, "repairs.whole") > 0)
			fprintf(f,
				"  repairs     %.0f in the same domain, %.0f re-placed whole "
				"(after node loss)\n",
				num(run, "repairs.in_place"), num(run, "repairs.whole"));
		if (json_array_size(json_object_get(run, "levels"))) {
			fprintf(f, "  arrived     ");
			json_array_foreach(json_object_get(run, "levels"), k, d)
			    fprintf(f, "%s%.0f%% requested: %.2f%% allocated", k ? ", " : "",
				    num(d, "arrived_percent"), 100 * num(d, "allocated_ratio"));
			fprintf(f, " (nothing departing)\n");
		}
		sim_q_report_text(f, run);
		fprintf(f, "  queueing delay (s)   jobs      p50      p95      p99      max\n");
		json_array_foreach(json_object_get(run, "queueing_delay"), k, d)
		    fprintf(f, "    gang %-8s %10.0f %8.1f %8.1f %8.1f %8.1f\n",
			    json_string_value(json_object_get(d, "gang")), num(d, "jobs"),
			    num(d, "p50"), num(d, "p95"), num(d, "p99"), num(d, "max"));
		json_array_foreach(json_object_get(run, "fragmentation"), k, d)
		{
			if (k == 8) {
				fprintf(f, "    ...\n");
				break;
			}
			fprintf(f, "  largest free box in %s: min %.0f, mean %.1f hosts\n",
				json_string_value(json_object_get(d, "superslice")),
				num(d, "min_largest_free_box"), num(d, "mean_largest_free_box"));
		}
	}
	return ferror(f) ? -EIO : 0;
}

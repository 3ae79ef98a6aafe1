/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_stats.c — what a run with queues measures, and its part of the
 * report ("queues"): per LocalQueue the jobs' wait from arrival to their
 * first full placement (p50, p95, max; nearest rank), per ClusterQueue its
 * usage (the requests of the workloads it admitted) against its nominal
 * quota (summed over flavors) for the accelerator, cpu and memory,
 * time-weighted mean and peak, and per tenant (a queued job's namespace)
 * fairness as its dominant resource share: the largest, over those three
 * resources, of what its bound pods hold over the cluster's capacity
 * (time-weighted mean and peak, and a series).  Also the admissions,
 * preemptions by quota, and admitted workloads not placed in the cycles of
 * the instant they were admitted (with how long, in all, they held quota
 * before they ran, or until the end when they never did).  Everything is
 * virtual time: the same run, the same bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sim/queues-internal.h"

static json_t *ratio(double x)
{
	return json_real(round(x * 10000.0) / 10000.0);
}

static json_t *units(int64_t milli)
{
	return json_real(round((double)milli) / 1000.0);
}

int sim_q_stats_new(struct sim_queues *q)
{
	size_t c = q->ncq * Q_RES + 1, t = q->nten + 1, w = q->nten + q->ncq + 1;

	q->nominal = calloc(c, sizeof(*q->nominal));
	q->cq_used = calloc(c, sizeof(*q->cq_used));
	q->cq_held = calloc(c, sizeof(*q->cq_held));
	q->cq_peak = calloc(c, sizeof(*q->cq_peak));
	q->cq_area = calloc(c, sizeof(*q->cq_area));
	q->ten_used = calloc(t * Q_RES, sizeof(*q->ten_used));
	q->share_held = calloc(t, sizeof(*q->share_held));
	q->share_area = calloc(t, sizeof(*q->share_area));
	q->share_peak = calloc(t, sizeof(*q->share_peak));
	q->st = calloc(SIM_MAX_SAMPLES, sizeof(*q->st));
	q->sv = calloc(SIM_MAX_SAMPLES * w, sizeof(*q->sv));
	q->stride = 1;
	return q->nominal && q->cq_used && q->cq_held && q->cq_peak && q->cq_area && q->ten_used &&
		       q->share_held && q->share_area && q->share_peak && q->st && q->sv
		   ? 0
		   : -ENOMEM;
}

double sim_q_dominant(const struct sim_queues *q, size_t tenant)
{
	double d = 0;

	for (int r = 0; r < Q_RES; r++) {
		double x = q->cap[r] > 0
			       ? (double)q->ten_used[tenant * Q_RES + (size_t)r] / (double)q->cap[r]
			       : 0;

		d = x > d ? x : d;
	}
	return d;
}

/* The series keeps every stride-th sample, at most SIM_MAX_SAMPLES (halved when full). */
static void series_add(struct sim_queues *q, int64_t t)
{
	size_t w = q->nten + q->ncq;

	if (q->skip++ % q->stride)
		return;
	if (q->ns == SIM_MAX_SAMPLES) {
		for (size_t i = 0; 2 * i < q->ns; i++) {
			q->st[i] = q->st[2 * i];
			memmove(&q->sv[i * w], &q->sv[2 * i * w], w * sizeof(*q->sv));
		}
		q->ns = (q->ns + 1) / 2;
		q->stride *= 2;
	}
	q->st[q->ns] = t;
	for (size_t i = 0; i < q->nten; i++)
		q->sv[q->ns * w + i] = q->share_held[i];
	for (size_t c = 0; c < q->ncq; c++)
		q->sv[q->ns * w + q->nten + c] = (double)q->cq_held[c * Q_RES] / 1000.0;
	q->ns++;
}

int sim_q_sample(struct sim_run *s, int64_t t)
{
	struct sim_queues *q = s->q;
	double dt = (double)(t - q->last_t);

	if (dt > 0) {
		for (size_t i = 0; i < q->ncq * Q_RES; i++)
			q->cq_area[i] += (double)q->cq_held[i] * dt;
		for (size_t i = 0; i < q->nten; i++)
			q->share_area[i] += q->share_held[i] * dt;
		q->last_t = t;
	}
	for (size_t i = 0; i < q->ncq * Q_RES; i++) {
		q->cq_held[i] = q->cq_used[i];
		if (q->cq_used[i] > q->cq_peak[i])
			q->cq_peak[i] = q->cq_used[i];
	}
	for (size_t i = 0; i < q->nten; i++) {
		q->share_held[i] = sim_q_dominant(q, i);
		if (q->share_held[i] > q->share_peak[i])
			q->share_peak[i] = q->share_held[i];
	}
	series_add(q, t);
	return 0;
}

/* ---- the report ------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double rank_s(const int64_t *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	return n ? (double)v[k ? k - 1 : 0] / 1000.0 : 0;
}

static json_t *local_queues(const struct sim_run *s)
{
	const struct sim_queues *q = s->q;
	int64_t *v = malloc((s->trace->n ? s->trace->n : 1) * sizeof(*v));
	json_t *out = json_array();

	for (size_t l = 0; v && out && l < q->nlq; l++) {
		size_t n = 0, jobs = 0, never = 0;

		for (size_t j = 0; j < s->trace->n; j++) {
			if (q->lq[j] != (int32_t)l || s->runs[j].state == SIM_FUTURE)
				continue;
			jobs++;
			if (s->delay_ms[j] >= 0)
				v[n++] = s->delay_ms[j];
			else
				never++;
		}
		qsort(v, n, sizeof(*v), cmp_i64);
		json_array_append_new(
		    out, json_pack("{s:s,s:s,s:I,s:I,s:f,s:f,s:f}", "name", q->lq_names[l],
				   "cluster_queue", q->lq_cq[l], "jobs", (json_int_t)jobs,
				   "never_placed", (json_int_t)never, "wait_p50", rank_s(v, n, 0.5),
				   "wait_p95", rank_s(v, n, 0.95), "wait_max", rank_s(v, n, 1.0)));
	}
	free(v);
	return out;
}

static json_t *cluster_queues(const struct sim_run *s, double span)
{
	const struct sim_queues *q = s->q;
	const char *names[Q_RES] = {s->resource, "cpu", "memory"};
	json_t *out = json_array();

	for (size_t c = 0; out && c < q->ncq; c++) {
		json_t *use = json_array();

		for (int r = 0; use && r < Q_RES; r++) {
			size_t i = c * Q_RES + (size_t)r;
			double mean = span > 0 ? q->cq_area[i] / span : (double)q->cq_held[i];

			if (!q->nominal[i] && !q->cq_peak[i])
				continue;
			json_array_append_new(
			    use,
			    json_pack("{s:s,s:o,s:o,s:o,s:o}", "resource", names[r], "nominal",
				      units(q->nominal[i]), "mean", units((int64_t)mean), "peak",
				      units(q->cq_peak[i]), "mean_of_nominal",
				      ratio(q->nominal[i] ? mean / (double)q->nominal[i] : 0)));
		}
		json_array_append_new(out, json_pack("{s:s,s:o}", "name", q->cqs[c], "usage", use));
	}
	return out;
}

static json_t *tenants(const struct sim_queues *q, double span)
{
	json_t *out = json_array();

	for (size_t i = 0; out && i < q->nten; i++)
		json_array_append_new(
		    out, json_pack("{s:s,s:o,s:o}", "name", q->tenants[i], "mean_dominant_share",
				   ratio(span > 0 ? q->share_area[i] / span : q->share_held[i]),
				   "peak_dominant_share", ratio(q->share_peak[i])));
	return out;
}

static json_t *series(const struct sim_queues *q)
{
	json_t *t = json_array(), *share = json_object(), *acc = json_object();
	size_t w = q->nten + q->ncq;

	for (size_t i = 0; t && i < q->ns; i++)
		json_array_append_new(t, json_real((double)q->st[i] / 1000.0));
	for (size_t k = 0; share && acc && k < w; k++) {
		json_t *v = json_array();

		for (size_t i = 0; v && i < q->ns; i++)
			json_array_append_new(v, k < q->nten ? ratio(q->sv[i * w + k])
							     : json_real(q->sv[i * w + k]));
		json_object_set_new(k < q->nten ? share : acc,
				    k < q->nten ? q->tenants[k] : q->cqs[k - q->nten], v);
	}
	return json_pack("{s:o,s:o,s:o}", "t", t, "dominant_share", share, "accelerators_admitted",
			 acc);
}

int sim_q_report(struct sim_run *s, json_t *rep)
{
	struct sim_queues *q = s->q;
	int64_t end = s->until_ms > 0 ? s->until_ms : s->last_t;
	json_t *o;

	if (!q)
		return 0;
	sim_q_sample(s, end);
	/* admitted and still not placed at the end: quota held idle until then */
	for (uint32_t j = 0; j < s->trace->n; j++)
		if (q->admit_at[j] >= 0 && q->cq[j] >= 0 && end > q->admit_at[j]) {
			q->count.unplaceable_ms += end - q->admit_at[j];
			if (end - q->admit_at[j] > q->count.unplaceable_max_ms)
				q->count.unplaceable_max_ms = end - q->admit_at[j];
		}
	o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:{s:f,s:f},s:o,s:o,s:o,s:o}", "admission",
		      q->quota_first ? "quota-first" : "podkernel", "passes",
		      (json_int_t)q->count.passes, "admitted", (json_int_t)q->count.admitted,
		      "preempted", (json_int_t)q->count.preempted, "admitted_unplaceable",
		      (json_int_t)q->count.unplaceable, "admitted_unplaced_seconds", "total",
		      (double)q->count.unplaceable_ms / 1000.0, "max",
		      (double)q->count.unplaceable_max_ms / 1000.0, "local_queues", local_queues(s),
		      "cluster_queues", cluster_queues(s, (double)end), "tenants",
		      tenants(q, (double)end), "series", series(q));
	if (!o)
		return -ENOMEM;
	json_object_set_new(rep, "queues", o);
	return 0;
}

/* The queues part of a run's terminal summary. */
void sim_q_report_text(FILE *f, const json_t *run)
{
	const json_t *q = json_object_get(run, "queues"), *x, *u;
	size_t i, k;

	if (!q)
		return;
	fprintf(f,
		"  queues      %s admission: %.0f admitted, %.0f preempted, %.0f admitted but not "
		"placed at once (quota held idle %.0f s in all)\n",
		pk_get_string(q, "admission"), json_number_value(json_object_get(q, "admitted")),
		json_number_value(json_object_get(q, "preempted")),
		json_number_value(json_object_get(q, "admitted_unplaceable")),
		json_number_value(pk_get(q, "admitted_unplaced_seconds.total")));
	fprintf(f, "    local queue                     jobs  never   p50 wait   p95 wait\n");
	json_array_foreach(json_object_get(q, "local_queues"), i, x)
	    fprintf(f, "    %-30s %6.0f %6.0f %10.0f %10.0f\n", pk_get_string(x, "name"),
		    json_number_value(json_object_get(x, "jobs")),
		    json_number_value(json_object_get(x, "never_placed")),
		    json_number_value(json_object_get(x, "wait_p50")),
		    json_number_value(json_object_get(x, "wait_p95")));
	json_array_foreach(json_object_get(q, "cluster_queues"), i,
			   x) json_array_foreach(json_object_get(x, "usage"), k, u)
	    fprintf(f, "    cluster queue %-16s %-14s nominal %8g, mean %8.1f (%.0f%%), peak %g\n",
		    pk_get_string(x, "name"), pk_get_string(u, "resource"),
		    json_number_value(json_object_get(u, "nominal")),
		    json_number_value(json_object_get(u, "mean")),
		    100 * json_number_value(json_object_get(u, "mean_of_nominal")),
		    json_number_value(json_object_get(u, "peak")));
	json_array_foreach(json_object_get(q, "tenants"), i, x)
	    fprintf(f, "    tenant %-20s dominant share mean %.1f%%, peak %.1f%%\n",
		    pk_get_string(x, "name"),
		    100 * json_number_value(json_object_get(x, "mean_dominant_share")),
		    100 * json_number_value(json_object_get(x, "peak_dominant_share")));
}

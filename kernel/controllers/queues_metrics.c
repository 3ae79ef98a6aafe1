/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_metrics.c — the queue controller's lines of /metrics, under the
 * names Kueue's operators chart: kueue_pending_workloads,
 * kueue_admitted_active_workloads, kueue_cluster_queue_resource_usage,
 * kueue_cluster_queue_nominal_quota (gauges, as the latest pass found them)
 * and kueue_admission_wait_time_seconds (a histogram per ClusterQueue of
 * the time from a workload's creation to its admission, since start).  A
 * pass renders the gauges into text the metrics hook prints as it is; the
 * histogram is counted as admissions happen.  Both under the metrics lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/controllers-internal.h"

#define WAIT_BUCKETS 14 /* 1 s, times 2.5 each */

static double bound(int i)
{
	double b = 1;

	while (i-- > 0)
		b *= 2.5;
	return b;
}

void q_metrics_wait(struct pk_ctl *ctl, const char *cq, double seconds)
{
	json_t *h;

	pthread_mutex_lock(&ctl->m.lock);
	if (!ctl->m.queue_waits)
		ctl->m.queue_waits = json_object();
	h = json_object_get(ctl->m.queue_waits, cq);
	if (!h && ctl->m.queue_waits) {
		h = json_array();
		for (int i = 0; h && i < WAIT_BUCKETS + 2; i++)
			json_array_append_new(h, json_real(0)); /* buckets, count, sum */
		json_object_set_new(ctl->m.queue_waits, cq, h);
	}
	for (int i = 0; h && i < WAIT_BUCKETS; i++)
		if (seconds <= bound(i))
			json_real_set(json_array_get(h, i),
				      json_real_value(json_array_get(h, i)) + 1);
	if (h) {
		json_t *n = json_array_get(h, WAIT_BUCKETS),
		       *sum = json_array_get(h, WAIT_BUCKETS + 1);

		json_real_set(n, json_real_value(n) + 1);
		json_real_set(sum, json_real_value(sum) + seconds);
	}
	pthread_mutex_unlock(&ctl->m.lock);
}

void q_metrics_set_gauges(struct pk_ctl *ctl, char *text)
{
	pthread_mutex_lock(&ctl->m.lock);
	free(ctl->m.queue_gauges);
	ctl->m.queue_gauges = text;
	pthread_mutex_unlock(&ctl->m.lock);
}

void q_metrics_stats(struct pk_ctl *ctl)
{
	struct pk_queues_stats st;

	q_cache_stats(ctl, &st);
	pthread_mutex_lock(&ctl->m.lock);
	ctl->m.queue_stats = st;
	pthread_mutex_unlock(&ctl->m.lock);
}

static void stats_render(const struct pk_queues_stats *st, FILE *f)
{
	const struct {
		const char *name, *help;
		uint64_t v;
	} c[] = {
	    {"passes", "Queue controller passes.", st->passes},
	    {"listings", "Full listings of what the pass reads (a start, a lost change stream).",
	     st->lists},
	    {"workloads_decoded", "Workloads whose requests were decoded (once per version).",
	     st->decodes},
	    {"workloads_tried", "Pending workloads whose quota was computed.", st->tries},
	    {"placement_checks", "Placement checks run (a run of the scheduling core each).",
	     st->placements},
	    {"placement_checks_carried",
	     "Placement checks run on the scheduler of the pass before, fed what changed.",
	     st->carried},
	    {"workloads_parked", "Pending workloads not tried: parked, nothing changed since.",
	     st->parked},
	    {"workloads_skipped",
	     "Workloads not visited: nothing their ClusterQueue's admissions read changed.",
	     st->skipped},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		fprintf(f,
			"# HELP podkernel_queue_%s_total %s\n# TYPE podkernel_queue_%s_total "
			"counter\npodkernel_queue_%s_total %llu\n",
			c[i].name, c[i].help, c[i].name, c[i].name, (unsigned long long)c[i].v);
}

/* Called with the metrics lock held. */
void q_metrics_render(struct pk_ctl *ctl, FILE *f)
{
	const char *cq;
	json_t *h;

	if (ctl->m.queue_stats.passes)
		stats_render(&ctl->m.queue_stats, f);
	if (ctl->m.queue_gauges)
		fputs(ctl->m.queue_gauges, f);
	if (!json_object_size(ctl->m.queue_waits))
		return;
	fputs("# HELP kueue_admission_wait_time_seconds The time between a workload's creation "
	      "and its admission, per ClusterQueue.\n"
	      "# TYPE kueue_admission_wait_time_seconds histogram\n",
	      f);
	json_object_foreach(ctl->m.queue_waits, cq, h)
	{
		for (int i = 0; i < WAIT_BUCKETS; i++)
			fprintf(f,
				"kueue_admission_wait_time_seconds_bucket{cluster_queue=\"%s\",le="
				"\"%g\"} "
				"%.0f\n",
				cq, bound(i), json_real_value(json_array_get(h, i)));
		fprintf(
		    f,
		    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"%s\",le=\"+Inf\"} "
		    "%.0f\n"
		    "kueue_admission_wait_time_seconds_sum{cluster_queue=\"%s\"} %g\n"
		    "kueue_admission_wait_time_seconds_count{cluster_queue=\"%s\"} %.0f\n",
		    cq, json_real_value(json_array_get(h, WAIT_BUCKETS)), cq,
		    json_real_value(json_array_get(h, WAIT_BUCKETS + 1)), cq,
		    json_real_value(json_array_get(h, WAIT_BUCKETS)));
	}
}

void q_metrics_free(struct ctl_metrics *m)
{
	free(m->queue_gauges);
	json_decref(m->queue_waits);
}

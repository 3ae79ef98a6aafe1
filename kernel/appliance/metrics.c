/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c — the appliance's Prometheus metrics under the KEP-6012 names.
 *
 * Counters and histograms are updated by the loop thread and rendered by an
 * HTTP thread, so one mutex guards them.  Scheduling attempts and their
 * algorithm durations come from each cycle's result; placement figures and
 * PreEnqueue gating come from the scheduler's statistics callback
 * (ap_metrics_stat()).  Queue membership per root ("active", "backoff",
 * "gated", "unschedulable") is the outcome of its latest attempt.  The
 * workload profile behind fit's stranding score (kernel/sched/strand.c) is
 * copied from the scheduler after a cycle when it noted pods since the last
 * copy, and rendered per class.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/appliance/appliance-internal.h"

static const char *const type_names[_AP_TYPE_MAX] = {"compositepodgroup", "podgroup", "pod"};
static const char *const result_names[_AP_RESULT_MAX] = {"scheduled", "unschedulable", "error"};
static const char *const queue_names[] = {"active", "backoff", "gated", "unschedulable"};

const double ap_duration_bounds[AP_HIST_BUCKETS] = {0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01,
						    0.025,  0.05,   0.1,   0.25,   0.5,	  1};
const double ap_count_bounds[AP_HIST_BUCKETS] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};

int ap_metrics_init(struct ap_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->queued = json_object();
	if (!m->queued)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	return 0;
}

void ap_metrics_fini(struct ap_metrics *m)
{
	if (!m->queued)
		return;
	json_decref(m->queued);
	m->queued = NULL;
	pthread_mutex_destroy(&m->lock);
}

enum ap_type ap_type_of_root(const char *root)
{
	if (!root)
		return AP_TYPE_POD;
	if (strncmp(root, "CompositePodGroup", 17) == 0)
		return AP_TYPE_COMPOSITE;
	if (strncmp(root, "PodGroup", 8) == 0)
		return AP_TYPE_GROUP;
	return AP_TYPE_POD;
}

void ap_hist_observe(struct ap_hist *h, double v, const double *bounds)
{
	for (size_t b = 0; b < AP_HIST_BUCKETS; b++)
		if (v <= bounds[b]) {
			h->buckets[b]++;
			break;
		}
	h->sum += v;
	h->count++;
}

void ap_metrics_cycle(struct ap_metrics *m, const struct pk_sched_result *res, double algo_s,
		      double attempt_s)
{
	enum ap_type t = ap_type_of_root(res->root);
	enum ap_result r = res->outcome == PK_SCHED_SCHEDULED ? AP_RESULT_SCHEDULED
			   : res->outcome == PK_SCHED_INVALID ? AP_RESULT_ERROR
							      : AP_RESULT_UNSCHEDULABLE;

	pthread_mutex_lock(&m->lock);
	m->attempts[t][r]++;
	ap_hist_observe(&m->algorithm[t], algo_s, ap_duration_bounds);
	ap_hist_observe(&m->attempt[t], attempt_s, ap_duration_bounds);
	if (res->outcome == PK_SCHED_UNSCHEDULABLE)
		m->preemption_attempts++;
	if (res->preempted > 0)
		ap_hist_observe(&m->victims, (double)res->preempted, ap_count_bounds);
	pthread_mutex_unlock(&m->lock);
}

void ap_metrics_queue(struct ap_metrics *m, const char *root, const char *queue)
{
	pthread_mutex_lock(&m->lock);
	if (queue)
		json_object_set_new(m->queued, root, json_string(queue));
	else
		json_object_del(m->queued, root);
	pthread_mutex_unlock(&m->lock);
}

/*
 * Placement figures and PreEnqueue gating, as the scheduler reports them
 * (struct pk_sched_opts.stat): no tracing is needed for metrics.
 */
void ap_metrics_stat(void *arg, enum pk_sched_stat stat, double value, const char *root)
{
	struct pk_appliance *app = arg;
	struct ap_metrics *m = &app->m;

	if (stat == PK_SCHED_STAT_ROOT_GATED) {
		if (root)
			ap_metrics_queue(m, root, "gated");
		return;
	}
	pthread_mutex_lock(&m->lock);
	switch (stat) {
	case PK_SCHED_STAT_GENERATED:
		m->placements_generated += (uint64_t)value;
		break;
	case PK_SCHED_STAT_EVALUATED:
		m->placement_evaluations += (uint64_t)value;
		break;
	case PK_SCHED_STAT_SEARCH:
		ap_hist_observe(&m->placement_duration, value, ap_duration_bounds);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&m->lock);
}

static void hist_render(FILE *f, const char *name, const char *labels, const struct ap_hist *h,
			const double *bounds)
{
	uint64_t cum = 0;

	for (size_t b = 0; b < AP_HIST_BUCKETS; b++) {
		cum += h->buckets[b];
		fprintf(f, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, labels,
			*labels ? "," : "", bounds[b], cum);
	}
	fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, *labels ? "," : "",
		h->count);
	fprintf(f, "%s_sum%s%s%s %.9f\n%s_count%s%s%s %" PRIu64 "\n", name, *labels ? "{" : "",
		labels, *labels ? "}" : "", h->sum, name, *labels ? "{" : "", labels,
		*labels ? "}" : "", h->count);
}

static void counter(FILE *f, const char *name, const char *help, const char *type, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name, help, name, type, name, v);
}

static void render_queue(FILE *f, const struct ap_metrics *m)
{
	uint64_t n[_AP_TYPE_MAX][4] = {{0}};
	const char *root;
	json_t *q;

	json_object_foreach(m->queued, root, q)
	{
		const char *name = json_string_value(q);

		for (size_t i = 0; i < 4; i++)
			if (name && strcmp(name, queue_names[i]) == 0)
				n[ap_type_of_root(root)][i]++;
	}
	fprintf(f, "# HELP scheduler_queued_entities Roots waiting in the scheduling queue, by "
		   "type and queue.\n# TYPE scheduler_queued_entities gauge\n");
	for (int t = 0; t < _AP_TYPE_MAX; t++)
		for (size_t i = 0; i < 4; i++)
			fprintf(f,
				"scheduler_queued_entities{type=\"%s\",queue=\"%s\"} %" PRIu64 "\n",
				type_names[t], queue_names[i], n[t][i]);
}

static void render_scheduler(FILE *f, const struct ap_metrics *m)
{
	char labels[64];

	fprintf(f, "# HELP scheduler_podgroup_schedule_attempts_total Scheduling attempts of a "
		   "root, by type and result.\n"
		   "# TYPE scheduler_podgroup_schedule_attempts_total counter\n");
	for (int t = 0; t < _AP_TYPE_MAX; t++)
		for (int r = 0; r < _AP_RESULT_MAX; r++)
			fprintf(
			    f,
			    "scheduler_podgroup_schedule_attempts_total{type=\"%s\",result=\"%s\"} "
			    "%" PRIu64 "\n",
			    type_names[t], result_names[r], m->attempts[t][r]);
	fprintf(f, "# HELP scheduler_podgroup_scheduling_algorithm_duration_seconds Time of the "
		   "placement algorithm for one root.\n"
		   "# TYPE scheduler_podgroup_scheduling_algorithm_duration_seconds histogram\n");
	for (int t = 0; t < _AP_TYPE_MAX; t++) {
		snprintf(labels, sizeof(labels), "type=\"%s\"", type_names[t]);
		hist_render(f, "scheduler_podgroup_scheduling_algorithm_duration_seconds", labels,
			    &m->algorithm[t], ap_duration_bounds);
	}
	fprintf(f, "# HELP scheduler_podgroup_scheduling_attempt_duration_seconds Algorithm plus "
		   "binding and status writes for one root.\n"
		   "# TYPE scheduler_podgroup_scheduling_attempt_duration_seconds histogram\n");
	for (int t = 0; t < _AP_TYPE_MAX; t++) {
		snprintf(labels, sizeof(labels), "type=\"%s\"", type_names[t]);
		hist_render(f, "scheduler_podgroup_scheduling_attempt_duration_seconds", labels,
			    &m->attempt[t], ap_duration_bounds);
	}
	fprintf(f, "# HELP scheduler_queue_incoming_entities_total Changes that requeued an "
		   "entity, by type.\n# TYPE scheduler_queue_incoming_entities_total counter\n");
	for (int t = 0; t < _AP_TYPE_MAX; t++)
		fprintf(f, "scheduler_queue_incoming_entities_total{type=\"%s\"} %" PRIu64 "\n",
			type_names[t], m->incoming[t]);
	render_queue(f, m);
	counter(f, "scheduler_workload_preemption_attempts_total",
		"Unschedulable roots for which preemption was tried.", "counter",
		m->preemption_attempts);
	fprintf(f, "# HELP scheduler_workload_preemption_victims Victim pods per preemption.\n"
		   "# TYPE scheduler_workload_preemption_victims histogram\n");
	hist_render(f, "scheduler_workload_preemption_victims", "", &m->victims, ap_count_bounds);
	counter(f, "scheduler_generated_placements_total",
		"Feasible candidate placements (topology domains) generated.", "counter",
		m->placements_generated);
	counter(f, "scheduler_placement_evaluations_total", "Candidate placements evaluated.",
		"counter", m->placement_evaluations);
	fprintf(f, "# HELP scheduler_placement_evaluation_duration_seconds Time to evaluate the "
		   "candidate placements of one group.\n"
		   "# TYPE scheduler_placement_evaluation_duration_seconds histogram\n");
	hist_render(f, "scheduler_placement_evaluation_duration_seconds", "",
		    &m->placement_duration, ap_duration_bounds);
}

void ap_metrics_profile(struct ap_metrics *m, const struct pk_sched *s)
{
	struct pk_sched_profile_entry v[32];
	uint64_t seen = pk_sched_profile_seen(s);
	size_t n;

	if (seen == m->profile_seen)
		return;
	n = pk_sched_profile(s, v, 32);
	pthread_mutex_lock(&m->lock);
	memcpy(m->profile, v, n * sizeof(v[0]));
	m->nprofile = n;
	m->profile_seen = seen;
	pthread_mutex_unlock(&m->lock);
}

/* A label value with backslash, quote and newline escaped (exposition format). */
static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void profile_series(FILE *f, const char *name, const struct pk_sched_profile_entry *e,
			   double v)
{
	fprintf(f, "%s{resource=\"", name);
	label_value(f, e->resource);
	fprintf(f, "\",devices=\"%g\",models=\"", e->devices);
	label_value(f, e->models);
	fprintf(f, "\"} %.6g\n", v);
}

static void render_profile(FILE *f, const struct ap_metrics *m)
{
	counter(f, "podkernel_workload_profile_pods_seen_total",
		"Pods the scheduler's workload profile has noted.", "counter", m->profile_seen);
	fprintf(f, "# HELP podkernel_workload_profile_share Share of the recent accelerator pods "
		   "(decayed, half-life 1024 pods) per class: resource, devices per pod, accepted "
		   "models (empty: any).\n# TYPE podkernel_workload_profile_share gauge\n");
	for (size_t i = 0; i < m->nprofile; i++)
		profile_series(f, "podkernel_workload_profile_share", &m->profile[i],
			       m->profile[i].share);
	fprintf(f, "# HELP podkernel_workload_profile_cpu_per_device Mean CPU cores per device "
		   "requested by a class's pods.\n"
		   "# TYPE podkernel_workload_profile_cpu_per_device gauge\n");
	for (size_t i = 0; i < m->nprofile; i++)
		profile_series(f, "podkernel_workload_profile_cpu_per_device", &m->profile[i],
			       m->profile[i].cpu_per_device);
	fprintf(f, "# HELP podkernel_workload_profile_memory_per_device_bytes Mean memory per "
		   "device requested by a class's pods.\n"
		   "# TYPE podkernel_workload_profile_memory_per_device_bytes gauge\n");
	for (size_t i = 0; i < m->nprofile; i++)
		profile_series(f, "podkernel_workload_profile_memory_per_device_bytes",
			       &m->profile[i], m->profile[i].memory_per_device);
}

int pk_appliance_metrics(struct pk_appliance *app, FILE *f)
{
	struct ap_metrics *m;

	if (!app || !f)
		return -EINVAL;
	m = &app->m;
	pthread_mutex_lock(&m->lock);
	render_scheduler(f, m);
	counter(f, "podkernel_appliance_bindings_total", "Pods bound.", "counter", m->bindings);
	counter(f, "podkernel_appliance_binding_conflicts_total",
		"Bindings refused by a resourceVersion precondition or a bound pod.", "counter",
		m->binding_conflicts);
	counter(f, "podkernel_appliance_condition_writes_total", "Conditions written.", "counter",
		m->conditions);
	counter(f, "podkernel_appliance_write_errors_total", "Failed status or delete writes.",
		"counter", m->write_errors);
	counter(f, "podkernel_appliance_write_backoffs_total",
		"Writes that failed for another reason than a lost precondition; the object "
		"waits before its next try.",
		"counter", m->write_backoffs);
	counter(f, "podkernel_appliance_write_backoff_objects",
		"Objects waiting after a failed write.", "gauge", m->write_backoff_objects);
	counter(f, "podkernel_appliance_events_total", "Change-stream events consumed.", "counter",
		m->events);
	counter(f, "podkernel_appliance_events_skipped_total",
		"Events that changed nothing the scheduler reads.", "counter", m->events_skipped);
	counter(f, "podkernel_appliance_relists_total", "Full re-lists after a lost stream.",
		"counter", m->relists);
	render_profile(f, m);
	pthread_mutex_unlock(&m->lock);
	ap_hooks_call(app, metrics, f);
	return 0;
}

void pk_appliance_metrics_cb(void *arg, FILE *f)
{
	pk_appliance_metrics(arg, f);
}

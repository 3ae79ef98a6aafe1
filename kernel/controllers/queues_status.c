/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_status.c — what the queue controller's pass writes about the
 * queues: each ClusterQueue's and LocalQueue's status (pending, reserving
 * and admitted counts, usage and what is borrowed per flavor and resource,
 * the condition Active) and Kueue's gauges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/queues-internal.h"
#include "topology/topology.h"

/* Usage per flavor and resource; a ClusterQueue's (cq) says what it borrows beyond its nominal. */
static json_t *usage_list(const struct q_state *s, const json_t *groups, const json_t *usage,
			  const char *cq)
{
	json_t *out = json_array(), *g, *f, *res;
	size_t i, k, j;

	json_array_foreach(groups, i, g) CTL_ARRAY_EACH(json_object_get(g, "flavors"), k, f)
	{
		const char *name = json_string_value(json_object_get(f, "name"));
		json_t *list = json_array();

		CTL_ARRAY_EACH(json_object_get(g, "coveredResources"), j, res)
		{
			char q[64];
			const char *rn = json_string_value(res);

			if (!rn)
				continue;
			int64_t used = q_milli_at(usage, name ? name : "", rn), over;

			topo_quantity_format(used, pk_board_quantity_format(rn), q, sizeof(q));
			json_t *e = json_pack("{s:s,s:s}", "name", rn, "total", q);

			if (cq && e && name) {
				over = used - q_tree_nominal(s->tree, cq, name, rn);
				topo_quantity_format(over > 0 ? over : 0,
						     pk_board_quantity_format(rn), q, sizeof(q));
				json_object_set_new(e, "borrowed", json_string(q));
			}
			json_array_append_new(list, e);
		}
		json_array_append_new(
		    out, json_pack("{s:s,s:o}", "name", name ? name : "", "resources", list));
	}
	return out;
}

static bool str_is(const json_t *v, const char *s)
{
	return json_string_value(v) && strcmp(json_string_value(v), s) == 0;
}

/* The condition Active, kept as it was (its time) when its status did not change. */
static json_t *active_condition(const json_t *obj, bool active, const char *reason,
				const char *message, const char *now)
{
	const json_t *old = pk_condition_get(obj, "Active");
	const char *st = active ? "True" : "False";

	if (old && str_is(json_object_get(old, "status"), st) &&
	    str_is(json_object_get(old, "reason"), reason))
		return json_pack("[O]", old);
	return json_pack("[{s:s,s:s,s:s,s:s,s:s}]", "type", "Active", "status", st, "reason",
			 reason, "message", message, "lastTransitionTime", now);
}

/*
 * obj's status, when it differs from what it holds, into the writer's open
 * batch (the pass's pending annotations' and statuses' one transaction).
 */
static void write_status(struct pk_ctl *ctl, enum pk_kind kind, const json_t *obj, json_t *st)
{
	struct pk_write_ref ref = ctl_ref_of(pk_type_of(kind), obj);
	int r;

	if (!st || json_equal(json_object_get(obj, "status"), st)) {
		json_decref(st);
		return;
	}
	r = pk_writer_status_held(ctl->writer, &ref, st); /* built here, changed no more */
	if (r < 0)
		ctl_log(ctl, 1, "%s %s: status: %s", pk_kind_to_string(kind), pk_name(obj),
			pk_write_strerror(r));
	json_decref(st);
}

static json_t *counts_status(const struct q_state *s, const char *key)
{
	int64_t admitted = q_milli_at(s->counts, key, "admitted");

	return json_pack("{s:I,s:I,s:I}", "pendingWorkloads",
			 (json_int_t)q_milli_at(s->counts, key, "pending"), "reservingWorkloads",
			 (json_int_t)admitted, "admittedWorkloads", (json_int_t)admitted);
}

void q_cq_status(struct pk_ctl *ctl, const struct q_state *s, const char *name, const json_t *cq,
		 const char *now)
{
	const json_t *groups = ctl_at(cq, "spec", "resourceGroups");
	json_t *usage = json_object_get(s->usage, name), *st = counts_status(s, name);
	char missing[256], msg[400], cycle[300];
	bool active = q_cq_active(s, cq, missing, sizeof(missing));
	bool in_cycle = active && q_tree_in_cycle(s->tree, name, cycle, sizeof(cycle));
	const char *reason = active ? "Ready" : "FlavorNotFound";

	snprintf(msg, sizeof(msg),
		 active ? "Can admit new workloads"
			: "Can't admit new workloads: references missing ResourceFlavor(s): %s",
		 missing);
	if (in_cycle) {
		active = false;
		reason = "CohortCycle";
		snprintf(msg, sizeof(msg), "Can't admit new workloads: %s", cycle);
	} else if (active && q_stopped(cq, false)) {
		active = false;
		reason = "Stopped";
		snprintf(msg, sizeof(msg), "Can't admit new workloads: ClusterQueue is stopped");
	}
	if (st) {
		json_object_set_new(st, "flavorsReservation", usage_list(s, groups, usage, name));
		json_object_set_new(st, "flavorsUsage", usage_list(s, groups, usage, name));
		json_object_set_new(st, "conditions",
				    active_condition(cq, active, reason, msg, now));
	}
	write_status(ctl, PK_KIND_CLUSTER_QUEUE, cq, st);
}

void q_lq_status(struct pk_ctl *ctl, const struct q_state *s, const char *key, const json_t *lq,
		 const char *now)
{
	const char *cqname = ctl_at_string(lq, "spec", "clusterQueue");
	const json_t *cq = cqname ? json_object_get(s->cqs, cqname) : NULL;
	json_t *st = counts_status(s, key);
	bool stopped = cq && q_stopped(lq, false);

	if (st) {
		json_object_set_new(st, "flavorsReservation",
				    usage_list(s, ctl_at(cq, "spec", "resourceGroups"),
					       json_object_get(s->lqusage, key), NULL));
		json_object_set_new(st, "flavorsUsage",
				    usage_list(s, ctl_at(cq, "spec", "resourceGroups"),
					       json_object_get(s->lqusage, key), NULL));
		json_object_set_new(
		    st, "conditions",
		    active_condition(lq, cq && !stopped,
				     stopped ? "Stopped"
				     : cq    ? "Ready"
					     : "ClusterQueueDoesNotExist",
				     stopped ? "LocalQueue is stopped"
				     : cq    ? "Can submit new workloads to localQueue"
					     : "Can't submit new workloads to clusterQueue",
				     now));
	}
	write_status(ctl, PK_KIND_LOCAL_QUEUE, lq, st);
}

/* cq's lines of Kueue's resource gauges (usage and nominal quota per flavor and resource). */
static void resource_lines(FILE *f, const struct q_state *s, const char *cq, const json_t *o)
{
	const char *cohort = ctl_at_string(o, "spec", "cohortName");
	json_t *g, *fl, *r;
	size_t i, k, j;

	CTL_ARRAY_EACH(ctl_at(o, "spec", "resourceGroups"), i, g)
	CTL_ARRAY_EACH(json_object_get(g, "flavors"), k, fl)
	CTL_ARRAY_EACH(json_object_get(fl, "resources"), j, r)
	{
		const char *fn = pk_get_string(fl, "name"), *rn = pk_get_string(r, "name");
		char labels[600];

		if (!fn || !rn)
			continue;
		snprintf(labels, sizeof(labels),
			 "{cohort=\"%s\",cluster_queue=\"%s\",flavor=\"%s\",resource=\"%s\"}",
			 cohort ? cohort : "", cq, fn, rn);
		fprintf(f, "kueue_cluster_queue_resource_usage%s %g\n", labels,
			(double)q_milli_at(json_object_get(s->usage, cq), fn, rn) / 1000);
		fprintf(f, "kueue_cluster_queue_nominal_quota%s %g\n", labels,
			(double)q_tree_nominal(s->tree, cq, fn, rn) / 1000);
	}
}

/* The three pieces of cq's gauges (o: the ClusterQueue): its pending, admitted, resource lines. */
static json_t *cq_lines_new(const struct q_state *s, const char *cq, const json_t *o,
			    json_int_t pending, json_int_t admitted)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	long at[2] = {0, 0};
	json_t *lines = NULL;

	if (!f)
		return NULL;
	fprintf(f, "kueue_pending_workloads{cluster_queue=\"%s\",status=\"active\"} %lld\n", cq,
		(long long)pending);
	at[0] = ftell(f);
	fprintf(f, "kueue_admitted_active_workloads{cluster_queue=\"%s\"} %lld\n", cq,
		(long long)admitted);
	at[1] = ftell(f);
	resource_lines(f, s, cq, o);
	if (fclose(f) == 0 && at[0] >= 0 && at[1] >= at[0] && (size_t)at[1] <= len)
		lines = json_pack("[s#s#s#]", text, (int)at[0], text + at[0], (int)(at[1] - at[0]),
				  text + at[1], (int)(len - (size_t)at[1]));
	free(text);
	return lines;
}

/*
 * cq's pieces of the gauges, into memo (the next pass's).  They read its
 * counts, its usage and the ClusterQueue (its quota): the last pass's
 * pieces (last) are taken again when all are as they were, the object the
 * same one (the memo holds it: its address is no other's), as a pass that
 * did not visit the ClusterQueue leaves them.  NULL: -ENOMEM.
 */
static json_t *cq_lines(const struct q_state *s, json_t *last, json_t *memo, const char *cq,
			json_t *o)
{
	json_int_t pending = q_milli_at(s->counts, cq, "pending");
	json_int_t admitted = q_milli_at(s->counts, cq, "admitted");
	json_t *usage = json_object_get(s->usage, cq), *m = json_object_get(last, cq), *lines;

	if (m && json_object_get(m, "queue") == o &&
	    json_integer_value(json_object_get(m, "pending")) == pending &&
	    json_integer_value(json_object_get(m, "admitted")) == admitted &&
	    json_equal(json_object_get(m, "usage"), usage ? usage : json_null()))
		return json_object_set(memo, cq, m) == 0 ? json_object_get(m, "lines") : NULL;
	if (!(lines = cq_lines_new(s, cq, o, pending, admitted)))
		return NULL;
	m = json_pack("{sOsIsIsosO}", "queue", o, "pending", pending, "admitted", admitted, "usage",
		      usage ? json_deep_copy(usage) : json_null(), "lines", lines);
	json_decref(lines);
	if (!m || json_object_set_new(memo, cq, m) < 0)
		return NULL;
	return json_object_get(m, "lines");
}

/* Kueue's gauges of this pass (queues_metrics.c prints them). */
void q_gauges(struct pk_ctl *ctl, const struct q_state *s)
{
	static const char *const head[3] = {
	    "# HELP kueue_pending_workloads Pending workloads per ClusterQueue.\n"
	    "# TYPE kueue_pending_workloads gauge\n",
	    "# HELP kueue_admitted_active_workloads Admitted workloads that are active.\n"
	    "# TYPE kueue_admitted_active_workloads gauge\n",
	    "# HELP kueue_cluster_queue_resource_usage Usage per flavor and resource.\n"
	    "# TYPE kueue_cluster_queue_resource_usage gauge\n"
	    "# HELP kueue_cluster_queue_nominal_quota Nominal quota per flavor and resource.\n"
	    "# TYPE kueue_cluster_queue_nominal_quota gauge\n"};
	json_t **kept = q_cache_gauges(s), *memo = json_object(), *o, *lines;
	char *text = NULL;
	size_t len = 0;
	FILE *f = memo ? open_memstream(&text, &len) : NULL;
	const char *cq;
	bool ok = f != NULL;

	json_object_foreach(ok ? s->cqs : NULL, cq, o) ok &=
	    cq_lines(s, kept ? *kept : NULL, memo, cq, o) != NULL;
	for (int piece = 0; ok && piece < 3; piece++) {
		fputs(head[piece], f);
		json_object_foreach(s->cqs, cq, o)
		{
			lines = json_object_get(json_object_get(memo, cq), "lines");
			fputs(json_string_value(json_array_get(lines, piece)) ?: "", f);
		}
	}
	if (f && fclose(f) == 0 && ok)
		q_metrics_set_gauges(ctl, text);
	else
		free(text);
	if (kept && ok) {
		json_decref(*kept);
		*kept = json_incref(memo);
	}
	json_decref(memo);
}

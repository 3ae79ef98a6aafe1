/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.c — Job and JobSet status as the upstream controllers keep it.
 *
 * Both are pure functions over object trees, so that the appliance's
 * controllers and the simulator (kernel/sim) count the same way.  A Job's
 * status is computed from the pods it controls: active (neither Succeeded nor
 * Failed nor being deleted), ready (Ready condition True), succeeded (pods in
 * phase Succeeded, which stay), failed (status.failed so far plus the Failed
 * pods present, which the caller deletes in the same write so that each is
 * counted once and its index is recreated).  The Job fails with
 * BackoffLimitExceeded when failed exceeds spec.backoffLimit (default 6); it
 * completes when succeeded reaches spec.completions, or, without
 * completions, when a pod succeeded and none is active.  A finished Job's
 * active pods are deleted.
 *
 * A JobSet's status is computed from its Jobs of the current restart attempt
 * (label jobset.sigs.k8s.io/restart-attempt = status.restarts):
 * replicatedJobsStatus counts per replicated job, successPolicy (operator All
 * or Any over targetReplicatedJobs, default all) gives Completed, and a
 * failed Job either restarts the JobSet (status.restarts below
 * failurePolicy.maxRestarts: every Job and group is deleted and recreated,
 * so the gangs are gated and placed whole again) or fails it
 * (ReachedMaxRestarts).  A finished JobSet says so in status.terminalState
 * too; its conditions are metav1.Condition (a Job's JobCondition has
 * lastProbeTime besides).
 *
 * Both say whether they are suspended (spec.suspend) in the condition
 * Suspended, True while suspended and False once resumed, with upstream's
 * reasons (JobSuspended/JobResumed, SuspendedJobs/ResumeJobs); a suspended
 * Job has no startTime and a resumed one starts anew.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder-internal.h"

#define JOB_DEFAULT_BACKOFF_LIMIT 6

enum wb_pod_state wb_pod_state(const json_t *pod)
{
	const char *phase = pk_get_string(pod, "status.phase");

	if (phase && strcmp(phase, "Succeeded") == 0)
		return WB_POD_SUCCEEDED;
	if (phase && strcmp(phase, "Failed") == 0)
		return WB_POD_FAILED;
	if (pk_get(pod, "metadata.deletionTimestamp"))
		return WB_POD_DELETING;
	return WB_POD_ACTIVE;
}

bool wb_condition_true(const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);
	const char *s = c ? json_string_value(json_object_get(c, "status")) : NULL;

	return s && strcmp(s, "True") == 0;
}

/* A True condition; a Job's (JobCondition) has lastProbeTime, a JobSet's
 * (metav1.Condition) has not. */
static int add_condition(json_t *status, const char *type, const char *reason, const char *message,
			 const char *now, bool probe)
{
	json_t *conds = json_object_get(status, "conditions"), *c;

	if (!json_is_array(conds)) {
		conds = json_array();
		if (!conds || json_object_set_new(status, "conditions", conds) < 0)
			return -ENOMEM;
	}
	c = json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", type, "status", "True", "reason", reason,
		      "message", message, "lastTransitionTime", now);
	if (c && probe && json_object_set_new(c, "lastProbeTime", json_string(now)) < 0) {
		json_decref(c);
		c = NULL;
	}
	return json_array_append_new(conds, c) < 0 ? -ENOMEM : 0;
}

/*
 * The condition of type set to cstatus ("True" or "False"), replacing one of
 * that type whose status differs; one already at cstatus stays as it is (its
 * lastTransitionTime with it).
 */
static int set_condition(json_t *status, const char *type, const char *cstatus, const char *reason,
			 const char *message, const char *now, bool probe)
{
	json_t *conds = json_object_get(status, "conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *s = json_string_value(json_object_get(c, "status"));

		if (!t || strcmp(t, type) != 0)
			continue;
		if (s && strcmp(s, cstatus) == 0)
			return 0;
		json_array_remove(conds, i);
		break;
	}
	if (add_condition(status, type, reason, message, now, probe) < 0)
		return -ENOMEM;
	c = json_array_get(json_object_get(status, "conditions"),
			   json_array_size(json_object_get(status, "conditions")) - 1);
	return json_object_set_new(c, "status", json_string(cstatus)) < 0 ? -ENOMEM : 0;
}

/* Whether the object holds a condition of type, at either status. */
static bool condition_present(const json_t *obj, const char *type)
{
	return pk_condition_get(obj, type) != NULL;
}

/*
 * Suspended, as upstream's controllers write it: True while spec.suspend is
 * true, False (resumed) once it turns false after having been True; never
 * written for an object that was not suspended.
 */
static int suspended_condition(const json_t *obj, json_t *status, const char *now, bool job)
{
	bool suspend = wb_suspended(obj);

	if (suspend)
		return set_condition(status, "Suspended", "True",
				     job ? "JobSuspended" : "SuspendedJobs",
				     job ? "Job suspended" : "jobset is suspended", now, job);
	if (!condition_present(obj, "Suspended"))
		return 0;
	return set_condition(status, "Suspended", "False", job ? "JobResumed" : "ResumeJobs",
			     job ? "Job resumed" : "jobset is resumed", now, job);
}

static bool pod_ready(const json_t *pod)
{
	return wb_condition_true(pod, "Ready");
}

static int64_t status_int(const json_t *obj, const char *path)
{
	json_t *v = pk_get(obj, path);

	return json_is_integer(v) ? json_integer_value(v) : 0;
}

void wb_job_update_clear(struct wb_job_update *u)
{
	if (!u)
		return;
	json_decref(u->status);
	json_decref(u->delete_pods);
	memset(u, 0, sizeof(*u));
}

const char *wb_queue_name(const json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata"); /* asked of every workload */
	const char *q =
	    json_string_value(json_object_get(json_object_get(md, "labels"), WB_LABEL_QUEUE_NAME));
	const json_t *refs = json_object_get(md, "ownerReferences"), *r;
	size_t i;

	json_array_foreach(refs, i, r)
	{
		const char *kind = json_string_value(json_object_get(r, "kind"));

		if (json_is_true(json_object_get(r, "controller")) && kind &&
		    strcmp(kind, "JobSet") == 0)
			return NULL;
	}
	return q && *q ? q : NULL;
}

bool wb_suspended(const json_t *obj)
{
	return json_is_true(pk_get(obj, "spec.suspend")) ||
	       (wb_queue_name(obj) &&
		!json_string_value(json_object_get(pk_get(obj, "metadata.annotations"),
						   WB_ANNOTATION_QUEUE_ADMISSION)));
}

bool wb_job_finished(const json_t *job)
{
	return wb_condition_true(job, "Complete") || wb_condition_true(job, "Failed");
}

struct job_counts {
	int64_t active, ready, succeeded, failed_now;
};

static int count_pods(const json_t *pods, json_t *del, struct job_counts *c)
{
	size_t i;
	json_t *p;

	memset(c, 0, sizeof(*c));
	json_array_foreach(pods, i, p)
	{
		switch (wb_pod_state(p)) {
		case WB_POD_ACTIVE:
			c->active++;
			c->ready += pod_ready(p);
			break;
		case WB_POD_SUCCEEDED:
			c->succeeded++;
			break;
		case WB_POD_FAILED:
			c->failed_now++;
			if (json_array_append_new(del, json_string(pk_name(p))) < 0)
				return -ENOMEM;
			break;
		case WB_POD_DELETING:
			break;
		}
	}
	return 0;
}

/* Names of the active pods (deleted when the Job finished). */
static int add_active(const json_t *pods, json_t *del)
{
	size_t i;
	json_t *p;

	json_array_foreach(pods, i, p) if (wb_pod_state(p) == WB_POD_ACTIVE &&
					   json_array_append_new(del, json_string(pk_name(p))) <
					       0) return -ENOMEM;
	return 0;
}

/* The Job's verdict: 1 complete, -1 failed, 0 running. */
static int job_verdict(const json_t *job, const struct job_counts *c, int64_t failed)
{
	const json_t *spec = json_object_get(job, "spec");
	json_t *bl = json_object_get(spec, "backoffLimit"),
	       *comp = json_object_get(spec, "completions");
	int64_t limit = json_is_integer(bl) ? json_integer_value(bl) : JOB_DEFAULT_BACKOFF_LIMIT;

	if (failed > limit)
		return -1;
	if (json_is_integer(comp))
		return c->succeeded >= json_integer_value(comp) ? 1 : 0;
	return c->succeeded >= 1 && c->active == 0 ? 1 : 0;
}

/*
 * A running Job's suspension: the Suspended condition, and startTime, which
 * a suspended Job has not set and a resumed one sets anew (upstream's Job
 * controller counts activeDeadlineSeconds from the resumption).
 */
static int job_suspension(const json_t *job, json_t *st, const char *now)
{
	bool suspend = wb_suspended(job);
	bool resumed = !suspend && wb_condition_true(job, "Suspended");

	if (suspended_condition(job, st, now, true) < 0)
		return -ENOMEM;
	if (suspend)
		return 0;
	if (resumed || !json_object_get(st, "startTime"))
		return json_object_set_new(st, "startTime", json_string(now)) < 0 ? -ENOMEM : 0;
	return 0;
}

static int job_new_status(const json_t *job, const struct job_counts *c, int64_t failed,
			  int verdict, const char *now, json_t **ret)
{
	const json_t *old = json_object_get(job, "status");
	json_t *st = json_is_object(old) ? json_deep_copy(old) : json_object();
	int r = 0;

	if (!st)
		return -ENOMEM;
	r |= json_object_set_new(st, "active", json_integer(verdict ? 0 : c->active));
	r |= json_object_set_new(st, "ready", json_integer(verdict ? 0 : c->ready));
	r |= json_object_set_new(st, "succeeded", json_integer(c->succeeded));
	r |= json_object_set_new(st, "failed", json_integer(failed));
	if (r)
		goto fail;
	r = verdict ? 0 : job_suspension(job, st, now);
	if (r)
		goto fail;
	if (verdict > 0) {
		r = add_condition(st, "Complete", "CompletionsReached",
				  "Reached expected number of succeeded pods", now, true);
		if (r == 0 && json_object_set_new(st, "completionTime", json_string(now)) < 0)
			r = -ENOMEM;
	} else if (verdict < 0) {
		r = add_condition(st, "Failed", "BackoffLimitExceeded",
				  "Job has reached the specified backoff limit", now, true);
	}
	if (r)
		goto fail;
	*ret = st;
	return 0;
fail:
	json_decref(st);
	return -ENOMEM;
}

/* Whether two condition lists hold the same types at the same statuses. */
static bool same_conditions(const json_t *a, const json_t *b)
{
	size_t i;
	json_t *c;

	if (json_array_size(a) != json_array_size(b))
		return false;
	json_array_foreach(a, i, c)
	{
		const json_t *d = json_array_get(b, i);

		if (!json_equal(json_object_get(c, "type"), json_object_get(d, "type")) ||
		    !json_equal(json_object_get(c, "status"), json_object_get(d, "status")))
			return false;
	}
	return true;
}

/* Whether the counters and conditions differ (timestamps aside). */
static bool job_status_changed(const json_t *old, const json_t *st)
{
	static const char *const keys[] = {"active", "ready", "succeeded", "failed"};

	if (!json_is_object(old))
		return true;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *a = json_object_get(old, keys[i]), *b = json_object_get(st, keys[i]);

		if (!a || !json_equal(a, b))
			return true;
	}
	return !same_conditions(json_object_get(old, "conditions"),
				json_object_get(st, "conditions"));
}

int wb_job_status(const json_t *job, const json_t *pods, const char *now, struct wb_job_update *ret)
{
	struct wb_job_update u = {0};
	struct job_counts c;
	int64_t failed;
	int verdict, r;

	if (!job || !now || !ret)
		return -EINVAL;
	u.delete_pods = json_array();
	if (!u.delete_pods)
		return -ENOMEM;
	if (wb_job_finished(job)) {
		/* what is left running of a finished Job goes */
		u.finished = true;
		r = add_active(pods, u.delete_pods);
		goto out;
	}
	r = count_pods(pods, u.delete_pods, &c);
	if (r < 0)
		goto out;
	failed = status_int(job, "status.failed") + c.failed_now;
	verdict = job_verdict(job, &c, failed);
	if (verdict != 0) {
		u.finished = true;
		r = add_active(pods, u.delete_pods);
	}
	if (r == 0)
		r = job_new_status(job, &c, failed, verdict, now, &u.status);
	if (r == 0 && !job_status_changed(json_object_get(job, "status"), u.status)) {
		json_decref(u.status);
		u.status = NULL;
	}
out:
	if (r < 0) {
		wb_job_update_clear(&u);
		return r;
	}
	*ret = u;
	return 0;
}

/* ---- JobSet ------------------------------------------------------------------------ */

int wb_jobset_check_policies(const json_t *jobset, struct pk_errors *errs)
{
	const json_t *spec = json_object_get(jobset, "spec");
	const json_t *sp = json_object_get(spec, "successPolicy");
	const json_t *fp = json_object_get(spec, "failurePolicy");
	static const char *const sp_fields[] = {"operator", "targetReplicatedJobs", NULL};
	static const char *const fp_fields[] = {"maxRestarts", "restartStrategy", "rules", NULL};
	int r = 0;

	if (sp && !json_is_null(sp)) {
		const char *op = json_string_value(json_object_get(sp, "operator"));
		const json_t *t = json_object_get(sp, "targetReplicatedJobs");

		if (!json_is_object(sp) ||
		    wb_check_known_fields(sp, "spec.successPolicy", sp_fields, errs) < 0)
			r = -EINVAL;
		if (json_object_get(sp, "operator") &&
		    (!op || (strcmp(op, "All") != 0 && strcmp(op, "Any") != 0))) {
			pk_errors_add(errs, "spec.successPolicy.operator: Unsupported value: "
					    "supported values: \"All\", \"Any\"");
			r = -EINVAL;
		}
		if (t && !json_is_array(t)) {
			pk_errors_add(errs, "spec.successPolicy.targetReplicatedJobs: Invalid "
					    "value: must be a list of replicated job names");
			r = -EINVAL;
		}
	}
	if (fp && !json_is_null(fp)) {
		json_t *m = json_object_get(fp, "maxRestarts");

		if (!json_is_object(fp) ||
		    wb_check_known_fields(fp, "spec.failurePolicy", fp_fields, errs) < 0)
			r = -EINVAL;
		if (m && (!json_is_integer(m) || json_integer_value(m) < 0 ||
			  json_integer_value(m) > INT32_MAX)) {
			pk_errors_add(errs, "spec.failurePolicy.maxRestarts: Invalid value: must "
					    "be a non-negative integer");
			r = -EINVAL;
		}
	}
	return r;
}

void wb_jobset_update_clear(struct wb_jobset_update *u)
{
	if (!u)
		return;
	json_decref(u->status);
	memset(u, 0, sizeof(*u));
}

bool wb_jobset_finished(const json_t *jobset)
{
	return wb_condition_true(jobset, "Completed") || wb_condition_true(jobset, "Failed");
}

int64_t wb_jobset_restarts(const json_t *jobset)
{
	return status_int(jobset, "status.restarts");
}

/* Whether Job belongs to the JobSet's current restart attempt. */
static bool current_attempt(const json_t *job, int64_t restarts)
{
	const char *a = json_string_value(
	    json_object_get(pk_get(job, "metadata.labels"), WB_LABEL_RESTART_ATTEMPT));

	return (a ? strtoll(a, NULL, 10) : 0) == restarts;
}

static bool targeted(const json_t *targets, const char *rjob)
{
	size_t i;
	json_t *t;

	if (json_array_size(targets) == 0)
		return true;
	json_array_foreach(targets, i, t) if (json_string_value(t) &&
					      strcmp(json_string_value(t), rjob) == 0) return true;
	return false;
}

/* replicatedJobsStatus (one entry per replicated job, in spec order). */
static json_t *rjob_status(const json_t *jobset, const json_t *jobs, int64_t restarts)
{
	json_t *out = json_array(), *rj;
	const json_t *rjs = pk_get(jobset, "spec.replicatedJobs");
	size_t i, k;

	json_array_foreach(rjs, i, rj)
	{
		const char *name = json_string_value(json_object_get(rj, "name"));
		int64_t n[5] = {0}; /* active, ready, succeeded, failed, suspended */
		json_t *j;

		json_array_foreach(jobs, k, j)
		{
			const char *rn = json_string_value(json_object_get(
			    pk_get(j, "metadata.labels"), "jobset.sigs.k8s.io/replicatedjob-name"));

			if (!name || !rn || strcmp(rn, name) != 0 || !current_attempt(j, restarts))
				continue;
			if (wb_condition_true(j, "Complete"))
				n[2]++;
			else if (wb_suspended(j) && !wb_condition_true(j, "Failed"))
				n[4]++;
			else if (wb_condition_true(j, "Failed"))
				n[3]++;
			else {
				n[0]++;
				n[1] += status_int(j, "status.ready") > 0;
			}
		}
		json_array_append_new(out, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "name",
						     name ? name : "", "active", (json_int_t)n[0],
						     "ready", (json_int_t)n[1], "succeeded",
						     (json_int_t)n[2], "failed", (json_int_t)n[3],
						     "suspended", (json_int_t)n[4]));
	}
	return out;
}

/* Completed under successPolicy: every (All) or one (Any) targeted Job complete. */
static bool jobset_succeeded(const json_t *jobset, const json_t *rstat)
{
	const json_t *sp = pk_get(jobset, "spec.successPolicy");
	const char *op = json_string_value(json_object_get(sp, "operator"));
	const json_t *targets = json_object_get(sp, "targetReplicatedJobs");
	bool any = op && strcmp(op, "Any") == 0, all = true, some = false;
	const json_t *rjs = pk_get(jobset, "spec.replicatedJobs");
	size_t i;
	json_t *e;

	json_array_foreach(rstat, i, e)
	{
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *rj = json_array_get(rjs, i);
		json_t *rep = json_object_get(rj, "replicas");
		int64_t replicas = json_is_integer(rep) ? json_integer_value(rep) : 1;
		int64_t done = json_integer_value(json_object_get(e, "succeeded"));

		if (!targeted(targets, name))
			continue;
		some |= done > 0;
		all &= done >= replicas;
	}
	return any ? some : all;
}

static bool any_failed(const json_t *rstat)
{
	size_t i;
	json_t *e;

	json_array_foreach(rstat, i,
			   e) if (json_integer_value(json_object_get(e, "failed")) > 0) return true;
	return false;
}

int wb_jobset_status(const json_t *jobset, const json_t *jobs, const char *now,
		     struct wb_jobset_update *ret)
{
	struct wb_jobset_update u = {0};
	const json_t *old = json_object_get(jobset, "status");
	int64_t restarts = wb_jobset_restarts(jobset);
	json_t *mr = pk_get(jobset, "spec.failurePolicy.maxRestarts");
	int64_t max_restarts = json_is_integer(mr) ? json_integer_value(mr) : 0;
	json_t *st, *rstat;
	int r = 0;

	if (!jobset || !now || !ret)
		return -EINVAL;
	if (wb_jobset_finished(jobset)) {
		u.finished = true;
		u.stop = wb_condition_true(jobset, "Failed");
		*ret = u;
		return 0;
	}
	st = json_is_object(old) ? json_deep_copy(old) : json_object();
	rstat = rjob_status(jobset, jobs, restarts);
	if (!st || !rstat || json_object_set_new(st, "replicatedJobsStatus", rstat) < 0) {
		json_decref(st);
		return -ENOMEM;
	}
	json_object_set_new(st, "restarts", json_integer(restarts));
	if (any_failed(rstat) && restarts < max_restarts) {
		u.restart = true;
		json_object_set_new(st, "restarts", json_integer(restarts + 1));
		json_object_set_new(
		    st, "restartsCountTowardsMax",
		    json_integer(status_int(jobset, "status.restartsCountTowardsMax") + 1));
	} else if (any_failed(rstat)) {
		u.finished = u.stop = true;
		r = add_condition(st, "Failed", "ReachedMaxRestarts",
				  "jobset failed due to reaching max number of restarts", now,
				  false);
		if (r == 0)
			r = json_object_set_new(st, "terminalState", json_string("Failed"));
	} else if (jobset_succeeded(jobset, rstat)) {
		u.finished = true;
		r = add_condition(st, "Completed", "AllJobsCompleted",
				  "jobset completed successfully", now, false);
		if (r == 0)
			r = json_object_set_new(st, "terminalState", json_string("Completed"));
	} else {
		r = suspended_condition(jobset, st, now, false);
	}
	if (r < 0) {
		json_decref(st);
		return r;
	}
	if (json_is_object(old) && json_equal(old, st))
		json_decref(st);
	else
		u.status = st;
	*ret = u;
	return 0;
}

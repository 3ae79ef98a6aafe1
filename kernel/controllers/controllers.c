/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controllers.c — Jobs and JobSets stored through the API become the
 * Workload, groups and pods they compile into, and owned objects whose owner
 * is gone are deleted.
 *
 * A reconcile runs the builder's controller (kernel/builder/builder.h) on the
 * stored object and creates, in the builder's order (Workload, parent groups
 * before children, pods last), every object that does not exist yet; objects
 * that exist are left alone (the builder's output is a pure function of the
 * owner, and scheduling state lives in them).  A pod whose claims come from
 * templates gets them made (claims.c).  Objects the owner controls but
 * the builder no longer emits (a smaller parallelism) are deleted.  Objects
 * whose owners are gone are the garbage collector's (gc.c).
 *
 * Before creating, a reconcile keeps the owner's status as the upstream
 * controllers do (kernel/builder/status.c): a Job counts the pods it
 * controls, and in one store transaction writes its status and deletes the
 * Failed pods it just counted (whose indexes are then created again) or,
 * once Complete or Failed, its active pods; a finished Job creates nothing
 * more.  A JobSet counts its Jobs of the current restart attempt; a restart
 * first writes status.restarts, then deletes the pods of its Jobs, the Jobs
 * and its groups (children before parents), so the creation that follows
 * gates the gangs and places them whole again; a Failed JobSet deletes what
 * still runs.  A LeaderWorkerSet counts its groups and recreates those a pod
 * restart or a rolling update asks for (kernel/builder/lws_status.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/controllers/controllers-internal.h"
#include "kernel/lib/macro.h"
#include "kernel/builder/builder.h"

/* Kinds a controller may own. */
static const enum pk_kind owned_kinds[] = {PK_KIND_WORKLOAD, PK_KIND_COMPOSITE_POD_GROUP,
					   PK_KIND_POD_GROUP, PK_KIND_JOB, PK_KIND_POD};

struct lookup_ctx {
	struct pk_ctl *ctl;
	json_t *held; /* keeps looked-up objects alive for the builder */
};

static json_t *lookup(void *userdata, enum pk_kind kind, const char *ns, const char *name)
{
	struct lookup_ctx *l = userdata;
	json_t *obj = NULL;

	if (pk_store_get(l->ctl->store, pk_type_of(kind), ns, name, &obj) < 0)
		return NULL;
	json_array_append_new(l->held, obj);
	return obj;
}

static const json_t *controller_ref(const json_t *obj)
{
	json_t *refs = pk_get(obj, "metadata.ownerReferences"), *r;
	size_t i;

	json_array_foreach(refs, i, r) if (json_is_true(json_object_get(r, "controller"))) return r;
	return NULL;
}

static void log_errors(struct pk_ctl *ctl, const char *what, const struct pk_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		ctl_log(ctl, 1, "%s: %s", what, errs->msg[i]);
}

/* Create what objects names that does not exist yet, in one batch. */
static int create_missing(struct pk_ctl *ctl, json_t *objects, const char *what)
{
	const struct pk_write_result *res = NULL;
	size_t i, n = 0;
	json_t *obj;
	int first = 0, r = pk_writer_batch_begin(ctl->writer);

	json_array_foreach(objects, i, obj)
	{
		enum pk_kind kind = pk_kind_of(obj);
		int a = r == 0 ? pk_writer_create(ctl->writer, pk_type_of(kind), obj) : 0;

		if (a == -ENOMEM) {
			r = a;
		} else if (a < 0) { /* not a whole object: the others still go */
			ctl_log(ctl, 1, "%s: creating %s %s: %s", what,
				pk_kind_to_string(kind) ?: "?", pk_name(obj) ? pk_name(obj) : "?",
				strerror(-a));
			if (!first)
				first = a;
		}
	}
	if (r == 0)
		r = ctl_commit(ctl, &res, &n);
	for (i = 0; r == 0 && i < n; i++) {
		const char *kind = res[i].kind->kind;

		if (res[i].error == 0) {
			CTL_COUNT(ctl, objects_created);
			ctl_log(ctl, 2, "%s: created %s %s/%s", what, kind, res[i].ns,
				pk_name(res[i].object) ?: res[i].name);
		} else if (res[i].error != -EEXIST) {
			ctl_log(ctl, 1, "%s: creating %s %s: %s", what, kind, res[i].name,
				res[i].message ? res[i].message : pk_write_strerror(res[i].error));
			if (!first)
				first = res[i].error;
		}
	}
	return r < 0 ? r : first;
}

static bool emitted(const json_t *objects, const char *kind, const char *name)
{
	size_t i;
	json_t *obj;

	json_array_foreach(objects, i, obj)
	{
		const char *k = json_string_value(json_object_get(obj, "kind"));

		if (k && strcmp(k, kind) == 0 && pk_name(obj) && strcmp(pk_name(obj), name) == 0)
			return true;
	}
	return false;
}

/* A pod that succeeded stays: its Job counts it (upstream keeps it too). */
static bool succeeded(const json_t *obj)
{
	return pk_kind_of(obj) == PK_KIND_POD && wb_pod_state(obj) == WB_POD_SUCCEEDED;
}

/*
 * A JobSet's Jobs follow its spec.suspend: a Job it made whose suspend
 * differs from what the JobSet now emits is updated (create_missing() leaves
 * existing objects alone); the Job's own controller then deletes or creates
 * its pods.
 */
static void sync_suspend(struct pk_ctl *ctl, const char *ns, const char *uid, const json_t *objects,
			 const char *what)
{
	size_t i;
	json_t *want;

	json_array_foreach(objects, i, want)
	{
		bool suspend = json_is_true(pk_get(want, "spec.suspend"));
		const json_t *ref;
		const char *ruid;
		json_t *job = NULL;

		if (pk_kind_of(want) != PK_KIND_JOB ||
		    pk_store_get(ctl->store, &pk_type_job, ns, pk_name(want), &job) < 0)
			continue;
		ref = controller_ref(job);
		ruid = ref ? json_string_value(json_object_get(ref, "uid")) : NULL;
		if (ruid && strcmp(ruid, uid) == 0 &&
		    json_is_true(pk_get(job, "spec.suspend")) != suspend &&
		    json_object_set_new(json_object_get(job, "spec"), "suspend",
					json_boolean(suspend)) == 0) {
			struct pk_write_ref w = ctl_ref_of(&pk_type_job, job);
			int r = ctl_replace(ctl, &w, job, NULL);

			if (r == 0)
				ctl_log(ctl, 2, "%s: %s Job %s/%s", what,
					suspend ? "suspended" : "resumed", ns, pk_name(job));
			else
				ctl_log(ctl, 1, "%s: updating Job %s/%s: %s", what, ns,
					pk_name(job), pk_write_strerror(r));
		}
		json_decref(job);
	}
}

/* Delete what uid controls in ns that the controller no longer emits. */
/* How many pods it deleted. */
static size_t prune(struct pk_ctl *ctl, const char *ns, const char *uid, const json_t *objects,
		    const char *what)
{
	size_t pods = 0;

	for (size_t k = 0; k < sizeof(owned_kinds) / sizeof(owned_kinds[0]); k++) {
		const char *kind = pk_kind_to_string(owned_kinds[k]);
		json_t *items = NULL, *obj;
		size_t i;

		if (pk_store_list(ctl->store, pk_type_of(owned_kinds[k]), ns, NULL, &items, NULL,
				  NULL) < 0)
			continue;
		json_array_foreach(items, i, obj)
		{
			const json_t *ref = controller_ref(obj);
			const char *ruid =
			    ref ? json_string_value(json_object_get(ref, "uid")) : NULL;

			if (!ruid || strcmp(ruid, uid) != 0 ||
			    emitted(objects, kind, pk_name(obj)) || succeeded(obj))
				continue;
			struct pk_write_ref del = ctl_ref_of(pk_type_of(owned_kinds[k]), obj);

			del.rv = 0; /* the object it judged, whatever changed since */
			if (ctl_delete(ctl, &del, PK_WRITE_PROPAGATE_DEFAULT) == 0) {
				CTL_COUNT(ctl, gc_deleted);
				pods += del.kind->pk == PK_KIND_POD;
				ctl_log(ctl, 2, "%s: deleted %s %s/%s (no longer wanted)", what,
					kind, ns, pk_name(obj));
			}
		}
		json_decref(items);
	}
	return pods;
}

/* ---- status ----------------------------------------------------------------------- */

/* Objects of kind in ns matching a label selector whose controller has uid. */
static int list_controlled(struct pk_ctl *ctl, const struct pk_type *t, const char *ns,
			   const char *selector, const char *uid, json_t **ret)
{
	struct pk_store_list_opts o = {0};
	struct pk_selector *sel = NULL;
	json_t *items = NULL, *out = json_array(), *obj;
	char err[128];
	size_t i;
	int r = pk_selector_parse(selector, false, &sel, err, sizeof(err));

	if (r == 0) {
		o.labels = sel;
		r = pk_store_list(ctl->store, t, ns, &o, &items, NULL, NULL);
	}
	pk_selector_free(sel);
	if (r < 0 || !out) {
		json_decref(out);
		return r < 0 ? r : -ENOMEM;
	}
	json_array_foreach(items, i, obj)
	{
		const json_t *ref = controller_ref(obj);
		const char *ruid = ref ? json_string_value(json_object_get(ref, "uid")) : NULL;

		if (ruid && strcmp(ruid, uid) == 0)
			json_array_append(out, obj);
	}
	json_decref(items);
	*ret = out;
	return 0;
}

static int job_pods(struct pk_ctl *ctl, const json_t *job, json_t **ret)
{
	char sel[256];
	const char *uid = pk_get_string(job, "metadata.uid");

	if (!uid)
		return -EINVAL;
	snprintf(sel, sizeof(sel), "batch.kubernetes.io/controller-uid=%s", uid);
	return list_controlled(ctl, &pk_type_pod, pk_namespace(job), sel, uid, ret);
}

/*
 * One batch: the owner's new status (NULL: none) under its resourceVersion,
 * and the deletion of the pods named in del.  *owner is replaced by the
 * owner as stored.
 */
static int write_status(struct pk_ctl *ctl, enum pk_kind kind, json_t **owner, json_t *status,
			const json_t *del, const char *what)
{
	const struct pk_write_result *res = NULL;
	struct pk_write_ref ref = ctl_ref_of(pk_type_of(kind), *owner);
	const char *ns = pk_namespace(*owner);
	size_t i, n = 0;
	json_t *name;
	int r = pk_writer_batch_begin(ctl->writer);

	ref.uid = NULL; /* the resourceVersion says it is the same object */
	if (r == 0 && status)
		r = pk_writer_status(ctl->writer, &ref, status);
	json_array_foreach(del, i, name)
	{
		struct pk_write_ref pod = {
		    .kind = &pk_type_pod, .ns = ns, .name = json_string_value(name)};

		if (r == 0)
			r = pk_writer_delete(ctl->writer, &pod, PK_WRITE_PROPAGATE_DEFAULT);
	}
	if (r == 0)
		r = ctl_commit(ctl, &res, &n);
	for (i = 0; r == 0 && i < n; i++) {
		if (res[i].error < 0 && res[i].error != -ENOENT)
			ctl_log(ctl, 1, "%s: writing %s %s: %s", what, res[i].kind->kind,
				res[i].name, pk_write_strerror(res[i].error));
		else if (res[i].error == 0 && res[i].kind->pk == PK_KIND_POD)
			ctl_log(ctl, 2, "%s: deleted pod %s/%s", what, ns, res[i].name);
	}
	if (r == 0 && status && n && res[0].error == 0 && res[0].object) {
		json_decref(*owner);
		*owner = json_incref(res[0].object);
	} else if (r == 0 && status && n && res[0].error < 0) {
		r = res[0].error;
	}
	return r;
}

static int job_keep_status(struct pk_ctl *ctl, json_t **job, const char *what, bool *ret_finished)
{
	struct wb_job_update u = {0};
	json_t *pods = NULL;
	char now[32];
	int r;

	pk_time_format((int64_t)time(NULL), now);
	r = job_pods(ctl, *job, &pods);
	if (r == 0)
		r = wb_job_status(*job, pods, now, &u);
	if (r == 0 && (u.status || json_array_size(u.delete_pods)))
		r = write_status(ctl, PK_KIND_JOB, job, u.status, u.delete_pods, what);
	if (r == 0 && u.status) /* the JobSet counts its Jobs (the controllers' own write) */
		ctl_reconcile_owner_of(ctl, *job);
	if (r == 0 && u.status && !*ret_finished)
		ctl_log(ctl, 2, "%s: active %lld, succeeded %lld, failed %lld%s", what,
			(long long)json_integer_value(json_object_get(u.status, "active")),
			(long long)json_integer_value(json_object_get(u.status, "succeeded")),
			(long long)json_integer_value(json_object_get(u.status, "failed")),
			wb_condition_true(*job, "Complete") ? ": Complete"
			: wb_condition_true(*job, "Failed") ? ": Failed"
							    : "");
	*ret_finished = u.finished;
	wb_job_update_clear(&u);
	json_decref(pods);
	return r;
}

static int jobset_jobs(struct pk_ctl *ctl, const json_t *js, json_t **ret)
{
	char sel[256];
	const char *uid = pk_get_string(js, "metadata.uid");

	if (!uid)
		return -EINVAL;
	snprintf(sel, sizeof(sel), "jobset.sigs.k8s.io/jobset-name=%s", pk_name(js));
	return list_controlled(ctl, &pk_type_job, pk_namespace(js), sel, uid, ret);
}

/* Delete obj as listed (its uid: not another object of its name since). */
static void delete_logged(struct pk_ctl *ctl, enum pk_kind kind, const json_t *obj,
			  const char *what)
{
	struct pk_write_ref ref = ctl_ref_of(pk_type_of(kind), obj);
	int r;

	ref.rv = 0;
	r = ctl_delete(ctl, &ref, PK_WRITE_PROPAGATE_DEFAULT);
	if (r == 0)
		ctl_log(ctl, 2, "%s: deleted %s %s/%s", what, pk_kind_to_string(kind), ref.ns,
			ref.name);
	else if (r != -ENOENT)
		ctl_log(ctl, 1, "%s: deleting %s %s/%s: %s", what, pk_kind_to_string(kind), ref.ns,
			ref.name, pk_write_strerror(r));
}

/* Delete the pods of each Job (only the active ones with active_only), then the Jobs. */
static void delete_jobs(struct pk_ctl *ctl, const json_t *jobs, bool unfinished_only,
			const char *what)
{
	size_t i, k;
	json_t *job, *pods, *p;

	json_array_foreach(jobs, i, job)
	{
		if (unfinished_only && wb_job_finished(job))
			continue;
		if (job_pods(ctl, job, &pods) == 0) {
			json_array_foreach(pods, k, p) delete_logged(ctl, PK_KIND_POD, p, what);
			json_decref(pods);
		}
		delete_logged(ctl, PK_KIND_JOB, job, what);
	}
}

/* Delete the groups uid controls in ns: PodGroups, then child, then root CompositePodGroups. */
static void delete_groups(struct pk_ctl *ctl, const char *ns, const char *uid, const char *what)
{
	static const enum pk_kind kinds[] = {PK_KIND_POD_GROUP, PK_KIND_COMPOSITE_POD_GROUP,
					     PK_KIND_COMPOSITE_POD_GROUP};

	for (size_t k = 0; k < 3; k++) {
		json_t *items = NULL, *obj;
		size_t i;

		if (pk_store_list(ctl->store, pk_type_of(kinds[k]), ns, NULL, &items, NULL, NULL) <
		    0)
			continue;
		json_array_foreach(items, i, obj)
		{
			const json_t *ref = controller_ref(obj);
			const char *ruid =
			    ref ? json_string_value(json_object_get(ref, "uid")) : NULL;
			bool child = pk_get_string(obj, "spec.parentCompositePodGroupName") != NULL;

			if (!ruid || strcmp(ruid, uid) != 0 || (k == 1 && !child))
				continue;
			delete_logged(ctl, kinds[k], obj, what);
		}
		json_decref(items);
	}
}

/* The pods a LeaderWorkerSet controls. */
static int lws_pods(struct pk_ctl *ctl, const json_t *lws, json_t **ret)
{
	char sel[256];
	const char *uid = pk_get_string(lws, "metadata.uid");

	if (!uid)
		return -EINVAL;
	snprintf(sel, sizeof(sel), WB_LWS_LABEL_NAME "=%s", pk_name(lws));
	return list_controlled(ctl, &pk_type_pod, pk_namespace(lws), sel, uid, ret);
}

/*
 * A LeaderWorkerSet's status, and the groups it recreates (a pod that ended
 * or went, a rolling update): their pods go in the status write, their
 * PodGroups after it, so the creation that follows gates each gang whole.
 */
static int lws_keep_status(struct pk_ctl *ctl, json_t **lws, const char *what, bool *ret_finished)
{
	struct wb_lws_update u = {0};
	json_t *pods = NULL, *name;
	char now[32];
	size_t i;
	int r;

	pk_time_format((int64_t)time(NULL), now);
	r = lws_pods(ctl, *lws, &pods);
	if (r == 0)
		r = wb_lws_status(*lws, pods, now, &u);
	if (r == 0 && (u.status || json_array_size(u.delete_pods)))
		r = write_status(ctl, PK_KIND_LEADER_WORKER_SET, lws, u.status, u.delete_pods,
				 what);
	json_array_foreach(u.delete_groups, i, name)
	{
		struct pk_write_ref ref = {.kind = &pk_type_pod_group,
					   .ns = pk_namespace(*lws),
					   .name = json_string_value(name)};

		if (r == 0 && ctl_delete(ctl, &ref, PK_WRITE_PROPAGATE_DEFAULT) == 0)
			ctl_log(ctl, 2, "%s: deleted PodGroup %s/%s", what, ref.ns, ref.name);
	}
	if (r == 0 && u.event_reason) {
		ctl_record_normal(ctl, &pk_type_leader_worker_set, *lws, u.event_reason,
				  u.event_note);
		ctl_record_flush(ctl);
	}
	if (r == 0 && (u.restarted || u.rolled))
		ctl_log(ctl, 2,
			"%s: recreating %lld group(s) for a pod restart, %lld for the update", what,
			(long long)u.restarted, (long long)u.rolled);
	*ret_finished = false;
	wb_lws_update_clear(&u);
	json_decref(pods);
	return r;
}

static int jobset_keep_status(struct pk_ctl *ctl, json_t **js, const char *what, bool *ret_finished)
{
	struct wb_jobset_update u = {0};
	json_t *jobs = NULL;
	char now[32];
	int r;

	pk_time_format((int64_t)time(NULL), now);
	r = jobset_jobs(ctl, *js, &jobs);
	if (r == 0)
		r = wb_jobset_status(*js, jobs, now, &u);
	if (r == 0 && u.status)
		r = write_status(ctl, PK_KIND_JOBSET, js, u.status, NULL, what);
	if (r == 0 && u.restart) {
		ctl_log(ctl, 2, "%s: a Job failed: restart %lld", what,
			(long long)wb_jobset_restarts(*js));
		delete_jobs(ctl, jobs, false, what);
		delete_groups(ctl, pk_namespace(*js), pk_get_string(*js, "metadata.uid"), what);
	} else if (r == 0 && u.stop) {
		delete_jobs(ctl, jobs, true, what);
	}
	if (r == 0 && u.status && u.finished)
		ctl_log(ctl, 2, "%s: %s", what,
			wb_condition_true(*js, "Completed") ? "Completed" : "Failed");
	*ret_finished = u.finished;
	wb_jobset_update_clear(&u);
	json_decref(jobs);
	return r;
}

int ctl_reconcile(struct pk_ctl *ctl, enum pk_kind k, const char *ns, const char *name)
{
	const char *kind = pk_kind_to_string(k);
	struct lookup_ctx l = {.ctl = ctl, .held = json_array()};
	struct wb_lookup lk = {.fn = lookup, .userdata = &l};
	struct pk_errors errs = {0};
	json_t *obj = NULL, *objects = NULL;
	char what[512];
	int r;

	if (!l.held)
		return -ENOMEM;
	if (k == PK_KIND_POD || k == PK_KIND_POD_GROUP) {
		json_decref(l.held);
		return ctl_claims_reconcile(ctl, k, ns, name); /* claims from templates */
	}
	snprintf(what, sizeof(what), "%s %s/%s", kind, ns, name);
	r = pk_store_get(ctl->store, pk_type_of(k), ns, name, &obj);
	if (r < 0 || pk_get(obj, "metadata.deletionTimestamp")) {
		json_decref(obj);
		json_decref(l.held);
		return r == -ENOENT ? 0 : r;
	}
	CTL_COUNT(ctl, reconciles);
	bool job = k == PK_KIND_JOB, finished = false;

	r = pk_get_string(obj, "metadata.uid")
		? (job			 ? job_keep_status
		   : k == PK_KIND_JOBSET ? jobset_keep_status
					 : lws_keep_status)(ctl, &obj, what, &finished)
		: 0;
	if (r < 0)
		ctl_log(ctl, 1, "%s: status: %s", what, strerror(-r));
	if (finished || r == -PK_WRITE_ECONFLICT) {
		/* finished: nothing more to create; a conflict: a newer version comes */
		json_decref(obj);
		json_decref(l.held);
		return 0;
	}
	if (job)
		r = wb_job_reconcile(obj, &lk, &objects, &errs);
	else if (k == PK_KIND_JOBSET)
		r = wb_jobset_reconcile(obj, &lk, &objects, &errs);
	else
		r = wb_lws_reconcile(obj, &lk, &objects, &errs);
	if (r < 0) {
		CTL_COUNT(ctl, reconcile_errors);
		log_errors(ctl, what, &errs);
		ctl_log(ctl, 1, "%s: reconcile failed: %s", what, strerror(-r));
	} else {
		r = create_missing(ctl, objects, what);
		const char *uid = pk_get_string(obj, "metadata.uid");

		if (r == 0 && uid && k == PK_KIND_JOBSET)
			sync_suspend(ctl, ns, uid, objects, what);

		/* pods a smaller parallelism no longer wants: counted out at once, as
		 * upstream's Job controller takes its deletions off status.active */
		if (r == 0 && uid && prune(ctl, ns, uid, objects, what) && job &&
		    job_keep_status(ctl, &obj, what, &finished) < 0)
			ctl_log(ctl, 1, "%s: status after pruning: failed", what);
	}
	pk_errors_clear(&errs);
	json_decref(objects);
	json_decref(obj);
	json_decref(l.held);
	return r;
}

void ctl_reconcile_owner_of(struct pk_ctl *ctl, const json_t *obj)
{
	const json_t *ref = controller_ref(obj);
	const char *name = ref ? json_string_value(json_object_get(ref, "name")) : NULL;
	const struct pk_type *t = ref ? pk_type_by_kind(pk_get_string(ref, "kind")) : NULL;

	if (name && (t == &pk_type_job || t == &pk_type_jobset || t == &pk_type_leader_worker_set))
		ctl_queue_reconcile(ctl, t->pk, pk_namespace(obj), name);
}

/* ---- the work queue: each object once until it is taken ------------------------------ */

static void work_clear(struct ctl_work *w)
{
	free(w->ns);
	free(w->name);
}

int ctl_queue_reconcile(struct pk_ctl *ctl, enum pk_kind kind, const char *ns, const char *name)
{
	struct ctl_queue *q = &ctl->queue;
	char key[CTL_KEY_MAX];
	struct ctl_work *w;

	if (!name || !pk_obj_key(key, sizeof(key), pk_type_of(kind), ns, name))
		return -EINVAL;
	if (pk_map_get(&q->queued, key))
		return 0; /* once per object and round: a gang's pods all name the same Job */
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		struct ctl_work *v = realloc(q->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		q->v = v;
		q->cap = cap;
	}
	w = &q->v[q->n];
	*w = (struct ctl_work){.kind = kind, .ns = strdup(ns ? ns : ""), .name = strdup(name)};
	if (!w->ns || !w->name || pk_map_put(&q->queued, key, w) < 0) {
		work_clear(w);
		return -ENOMEM;
	}
	q->n++;
	return 0;
}

void ctl_queue_run(struct pk_ctl *ctl)
{
	/* Reconciles may queue more (a JobSet's Jobs arrive as events later). */
	while (ctl->queue.n > 0) {
		struct ctl_queue work = ctl->queue;

		memset(&ctl->queue, 0, sizeof(ctl->queue));
		pk_map_free(&work.queued);
		for (size_t i = 0; i < work.n; i++) {
			ctl_reconcile(ctl, work.v[i].kind, work.v[i].ns, work.v[i].name);
			work_clear(&work.v[i]);
		}
		free(work.v);
	}
}

void ctl_queue_free(struct ctl_queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		work_clear(&q->v[i]);
	free(q->v);
	pk_map_free(&q->queued);
	memset(q, 0, sizeof(*q));
}

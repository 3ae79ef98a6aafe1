/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues.c — podkernel's queue controller on an attached cluster
 * (--queues=podkernel): Kueue's admission (kueue.x-k8s.io/v1beta2) of the
 * cluster's queued Jobs, JobSets and Pods, by the very pass standalone
 * podkerneld runs (pk_queues_pass(), kernel/controllers/queues.c), handed
 * over by the program (struct pk_attach_config.queue_pass).
 *
 * A hook on the scheduling loop.  When a queue kind, a Namespace or a queued
 * workload changed, before the loop's next round (and only while it may
 * schedule: caches synced, leading), one pass:
 *
 *   1. the mirror's objects that the pass reads (the queue kinds, Jobs,
 *      JobSets, Pods, Nodes and what the placement check reads) are created
 *      in a scratch store under $TMPDIR, the queued workloads oldest first
 *      (the store's creation clock gives them the cluster's creation times);
 *   2. the pass runs on it, writing there as it writes standalone;
 *   3. what it changed is written to the cluster through the attach write
 *      backend (remote.c), each under the resourceVersion and uid the mirror
 *      holds: a Job, JobSet or Pod gets the delta the pass made to its spec,
 *      labels and annotations (admission: spec.suspend false, the admission
 *      annotation, the flavors' node labels and tolerations, a Pod's gate
 *      removed; pending queue order and reason), a Pod the pass deleted (a pod
 *      workload preempted) is deleted, a ClusterQueue's or LocalQueue's new
 *      status is a PUT of its status.  What takes an admission back goes
 *      first, in its own batch; when one of those fails nothing is admitted
 *      in that pass.  Then the PodGroups the pass made for the Kueue pod
 *      groups it admitted are created, in a batch of their own, before the
 *      pods that name them are ungated (a pod whose cluster object names no
 *      group gets the label scheduling.podkernel.dev/pod-group in that
 *      write); the pods of one the cluster refuses stay gated, told why, and
 *      the queues' status waits for a pass that writes them all.  Such a
 *      PodGroup the pass deleted (no queued pod names it) is deleted.
 *
 * The mirror learns of the writes by the watch only.  Until it has seen
 * each one (its resourceVersion, or the deletion), at most
 * AT_QUEUES_ECHO_MS, no pass runs: a pass on a mirror that does not show
 * the last admissions yet would admit into the same quota twice.  A write
 * that conflicts (the object changed meanwhile) is decided again by the
 * pass its change triggers.
 *
 * The pass's Events (Inadmissible, Preempted, Evicted) go to the cluster
 * as events.k8s.io/v1 Events once its writes are out.
 *
 * The cost: each pass copies the mirrored objects it reads into a fresh
 * SQLite store (O(objects) inserts, one transaction per kind group), as
 * `podctl schedule` does; it runs on the loop's thread, between rounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/attach/attach-internal.h"
#include "kernel/builder/builder.h"
#include "kernel/lib/log.h"
#include "kernel/lib/macro.h"

struct at_queues {
	struct pk_attach *a;
	struct at_mirror *mirror;
	struct pk_writer *writer;
	struct at_remote_stats *stats;
	struct at_recorder *recorder; /* the pass's Events, sent once its writes are */
	json_t *events;		      /* this pass's, in order */
	const struct pk_attach_config *cfg;
	bool dirty;
	json_t *awaited;      /* "Kind/ns/name" -> {kind, ns, name, rv} ("rv" absent: deleted) */
	int64_t writes_ms;    /* when the awaited writes went out */
	pthread_mutex_t lock; /* the counters below (read by /metrics) */
	uint64_t passes, failed, written, refused;
	double seconds;
};

#define q_log(q, level, ...)                                                                       \
	pk_logf((q)->cfg->log, (q)->cfg->log_arg, (q)->cfg->verbosity, level, __VA_ARGS__)

/* ---- what the pass reads, in the order it is created ------------------------------ */

/* Group 0 first (what later kinds refer to), then 1; group 2 is the queued workloads. */
static const struct {
	const struct pk_type *kind;
	int group;
} read_kinds[] = {
    {&pk_type_namespace, 0},
    {&pk_type_priority_class, 0},
    {&pk_type_workload_priority_class, 0},
    {&pk_type_resource_flavor, 0},
    {&pk_type_topology, 0},
    {&pk_type_cohort, 0},
    {&pk_type_cluster_queue, 0},
    {&pk_type_storage_class, 0},
    {&pk_type_device_class, 0},
    {&pk_type_node, 0},
    {&pk_type_csi_node, 0},
    {&pk_type_persistent_volume, 0},
    {&pk_type_local_queue, 1},
    {&pk_type_persistent_volume_claim, 1},
    {&pk_type_resource_slice, 1},
    {&pk_type_resource_claim, 1},
    {&pk_type_composite_pod_group, 1},
    {&pk_type_pod_group, 1},
    {&pk_type_workload, 1},
    {&pk_type_job, 2},
    {&pk_type_jobset, 2},
    {&pk_type_pod, 2},
};

/* What a pass may write: the snapshot before and after it is taken of these. */
static const struct pk_type *const written_kinds[] = {
    &pk_type_job,	  &pk_type_jobset,    &pk_type_pod, &pk_type_cluster_queue,
    &pk_type_local_queue, &pk_type_pod_group, NULL};

static bool relevant(const struct pk_source_event *ev)
{
	enum pk_kind k = ev->kind ? ev->kind->pk : PK_KIND_UNKNOWN;

	if (k == PK_KIND_JOB || k == PK_KIND_JOBSET)
		return wb_queue_name(ev->object) != NULL;
	if (k == PK_KIND_POD)
		return pk_pod_queue_name(ev->object) != NULL;
	return k == PK_KIND_WORKLOAD_PRIORITY_CLASS || k == PK_KIND_TOPOLOGY ||
	       k == PK_KIND_CLUSTER_QUEUE || k == PK_KIND_LOCAL_QUEUE ||
	       k == PK_KIND_RESOURCE_FLAVOR || k == PK_KIND_COHORT || k == PK_KIND_NAMESPACE;
}

/* The queue order of the workloads: creationTimestamp, then namespace, then name. */
static int cmp_created(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	const char *ta = pk_get_string(a, "metadata.creationTimestamp"),
		   *tb = pk_get_string(b, "metadata.creationTimestamp");
	int64_t sa = 0, sb = 0;
	int c;

	if (ta)
		pk_time_parse(ta, &sa);
	if (tb)
		pk_time_parse(tb, &sb);
	if (sa != sb)
		return sa < sb ? -1 : 1;
	c = strcmp(pk_namespace(a) ? pk_namespace(a) : "", pk_namespace(b) ? pk_namespace(b) : "");
	return c ? c : strcmp(pk_name(a), pk_name(b));
}

/* An object the scratch store refused: counted and logged, left out of the pass. */
static void refused(void *arg, const json_t *obj, int error)
{
	struct at_queues *q = arg;

	pthread_mutex_lock(&q->lock);
	q->refused++;
	pthread_mutex_unlock(&q->lock);
	q_log(q, 2, "attach: queues: %s %s%s%s left out of the pass: %s",
	      pk_get_string(obj, "kind"), pk_namespace(obj) ? pk_namespace(obj) : "",
	      pk_namespace(obj) ? "/" : "", pk_name(obj), pk_errno_text(-error));
}

/* The queued workloads of objs in the cluster's queue order. */
static void sort_created(json_t *objs)
{
	size_t n = json_array_size(objs), i;
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *o;

	if (!v)
		return;
	json_array_foreach(objs, i, o) v[i] = json_incref(o);
	qsort(v, n, sizeof(*v), cmp_created);
	json_array_clear(objs);
	for (i = 0; i < n; i++)
		json_array_append_new(objs, v[i]);
	free(v);
}

/* The mirror's objects the pass reads, in groups[3] (new arrays). */
static int fill(struct at_queues *q, json_t *groups[3])
{
	for (int g = 0; g < 3; g++) {
		json_t *objs = json_array();

		for (size_t k = 0; objs && k < ELEMENTSOF(read_kinds); k++) {
			json_t *items = NULL;
			char *cont = NULL;

			if (read_kinds[k].group != g)
				continue;
			if (at_mirror_source_ops.list(q->mirror, read_kinds[k].kind, NULL, &items,
						      &cont) == 0)
				json_array_extend(objs, items);
			json_decref(items);
			free(cont);
		}
		if (!objs)
			return -ENOMEM;
		if (g == 2)
			sort_created(objs);
		groups[g] = objs;
	}
	return 0;
}

/* ---- the writes ------------------------------------------------------------------ */

/* The JSON merge patch (RFC 7386) that turns a into b; NULL when they are equal. */
static json_t *merge_diff(const json_t *a, const json_t *b)
{
	json_t *p, *v;
	const char *k;

	if (!json_is_object(a) || !json_is_object(b))
		return json_equal(a, b) ? NULL : json_deep_copy(b ? b : json_null());
	p = json_object();
	json_object_foreach((json_t *)b, k, v)
	{
		json_t *d = merge_diff(json_object_get(a, k), v);

		if (d)
			json_object_set_new(p, k, d);
	}
	json_object_foreach((json_t *)a, k, v) if (!json_object_get(b, k))
	    json_object_set_new(p, k, json_null());
	if (json_object_size(p) == 0) {
		json_decref(p);
		return NULL;
	}
	return p;
}

/* target with the JSON merge patch (RFC 7386) patch applied: a new object, NULL on ENOMEM. */
static json_t *merge_apply(const json_t *target, const json_t *patch)
{
	json_t *out, *v;
	const char *k;

	if (!json_is_object(patch))
		return json_deep_copy(patch);
	out = json_is_object(target) ? json_deep_copy(target) : json_object();
	json_object_foreach((json_t *)patch, k, v)
	{
		json_t *m;

		if (!out)
			return NULL;
		if (json_is_null(v)) {
			json_object_del(out, k);
			continue;
		}
		m = merge_apply(json_object_get(out, k), v);
		if (!m || json_object_set_new(out, k, m) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* What the pass may change of a workload: its spec, labels and annotations. */
static json_t *writable_part(const json_t *o)
{
	json_t *part = json_pack("{s:O?,s:{s:O?,s:O?}}", "spec", pk_get(o, "spec"), "metadata",
				 "labels", pk_get(o, "metadata.labels"), "annotations",
				 pk_get(o, "metadata.annotations"));

	return part;
}

static bool admitted(const json_t *o)
{
	return json_object_get(pk_get(o, "metadata.annotations"), WB_ANNOTATION_QUEUE_ADMISSION) &&
	       !json_is_true(pk_get(o, "spec.suspend"));
}

/* A reference to the cluster's object: its resourceVersion and uid as the mirror holds them. */
static struct pk_write_ref cluster_ref(const struct pk_type *kind, const json_t *cur)
{
	const char *rv = pk_get_string(cur, "metadata.resourceVersion");

	return (struct pk_write_ref){.kind = kind,
				     .ns = pk_namespace(cur),
				     .name = pk_name(cur),
				     .rv = rv ? strtoull(rv, NULL, 10) : 0,
				     .uid = pk_get_string(cur, "metadata.uid")};
}

/* ---- Kueue's pod groups --------------------------------------------------------- */

/* A PodGroup the queue controller made for a Kueue pod group (labelled so). */
static bool made_group(const json_t *o)
{
	return o && pk_kind_of(o) == PK_KIND_POD_GROUP &&
	       json_object_get(pk_get(o, "metadata.labels"), PK_QUEUES_LABEL_KUEUE_POD_GROUP);
}

/* Whether the pass deleted the PodGroup before (gone, or being deleted, after it). */
static bool group_deleted(const json_t *before, const json_t *after)
{
	return !after || (pk_get(after, "metadata.deletionTimestamp") &&
			  !pk_get(before, "metadata.deletionTimestamp"));
}

/* "ns/name" of the PodGroup a pod names (the scratch store's pod: its field). */
static void group_key(const json_t *pod, char *key, size_t n)
{
	snprintf(key, n, "%s/%s", pk_namespace(pod) ? pk_namespace(pod) : "",
		 pk_pod_group_name(pod) ? pk_pod_group_name(pod) : "");
}

/*
 * A pod the pass admitted whose PodGroup the cluster refused: *ret its
 * before with the pending reason saying why, so it stays gated (the gang is
 * never placed one pod at a time); NULL when it is not one.  0 or -ENOMEM.
 */
static int held_pod(const json_t *before, const json_t *after, const json_t *refused, json_t **ret)
{
	const char *why;
	json_t *ann, *held;
	char key[600], *text = NULL;

	*ret = NULL;
	group_key(after, key, sizeof(key));
	why = json_string_value(json_object_get(refused, key));
	if (!why || !admitted(after) || admitted(before))
		return 0;
	held = json_deep_copy(before);
	ann = pk_get(held, "metadata.annotations");
	if (held && !json_is_object(ann))
		pk_set(held, "metadata.annotations", ann = json_object());
	if (!json_is_object(ann) ||
	    asprintf(&text,
		     "fits its quota, but PodGroup %s of its pod group could not be created in the "
		     "cluster (%s): its pods stay gated, never placed one by one",
		     pk_pod_group_name(after), why) < 0) {
		json_decref(held);
		return -ENOMEM;
	}
	json_object_set_new(ann, PK_QUEUES_ANNOTATION_PENDING, json_string(text));
	free(text);
	*ret = held;
	return 0;
}

/*
 * A pod of a Kueue pod group, ungated: it must name its PodGroup in the
 * cluster, or the scheduler would place it alone.  Where the cluster's pod
 * has no spec.schedulingGroup (a cluster whose Pod type lacks the field
 * drops it at creation; the field cannot be set on an update), the label
 * scheduling.podkernel.dev/pod-group names it.  0 or -ENOMEM.
 */
static int name_group(json_t *next, const json_t *after)
{
	const char *g = pk_pod_kueue_group(after, NULL);
	json_t *labels;

	if (!g || pk_pod_group_name(next))
		return 0;
	labels = pk_get(next, "metadata.labels");
	if (!json_is_object(labels) && pk_set(next, "metadata.labels", labels = json_object()) < 0)
		return -ENOMEM;
	return json_object_set_new(labels, TOPO_LABEL_POD_GROUP, json_string(g)) < 0 ? -ENOMEM : 0;
}

/*
 * One object's write into the open batch, when the pass changed it: 1 added,
 * 0 nothing to write, < 0 error.  evictions: only what takes an admission
 * back (a workload admitted before and not after, a Pod deleted); else only
 * the rest.
 */
static int add_write(struct at_queues *q, const char *key, const json_t *before,
		     const json_t *after, bool evictions, const json_t *refused)
{
	enum pk_kind kind = pk_kind_of(before);
	json_t *cur = NULL, *next = NULL, *patch, *held = NULL;
	struct pk_write_ref ref;
	int r;

	if (kind == PK_KIND_POD_GROUP && !(made_group(before) && group_deleted(before, after)))
		return 0; /* a PodGroup: only the pass's deletion of one it made is written */
	if (at_mirror_get(q->mirror, pk_type_by_kind(pk_get_string(before, "kind")),
			  pk_namespace(before), pk_name(before), &cur) < 0)
		return 0; /* gone from the cluster meanwhile */
	ref = cluster_ref(pk_type_of(kind), cur);
	if (!after || kind == PK_KIND_POD_GROUP) { /* a Pod the pass deleted, a PodGroup */
		bool now = evictions == (kind == PK_KIND_POD);

		r = now ? pk_writer_delete(q->writer, &ref, PK_WRITE_PROPAGATE_DEFAULT) : 0;
		json_decref(cur);
		return r < 0 ? r : now;
	}
	if (kind == PK_KIND_CLUSTER_QUEUE || kind == PK_KIND_LOCAL_QUEUE) {
		/* not while a PodGroup was refused: the status would count its pods admitted */
		bool same = json_equal(json_object_get(before, "status"),
				       json_object_get(after, "status")) ||
			    json_object_size(refused) > 0;

		r = !same && !evictions
			? pk_writer_status(q->writer, &ref, json_object_get(after, "status"))
			: 0;
		json_decref(cur);
		return r < 0 ? r : !same && !evictions;
	}
	if (evictions != (admitted(before) && !admitted(after))) {
		json_decref(cur);
		return 0;
	}
	if (kind == PK_KIND_POD && (r = held_pod(before, after, refused, &held)) < 0) {
		json_decref(cur);
		return r;
	}
	if (held)
		after = held; /* its PodGroup was refused: gated still, told why */
	json_t *wa = writable_part(before), *wb = writable_part(after);

	patch = merge_diff(wa, wb);
	json_decref(wa);
	json_decref(wb);
	r = patch && !(next = merge_apply(cur, patch)) ? -ENOMEM : 0;
	if (r == 0 && next && kind == PK_KIND_POD && admitted(after) && !admitted(before))
		r = name_group(next, after);
	if (r == 0 && next)
		r = pk_writer_replace(q->writer, &ref, next);
	if (r == 0 && next)
		q_log(q, 2, "attach: queues: %s: %s", key,
		      admitted(after) && !admitted(before) ? "admitted"
		      : evictions			   ? "admission taken back"
							   : "annotations");
	r = r < 0 ? r : next != NULL;
	json_decref(patch);
	json_decref(next);
	json_decref(held);
	json_decref(cur);
	return r;
}

/* Remember each write that went through, to wait for its echo in the mirror. */
static void await_written(struct at_queues *q, const struct pk_write_result *res, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *rv = pk_get_string(res[i].object, "metadata.resourceVersion");
		const struct pk_type *t = res[i].kind;
		char key[800];

		if (res[i].error != 0 || !t)
			continue;
		pk_obj_key(key, sizeof(key), t, res[i].ns, res[i].name);
		json_object_set_new(q->awaited, key,
				    json_pack("{s:s,s:s?,s:s,s:s?}", "kind", t->kind, "ns",
					      res[i].ns, "name", res[i].name, "rv", rv));
	}
	q->writes_ms = ap_now_ms();
}

/* One batch: what takes admissions back (evictions) or the rest; < 0 when a write failed. */
static int write_batch(struct at_queues *q, const json_t *before, const json_t *after,
		       bool evictions, const json_t *refused)
{
	const struct pk_write_result *res = NULL;
	size_t n = 0, failed = 0;
	const char *key;
	json_t *b;
	int r = 0, added = 0;

	pk_writer_batch_begin(q->writer);
	json_object_foreach((json_t *)before, key, b)
	{
		int one = add_write(q, key, b, json_object_get(after, key), evictions, refused);

		if (one < 0)
			q_log(q, 1, "attach: queues: %s: %s", key, pk_errno_text(-one));
		added += one > 0;
	}
	if (added == 0)
		return 0;
	r = pk_writer_batch_commit(q->writer, &res, &n);
	for (size_t i = 0; i < n; i++) {
		if (res[i].error == 0)
			continue;
		failed++;
		q_log(q, 1, "attach: queues: writing %s %s/%s: %s", res[i].kind->kind,
		      res[i].ns ? res[i].ns : "", res[i].name, pk_write_strerror(res[i].error));
	}
	await_written(q, res, n);
	pthread_mutex_lock(&q->lock);
	q->written += n - failed;
	pthread_mutex_unlock(&q->lock);
	return r < 0 ? r : failed ? -EAGAIN : 0;
}

/* A PodGroup made in the scratch store, as it is created in the cluster. */
static json_t *group_body(const json_t *made)
{
	static const char *const store_owned[] = {"resourceVersion",   "uid",
						  "managedFields",     "generation",
						  "deletionTimestamp", "creationTimestamp"};
	json_t *body = json_deep_copy(made), *meta = json_object_get(body, "metadata");

	if (!json_is_object(meta)) {
		json_decref(body);
		return NULL;
	}
	for (size_t i = 0; i < ELEMENTSOF(store_owned); i++)
		json_object_del(meta, store_owned[i]);
	json_object_del(body, "status");
	return body;
}

/*
 * The PodGroups the pass made for Kueue pod groups it admitted, created in
 * the cluster in a batch of their own, before the pods that name them are
 * ungated; each one not created: "ns/name" -> why, in refused.  < 0 when
 * the batch did not go out (then nothing else does).
 */
static int create_groups(struct at_queues *q, const json_t *before, const json_t *after,
			 json_t *refused)
{
	const struct pk_write_result *res = NULL;
	json_t *bodies = json_array(), *a;
	const char *key;
	size_t n = 0, failed = 0;
	int r = bodies ? 0 : -ENOMEM;
	char k[600];

	pk_writer_batch_begin(q->writer);
	json_object_foreach(r == 0 ? (json_t *)after : NULL, key, a)
	{
		json_t *body;

		if (json_object_get(before, key) || !made_group(a))
			continue;
		body = group_body(a);
		r = body && json_array_append_new(bodies, body) == 0
			? pk_writer_create(q->writer, &pk_type_pod_group, body)
			: -ENOMEM;
		if (r < 0)
			break;
	}
	if (r < 0 || json_array_size(bodies) == 0) {
		if (r < 0)
			pk_writer_batch_begin(q->writer); /* dropped */
		json_decref(bodies);
		return r;
	}
	r = pk_writer_batch_commit(q->writer, &res, &n);
	for (size_t i = 0; i < n; i++) {
		if (res[i].error == 0) {
			q_log(q, 2,
			      "attach: queues: PodGroup %s/%s created for its Kueue pod group",
			      res[i].ns, res[i].name);
			continue;
		}
		failed++;
		snprintf(k, sizeof(k), "%s/%s", res[i].ns ? res[i].ns : "", res[i].name);
		json_object_set_new(refused, k, json_string(pk_write_strerror(res[i].error)));
		q_log(q, 1, "attach: queues: creating PodGroup %s: %s", k,
		      pk_write_strerror(res[i].error));
	}
	await_written(q, res, n);
	pthread_mutex_lock(&q->lock);
	q->written += n - failed;
	pthread_mutex_unlock(&q->lock);
	json_decref(bodies);
	return r;
}

/* ---- one pass ------------------------------------------------------------------ */

/* An Event of the pass (pk_queues_pass_opts.event): kept until its writes are out. */
static void on_event(void *arg, const char *type, const struct pk_type *kind, const json_t *obj,
		     const char *reason, const char *note)
{
	struct at_queues *q = arg;

	if (!kind || kind->pk == PK_KIND_UNKNOWN) /* the pass tells of its typed kinds only */
		return;
	json_array_append_new(q->events,
			      json_pack("{s:s,s:i,s:s?,s:s?,s:s,s:s}", "type", type, "kind",
					(int)kind->pk, "ns", pk_namespace(obj), "name",
					pk_name(obj), "reason", reason, "note", note));
}

/*
 * Send the pass's Events about the cluster's objects (their uid as the
 * mirror holds it); when its writes failed, only those no write stands
 * behind (Inadmissible).
 */
static void send_events(struct at_queues *q, bool written)
{
	size_t i;
	json_t *e;

	json_array_foreach(q->events, i, e)
	{
		const struct pk_type *kind =
		    pk_type_of((enum pk_kind)json_integer_value(json_object_get(e, "kind")));
		const char *reason = pk_get_string(e, "reason");
		json_t *cur = NULL;

		if (!written && strcmp(reason, "Inadmissible") != 0)
			continue;
		if (!pk_get_string(e, "name") ||
		    at_mirror_get(q->mirror, kind, pk_get_string(e, "ns"), pk_get_string(e, "name"),
				  &cur) < 0)
			continue;
		at_recorder_emit(q->recorder, kind, pk_get_string(e, "ns"),
				 pk_get_string(e, "name"), pk_get_string(cur, "metadata.uid"),
				 pk_get_string(e, "type"), reason, reason,
				 pk_get_string(e, "note"));
		json_decref(cur);
	}
	json_array_clear(q->events);
}

/* The pass on a scratch store filled from the mirror, then its changes written. */
static int pass(struct at_queues *q)
{
	struct pk_queues_pass_opts popts = {.event = on_event, .event_arg = q};
	json_t *groups[3] = {NULL, NULL, NULL}, *before = NULL, *after = NULL, *held = NULL;
	struct pk_queues_scratch sc = {.groups = groups,
				       .ngroups = ELEMENTSOF(groups),
				       .written_kinds = written_kinds,
				       .refused = refused,
				       .refused_arg = q};
	char err[256] = "";
	int r = fill(q, groups);

	if (r == 0)
		r = q->cfg->queue_pass(&sc, &popts, &before, &after, err, sizeof(err));
	for (size_t g = 0; g < ELEMENTSOF(groups); g++)
		json_decref(groups[g]);
	if (r < 0)
		q_log(q, 0, "attach: queues: the pass: %s", *err ? err : pk_errno_text(-r));
	if (r == 0)
		r = write_batch(q, before, after, true, NULL);
	if (r == 0 && !(held = json_object()))
		r = -ENOMEM;
	if (r == 0)
		r = create_groups(q, before, after, held);
	if (r == 0)
		r = write_batch(q, before, after, false, held);
	send_events(q, r == 0);
	json_decref(held);
	json_decref(before);
	json_decref(after);
	return r;
}

/* Whether the mirror shows every write of the last pass (or they are too old to wait for). */
static bool caught_up(struct at_queues *q, int64_t now)
{
	const char *key;
	json_t *w, *tmp;

	if (json_object_size(q->awaited) == 0)
		return true;
	json_object_foreach_safe(q->awaited, tmp, key, w)
	{
		const char *rv = pk_get_string(w, "rv");
		json_t *cur = NULL;
		bool seen;

		if (at_mirror_get(q->mirror, pk_type_by_kind(pk_get_string(w, "kind")),
				  pk_get_string(w, "ns"), pk_get_string(w, "name"), &cur) < 0)
			seen = true; /* deleted (by the write or since) */
		else
			seen = rv && pk_get_string(cur, "metadata.resourceVersion") &&
			       strtoull(pk_get_string(cur, "metadata.resourceVersion"), NULL, 10) >=
				   strtoull(rv, NULL, 10);
		json_decref(cur);
		if (seen)
			json_object_del(q->awaited, key);
	}
	if (json_object_size(q->awaited) == 0)
		return true;
	if (now - q->writes_ms < AT_QUEUES_ECHO_MS)
		return false;
	q_log(q, 1, "attach: queues: %zu writes not seen in the cluster's watch after %d ms",
	      json_object_size(q->awaited), AT_QUEUES_ECHO_MS);
	json_object_clear(q->awaited);
	return true;
}

/* ---- the hooks ------------------------------------------------------------------ */

static void hook_event(void *arg, const struct pk_source_event *ev, const struct ap_decision *d)
{
	struct at_queues *q = arg;

	(void)d;
	if (relevant(ev))
		q->dirty = true;
}

static void hook_list_begin(void *arg)
{
	struct at_queues *q = arg;

	q->dirty = true; /* a listing: what waits may have changed */
}

static int64_t hook_round(void *arg, int64_t now)
{
	struct at_queues *q = arg;
	int64_t t0;
	int r;

	if (!q->dirty || !at_may_schedule(q->a))
		return 0; /* the loop wakes when it may schedule again */
	if (!caught_up(q, now))
		return now + AT_QUEUES_POLL_MS;
	q->dirty = false;
	t0 = ap_now_ms();
	r = pass(q);
	pthread_mutex_lock(&q->lock);
	q->passes++;
	q->failed += r < 0;
	q->seconds += (double)(ap_now_ms() - t0) / 1000.0;
	pthread_mutex_unlock(&q->lock);
	if (r < 0) {
		q->dirty = true; /* again, once the mirror shows what did go through */
		return ap_now_ms() + AT_QUEUES_RETRY_MS;
	}
	return 0;
}

static void hook_metrics(void *arg, FILE *f)
{
	struct at_queues *q = arg;

	pthread_mutex_lock(&q->lock);
	fprintf(f,
		"# HELP podkernel_attach_queue_passes_total Queue controller passes on the "
		"cluster (--queues=podkernel).\n"
		"# TYPE podkernel_attach_queue_passes_total counter\n"
		"podkernel_attach_queue_passes_total{result=\"ok\"} %llu\n"
		"podkernel_attach_queue_passes_total{result=\"failed\"} %llu\n"
		"# TYPE podkernel_attach_queue_pass_seconds_total counter\n"
		"podkernel_attach_queue_pass_seconds_total %.3f\n"
		"# TYPE podkernel_attach_queue_writes_total counter\n"
		"podkernel_attach_queue_writes_total %llu\n"
		"# HELP podkernel_attach_queue_objects_refused_total Mirrored objects the "
		"pass's scratch store refused.\n"
		"# TYPE podkernel_attach_queue_objects_refused_total counter\n"
		"podkernel_attach_queue_objects_refused_total %llu\n",
		(unsigned long long)(q->passes - q->failed), (unsigned long long)q->failed,
		q->seconds, (unsigned long long)q->written, (unsigned long long)q->refused);
	pthread_mutex_unlock(&q->lock);
	fprintf(f,
		"# TYPE podkernel_attach_queue_request_conflicts_total counter\n"
		"podkernel_attach_queue_request_conflicts_total %llu\n",
		(unsigned long long)atomic_load(&q->stats->conflicts));
}

static void hook_free(void *arg)
{
	struct at_queues *q = arg;

	if (!q)
		return;
	pk_writer_free(q->writer);
	json_decref(q->awaited);
	json_decref(q->events);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

const struct pk_appliance_hooks at_queues_hooks = {
    .list_begin = hook_list_begin,
    .event = hook_event,
    .round = hook_round,
    .metrics = hook_metrics,
    .free = hook_free,
};

int at_queues_new(struct pk_attach *a, const struct at_remote_config *rc, struct at_queues **ret)
{
	struct at_queues *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	q->a = a;
	q->mirror = rc->mirror;
	q->stats = rc->stats;
	q->cfg = at_config(a);
	q->dirty = true; /* the first round admits what waits */
	q->recorder = rc->recorder;
	q->awaited = json_object();
	q->events = json_array();
	r = q->awaited && q->events ? at_remote_writer_new(rc, &q->writer) : -ENOMEM;
	if (r < 0) {
		hook_free(q);
		return r;
	}
	*ret = q;
	return 0;
}

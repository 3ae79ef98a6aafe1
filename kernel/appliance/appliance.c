/* SPDX-License-Identifier: Apache-2.0 */
/*
 * appliance.c — the scheduling loop of podkerneld.
 *
 * One thread.  At start it lists every kind once (nodes first, so pods bound
 * to them are counted against their capacity before any cycle) and feeds the
 * scheduler; from then on it follows the source's change stream from the
 * resourceVersion read before the list.  Each event goes through
 * ap_classify() (events.c), then to the mode's hooks (appliance.h).  Before
 * a round the hooks do their own work; then the scheduler runs cycles until
 * nothing is eligible, and the round's actions are written through the
 * write path (kernel/write/writer.h) as one batch: a binding carries the
 * pod's resourceVersion (a concurrent binder or a second appliance loses
 * with a conflict, so no pod is bound twice), a condition the same
 * precondition, a preemption is DisruptionTarget then delete.  A failed
 * write re-reads the object and hands the truth back to the scheduler.  The
 * thread sleeps in the source's wait until the next write or the earliest
 * backoff expiry.
 *
 * The reads go through a source table (the store, or attach mode's mirror of
 * a Kubernetes cluster), the writes through a writer backend; the loop
 * knows neither's mode.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/lib/log.h"
#include "kernel/appliance/appliance-internal.h"
#include "kernel/builder/builder.h"

#define AP_EVENT_BATCH 1024
/* Objects per list page at start: small pages keep the transient trees of a
 * big cluster's list from scattering the heap the loop's state lives in, and
 * a page's item array (8 bytes an object) below glibc's large chunks (1 KiB),
 * whose allocation would consolidate the previous page's freed trees first. */
#define AP_LIST_PAGE 64
/* A gang PreEnqueue holds back tells its pods why after this long: a gang
 * whose pods are being created is not written a message per member. */
#define AP_GATED_TELL_MS 500
#define AP_CYCLES_PER_ROUND 256
/* The hooks' round runs at least this often (their own due time aside). */
#define AP_TICK_MS 1000

int64_t ap_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t ap_now_ms(void)
{
	return ap_now_ns() / 1000000;
}

/*
 * The sched explain trace, asked for at -v 4 only: log lines tagged with the
 * kind of root they are about ("cycle N: root Kind ns/x ..." names it), as
 * the KEP's troubleshooting section greps for compositepodgroup.
 */
static void on_trace(void *arg, const char *line)
{
	struct pk_appliance *app = arg;
	static const char *const names[_AP_TYPE_MAX] = {"compositepodgroup", "podgroup", "pod"};
	const char *s = line + strspn(line, " "), *root = strstr(s, "root ");

	if (root && (root == s || root[-1] == ' '))
		app->trace_type = ap_type_of_root(root + 5);
	ap_log(app, 4, "sched trace [%s]: %s", names[app->trace_type], line);
}

/* ---- feeding the scheduler ------------------------------------------------------ */

static void sched_feed(struct pk_appliance *app, json_t *obj)
{
	struct pk_errors errs = {0};
	enum wb_pod_state st = pk_kind_of(obj) == PK_KIND_POD ? wb_pod_state(obj) : WB_POD_ACTIVE;

	if (st == WB_POD_SUCCEEDED || st == WB_POD_FAILED) {
		/* a pod that ran to its end frees its node */
		pk_sched_remove(app->sched, &pk_type_pod, pk_namespace(obj), pk_name(obj));
		return;
	}
	int r = pk_sched_update(app->sched, obj, &errs);

	if (r < 0)
		ap_log(app, 1, "scheduler: %s %s/%s not taken: %s%s%s",
		       json_string_value(json_object_get(obj, "kind")), pk_namespace(obj),
		       pk_name(obj), pk_errno_text(r), errs.n ? ": " : "",
		       errs.n ? errs.msg[0] : "");
	pk_errors_clear(&errs);
}

static void sched_remove(struct pk_appliance *app, enum pk_kind kind, const json_t *obj)
{
	pk_sched_remove(app->sched, pk_type_of(kind), pk_namespace(obj), pk_name(obj));
}

void ap_resync(struct pk_appliance *app, enum pk_kind kind, const char *ns, const char *name)
{
	json_t *obj = NULL;
	int r = app->src->get(app->src_arg, pk_type_of(kind), ns, name, &obj);

	if (r == 0) {
		sched_feed(app, obj);
		ap_cache_note(app->cache, pk_type_of(kind), obj);
		json_decref(obj);
	} else if (r == -ENOENT) {
		pk_sched_remove(app->sched, pk_type_of(kind), ns, name);
		ap_cache_forget(app->cache, pk_type_of(kind), ns, name);
	}
}

/* A kind some hook reads that the loop neither keeps nor gives the scheduler. */
static bool hooks_kind(const struct pk_appliance *app, const struct pk_type *kind)
{
	for (size_t i = 0; kind && i < app->cfg.nhooks; i++)
		for (const struct pk_type *const *k = app->cfg.hooks[i].ops->kinds; k && *k; k++)
			if (*k == kind)
				return true;
	return false;
}

static int list_kind(struct pk_appliance *app, const struct pk_type *kind, int64_t now)
{
	char *token = NULL;

	do {
		struct pk_source_list_opts o = {.continue_token = token, .limit = AP_LIST_PAGE};
		json_t *items = NULL, *obj;
		char *next = NULL;
		size_t i;
		int r = app->src->list(app->src_arg, kind, &o, &items, &next);

		free(token);
		if (r < 0)
			return r;
		enum pk_kind k = kind->pk;
		bool hooks_only = hooks_kind(app, kind);

		json_array_foreach(items, i, obj)
		{
			if (kind ==
			    &pk_type_namespace) { /* only read for namespaceSelector's labels */
				sched_feed(app, obj);
				continue;
			}
			if (!hooks_only)
				ap_cache_note(app->cache, pk_type_of(k), obj);
			if (!hooks_only && pk_sched_reads(kind))
				sched_feed(app, obj);
			ap_hooks_call(app, listed, kind, obj, now);
		}
		json_decref(items);
		token = next;
	} while (token);
	return 0;
}

static int new_scheduler(struct pk_appliance *app)
{
	struct pk_sched_opts o = {
	    .trace = app->cfg.verbosity >= 4 ? on_trace : NULL,
	    .trace_arg = app,
	    .stat = ap_metrics_stat,
	    .stat_arg = app,
	    .backoff_initial_ms = app->cfg.backoff_initial_ms,
	    .backoff_max_ms = app->cfg.backoff_max_ms,
	    .gated_tell_ms = AP_GATED_TELL_MS,
	    .strategy = app->cfg.strategy,
	    .gated_gangs_wait = app->cfg.gated_gangs_wait,
	};

	pk_sched_free(app->sched);
	app->sched = NULL;
	ap_cache_free(app->cache);
	app->cache = NULL;
	int r = pk_sched_new(&o, &app->sched);

	if (r == 0)
		r = ap_cache_new(&app->cache);
	return r;
}

/* A fresh scheduler from one list of everything; events follow from app->rv. */
static int load_all(struct pk_appliance *app)
{
	int64_t now = ap_now_ms();
	uint64_t rv = app->src->rv(app->src_arg);
	int r = new_scheduler(app);

	ap_hooks_call(app, list_begin);
	for (size_t i = 0; r == 0 && i < app->cfg.nhooks; i++) /* the hooks' own kinds first */
		for (const struct pk_type *const *k = app->cfg.hooks[i].ops->kinds;
		     r == 0 && k && *k; k++)
			r = list_kind(app, *k, now);
	for (const struct pk_type *const *k = pk_sched_kinds(); r == 0 && *k; k++)
		r = list_kind(app, *k, now);
	for (size_t i = 0; r == 0 && i < app->cfg.nhooks; i++) /* then what they track */
		for (const struct pk_type *const *k = app->cfg.hooks[i].ops->tracked;
		     r == 0 && k && *k; k++)
			r = list_kind(app, *k, now);
	if (r < 0)
		return r;
	app->rv = rv;
	ap_hooks_call(app, list_done);
	ap_log(app, 1, "appliance: listed %zu objects at resourceVersion %llu",
	       ap_cache_size(app->cache), (unsigned long long)rv);
#ifdef __GLIBC__
	/* The list's parsed objects are freed: give their heap back to the system. */
	malloc_trim(0);
#endif
	return 0;
}

/* ---- the change stream ------------------------------------------------------------ */

/*
 * Metrics of the queue: a changed pod or group counts as incoming, and a
 * root that now has work to do (a standalone pending pod, a root group not
 * yet scheduled) is "active" until its next attempt says otherwise.
 */
static void note_incoming(struct pk_appliance *app, enum pk_kind k, const json_t *obj)
{
	bool group = k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP;
	bool pod = k == PK_KIND_POD;
	const char *kind = pk_kind_to_string(k);
	char root[512];

	if (!group && !pod)
		return;
	pthread_mutex_lock(&app->m.lock);
	app->m.incoming[ap_type_of_root(kind)]++;
	pthread_mutex_unlock(&app->m.lock);
	if (pod && (pk_get_string(obj, "spec.nodeName") || pk_pod_group_name(obj)))
		return;
	if (group &&
	    (pk_get_string(obj, "spec.parentCompositePodGroupName") ||
	     pk_condition_get(obj, k == PK_KIND_POD_GROUP ? "PodGroupInitiallyScheduled"
							  : "CompositePodGroupInitiallyScheduled")))
		return;
	snprintf(root, sizeof(root), "%s %s/%s", kind, pk_namespace(obj), pk_name(obj));
	ap_metrics_queue(&app->m, root, "active");
}

static struct pk_write_ref ref_of(struct pk_appliance *app, enum pk_kind kind, const char *ns,
				  const char *name);

/* The condition types the scheduler writes, by kind. */
static bool own_condition(enum pk_kind k, const char *type)
{
	return (k == PK_KIND_POD && strcmp(type, "PodScheduled") == 0) ||
	       (k == PK_KIND_POD_GROUP && strcmp(type, "PodGroupInitiallyScheduled") == 0) ||
	       (k == PK_KIND_COMPOSITE_POD_GROUP &&
		strcmp(type, "CompositePodGroupInitiallyScheduled") == 0);
}

static void stale_clear(struct pk_appliance *app)
{
	for (size_t i = 0; i < app->nstale; i++) {
		free(app->stale[i].ns);
		free(app->stale[i].name);
		pk_write_cond_clear(&app->stale[i].cond);
	}
	app->nstale = 0;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* One condition to write again; false on ENOMEM (then nothing is kept). */
static bool stale_add(struct pk_appliance *app, enum pk_kind k, const json_t *obj, const json_t *c)
{
	struct ap_stale *e;

	if (app->nstale == app->capstale) {
		size_t cap = app->capstale ? app->capstale * 2 : 16;
		struct ap_stale *v = realloc(app->stale, cap * sizeof(*v));

		if (!v)
			return false;
		app->stale = v;
		app->capstale = cap;
	}
	e = &app->stale[app->nstale];
	*e = (struct ap_stale){
	    .kind = k,
	    .ns = dup_or_empty(pk_namespace(obj)),
	    .name = dup_or_empty(pk_name(obj)),
	    .cond =
		{
		    .type = dup_or_empty(json_string_value(json_object_get(c, "type"))),
		    .status = strdup(json_string_value(json_object_get(c, "status")) ?: "Unknown"),
		    .reason = dup_or_empty(json_string_value(json_object_get(c, "reason"))),
		    .message = dup_or_empty(json_string_value(json_object_get(c, "message"))),
		},
	};
	if (!e->ns || !e->name || !e->cond.type || !e->cond.status || !e->cond.reason ||
	    !e->cond.message) {
		free(e->ns);
		free(e->name);
		pk_write_cond_clear(&e->cond);
		return false;
	}
	app->nstale++;
	return true;
}

/*
 * A spec edit raised metadata.generation past what the scheduler's
 * conditions observed: note them to be written again, unchanged but for
 * observedGeneration (as a controller does once it has seen the new spec).
 */
static void note_stale_conditions(struct pk_appliance *app, enum pk_kind k, const json_t *obj)
{
	json_int_t gen = json_integer_value(pk_get(obj, "metadata.generation"));
	json_t *c;
	size_t i;

	json_array_foreach(pk_get(obj, "status.conditions"), i, c)
	{
		json_t *og = json_object_get(c, "observedGeneration");
		const char *type = json_string_value(json_object_get(c, "type"));

		if (!type || !own_condition(k, type) || !json_is_integer(og) ||
		    json_integer_value(og) >= gen)
			continue;
		if (!stale_add(app, k, obj, c))
			return;
	}
}

/* Into the open batch: the conditions noted by note_stale_conditions(). */
static void batch_stale_conditions(struct pk_appliance *app)
{
	for (size_t i = 0; i < app->nstale; i++) {
		const struct ap_stale *e = &app->stale[i];
		struct pk_write_ref ref = ref_of(app, e->kind, e->ns, e->name);

		pk_writer_set_condition(app->writer, &ref, e->cond.type, e->cond.status,
					e->cond.reason, e->cond.message);
	}
	stale_clear(app);
}

static int on_event(const struct pk_source_event *ev, void *arg)
{
	struct pk_appliance *app = arg;
	struct ap_decision d;
	const char *kind = ev->kind ? ev->kind->kind : NULL;
	enum pk_kind k = ev->kind ? ev->kind->pk : PK_KIND_UNKNOWN;

	if (hooks_kind(app, ev->kind)) {
		ap_hooks_call(app, event, ev, NULL);
		return 0;
	}
	if (ap_classify(app->cache, ev->type, ev->kind, ev->object, ev->rv, &d) < 0) {
		/* out of memory: the scheduler misses it; the hooks still see every event */
		d = (struct ap_decision){.verdict = AP_SKIP};
		ap_hooks_call(app, event, ev, &d);
		return 0;
	}
	AP_COUNT(app, events);
	ap_log(app, 3, "event %s %s %s/%s rv %llu: %s", pk_event_type_to_string(ev->type), kind,
	       pk_namespace(ev->object), pk_name(ev->object), (unsigned long long)ev->rv,
	       d.verdict == AP_FEED	? "requeue"
	       : d.verdict == AP_REMOVE ? "remove"
					: "skip");
	if (d.verdict != AP_SKIP)
		ap_backoff_clear(app, k, pk_namespace(ev->object), pk_name(ev->object));
	switch (d.verdict) {
	case AP_FEED:
		sched_feed(app, ev->object);
		note_incoming(app, k, ev->object);
		note_stale_conditions(app, k, ev->object);
		break;
	case AP_REMOVE:
		sched_remove(app, k, ev->object);
		if (k == PK_KIND_POD || k == PK_KIND_POD_GROUP ||
		    k == PK_KIND_COMPOSITE_POD_GROUP) {
			char root[512];

			snprintf(root, sizeof(root), "%s %s/%s", kind, pk_namespace(ev->object),
				 pk_name(ev->object));
			ap_metrics_queue(&app->m, root, NULL);
		}
		break;
	case AP_SKIP:
		AP_COUNT(app, events_skipped);
		/* a namespaceSelector reads a Namespace's labels */
		if (ev->kind == &pk_type_namespace && ev->type != PK_EVENT_DELETED)
			sched_feed(app, ev->object);
		break;
	}
	ap_hooks_call(app, event, ev, &d);
	return 0;
}

static int drain_events(struct pk_appliance *app)
{
	for (;;) {
		uint64_t last = app->rv;
		int r = app->src->events_since(app->src_arg, app->rv, AP_EVENT_BATCH, on_event, app,
					       &last);

		if (r == -PK_SOURCE_EGONE) {
			ap_log(app, 1, "appliance: change stream lost events; listing again");
			AP_COUNT(app, relists);
			return load_all(app);
		}
		if (r < 0)
			return r;
		if (last == app->rv)
			return 0;
		app->rv = last;
	}
}

/* ---- applying a round's actions ---------------------------------------------------- */

/* The resourceVersion the loop last saw of an object: the write's precondition. */
static struct pk_write_ref ref_of(struct pk_appliance *app, enum pk_kind kind, const char *ns,
				  const char *name)
{
	return (struct pk_write_ref){
	    .kind = pk_type_of(kind),
	    .ns = ns,
	    .name = name,
	    .rv = ap_cache_rv(app->cache, pk_type_of(kind), ns, name),
	};
}

static uint64_t write_rv(void *arg, const struct pk_type *kind, const char *ns, const char *name)
{
	struct pk_appliance *app = arg;

	return ap_cache_rv(app->cache, kind, ns, name);
}

static void write_failed(void *arg, const struct pk_sched_action *a, int r)
{
	struct pk_appliance *app = arg;

	AP_COUNT(app, write_errors);
	ap_log(app, 0, "batching a write of %s %s/%s: %s", a->kind->kind, a->ns, a->name,
	       strerror(-r));
}

/*
 * Queue one cycle's actions into the open batch, as every driver does
 * (pk_sched_result_write()), each object at the resourceVersion the loop
 * last saw.
 */
static void batch_result(struct pk_appliance *app, const struct pk_sched_result *res)
{
	static const struct pk_sched_write_ops ops = {.rv = write_rv, .failed = write_failed};

	pk_sched_result_write(app->writer, res, &ops, app);
}

/*
 * Hand an object whose write failed back to the scheduler as it is now:
 * forgotten and taken again, so a pod assumed bound is pending (or bound
 * where the store says) and what was said about it is said again.
 */
static void hand_back(struct pk_appliance *app, const struct pk_write_result *wr)
{
	enum pk_kind kind = wr->kind->pk;
	json_t *obj = json_incref(wr->object);
	int r = obj ? 0 : pk_writer_get(app->writer, wr->kind, wr->ns, wr->name, &obj);

	if (r < 0 && r != -ENOENT) {
		/*
		 * No answer from where the loop writes: take the object back as
		 * the change stream last showed it (a victim still bound holds
		 * its place; its deletion, if it happened, arrives as an event).
		 */
		ap_resync(app, kind, wr->ns, wr->name);
		return;
	}
	pk_sched_remove(app->sched, pk_type_of(kind), wr->ns, wr->name);
	if (r == 0) {
		sched_feed(app, obj);
		ap_cache_note(app->cache, pk_type_of(kind), obj);
	} else if (r == -ENOENT) {
		ap_cache_forget(app->cache, pk_type_of(kind), wr->ns, wr->name);
	}
	json_decref(obj);
}

/*
 * A pod that holds a place (a victim whose eviction failed, or a bound pod
 * whose condition write failed) never leaves the scheduler for a write
 * backoff: its capacity would look free and be given away.
 */
static bool holds_place(struct pk_appliance *app, const struct pk_write_item *it)
{
	json_t *obj = NULL;
	bool bound;

	if (it->kind->pk != PK_KIND_POD || it->node)
		return false;
	if (it->evict)
		return true;
	if (app->src->get(app->src_arg, &pk_type_pod, it->ns, it->name, &obj) < 0)
		return false;
	bound = pk_get_string(obj, "spec.nodeName") != NULL;
	json_decref(obj);
	return bound;
}

static void log_written(struct pk_appliance *app, const struct pk_write_item *it)
{
	if (it->node) {
		AP_COUNT(app, bindings);
		ap_log(app, 2, "bound pod %s/%s to node %s", it->ns, it->name, it->node);
	}
	if (it->evict)
		ap_log(app, 2, "preempted pod %s/%s", it->ns, it->name);
	for (size_t c = 0; c < it->nconds; c++)
		AP_COUNT(app, conditions);
}

/*
 * A condition-only item to write again on the current object: copies of its
 * reference (under the current resourceVersion) and conditions, since a new
 * batch frees the old batch's strings.
 */
struct cond_retry {
	struct pk_write_ref ref; /* ns and name owned */
	struct pk_write_cond *conds;
	size_t nconds;
};

static void cond_retry_clear(struct cond_retry *r)
{
	free((char *)r->ref.ns);
	free((char *)r->ref.name);
	for (size_t c = 0; c < r->nconds; c++)
		pk_write_cond_clear(&r->conds[c]);
	free(r->conds);
	memset(r, 0, sizeof(*r));
}

/* r: item it's conditions, to be set on cur (the stored object); -ENOMEM. */
static int cond_retry_set(struct cond_retry *r, const struct pk_write_item *it, const json_t *cur)
{
	const char *rv = pk_get_string(cur, "metadata.resourceVersion");

	r->ref = (struct pk_write_ref){.kind = it->kind,
				       .ns = dup_or_empty(it->ns),
				       .name = dup_or_empty(it->name),
				       .rv = rv ? strtoull(rv, NULL, 10) : 0};
	r->conds = calloc(it->nconds ? it->nconds : 1, sizeof(*r->conds));
	if (!r->ref.ns || !r->ref.name || !r->conds)
		return -ENOMEM;
	for (size_t c = 0; c < it->nconds; c++, r->nconds++) {
		struct pk_write_cond *d = &r->conds[c];

		d->type = dup_or_empty(it->conds[c].type);
		d->status = dup_or_empty(it->conds[c].status);
		d->reason = dup_or_empty(it->conds[c].reason);
		d->message = dup_or_empty(it->conds[c].message);
		if (!d->type || !d->status || !d->reason || !d->message) {
			r->nconds++;
			return -ENOMEM;
		}
	}
	return 0;
}

/* A new batch of the retried items' conditions; frees them. */
static void retry_conditions(struct pk_appliance *app, struct cond_retry *retry, size_t n)
{
	pk_writer_batch_begin(app->writer);
	for (size_t i = 0; i < n; i++) {
		for (size_t c = 0; c < retry[i].nconds; c++)
			pk_writer_set_condition(app->writer, &retry[i].ref, retry[i].conds[c].type,
						retry[i].conds[c].status, retry[i].conds[c].reason,
						retry[i].conds[c].message);
		cond_retry_clear(&retry[i]);
	}
}

/*
 * A failed item of a committed batch.  A lost precondition hands the object
 * back at once (someone else changed it: the next try works on the current
 * object); any other failure would repeat at once, so the object waits in
 * write_backoff.c.  Returns true when a condition-only item should be tried
 * again on the current object.
 */
static bool item_failed(struct pk_appliance *app, const struct pk_write_item *it,
			const struct pk_write_result *wr, bool may_retry)
{
	enum pk_kind kind = wr->kind->pk;
	bool cond_only = !it->node && !it->evict && it->kind->pk != PK_KIND_PERSISTENT_VOLUME_CLAIM;

	if (wr->error == -ENOENT && (cond_only || it->evict)) {
		ap_cache_forget(app->cache, pk_type_of(kind), wr->ns, wr->name);
		ap_backoff_clear(app, kind, wr->ns, wr->name);
		return false; /* nothing left to say anything about */
	}
	if (it->node)
		AP_COUNT(app, binding_conflicts);
	else
		AP_COUNT(app, write_errors);
	if (wr->error != -PK_WRITE_ECONFLICT && wr->error != -ENOENT && !holds_place(app, it)) {
		if (wr->object)
			ap_cache_note(app->cache, pk_type_of(kind), wr->object);
		ap_backoff_failed(app, kind, wr->ns, wr->name, wr->error);
		return false;
	}
	ap_log(app, 1, "writing %s %s/%s failed: %s; %s", pk_kind_to_string(kind), wr->ns, wr->name,
	       pk_write_strerror(wr->error),
	       cond_only && may_retry ? "again on the current object" : "re-reading it");
	if (cond_only && wr->error == -PK_WRITE_ECONFLICT && wr->object && may_retry)
		return true;
	hand_back(app, wr);
	return false;
}

/*
 * Commit the round's batch.  Written objects are noted (their echo in the
 * change stream is then skipped).  A condition-only item that lost its
 * precondition is tried again on the current object (up to
 * AP_CONDITION_RETRIES times): a condition says what the scheduler decided
 * and stands whatever else changed.  Any other failed object is handed back
 * (item_failed()).
 */
#define AP_CONDITION_RETRIES 2
static void commit_batch(struct pk_appliance *app)
{
	for (int attempt = 0; attempt <= AP_CONDITION_RETRIES; attempt++) {
		const struct pk_write_result *res = NULL;
		const struct pk_write_batch *b = pk_writer_batch(app->writer);
		struct cond_retry *retry = NULL;
		size_t n = 0, nretry = 0;
		int r = pk_writer_batch_commit(app->writer, &res, &n);
		int64_t now = ap_now_ms(); /* one instant: pods bound together end together */

		if (r < 0)
			ap_log(app, 0, "write batch of %zu objects: %s", n, strerror(-r));
		for (size_t i = 0; i < n; i++) {
			const struct pk_write_item *it = &b->items[i];
			const struct pk_write_result *wr = &res[i];

			if (wr->error == 0) {
				if (wr->object)
					ap_cache_note(app->cache, wr->kind, wr->object);
				ap_backoff_clear(app, wr->kind->pk, wr->ns, wr->name);
				log_written(app, it);
				continue;
			}
			if (!item_failed(app, it, wr, attempt < AP_CONDITION_RETRIES))
				continue;
			if (!retry)
				retry = calloc(n, sizeof(*retry));
			if (!retry || cond_retry_set(&retry[nretry], it, wr->object) < 0) {
				if (retry)
					cond_retry_clear(&retry[nretry]);
				hand_back(app, wr); /* ENOMEM: read again, decided again */
				continue;
			}
			nretry++;
		}
		ap_hooks_call(app, written, b, res, n, now);
		if (nretry == 0) {
			free(retry);
			return;
		}
		retry_conditions(app, retry, nretry);
		free(retry);
	}
}

static const char *queue_of(enum pk_sched_outcome o)
{
	switch (o) {
	case PK_SCHED_SCHEDULED:
		return NULL;
	case PK_SCHED_UNSCHEDULABLE:
		return "backoff";
	case PK_SCHED_UNRESOLVABLE:
	case PK_SCHED_INVALID:
		return "unschedulable";
	case PK_SCHED_GATED:
		return "gated";
	default:
		return NULL;
	}
}

/* A round of the loop's cycles: when each began (for the metrics). */
struct ap_round {
	struct pk_appliance *app;
	int64_t t0; /* ns */
};

static bool ap_cycle_begins(void *arg, int64_t *ret_now_ms)
{
	struct ap_round *rd = arg;

	if (atomic_load(&rd->app->stopping))
		return false;
	rd->t0 = ap_now_ns();
	*ret_now_ms = ap_now_ms();
	return true;
}

/* A cycle's actions go into the round's batch; victims end the round. */
static int ap_cycle_result(void *arg, const struct pk_sched_result *res, int64_t now_ms)
{
	struct ap_round *rd = arg;
	struct pk_appliance *app = rd->app;
	int64_t t1 = ap_now_ns();

	(void)now_ms;
	batch_result(app, res);
	if (res->outcome != PK_SCHED_IDLE && res->outcome != PK_SCHED_GATED) {
		ap_metrics_cycle(&app->m, res, (double)(t1 - rd->t0) / 1e9,
				 (double)(ap_now_ns() - rd->t0) / 1e9);
		ap_metrics_profile(&app->m, app->sched);
		if (res->root)
			ap_metrics_queue(&app->m, res->root, queue_of(res->outcome));
		ap_log(app, 2, "cycle: %s: %s, %zu bound, %zu preempted",
		       res->root ? res->root : "?",
		       res->outcome == PK_SCHED_SCHEDULED      ? "scheduled"
		       : res->outcome == PK_SCHED_INVALID      ? "invalid"
		       : res->outcome == PK_SCHED_UNRESOLVABLE ? "unresolvable"
							       : "unschedulable",
		       res->bound, res->preempted);
	}
	/*
	 * Victims end the round: their evictions commit before the
	 * preemptor's binding is batched, so a victim whose eviction is
	 * refused (changed meanwhile) is handed back still holding its
	 * place and the preemptor finds no room, never a full node.
	 */
	return res->preempted > 0;
}

/* Cycles until nothing is eligible; returns the earliest backoff expiry or 0. */
static int64_t run_cycles(struct pk_appliance *app, bool *ret_more)
{
	static const struct pk_sched_round_ops ops = {
	    .cycle_begins = ap_cycle_begins,
	    .result = ap_cycle_result,
	    .max_cycles = AP_CYCLES_PER_ROUND,
	};
	struct ap_round rd = {.app = app};
	struct pk_sched_round round;
	int r = pk_sched_round(app->sched, 0, &ops, &rd, &round);

	*ret_more = false;
	if (r < 0) {
		ap_log(app, 0, "scheduling cycle failed: %s%s%s", strerror(-r),
		       r == -EUCLEAN ? ": " : "",
		       r == -EUCLEAN ? pk_sched_check_message(app->sched) : "");
		return 0;
	}
	if (round.idle)
		return round.has_retry ? round.retry_at_ms : 0;
	*ret_more = true;
	return 0;
}

/*
 * Each hooks table's round, in order; ret_due: the earliest time one is
 * next due, or 0.  False when no table has a round.
 */
static bool hooks_round(struct pk_appliance *app, int64_t *ret_due)
{
	bool any = false;

	*ret_due = 0;
	for (size_t i = 0; i < app->cfg.nhooks; i++) {
		const struct pk_appliance_hook *h = &app->cfg.hooks[i];
		int64_t due;

		if (!h->ops->round)
			continue;
		any = true;
		due = h->ops->round(h->arg, ap_now_ms());
		if (due > 0 && (*ret_due == 0 || due < *ret_due))
			*ret_due = due;
	}
	return any;
}

static void *loop_main(void *arg)
{
	struct pk_appliance *app = arg;

	while (!atomic_load(&app->stopping)) {
		bool more = false;
		int64_t retry, wait, hooks_due = 0;
		int r = drain_events(app);

		if (r < 0) {
			ap_log(app, 0, "appliance: change stream: %s", strerror(-r));
			if (app->src->wait(app->src_arg, app->rv, 1000) == -ECANCELED)
				break;
			continue;
		}
		if (hooks_round(app, &hooks_due) && drain_events(app) < 0)
			continue; /* what the hooks wrote reaches the scheduler before the cycles */
		if (app->cfg.may_schedule && !app->cfg.may_schedule(app->cfg.may_schedule_arg)) {
			app->scheduling = false;
			stale_clear(app); /* the leader writes them */
			if (app->src->wait(app->src_arg, app->rv, AP_TICK_MS) == -ECANCELED)
				break;
			continue;
		}
		/*
		 * What made may_schedule() true (an informer's list delivered, in
		 * attach mode) may have come after the drain above: drain again, so
		 * that a round never sees a list's pending pods without its bound
		 * ones (a restarted leader would bind onto full nodes).
		 */
		if (app->cfg.may_schedule && drain_events(app) < 0)
			continue;
		/*
		 * Leading anew (a start, a takeover, the caches current again): a
		 * fresh scheduler from one listing of the source in kind order,
		 * Nodes before the Pods bound to them.  Fed in the informers' order
		 * instead, pods bound to a node not yet known took no capacity on
		 * it, and a restarted leader bound gangs onto full nodes.
		 */
		if (app->cfg.may_schedule && !app->scheduling) {
			if (load_all(app) < 0)
				continue;
			app->scheduling = true;
		}
		int64_t t0 = ap_now_ns(), t1, t2;
		int64_t released = ap_backoff_release(app, ap_now_ms());
		size_t nwrites;

		pk_writer_batch_begin(app->writer);
		batch_stale_conditions(app);
		retry = run_cycles(app, &more);
		if (released > 0 && (retry == 0 || released < retry))
			retry = released;
		t1 = ap_now_ns();
		nwrites = pk_writer_batch_size(app->writer);
		commit_batch(app);
		t2 = ap_now_ns();
		if (nwrites)
			ap_log(app, 3, "round: cycles %.2f ms, %zu objects written in %.2f ms",
			       (double)(t1 - t0) / 1e6, nwrites, (double)(t2 - t1) / 1e6);
		if (more)
			continue;
		wait = AP_TICK_MS;
		if (hooks_due > 0 && (retry <= 0 || hooks_due < retry))
			retry = hooks_due;
		if (retry > 0) {
			int64_t d = retry - ap_now_ms();

			wait = d < 0 ? 0 : d < wait ? d : wait;
		}
		if (app->src->wait(app->src_arg, app->rv, (int)wait) == -ECANCELED)
			break;
	}
	return NULL;
}

/* ---- start and stop ---------------------------------------------------------------- */

int pk_appliance_config_add_hooks(struct pk_appliance_config *cfg,
				  const struct pk_appliance_hooks *ops, void *arg)
{
	if (!cfg || !ops)
		return -EINVAL;
	if (cfg->nhooks >= PK_APPLIANCE_MAX_HOOKS)
		return -ENOSPC;
	cfg->hooks[cfg->nhooks++] = (struct pk_appliance_hook){.ops = ops, .arg = arg};
	return 0;
}

/* What a configuration the loop does not take still owned: its writer and hooks. */
static void config_release(const struct pk_appliance_config *cfg)
{
	pk_writer_free(cfg->writer);
	for (size_t i = 0; i < cfg->nhooks && i < PK_APPLIANCE_MAX_HOOKS; i++)
		if (cfg->hooks[i].ops && cfg->hooks[i].ops->free)
			cfg->hooks[i].ops->free(cfg->hooks[i].arg);
}

static bool config_valid(const struct pk_appliance_config *cfg)
{
	if (!cfg->source || !cfg->writer || cfg->nhooks > PK_APPLIANCE_MAX_HOOKS)
		return false;
	for (size_t i = 0; i < cfg->nhooks; i++)
		if (!cfg->hooks[i].ops)
			return false;
	return true;
}

/* Each hooks table's start, in order, until one fails. */
static int hooks_start(struct pk_appliance *app, char *err, size_t errlen)
{
	for (size_t i = 0; i < app->cfg.nhooks; i++) {
		const struct pk_appliance_hook *h = &app->cfg.hooks[i];
		int r = h->ops->start ? h->ops->start(h->arg, app, err, errlen) : 0;

		if (r < 0)
			return r;
	}
	return 0;
}

int pk_appliance_start(const struct pk_appliance_config *cfg, struct pk_appliance **ret, char *err,
		       size_t errlen)
{
	struct pk_appliance *app;
	int r;

	if (!ret || !cfg || !config_valid(cfg)) {
		if (cfg)
			config_release(cfg);
		return -EINVAL;
	}
	app = calloc(1, sizeof(*app));
	if (!app) {
		config_release(cfg);
		return -ENOMEM;
	}
	app->cfg = *cfg;
	ap_backoff_init(app);
	app->src = cfg->source;
	app->src_arg = cfg->source_arg;
	app->writer = cfg->writer;
	app->cfg.writer = NULL;
	atomic_init(&app->stopping, false);
	r = ap_metrics_init(&app->m);
	if (r == 0)
		r = hooks_start(app, err, errlen);
	if (r == 0)
		r = load_all(app);
	if (r == 0) {
		r = -pthread_create(&app->thread, NULL, loop_main, app);
		app->started = r == 0;
	}
	if (r < 0) {
		if (err && errlen && !*err)
			snprintf(err, errlen, "appliance: %s", strerror(-r));
		pk_appliance_stop(app);
		return r;
	}
	ap_log(app, 1, "appliance: scheduling loop running (writes: %s)",
	       pk_writer_name(app->writer));
	*ret = app;
	return 0;
}

void pk_appliance_stop(struct pk_appliance *app)
{
	if (!app)
		return;
	atomic_store(&app->stopping, true);
	if (app->started) {
		/* the source's wait wakes at least every AP_TICK_MS */
		pthread_join(app->thread, NULL);
	}
	ap_hooks_call(app, free);
	pk_sched_free(app->sched);
	ap_cache_free(app->cache);
	pk_writer_free(app->writer);
	stale_clear(app);
	free(app->stale);
	ap_backoff_free_all(app);
	ap_metrics_fini(&app->m);
	free(app);
}

void pk_appliance_wrote(struct pk_appliance *app, const struct pk_type *type, json_t *obj)
{
	enum pk_kind kind = type ? type->pk : PK_KIND_UNKNOWN;
	if (!app || !kind || !obj)
		return;
	ap_cache_note(app->cache, pk_type_of(kind), obj);
	sched_feed(app, obj);
}

void *pk_appliance_hooks_arg(const struct pk_appliance *app)
{
	return app && app->cfg.nhooks ? app->cfg.hooks[app->cfg.nhooks - 1].arg : NULL;
}

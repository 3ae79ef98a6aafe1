/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues.c — Kueue's admission (kueue.x-k8s.io/v1beta2 ClusterQueue,
 * LocalQueue, ResourceFlavor, Cohort) of Jobs and JobSets, by quota and
 * placement in one decision.
 *
 * A Job or JobSet labelled kueue.x-k8s.io/queue-name is queued in that
 * LocalQueue of its namespace; until admitted the workload builder treats it
 * as suspended (no pods; wb_suspended()).  One pass, after any change to a
 * queue, a flavor, a Cohort, a Namespace or a queued Job or JobSet,
 * recomputes every ClusterQueue's usage from its admitted workloads (those
 * carrying the admission annotation, not suspended, not finished; shared in
 * cohorts by queues_tree.c), then goes through the pending ones by priority,
 * then oldest first (with fair sharing, the heads of a cohort's
 * ClusterQueues lowest share first).  A workload is admitted when, for each
 * resource group that covers a resource it requests, one flavor (in order,
 * as spec.flavorFungibility picks it: queues_flavor.c) has quota left for
 * all of them, its own or borrowed within its cohort, or can have it by
 * preempting (spec.preemption: borrowers of the cohort, lower priority in
 * its queue), and when the scheduling core places all its pods on the
 * cluster as it is (queues_place.c) in those flavors' nodes (else the next
 * flavors are tried).  The admission is one write of the Job or JobSet: the
 * annotation (the ClusterQueue and the flavor of each group), spec.suspend
 * false and the flavors' node labels and tolerations in its pod templates;
 * each victim is one write too (admission taken back, suspended).  Under
 * StrictFIFO a workload that is not admitted blocks the ones behind it;
 * under BestEffortFIFO (the default) they are tried.  A workload whose
 * namespace the ClusterQueue's namespaceSelector does not select (a null
 * selector selects none), whose LocalQueue or ClusterQueue is missing, or
 * that requests a resource no group covers is never admitted and gets a
 * Warning Event saying why.  Each pending one gets the keys of its place in
 * its ClusterQueue's order and why it waits as annotations; then each
 * ClusterQueue's and LocalQueue's status (pending, reserving and admitted
 * counts, usage per flavor and resource, what is borrowed, the condition
 * Active) and Kueue's gauges.
 *
 * A workload's requests are its pods' (containers summed as the scheduler
 * counts them) times its pods: a Job's parallelism (at most completions), a
 * JobSet's replicas times each replicated Job's; "pods" counts them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/builder/builder.h"
#include "kernel/controllers/queues-internal.h"
#include "topology/topology.h"

/* ---- requests ---------------------------------------------------------------------- */

int64_t q_int_or(const json_t *obj, const char *path, int64_t dflt)
{
	json_t *v = pk_get(obj, path);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* Add n times the requests of a pod of template's spec to req. */
int q_add_pod_requests(json_t *req, const json_t *template, int64_t n)
{
	json_t *pod = json_pack("{s:s,s:s,s:{s:s},s:O}", "apiVersion", "v1", "kind", "Pod",
				"metadata", "name", "q", "spec", pk_get(template, "spec"));
	struct pk_pod *p = NULL;
	int r;

	if (!pod || !pk_get(template, "spec")) {
		json_decref(pod);
		return pod ? 0 : -ENOMEM;
	}
	r = pk_pod_decode(pod, &p, NULL);
	for (size_t i = 0; r == 0 && i < p->nrequests; i++) {
		const char *name = p->requests[i].name;
		int64_t have = json_integer_value(json_object_get(req, name));

		json_object_set_new(req, name, json_integer(have + p->requests[i].milli * n));
	}
	if (r == 0)
		json_object_set_new(
		    req, "pods",
		    json_integer(json_integer_value(json_object_get(req, "pods")) + n * 1000));
	pk_pod_free(p);
	json_decref(pod);
	return r == -ENOMEM ? r : 0;
}

/* A Job spec's pods: parallelism (default 1), at most completions. */
static int64_t job_pods(const json_t *spec)
{
	int64_t par = q_int_or(spec, "parallelism", 1), comp = q_int_or(spec, "completions", -1);

	return comp >= 0 && comp < par ? comp : par;
}

static json_t *workload_requests(const json_t *obj, enum pk_kind kind)
{
	json_t *req = json_object(), *rj;
	size_t i;

	if (!req)
		return NULL;
	if (kind == PK_KIND_JOB) {
		if (q_add_pod_requests(req, ctl_at(obj, "spec", "template"),
				       job_pods(pk_get(obj, "spec"))) < 0)
			goto fail;
		return req;
	}
	json_array_foreach(ctl_at(obj, "spec", "replicatedJobs"), i, rj)
	{
		const json_t *jspec = ctl_at(rj, "template", "spec");
		bool shorthand = !pk_get(jspec, "template");
		int64_t replicas = q_int_or(rj, "replicas", 1);

		if (q_add_pod_requests(
			req, shorthand ? pk_get(rj, "template") : pk_get(jspec, "template"),
			replicas * (shorthand ? 1 : job_pods(jspec))) < 0)
			goto fail;
	}
	return req;
fail:
	json_decref(req);
	return NULL;
}

/* ---- the listing ------------------------------------------------------------------- */

static void state_clear(struct q_state *s)
{
	for (size_t i = 0; i < s->nw; i++) {
		json_decref(s->w[i].requests);
		json_decref(s->w[i].flavors);
		free(s->w[i].cq);
		free(s->w[i].why);
		free(s->w[i].inadmissible);
		free(s->w[i].incomplete);
		json_decref(s->w[i].group);
		json_decref(s->w[i].pods);
	}
	free(s->w);
	json_decref(s->cqs);
	json_decref(s->lqs);
	json_decref(s->flavors);
	json_decref(s->namespaces);
	json_decref(s->cohorts);
	json_decref(s->classes);
	json_decref(s->wpcs);
	json_decref(s->pods);
	json_decref(s->groups);
	q_cache_carry(s); /* the quota tree kept, with the placement scheduler */
	q_tree_free(s->tree);
	q_place_free(s->place);
	json_decref(s->jobs);
	json_decref(s->jobsets);
	json_decref(s->usage);
	json_decref(s->counts);
	json_decref(s->lqusage);
	json_decref(s->dirty);
	json_decref(s->visit);
	memset(s, 0, sizeof(*s));
}

static bool finished(const json_t *obj, enum pk_kind kind)
{
	return kind == PK_KIND_JOB ? wb_job_finished(obj) : wb_jobset_finished(obj);
}

/* The admission annotation "CQ/F1,F2": its ClusterQueue and flavors. */
static void parse_admission(struct q_workload *w)
{
	const char *a = json_string_value(json_object_get(ctl_at(w->obj, "metadata", "annotations"),
							  WB_ANNOTATION_QUEUE_ADMISSION));
	const char *slash = a ? strchr(a, '/') : NULL;

	w->admitted = slash && !json_is_true(ctl_at(w->obj, "spec", "suspend"));
	if (!w->admitted)
		return;
	w->cq = strndup(a, (size_t)(slash - a));
	w->flavors = json_array();
	for (const char *p = slash + 1; w->flavors && *p;) {
		size_t n = strcspn(p, ",");

		json_array_append_new(w->flavors, json_stringn(p, n));
		p += n + (p[n] == ',');
	}
}

/*
 * A workload's priority, as Kueue takes it: the value of the
 * WorkloadPriorityClass its label kueue.x-k8s.io/priority-class names (one
 * that does not exist: never admitted until it does), else its pods'
 * priorityClassName (spec: a pod spec), else the globalDefault
 * PriorityClass, else 0.  Only the queue's order and preemption for quota
 * read it: the pods keep their own priority.
 */
int64_t q_priority(struct q_state *s, struct q_workload *w, const json_t *spec)
{
	const char *wpc = json_string_value(
	    json_object_get(ctl_at(w->obj, "metadata", "labels"), Q_LABEL_PRIORITY_CLASS));
	const char *name = pk_get_string(spec, "priorityClassName"), *k;
	json_t *pc;

	if (wpc && json_object_get(s->wpcs, wpc))
		return q_int_or(json_object_get(s->wpcs, wpc), "value", 0);
	if (wpc && !w->inadmissible &&
	    asprintf(&w->inadmissible, "WorkloadPriorityClass %s does not exist", wpc) < 0)
		w->inadmissible = NULL;
	if (name && json_object_get(s->classes, name))
		return q_int_or(json_object_get(s->classes, name), "value", 0);
	json_object_foreach(s->classes, k, pc)
	{
		if (json_is_true(json_object_get(pc, "globalDefault")))
			return q_int_or(pc, "value", 0);
	}
	return 0;
}

/* A Job's pod spec, a JobSet's first replicated Job's. */
static const json_t *first_pod_spec(const json_t *obj, enum pk_kind kind)
{
	return kind == PK_KIND_JOB ? pk_get(obj, "spec.template.spec")
				   : pk_get(json_array_get(pk_get(obj, "spec.replicatedJobs"), 0),
					    "template.spec.template.spec");
}

/* A workload of items (key -> object) read afresh into w, or (1) none; -ENOMEM. */
static int read_workload(struct q_state *s, const char *key, json_t *o, enum pk_kind kind,
			 struct q_workload *w)
{
	bool decoded = false, priority = false;

	if (!wb_queue_name(o) || finished(o, kind) || ctl_at(o, "metadata", "deletionTimestamp")) {
		q_cache_keep(s, kind, key, o, NULL, false);
		return 1;
	}
	*w = (struct q_workload){.obj = o,
				 .kind = kind,
				 .kind_name = pk_kind_to_string(kind),
				 .ns = pk_namespace(o),
				 .name = pk_name(o),
				 .queue = wb_queue_name(o),
				 .created = ctl_at_string(o, "metadata", "creationTimestamp")};
	if (!q_cache_decoded(s, kind, key, w, &priority)) {
		decoded = true;
		w->requests = workload_requests(o, kind);
		if (!w->requests)
			return -ENOMEM;
	}
	if (!priority)
		w->priority = q_priority(s, w, first_pod_spec(o, kind));
	parse_admission(w);
	q_cache_keep(s, kind, key, o, w, decoded);
	return 0;
}

/* The workload of o (key in items) into s->w, when it is one; -ENOMEM. */
static int add_one(struct q_state *s, const char *k, json_t *o, enum pk_kind kind)
{
	struct q_workload *w = &s->w[s->nw];
	int r;

	if (s->nw >= s->capw)
		return -ENOMEM; /* (more than listed: the members out of step; not kept) */
	r = q_cache_known(s, kind, k, o, w);

	if (r == 0)
		r = read_workload(s, k, o, kind, w) == 0 ? 1 : 2;
	if (r < 0)
		return r;
	if (r == 1)
		s->nw++;
	return 0;
}

static int add_workloads(struct q_state *s, const json_t *items, enum pk_kind kind)
{
	const char *k;
	json_t *o;

	json_object_foreach((json_t *)items, k, o)
	{
		if (add_one(s, k, o, kind) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The Jobs and JobSets of the quota keys this pass visits (q_cache_plan), the others untouched. */
static int add_visited(struct q_state *s)
{
	const char *qk, *mk;
	json_t *v, *o;

	json_object_foreach(s->visit, qk, v) json_object_foreach(q_cache_members(s, qk), mk, v)
	{
		bool job = mk[0] == '0';

		o = json_object_get(job ? s->jobs : s->jobsets, mk + 1);
		if (o && add_one(s, mk + 1, o, job ? PK_KIND_JOB : PK_KIND_JOBSET) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The members of the quotas a pass visits: at most the workloads add_visited adds. */
static size_t visited_count(struct q_state *s)
{
	const char *qk;
	json_t *v;
	size_t n = 0;

	json_object_foreach(s->visit, qk, v) n += json_object_size(q_cache_members(s, qk));
	return n;
}

/* Kueue's queue order: higher priority first, then older, then by namespace and name. */
static int cmp_workload(const void *a, const void *b)
{
	const struct q_workload *x = a, *y = b;
	int c = (x->priority < y->priority) - (x->priority > y->priority);

	if (c == 0)
		c = strcmp(x->created ? x->created : "", y->created ? y->created : "");
	if (c == 0)
		c = strcmp(x->ns ? x->ns : "", y->ns ? y->ns : "");
	return c ? c : strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* The pass's listings: the cache's (queues_cache.c), brought up to date. */
static int state_load(struct pk_ctl *ctl, struct q_state *s)
{
	size_t n;
	int r = q_cache_sync(ctl);

	if (r == 0)
		r = q_cache_view(ctl, s);
	if (r == 0)
		r = q_cache_plan(s);
	if (r < 0)
		return r;
	s->usage = json_object();
	s->counts = json_object();
	s->lqusage = json_object();
	s->dirty = json_object();
	if (!s->usage || !s->counts || !s->lqusage || !s->dirty || q_cache_tree(s) < 0)
		return -ENOMEM;
	n = s->visit ? visited_count(s)
		     : json_object_size(s->jobs) + json_object_size(s->jobsets) +
			   json_array_size(s->pods);
	s->w = calloc(n ? n : 1, sizeof(*s->w));
	if (!s->w)
		return -ENOMEM;
	s->capw = n;
	if (s->visit ? add_visited(s) < 0
		     : add_workloads(s, s->jobs, PK_KIND_JOB) < 0 ||
			   add_workloads(s, s->jobsets, PK_KIND_JOBSET) < 0 || q_pods_load(s) < 0)
		return -ENOMEM;
	qsort(s->w, s->nw, sizeof(*s->w), cmp_workload);
	return 0;
}

/* ---- quota ------------------------------------------------------------------------- */

/* map[a][b] (objects made on the way). */
json_t *q_sub(json_t *map, const char *a)
{
	json_t *x = json_object_get(map, a);

	if (!x) {
		x = json_object();
		json_object_set_new(map, a, x);
	}
	return x;
}

int64_t q_milli_at(const json_t *map, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(map, a), b));
}

static void add_milli(json_t *map, const char *a, const char *b, int64_t v)
{
	json_t *m = q_sub(map, a);

	json_object_set_new(m, b, json_integer(json_integer_value(json_object_get(m, b)) + v));
}

bool q_covers(const json_t *group, const char *resource)
{
	return q_covers_in(json_object_get(group, "coveredResources"), resource);
}

bool q_covers_in(const json_t *covered, const char *resource)
{
	size_t i;
	json_t *c;

	json_array_foreach(covered, i, c)
	{
		const char *v = json_string_value(c);

		if (v && v[0] == resource[0] && strcmp(v, resource) == 0)
			return true;
	}
	return false;
}

/* Count an admitted workload's requests in its ClusterQueue's usage and its LocalQueue's. */
void q_charge_sign(struct q_state *s, const struct q_workload *w, const char *cq,
		   const json_t *flavors, int sign)
{
	const json_t *groups = ctl_at(json_object_get(s->cqs, cq), "spec", "resourceGroups");
	json_t *cqu = q_sub(s->usage, cq), *lqu;
	char lq[600];
	const char *res;
	json_t *v;

	q_join(lq, sizeof(lq), w->ns, w->queue);
	lqu = q_sub(s->lqusage, lq);
	json_object_foreach(w->requests, res, v)
	{
		size_t g;
		json_t *group;

		json_array_foreach(groups, g, group)
		{
			const char *f = json_string_value(json_array_get(flavors, g));

			if (!q_covers(group, res) || !f || strcmp(f, "-") == 0)
				continue;
			add_milli(cqu, f, res, sign * json_integer_value(v));
			add_milli(lqu, f, res, sign * json_integer_value(v));
			q_tree_charge(s->tree, cq, f, res, sign * json_integer_value(v));
		}
	}
}

static void charge(struct q_state *s, const struct q_workload *w, const char *cq,
		   const json_t *flavors)
{
	q_charge_sign(s, w, cq, flavors, 1);
}

/* ---- namespaces ---------------------------------------------------------------------- */

static bool req_matches(const json_t *labels, const json_t *e)
{
	const char *key = json_string_value(json_object_get(e, "key"));
	const char *op = json_string_value(json_object_get(e, "operator"));
	const char *have = key ? json_string_value(json_object_get(labels, key)) : NULL;
	bool in = false;
	size_t i;
	json_t *x;

	if (!key || !op)
		return false;
	if (strcmp(op, "Exists") == 0)
		return have != NULL;
	if (strcmp(op, "DoesNotExist") == 0)
		return have == NULL;
	json_array_foreach(json_object_get(e, "values"), i, x) in |=
	    have && json_string_value(x) && strcmp(have, json_string_value(x)) == 0;
	return strcmp(op, "In") == 0 ? in : strcmp(op, "NotIn") == 0 ? !in : false;
}

/* Whether cq's namespaceSelector selects ns (its labels and kubernetes.io/metadata.name). */
static bool selects(const struct q_state *s, const json_t *cq, const char *ns)
{
	const json_t *sel = ctl_at(cq, "spec", "namespaceSelector"), *e;
	json_t *labels =
	    json_deep_copy(ctl_at(json_object_get(s->namespaces, ns), "metadata", "labels"));
	const char *k;
	bool ok = true;
	size_t i;

	if (!json_is_object(sel))
		return (json_decref(labels), false);
	if (!labels)
		labels = json_object();
	json_object_set_new(labels, "kubernetes.io/metadata.name", json_string(ns));
	json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), k, e) ok &=
	    json_is_string(e) && json_equal(json_object_get(labels, k), e);
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, e) ok &=
	    req_matches(labels, e);
	json_decref(labels);
	return ok;
}

/* A ClusterQueue admits when every flavor it names exists. */
bool q_cq_active(const struct q_state *s, const json_t *cq, char *missing, size_t n)
{
	const json_t *g, *f;
	size_t i, k, len = 0;

	*missing = '\0';
	CTL_ARRAY_EACH(ctl_at(cq, "spec", "resourceGroups"), i, g)
	CTL_ARRAY_EACH(json_object_get(g, "flavors"), k, f)
	{
		const char *name = json_string_value(json_object_get(f, "name"));

		if (name && !json_object_get(s->flavors, name) && len < n)
			len +=
			    (size_t)snprintf(missing + len, n - len, "%s%s", len ? " " : "", name);
	}
	return *missing == '\0';
}

/* ---- admission --------------------------------------------------------------------- */

static void count(struct q_state *s, const char *key, const char *what, int delta)
{
	json_t *c = q_sub(s->counts, key), *v = json_object_get(c, what);

	/* the pass's own count, held by no one else: changed where it is */
	if (json_is_integer(v) && v->refcount == 1)
		json_integer_set(v, json_integer_value(v) + delta);
	else
		json_object_set_new(c, what, json_integer(json_integer_value(v) + delta));
}

/* Count w as what ("pending", "admitted") in its LocalQueue and ClusterQueue (NULL: none). */
void q_count_both(struct q_state *s, const struct q_workload *w, const char *cq, const char *what,
		  int delta)
{
	char lq[600];

	q_join(lq, sizeof(lq), w->ns, w->queue);
	if (cq)
		count(s, cq, what, delta);
	count(s, lq, what, delta);
}

/* The admission annotation's value: "CQ/F1,F2". */
static void admission_value(const char *cq, const json_t *flavors, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "%s/", cq), i;
	json_t *f;

	json_array_foreach(flavors, i, f) if (len < n) len +=
	    (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", json_string_value(f));
}

/*
 * One write: the workload as admitted (q_admitted_copy, the pass's own,
 * held by the write: read only after it; a pod workload's pods, one batch).
 */
static int admit(struct pk_ctl *ctl, struct q_workload *w, const char *cq, json_t *obj,
		 json_t **ret_written)
{
	struct pk_write_ref ref = ctl_ref_of(pk_type_of(w->kind), w->obj);
	int r = w->kind == PK_KIND_POD ? q_pods_admit(ctl, w, obj)
				       : ctl_replace_held(ctl, &ref, obj, ret_written);
	const json_t *one = json_is_array(obj) ? json_array_get(obj, 0) : obj;

	if (r == 0)
		ctl_log(ctl, 2, "%s %s/%s: admitted by ClusterQueue %s (%s)", w->kind_name, w->ns,
			w->name, cq,
			json_string_value(json_object_get(ctl_at(one, "metadata", "annotations"),
							  WB_ANNOTATION_QUEUE_ADMISSION)));
	else
		ctl_log(ctl, 1, "%s %s/%s: admitting: %s", w->kind_name, w->ns, w->name,
			pk_write_strerror(r));
	return r;
}

/* The victims' names in gone, as queues_place.c leaves their pods out ("Kind/ns/name"). */
static void gone_of(json_t *gone, const struct q_victim *v, size_t nv)
{
	char key[800];
	size_t k;
	json_t *pod;

	for (size_t i = 0; gone && i < nv; i++) {
		if (v[i].kept)
			continue;
		pk_obj_key(key, sizeof(key), pk_type_of(v[i].v->kind), v[i].v->ns, v[i].v->name);
		if (v[i].v->kind != PK_KIND_POD)
			json_object_set_new(gone, key, json_true());
		json_array_foreach(v[i].v->pods, k, pod)
		{
			pk_obj_key(key, sizeof(key), &pk_type_pod, pk_namespace(pod), pk_name(pod));
			json_object_set_new(gone, key, json_true());
		}
	}
}

/*
 * Whether w, admitted by cq in flavors, is placed now (queues_place.c) once
 * the victims (those of v not kept) are gone; *ret_obj the workload as
 * admitted.
 */
static bool placed(struct pk_ctl *ctl, struct q_state *s, const struct q_workload *w,
		   const char *cq, const json_t *flavors, const struct q_victim *v, size_t nv,
		   json_t **ret_obj, bool *ret_no_room, char *why, size_t n)
{
	json_t *fobjs = json_array(), *gone = json_object(), *f;
	char value[1024];
	size_t i;
	int r = -ENOMEM;

	admission_value(cq, flavors, value, sizeof(value));
	json_array_foreach(flavors, i, f) if (json_object_get(s->flavors, json_string_value(f)))
	    json_array_append(fobjs, json_object_get(s->flavors, json_string_value(f)));
	gone_of(gone, v, nv);
	*ret_obj = !fobjs || !gone	    ? NULL
		   : w->kind == PK_KIND_POD ? q_pods_admitted(w, value, fobjs)
					    : q_admitted_copy(w->obj, w->kind, value, fobjs);
	if (*ret_obj && ctl->queues_quota_only)
		r = 1; /* a comparison: Kueue's way, quota first, placement later */
	else if (*ret_obj && !s->place)
		r = s->cache ? q_cache_place(ctl->store, s, &s->place)
			     : q_place_new(ctl->store, &s->place);
	if (*ret_obj && s->place && !ctl->queues_quota_only) {
		q_cache_tried(s, true);
		r = q_place_admit(s->place, ret_obj, w->kind, fobjs, gone, why, n);
	}
	if (r == -ENOMEM)
		snprintf(why, n, "placement: %s", pk_errno_text(ENOMEM));
	else if (r < 0)
		ctl_log(ctl, 1, "%s %s/%s: placement: %s", w->kind_name, w->ns, w->name, why);
	json_decref(fobjs);
	json_decref(gone);
	*ret_no_room = r == 0;
	if (r != 1) {
		json_decref(*ret_obj);
		*ret_obj = NULL;
	}
	return r == 1;
}

/*
 * The ClusterQueue w's LocalQueue points at, or NULL and why; *ret_counted
 * the ClusterQueue that counts it pending even so (one that exists).
 */
static const char *cq_of(struct q_state *s, const struct q_workload *w, const char **ret_counted,
			 char *why, size_t n)
{
	char key[600];
	const char *cq;
	const json_t *obj;

	q_join(key, sizeof(key), w->ns, w->queue);
	cq = ctl_at_string(json_object_get(s->lqs, key), "spec", "clusterQueue");
	if (!cq) {
		snprintf(why, n, "LocalQueue %s does not exist in namespace %s", w->queue, w->ns);
		return NULL;
	}
	obj = json_object_get(s->cqs, cq);
	if (!obj) {
		snprintf(why, n, "ClusterQueue %s does not exist", cq);
		return NULL;
	}
	*ret_counted = cq;
	if (!selects(s, obj, w->ns)) {
		snprintf(why, n,
			 "namespace %s is not selected by ClusterQueue %s's namespaceSelector",
			 w->ns, cq);
		return NULL;
	}
	return cq;
}

/* w's LocalQueue ("ns/name" key). */
static const json_t *lq_of(const struct q_state *s, const struct q_workload *w)
{
	char key[600];

	q_join(key, sizeof(key), w->ns, w->queue);
	return json_object_get(s->lqs, key);
}

bool q_stopped(const json_t *queue, bool drain)
{
	const char *p = ctl_at_string(queue, "spec", "stopPolicy");

	return p && (strcmp(p, "HoldAndDrain") == 0 || (!drain && strcmp(p, "Hold") == 0));
}

/*
 * Why w is not tried in cq now (true), before its quota: StrictFIFO behind
 * another, cq not active, cq or w's LocalQueue stopped (spec.stopPolicy),
 * cq's cohort in a cycle.
 */
static bool held(const struct q_state *s, const struct q_workload *w, const char *cq,
		 const json_t *blocked, char *why, size_t n)
{
	char missing[256];

	if (json_object_get(blocked, cq))
		snprintf(why, n, "StrictFIFO: waiting behind %s",
			 json_string_value(json_object_get(blocked, cq)));
	else if (!q_cq_active(s, json_object_get(s->cqs, cq), missing, sizeof(missing)))
		snprintf(why, n, "ClusterQueue %s is not active", cq);
	else if (q_stopped(json_object_get(s->cqs, cq), false))
		snprintf(why, n, "ClusterQueue %s is stopped", cq);
	else if (q_stopped(lq_of(s, w), false))
		snprintf(why, n, "LocalQueue %s/%s is stopped", w->ns, w->queue);
	else
		return q_tree_in_cycle(s->tree, cq, why, n);
	return true;
}

/* w admitted by cq in flavors: the wait, the charge; 1. */
static int admitted(struct pk_ctl *ctl, struct q_state *s, struct q_workload *w, const char *cq,
		    json_t *flavors)
{
	int64_t created = 0;

	if (w->created && pk_time_parse(w->created, &created) == 0)
		q_metrics_wait(ctl, cq, (double)(time(NULL) - created));
	charge(s, w, cq, flavors);
	w->admitted = true;
	w->cq = strdup(cq);
	w->flavors = json_incref(flavors);
	return 1;
}

/*
 * w's flavors in cq by quota and placement: the first assignment (as cq's
 * flavorFungibility picks it, preempting as its spec.preemption allows)
 * whose flavors' nodes place it; one that does not is skipped and the next
 * tried (Kueue leaves placement to later).  NULL and why when none:
 * *ret_no_room when a placement failed for want of room (why: the first
 * such), *ret_tried false when one failed with an error (not parked).
 */
static json_t *assign_placed(struct pk_ctl *ctl, struct q_state *s, struct q_workload *w,
			     const char *cq, struct q_victim **ret_v, size_t *ret_nv,
			     json_t **ret_obj, bool *ret_no_room, bool *ret_tried, char *why,
			     size_t n)
{
	struct q_pick pick = {.probe = true};
	char first[1024] = "";
	json_t *flavors;
	bool more = true;

	while (more) {
		struct q_victim *victims = NULL;
		size_t nv = 0;
		bool no_room = false;

		if (!(flavors = q_assign(s, w, cq, &pick, why, n)))
			flavors = q_preempt_plan(s, w, cq, &pick, &victims, &nv);
		if (!flavors)
			break;
		if (placed(ctl, s, w, cq, flavors, victims, nv, ret_obj, &no_room, why, n)) {
			*ret_v = victims;
			*ret_nv = nv;
			return flavors;
		}
		q_preempt_undo(s, victims, nv);
		free(victims);
		*ret_no_room |= no_room;
		*ret_tried = no_room; /* an error is not parked */
		if (!first[0])
			snprintf(first, sizeof(first), "%s", why);
		more = no_room && q_assign_skip(s, cq, flavors, &pick);
		json_decref(flavors);
	}
	if (first[0])
		snprintf(why, n, "%s", first);
	return NULL;
}

/*
 * One pending workload: admitted (1) or not (0); *ret_cq the ClusterQueue
 * that counts it, when there is one.  A StrictFIFO ClusterQueue whose head does not fit is
 * blocked for the rest of the pass.
 */
static int try_admit(struct pk_ctl *ctl, struct q_state *s, struct q_workload *w, json_t *blocked,
		     const char **ret_cq)
{
	char why[1024];
	const char *cq = cq_of(s, w, ret_cq, why, sizeof(why));
	const json_t *cqobj = cq ? json_object_get(s->cqs, cq) : NULL;
	const char *strategy = ctl_at_string(cqobj, "spec", "queueingStrategy");
	struct q_victim *victims = NULL;
	json_t *flavors = NULL, *obj = NULL, *written = NULL;
	size_t nv = 0;
	int r = 0;
	bool tried = false, no_room = false, others;

	if (cq && (w->inadmissible || w->incomplete))
		snprintf(why, sizeof(why), "%s", w->inadmissible ? w->inadmissible : w->incomplete);
	if (!cq || w->inadmissible)
		ctl_record_warning(ctl, pk_type_of(pk_kind_of(w->obj)), w->obj, "Inadmissible",
				   why);
	else if (!w->incomplete && !held(s, w, cq, blocked, why, sizeof(why))) {
		tried = true;
		q_cache_tried(s, false);
		flavors = assign_placed(ctl, s, w, cq, &victims, &nv, &obj, &no_room, &tried, why,
					sizeof(why));
	}
	if (!flavors) {
		ctl_log(ctl, 2, "%s %s/%s: pending: %s", w->kind_name, w->ns, w->name, why);
		if (cq && !w->incomplete && strategy && strcmp(strategy, "StrictFIFO") == 0 &&
		    !json_object_get(blocked, cq))
			json_object_set_new(blocked, cq, json_sprintf("%s/%s", w->ns, w->name));
		w->why = strdup(why);
		if (tried)
			q_cache_park(s, w, cq, no_room, why);
		else
			q_cache_unpark(s, w);
	} else {
		q_cache_unpark(s, w);
		others = q_cache_dirty_by_others(s, cq);
		q_cache_dirty(s, cq); /* its quota changes: nothing parked under it is skipped */
		if (q_preempt_commit(ctl, s, w, victims, nv) == 0 &&
		    admit(ctl, w, cq, obj, &written) == 0)
			r = admitted(ctl, s, w, cq, flavors);
		if (r && !others && nv == 0)
			q_cache_admitted(s, cq, w, written);
	}
	json_decref(written);
	free(victims);
	json_decref(obj);
	json_decref(flavors);
	return r;
}

/* ---- the pass ---------------------------------------------------------------------- */

/*
 * What is admitted already counts against its ClusterQueue (and
 * LocalQueue), but what a queue stopped with HoldAndDrain holds: that is
 * evicted, and pending again.
 */
static void charge_admitted(struct pk_ctl *ctl, struct q_state *s)
{
	for (size_t i = 0; i < s->nw; i++) {
		struct q_workload *w = &s->w[i];
		bool known = w->admitted && json_object_get(s->cqs, w->cq);
		const char *stopped = !known ? NULL
				      : q_stopped(json_object_get(s->cqs, w->cq), true)
					  ? "The ClusterQueue is stopped"
				      : q_stopped(lq_of(s, w), true) ? "The LocalQueue is stopped"
								     : NULL;

		if (!w->admitted)
			continue;
		if (stopped)
			q_cache_dirty(s, w->cq);
		if (stopped && q_evict(ctl, w, "Evicted", stopped) == 0) {
			w->admitted = false;
			w->preempted = true;
			q_count_both(s, w, w->cq, "pending", 1);
			continue;
		}
		if (known)
			charge(s, w, w->cq, w->flavors);
		q_count_both(s, w, known ? w->cq : NULL, "admitted", 1);
	}
}

/* ---- fair sharing ------------------------------------------------------------------ */

/* The ClusterQueue w's LocalQueue names (NULL: none). */
static const char *cq_name_of(const struct q_state *s, const struct q_workload *w)
{
	char key[600];

	q_join(key, sizeof(key), w->ns, w->queue);
	return ctl_at_string(json_object_get(s->lqs, key), "spec", "clusterQueue");
}

/* spec.fairSharing.weight in milli (default 1); -1 when the ClusterQueue sets no fairSharing. */
static int64_t weight_of(const json_t *cq)
{
	const json_t *fs = ctl_at(cq, "spec", "fairSharing"), *w = json_object_get(fs, "weight");
	int64_t milli = 1000;

	if (!json_is_object(fs))
		return -1;
	if (json_is_integer(w))
		milli = json_integer_value(w) * 1000;
	else if (json_is_string(w) && topo_quantity_parse(json_string_value(w), &milli) < 0)
		milli = 1000;
	return milli;
}

/*
 * Kueue's dominant resource share of cq, with w's requests added: over each
 * resource, what cq borrows beyond its nominal quota (all flavors) per mille
 * of what its cohort holds of it, the largest, divided by the weight (a
 * weight of 0: the largest share there is).
 */
static double share_with(struct q_state *s, const struct q_workload *w, const char *cq)
{
	const json_t *groups = ctl_at(json_object_get(s->cqs, cq), "spec", "resourceGroups"), *g,
		     *f;
	int64_t weight = weight_of(json_object_get(s->cqs, cq));
	const char *res;
	json_t *x, *cqu = q_sub(s->usage, cq);
	double dominant = 0;
	size_t i, k;

	json_array_foreach(groups, i, g)
	    CTL_ARRAY_EACH(json_object_get(g, "coveredResources"), k, x)
	{
		int64_t borrowed = 0, lendable = 0;
		size_t j;

		res = json_string_value(x);
		CTL_ARRAY_EACH(res ? json_object_get(g, "flavors") : NULL, j, f)
		{
			const char *fn = pk_get_string(f, "name");
			int64_t use =
			    q_milli_at(cqu, fn ? fn : "", res) +
			    (j == 0 ? json_integer_value(json_object_get(w->requests, res)) : 0);
			int64_t over = use - q_tree_nominal(s->tree, cq, fn ? fn : "", res);

			borrowed += over > 0 ? over : 0;
			lendable += q_tree_lendable(s->tree, cq, fn ? fn : "", res);
		}
		if (lendable > 0 && (double)borrowed * 1000 / (double)lendable > dominant)
			dominant = (double)borrowed * 1000 / (double)lendable;
	}
	if (weight == 0)
		return dominant > 0 ? 1e18 : 0;
	return weight > 0 ? dominant * 1000 / (double)weight : dominant;
}

/*
 * The next workload to try: in queue order, but with fair sharing (a
 * ClusterQueue of it sets spec.fairSharing) among the heads of the
 * ClusterQueues of one cohort, the one whose ClusterQueue's share with it
 * is the lowest goes first, as Kueue orders them.
 */
static struct q_workload *next_workload(struct q_state *s, const bool *tried, bool fair)
{
	struct q_workload *best = NULL;
	json_t *heads = fair ? json_object() : NULL;
	double best_share = 0;

	for (size_t i = 0; i < s->nw; i++) {
		struct q_workload *w = &s->w[i];
		const char *cq;
		double share;

		if (tried[i] || w->admitted || w->preempted)
			continue;
		if (!fair)
			return w;
		cq = cq_name_of(s, w);
		if (!cq || !json_object_get(s->cqs, cq) ||
		    weight_of(json_object_get(s->cqs, cq)) < 0)
			share = 0; /* not fair-shared: in queue order */
		else if (json_object_get(heads, cq))
			continue; /* only a ClusterQueue's head competes */
		else
			share = share_with(s, w, cq);
		if (cq)
			json_object_set_new(heads, cq, json_true());
		if (!best || share < best_share) {
			best = w;
			best_share = share;
		}
	}
	json_decref(heads);
	return best;
}

static void admit_pending(struct pk_ctl *ctl, struct q_state *s)
{
	json_t *blocked = json_object();
	bool *tried = calloc(s->nw ? s->nw : 1, sizeof(*tried)), fair = false;
	struct q_workload *w;
	const char *k;
	json_t *o;

	json_object_foreach(s->cqs, k, o) fair |= weight_of(o) >= 0;
	s->fair = fair;
	while (blocked && tried && (w = next_workload(s, tried, fair))) {
		const char *cq = cq_name_of(s, w), *why = cq ? q_cache_parked(s, w, cq) : NULL;
		int admitted;

		tried[w - s->w] = true;
		if (why) { /* parked: nothing since could change its answer */
			w->why = strdup(why);
			q_count_both(s, w, cq, "pending", 1);
			continue;
		}
		cq = NULL;
		admitted = try_admit(ctl, s, w, blocked, &cq);
		q_count_both(s, w, cq, admitted ? "admitted" : "pending", 1);
	}
	free(tried);
	json_decref(blocked);
}

/*
 * Each pending workload's place in its ClusterQueue's order, as the keys
 * of that order (queue.podkernel.dev/queue-order: its ClusterQueue,
 * priority, creation time and name; readers rank them, wb_queue_positions)
 * and why it waits (queue.podkernel.dev/pending-reason), on each pod of a
 * pod workload, written when they change, all in one batch (with the
 * queues' status: queues_status, committed by ctl_queues_run).  The order
 * does not change when a workload ahead is admitted (a position would), so
 * the ones behind it are written only when their reason changes.
 */
static void note_pending(struct pk_ctl *ctl, struct q_state *s)
{
	if (pk_writer_batch_begin(ctl->writer) < 0)
		return;
	for (size_t i = 0; i < s->nw; i++) {
		struct q_workload *w = &s->w[i];
		char key[600], order[1200] = "";
		const char *cq;

		if (w->admitted || w->preempted || !w->why || q_cache_noted(w))
			continue; /* (noted: as a pass found this version, with the same reason) */
		q_join(key, sizeof(key), w->ns, w->queue);
		cq = ctl_at_string(json_object_get(s->lqs, key), "spec", "clusterQueue");
		if (cq && json_object_get(s->cqs, cq) &&
		    wb_queue_order_format(order, sizeof(order), cq, w->priority, w->created,
					  w->kind_name, w->ns, w->name) < 0)
			order[0] = '\0';
		if (w->kind == PK_KIND_POD)
			q_pods_note(ctl, w, *order ? order : NULL, w->why);
		else if (q_note_one(ctl, w->kind, w->obj, *order ? order : NULL, w->why))
			q_cache_note(w);
	}
}

/*
 * Each ClusterQueue's and LocalQueue's status, of the quota keys the pass
 * visited (the others' did not change).
 */
static void queues_status(struct pk_ctl *ctl, struct q_state *s)
{
	const char *key;
	json_t *obj;
	char now[32];

	pk_time_format((int64_t)time(NULL), now);
	json_object_foreach(s->cqs, key, obj)
	{
		if (q_cache_visits(s, q_cache_quota_key(s->cqs, key)))
			q_cq_status(ctl, s, key, obj, now);
	}
	json_object_foreach(s->lqs, key, obj)
	{
		const char *cq = ctl_at_string(obj, "spec", "clusterQueue");

		if (q_cache_visits(s, q_cache_quota_key(s->cqs, cq)))
			q_lq_status(ctl, s, key, obj, now);
	}
}

void ctl_queues_run(struct pk_ctl *ctl)
{
	struct q_state s = {0};

	if (state_load(ctl, &s) == 0) {
		charge_admitted(ctl, &s);
		admit_pending(ctl, &s);
		q_cache_record(&s);
		q_pods_groups_gone(ctl, &s);
		note_pending(ctl, &s);
		q_gauges(ctl, &s);
		queues_status(ctl, &s);
		q_note_commit(ctl); /* the annotations and statuses: one batch, one transaction */
		ctl_record_flush(ctl);
	}
	state_clear(&s);
	q_metrics_stats(ctl);
}

/* The queue controller offline: the store, a writer on it, no Events, no log. */
struct pk_queues {
	struct pk_ctl ctl;
};

int pk_queues_new(struct pk_store *store, const struct pk_queues_pass_opts *o,
		  struct pk_queues **ret)
{
	struct pk_queues *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	r = -pthread_mutex_init(&q->ctl.m.lock, NULL);
	if (r < 0) {
		free(q);
		return r;
	}
	q->ctl.store = store;
	q->ctl.queues_quota_only = o && o->quota_only;
	q->ctl.queues_event = o ? o->event : NULL; /* attach mode's Events */
	q->ctl.queues_event_arg = o ? o->event_arg : NULL;
	r = pk_writer_store_new(store, &q->ctl.writer);
	if (r < 0) {
		pk_queues_free(q);
		return r;
	}
	*ret = q;
	return 0;
}

int pk_queues_run(struct pk_queues *q)
{
	ctl_queues_run(&q->ctl);
	return 0;
}

int pk_queues_sorted_agree(const struct pk_queues *q)
{
	return q_cache_sorted_agree(&q->ctl);
}

void pk_queues_get_stats(const struct pk_queues *q, struct pk_queues_stats *ret)
{
	q_cache_stats(&q->ctl, ret);
}

char *pk_queues_gauges(struct pk_queues *q)
{
	char *text;

	pthread_mutex_lock(&q->ctl.m.lock);
	text = q->ctl.m.queue_gauges ? strdup(q->ctl.m.queue_gauges) : NULL;
	pthread_mutex_unlock(&q->ctl.m.lock);
	return text;
}

void pk_queues_free(struct pk_queues *q)
{
	if (!q)
		return;
	pk_writer_free(q->ctl.writer);
	q_cache_free(q->ctl.qcache);
	pthread_mutex_destroy(&q->ctl.m.lock);
	q_metrics_free(&q->ctl.m);
	free(q);
}

/* One pass of a controller made for it: everything listed. */
int pk_queues_pass_opts(struct pk_store *store, const struct pk_queues_pass_opts *o)
{
	struct pk_queues *q = NULL;
	int r = pk_queues_new(store, o, &q);

	if (r == 0)
		r = pk_queues_run(q);
	pk_queues_free(q);
	return r;
}

int pk_queues_pass(struct pk_store *store)
{
	return pk_queues_pass_opts(store, NULL);
}

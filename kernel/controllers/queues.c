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
 * resource group that covers a resource it requests, one flavor (the first
 * in order whose taints its pods tolerate) has quota left for all of them,
 * its own or borrowed within its cohort, or can have it by preempting
 * (spec.preemption: borrowers of the cohort, lower priority in its queue),
 * and when the scheduling core places all its pods on the cluster as it is
 * (queues_place.c).  The admission is one write of the Job or JobSet: the
 * annotation (the ClusterQueue and the flavor of each group), spec.suspend
 * false and the flavors' node labels and tolerations in its pod templates;
 * each victim is one write too (admission taken back, suspended).  Under
 * StrictFIFO a workload that is not admitted blocks the ones behind it;
 * under BestEffortFIFO (the default) they are tried.  A workload whose
 * namespace the ClusterQueue's namespaceSelector does not select (a null
 * selector selects none), whose LocalQueue or ClusterQueue is missing, or
 * that requests a resource no group covers is never admitted and gets a
 * Warning Event saying why.  Each pending one gets its position and why it
 * waits as annotations; then each ClusterQueue's and LocalQueue's status
 * (pending, reserving and admitted counts, usage per flavor and resource,
 * what is borrowed, the condition Active) and Kueue's gauges.
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
#include "kernel/controllers/controllers-internal.h"
#include "topology/topology.h"

struct q_workload {
	json_t *obj; /* borrowed from the listing */
	enum pk_kind kind;
	const char *ns, *name, *queue, *created;
	json_t *requests; /* resource -> milli */
	bool admitted;
	bool preempted;	  /* by this pass: pending again, not tried again in it */
	int64_t priority; /* its pods' PriorityClass value (the globalDefault's, else 0) */
	char *cq;	  /* admitted: the ClusterQueue */
	json_t *flavors;  /* admitted: one flavor name (or "-") per resource group */
	char *why;	  /* pending: why, as this pass found */
};

struct q_state {
	json_t *cqs, *lqs, *flavors, *namespaces, *cohorts, *classes, *jobs,
	    *jobsets;	       /* listings */
	struct q_tree *tree;   /* quota and usage shared in cohorts */
	struct q_place *place; /* the cluster, for placement (read at the first need) */
	struct q_workload *w;
	size_t nw;
	json_t *usage;	 /* cq -> flavor -> resource -> milli */
	json_t *counts;	 /* "cq" or "ns/lq" -> {pending, admitted} */
	json_t *lqusage; /* "ns/lq" -> flavor -> resource -> milli */
};

/* ---- requests ---------------------------------------------------------------------- */

static int64_t int_or(const json_t *obj, const char *path, int64_t dflt)
{
	json_t *v = pk_get(obj, path);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* Add n times the requests of a pod of template's spec to req. */
static int add_pod_requests(json_t *req, const json_t *template, int64_t n)
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
	int64_t par = int_or(spec, "parallelism", 1), comp = int_or(spec, "completions", -1);

	return comp >= 0 && comp < par ? comp : par;
}

static json_t *workload_requests(const json_t *obj, enum pk_kind kind)
{
	json_t *req = json_object(), *rj;
	size_t i;

	if (!req)
		return NULL;
	if (kind == PK_KIND_JOB) {
		if (add_pod_requests(req, pk_get(obj, "spec.template"),
				     job_pods(pk_get(obj, "spec"))) < 0)
			goto fail;
		return req;
	}
	json_array_foreach(pk_get(obj, "spec.replicatedJobs"), i, rj)
	{
		const json_t *jspec = pk_get(rj, "template.spec");
		bool shorthand = !pk_get(jspec, "template");
		int64_t replicas = int_or(rj, "replicas", 1);

		if (add_pod_requests(req,
				     shorthand ? pk_get(rj, "template") : pk_get(jspec, "template"),
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
	}
	free(s->w);
	json_decref(s->cqs);
	json_decref(s->lqs);
	json_decref(s->flavors);
	json_decref(s->namespaces);
	json_decref(s->cohorts);
	json_decref(s->classes);
	q_tree_free(s->tree);
	q_place_free(s->place);
	json_decref(s->jobs);
	json_decref(s->jobsets);
	json_decref(s->usage);
	json_decref(s->counts);
	json_decref(s->lqusage);
	memset(s, 0, sizeof(*s));
}

static bool finished(const json_t *obj, enum pk_kind kind)
{
	return kind == PK_KIND_JOB ? wb_job_finished(obj) : wb_jobset_finished(obj);
}

/* The admission annotation "CQ/F1,F2": its ClusterQueue and flavors. */
static void parse_admission(struct q_workload *w)
{
	const char *a = json_string_value(
	    json_object_get(pk_get(w->obj, "metadata.annotations"), WB_ANNOTATION_QUEUE_ADMISSION));
	const char *slash = a ? strchr(a, '/') : NULL;

	w->admitted = slash && !json_is_true(pk_get(w->obj, "spec.suspend"));
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
 * A workload's priority, as Kueue takes it without a WorkloadPriorityClass:
 * its pods' priorityClassName (a Job's template, a JobSet's first
 * replicated Job's), else the globalDefault PriorityClass, else 0.
 */
static int64_t workload_priority(const struct q_state *s, const json_t *obj, enum pk_kind kind)
{
	const json_t *tmpl = kind == PK_KIND_JOB
				 ? pk_get(obj, "spec.template")
				 : pk_get(json_array_get(pk_get(obj, "spec.replicatedJobs"), 0),
					  "template.spec.template");
	const char *name = pk_get_string(tmpl, "spec.priorityClassName"), *k;
	json_t *pc;

	if (name && json_object_get(s->classes, name))
		return int_or(json_object_get(s->classes, name), "value", 0);
	json_object_foreach(
	    s->classes, k,
	    pc) if (json_is_true(json_object_get(pc, "globalDefault"))) return int_or(pc, "value",
										      0);
	return 0;
}

static int add_workloads(struct q_state *s, const json_t *items, enum pk_kind kind)
{
	size_t i;
	json_t *o;

	json_array_foreach(items, i, o)
	{
		struct q_workload *w;

		if (!wb_queue_name(o) || finished(o, kind) ||
		    pk_get(o, "metadata.deletionTimestamp"))
			continue;
		w = &s->w[s->nw];
		*w = (struct q_workload){.obj = o,
					 .kind = kind,
					 .ns = pk_namespace(o),
					 .name = pk_name(o),
					 .queue = wb_queue_name(o),
					 .created = pk_get_string(o, "metadata.creationTimestamp")};
		w->priority = workload_priority(s, o, kind);
		w->requests = workload_requests(o, kind);
		if (!w->requests)
			return -ENOMEM;
		parse_admission(w);
		s->nw++;
	}
	return 0;
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

/* Listed by name (a map name -> object, "ns/name" for namespaced kinds). */
static json_t *list_map(struct pk_ctl *ctl, const char *kind, bool namespaced)
{
	json_t *items = NULL, *map = json_object(), *o;
	size_t i;

	if (!map || pk_store_list(ctl->store, kind, NULL, NULL, &items, NULL, NULL) < 0) {
		json_decref(items);
		return map;
	}
	json_array_foreach(items, i, o)
	{
		char key[600];

		snprintf(key, sizeof(key), "%s%s%s", namespaced ? pk_namespace(o) : "",
			 namespaced ? "/" : "", pk_name(o));
		json_object_set(map, key, o);
	}
	json_decref(items);
	return map;
}

static int state_load(struct pk_ctl *ctl, struct q_state *s)
{
	size_t n;

	s->cqs = list_map(ctl, "ClusterQueue", false);
	s->lqs = list_map(ctl, "LocalQueue", true);
	s->flavors = list_map(ctl, "ResourceFlavor", false);
	s->namespaces = list_map(ctl, "Namespace", false);
	s->cohorts = list_map(ctl, "Cohort", false);
	s->classes = list_map(ctl, "PriorityClass", false);
	s->usage = json_object();
	s->counts = json_object();
	s->lqusage = json_object();
	if (pk_store_list(ctl->store, "Job", NULL, NULL, &s->jobs, NULL, NULL) < 0 ||
	    pk_store_list(ctl->store, "JobSet", NULL, NULL, &s->jobsets, NULL, NULL) < 0)
		return -EIO;
	if (!s->cqs || !s->lqs || !s->flavors || !s->namespaces || !s->cohorts || !s->classes ||
	    !s->usage || !s->counts || !s->lqusage || q_tree_new(s->cqs, s->cohorts, &s->tree) < 0)
		return -ENOMEM;
	n = json_array_size(s->jobs) + json_array_size(s->jobsets);
	s->w = calloc(n ? n : 1, sizeof(*s->w));
	if (!s->w)
		return -ENOMEM;
	if (add_workloads(s, s->jobs, PK_KIND_JOB) < 0 ||
	    add_workloads(s, s->jobsets, PK_KIND_JOBSET) < 0)
		return -ENOMEM;
	qsort(s->w, s->nw, sizeof(*s->w), cmp_workload);
	return 0;
}

/* ---- quota ------------------------------------------------------------------------- */

/* map[a][b] (objects made on the way). */
static json_t *sub(json_t *map, const char *a)
{
	json_t *x = json_object_get(map, a);

	if (!x) {
		x = json_object();
		json_object_set_new(map, a, x);
	}
	return x;
}

static int64_t milli_at(const json_t *map, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(map, a), b));
}

static void add_milli(json_t *map, const char *a, const char *b, int64_t v)
{
	json_t *m = sub(map, a);

	json_object_set_new(m, b, json_integer(json_integer_value(json_object_get(m, b)) + v));
}

static bool covers(const json_t *group, const char *resource)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(group, "coveredResources"), i,
			   c) if (json_string_value(c) &&
				  strcmp(json_string_value(c), resource) == 0) return true;
	return false;
}

/* Count an admitted workload's requests in its ClusterQueue's usage and its LocalQueue's. */
static void charge_sign(struct q_state *s, const struct q_workload *w, const char *cq,
			const json_t *flavors, int sign)
{
	const json_t *groups = pk_get(json_object_get(s->cqs, cq), "spec.resourceGroups");
	json_t *cqu = sub(s->usage, cq), *lqu;
	char lq[600];
	const char *res;
	json_t *v;

	snprintf(lq, sizeof(lq), "%s/%s", w->ns, w->queue);
	lqu = sub(s->lqusage, lq);
	json_object_foreach(w->requests, res, v)
	{
		size_t g;
		json_t *group;

		json_array_foreach(groups, g, group)
		{
			const char *f = json_string_value(json_array_get(flavors, g));

			if (!covers(group, res) || !f || strcmp(f, "-") == 0)
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
	charge_sign(s, w, cq, flavors, 1);
}

/*
 * The flavor of each resource group for w in cq, where all fit; NULL and why
 * (in buf) when a requested resource is not covered or some group has no
 * flavor with room.
 */
static json_t *assign(struct q_state *s, const struct q_workload *w, const char *cq, char *why,
		      size_t n)
{
	const json_t *groups = pk_get(json_object_get(s->cqs, cq), "spec.resourceGroups"), *group;
	json_t *out = json_array(), *v;
	const char *res;
	size_t g;

	json_object_foreach(w->requests, res, v)
	{
		bool found = false;

		json_array_foreach(groups, g, group) found |= covers(group, res);
		if (!found && json_integer_value(v) > 0 && strcmp(res, "pods") != 0) {
			snprintf(why, n, "resource %s is not covered by ClusterQueue %s", res, cq);
			json_decref(out);
			return NULL;
		}
	}
	json_array_foreach(groups, g, group)
	{
		const char *pick = "-";
		size_t f;
		json_t *flavor;

		json_object_foreach(w->requests, res, v) if (covers(group, res) &&
							     json_integer_value(v) > 0) pick = NULL;
		json_array_foreach(pick ? NULL : json_object_get(group, "flavors"), f, flavor)
		{
			const char *fname = json_string_value(json_object_get(flavor, "name"));
			bool fits = fname != NULL &&
				    q_flavor_tolerated(w->obj, w->kind,
						       json_object_get(s->flavors, fname), why, n);

			json_object_foreach(w->requests, res, v)
			{
				int64_t more = fits && covers(group, res)
						   ? json_integer_value(v) -
							 q_tree_available(s->tree, cq, fname, res)
						   : 0;
				char q[64];

				if (more <= 0)
					continue;
				fits = false;
				topo_quantity_format(more, pk_board_quantity_format(res), q,
						     sizeof(q));
				snprintf(why, n,
					 "insufficient unused quota for %s in flavor %s of "
					 "ClusterQueue %s, %s more needed",
					 res, fname, cq, q);
			}
			if (fits) {
				pick = fname;
				break;
			}
		}
		if (!pick) {
			json_decref(out);
			return NULL;
		}
		json_array_append_new(out, json_string(pick));
	}
	return out;
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
	const json_t *sel = pk_get(cq, "spec.namespaceSelector"), *e;
	json_t *labels =
	    json_deep_copy(pk_get(json_object_get(s->namespaces, ns), "metadata.labels"));
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
static bool cq_active(const struct q_state *s, const json_t *cq, char *missing, size_t n)
{
	const json_t *g, *f;
	size_t i, k, len = 0;

	*missing = '\0';
	json_array_foreach(pk_get(cq, "spec.resourceGroups"), i, g)
	    json_array_foreach(json_object_get(g, "flavors"), k, f)
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
	json_t *c = sub(s->counts, key);

	json_object_set_new(c, what,
			    json_integer(json_integer_value(json_object_get(c, what)) + delta));
}

/* Count w as what ("pending", "admitted") in its LocalQueue and ClusterQueue (NULL: none). */
static void count_both(struct q_state *s, const struct q_workload *w, const char *cq,
		       const char *what, int delta)
{
	char lq[600];

	snprintf(lq, sizeof(lq), "%s/%s", w->ns, w->queue);
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

/* ---- preemption for quota ---------------------------------------------------------- */

struct q_victim {
	struct q_workload *v;
	bool reclaim; /* from another ClusterQueue of the cohort (else within w's) */
	bool kept;    /* not needed after all: given back its quota */
};

static const char *policy(const json_t *cq, const char *field)
{
	const char *p = pk_get_string(json_object_get(pk_get(cq, "spec"), "preemption"), field);

	return p ? p : "Never";
}

/* One write: the workload as admitted (q_admitted_copy). */
static int admit(struct pk_ctl *ctl, struct q_workload *w, const char *cq, const json_t *obj)
{
	struct pk_write_ref ref = ctl_ref_of(w->kind, w->obj);
	int r = ctl_replace(ctl, &ref, obj, NULL);

	if (r == 0)
		ctl_log(ctl, 2, "%s %s/%s: admitted by ClusterQueue %s (%s)",
			pk_kind_to_string(w->kind), w->ns, w->name, cq,
			json_string_value(json_object_get(pk_get(obj, "metadata.annotations"),
							  WB_ANNOTATION_QUEUE_ADMISSION)));
	else
		ctl_log(ctl, 1, "%s %s/%s: admitting: %s", pk_kind_to_string(w->kind), w->ns,
			w->name, pk_write_strerror(r));
	return r;
}

/*
 * Whether w, admitted by cq in flavors, is placed now (queues_place.c) once
 * the victims (those of v not kept) are gone; *ret_obj the workload as
 * admitted.
 */
static bool placed(struct pk_ctl *ctl, struct q_state *s, const struct q_workload *w,
		   const char *cq, const json_t *flavors, const struct q_victim *v, size_t nv,
		   json_t **ret_obj, char *why, size_t n)
{
	json_t *fobjs = json_array(), *gone = json_object(), *f;
	char value[1024], key[600];
	size_t i;
	int r = -ENOMEM;

	admission_value(cq, flavors, value, sizeof(value));
	json_array_foreach(flavors, i, f) if (json_object_get(s->flavors, json_string_value(f)))
	    json_array_append(fobjs, json_object_get(s->flavors, json_string_value(f)));
	for (i = 0; gone && i < nv; i++) {
		snprintf(key, sizeof(key), "%s/%s/%s", pk_kind_to_string(v[i].v->kind), v[i].v->ns,
			 v[i].v->name);
		if (!v[i].kept)
			json_object_set_new(gone, key, json_true());
	}
	*ret_obj = fobjs && gone ? q_admitted_copy(w->obj, w->kind, value, fobjs) : NULL;
	if (*ret_obj && ctl->queues_quota_only)
		r = 1; /* a comparison: Kueue's way, quota first, placement later */
	else if (*ret_obj && !s->place)
		r = q_place_new(ctl->store, &s->place);
	if (*ret_obj && s->place && !ctl->queues_quota_only)
		r = q_place_try(s->place, *ret_obj, gone, why, n);
	if (r == -ENOMEM)
		snprintf(why, n, "placement: %s", pk_errno_text(ENOMEM));
	else if (r < 0)
		ctl_log(ctl, 1, "%s %s/%s: placement: %s", pk_kind_to_string(w->kind), w->ns,
			w->name, why);
	json_decref(fobjs);
	json_decref(gone);
	if (r != 1) {
		json_decref(*ret_obj);
		*ret_obj = NULL;
	}
	return r == 1;
}

/* Whether v's ClusterQueue uses more than its nominal quota of what v uses. */
static bool borrowing(struct q_state *s, const struct q_workload *v)
{
	const json_t *groups = pk_get(json_object_get(s->cqs, v->cq), "spec.resourceGroups"), *g;
	const char *res;
	json_t *x;
	size_t i;

	json_object_foreach(v->requests, res, x) json_array_foreach(groups, i, g)
	{
		const char *f = json_string_value(json_array_get(v->flavors, i));

		if (covers(g, res) && f && strcmp(f, "-") != 0 &&
		    milli_at(sub(s->usage, v->cq), f, res) > q_tree_nominal(s->tree, v->cq, f, res))
			return true;
	}
	return false;
}

/* Whether w fits cq's nominal quota in flavors (a reclaim takes nothing beyond it). */
static bool within_nominal(struct q_state *s, const struct q_workload *w, const char *cq,
			   const json_t *flavors)
{
	const json_t *groups = pk_get(json_object_get(s->cqs, cq), "spec.resourceGroups"), *g;
	const char *res;
	json_t *x;
	size_t i;

	json_object_foreach(w->requests, res, x) json_array_foreach(groups, i, g)
	{
		const char *f = json_string_value(json_array_get(flavors, i));

		if (covers(g, res) && f && strcmp(f, "-") != 0 &&
		    milli_at(sub(s->usage, cq), f, res) + json_integer_value(x) >
			q_tree_nominal(s->tree, cq, f, res))
			return false;
	}
	return true;
}

/*
 * Kueue's candidates: workloads of other ClusterQueues of the cohort that
 * borrow first (reclaimWithinCohort: Any, or LowerPriority), then those of
 * w's own ClusterQueue of lower priority (withinClusterQueue:
 * LowerPriority); lower priority first, then the most recently created.
 */
static int cmp_victim(const void *a, const void *b)
{
	const struct q_victim *x = a, *y = b;
	int c = (int)y->reclaim - (int)x->reclaim;

	if (c == 0)
		c = (x->v->priority > y->v->priority) - (x->v->priority < y->v->priority);
	if (c == 0)
		c = -strcmp(x->v->created ? x->v->created : "", y->v->created ? y->v->created : "");
	return c;
}

static size_t candidates(struct q_state *s, const struct q_workload *w, const char *cq,
			 struct q_victim *out)
{
	const json_t *obj = json_object_get(s->cqs, cq);
	const char *within = policy(obj, "withinClusterQueue");
	const char *reclaim = policy(obj, "reclaimWithinCohort");
	size_t n = 0;

	for (size_t i = 0; i < s->nw; i++) {
		struct q_workload *v = &s->w[i];
		bool lower = v->priority < w->priority, same;

		if (!v->admitted || v == w || !v->cq || !json_object_get(s->cqs, v->cq))
			continue;
		same = strcmp(v->cq, cq) == 0;
		if (same && strcmp(within, "LowerPriority") == 0 && lower)
			out[n++] = (struct q_victim){.v = v};
		else if (!same && q_tree_same_cohort(s->tree, cq, v->cq) && borrowing(s, v) &&
			 (strcmp(reclaim, "Any") == 0 ||
			  (strcmp(reclaim, "LowerPriority") == 0 && lower)))
			out[n++] = (struct q_victim){.v = v, .reclaim = true};
	}
	qsort(out, n, sizeof(*out), cmp_victim);
	return n;
}

/* w's flavors once the first victims are gone (their quota given back), or NULL. */
static json_t *fit_after(struct q_state *s, const struct q_workload *w, const char *cq,
			 struct q_victim *c, size_t nc, size_t *ret_n)
{
	json_t *flavors = NULL, *again;
	bool reclaim = false;
	char why[512];
	size_t k;

	for (k = 0; k < nc && !flavors; k++) {
		charge_sign(s, c[k].v, c[k].v->cq, c[k].v->flavors, -1);
		reclaim |= c[k].reclaim;
		flavors = assign(s, w, cq, why, sizeof(why));
	}
	if (flavors && reclaim && !within_nominal(s, w, cq, flavors)) {
		json_decref(flavors);
		flavors = NULL;
	}
	/* the fewest victims: each one (last first) it still fits without is kept */
	for (size_t j = k; flavors && j-- > 0;) {
		charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, 1);
		again = assign(s, w, cq, why, sizeof(why));
		if (again && (!reclaim || within_nominal(s, w, cq, again))) {
			c[j].kept = true;
			json_decref(flavors);
			flavors = again;
		} else {
			json_decref(again);
			charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, -1);
		}
	}
	for (size_t j = 0; !flavors && j < k; j++)
		charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, 1);
	*ret_n = k;
	return flavors;
}

/* One write: the admission taken back and spec.suspend true; the workload queues again. */
static int evict(struct pk_ctl *ctl, struct q_workload *v, const struct q_workload *by,
		 bool reclaim)
{
	json_t *obj = json_deep_copy(v->obj);
	struct pk_write_ref ref = ctl_ref_of(v->kind, v->obj);
	char msg[700];
	int r = -ENOMEM;

	if (obj && json_is_object(json_object_get(obj, "spec"))) {
		json_object_del(pk_get(obj, "metadata.annotations"), WB_ANNOTATION_QUEUE_ADMISSION);
		json_object_set_new(json_object_get(obj, "spec"), "suspend", json_true());
		r = ctl_replace(ctl, &ref, obj, NULL);
	}
	json_decref(obj);
	snprintf(msg, sizeof(msg), "Preempted to accommodate %s %s/%s due to %s",
		 pk_kind_to_string(by->kind), by->ns, by->name,
		 reclaim ? "reclamation within the cohort" : "prioritization in the ClusterQueue");
	if (r == 0)
		ctl_record_warning(ctl, pk_kind_to_string(v->kind), v->obj, "Preempted", msg);
	ctl_log(ctl, r == 0 ? 2 : 1, "%s %s/%s: %s%s%s", pk_kind_to_string(v->kind), v->ns, v->name,
		msg, r == 0 ? "" : ": ", r == 0 ? "" : pk_write_strerror(r));
	return r;
}

/*
 * Preemption for quota (spec.preemption): the fewest candidates whose
 * quota makes room for w (their quota given back in the pass's accounts);
 * w's flavors, the candidates and how many of them were tried (the victims
 * are those not kept), or NULL when no set of candidates makes room.
 */
static json_t *preempt_plan(struct q_state *s, struct q_workload *w, const char *cq,
			    struct q_victim **ret_c, size_t *ret_n)
{
	struct q_victim *c = calloc(s->nw ? s->nw : 1, sizeof(*c));
	size_t nc = c ? candidates(s, w, cq, c) : 0;
	json_t *flavors = nc ? fit_after(s, w, cq, c, nc, ret_n) : NULL;

	if (!flavors) {
		free(c);
		c = NULL;
		*ret_n = 0;
	}
	*ret_c = c;
	return flavors;
}

/* The plan not carried out: its victims are admitted still. */
static void preempt_undo(struct q_state *s, struct q_victim *c, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (!c[j].kept)
			charge_sign(s, c[j].v, c[j].v->cq, c[j].v->flavors, 1);
}

/* Evict the plan's victims, each in one write; < 0 when one failed (the rest are kept). */
static int preempt_commit(struct pk_ctl *ctl, struct q_state *s, const struct q_workload *w,
			  struct q_victim *c, size_t n)
{
	int r = 0;

	for (size_t j = 0; j < n; j++) {
		struct q_workload *v = c[j].v;

		if (c[j].kept)
			continue;
		if (r < 0 || evict(ctl, v, w, c[j].reclaim) < 0) {
			charge_sign(s, v, v->cq, v->flavors, 1); /* still admitted */
			r = -EAGAIN;
			continue;
		}
		v->admitted = false;
		v->preempted = true;
		count_both(s, v, v->cq, "admitted", -1);
		count_both(s, v, v->cq, "pending", 1);
	}
	return r;
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

	snprintf(key, sizeof(key), "%s/%s", w->ns, w->queue);
	cq = pk_get_string(json_object_get(s->lqs, key), "spec.clusterQueue");
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

/*
 * One pending workload: admitted (1) or not (0); *ret_cq the ClusterQueue
 * that counts it, when there is one.  A StrictFIFO ClusterQueue whose head does not fit is
 * blocked for the rest of the pass.
 */
static int try_admit(struct pk_ctl *ctl, struct q_state *s, struct q_workload *w, json_t *blocked,
		     const char **ret_cq)
{
	char why[1024], missing[256];
	const char *cq = cq_of(s, w, ret_cq, why, sizeof(why));
	const json_t *cqobj = cq ? json_object_get(s->cqs, cq) : NULL;
	const char *strategy = pk_get_string(cqobj, "spec.queueingStrategy");
	struct q_victim *victims = NULL;
	json_t *flavors = NULL, *obj = NULL;
	size_t nv = 0;
	int r = 0;

	if (!cq)
		ctl_record_warning(ctl, pk_kind_to_string(w->kind), w->obj, "Inadmissible", why);
	else if (json_object_get(blocked, cq))
		snprintf(why, sizeof(why), "StrictFIFO: waiting behind %s",
			 json_string_value(json_object_get(blocked, cq)));
	else if (!cq_active(s, cqobj, missing, sizeof(missing)))
		snprintf(why, sizeof(why), "ClusterQueue %s is not active", cq);
	else if (!q_tree_in_cycle(s->tree, cq, why, sizeof(why)) &&
		 !(flavors = assign(s, w, cq, why, sizeof(why))))
		flavors = preempt_plan(s, w, cq, &victims, &nv);
	if (flavors && !placed(ctl, s, w, cq, flavors, victims, nv, &obj, why, sizeof(why))) {
		preempt_undo(s, victims, nv);
		json_decref(flavors);
		flavors = NULL;
	}
	if (!flavors) {
		ctl_log(ctl, 2, "%s %s/%s: pending: %s", pk_kind_to_string(w->kind), w->ns, w->name,
			why);
		if (cq && strategy && strcmp(strategy, "StrictFIFO") == 0 &&
		    !json_object_get(blocked, cq))
			json_object_set_new(blocked, cq, json_sprintf("%s/%s", w->ns, w->name));
		w->why = strdup(why);
	} else if (preempt_commit(ctl, s, w, victims, nv) == 0 && admit(ctl, w, cq, obj) == 0) {
		int64_t created = 0;

		if (w->created && pk_time_parse(w->created, &created) == 0)
			q_metrics_wait(ctl, cq, (double)(time(NULL) - created));
		charge(s, w, cq, flavors);
		w->admitted = true;
		w->cq = strdup(cq);
		w->flavors = json_incref(flavors);
		r = 1;
	}
	free(victims);
	json_decref(obj);
	json_decref(flavors);
	return r;
}

/* ---- status ------------------------------------------------------------------------ */

/* Usage per flavor and resource; a ClusterQueue's (cq) says what it borrows beyond its nominal. */
static json_t *usage_list(const struct q_state *s, const json_t *groups, const json_t *usage,
			  const char *cq)
{
	json_t *out = json_array(), *g, *f, *res;
	size_t i, k, j;

	json_array_foreach(groups, i, g) json_array_foreach(json_object_get(g, "flavors"), k, f)
	{
		const char *name = json_string_value(json_object_get(f, "name"));
		json_t *list = json_array();

		json_array_foreach(json_object_get(g, "coveredResources"), j, res)
		{
			char q[64];
			const char *rn = json_string_value(res);

			if (!rn)
				continue;
			int64_t used = milli_at(usage, name ? name : "", rn), over;

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

/* Write obj's status when it differs from what it holds. */
static void write_status(struct pk_ctl *ctl, enum pk_kind kind, const json_t *obj, json_t *st)
{
	struct pk_write_ref ref = ctl_ref_of(kind, obj);
	int r;

	if (!st || json_equal(json_object_get(obj, "status"), st)) {
		json_decref(st);
		return;
	}
	r = ctl_status(ctl, &ref, st, NULL);
	if (r < 0 && r != -PK_WRITE_ECONFLICT)
		ctl_log(ctl, 1, "%s %s: status: %s", pk_kind_to_string(kind), pk_name(obj),
			pk_write_strerror(r));
	json_decref(st);
}

static json_t *counts_status(const struct q_state *s, const char *key)
{
	int64_t admitted = milli_at(s->counts, key, "admitted");

	return json_pack("{s:I,s:I,s:I}", "pendingWorkloads",
			 (json_int_t)milli_at(s->counts, key, "pending"), "reservingWorkloads",
			 (json_int_t)admitted, "admittedWorkloads", (json_int_t)admitted);
}

static void cq_status(struct pk_ctl *ctl, const struct q_state *s, const char *name,
		      const json_t *cq, const char *now)
{
	const json_t *groups = pk_get(cq, "spec.resourceGroups");
	json_t *usage = json_object_get(s->usage, name), *st = counts_status(s, name);
	char missing[256], msg[400], cycle[300];
	bool active = cq_active(s, cq, missing, sizeof(missing));
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
	}
	if (st) {
		json_object_set_new(st, "flavorsReservation", usage_list(s, groups, usage, name));
		json_object_set_new(st, "flavorsUsage", usage_list(s, groups, usage, name));
		json_object_set_new(st, "conditions",
				    active_condition(cq, active, reason, msg, now));
	}
	write_status(ctl, PK_KIND_CLUSTER_QUEUE, cq, st);
}

static void lq_status(struct pk_ctl *ctl, const struct q_state *s, const char *key,
		      const json_t *lq, const char *now)
{
	const char *cqname = pk_get_string(lq, "spec.clusterQueue");
	const json_t *cq = cqname ? json_object_get(s->cqs, cqname) : NULL;
	json_t *st = counts_status(s, key);

	if (st) {
		json_object_set_new(st, "flavorsReservation",
				    usage_list(s, pk_get(cq, "spec.resourceGroups"),
					       json_object_get(s->lqusage, key), NULL));
		json_object_set_new(st, "flavorsUsage",
				    usage_list(s, pk_get(cq, "spec.resourceGroups"),
					       json_object_get(s->lqusage, key), NULL));
		json_object_set_new(
		    st, "conditions",
		    active_condition(lq, cq != NULL, cq ? "Ready" : "ClusterQueueDoesNotExist",
				     cq ? "Can submit new workloads to localQueue"
					: "Can't submit new workloads to clusterQueue",
				     now));
	}
	write_status(ctl, PK_KIND_LOCAL_QUEUE, lq, st);
}

/* ---- the pass ---------------------------------------------------------------------- */

/* What is admitted already counts against its ClusterQueue (and LocalQueue). */
static void charge_admitted(struct q_state *s)
{
	for (size_t i = 0; i < s->nw; i++) {
		const struct q_workload *w = &s->w[i];
		bool known = w->admitted && json_object_get(s->cqs, w->cq);

		if (!w->admitted)
			continue;
		if (known)
			charge(s, w, w->cq, w->flavors);
		count_both(s, w, known ? w->cq : NULL, "admitted", 1);
	}
}

/* ---- fair sharing ------------------------------------------------------------------ */

/* The ClusterQueue w's LocalQueue names (NULL: none). */
static const char *cq_name_of(const struct q_state *s, const struct q_workload *w)
{
	char key[600];

	snprintf(key, sizeof(key), "%s/%s", w->ns, w->queue);
	return pk_get_string(json_object_get(s->lqs, key), "spec.clusterQueue");
}

/* spec.fairSharing.weight in milli (default 1); -1 when the ClusterQueue sets no fairSharing. */
static int64_t weight_of(const json_t *cq)
{
	const json_t *fs = pk_get(cq, "spec.fairSharing"), *w = json_object_get(fs, "weight");
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
	const json_t *groups = pk_get(json_object_get(s->cqs, cq), "spec.resourceGroups"), *g, *f;
	int64_t weight = weight_of(json_object_get(s->cqs, cq));
	const char *res;
	json_t *x, *cqu = sub(s->usage, cq);
	double dominant = 0;
	size_t i, k;

	json_array_foreach(groups, i, g)
	    json_array_foreach(json_object_get(g, "coveredResources"), k, x)
	{
		int64_t borrowed = 0, lendable = 0;
		size_t j;

		res = json_string_value(x);
		json_array_foreach(res ? json_object_get(g, "flavors") : NULL, j, f)
		{
			const char *fn = pk_get_string(f, "name");
			int64_t use =
			    milli_at(cqu, fn ? fn : "", res) +
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
	while (blocked && tried && (w = next_workload(s, tried, fair))) {
		const char *cq = NULL;
		int admitted = try_admit(ctl, s, w, blocked, &cq);

		tried[w - s->w] = true;
		count_both(s, w, cq, admitted ? "admitted" : "pending", 1);
	}
	free(tried);
	json_decref(blocked);
}

/* Kueue's gauges of this pass (queues_metrics.c prints them). */
static void gauges(struct pk_ctl *ctl, const struct q_state *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *cq;
	json_t *o, *g, *fl, *r;
	size_t i, k, j;

	if (!f)
		return;
	fputs("# HELP kueue_pending_workloads Pending workloads per ClusterQueue.\n"
	      "# TYPE kueue_pending_workloads gauge\n",
	      f);
	json_object_foreach(s->cqs, cq, o)
	    fprintf(f, "kueue_pending_workloads{cluster_queue=\"%s\",status=\"active\"} %lld\n", cq,
		    (long long)milli_at(s->counts, cq, "pending"));
	fputs("# HELP kueue_admitted_active_workloads Admitted workloads that are active.\n"
	      "# TYPE kueue_admitted_active_workloads gauge\n",
	      f);
	json_object_foreach(s->cqs, cq, o)
	    fprintf(f, "kueue_admitted_active_workloads{cluster_queue=\"%s\"} %lld\n", cq,
		    (long long)milli_at(s->counts, cq, "admitted"));
	fputs("# HELP kueue_cluster_queue_resource_usage Usage per flavor and resource.\n"
	      "# TYPE kueue_cluster_queue_resource_usage gauge\n"
	      "# HELP kueue_cluster_queue_nominal_quota Nominal quota per flavor and resource.\n"
	      "# TYPE kueue_cluster_queue_nominal_quota gauge\n",
	      f);
	json_object_foreach(s->cqs, cq, o)
	    json_array_foreach(pk_get(o, "spec.resourceGroups"), i, g)
		json_array_foreach(json_object_get(g, "flavors"), k, fl)
		    json_array_foreach(json_object_get(fl, "resources"), j, r)
	{
		const char *fn = pk_get_string(fl, "name"), *rn = pk_get_string(r, "name");
		const char *cohort = pk_get_string(o, "spec.cohortName");
		char labels[600];

		if (!fn || !rn)
			continue;
		snprintf(labels, sizeof(labels),
			 "{cohort=\"%s\",cluster_queue=\"%s\",flavor=\"%s\",resource=\"%s\"}",
			 cohort ? cohort : "", cq, fn, rn);
		fprintf(f, "kueue_cluster_queue_resource_usage%s %g\n", labels,
			(double)milli_at(json_object_get(s->usage, cq), fn, rn) / 1000);
		fprintf(f, "kueue_cluster_queue_nominal_quota%s %g\n", labels,
			(double)q_tree_nominal(s->tree, cq, fn, rn) / 1000);
	}
	if (fclose(f) == 0)
		q_metrics_set_gauges(ctl, text);
	else
		free(text);
}

/* Set (value) or remove (NULL) annotation key of obj; whether it changed. */
static bool set_annotation(json_t *obj, const char *key, const char *value)
{
	json_t *meta = json_object_get(obj, "metadata"),
	       *ann = json_object_get(meta, "annotations");
	const char *have = json_string_value(json_object_get(ann, key));

	if (have && value && strcmp(have, value) == 0)
		return false;
	if (!have && !value)
		return false;
	if (!json_is_object(ann))
		json_object_set_new(meta, "annotations", ann = json_object());
	if (value)
		json_object_set_new(ann, key, json_string(value));
	else
		json_object_del(ann, key);
	return true;
}

/*
 * Each pending workload's place in its ClusterQueue's order (1 is next)
 * and why it waits, in the annotations queue.podkernel.dev/position and
 * queue.podkernel.dev/pending-reason, written when they change.
 */
static void note_pending(struct pk_ctl *ctl, struct q_state *s)
{
	json_t *pos = json_object();

	for (size_t i = 0; pos && i < s->nw; i++) {
		struct q_workload *w = &s->w[i];
		char key[600], at[32] = "";
		const char *cq;
		json_t *obj;
		bool changed;

		if (w->admitted || w->preempted || !w->why)
			continue;
		snprintf(key, sizeof(key), "%s/%s", w->ns, w->queue);
		cq = pk_get_string(json_object_get(s->lqs, key), "spec.clusterQueue");
		if (cq && json_object_get(s->cqs, cq)) {
			json_object_set_new(
			    pos, cq,
			    json_integer(json_integer_value(json_object_get(pos, cq)) + 1));
			snprintf(at, sizeof(at), "%lld",
				 (long long)json_integer_value(json_object_get(pos, cq)));
		}
		obj = json_deep_copy(w->obj);
		changed = obj && set_annotation(obj, Q_ANNOTATION_POSITION, *at ? at : NULL);
		changed |= obj && set_annotation(obj, Q_ANNOTATION_PENDING, w->why);
		if (changed) {
			struct pk_write_ref ref = ctl_ref_of(w->kind, w->obj);
			int r = ctl_replace(ctl, &ref, obj, NULL);

			if (r < 0 && r != -PK_WRITE_ECONFLICT)
				ctl_log(ctl, 1, "%s %s/%s: pending: %s", pk_kind_to_string(w->kind),
					w->ns, w->name, pk_write_strerror(r));
		}
		json_decref(obj);
	}
	json_decref(pos);
}

void ctl_queues_run(struct pk_ctl *ctl)
{
	struct q_state s = {0};
	const char *key;
	json_t *obj;
	char now[32];

	if (state_load(ctl, &s) == 0) {
		charge_admitted(&s);
		admit_pending(ctl, &s);
		note_pending(ctl, &s);
		gauges(ctl, &s);
		pk_time_format((int64_t)time(NULL), now);
		json_object_foreach(s.cqs, key, obj) cq_status(ctl, &s, key, obj, now);
		json_object_foreach(s.lqs, key, obj) lq_status(ctl, &s, key, obj, now);
		ctl_record_flush(ctl);
	}
	state_clear(&s);
}

/* A controller context for one offline pass: the store, a writer on it, no Events, no log. */
int pk_queues_pass_opts(struct pk_store *store, const struct pk_queues_pass_opts *o)
{
	struct pk_ctl *ctl = calloc(1, sizeof(*ctl));
	int r;

	if (!ctl)
		return -ENOMEM;
	r = -pthread_mutex_init(&ctl->m.lock, NULL);
	if (r == 0) {
		ctl->store = store;
		ctl->queues_quota_only = o && o->quota_only;
		r = pk_writer_store_new(store, &ctl->writer);
		if (r == 0)
			ctl_queues_run(ctl);
		pk_writer_free(ctl->writer);
		pthread_mutex_destroy(&ctl->m.lock);
	}
	q_metrics_free(&ctl->m);
	free(ctl);
	return r;
}

int pk_queues_pass(struct pk_store *store)
{
	return pk_queues_pass_opts(store, NULL);
}

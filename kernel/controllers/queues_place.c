/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_place.c — the placement half of admission: a workload the quota
 * admits is admitted only if the scheduling core places all of its pods
 * now, so that nothing is admitted that cannot run.
 *
 * One pass holds a picture of the cluster, read once from the store: the
 * nodes, the pods bound to them (not finished), the groups, priority
 * classes, namespaces, storage and DRA objects the core reads.  A try adds
 * the workload as it would be admitted (its Job or JobSet, unsuspended,
 * with its flavors' node selectors and tolerations), compiles it into its
 * groups and pods as `podctl schedule` does (wb_expand_objects), and runs
 * the core offline to quiescence with the default strategy
 * (a shared run: the run's objects are the picture's, and only those it
 * writes are copied, so a try that is not kept leaves the picture as it was;
 * with the controller's cache, the Nodes and pods of the picture are decoded
 * once, not on every try: pk_sched_opts.decoded).  The scheduler of a try
 * that is kept is kept too, holding the picture, and the next try of the
 * pass adds only its workload to it (pk_sched_run_kept, which decides as a
 * new scheduler of the same objects does).
 * Every pod bound: placed, and the picture keeps the run's outcome, so the
 * next try of the pass counts it.  A pod left unbound: not placed, and why
 * is that pod's PodScheduled message, the core's own explanation.  The pods
 * of workloads preempted for it are left out of the picture first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers-internal.h"
#include "kernel/sched/sched.h"

struct q_place {
	json_t *base;	    /* the cluster as the core sees it, and what this pass admitted */
	json_t *topologies; /* Kueue Topology objects by name */
	struct pk_sched_decoded *decoded; /* its Nodes and pods decoded (borrowed), or NULL */
	struct pk_sched *kept; /* the scheduler of the last kept try, holding base; or NULL */
	json_t *held;	/* kept carried from the last pass: what it holds (not base); or NULL */
	size_t carried; /* tries run on the carried scheduler */
	struct pk_claims_seen *claims; /* what its runs' claims passes saw (borrowed), or NULL */
};

bool q_place_holds_node(const json_t *pod)
{
	const char *phase = ctl_at_string(pod, "status", "phase");

	return ctl_at_string(pod, "spec", "nodeName") &&
	       !(phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0));
}

int q_place_new(struct pk_store *store, struct q_place **ret)
{
	struct q_place *p = calloc(1, sizeof(*p));
	json_t *items = NULL, *o;
	size_t i;
	int r = 0;

	if (!p || !(p->base = json_array())) {
		free(p);
		return -ENOMEM;
	}
	/* what the core reads (pk_sched_kinds), pods apart: only those holding a node */
	for (const struct pk_type *const *k = pk_sched_kinds(); r == 0 && *k; k++) {
		if (*k == &pk_type_pod)
			continue;
		r = pk_store_list(store, *k, NULL, NULL, &items, NULL, NULL);
		if (r == 0)
			json_array_extend(p->base, items);
		json_decref(items);
		items = NULL;
	}
	if (r == 0)
		r = pk_store_list(store, &pk_type_pod, NULL, NULL, &items, NULL, NULL);
	json_array_foreach(r == 0 ? items : NULL, i, o) if (q_place_holds_node(o))
	    json_array_append(p->base, o);
	json_decref(items);
	items = NULL;
	if (r == 0 && !(p->topologies = json_object()))
		r = -ENOMEM;
	if (r == 0)
		r = pk_store_list(store, &pk_type_topology, NULL, NULL, &items, NULL, NULL);
	json_array_foreach(r == 0 ? items : NULL, i, o)
	    json_object_set(p->topologies, pk_name(o), o);
	json_decref(items);
	if (r < 0) {
		q_place_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

int q_place_from(json_t *base, json_t *topologies, struct q_place **ret)
{
	struct q_place *p = base && topologies ? calloc(1, sizeof(*p)) : NULL;

	if (!p) {
		json_decref(base);
		json_decref(topologies);
		return -ENOMEM;
	}
	p->base = base;
	p->topologies = topologies;
	*ret = p;
	return 0;
}

void q_place_set_decoded(struct q_place *p, struct pk_sched_decoded *d)
{
	p->decoded = d;
}

void q_place_set_claims(struct q_place *p, struct pk_claims_seen *seen)
{
	p->claims = seen;
}

void q_place_free(struct q_place *p)
{
	if (!p)
		return;
	json_decref(p->base);
	json_decref(p->topologies);
	json_decref(p->held);
	pk_sched_free(p->kept);
	free(p);
}

void q_place_carry_in(struct q_place *p, struct pk_sched *kept, json_t *held)
{
	pk_sched_free(p->kept);
	json_decref(p->held);
	p->kept = kept;
	p->held = held;
}

size_t q_place_carried(const struct q_place *p)
{
	return p->carried;
}

void q_place_carry_out(struct q_place *p, struct pk_sched **ret_kept, json_t **ret_held)
{
	*ret_kept = p->kept;
	*ret_held = p->kept ? (p->held ? p->held : json_incref(p->base)) : NULL;
	if (!p->kept)
		json_decref(p->held);
	p->kept = NULL;
	p->held = NULL;
}

/* Whether pod belongs to one of the workloads in gone ("Kind/ns/name" -> true). */
static bool pod_of(const json_t *pod, const json_t *gone)
{
	const json_t *labels = ctl_at(pod, "metadata", "labels");
	const char *job = pk_get_string(labels, "job-name");
	const char *js =
	    json_string_value(json_object_get(labels, "jobset.sigs.k8s.io/jobset-name"));
	char key[600];

	pk_obj_key(key, sizeof(key), &pk_type_pod, pk_namespace(pod), pk_name(pod));
	if (json_object_get(gone, key))
		return true;
	if (js) {
		pk_obj_key(key, sizeof(key), &pk_type_jobset, pk_namespace(pod), js);
		if (json_object_get(gone, key))
			return true;
	}
	pk_obj_key(key, sizeof(key), &pk_type_job, pk_namespace(pod), job ? job : "");
	return job && json_object_get(gone, key);
}

/* The first unbound pod's reason, as the core wrote it; NULL when every pod is bound. */
static const char *unplaced(const json_t *objects, char *why, size_t n)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o)
	{
		const json_t *c;

		if (json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName")) ||
		    pk_kind_of(o) != PK_KIND_POD)
			continue;
		c = pk_condition_get(o, "PodScheduled");
		snprintf(why, n, "pod %s: %s", pk_name(o),
			 pk_get_string(c, "message")  ? pk_get_string(c, "message")
			 : pk_get_string(c, "reason") ? pk_get_string(c, "reason")
						      : "not placed");
		return why;
	}
	return NULL;
}

/*
 * Whether the kept scheduler holds what objects start with: the picture,
 * none of its pods left out (the workload's objects follow).
 */
static bool kept_holds(const struct q_place *p, const json_t *objects, const json_t *gone)
{
	size_t n = json_array_size(p->base);

	if (!p->kept || json_object_size(gone) || json_array_size(objects) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (json_array_get(objects, i) != json_array_get(p->base, i))
			return false;
	return true;
}

/* Whether expanded starts with in's first n objects. */
static bool starts_with(const json_t *expanded, const json_t *in, size_t n)
{
	if (json_array_size(expanded) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (json_array_get(expanded, i) != json_array_get(in, i))
			return false;
	return true;
}

/*
 * The run of a try: on the kept scheduler when it holds the picture; on
 * the one carried from the last pass, fed what changed since, when the
 * picture (its first nbase objects, in[0..nbase)) leads expanded; else on
 * a new one.
 */
static int place_run(struct q_place *p, const json_t *in, size_t nbase, const json_t *expanded,
		     const json_t *gone, json_t **out, json_t **pre, struct pk_errors *errs)
{
	struct pk_sched_opts opts = {
	    .controllers = pk_claims_pass, .controllers_arg = p->claims, .decoded = p->decoded};
	size_t from = !p->held && kept_holds(p, expanded, gone) ? json_array_size(p->base) : 0;
	json_t *held = p->held;
	int r;

	p->held = NULL;
	if (held && p->kept && starts_with(expanded, in, nbase)) {
		r = pk_sched_run_carried(&p->kept, held, expanded, nbase, &opts, out, pre, errs);
		json_decref(held);
		p->carried += r == 1;
		return r < 0 ? r : 0;
	}
	json_decref(held);
	if (!from) {
		pk_sched_free(p->kept);
		p->kept = NULL;
	}
	r = pk_sched_run_kept(&p->kept, expanded, from, &opts, out, pre, errs);
	if (r == -EAGAIN) { /* the claims changed one of the picture's objects */
		pk_sched_free(p->kept);
		p->kept = NULL;
		r = pk_sched_run_kept(&p->kept, expanded, 0, &opts, out, pre, errs);
	}
	return r;
}

/*
 * Whether the picture never holds what expansion replaces: it is the kinds
 * the core reads, listed (q_place_new), and what runs made of an expanded
 * picture and workload.
 */
static bool base_expanded(void)
{
	return !pk_sched_reads(&pk_type_job) && !pk_sched_reads(&pk_type_jobset) &&
	       !pk_sched_reads(&pk_type_leader_worker_set);
}

/*
 * As q_place_try; the picture keeps a placed workload only when commit, and
 * the scheduler that placed it is kept with it, for the next try: it holds
 * the picture as a new one would (pk_sched_run_kept), so the next try adds
 * only its workload.  A try not kept, or one that preempted, drops it.
 */
static int place_try(struct q_place *p, const json_t *workload, const json_t *gone, bool commit,
		     char *why, size_t n)
{
	struct pk_errors errs = {0};
	json_t *in = json_array(), *expanded = NULL, *out = NULL, *pre = NULL, *o;
	size_t i, nbase;
	int r = in ? 0 : -ENOMEM;

	json_array_foreach(r == 0 ? p->base : NULL, i,
			   o) if (!json_object_size(gone) ||
				  !(pk_kind_of(o) == PK_KIND_POD && pod_of(o, gone)))
	    json_array_append(in, o); /* the pods of the workloads preempted for it left out */
	nbase = json_array_size(in);
	if (r == 0 && json_is_array(workload)) /* a pod workload: its pods */
		r = json_array_extend(in, (json_t *)workload) == 0 ? 0 : -ENOMEM;
	else if (r == 0)
		r = json_array_append(in, (json_t *)workload) == 0 ? 0 : -ENOMEM;
	if (r == 0) /* the picture is expanded: only the workload is */
		r = wb_expand_objects_from(in, base_expanded() ? nbase : 0, &expanded, &errs);
	if (r == 0)
		r = place_run(p, in, nbase, expanded, gone, &out, &pre, &errs);
	if (r < 0) {
		snprintf(why, n, "cannot be placed: %s", errs.n ? errs.msg[0] : pk_errno_text(-r));
	} else if (!p->kept && unplaced(out, why, n)) { /* a scheduler kept: every pod bound */
		r = 0;
	} else {
		if (commit) {
			json_decref(p->base);
			p->base = json_incref(out);
		}
		r = 1;
	}
	if (r != 1 || !commit || json_array_size(pre)) {
		pk_sched_free(p->kept);
		p->kept = NULL;
	}
	pk_errors_clear(&errs);
	json_decref(in);
	json_decref(expanded);
	json_decref(out);
	json_decref(pre);
	return r;
}

int q_place_try(struct q_place *p, const json_t *workload, const json_t *gone, char *why, size_t n)
{
	return place_try(p, workload, gone, true, why, n);
}

/* ---- the workload as admitted ------------------------------------------------------ */

/* Call fn on the pod spec of every pod template of obj (a Job's, each replicated Job's). */
static void each_pod_spec(json_t *obj, enum pk_kind kind, void (*fn)(json_t *, void *), void *arg)
{
	size_t i;
	json_t *rj;

	if (kind == PK_KIND_POD) {
		if (json_is_object(json_object_get(obj, "spec")))
			fn(json_object_get(obj, "spec"), arg);
		return;
	}
	if (kind == PK_KIND_JOB) {
		json_t *spec = json_object_get(ctl_at(obj, "spec", "template"), "spec");

		if (json_is_object(spec))
			fn(spec, arg);
		return;
	}
	CTL_ARRAY_EACH(ctl_at(obj, "spec", "replicatedJobs"), i, rj)
	{
		json_t *tmpl = pk_get(rj, "template.spec.template");

		if (!tmpl)
			tmpl =
			    pk_get(rj, "template"); /* a replicated Job given as a pod template */
		if (json_is_object(json_object_get(tmpl, "spec")))
			fn(json_object_get(tmpl, "spec"), arg);
	}
}

/* A flavor's nodeLabels into a pod spec's nodeSelector, its tolerations after the spec's. */
static void add_flavor(json_t *spec, void *arg)
{
	const json_t *flavor = arg;
	json_t *sel = json_object_get(spec, "nodeSelector"), *tols, *v;
	const char *k;
	size_t i;

	json_object_foreach((json_t *)ctl_at(flavor, "spec", "nodeLabels"), k, v)
	{
		if (!json_is_object(sel))
			json_object_set_new(spec, "nodeSelector", sel = json_object());
		json_object_set(sel, k, v);
	}
	tols = json_object_get(spec, "tolerations");
	json_array_foreach(ctl_at(flavor, "spec", "tolerations"), i, v)
	{
		if (!json_is_array(tols))
			json_object_set_new(spec, "tolerations", tols = json_array());
		json_array_append(tols, v);
	}
}

/* A pod spec without the gate kueue.x-k8s.io/admission (its schedulingGates gone when empty). */
static void ungate(json_t *spec)
{
	json_t *gates = json_object_get(spec, "schedulingGates"), *g;
	size_t i;

	json_array_foreach(gates, i, g)
	{
		const char *name = pk_get_string(g, "name");

		if (name && strcmp(name, PK_KUEUE_ADMISSION_GATE) == 0) {
			json_array_remove(gates, i);
			break;
		}
	}
	if (json_is_array(gates) && json_array_size(gates) == 0)
		json_object_del(spec, "schedulingGates");
}

json_t *q_admitted_copy(const json_t *obj, enum pk_kind kind, const char *admission,
			const json_t *flavors)
{
	json_t *copy = json_deep_copy(obj), *meta, *ann, *f;
	size_t i;

	meta = copy ? json_object_get(copy, "metadata") : NULL;
	if (!json_is_object(meta) || !json_is_object(json_object_get(copy, "spec"))) {
		json_decref(copy);
		return NULL;
	}
	ann = json_object_get(meta, "annotations");
	if (!json_is_object(ann))
		json_object_set_new(meta, "annotations", ann = json_object());
	json_object_set_new(ann, WB_ANNOTATION_QUEUE_ADMISSION, json_string(admission));
	json_object_del(ann, Q_ANNOTATION_POSITION);
	json_object_del(ann, WB_ANNOTATION_QUEUE_ORDER);
	json_object_del(ann, Q_ANNOTATION_PENDING);
	if (kind == PK_KIND_POD)
		ungate(json_object_get(copy, "spec"));
	else
		json_object_set_new(json_object_get(copy, "spec"), "suspend", json_false());
	json_array_foreach(flavors, i, f) each_pod_spec(copy, kind, add_flavor, f);
	return copy;
}

/* Whether toleration tol tolerates taint (Kubernetes' rule). */
static bool tolerates(const json_t *tol, const json_t *taint)
{
	const char *te = pk_get_string(tol, "effect"), *tk = pk_get_string(tol, "key");
	const char *op = pk_get_string(tol, "operator");
	const char *tv = pk_get_string(tol, "value"), *v = pk_get_string(taint, "value");

	if (te && *te && strcmp(te, pk_get_string(taint, "effect") ?: "") != 0)
		return false;
	if (!tk || !*tk)
		return op && strcmp(op, "Exists") == 0;
	if (strcmp(tk, pk_get_string(taint, "key") ?: "") != 0)
		return false;
	return (op && strcmp(op, "Exists") == 0) || strcmp(tv ? tv : "", v ? v : "") == 0;
}

struct taint_check {
	const json_t *flavor;
	const json_t *untolerated; /* the first taint some pod spec does not tolerate */
};

static void check_spec(json_t *spec, void *arg)
{
	struct taint_check *c = arg;
	size_t i, k;
	json_t *taint, *tol;

	CTL_ARRAY_EACH(ctl_at(c->flavor, "spec", "nodeTaints"), i, taint)
	{
		const char *e = pk_get_string(taint, "effect");
		bool ok = e && strcmp(e, "PreferNoSchedule") == 0;

		CTL_ARRAY_EACH(json_object_get(spec, "tolerations"), k, tol)
		ok |= tolerates(tol, taint);
		CTL_ARRAY_EACH(ctl_at(c->flavor, "spec", "tolerations"), k, tol)
		ok |= tolerates(tol, taint);
		if (!ok && !c->untolerated)
			c->untolerated = taint;
	}
}

bool q_flavor_tolerated(const json_t *obj, enum pk_kind kind, const json_t *flavor, char *why,
			size_t n)
{
	struct taint_check c = {.flavor = flavor};

	each_pod_spec((json_t *)obj, kind, check_spec, &c);
	if (c.untolerated)
		snprintf(why, n, "untolerated taint %s=%s:%s of flavor %s",
			 pk_get_string(c.untolerated, "key"),
			 pk_get_string(c.untolerated, "value") ?: "",
			 pk_get_string(c.untolerated, "effect"), pk_name(flavor));
	return !c.untolerated;
}

/* ---- topology-aware flavors (Kueue TAS) ---------------------------------------------- */

#define TAS_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define TAS_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define TAS_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"

enum tas_mode { TAS_NONE, TAS_MUST, TAS_PREFER };

/* Kueue's pod set annotations this version does not implement. */
static const char *const tas_refused[] = {
    "kueue.x-k8s.io/podset-slice-required-topology",
    "kueue.x-k8s.io/podset-slice-size",
    "kueue.x-k8s.io/podset-group-name",
};

/* The pod template of pod set i of obj (a Job has one, a JobSet one per replicated Job). */
static json_t *podset(json_t *obj, enum pk_kind kind, size_t i, const char **ret_name)
{
	json_t *rj, *tmpl;

	if (kind == PK_KIND_JOB) {
		*ret_name = pk_name(obj);
		return i == 0 ? (json_t *)ctl_at(obj, "spec", "template") : NULL;
	}
	rj = json_array_get(ctl_at(obj, "spec", "replicatedJobs"), i);
	tmpl = (json_t *)pk_get(rj, "template.spec.template");
	if (!tmpl)
		tmpl =
		    json_object_get(rj, "template"); /* a replicated Job given as a pod template */
	*ret_name = pk_get_string(rj, "name");
	return json_is_object(tmpl) ? tmpl : NULL;
}

/*
 * A pod set's mode and level (an index of levels; levels NULL: no topology)
 * from its template's annotations, as Kueue reads them; < 0 with why when
 * it asks for what cannot be had.
 */
static int tas_mode(const json_t *tmpl, const char *ps, const json_t *levels, int *ret_level,
		    char *why, size_t n)
{
	const json_t *ann = ctl_at(tmpl, "metadata", "annotations");
	const char *req = json_string_value(json_object_get(ann, TAS_REQUIRED));
	const char *pref = json_string_value(json_object_get(ann, TAS_PREFERRED));
	const char *key = req ? req : pref;
	size_t i;
	json_t *l;

	for (i = 0; i < sizeof(tas_refused) / sizeof(tas_refused[0]); i++)
		if (json_object_get(ann, tas_refused[i])) {
			snprintf(why, n, "pod set %s: metadata.annotations[%s]: not implemented",
				 ps, tas_refused[i]);
			return -1;
		}
	if (req && pref) {
		snprintf(why, n, "pod set %s: both %s and %s", ps, TAS_REQUIRED, TAS_PREFERRED);
		return -1;
	}
	if (!key)
		return TAS_NONE;
	if (!levels) {
		snprintf(why, n,
			 "pod set %s asks for topology %s but its flavor has no topologyName", ps,
			 key);
		return -1;
	}
	json_array_foreach(levels, i, l) if (strcmp(pk_get_string(l, "nodeLabel") ?: "", key) == 0)
	{
		*ret_level = (int)i;
		return req ? TAS_MUST : TAS_PREFER;
	}
	snprintf(why, n, "pod set %s: %s is not a level of the flavor's Topology", ps, key);
	return -1;
}

/* Whether labels carry every nodeLabel of flavor. */
static bool has_labels(const json_t *labels, const json_t *flavor)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)ctl_at(flavor, "spec", "nodeLabels"), k, v)
	{
		if (!json_equal(json_object_get(labels, k), v))
			return false;
	}
	return true;
}

static int cmp_domain(const void *a, const void *b)
{
	char *x = json_dumps(*(json_t *const *)a, JSON_SORT_KEYS | JSON_COMPACT);
	char *y = json_dumps(*(json_t *const *)b, JSON_SORT_KEYS | JSON_COMPACT);
	int c = strcmp(x ? x : "", y ? y : "");

	free(x);
	free(y);
	return c;
}

/*
 * The domains of level (an index of levels) among the nodes of flavor: each
 * a node selector of the node labels of levels 0..level, as Kueue names a
 * domain by its labels from the top, in label-value order; NULL: no memory.
 */
static json_t *domains(const struct q_place *p, const json_t *flavor, const json_t *levels,
		       int level)
{
	json_t *seen = json_object(), *out = json_array(), *o, *v;
	json_t **sorted = NULL;
	size_t i, k = 0;

	json_array_foreach(seen && out ? p->base : NULL, i, o)
	{
		const json_t *labels = ctl_at(o, "metadata", "labels");
		json_t *sel;
		char *key;

		if (pk_kind_of(o) != PK_KIND_NODE || !has_labels(labels, flavor))
			continue;
		sel = json_object();
		for (int l = 0; sel && l <= level; l++) {
			const char *lk =
			    pk_get_string(json_array_get(levels, (size_t)l), "nodeLabel");

			if (!(v = json_object_get(labels, lk ? lk : ""))) {
				json_decref(sel);
				sel = NULL;
			} else {
				json_object_set(sel, lk, v);
			}
		}
		key = sel ? json_dumps(sel, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
		if (key && !json_object_get(seen, key)) {
			json_object_set_new(seen, key, json_true());
			json_array_append(out, sel);
		}
		free(key);
		json_decref(sel);
	}
	json_decref(seen);
	if (out && json_array_size(out) > 1 &&
	    (sorted = calloc(json_array_size(out), sizeof(*sorted)))) {
		json_array_foreach(out, i, o) sorted[k++] = json_incref(o);
		qsort(sorted, k, sizeof(*sorted), cmp_domain);
		json_array_clear(out);
		for (i = 0; i < k; i++)
			json_array_append_new(out, sorted[i]);
		free(sorted);
	}
	return out;
}

/* sel's labels into the nodeSelector of the pod template tmpl. */
static void pin(json_t *tmpl, const json_t *sel)
{
	json_t *spec = json_object_get(tmpl, "spec"), *ns, *v;
	const char *k;

	if (!json_is_object(spec))
		return;
	ns = json_object_get(spec, "nodeSelector");
	if (!json_is_object(ns))
		json_object_set_new(spec, "nodeSelector", ns = json_object());
	json_object_foreach((json_t *)sel, k, v) json_object_set(ns, k, v);
}

struct tas {
	struct q_place *p;
	const json_t *obj, *gone, *flavor, *levels;
	enum pk_kind kind;
	size_t nsets, last; /* pod sets; the last one with a topology */
	int *mode, *level;
	json_t *pins; /* per pod set: the domain's node selector chosen, or null */
};

/*
 * Place obj with the pod sets before k pinned to their domains and k to
 * cand (NULL: anywhere); the last constrained pod set's placement is kept
 * (*ret_obj the workload as placed).
 */
static int tas_try(struct tas *t, size_t k, const json_t *cand, json_t **ret_obj, char *why,
		   size_t n)
{
	json_t *copy = json_deep_copy(t->obj);
	const char *name;
	int r;

	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i <= k; i++) {
		const json_t *sel = i == k ? cand : json_array_get(t->pins, i);
		json_t *tmpl = podset(copy, t->kind, i, &name);

		if (tmpl && json_is_object(sel))
			pin(tmpl, sel);
	}
	r = place_try(t->p, copy, t->gone, k == t->last, why, n);
	if (r == 1 && k == t->last)
		*ret_obj = copy;
	else
		json_decref(copy);
	return r;
}

/*
 * Pod set k's domain: the first of its level where the whole workload is
 * placed; preferred, the levels above in turn, then anywhere, as Kueue
 * falls back.  0 with why when none.
 */
static int tas_search(struct tas *t, size_t k, json_t **ret_obj, char *why, size_t n)
{
	int lo = t->mode[k] == TAS_PREFER ? -1 : t->level[k], r = 0;
	char last[400] = "";
	const char *ps;
	size_t i, tried = 0;
	json_t *d;

	podset((json_t *)t->obj, t->kind, k, &ps);
	for (int l = t->level[k]; r == 0 && l >= lo; l--) {
		json_t *ds = l >= 0 ? domains(t->p, t->flavor, t->levels, l) : json_pack("[n]");

		if (!ds)
			return -ENOMEM;
		json_array_foreach(ds, i, d)
		{
			tried++;
			r = tas_try(t, k, json_is_null(d) ? NULL : d, ret_obj, last, sizeof(last));
			if (r != 0)
				break;
		}
		if (r == 1)
			json_array_set(t->pins, k, d);
		json_decref(ds);
	}
	if (r == 0 && tried == 0)
		snprintf(
		    why, n, "pod set %s: no node of flavor %s has the labels of topology level %s",
		    ps ? ps : "", pk_name(t->flavor),
		    pk_get_string(json_array_get(t->levels, (size_t)t->level[k]), "nodeLabel"));
	else if (r == 0)
		snprintf(why, n, "pod set %s: no domain of topology level %s places it (%s)",
			 ps ? ps : "",
			 pk_get_string(json_array_get(t->levels, (size_t)t->level[k]), "nodeLabel"),
			 last);
	else if (r < 0)
		snprintf(why, n, "%s", last);
	return r;
}

/* The first of flavors with a topologyName (NULL: none); its Topology's levels in *ret_levels. */
static const json_t *tas_flavor(const struct q_place *p, const json_t *flavors,
				const json_t **ret_levels, char *why, size_t n)
{
	size_t i;
	json_t *f;

	json_array_foreach(flavors, i, f)
	{
		const char *name = ctl_at_string(f, "spec", "topologyName");
		const json_t *topo;

		if (!name)
			continue;
		topo = json_object_get(p->topologies, name);
		*ret_levels = ctl_at(topo, "spec", "levels");
		if (!json_array_size(*ret_levels))
			snprintf(why, n, "Topology %s of flavor %s not found", name, pk_name(f));
		return f;
	}
	return NULL;
}

static int tas_plan(struct tas *t, char *why, size_t n)
{
	const char *ps;
	bool any = false;

	t->nsets =
	    t->kind == PK_KIND_JOB ? 1 : json_array_size(ctl_at(t->obj, "spec", "replicatedJobs"));
	t->mode = calloc(t->nsets + 1, sizeof(*t->mode));
	t->level = calloc(t->nsets + 1, sizeof(*t->level));
	t->pins = json_array();
	if (!t->mode || !t->level || !t->pins)
		return -ENOMEM;
	for (size_t i = 0; i < t->nsets; i++) {
		const json_t *tmpl = podset((json_t *)t->obj, t->kind, i, &ps);

		json_array_append_new(t->pins, json_null());
		t->mode[i] = tas_mode(tmpl, ps ? ps : "", t->levels, &t->level[i], why, n);
		if (t->mode[i] < 0)
			return 0;
		if (t->mode[i] != TAS_NONE) {
			t->last = i;
			any = true;
		}
	}
	return any ? 1 : 2;
}

int q_place_admit(struct q_place *p, json_t **workload, enum pk_kind kind, const json_t *flavors,
		  const json_t *gone, char *why, size_t n)
{
	struct tas t = {.p = p, .obj = *workload, .gone = gone, .kind = kind};
	json_t *placed = NULL;
	int r;

	why[0] = '\0';
	t.flavor = tas_flavor(p, flavors, &t.levels, why, n);
	if (t.flavor && !json_array_size(t.levels))
		return 0;
	r = tas_plan(&t, why, n);
	if (r == 2) /* no pod set asks for a topology: anywhere on the flavor's nodes */
		r = place_try(p, *workload, gone, true, why, n);
	for (size_t k = 0; r == 1 && k < t.nsets; k++)
		if (t.mode[k] != TAS_NONE)
			r = tas_search(&t, k, &placed, why, n);
	if (r == 1 && placed) {
		json_decref(*workload);
		*workload = placed;
	} else {
		json_decref(placed);
	}
	free(t.mode);
	free(t.level);
	json_decref(t.pins);
	return r;
}

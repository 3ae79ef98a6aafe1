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
 * the core offline to quiescence (pk_sched_run) with the default strategy.
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
	json_t *base; /* the cluster as the core sees it, and what this pass admitted */
};

static bool holds_node(const json_t *pod)
{
	const char *phase = pk_get_string(pod, "status.phase");

	return pk_get_string(pod, "spec.nodeName") &&
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
	for (const char *const *k = pk_sched_kinds(); r == 0 && *k; k++) {
		if (strcmp(*k, "Pod") == 0)
			continue;
		r = pk_store_list(store, *k, NULL, NULL, &items, NULL, NULL);
		if (r == 0)
			json_array_extend(p->base, items);
		json_decref(items);
		items = NULL;
	}
	if (r == 0)
		r = pk_store_list(store, "Pod", NULL, NULL, &items, NULL, NULL);
	json_array_foreach(r == 0 ? items : NULL, i, o) if (holds_node(o))
	    json_array_append(p->base, o);
	json_decref(items);
	if (r < 0) {
		q_place_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

void q_place_free(struct q_place *p)
{
	if (!p)
		return;
	json_decref(p->base);
	free(p);
}

/* Whether pod belongs to one of the workloads in gone ("Kind/ns/name" -> true). */
static bool pod_of(const json_t *pod, const json_t *gone)
{
	const json_t *labels = pk_get(pod, "metadata.labels");
	const char *job = pk_get_string(labels, "job-name");
	const char *js =
	    json_string_value(json_object_get(labels, "jobset.sigs.k8s.io/jobset-name"));
	char key[600];

	snprintf(key, sizeof(key), "Pod/%s/%s", pk_namespace(pod), pk_name(pod));
	if (json_object_get(gone, key))
		return true;
	if (js) {
		snprintf(key, sizeof(key), "JobSet/%s/%s", pk_namespace(pod), js);
		if (json_object_get(gone, key))
			return true;
	}
	snprintf(key, sizeof(key), "Job/%s/%s", pk_namespace(pod), job ? job : "");
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

		if (pk_kind_of(o) != PK_KIND_POD || pk_get_string(o, "spec.nodeName"))
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

int q_place_try(struct q_place *p, const json_t *workload, const json_t *gone, char *why, size_t n)
{
	struct pk_errors errs = {0};
	json_t *in = json_array(), *expanded = NULL, *out = NULL, *pre = NULL, *o;
	size_t i;
	int r = in ? 0 : -ENOMEM;

	json_array_foreach(r == 0 ? p->base : NULL, i,
			   o) if (!(pk_kind_of(o) == PK_KIND_POD && pod_of(o, gone)))
	    json_array_append(in, o);
	if (r == 0 && json_is_array(workload)) /* a pod workload: its pods */
		r = json_array_extend(in, (json_t *)workload) == 0 ? 0 : -ENOMEM;
	else if (r == 0)
		r = json_array_append(in, (json_t *)workload) == 0 ? 0 : -ENOMEM;
	if (r == 0)
		r = wb_expand_objects(in, &expanded, &errs);
	if (r == 0)
		r = pk_sched_run(expanded, NULL, &out, &pre, &errs);
	if (r < 0) {
		snprintf(why, n, "cannot be placed: %s", errs.n ? errs.msg[0] : pk_errno_text(-r));
	} else if (unplaced(out, why, n)) {
		r = 0;
	} else {
		json_decref(p->base);
		p->base = json_incref(out);
		r = 1;
	}
	pk_errors_clear(&errs);
	json_decref(in);
	json_decref(expanded);
	json_decref(out);
	json_decref(pre);
	return r;
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
		if (json_is_object(pk_get(obj, "spec.template.spec")))
			fn(pk_get(obj, "spec.template.spec"), arg);
		return;
	}
	json_array_foreach(pk_get(obj, "spec.replicatedJobs"), i, rj)
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

	json_object_foreach((json_t *)pk_get(flavor, "spec.nodeLabels"), k, v)
	{
		if (!json_is_object(sel))
			json_object_set_new(spec, "nodeSelector", sel = json_object());
		json_object_set(sel, k, v);
	}
	tols = json_object_get(spec, "tolerations");
	json_array_foreach(pk_get(flavor, "spec.tolerations"), i, v)
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

	json_array_foreach(pk_get(c->flavor, "spec.nodeTaints"), i, taint)
	{
		const char *e = pk_get_string(taint, "effect");
		bool ok = e && strcmp(e, "PreferNoSchedule") == 0;

		json_array_foreach(json_object_get(spec, "tolerations"), k, tol) ok |=
		    tolerates(tol, taint);
		json_array_foreach(pk_get(c->flavor, "spec.tolerations"), k, tol) ok |=
		    tolerates(tol, taint);
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

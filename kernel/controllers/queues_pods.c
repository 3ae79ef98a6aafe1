/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_pods.c — plain pods and pod groups as queued workloads, as Kueue's
 * pod integration queues them.
 *
 * A pod labelled kueue.x-k8s.io/queue-name that no controller owns
 * (pk_pod_queue_name) is created with the scheduling gate
 * kueue.x-k8s.io/admission (pk_pod_default_queue_gate), so the scheduler
 * leaves it alone.  The unit of admission is the pod's root group (its
 * PodGroup, up the parentCompositePodGroupName chain of CompositePodGroups)
 * or, outside any group, the pod itself: the pending pods of one root are one
 * workload, their requests summed, created when its first pod was.  The
 * admission is one batch: each pod ungated, annotated with the admission
 * and given its flavors' node labels and tolerations.  Pods of a root that
 * are admitted already count as a workload of their own; pods that join it
 * later are admitted on their own quota.  Taking an admission back (for
 * preemption, or draining a stopped queue) deletes the pods, as Kueue stops
 * a plain pod; a controller that recreates them queues them again.
 *
 * Kueue's plain pod group (kueue.x-k8s.io/pod-group-name NAME and
 * pod-group-total-count N on its pods) is the PodGroup NAME, which its pods
 * name from their creation (pk_pod_default_kueue_group): it waits until N
 * pods exist (counting those admitted), is inadmissible when they disagree
 * on N or outnumber it, and its admission creates the PodGroup, a gang of N
 * labelled queue.podkernel.dev/kueue-pod-group, in the same batch when there
 * is none; such a PodGroup that no queued pod names any more is deleted
 * (q_pods_groups_gone), so the next group of its name gets a new one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/controllers/queues-internal.h"

static bool pod_finished(const json_t *pod)
{
	const char *phase = ctl_at_string(pod, "status", "phase");

	return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

static bool gated(const json_t *pod)
{
	size_t i;
	json_t *g;

	json_array_foreach(ctl_at(pod, "spec", "schedulingGates"), i, g)
	{
		const char *name = pk_get_string(g, "name");

		if (name && strcmp(name, PK_KUEUE_ADMISSION_GATE) == 0)
			return true;
	}
	return false;
}

static const char *admission_of(const json_t *pod)
{
	return json_string_value(
	    json_object_get(ctl_at(pod, "metadata", "annotations"), WB_ANNOTATION_QUEUE_ADMISSION));
}

/*
 * The root a pod is admitted with: its PodGroup and that group's ancestors
 * (CompositePodGroups), the topmost named; *ret_kind "Pod" and its own name
 * outside any group.
 */
static const char *root_of(const struct q_state *s, const json_t *pod, const char **ret_kind)
{
	const char *name = pk_pod_group_name(pod), *kind = "PodGroup", *ns = pk_namespace(pod);

	if (!name) {
		*ret_kind = "Pod";
		return pk_name(pod);
	}
	for (int depth = 0; depth < 8; depth++) {
		char key[700];
		const char *parent;

		pk_obj_key(key, sizeof(key), pk_type_by_kind(kind), ns, name);
		parent = ctl_at_string(json_object_get(s->groups, key), "spec",
				       "parentCompositePodGroupName");
		if (!parent)
			break;
		kind = "CompositePodGroup";
		name = parent;
	}
	*ret_kind = kind;
	return name;
}

/* The admission annotation "CQ/F1,F2" of an admitted pod into w. */
static void admitted_by(struct q_workload *w, const char *a)
{
	const char *slash = a ? strchr(a, '/') : NULL;

	if (!slash || w->admitted)
		return;
	w->admitted = true;
	w->cq = strndup(a, (size_t)(slash - a));
	w->flavors = json_array();
	for (const char *p = slash + 1; w->flavors && *p;) {
		size_t n = strcspn(p, ",");

		json_array_append_new(w->flavors, json_stringn(p, n));
		p += n + (p[n] == ',');
	}
}

/* The workload of key, made (from pod) when it is new; NULL: no memory. */
static struct q_workload *workload_of(struct q_state *s, json_t *index, const char *key,
				      json_t *pod, const char *kind, const char *root)
{
	json_t *at = json_object_get(index, key);
	struct q_workload *w;

	if (at)
		return &s->w[json_integer_value(at)];
	if (s->nw >= s->capw)
		return NULL;
	w = &s->w[s->nw];
	*w = (struct q_workload){.obj = pod,
				 .kind = PK_KIND_POD,
				 .kind_name = kind,
				 .ns = pk_namespace(pod),
				 .name = root,
				 .queue = pk_pod_queue_name(pod),
				 .created = ctl_at_string(pod, "metadata", "creationTimestamp"),
				 .pods = json_array(),
				 .requests = json_object()};
	s->nw++;
	if (!w->pods || !w->requests ||
	    json_object_set_new(index, key, json_integer((json_int_t)(s->nw - 1))) < 0)
		return NULL;
	w->priority = q_priority(s, w, pk_get(pod, "spec"));
	return w;
}

static int add_pod(struct q_state *s, json_t *index, json_t *pod)
{
	const char *kind, *root = root_of(s, pod, &kind), *created;
	bool admitted = admission_of(pod) && !gated(pod);
	struct q_workload *w;
	char key[800];

	snprintf(key, sizeof(key), "%s/%s/%s%s", kind, pk_namespace(pod), root,
		 admitted ? "#admitted" : "");
	w = workload_of(s, index, key, pod, kind, root);
	if (!w || json_array_append(w->pods, pod) < 0 ||
	    q_add_pod_requests(w->requests, pod, 1) < 0)
		return -ENOMEM;
	created = ctl_at_string(pod, "metadata", "creationTimestamp");
	if (created && (!w->created || strcmp(created, w->created) < 0))
		w->created = created;
	if (admitted)
		admitted_by(w, admission_of(pod));
	return 0;
}

/* ---- Kueue's pod groups ---------------------------------------------------------- */

/* The PodGroup of a Kueue pod group: a gang of its total count, labelled as made for it. */
static json_t *kueue_pod_group(const struct q_workload *w, const char *name, int64_t total)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:{s:{s:I}}}}", "apiVersion",
			 "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name", name,
			 "namespace", w->ns, "labels", Q_LABEL_KUEUE_POD_GROUP, "true", "spec",
			 "schedulingPolicy", "gang", "minCount", (json_int_t)total);
}

void q_pods_groups_gone(struct pk_ctl *ctl, const struct q_state *s)
{
	json_t *named = json_object(), *pod, *g;
	const char *key;
	char k[800];
	size_t i;

	json_array_foreach(named ? s->pods : NULL, i, pod)
	{
		pk_obj_key(k, sizeof(k), &pk_type_pod_group, pk_namespace(pod),
			   pk_pod_group_name(pod) ? pk_pod_group_name(pod) : "");
		json_object_set_new(named, k, json_true());
	}
	json_object_foreach(named ? s->groups : NULL, key, g)
	{
		struct pk_write_ref ref = ctl_ref_of(&pk_type_pod_group, g);

		if (pk_kind_of(g) != PK_KIND_POD_GROUP || json_object_get(named, key) ||
		    !json_object_get(ctl_at(g, "metadata", "labels"), Q_LABEL_KUEUE_POD_GROUP) ||
		    ctl_at(g, "metadata", "deletionTimestamp"))
			continue;
		if (ctl_delete(ctl, &ref, PK_WRITE_PROPAGATE_DEFAULT) == 0)
			ctl_log(ctl, 2, "PodGroup %s/%s: its Kueue pod group has no pod left",
				pk_namespace(g), pk_name(g));
	}
	json_decref(named);
}

/*
 * A pending pod workload of one Kueue pod group: inadmissible when its
 * pods disagree on the total count or outnumber it, incomplete while fewer
 * exist (its admitted pods counted), else admitted with its PodGroup made
 * when there is none; 0 or -ENOMEM.
 */
static int kueue_group_check(struct q_state *s, json_t *index, struct q_workload *w)
{
	const json_t *first = json_array_get(w->pods, 0), *pod, *admitted;
	const char *name = pk_pod_kueue_group(first, NULL), *count;
	char key[800];
	int64_t total = 0, have;
	size_t i;
	int r = 0;

	if (!name || w->admitted)
		return 0;
	count = json_string_value(json_object_get(ctl_at(first, "metadata", "annotations"),
						  PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL));
	json_array_foreach(w->pods, i, pod)
	{
		const char *c = json_string_value(json_object_get(
		    ctl_at(pod, "metadata", "annotations"), PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL));

		if (!w->inadmissible && (!c || !count || strcmp(c, count) != 0) &&
		    asprintf(&w->inadmissible,
			     "metadata.annotations[" PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL
			     "]: Invalid value: \"%s\": pod %s of pod group %s disagrees with pod "
			     "%s (\"%s\")",
			     c ? c : "", pk_name(pod), name, pk_name(first),
			     count ? count : "") < 0)
			return -ENOMEM;
	}
	pk_pod_kueue_group(first, &total);
	snprintf(key, sizeof(key), "%s/%s/%s#admitted", w->kind_name, w->ns, w->name);
	admitted = json_object_get(index, key)
		       ? s->w[json_integer_value(json_object_get(index, key))].pods
		       : NULL;
	have = (int64_t)(json_array_size(w->pods) + json_array_size(admitted));
	if (w->inadmissible)
		return 0;
	if (have > total)
		r = asprintf(&w->inadmissible,
			     "pod group %s has %lld pods, more than its "
			     "metadata.annotations[" PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL "] (%lld)",
			     name, (long long)have, (long long)total);
	else if (have < total)
		r = asprintf(&w->incomplete,
			     "pod group %s: %lld of its %lld pods exist "
			     "(" PK_KUEUE_ANNOTATION_POD_GROUP_TOTAL "); waiting for the rest",
			     name, (long long)have, (long long)total);
	pk_obj_key(key, sizeof(key), &pk_type_pod_group, w->ns, name);
	if (r >= 0 && have == total && !json_object_get(s->groups, key) &&
	    !(w->group = kueue_pod_group(w, name, total)))
		r = -ENOMEM;
	return r < 0 ? -ENOMEM : 0;
}

int q_pods_load(struct q_state *s)
{
	json_t *index = json_object(), *pod;
	size_t i, first = s->nw;
	int r = index ? 0 : -ENOMEM;

	json_array_foreach(r == 0 ? s->pods : NULL, i, pod)
	{
		if (!pk_pod_queue_name(pod) || pod_finished(pod) ||
		    ctl_at(pod, "metadata", "deletionTimestamp"))
			continue;
		if (!admission_of(pod) && !gated(pod))
			continue; /* bound before it was queued: not the queue's */
		r = add_pod(s, index, pod);
		if (r < 0)
			break;
	}
	for (size_t k = first; r == 0 && k < s->nw; k++)
		r = kueue_group_check(s, index, &s->w[k]);
	json_decref(index);
	return r;
}

json_t *q_pods_admitted(const struct q_workload *w, const char *admission, const json_t *flavors)
{
	json_t *out = json_array(), *pod;
	size_t i;

	json_array_foreach(out ? w->pods : NULL, i, pod)
	{
		json_t *copy = q_admitted_copy(pod, PK_KIND_POD, admission, flavors);

		if (!copy || json_array_append_new(out, copy) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	if (out && w->group && json_array_append(out, w->group) < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

bool q_pods_tolerated(const struct q_workload *w, const json_t *flavor, char *why, size_t n)
{
	size_t i;
	json_t *pod;

	json_array_foreach(w->pods, i, pod) if (!q_flavor_tolerated(pod, PK_KIND_POD, flavor, why,
								    n)) return false;
	return true;
}

/* Commit the open batch: 0, or the first error of its results. */
static int commit(struct pk_ctl *ctl)
{
	const struct pk_write_result *res = NULL;
	size_t n = 0;
	int r = ctl_commit(ctl, &res, &n);

	for (size_t i = 0; r == 0 && i < n; i++)
		r = res[i].error;
	return r;
}

int q_pods_admit(struct pk_ctl *ctl, struct q_workload *w, const json_t *admitted)
{
	int r = pk_writer_batch_begin(ctl->writer);
	size_t i, npods = json_array_size(w->pods);
	json_t *pod;

	if (r == 0 && w->group) /* a Kueue pod group: its gang first */
		r = pk_writer_create(ctl->writer, &pk_type_pod_group,
				     json_array_get(admitted, npods));
	json_array_foreach(r == 0 ? admitted : NULL, i, pod)
	{
		struct pk_write_ref ref = ctl_ref_of(&pk_type_pod, json_array_get(w->pods, i));

		if (i >= npods)
			break;
		r = pk_writer_replace(ctl->writer, &ref, pod);
		if (r < 0)
			break;
	}
	return r == 0 ? commit(ctl) : r;
}

int q_pods_evict(struct pk_ctl *ctl, struct q_workload *w)
{
	int r = pk_writer_batch_begin(ctl->writer);
	size_t i;
	json_t *pod;

	json_array_foreach(r == 0 ? w->pods : NULL, i, pod)
	{
		struct pk_write_ref ref = ctl_ref_of(&pk_type_pod, pod);

		r = pk_writer_delete(ctl->writer, &ref, PK_WRITE_PROPAGATE_DEFAULT);
		if (r < 0)
			break;
	}
	return r == 0 ? commit(ctl) : r;
}

/* Set (value) or remove (NULL) annotation key of obj; whether it changed. */
static bool set_annotation(json_t *obj, const char *key, const char *value)
{
	json_t *meta = json_object_get(obj, "metadata"),
	       *ann = json_object_get(meta, "annotations");
	const char *have = json_string_value(json_object_get(ann, key));

	if ((have && value && strcmp(have, value) == 0) || (!have && !value))
		return false;
	if (!json_is_object(ann))
		json_object_set_new(meta, "annotations", ann = json_object());
	if (value)
		json_object_set_new(ann, key, json_string(value));
	else
		json_object_del(ann, key);
	return true;
}

/* Whether the annotation key of ann (an object's annotations) is value already (NULL: none). */
static bool value_is(const json_t *ann, const char *key, const char *value)
{
	const char *have = json_string_value(json_object_get(ann, key));

	return (have && value && strcmp(have, value) == 0) || (!have && !value);
}

/*
 * A copy of obj to change its annotations in: the object and its metadata
 * and annotations are new, the rest is shared with obj (read only: the
 * writer holds the copy as it is, pk_writer_replace_held).
 */
static json_t *annotations_copy(const json_t *obj)
{
	json_t *copy = json_copy((json_t *)obj), *meta = NULL, *ann = NULL;

	if (copy)
		meta = json_copy(json_object_get(obj, "metadata"));
	if (meta && json_is_object(ctl_at(obj, "metadata", "annotations")))
		ann = json_copy(ctl_at(obj, "metadata", "annotations"));
	if (!copy || !meta || json_object_set_new(copy, "metadata", meta) < 0 ||
	    (ann && json_object_set_new(meta, "annotations", ann) < 0)) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

bool q_note_one(struct pk_ctl *ctl, enum pk_kind kind, const json_t *obj, const char *order,
		const char *why)
{
	const json_t *ann = ctl_at(obj, "metadata", "annotations");
	json_t *copy;
	bool changed;

	if (value_is(ann, WB_ANNOTATION_QUEUE_ORDER, order) &&
	    value_is(ann, Q_ANNOTATION_PENDING, why) && value_is(ann, Q_ANNOTATION_POSITION, NULL))
		return true; /* as written: no copy, no write */
	copy = annotations_copy(obj);
	changed = copy && set_annotation(copy, WB_ANNOTATION_QUEUE_ORDER, order);
	changed |= copy && set_annotation(copy, Q_ANNOTATION_PENDING, why);
	changed |= copy && set_annotation(copy, Q_ANNOTATION_POSITION, NULL); /* written before */
	if (changed) {
		struct pk_write_ref ref = ctl_ref_of(pk_type_of(kind), obj);
		/* copy: its own metadata and annotations, the rest the listing's read-only tree */
		int r = pk_writer_replace_held(ctl->writer, &ref, copy);

		if (r < 0)
			ctl_log(ctl, 1, "%s %s/%s: pending: %s", pk_kind_to_string(kind),
				pk_namespace(obj), pk_name(obj), pk_write_strerror(r));
	}
	json_decref(copy);
	return false;
}

static bool is_queue(const struct pk_type *kind)
{
	return kind == pk_type_of(PK_KIND_CLUSTER_QUEUE) || kind == pk_type_of(PK_KIND_LOCAL_QUEUE);
}

void q_note_commit(struct pk_ctl *ctl)
{
	const struct pk_write_result *res = NULL;
	size_t n = 0;

	if (pk_writer_batch_size(ctl->writer) == 0)
		return;
	ctl_commit(ctl, &res, &n);
	for (size_t i = 0; res && i < n; i++)
		if (res[i].error == 0 && !is_queue(res[i].kind))
			q_cache_noted_write(ctl, res[i].kind, res[i].ns, res[i].name,
					    res[i].object);
		else if (res[i].error < 0 && res[i].error != -PK_WRITE_ECONFLICT)
			ctl_log(ctl, 1, "%s %s%s%s: %s: %s", res[i].kind->kind,
				res[i].ns ? res[i].ns : "", res[i].ns ? "/" : "", res[i].name,
				is_queue(res[i].kind) ? "status" : "pending",
				pk_write_strerror(res[i].error));
}

void q_pods_note(struct pk_ctl *ctl, struct q_workload *w, const char *order, const char *why)
{
	size_t i;
	json_t *pod;

	json_array_foreach(w->pods, i, pod) q_note_one(ctl, PK_KIND_POD, pod, order, why);
}

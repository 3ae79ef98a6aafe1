/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline.c — scheduling a fixed set of objects to quiescence, as
 * `podctl schedule` and the scenario tests do.  Actions are applied to a copy
 * of the caller's objects through an index by kind/namespace/name; only the
 * kinds scheduling changes (pods, groups, claims) are copied, the rest (Nodes are
 * most of a cluster dump) are shared with the caller.  Unbound pods of
 * another spec.schedulerName are left alone.  Backoff
 * waits are skipped on a virtual clock: when the only eligible roots are
 * backing off, the clock jumps to the earliest retry.  The loop ends when a
 * cycle finds nothing eligible and nothing waiting.
 *
 * First, as kube-controller-manager's resource claim controller would, a
 * pod claim naming a ResourceClaimTemplate of the input gets its
 * ResourceClaim (named "<pod>-<pod claim>-" and five characters derived from
 * the pod's namespace, name and claim, so a run is reproducible; owned by
 * the pod; the template's labels, annotations and spec) and the pod's
 * status.resourceClaimStatuses records it; a PodGroup's claim naming a
 * template gets one claim for the group the same way ("<group>-<claim>-",
 * owned by the PodGroup, recorded in its status).  A template not in the
 * input makes nothing: the pod waits for its claim.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/sched/sched-core.h"

#define SC_OFFLINE_MAX_CYCLES 1000000

static char *obj_key(enum pk_kind kind, const char *ns, const char *name)
{
	char *k = NULL;

	if (asprintf(&k, "%s/%s/%s", pk_kind_to_string(kind) ? pk_kind_to_string(kind) : "?",
		     ns ? ns : "default", name ? name : "") < 0)
		return NULL;
	return k;
}

static bool scheduling_changes(enum pk_kind kind)
{
	return kind == PK_KIND_POD || kind == PK_KIND_POD_GROUP ||
	       kind == PK_KIND_COMPOSITE_POD_GROUP || kind == PK_KIND_RESOURCE_CLAIM ||
	       kind == PK_KIND_PERSISTENT_VOLUME_CLAIM;
}

static int index_objects(json_t *objects, struct pk_map *idx)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o)
	{
		enum pk_kind kind = pk_kind_of(o);
		char *k;
		int r;

		if (!scheduling_changes(kind))
			continue;
		k = obj_key(kind, pk_namespace(o), pk_name(o));
		if (!k)
			return -ENOMEM;
		r = pk_map_put(idx, k, o);
		free(k);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The output array: a private copy of every object scheduling may change,
 * indexed by kind/namespace/name, and a shared reference to every other.
 */
static int copy_and_index(const json_t *objects, json_t **ret_out, struct pk_map *idx)
{
	json_t *out = json_array(), *o;
	size_t i;

	if (!out)
		return -ENOMEM;
	json_array_foreach(objects, i, o)
	{
		enum pk_kind kind = pk_kind_of(o);
		json_t *copy;
		char *k;
		int r;

		if (!scheduling_changes(kind)) {
			if (json_array_append(out, o) < 0)
				goto nomem;
			continue;
		}
		copy = json_deep_copy(o);
		if (!copy || json_array_append_new(out, copy) < 0)
			goto nomem;
		k = obj_key(kind, pk_namespace(copy), pk_name(copy));
		if (!k)
			goto nomem;
		r = pk_map_put(idx, k, copy);
		free(k);
		if (r < 0)
			goto nomem;
	}
	*ret_out = out;
	return 0;
nomem:
	json_decref(out);
	return -ENOMEM;
}

/* metadata.annotations[key] = value (keys hold dots: no pk_set path). */
static int set_annotation(json_t *o, const char *key, const char *value)
{
	json_t *md = json_object_get(o, "metadata"), *ann;

	if (!json_is_object(md))
		return -EINVAL;
	ann = json_object_get(md, "annotations");
	if (!json_is_object(ann)) {
		ann = json_object();
		if (!ann || json_object_set_new(md, "annotations", ann) < 0)
			return -ENOMEM;
	}
	return json_object_set_new(ann, key, json_string(value)) < 0 ? -ENOMEM : 0;
}

static int apply_indexed(json_t *objects, struct pk_map *idx, const struct pk_sched_result *res,
			 json_t *preempted, int64_t now)
{
	for (size_t i = 0; i < res->nactions; i++) {
		const struct pk_sched_action *a = &res->actions[i];
		char *k = obj_key(a->kind, a->ns, a->name);
		json_t *o = k ? pk_map_get(idx, k) : NULL;
		int r = 0;

		if (!k)
			return -ENOMEM;
		if (!o) {
			free(k);
			continue; /* not in this array: nothing to change */
		}
		switch (a->action) {
		case PK_SCHED_BIND:
			r = pk_set(o, "spec.nodeName", json_string(a->node));
			for (size_t j = 0; r == 0 && j < PK_SCHED_BIND_ANNOTATIONS; j++)
				if (a->annotations[j].key)
					r = set_annotation(o, a->annotations[j].key,
							   a->annotations[j].value);
			break;
		case PK_SCHED_CONDITION:
			r = pk_condition_set(o, a->type, a->status, a->reason, a->message, now);
			break;
		case PK_SCHED_CLAIM:
			r = pk_claim_status_set(o, a->claim);
			break;
		case PK_SCHED_VOLUME_CLAIM:
			if (a->volume)
				r = json_is_object(json_object_get(o, "spec"))
					? pk_set(o, "spec.volumeName", json_string(a->volume))
					: -EINVAL;
			if (r == 0 && a->node)
				r = set_annotation(o, PK_SCHED_ANN_SELECTED_NODE, a->node);
			break;
		case PK_SCHED_PREEMPT:
			if (preempted)
				json_array_append(preempted, o);
			for (size_t j = 0; j < json_array_size(objects); j++) {
				if (json_array_get(objects, j) == o) {
					json_array_remove(objects, j);
					break;
				}
			}
			pk_map_del(idx, k);
			break;
		}
		free(k);
		if (r < 0)
			return r;
	}
	return 0;
}

int pk_sched_apply(json_t *objects, const struct pk_sched_result *res, json_t *preempted,
		   int64_t now)
{
	struct pk_map idx = {0};
	int r;

	if (!json_is_array(objects) || !res)
		return -EINVAL;
	r = index_objects(objects, &idx);
	if (r == 0)
		r = apply_indexed(objects, &idx, res, preempted, now);
	pk_map_free(&idx);
	return r;
}

static json_t *find_template(json_t *objects, const char *ns, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o) if (pk_kind_of(o) == PK_KIND_RESOURCE_CLAIM_TEMPLATE &&
					      strcmp(pk_namespace(o), ns) == 0 &&
					      strcmp(pk_name(o) ?: "", name) == 0) return o;
	return NULL;
}

static bool claim_recorded(const json_t *pod, const char *name)
{
	size_t i;
	json_t *x;

	json_array_foreach(pk_get(pod, "status.resourceClaimStatuses"), i,
			   x) if (strcmp(pk_get_string(x, "name") ?: "", name) == 0) return true;
	return false;
}

/*
 * The claim of claim pcn of pod (a Pod or a PodGroup) from template t (new
 * reference): named "<pod>-<claim>-" and five characters derived from the
 * pod's namespace, name and claim, so a run is reproducible.
 */
static json_t *template_claim(const json_t *pod, const char *pcn, const json_t *t)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	uint64_t h =
	    pk_fnv1a(pk_fnv1a(pk_fnv1a(PK_FNV1A_INIT, pk_namespace(pod)), pk_name(pod)), pcn);
	char name[320], suffix[6];

	for (int i = 0; i < 5; i++, h /= sizeof(alphabet) - 1)
		suffix[i] = alphabet[h % (sizeof(alphabet) - 1)];
	suffix[5] = '\0';
	snprintf(name, sizeof(name), "%s-%s-%s", pk_name(pod), pcn, suffix);
	return pk_claim_from_template(pod, pcn, t, name, NULL);
}

/* Claims from templates for the pods and PodGroups of objects (claims appended, indexed in idx). */
static int template_claims(json_t *objects, struct pk_map *idx)
{
	size_t n = json_array_size(objects);

	for (size_t i = 0; i < n; i++) {
		json_t *pod = json_array_get(objects, i), *pc, *st;
		size_t k;

		if (pk_kind_of(pod) != PK_KIND_POD && pk_kind_of(pod) != PK_KIND_POD_GROUP)
			continue;
		json_array_foreach(pk_get(pod, "spec.resourceClaims"), k, pc)
		{
			const char *pcn = pk_get_string(pc, "name"),
				   *tn = pk_get_string(pc, "resourceClaimTemplateName");
			json_t *t = tn ? find_template(objects, pk_namespace(pod), tn) : NULL, *c;
			char *key;
			int r;

			if (!pcn || !t || claim_recorded(pod, pcn))
				continue;
			if (!(c = template_claim(pod, pcn, t)))
				return -ENOMEM;
			if (!json_is_object(json_object_get(pod, "status")))
				json_object_set_new(pod, "status", json_object());
			st = pk_get(pod, "status.resourceClaimStatuses");
			if (!json_is_array(st)) {
				st = json_array();
				json_object_set_new(json_object_get(pod, "status"),
						    "resourceClaimStatuses", st);
			}
			json_array_append_new(st, json_pack("{s:s, s:s}", "name", pcn,
							    "resourceClaimName", pk_name(c)));
			key = idx ? obj_key(PK_KIND_RESOURCE_CLAIM, pk_namespace(c), pk_name(c))
				  : NULL;
			r = idx && !key ? -ENOMEM : 0;
			if (r == 0 && key)
				r = pk_map_put(idx, key, c);
			free(key);
			if (r < 0 || json_array_append_new(objects, c) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Say which object the field paths of errs (from before on) belong to. */
static void name_errors(struct pk_errors *errs, size_t before, size_t i, const json_t *o)
{
	for (size_t k = before; errs && k < errs->n; k++) {
		char *m = NULL;

		if (asprintf(&m, "items[%zu] (%s %s): %s", i,
			     json_string_value(json_object_get(o, "kind")) ?: "?",
			     pk_name(o) ?: "?", errs->msg[k]) >= 0) {
			free(errs->msg[k]);
			errs->msg[k] = m;
		}
	}
}

/*
 * An unbound pod that names another scheduler in spec.schedulerName is that
 * scheduler's to place: it is left as it is (a bound one still holds its
 * node).  podkernel answers to PK_SCHED_NAME and to the default scheduler's
 * name, as the only scheduler of an offline run.
 */
static bool other_schedulers(const json_t *obj)
{
	const char *name = pk_get_string(obj, "spec.schedulerName");
	const char *node = pk_get_string(obj, "spec.nodeName");

	return pk_kind_of(obj) == PK_KIND_POD && name && *name && !(node && *node) &&
	       strcmp(name, "default-scheduler") != 0 && strcmp(name, PK_SCHED_NAME) != 0;
}

/*
 * Add every object (an item that is compact text, pk_compact_object, is read
 * back for the moment of its adding).  compact (in place): the objects
 * scheduling never changes (Nodes above all) are only kept to be written out
 * again, so once added each is replaced by its compact text, and the trees of
 * a cluster never coexist with all of the scheduler's own copy.
 */
static int add_all(struct pk_sched *s, json_t *objects, bool compact, struct pk_errors *errs)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o)
	{
		size_t before = errs ? errs->n : 0;
		bool text = json_is_string(o);
		json_t *tree =
		    text ? json_loadb(json_string_value(o), json_string_length(o), 0, NULL)
			 : json_incref(o);
		int r = !tree ? -ENOMEM : other_schedulers(tree) ? 0 : pk_sched_add(s, tree, errs);

		if (r == 0 && compact && !text && !scheduling_changes(pk_kind_of(tree))) {
			json_t *c = pk_compact_object(tree);

			if (!c || json_array_set_new(objects, i, c) < 0)
				r = -ENOMEM;
		} else if (r < 0 && tree) {
			name_errors(errs, before, i, tree);
		}
		json_decref(tree);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Where an offline round's results go. */
struct offline_sink {
	json_t *out;
	struct pk_map *idx;
	json_t *pre;
	int64_t now; /* wall clock seconds, for conditions */
};

static int offline_result(void *arg, const struct pk_sched_result *res, int64_t now_ms)
{
	struct offline_sink *k = arg;

	(void)now_ms;
	return apply_indexed(k->out, k->idx, res, k->pre, k->now);
}

/*
 * Rounds until nothing changes, each result applied to out through idx; a
 * round that ends with roots in backoff moves the virtual clock to the
 * earliest retry.
 */
static int run_cycles(struct pk_sched *s, json_t *out, struct pk_map *idx, json_t *pre)
{
	struct offline_sink sink = {out, idx, pre, (int64_t)time(NULL)};
	struct pk_sched_round_ops ops = {.result = offline_result, .until_quiet = true};
	size_t left = SC_OFFLINE_MAX_CYCLES;
	int64_t clock = 0;

	while (left) {
		struct pk_sched_round round;
		int r;

		ops.max_cycles = left;
		if ((r = pk_sched_round(s, clock, &ops, &sink, &round)) < 0)
			return r;
		left -= round.cycles;
		if (!round.idle || !round.has_retry || round.retry_at_ms <= clock)
			break;
		clock = round.retry_at_ms;
	}
	return 0;
}

/* objects scheduled into out (objects itself when in place, else a copy). */
static int run(const json_t *objects, bool in_place, const struct pk_sched_opts *opts,
	       json_t **ret_objects, json_t **ret_preempted, struct pk_errors *errs)
{
	struct pk_sched *s = NULL;
	struct pk_map idx = {0};
	json_t *out = NULL, *pre = json_array();
	int r;

	if (!json_is_array(objects) || !pre) {
		json_decref(pre);
		return -EINVAL;
	}
	r = pk_sched_new(opts, &s);
	if (r == 0 && in_place) {
		r = template_claims((json_t *)objects, NULL);
		if (r == 0)
			r = add_all(s, (json_t *)objects, true, errs);
		out = json_incref((json_t *)objects);
		if (r == 0)
			r = index_objects(out, &idx);
	} else if (r == 0) {
		r = copy_and_index(objects, &out, &idx);
		if (r == 0)
			r = template_claims(out, &idx);
		if (r == 0)
			r = add_all(s, out, false, errs);
	}
	if (r == 0) {
		sc_cons_complete(s);
		r = run_cycles(s, out, &idx, pre);
	}
	if (r == 0) {
		if (ret_objects)
			*ret_objects = json_incref(out);
		if (ret_preempted)
			*ret_preempted = json_incref(pre);
	}
	pk_map_free(&idx);
	json_decref(out);
	json_decref(pre);
	pk_sched_free(s);
	return r;
}

int pk_sched_run(const json_t *objects, const struct pk_sched_opts *opts, json_t **ret_objects,
		 json_t **ret_preempted, struct pk_errors *errs)
{
	return run(objects, false, opts, ret_objects, ret_preempted, errs);
}

int pk_sched_run_in_place(json_t *objects, const struct pk_sched_opts *opts, json_t **ret_preempted,
			  struct pk_errors *errs)
{
	return run(objects, true, opts, NULL, ret_preempted, errs);
}

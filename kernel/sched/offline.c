/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline.c — scheduling a fixed set of objects to quiescence, as
 * `podctl schedule` and the scenario tests do.  Actions are applied to a copy
 * of the caller's objects through an index by kind/namespace/name; only the
 * kinds scheduling changes (pods and groups) are copied, the rest (Nodes are
 * most of a cluster dump) are shared with the caller.  Backoff
 * waits are skipped on a virtual clock: when the only eligible roots are
 * backing off, the clock jumps to the earliest retry.  The loop ends when a
 * cycle finds nothing eligible and nothing waiting.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/sched/sched-internal.h"

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
	       kind == PK_KIND_COMPOSITE_POD_GROUP || kind == PK_KIND_RESOURCE_CLAIM;
}

static int index_objects(json_t *objects, struct sc_map *idx)
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
		r = sc_map_put(idx, k, o);
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
static int copy_and_index(const json_t *objects, json_t **ret_out, struct sc_map *idx)
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
		r = sc_map_put(idx, k, copy);
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

/* A claim action: status.allocation and status.reservedFor as the action says. */
static int set_claim_status(json_t *o, const json_t *claim)
{
	static const char *const keys[] = {"allocation", "reservedFor"};
	json_t *st = json_object_get(o, "status");

	if (!json_is_object(st)) {
		st = json_object();
		if (!st || json_object_set_new(o, "status", st) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(claim, keys[i]);

		if (!v)
			json_object_del(st, keys[i]);
		else if (json_object_set_new(st, keys[i], json_deep_copy(v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int apply_indexed(json_t *objects, struct sc_map *idx, const struct pk_sched_result *res,
			 json_t *preempted, int64_t now)
{
	for (size_t i = 0; i < res->nactions; i++) {
		const struct pk_sched_action *a = &res->actions[i];
		char *k = obj_key(a->kind, a->ns, a->name);
		json_t *o = k ? sc_map_get(idx, k) : NULL;
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
			r = set_claim_status(o, a->claim);
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
			sc_map_del(idx, k);
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
	struct sc_map idx = {0};
	int r;

	if (!json_is_array(objects) || !res)
		return -EINVAL;
	r = index_objects(objects, &idx);
	if (r == 0)
		r = apply_indexed(objects, &idx, res, preempted, now);
	sc_map_free(&idx);
	return r;
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
		int r = tree ? pk_sched_add(s, tree, errs) : -ENOMEM;

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

/* Cycles until nothing changes, each result applied to out through idx. */
static int run_cycles(struct pk_sched *s, json_t *out, struct sc_map *idx, json_t *pre)
{
	int64_t clock = 0, now = (int64_t)time(NULL);

	for (int c = 0; c < SC_OFFLINE_MAX_CYCLES; c++) {
		struct pk_sched_result *res = NULL;
		bool idle;
		int r = pk_sched_cycle(s, clock, &res);

		if (r < 0)
			return r;
		r = apply_indexed(out, idx, res, pre, now);
		idle = res->nactions == 0 &&
		       (res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED);
		if (idle && res->has_retry && res->retry_at_ms > clock)
			clock = res->retry_at_ms, idle = false;
		pk_sched_result_free(res);
		if (r < 0)
			return r;
		if (idle)
			break;
	}
	return 0;
}

/* objects scheduled into out (objects itself when in place, else a copy). */
static int run(const json_t *objects, bool in_place, const struct pk_sched_opts *opts,
	       json_t **ret_objects, json_t **ret_preempted, struct pk_errors *errs)
{
	struct pk_sched *s = NULL;
	struct sc_map idx = {0};
	json_t *out = NULL, *pre = json_array();
	int r;

	if (!json_is_array(objects) || !pre) {
		json_decref(pre);
		return -EINVAL;
	}
	r = pk_sched_new(opts, &s);
	if (r == 0)
		r = add_all(s, (json_t *)objects, in_place, errs);
	if (r == 0 && in_place) {
		out = json_incref((json_t *)objects);
		r = index_objects(out, &idx);
	} else if (r == 0) {
		r = copy_and_index(objects, &out, &idx);
	}
	if (r == 0)
		r = run_cycles(s, out, &idx, pre);
	if (r == 0) {
		if (ret_objects)
			*ret_objects = json_incref(out);
		if (ret_preempted)
			*ret_preempted = json_incref(pre);
	}
	sc_map_free(&idx);
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

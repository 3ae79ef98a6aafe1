/* SPDX-License-Identifier: Apache-2.0 */
/*
 * carry.c — a scheduler carried from one cluster to the next (placement
 * checks, pass after pass): it holds the objects of an earlier run, and
 * what differs between those and the new ones is fed to it (pods and
 * groups removed, added or changed), so that it does not add the whole
 * cluster again.
 *
 * A scheduler fed over time holds its pods in the order they came, not in
 * the order of the new objects, and a few things in it are a function of
 * that order.  Those that weigh on a placement that binds every pod without
 * preemption are made what a new scheduler of the new objects would have:
 * the workload profile (its decay follows the pods in the objects' order)
 * and the topology keys the fit strategy partitions by (in the groups'
 * order) are built again from the objects.  The rest (the queue's arrival
 * order, preemption candidates' order, the lowest bound priority) weighs
 * only on a run that leaves a pod waiting or preempts, and such a run is
 * done again on a new scheduler (pk_sched_run_carried).  Anything else
 * that changed (Nodes, priority classes, claims, the other kinds plugins
 * read), objects given as compact text, or pods that brought resource
 * names no Node has (resource ids are numbered in order of first sight)
 * are not carried: -ESTALE, and a new scheduler is built.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-strand.h"

enum carry_kind { C_IGNORED, C_POD, C_GROUP, C_OTHER };

/* How a change of o is carried: a pod, a group, ignored (a kind no one reads), or not at all. */
static enum carry_kind kind_of(const json_t *o)
{
	enum pk_kind k = json_is_object(o) ? pk_kind_of(o) : PK_KIND_UNKNOWN;
	const struct pk_type *t = json_is_object(o) ? pk_type_of(k) : NULL;

	if (!json_is_object(o))
		return C_OTHER; /* compact text: read back only by add_all */
	if (k == PK_KIND_POD)
		return C_POD;
	if (k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP)
		return C_GROUP;
	return t && pk_sched_reads(t) ? C_OTHER : C_IGNORED;
}

/* A set of objects by address: open addressing over a power of two slots. */
struct ptr_set {
	const json_t **slot;
	size_t mask;
};

static size_t ptr_hash(const json_t *o)
{
	return (size_t)(((uintptr_t)o >> 4) * 0x9e3779b97f4a7c15ULL);
}

/* The first n items of a as a set; -ENOMEM. */
static int set_of(struct ptr_set *set, const json_t *a, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	set->mask = cap - 1;
	set->slot = calloc(cap, sizeof(*set->slot));
	if (!set->slot)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(a, i);
		size_t h = ptr_hash(o) & set->mask;

		while (set->slot[h] && set->slot[h] != o)
			h = (h + 1) & set->mask;
		set->slot[h] = o;
	}
	return 0;
}

static bool has(const struct ptr_set *set, const json_t *o)
{
	for (size_t h = ptr_hash(o) & set->mask; set->slot[h]; h = (h + 1) & set->mask)
		if (set->slot[h] == o)
			return true;
	return false;
}

/* o's key among the pods and groups: kind, namespace and name (NULL: too long to be one). */
static const char *key_of(char *buf, size_t n, const json_t *o)
{
	return pk_obj_key(buf, n, pk_type_of(pk_kind_of(o)), pk_namespace(o), pk_name(o));
}

/* The keys of list's objects (a set: the values are the objects, borrowed); -ENOMEM, -ESTALE. */
static int keys_of(const json_t *list, struct pk_map *ret)
{
	char key[600];
	size_t i;
	json_t *x;
	int r = 0;

	json_array_foreach(list, i, x)
	{
		const char *k = r == 0 ? key_of(key, sizeof(key), x) : NULL;

		if (r == 0)
			r = !k ? -ESTALE : pk_map_put(ret, k, x) < 0 ? -ENOMEM : 0;
	}
	return r;
}

/*
 * The objects of held not in objects[0..n) into gone, and those of
 * objects[0..n) not in held into came (in their order); -ESTALE when one
 * of them is of a kind not carried.
 */
/*
 * Whether o, whose change is not carried (ignored), names a kind an offline
 * writer holds all the same (its kind without its apiVersion): its writer's
 * index would not follow.
 */
static bool writer_would_hold(const json_t *o)
{
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(o, "kind")));

	return t && (t->pk == PK_KIND_POD || t->pk == PK_KIND_POD_GROUP ||
		     t->pk == PK_KIND_COMPOSITE_POD_GROUP || t->pk == PK_KIND_RESOURCE_CLAIM ||
		     t->pk == PK_KIND_PERSISTENT_VOLUME_CLAIM);
}

static int diff(const json_t *held, const json_t *objects, size_t n, json_t *gone, json_t *came,
		bool *ret_lost)
{
	size_t nh = json_array_size(held);
	struct ptr_set h = {0}, o = {0};
	int r = set_of(&h, held, nh) < 0 || set_of(&o, objects, n) < 0 ? -ENOMEM : 0;

	for (size_t i = 0; r == 0 && i < nh; i++) {
		json_t *x = json_array_get(held, i);

		if (has(&o, x))
			continue;
		if (kind_of(x) == C_IGNORED) {
			*ret_lost |= writer_would_hold(x);
			continue;
		}
		r = kind_of(x) == C_OTHER ? -ESTALE : json_array_append(gone, x) < 0 ? -ENOMEM : 0;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		json_t *x = json_array_get(objects, i);

		if (has(&h, x))
			continue;
		if (kind_of(x) == C_IGNORED) {
			*ret_lost |= writer_would_hold(x);
			continue;
		}
		r = kind_of(x) == C_OTHER ? -ESTALE : json_array_append(came, x) < 0 ? -ENOMEM : 0;
	}
	free(h.slot);
	free(o.slot);
	return r;
}

/*
 * Feed gone and came to s: the pods gone, then the groups gone (those
 * that came again under the same name are changed in place instead), then
 * the groups and pods that came, in their order, as a new scheduler adds
 * groups before pods.
 */
static int feed(struct pk_sched *s, const json_t *gone, const json_t *came, struct pk_errors *errs)
{
	struct pk_map again = {0}; /* the keys that came */
	char key[600];
	size_t i;
	json_t *x;
	int r = keys_of(came, &again);

	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(gone, i, x)
		{
			const char *k;

			if (r < 0 || (kind_of(x) == C_POD) != (pass == 0))
				continue;
			if (!(k = key_of(key, sizeof(key), x)))
				r = -ESTALE; /* a name too long to be one: a new scheduler says so
					      */
			else if (!pk_map_get(&again, k))
				r = pk_sched_remove(s, pk_type_of(pk_kind_of(x)), pk_namespace(x),
						    pk_name(x));
			if (r == -ENOENT)
				r = 0; /* never added (another scheduler's pod, or a finished one)
					*/
		}
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(came, i, x)
		{
			if (r < 0 || (kind_of(x) == C_POD) != (pass == 1) || sc_other_scheduler(x))
				continue;
			r = pk_sched_add(s, x, errs);
		}
	pk_map_free(&again);
	return r;
}

/* "ns/name" into key (n bytes), as snprintf writes it, without its format read. */
static void ns_name(char *key, size_t n, const char *ns, const char *name)
{
	size_t a = strlen(ns), b = strlen(name);

	if (a + 1 + b >= n) {
		snprintf(key, n, "%s/%s", ns, name);
		return;
	}
	memcpy(key, ns, a);
	key[a] = '/';
	memcpy(key + a + 1, name, b + 1);
}

/*
 * The kind and, for a pod or a group, the "ns/name" key of each object a
 * carry walked, by address: the next carry reads again only the objects
 * that came since.  The memo holds a reference to each object, so that an
 * address names one object for as long as the memo holds it.
 */
struct memo_ent {
	json_t *o;
	enum pk_kind kind;
	char *key; /* a pod's or group's; NULL otherwise */
};
struct sc_carry_memo {
	struct memo_ent *slot;
	size_t mask;
};

void sc_carry_memo_free(struct sc_carry_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i <= m->mask; i++)
		if (m->slot[i].o) {
			json_decref(m->slot[i].o);
			free(m->slot[i].key);
		}
	free(m->slot);
	free(m);
}

static struct sc_carry_memo *memo_new(size_t n)
{
	struct sc_carry_memo *m = calloc(1, sizeof(*m));
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	if (m && !(m->slot = calloc(cap, sizeof(*m->slot)))) {
		free(m);
		return NULL;
	}
	if (m)
		m->mask = cap - 1;
	return m;
}

/* o's slot in m: its entry, or the empty slot it goes in. */
static struct memo_ent *memo_slot(const struct sc_carry_memo *m, const json_t *o)
{
	size_t h = ptr_hash(o) & m->mask;

	while (m->slot[h].o && m->slot[h].o != o)
		h = (h + 1) & m->mask;
	return &m->slot[h];
}

static bool pod_or_group(enum pk_kind k)
{
	return k == PK_KIND_POD || k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP;
}

/* o's entry in next: taken from was (its key moved there) or read from o; NULL: -ENOMEM. */
static const struct memo_ent *memo_read(struct sc_carry_memo *next, struct sc_carry_memo *was,
					json_t *o)
{
	struct memo_ent *e = memo_slot(next, o), *w = was ? memo_slot(was, o) : NULL;
	char key[600];

	if (e->o)
		return e;
	e->o = json_incref(o);
	if (w && w->o) {
		e->kind = w->kind;
		e->key = w->key;
		w->key = NULL;
		return e;
	}
	e->kind = pk_kind_of(o);
	if (!pod_or_group(e->kind))
		return e;
	ns_name(key, sizeof(key), pk_namespace(o) ?: "", pk_name(o) ?: "");
	e->key = strdup(key);
	return e->key ? e : NULL;
}

/*
 * The workload profile of objects[0..n)'s pods and the topology keys of its
 * groups, noted again in the objects' order, as a new scheduler notes them
 * (the objects' kinds and keys read from the memo of the carry before, but
 * those that came since).
 */
static int again(struct pk_sched *s, const json_t *objects, size_t n, enum pk_kind *kinds)
{
	struct sc_carry_memo *m = memo_new(n);
	int r = m ? 0 : -ENOMEM;

	sc_profile_fini(&s->profile);
	memset(&s->profile, 0, sizeof(s->profile));
	for (size_t i = 0; i < s->topo_keys.n; i++)
		free(s->topo_keys.v[i]);
	s->topo_keys.n = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct memo_ent *e = memo_read(m, s->carry_memo, json_array_get(objects, i));
		enum pk_kind k = e ? e->kind : PK_KIND_UNKNOWN;
		const struct sc_group *g;
		struct sc_pod *p;

		if (!e)
			r = -ENOMEM;
		kinds[i] = k;
		if (!e || !pod_or_group(k))
			continue;
		if (k == PK_KIND_POD && (p = pk_map_get(&s->forest.pods, e->key)))
			sc_profile_note(&s->profile, &s->snap, p);
		g = k == PK_KIND_POD
			? NULL
			: sc_forest_find(&s->forest, e->key, k == PK_KIND_COMPOSITE_POD_GROUP);
		if (g && g->present)
			r = sc_note_topo_key(s, g->spec.topo_key);
	}
	sc_carry_memo_free(s->carry_memo);
	s->carry_memo = r == 0 ? m : NULL;
	if (r < 0)
		sc_carry_memo_free(m);
	return r;
}

int sc_carry(struct pk_sched *s, const json_t *held, const json_t *objects, size_t n,
	     struct pk_errors *errs)
{
	json_t *gone = json_array(), *came = json_array();
	bool lost = false; /* a change the writer's index would not follow */
	enum pk_kind *kinds = calloc(n ? n : 1, sizeof(*kinds)); /* objects[0..n)'s */
	int r = gone && came && kinds ? 0 : -ENOMEM;

	if (r == 0 && (s->pod_res || s->snap.nlog))
		r = -ESTALE; /* pods numbered resources: their ids follow their order */
	if (r == 0)
		r = diff(held, objects, n, gone, came, &lost);
	if (r == 0)
		r = feed(s, gone, came, errs);
	if (r == 0 && s->pod_res)
		r = -ESTALE;
	if (r == 0)
		r = again(s, objects, n, kinds);
	if (r == 0)
		sc_carry_index(s, lost ? NULL : gone, came, n, kinds);
	free(kinds);
	json_decref(gone);
	json_decref(came);
	return r;
}

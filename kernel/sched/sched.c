/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched.c — the scheduler handle: lifecycle, and the door through which API
 * objects come in.  Each object is decoded into its typed view
 * (kernel/api/api.h), copied into the snapshot (nodes) or the forest (pods,
 * groups) or the priority-class table, and the view is dropped at once, so
 * the scheduler never keeps a caller's tree.  With a cache of decoded
 * objects (pk_sched_opts.decoded), a Node's or Pod's view is kept there
 * instead, referencing its tree, and the next add of the same object
 * (placement checks add the same cluster again and again) copies it without
 * decoding.  The other kinds it reads are the plugins' (their events,
 * plugin.h): pk_sched_kinds() lists them all.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/macro.h"
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-place.h"
#include "kernel/sched/sched-slice.h"
#include "kernel/sched/sched-snapshot.h"
#include "kernel/sched/sched-strand.h"
#include "kernel/write/writer.h"

int pk_sched_new(const struct pk_sched_opts *opts, struct pk_sched **ret)
{
	struct pk_sched *s;
	const struct pk_placement_ops *ops = sc_strategy_find(opts ? opts->strategy : NULL);

	if (!ops)
		return -ENOENT;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (opts)
		s->opts = *opts;
	s->ops = ops;
	s->prio_classes = (struct pk_map)PK_MAP_INIT(free);
	sc_forest_init(&s->forest);
	if (ops->state_size && !(s->ops_state = calloc(1, ops->state_size))) {
		free(s);
		return -ENOMEM;
	}
	if (sc_snapshot_init(&s->snap) < 0) {
		free(s->ops_state);
		free(s);
		return -ENOMEM;
	}
	/* the extensions of the snapshot: the TPU slices' torus occupancy */
	if (sc_slices_register(&s->snap) < 0) {
		sc_snapshot_fini(&s->snap);
		free(s->ops_state);
		free(s);
		return -ENOMEM;
	}
	sc_cons_register(&s->snap);		  /* the plugins' state follows every charge */
	s->snap.terms.pods = &s->forest.all_pods; /* the plugins' index counts them */
	*ret = s;
	return 0;
}

void pk_sched_free(struct pk_sched *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->forest.all_pods.n; i++)
		sc_cons_release(s, s->forest.all_pods.v[i]); /* the terms go with the snapshot */
	sc_forest_fini(&s->forest);
	for (size_t i = 0; i < s->tell_keys.n; i++)
		free(s->tell_keys.v[i]);
	sc_vec_free(&s->tell_keys);
	free(s->tell_at);
	sc_snapshot_fini(&s->snap);
	pk_map_free(&s->prio_classes);
	free(s->default_class);
	for (size_t i = 0; i < s->topo_keys.n; i++)
		free(s->topo_keys.v[i]);
	sc_vec_free(&s->topo_keys);
	free(s->all_nodes);
	free(s->pl);
	free(s->ops_state);
	sc_profile_fini(&s->profile);
	pk_writer_memory_index_free(s->windex);
	sc_carry_memo_free(s->carry_memo);
	free(s);
}

/* The kinds the core reads itself, before and after those the plugins consume. */
static const struct pk_type *const core_first[] = {&pk_type_node, &pk_type_priority_class};
static const struct pk_type *const core_last[] = {&pk_type_composite_pod_group, &pk_type_pod_group,
						  &pk_type_pod};
#define SC_KINDS_MAX 64
static const struct pk_type *kinds_all[SC_KINDS_MAX + 1];
static pthread_once_t kinds_once = PTHREAD_ONCE_INIT;

static void kinds_init(void)
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(core_first); i++)
		kinds_all[n++] = core_first[i];
	n += sc_cons_kinds(kinds_all + n, SC_KINDS_MAX - n - ELEMENTSOF(core_last));
	for (size_t i = 0; i < ELEMENTSOF(core_last); i++)
		kinds_all[n++] = core_last[i];
}

const struct pk_type *const *pk_sched_kinds(void)
{
	pthread_once(&kinds_once, kinds_init);
	return kinds_all;
}

bool pk_sched_reads(const struct pk_type *kind)
{
	kind = pk_type_stored(kind);
	for (const struct pk_type *const *k = pk_sched_kinds(); kind && *k; k++)
		if (*k == kind)
			return true;
	return false;
}

#define SC_MAX_TOPO_KEYS 16 /* keys whose partitions the fit strategy keeps */

int sc_note_topo_key(struct pk_sched *s, const char *key)
{
	char *copy;
	int r;

	if (!key || !*key)
		return 0;
	for (size_t i = 0; i < s->topo_keys.n; i++)
		if (strcmp(s->topo_keys.v[i], key) == 0)
			return 0;
	if (s->topo_keys.n >= SC_MAX_TOPO_KEYS)
		return 0; /* more keys are still placed; they only miss fragmentation scoring */
	copy = strdup(key);
	if (!copy)
		return -ENOMEM;
	r = sc_vec_push(&s->topo_keys, copy);
	if (r < 0)
		free(copy);
	return r;
}

static void refresh_default(struct pk_sched *s)
{
	const int32_t *v = s->default_class ? pk_map_get(&s->prio_classes, s->default_class) : NULL;

	s->default_prio = v ? *v : 0;
}

static int add_priority_class(struct pk_sched *s, json_t *obj, struct pk_errors *errs)
{
	struct pk_priority_class *pc = NULL;
	int32_t *v;
	int r = pk_priority_class_decode(obj, &pc, errs);

	if (r < 0)
		return r;
	v = malloc(sizeof(*v));
	if (!v) {
		pk_priority_class_free(pc);
		return -ENOMEM;
	}
	*v = pc->value;
	r = pk_map_put(&s->prio_classes, pc->meta.name, v);
	if (r < 0) {
		free(v);
	} else {
		if (pc->global_default) {
			free(s->default_class);
			s->default_class = strdup(pc->meta.name);
		}
		refresh_default(s);
		s->gen++;
		s->prio_epoch++;
	}
	pk_priority_class_free(pc);
	return r;
}

static bool scheduled_condition(const json_t *obj, const char *type)
{
	json_t *c = pk_condition_get(obj, type);
	const char *st = c ? json_string_value(json_object_get(c, "status")) : NULL;

	return st && strcmp(st, "True") == 0;
}

/* A group with members already may change their priorities: victims are counted again. */
static void invalidate_floor_of(struct pk_sched *s, const struct pk_group *view)
{
	char *key = sc_key(view->meta.namespace, view->meta.name);
	const struct sc_group *g =
	    key ? sc_forest_group(&s->forest, key, view->kind == PK_KIND_COMPOSITE_POD_GROUP, false)
		: NULL;

	if (!key || (g && (g->pods.n || g->children.n)))
		sc_victim_floor_invalidate(s);
	free(key);
}

/* ---- decoded objects kept between schedulers ------------------------------------------ */

struct sc_decoded {
	json_t *obj; /* referenced: its address is the key */
	struct pk_node *node;
	struct pk_pod *pod;
	uint64_t fp; /* a pod's fingerprint */
	bool used;   /* since the last sweep */
};

struct pk_sched_decoded {
	struct pk_map by_obj; /* "%p" of the object -> struct sc_decoded */
};

static void decoded_free(void *v)
{
	struct sc_decoded *e = v;

	pk_node_free(e->node);
	pk_pod_free(e->pod);
	json_decref(e->obj);
	free(e);
}

int pk_sched_decoded_new(struct pk_sched_decoded **ret)
{
	struct pk_sched_decoded *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->by_obj = (struct pk_map)PK_MAP_INIT(decoded_free);
	*ret = d;
	return 0;
}

void pk_sched_decoded_free(struct pk_sched_decoded *d)
{
	if (!d)
		return;
	pk_map_free(&d->by_obj);
	free(d);
}

void pk_sched_decoded_sweep(struct pk_sched_decoded *d)
{
	const char *key;
	void *v;
	char **gone;
	size_t n = 0;

	if (!d || !(gone = calloc(d->by_obj.live + 1, sizeof(*gone))))
		return;
	for (size_t i = 0; pk_map_next(&d->by_obj, &i, &key, &v);) {
		struct sc_decoded *e = v;

		if (!e->used)
			gone[n++] = strdup(key);
		e->used = false;
	}
	for (size_t i = 0; i < n; i++) {
		if (gone[i])
			pk_map_del(&d->by_obj, gone[i]);
		free(gone[i]);
	}
	free(gone);
}

/* obj's kept entry, made (empty) when it has none; NULL: no cache, or no memory. */
static struct sc_decoded *decoded_of(struct pk_sched *s, json_t *obj)
{
	struct pk_sched_decoded *d = s->opts.decoded;
	struct sc_decoded *e;
	char key[32];

	if (!d)
		return NULL;
	snprintf(key, sizeof(key), "%p", (void *)obj);
	e = pk_map_get(&d->by_obj, key);
	if (!e && (e = calloc(1, sizeof(*e)))) {
		e->obj = json_incref(obj);
		if (pk_map_put(&d->by_obj, key, e) < 0) {
			decoded_free(e);
			return NULL;
		}
	}
	if (e)
		e->used = true;
	return e;
}

/* A node's view: decoded, or the kept one (*ret_keep: not to be freed). */
static int node_view(struct pk_sched *s, json_t *obj, struct pk_node **ret, bool *ret_keep,
		     struct pk_errors *errs)
{
	struct sc_decoded *e = decoded_of(s, obj);
	int r;

	*ret_keep = false;
	if (e && e->node) {
		*ret = e->node;
		*ret_keep = true;
		return 0;
	}
	r = pk_node_decode(obj, ret, errs);
	if (r == 0 && e) {
		e->node = *ret;
		*ret_keep = true;
	}
	return r;
}

int pk_sched_add(struct pk_sched *s, json_t *obj, struct pk_errors *errs)
{
	int r = 0;

	if (!s || !obj)
		return -EINVAL;
	if (s->snap.nlog)
		return -EBUSY;
	switch (pk_kind_of(obj)) {
	case PK_KIND_NODE: {
		struct pk_node *n = NULL;
		bool keep;

		if ((r = node_view(s, obj, &n, &keep, errs)) < 0)
			return r;
		r = sc_snapshot_set_node(&s->snap, n);
		if (!keep)
			pk_node_free(n);
		if (r == -E2BIG && errs)
			pk_errors_add(errs,
				      "status.allocatable: more than %d distinct resource names",
				      SC_MAX_RES);
		s->gen++;
		break;
	}
	case PK_KIND_POD: {
		const char *name = pk_name(obj);

		return pk_sched_add_pods(s, obj, &name, 1, errs);
	}
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP: {
		struct pk_group *g = NULL;
		bool composite = pk_kind_of(obj) == PK_KIND_COMPOSITE_POD_GROUP;

		if ((r = pk_group_decode(obj, &g, errs)) < 0)
			return r;
		invalidate_floor_of(s, g);
		r = sc_forest_add_group(
		    &s->forest, g,
		    scheduled_condition(obj, composite ? "CompositePodGroupInitiallyScheduled"
						       : "PodGroupInitiallyScheduled"));
		if (r == 0)
			r = sc_note_topo_key(s, g->spec.topology_key);
		pk_group_free(g);
		break;
	}
	case PK_KIND_PRIORITY_CLASS:
		r = add_priority_class(s, obj, errs);
		break;
	default:
		/* what a plugin consumes (its events); Workloads, Jobs and unknown kinds
		 * carry nothing to schedule */
		r = sc_cons_event_set(s, pk_type_of(pk_kind_of(obj)), obj);
		if (r == -EOPNOTSUPP)
			r = 0;
		else if (r == -EINVAL && errs && !pk_name(obj))
			pk_errors_add(errs, "metadata.name: Required value");
		break;
	}
	s->forest_changed = true;
	return r;
}

/* obj named name (the decoded view p, when there is one, borrows the tree's name). */
static int rename_pod(json_t *obj, struct pk_pod *p, const char *name)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *cur = pk_name(obj);

	if (!name || (cur && strcmp(cur, name) == 0))
		return 0;
	if (!json_is_object(md) || json_object_set_new(md, "name", json_string(name)) < 0)
		return -ENOMEM;
	if (p)
		p->meta.name = pk_name(obj);
	return 0;
}

/*
 * A pod that ran to its end (phase Succeeded or Failed) holds nothing:
 * kube-scheduler's pod informer never shows it one, so it counts toward no
 * request, port, spread, affinity or gang.
 */
static bool pod_finished(const json_t *obj)
{
	const char *phase = pk_get_string(obj, "status.phase");

	return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

int pk_sched_add_pods(struct pk_sched *s, json_t *obj, const char *const *names, size_t n,
		      struct pk_errors *errs)
{
	struct pk_pod *p = NULL;
	struct sc_decoded *e = NULL;
	uint64_t fp;
	int r = 0, nres;

	if (!s || !obj || (n && !names))
		return -EINVAL;
	if (s->snap.nlog)
		return -EBUSY;
	if (pod_finished(obj)) {
		for (size_t i = 0; i < n; i++) /* one that was running is gone now */
			pk_sched_remove(s, &pk_type_pod, pk_namespace(obj), names[i]);
		return 0;
	}
	if (n == 1 && pk_name(obj) && names[0] && strcmp(pk_name(obj), names[0]) == 0)
		e = decoded_of(s, obj); /* one pod under its own name: its kept view */
	if (e && e->pod) {
		fp = e->fp;
		p = e->pod;
	} else {
		fp = pk_sched_fingerprint(&pk_type_pod, obj, false); /* not the name */
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		char *key = sc_key(pk_namespace(obj), names[i]);
		struct sc_pod *old = key ? pk_map_get(&s->forest.pods, key) : NULL;

		if (old && old->fp == fp) {
			free(key);
			continue; /* only status changed: nothing to reschedule */
		}
		r = rename_pod(obj, p, names[i]);
		if (r == 0 && !p)
			r = pk_pod_decode(obj, &p, errs);
		if (r < 0) {
			free(key);
			break;
		}
		nres = s->snap.nres;
		r = sc_forest_add_pod(s, p);
		s->pod_res |= s->snap.nres != nres;
		s->forest_changed = true;
		old = r == 0 && key ? pk_map_get(&s->forest.pods, key) : NULL;
		if (old)
			old->fp = fp;
		free(key);
	}
	if (r == 0 && e && p && !e->pod) { /* kept for the next add of obj */
		e->pod = p;
		e->fp = fp;
	} else if (!(e && p == e->pod)) {
		pk_pod_free(p);
	}
	if (r == -E2BIG && errs)
		pk_errors_add(errs, "spec.containers: more than %d distinct resource names",
			      SC_MAX_RES);
	return r;
}

int pk_sched_update(struct pk_sched *s, json_t *obj, struct pk_errors *errs)
{
	return pk_sched_add(s, obj, errs);
}

int pk_sched_group_home(struct pk_sched *s, const struct pk_type *type, const char *ns,
			const char *name, char **ret)
{
	enum pk_kind kind = type ? type->pk : PK_KIND_UNKNOWN;
	char *key = sc_key(ns, name);
	const struct sc_group *g;
	const char *home;

	*ret = NULL;
	if (!key)
		return -ENOMEM;
	g = sc_forest_find(&s->forest, key, kind == PK_KIND_COMPOSITE_POD_GROUP);
	free(key);
	if (!g || !g->present)
		return -ENOENT;
	home = g->home ? g->home : g->spec.home;
	if (home && !(*ret = strdup(home)))
		return -ENOMEM;
	return 0;
}

int pk_sched_remove(struct pk_sched *s, const struct pk_type *type, const char *ns,
		    const char *name)
{
	enum pk_kind kind = type ? type->pk : PK_KIND_UNKNOWN;
	struct sc_pod *gone;
	char *key;
	int r;

	if (!s || !name)
		return -EINVAL;
	if (s->snap.nlog)
		return -EBUSY;
	s->forest_changed = true;
	switch (kind) {
	case PK_KIND_NODE:
		r = sc_snapshot_remove_node(&s->snap, name);
		s->gen++;
		return r;
	case PK_KIND_PRIORITY_CLASS: {
		if (!pk_map_get(&s->prio_classes, name))
			return -ENOENT;
		pk_map_del(&s->prio_classes, name);
		refresh_default(s);
		s->prio_epoch++;
		return 0;
	}
	case PK_KIND_POD:
	case PK_KIND_POD_GROUP:
	case PK_KIND_COMPOSITE_POD_GROUP:
		key = sc_key(ns && *ns ? ns : "default", name);
		if (!key)
			return -ENOMEM;
		gone = kind == PK_KIND_POD ? pk_map_get(&s->forest.pods, key) : NULL;
		if (gone)
			sc_cons_pod_gone(s, gone);
		r = kind == PK_KIND_POD ? sc_forest_remove_pod(s, key)
					: sc_forest_remove_group(
					      &s->forest, key, kind == PK_KIND_COMPOSITE_POD_GROUP);
		free(key);
		return r;
	default:
		return sc_cons_event_remove(s, kind, ns, name);
	}
}

const char *pk_sched_check_message(const struct pk_sched *s)
{
	return s->check_why;
}

int pk_sched_check(const struct pk_sched *s, char *why, size_t whylen)
{
	const struct sc_forest *f = &s->forest;
	int r = sc_snapshot_check(&s->snap, &f->all_pods, true, why, whylen);

	if (r == 0)
		r = sc_queue_check(s, why, whylen);
	if (r < 0)
		return r;
	for (size_t i = 0; i < f->all_pods.n; i++) {
		const struct sc_pod *p = f->all_pods.v[i];
		bool found = false;

		if (pk_map_get(&f->pods, p->key) != p || !p->group || p->apos != i)
			goto bad_pod;
		for (size_t k = 0; k < p->group->pods.n; k++)
			found = found || p->group->pods.v[k] == p;
		if (!found)
			goto bad_pod;
		continue;
	bad_pod:
		if (why)
			snprintf(why, whylen, "pod %s not registered under its group", p->key);
		return -EUCLEAN;
	}
	for (size_t i = 0; i < f->all_groups.n; i++) {
		const struct sc_group *g = f->all_groups.v[i];
		bool found = !g->parent;

		for (size_t k = 0; g->parent && k < g->parent->children.n; k++)
			found = found || g->parent->children.v[k] == g;
		if (!found || pk_map_get(&f->groups[g->composite], g->key) != g) {
			if (why)
				snprintf(why, whylen, "group %s not registered under its parent",
					 g->key);
			return -EUCLEAN;
		}
		if ((g->composite && g->pods.n) || (!g->composite && g->children.n)) {
			if (why)
				snprintf(why, whylen, "%s %s holds %s", sc_group_kind(g), g->key,
					 g->composite ? "pods" : "child groups");
			return -EUCLEAN;
		}
	}
	return 0;
}

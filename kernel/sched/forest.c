/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forest.c — the workload forest: PodGroups, CompositePodGroups and pods in
 * whatever order they arrive.
 *
 * Groups are kept in two maps by "namespace/name", one for PodGroups and one
 * for CompositePodGroups: they are separate resources, so a PodGroup and a
 * CompositePodGroup may share a name (a child's parentCompositePodGroupName
 * names a CompositePodGroup, a pod's podGroupName a PodGroup).  A child names
 * its parent; if the parent has not been seen, a placeholder entry of that
 * kind is created and the child
 * registers under it, so when the parent arrives its children are already
 * there (no retroactive scan).  Pods register the same way under their leaf
 * group.  A standalone pod gets an implicit one-pod group of its own.  Roots
 * (present groups without a parent, and implicit groups) are the only queue
 * entries; sc_group_root() resolves a group's root and stops on a missing
 * ancestor or a cycle, so unresolved hierarchies never reach scheduling.
 * Placeholders are freed once nothing hangs under them.  The forest also
 * keeps the victim floor, a lower bound of the bound pods' priorities that
 * preemption asks before looking for victims.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"
#include "kernel/sched/sched-strand.h"

#define SC_WALK_MAX 64 /* longest parent chain followed */

static void recent_home_free(void *v);

void sc_forest_init(struct sc_forest *f)
{
	memset(f, 0, sizeof(*f));
	f->recent_homes = (struct pk_map)PK_MAP_INIT(recent_home_free);
	f->pods.borrow_keys = true; /* a pod's key is its own p->key */
	f->reqs = (struct pk_map)PK_MAP_INIT(free);
}

static void group_clear_spec(struct sc_group *g)
{
	free(g->spec.parent_key);
	free(g->spec.workload);
	free(g->spec.topo_key);
	free(g->spec.home);
	g->spec.home = NULL;
	free(g->spec.prio_class);
	g->spec.parent_key = g->spec.workload = g->spec.topo_key = g->spec.prio_class = NULL;
	g->spec.has_slice = g->spec.slice_bad = false;
	json_decref(g->spec.claims_obj);
	g->spec.claims_obj = NULL;
	g->spec.claims_gen = 0;
}

static void group_free(struct sc_group *g)
{
	if (!g)
		return;
	group_clear_spec(g);
	free(g->key);
	free(g->ns);
	free(g->name);
	free(g->eval.why);
	free(g->q);
	free(g->home);
	free(g->pick);
	if (g->strat.free)
		g->strat.free(g->strat.state);
	sc_vec_free(&g->children);
	sc_vec_free(&g->pods);
	free(g);
}

/*
 * A pod's requests, shared: most pods of a cluster ask the same as many
 * others (a gang's, a Job's), and a vector is 128 bytes.  One per distinct
 * vector, counted, keyed by its non-zero entries as text.
 */
struct req_vec {
	unsigned refs;
	int64_t v[SC_MAX_RES];
};

/* The decimal digits of v, written backwards to end; the first of them. */
static char *req_digits(uint64_t v, char *end)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/* The key of v: "R=V;" for each non-zero entry (what "%d=%lld;" writes), cut to len - 1. */
static void req_vec_key(const int64_t *v, char *buf, size_t len)
{
	size_t n = 0;

	for (int r = 0; r < SC_MAX_RES; r++) {
		char tmp[48], *end = tmp + sizeof(tmp), *b;

		if (!v[r])
			continue;
		*--end = ';';
		b = req_digits(v[r] < 0 ? -(uint64_t)v[r] : (uint64_t)v[r], end);
		if (v[r] < 0)
			*--b = '-';
		*--b = '=';
		b = req_digits((uint64_t)r, b);
		for (; b < tmp + sizeof(tmp) && n + 1 < len; b++)
			buf[n++] = *b;
	}
	buf[n < len ? n : len - 1] = '\0';
}

/* The shared copy of v (one more user), NULL on ENOMEM. */
static const int64_t *req_share(struct sc_forest *f, const int64_t *v)
{
	char key[SC_MAX_RES * 24];
	struct req_vec *e;

	req_vec_key(v, key, sizeof(key));
	e = pk_map_get(&f->reqs, key);
	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return NULL;
		memcpy(e->v, v, sizeof(e->v));
		if (pk_map_put(&f->reqs, key, e) < 0) {
			free(e);
			return NULL;
		}
	}
	e->refs++;
	return e->v;
}

/* One user less of a shared vector (req_share()); the last one frees it.  NULL: none. */
static void req_unshare(struct sc_forest *f, const int64_t *v)
{
	char key[SC_MAX_RES * 24];
	struct req_vec *e;

	if (!v)
		return;
	e = (struct req_vec *)((char *)(uintptr_t)v - offsetof(struct req_vec, v));
	if (--e->refs)
		return;
	req_vec_key(v, key, sizeof(key));
	pk_map_del(&f->reqs, key); /* the map owns its vectors */
}

void sc_pod_node_name_drop(struct sc_forest *f, struct sc_pod *p)
{
	if (p->node_name_own)
		free(p->node_name);
	else
		pk_unintern(&f->strings, p->node_name);
	p->node_name = NULL;
	p->node_name_own = false;
}

static void pod_free(struct sc_forest *f, struct sc_pod *p)
{
	if (!p)
		return;
	free(p->key); /* with ns and name (pod_names) */
	pk_unintern(&f->strings, p->group_key);
	sc_pod_node_name_drop(f, p);
	req_unshare(f, p->req);
	free(p->prio_class);
	if (p->cycle.fail)
		free(p->cycle.fail->why);
	free(p->cycle.fail);
	sc_cons_free(p->cons);
	for (size_t i = 0; i < p->nsel; i++) {
		free(p->sel[i].key);
		free(p->sel[i].value);
	}
	free(p->sel);
	for (size_t t = 0; t < p->nterms; t++) {
		for (size_t i = 0; i < p->terms[t].nreqs; i++) {
			struct sc_sel_req *r = &p->terms[t].reqs[i];

			free(r->key);
			for (size_t v = 0; v < r->nvalues; v++)
				free(r->values[v]);
			free(r->values);
		}
		free(p->terms[t].reqs);
	}
	free(p->terms);
	for (size_t i = 0; i < p->ntols; i++) {
		free(p->tols[i].key);
		free(p->tols[i].value);
	}
	free(p->tols);
	free(p);
}

static void free_strings(struct sc_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	sc_vec_free(v);
}

static void recent_home_free(void *v)
{
	struct sc_recent_home *h = v;

	free(h->home);
	free(h);
}

/* Remember a removed group's home (best effort: out of memory forgets it). */
static void remember_home(struct sc_forest *f, const char *key, bool composite, const char *home)
{
	char k[600];
	struct sc_recent_home *h;

	if (!home || strlen(key) >= sizeof(k) - 2)
		return;
	snprintf(k, sizeof(k), "%c%s", composite ? 'C' : 'P', key);
	if (f->recent_homes.live >= SC_RECENT_HOMES_MAX)
		pk_map_free(&f->recent_homes);
	if ((h = pk_map_get(&f->recent_homes, k))) {
		free(h->home);
	} else if (!(h = calloc(1, sizeof(*h))) || pk_map_put(&f->recent_homes, k, h) < 0) {
		free(h);
		return;
	}
	h->home = strdup(home);
	h->at = f->version;
}

/* A group made again: its home, if it was removed lately (taken: the entry goes). */
static void recall_home(struct sc_forest *f, struct sc_group *g, bool composite)
{
	char k[600];
	struct sc_recent_home *h;

	if (g->home || !f->recent_homes.live || strlen(g->key) >= sizeof(k) - 2)
		return;
	snprintf(k, sizeof(k), "%c%s", composite ? 'C' : 'P', g->key);
	if (!(h = pk_map_take(&f->recent_homes, k)))
		return;
	if (f->version - h->at <= SC_RECENT_HOME_WINDOW) {
		g->home = h->home;
		h->home = NULL;
	}
	recent_home_free(h);
}

void sc_forest_fini(struct sc_forest *f)
{
	pk_map_free(&f->recent_homes);
	sc_queue_fini(&f->queue); /* before the groups it points to go */
	free_strings(&f->unrooted_groups);
	free_strings(&f->unrooted_pods);
	for (size_t i = 0; i < f->all_pods.n; i++) {
		struct sc_pod *p = f->all_pods.v[i];

		if (p->group && p->group->implicit)
			group_free(p->group);
		pod_free(f, p);
	}
	for (size_t i = 0; i < f->all_groups.n; i++)
		group_free(f->all_groups.v[i]);
	sc_vec_free(&f->all_pods);
	sc_vec_free(&f->all_groups);
	sc_vec_free(&f->roots);
	pk_map_free(&f->groups[0]);
	pk_map_free(&f->groups[1]);
	pk_map_free(&f->pods);
	pk_map_free(&f->strings);
	pk_map_free(&f->reqs);
}

const char *sc_group_kind(const struct sc_group *g)
{
	if (g->implicit)
		return "Pod";
	return g->composite ? "CompositePodGroup" : "PodGroup";
}

static struct sc_group *group_new(const char *key, bool composite)
{
	struct sc_group *g = calloc(1, sizeof(*g));
	const char *slash = strchr(key, '/');

	if (!g)
		return NULL;
	g->key = strdup(key);
	g->ns = slash ? strndup(key, (size_t)(slash - key)) : strdup("");
	g->name = strdup(slash ? slash + 1 : key);
	g->spec.creation = INT64_MIN;
	g->composite = composite;
	if (!g->key || !g->ns || !g->name) {
		group_free(g);
		return NULL;
	}
	return g;
}

struct sc_group *sc_forest_group(struct sc_forest *f, const char *key, bool composite, bool create)
{
	struct pk_map *m = &f->groups[composite];
	struct sc_group *g = pk_map_get(m, key);

	if (g || !create)
		return g;
	g = group_new(key, composite);
	if (!g)
		return NULL;
	if (pk_map_put(m, key, g) < 0 || sc_vec_push(&f->all_groups, g) < 0) {
		pk_map_del(m, key);
		group_free(g);
		return NULL;
	}
	return g;
}

/* Take p out of all_pods (if listed): the last pod takes its place. */
static void all_pods_del(struct sc_forest *f, struct sc_pod *p)
{
	struct sc_vec *v = &f->all_pods;
	struct sc_pod *last;

	if (p->apos >= v->n || v->v[p->apos] != p)
		return;
	last = v->v[--v->n];
	v->v[p->apos] = last;
	last->apos = p->apos;
}

/* The forest's roots and the queue's view of them. */
static int roots_add(struct sc_forest *f, struct sc_group *g)
{
	if (!g->q) { /* aligned: a park's search reads its first cache line */
		size_t size = (sizeof(*g->q) + 63) / 64 * 64;

		if (!(g->q = aligned_alloc(64, size)))
			return -ENOMEM;
		memset(g->q, 0, size);
		g->q->g = g;
		g->q->present = g->present;
	}
	if (g->q->is_root)
		return 0;
	if (sc_vec_push(&f->roots, g) < 0)
		return -ENOMEM;
	g->q->is_root = true;
	sc_queue_touched(&f->queue, g);
	return 0;
}

static void roots_del(struct sc_forest *f, struct sc_group *g)
{
	if (g->q && g->q->is_root) {
		sc_vec_remove(&f->roots, g);
		g->q->is_root = false;
	}
	sc_queue_forget(&f->queue, g);
}

static void forest_group_free(struct sc_forest *f, struct sc_group *g)
{
	roots_del(f, g);
	group_free(g);
}

/* Remember what to look at in the next report of unrooted hierarchies. */
static void note_unrooted(struct sc_vec *v, char tag, const char *key)
{
	char *k = malloc(strlen(key) + 2);

	if (!k)
		return;
	k[0] = tag;
	strcpy(k + 1, key);
	if (sc_vec_push(v, k) < 0)
		free(k);
}

/* Free a placeholder that nothing refers to any more. */
static void maybe_free(struct sc_forest *f, struct sc_group *g)
{
	if (!g || g->present || g->implicit || g->children.n || g->pods.n)
		return;
	if (g->parent)
		sc_vec_remove(&g->parent->children, g);
	pk_map_del(&f->groups[g->composite], g->key);
	sc_vec_remove(&f->all_groups, g);
	forest_group_free(f, g);
}

void sc_group_touch(struct sc_forest *f, struct sc_group *g)
{
	struct sc_group *top = NULL;

	for (int i = 0; g && i < SC_WALK_MAX; i++, g = g->parent) {
		if (g->q) { /* one that never was a root starts touched when it becomes one */
			g->q->dirty = true;
			g->q->done = false;
			g->q->prio_valid = false;
			g->q->kept = false;
		}
		top = g;
	}
	if (top)
		sc_queue_touched(&f->queue, top);
}

static int link_parent(struct sc_forest *f, struct sc_group *g)
{
	struct sc_group *parent = NULL, *old = g->parent;

	if (g->spec.parent_key) {
		parent = sc_forest_group(f, g->spec.parent_key, true, true);
		if (!parent)
			return -ENOMEM;
	}
	if (parent != old) {
		if (old) {
			sc_vec_remove(&old->children, g);
			sc_group_touch(f, old);
		}
		g->parent = NULL;
		if (parent) {
			if (sc_vec_push(&parent->children, g) < 0)
				return -ENOMEM;
			parent->sorted = false;
			g->parent = parent;
		}
		if (old)
			maybe_free(f, old);
	}
	if (!parent)
		return roots_add(f, g);
	roots_del(f, g);
	return 0;
}

int sc_forest_add_group(struct sc_forest *f, const struct pk_group *view, bool scheduled)
{
	char *key = sc_key(view->meta.namespace, view->meta.name);
	struct sc_group *g;
	int r;

	f->version++;
	if (!key)
		return -ENOMEM;
	g = sc_forest_group(f, key, view->kind == PK_KIND_COMPOSITE_POD_GROUP, true);
	free(key);
	if (!g)
		return -ENOMEM;
	group_clear_spec(g);
	g->present = true;
	if (g->q)
		g->q->present = true;
	g->spec.creation = view->meta.creation;
	if (!g->seq)
		g->seq = ++f->seq;
	g->spec.workload = sc_strdup(view->workload_name);
	g->spec.parent_key = view->parent ? sc_key(view->meta.namespace, view->parent) : NULL;
	g->spec.policy = view->spec.policy;
	g->spec.min = view->spec.min_count;
	g->spec.disruption = view->spec.disruption;
	g->spec.topo_key = view->spec.topology_key && *view->spec.topology_key
			       ? strdup(view->spec.topology_key)
			       : NULL;
	const char *home = json_string_value(json_object_get(
	    pk_get(view->raw, "metadata.annotations"), TOPO_ANNOTATION_HOME_DOMAIN));
	g->spec.home = home && *home ? strdup(home) : NULL;
	g->spec.has_slice = view->slice_shape != NULL && !g->composite;
	g->spec.slice_bad =
	    g->spec.has_slice && topo_shape_parse(view->slice_shape, &g->spec.slice) < 0;
	g->spec.has_claims = json_array_size(pk_get(view->raw, "spec.resourceClaims")) > 0;
	if (g->spec.has_claims && !g->composite) {
		g->spec.claims_obj = json_incref(view->raw);
		g->spec.claims_gen = f->version;
		/* members parsed while the group had none (their uid is not known here) */
		for (size_t i = 0; i < g->pods.n; i++)
			if (sc_cons_group_changed(g->pods.v[i]) < 0)
				return -ENOMEM;
	}
	g->spec.has_prio = view->spec.has_priority;
	g->spec.prio = view->spec.priority;
	g->spec.prio_class = sc_strdup(view->spec.priority_class);
	g->scheduled = g->scheduled || scheduled;
	if (g->q)
		g->q->parked_invalid = false;
	recall_home(f, g, g->composite);
	if ((view->workload_name && !g->spec.workload) || (view->parent && !g->spec.parent_key) ||
	    (view->spec.priority_class && !g->spec.prio_class))
		return -ENOMEM;
	if (g->parent)
		g->parent->sorted = false;
	r = link_parent(f, g);
	sc_group_touch(f, g);
	note_unrooted(&f->unrooted_groups, g->composite ? 'C' : 'P', g->key);
	return r;
}

int sc_forest_remove_group(struct sc_forest *f, const char *key, bool composite)
{
	struct sc_group *g = pk_map_get(&f->groups[composite], key);

	f->version++;
	if (!g || !g->present)
		return -ENOENT;
	remember_home(f, key, composite, g->home);
	if (g->parent)
		sc_group_touch(f, g->parent);
	g->present = false;
	if (g->q)
		g->q->present = false;
	group_clear_spec(g);
	roots_del(f, g);
	/* Children and pods stay registered under the placeholder. */
	sc_group_touch(f, g);
	note_unrooted(&f->unrooted_groups, composite ? 'C' : 'P', key);
	struct sc_group *parent = g->parent;

	if (parent) {
		sc_vec_remove(&parent->children, g);
		g->parent = NULL;
	}
	maybe_free(f, g); /* g may be gone from here on */
	if (parent && parent != g)
		maybe_free(f, parent);
	return 0;
}

/* A bound slice pod's place from its annotations (TPU slices), else none. */
static void slice_place_of(const struct pk_pod *v, struct sc_pod *p)
{
	const json_t *ann = json_object_get(json_object_get(v->raw, "metadata"), "annotations");
	const char *w = json_string_value(json_object_get(ann, TOPO_ANN_WORKER_ID));
	const char *c = json_string_value(json_object_get(ann, TOPO_ANN_SLICE_COORDS));
	char *end = NULL;
	long id = w ? strtol(w, &end, 10) : -1;
	struct topo_coord at;
	char tail;

	p->cycle.slice_worker = -1;
	if (id < 0 || id > 65535 || !end || *end || !c ||
	    sscanf(c, "%d.%d.%d%c", &at.c[0], &at.c[1], &at.c[2], &tail) != 3)
		return;
	p->cycle.slice_worker = (int)id;
	p->cycle.slice_at = at;
}

/*
 * A pod's names in one allocation (a backlog holds millions of pods): its
 * key "ns/name", its namespace ("default" when it names none) and its name;
 * p->key owns them all (the group's key is interned: copy_pod).
 */
static char *put(char *at, const char *a, size_t la, const char *b, size_t lb)
{
	memcpy(at, a, la);
	if (b) {
		at[la++] = '/';
		memcpy(at + la, b, lb);
		la += lb;
	}
	at[la] = '\0';
	return at + la + 1;
}

static int pod_names(struct sc_pod *p, const struct pk_pod *v)
{
	const char *ns = v->meta.namespace ? v->meta.namespace : "";
	const char *name = v->meta.name ? v->meta.name : "";
	const char *ns_or = v->meta.namespace ? ns : "default";
	size_t ln = strlen(ns), lname = strlen(name), lor = strlen(ns_or);
	char *b = malloc((ln + lname + 2) + (lor + 1) + (lname + 1));
	char *at;

	if (!b)
		return -ENOMEM;
	at = put(p->key = b, ns, ln, name, lname);
	at = put(p->ns = at, ns_or, lor, NULL, 0);
	put(p->name = at, name, lname, NULL, 0);
	return 0;
}

static int copy_pod(struct pk_sched *s, struct sc_pod *p, const struct pk_pod *v)
{
	if (pod_names(p, v) < 0)
		return -ENOMEM;
	p->creation = v->meta.creation;
	p->deleting = v->meta.deleting;
	p->node = -1;
	p->cycle.assumed = -1;
	p->share_dev = -1;
	slice_place_of(v, p);
	/* the node's name and the group's key are shared by the pods that name them */
	if (v->node_name && *v->node_name &&
	    !(p->node_name = (char *)pk_intern(&s->forest.strings, v->node_name)))
		return -ENOMEM;
	if (v->pod_group) {
		char *gk = sc_key(v->meta.namespace, v->pod_group);

		p->group_key = gk ? (char *)pk_intern(&s->forest.strings, gk) : NULL;
		free(gk);
		if (!p->group_key)
			return -ENOMEM;
	}
	p->has_prio = v->has_priority;
	p->prio = v->priority;
	p->prio_class = sc_strdup(v->priority_class);
	int64_t req[SC_MAX_RES] = {[SC_RES_PODS] = 1000};

	for (size_t i = 0; i < v->nrequests; i++) {
		int r = sc_res_id(&s->snap, v->requests[i].name);

		if (r < 0)
			return r;
		if (r != SC_RES_PODS && v->requests[i].milli > 0)
			req[r] = sc_add(req[r], v->requests[i].milli);
	}
	if (!(p->req = req_share(&s->forest, req)))
		return -ENOMEM;
	/* none allocated for none: most pods have no selector, affinity or toleration */
	p->sel = v->nnode_selector ? calloc(v->nnode_selector, sizeof(*p->sel)) : NULL;
	p->terms = v->naffinity ? calloc(v->naffinity, sizeof(*p->terms)) : NULL;
	p->tols = v->ntolerations ? calloc(v->ntolerations, sizeof(*p->tols)) : NULL;
	if ((v->nnode_selector && !p->sel) || (v->naffinity && !p->terms) ||
	    (v->ntolerations && !p->tols))
		return -ENOMEM;
	for (size_t i = 0; i < v->nnode_selector; i++, p->nsel++) {
		p->sel[i].key = sc_strdup(v->node_selector[i].key);
		p->sel[i].value =
		    strdup(v->node_selector[i].value ? v->node_selector[i].value : "");
		if (!p->sel[i].key || !p->sel[i].value)
			return -ENOMEM;
	}
	for (size_t t = 0; t < v->naffinity; t++, p->nterms++) {
		const struct pk_selector_term *in = &v->affinity[t];
		struct sc_sel_term *out = &p->terms[t];

		out->reqs = calloc(in->nreqs + 1, sizeof(*out->reqs));
		if (!out->reqs)
			return -ENOMEM;
		for (size_t i = 0; i < in->nreqs; i++, out->nreqs++) {
			struct sc_sel_req *r = &out->reqs[i];

			r->key = sc_strdup(in->reqs[i].key);
			r->field = in->reqs[i].field;
			r->op = in->reqs[i].op;
			r->values = calloc(in->reqs[i].nvalues + 1, sizeof(char *));
			if (!r->key || !r->values)
				return -ENOMEM;
			for (size_t k = 0; k < in->reqs[i].nvalues; k++, r->nvalues++)
				if (!(r->values[k] = sc_strdup(in->reqs[i].values[k])))
					return -ENOMEM;
		}
	}
	for (size_t i = 0; i < v->ntolerations; i++, p->ntols++) {
		p->tols[i].key = sc_strdup(v->tolerations[i].key);
		p->tols[i].value = sc_strdup(v->tolerations[i].value);
		p->tols[i].op = v->tolerations[i].op;
		p->tols[i].has_effect = v->tolerations[i].has_effect;
		p->tols[i].effect = v->tolerations[i].effect;
	}
	return 0;
}

int sc_forest_add_pod(struct pk_sched *s, const struct pk_pod *view)
{
	struct sc_forest *f = &s->forest;
	struct sc_pod *p = calloc(1, sizeof(*p)), *old;
	struct sc_group *g;
	bool seen;
	int r;

	f->version++;
	if (!p)
		return -ENOMEM;
	r = copy_pod(s, p, view);
	if (r == 0)
		r = sc_cons_parse(s, view->raw, p);
	if (r < 0)
		goto fail;
	old = pk_map_get(&f->pods, p->key);
	seen = old != NULL;
	p->seq = old ? old->seq : ++f->seq;
	if (old) {
		/* What was said about the pod stays said: no repeated conditions. */
		p->memo = old->memo;
		if ((r = sc_forest_remove_pod(s, old->key)) < 0)
			goto fail;
	}
	if (p->group_key) {
		g = sc_forest_group(f, p->group_key, false, true);
	} else {
		g = group_new(p->key, false);
		if (g) {
			g->implicit = g->present = true;
			g->spec.creation = p->creation;
			g->seq = p->seq;
			if (roots_add(f, g) < 0) {
				forest_group_free(f, g);
				g = NULL;
			}
		}
	}
	if (!g) {
		r = -ENOMEM;
		goto fail;
	}
	p->apos = f->all_pods.n;
	if ((r = sc_vec_push(&g->pods, p)) < 0 || (r = sc_vec_push(&f->all_pods, p)) < 0 ||
	    (r = pk_map_put(&f->pods, p->key, p)) < 0) {
		sc_vec_remove(&g->pods, p);
		all_pods_del(f, p);
		if (g->implicit)
			forest_group_free(f, g);
		goto fail;
	}
	p->group = g;
	g->sorted = false;
	if (!seen)
		sc_profile_note(&s->profile, &s->snap, p);
	if (p->node_name) {
		struct sc_node *n = sc_snapshot_node(&s->snap, p->node_name);

		if (n) {
			sc_snapshot_bind(&s->snap, p, n->index);
			sc_victim_floor_note(s, p);
		}
		/* Capacity taken wakes nobody (s->gen counts what may free some). */
	}
	sc_group_touch(f, g);
	if (!g->implicit)
		note_unrooted(&f->unrooted_pods, 'p', p->key);
	return 0;
fail:
	sc_cons_release(s, p);
	pod_free(f, p);
	return r;
}

int sc_forest_remove_pod(struct pk_sched *s, const char *key)
{
	struct sc_forest *f = &s->forest;
	struct sc_pod *p = pk_map_get(&f->pods, key);
	struct sc_group *g;

	f->version++;
	if (!p)
		return -ENOENT;
	g = p->group;
	if (p->node >= 0 || p->node_name) {
		s->gen++;
		s->gen_cap++; /* only capacity freed: the queue wakes what it may hold */
	}
	sc_snapshot_unbind(&s->snap, p);
	sc_cons_release(s, p);
	pk_map_del(&f->pods, key);
	all_pods_del(f, p);
	if (g) {
		if (g->eval.why_pod == p)
			g->eval.why_pod = NULL;
		sc_vec_remove(&g->pods, p);
		sc_group_touch(f, g);
		if (g->implicit) {
			forest_group_free(f, g);
		} else {
			maybe_free(f, g);
		}
	}
	pod_free(f, p);
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct sc_group *x = *(struct sc_group *const *)a, *y = *(struct sc_group *const *)b;

	if (x->spec.creation != y->spec.creation)
		return x->spec.creation < y->spec.creation ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Pods with a timestamp by (time, name), then the others in read order. */
static int cmp_pod(const void *a, const void *b)
{
	const struct sc_pod *x = *(struct sc_pod *const *)a, *y = *(struct sc_pod *const *)b;
	bool tx = x->creation != INT64_MIN, ty = y->creation != INT64_MIN;

	if (tx != ty)
		return tx ? -1 : 1;
	if (tx && x->creation != y->creation)
		return x->creation < y->creation ? -1 : 1;
	if (tx) {
		int c = strcmp(x->name, y->name);

		if (c)
			return c;
	}
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void sc_group_sort(struct sc_group *g)
{
	if (g->sorted)
		return;
	if (g->children.n > 1)
		qsort(g->children.v, g->children.n, sizeof(void *), cmp_group);
	if (g->pods.n > 1)
		qsort(g->pods.v, g->pods.n, sizeof(void *), cmp_pod);
	g->sorted = true;
}

struct sc_group *sc_group_root(struct sc_group *g, char *why, size_t whylen)
{
	const struct sc_group *seen[SC_WALK_MAX];
	size_t n = 0;

	while (g) {
		if (!g->present) {
			if (why)
				snprintf(why, whylen, "group %s not found", g->key);
			return NULL;
		}
		for (size_t i = 0; i < n; i++) {
			if (seen[i] == g) {
				if (why)
					snprintf(why, whylen,
						 "cycle: parent chain returns to %s %s",
						 sc_group_kind(g), g->key);
				return NULL;
			}
		}
		if (n == SC_WALK_MAX) {
			if (why)
				snprintf(why, whylen, "parent chain longer than %d", SC_WALK_MAX);
			return NULL;
		}
		seen[n++] = g;
		if (!g->spec.parent_key)
			return g;
		g = g->parent;
	}
	return NULL;
}

/* ---- the victim floor --------------------------------------------------------- */

void sc_victim_floor_note(struct pk_sched *s, const struct sc_pod *pod)
{
	int32_t prio;

	if (!s->floor_valid)
		return;
	prio = sc_pod_priority(s, pod);
	if (prio < s->victim_floor)
		s->victim_floor = prio;
}

void sc_victim_floor_invalidate(struct pk_sched *s)
{
	s->floor_valid = false;
}

bool sc_victim_floor_below(struct pk_sched *s, int32_t prio)
{
	if (!s->floor_valid || s->floor_epoch != s->prio_epoch) {
		const struct sc_vec *pods = &s->forest.all_pods;

		s->victim_floor = INT32_MAX;
		for (size_t i = 0; i < pods->n; i++) {
			const struct sc_pod *p = pods->v[i];
			int32_t pp;

			if (p->node < 0 || p->deleting)
				continue;
			pp = sc_pod_priority(s, p);
			if (pp < s->victim_floor)
				s->victim_floor = pp;
		}
		s->floor_valid = true;
		s->floor_epoch = s->prio_epoch;
	}
	return s->victim_floor < prio;
}

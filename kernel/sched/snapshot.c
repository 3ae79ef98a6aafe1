/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.c — the cluster as the scheduler sees it during a cycle.
 *
 * Nodes get dense indices and fixed-size vectors of allocatable and used
 * capacity in milli-units, indexed by dense resource ids ("pods" is id 0;
 * every pod uses 1000 of it).  For each topology key in use, a partition
 * maps nodes to domains (one per distinct label value, in natural order) and
 * keeps each domain's free capacity, updated on every change, so a strategy
 * can reject a full domain without looking at its nodes.
 *
 * Simulation goes through sc_snapshot_assume*(): each assumption pushes its
 * revert onto a log; sc_snapshot_revert(mark) undoes everything after mark in
 * exact reverse order.  sc_snapshot_check() recomputes every aggregate from
 * the pods and proves the snapshot is back to its committed state.
 *
 * A scope's nodes are grouped by domain with one counting sort
 * (sc_part_sort), which also gives a partition its whole-cluster lists.
 * State that a module above keeps in step with the snapshot (slice.c's torus
 * occupancy) registers as an extension (struct sc_snap_ext_ops): the
 * snapshot charges it, checks it and drops it without naming its module.
 * The constraint plugins' per-pod state (their term index, host ports,
 * claims, volumes) follows the same way through the hooks plugin.c
 * registers (struct sc_snap_pod_ops), so the snapshot, the lowest layer of
 * the core, calls no file above it.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

int sc_snapshot_init(struct sc_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	snap->res_name[0] = strdup("pods");
	if (!snap->res_name[0])
		return -ENOMEM;
	snap->nres = 1;
	return 0;
}

static void part_free(struct sc_part *p)
{
	if (!p)
		return;
	for (int d = 0; d < p->ndom; d++)
		free(p->values[d]);
	free(p->values);
	free(p->node_dom);
	free(p->dom_size);
	free(p->free);
	free(p->used_pods);
	free(p->order);
	free(p->start);
	free(p->scratch);
	free(p->tree);
	free(p->tdirty);
	free(p->tdlist);
	free(p->key);
	free(p);
}

/* ---- a scope's nodes by domain ----------------------------------------------- */

void sc_buckets_free(struct sc_buckets *b)
{
	if (b->owned) {
		free(b->dom);
		free(b->start);
		free(b->order);
	}
	memset(b, 0, sizeof(*b));
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * A stable counting sort on part->node_dom, using part->scratch (all zero
 * between uses) as the per-domain counter and then fill position; the
 * domains present are listed and sorted, so the cost is the scope's size and
 * not the number of domains of the key.
 */
int sc_part_sort(struct sc_part *part, const int *nodes, size_t n, struct sc_buckets *ret)
{
	struct sc_buckets b = {.owned = true};

	b.dom = malloc((n + 1) * sizeof(int));
	b.start = malloc((n + 2) * sizeof(int));
	b.order = malloc((n + 1) * sizeof(int));
	if (!b.dom || !b.start || !b.order) {
		sc_buckets_free(&b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int d = part->node_dom[nodes ? nodes[i] : (int)i];

		if (d >= 0 && part->scratch[d]++ == 0)
			b.dom[b.nd++] = d;
	}
	qsort(b.dom, (size_t)b.nd, sizeof(int), cmp_int);
	b.start[0] = 0;
	for (int k = 0; k < b.nd; k++) {
		b.start[k + 1] = b.start[k] + part->scratch[b.dom[k]];
		part->scratch[b.dom[k]] = b.start[k]; /* now the fill position */
	}
	for (size_t i = 0; i < n; i++) {
		int node = nodes ? nodes[i] : (int)i, d = part->node_dom[node];

		if (d >= 0)
			b.order[part->scratch[d]++] = node;
	}
	for (int k = 0; k < b.nd; k++)
		part->scratch[b.dom[k]] = 0;
	*ret = b;
	return 0;
}

int sc_buckets_of(const struct sc_snapshot *snap, struct sc_part *part, const int *nodes, size_t n,
		  struct sc_buckets *ret)
{
	if (n == snap->nnodes) { /* the whole cluster: the partition's own lists */
		*ret = (struct sc_buckets){
		    .nd = part->ndom, .start = part->start, .order = part->order};
		return 0;
	}
	return sc_part_sort(part, nodes, n, ret);
}

/* ---- extensions ------------------------------------------------------------ */

int sc_snapshot_register_ext(struct sc_snapshot *snap, const struct sc_snap_ext_ops *ops)
{
	if (sc_snapshot_ext_state(snap, ops))
		return 0;
	if (snap->next >= SC_SNAP_EXT_MAX)
		return -E2BIG;
	snap->ext[snap->next++] = (struct sc_snap_ext){.ops = ops};
	return 0;
}

void **sc_snapshot_ext_state(struct sc_snapshot *snap, const struct sc_snap_ext_ops *ops)
{
	for (int i = 0; i < snap->next; i++)
		if (snap->ext[i].ops == ops)
			return &snap->ext[i].state;
	return NULL;
}

void sc_snapshot_register_pod_ops(struct sc_snapshot *snap, const struct sc_snap_pod_ops *ops)
{
	snap->pod_ops = ops;
}

bool sc_snapshot_bind_annotations(const struct sc_snapshot *snap, const struct sc_pod *pod,
				  char *coords, size_t clen, char *worker, size_t wlen)
{
	for (int i = 0; i < snap->next; i++)
		if (snap->ext[i].ops->bind_annotations &&
		    snap->ext[i].ops->bind_annotations(pod, coords, clen, worker, wlen))
			return true;
	return false;
}

void sc_snapshot_drop_parts(struct sc_snapshot *snap)
{
	for (int i = 0; i < snap->next; i++) { /* node geometry may have changed too */
		if (snap->ext[i].state)
			snap->ext[i].ops->free(snap->ext[i].state);
		snap->ext[i].state = NULL;
	}
	if (snap->pod_ops) /* the terms' domains were the partitions' */
		snap->pod_ops->parts_dropped(snap);
	for (size_t i = 0; i < snap->nparts; i++)
		part_free(snap->parts[i]);
	free(snap->parts);
	snap->parts = NULL;
	snap->nparts = 0;
}

static void devs_free(struct sc_node *n)
{
	for (int i = 0; i < n->ndevs; i++)
		free(n->devs[i].free);
	free(n->devs);
	n->devs = NULL;
	n->ndevs = 0;
}

static void node_clear(struct sc_snapshot *snap, struct sc_node *n)
{
	for (size_t i = 0; i < n->nlabels; i++) {
		pk_unintern(&snap->strings, n->labels[i].key);
		pk_unintern(&snap->strings, n->labels[i].value);
	}
	free(n->labels);
	for (size_t i = 0; i < n->ntaints; i++) {
		free(n->taints[i].key);
		free(n->taints[i].value);
	}
	free(n->taints);
	n->labels = NULL;
	n->taints = NULL;
	n->nlabels = n->ntaints = 0;
}

void sc_snapshot_fini(struct sc_snapshot *snap)
{
	sc_snapshot_drop_parts(snap);
	sc_snapshot_drop_blocks(snap);
	for (size_t i = 0; i < snap->nnodes; i++) {
		node_clear(snap, snap->nodes[i]);
		devs_free(snap->nodes[i]);
		free(snap->nodes[i]->name);
		free(snap->nodes[i]);
	}
	free(snap->nodes);
	pk_map_free(&snap->strings);
	for (int r = 0; r < snap->nres; r++)
		free(snap->res_name[r]);
	pk_map_free(&snap->node_by_name);
	free(snap->log);
	if (snap->pod_ops)
		snap->pod_ops->fini(snap);
	memset(snap, 0, sizeof(*snap));
}

int sc_res_id(struct sc_snapshot *snap, const char *name)
{
	for (int r = 0; r < snap->nres; r++)
		if (strcmp(snap->res_name[r], name) == 0)
			return r;
	if (snap->nres == SC_MAX_RES)
		return -E2BIG;
	snap->res_name[snap->nres] = strdup(name);
	if (!snap->res_name[snap->nres])
		return -ENOMEM;
	return snap->nres++;
}

struct sc_node *sc_snapshot_node(const struct sc_snapshot *snap, const char *name)
{
	return name ? pk_map_get(&snap->node_by_name, name) : NULL;
}

const char *sc_node_label(const struct sc_node *node, const char *key)
{
	for (size_t i = 0; i < node->nlabels; i++)
		if (strcmp(node->labels[i].key, key) == 0)
			return node->labels[i].value;
	return NULL;
}

static int node_fill(struct sc_snapshot *snap, struct sc_node *n, const struct pk_node *view)
{
	int64_t alloc[SC_MAX_RES] = {0};

	for (size_t i = 0; i < view->nallocatable; i++) {
		int r = sc_res_id(snap, view->allocatable[i].name);

		if (r < 0)
			return r;
		alloc[r] = view->allocatable[i].milli > 0 ? view->allocatable[i].milli : 0;
	}
	n->labels = calloc(view->meta.nlabels + 1, sizeof(*n->labels));
	n->taints = calloc(view->ntaints + 1, sizeof(*n->taints));
	if (!n->labels || !n->taints)
		return -ENOMEM;
	for (size_t i = 0; i < view->meta.nlabels; i++) {
		const char *key = view->meta.labels[i].key, *value = view->meta.labels[i].value;

		n->labels[i].key = key ? (char *)pk_intern(&snap->strings, key) : NULL;
		n->labels[i].value = (char *)pk_intern(&snap->strings, value ? value : "");
		n->nlabels++;
		if ((key && !n->labels[i].key) || !n->labels[i].value)
			return -ENOMEM;
	}
	for (size_t i = 0; i < view->ntaints; i++) {
		n->taints[i].key = strdup(view->taints[i].key ? view->taints[i].key : "");
		n->taints[i].value = strdup(view->taints[i].value ? view->taints[i].value : "");
		n->taints[i].effect = view->taints[i].effect;
		n->ntaints++;
		if (!n->taints[i].key || !n->taints[i].value)
			return -ENOMEM;
	}
	memcpy(n->alloc, alloc, sizeof(alloc));
	n->unschedulable = view->unschedulable;
	n->removed = false;
	return 0;
}

int sc_snapshot_set_node(struct sc_snapshot *snap, const struct pk_node *view)
{
	struct sc_node *n = sc_snapshot_node(snap, view->meta.name);
	int r = -ENOMEM;

	if (snap->nlog)
		return -EBUSY;
	sc_snapshot_drop_parts(snap);
	sc_snapshot_drop_blocks(snap);
	if (n) {
		node_clear(snap, n);
		r = node_fill(snap, n, view);
		return r;
	}
	if (snap->nnodes == snap->cap) {
		size_t cap = snap->cap ? snap->cap * 2 : 64;
		struct sc_node **v = realloc(snap->nodes, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		snap->nodes = v;
		snap->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->name = strdup(view->meta.name ? view->meta.name : "");
	n->index = (int)snap->nnodes;
	if (!n->name || (r = node_fill(snap, n, view)) < 0 ||
	    (r = pk_map_put(&snap->node_by_name, n->name, n)) < 0) {
		node_clear(snap, n);
		free(n->name);
		free(n);
		return r < 0 ? r : -ENOMEM;
	}
	snap->nodes[snap->nnodes++] = n;
	return 0;
}

int sc_snapshot_remove_node(struct sc_snapshot *snap, const char *name)
{
	struct sc_node *n = sc_snapshot_node(snap, name);

	if (!n)
		return -ENOENT;
	if (snap->nlog)
		return -EBUSY;
	sc_snapshot_drop_parts(snap);
	sc_snapshot_drop_blocks(snap);
	n->removed = true; /* the index stays; pods bound to it keep their usage */
	return 0;
}

/* Natural order, so that rack-2 comes before rack-10. */
static int cmp_str(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static struct sc_part *part_build(struct sc_snapshot *snap, const char *key)
{
	struct sc_part *p = calloc(1, sizeof(*p));
	char **vals = NULL;
	size_t nvals = 0;

	if (!p)
		return NULL;
	p->key = strdup(key);
	p->node_dom = malloc((snap->nnodes + 1) * sizeof(int));
	vals = malloc((snap->nnodes + 1) * sizeof(char *));
	if (!p->key || !p->node_dom || !vals)
		goto fail;
	for (size_t i = 0; i < snap->nnodes; i++) {
		const char *v = snap->nodes[i]->removed ? NULL : sc_node_label(snap->nodes[i], key);

		if (v)
			vals[nvals++] = (char *)v;
	}
	qsort(vals, nvals, sizeof(char *), cmp_str);
	p->values = malloc((nvals + 1) * sizeof(char *));
	if (!p->values)
		goto fail;
	for (size_t i = 0; i < nvals; i++) {
		if (p->ndom && strcmp(p->values[p->ndom - 1], vals[i]) == 0)
			continue;
		p->values[p->ndom] = strdup(vals[i]);
		if (!p->values[p->ndom])
			goto fail;
		p->ndom++;
	}
	p->free = calloc((size_t)p->ndom + 1, sizeof(*p->free));
	p->dom_size = calloc((size_t)p->ndom + 1, sizeof(int));
	p->used_pods = calloc((size_t)p->ndom + 1, sizeof(int64_t));
	p->scratch = calloc((size_t)p->ndom + 1, sizeof(int));
	if (!p->free || !p->dom_size || !p->used_pods || !p->scratch)
		goto fail;
	for (size_t i = 0; i < snap->nnodes; i++) {
		struct sc_node *n = snap->nodes[i];
		const char *v = n->removed ? NULL : sc_node_label(n, key);
		char **hit =
		    v ? bsearch(&v, p->values, (size_t)p->ndom, sizeof(char *), cmp_str) : NULL;

		p->node_dom[i] = hit ? (int)(hit - p->values) : -1;
		if (hit)
			p->dom_size[p->node_dom[i]]++;
		if (hit) {
			p->used_pods[p->node_dom[i]] =
			    sc_add(p->used_pods[p->node_dom[i]], n->used[SC_RES_PODS]);
			for (int r = 0; r < SC_MAX_RES; r++)
				p->free[p->node_dom[i]][r] = sc_add(
				    p->free[p->node_dom[i]][r], sc_sub(n->alloc[r], n->used[r]));
		}
	}
	/* The live nodes by domain, for whole-cluster scopes: every domain has one. */
	{
		struct sc_buckets b;

		if (sc_part_sort(p, NULL, snap->nnodes, &b) < 0)
			goto fail;
		p->start = b.start;
		p->order = b.order;
		free(b.dom);
		if (b.nd != p->ndom)
			goto fail;
	}
	free(vals);
	return p;
fail:
	free(vals);
	part_free(p);
	return NULL;
}

struct sc_part *sc_snapshot_part(struct sc_snapshot *snap, const char *key)
{
	struct sc_part **v, *p;

	for (size_t i = 0; i < snap->nparts; i++)
		if (strcmp(snap->parts[i]->key, key) == 0)
			return snap->parts[i];
	p = part_build(snap, key);
	if (!p)
		return NULL;
	v = realloc(snap->parts, (snap->nparts + 1) * sizeof(*v));
	if (!v) {
		part_free(p);
		return NULL;
	}
	snap->parts = v;
	snap->parts[snap->nparts++] = p;
	return p;
}

/* Recompute tree node i of part's index from its children; true if it changed. */
static bool tree_pull(struct sc_part *p, int i)
{
	int64_t *o = sc_tmin(p, i);
	const int64_t *l = sc_tmin(p, 2 * i), *h = sc_tmin(p, 2 * i + 1);
	int t = p->tres;
	bool changed = false;

	for (int r = 0; r < t; r++) {
		int64_t mn = l[r] < h[r] ? l[r] : h[r];
		int64_t mx = l[t + r] > h[t + r] ? l[t + r] : h[t + r];
		int64_t ps = l[2 * t + r] < h[2 * t + r] ? l[2 * t + r] : h[2 * t + r];

		changed |= o[r] != mn || o[t + r] != mx || o[2 * t + r] != ps;
		o[r] = mn;
		o[t + r] = mx;
		o[2 * t + r] = ps;
	}
	return changed;
}

static void tree_leaf(struct sc_part *p, int d)
{
	int64_t *o = sc_tmin(p, p->tleaves + d);
	int t = p->tres;

	for (int r = 0; r < t; r++) {
		int64_t v = d < p->ndom ? p->free[d][r] : 0;

		o[r] = d < p->ndom ? v : INT64_MAX;
		o[t + r] = d < p->ndom ? v : INT64_MIN;
		o[2 * t + r] = v > 0 ? v : INT64_MAX;
	}
}

/* Domain d's free capacity changed: refresh its leaf and the path up. */
static void tree_update(struct sc_part *p, int d)
{
	tree_leaf(p, d);
	/* Ancestors depend only on their children: stop where nothing changed. */
	for (int i = (p->tleaves + d) / 2; i >= 1 && tree_pull(p, i); i /= 2)
		;
}

int sc_part_index(const struct sc_snapshot *snap, struct sc_part *p)
{
	int leaves = 1, nres = snap->nres > 0 ? snap->nres : 1;

	if (p->tree && p->tres == nres) {
		for (int k = 0; k < p->ntd; k++) {
			int d = p->tdlist[k];

			p->tdirty[d] = 0;
			tree_update(p, d);
		}
		p->ntd = 0;
		return 0;
	}
	while (leaves < p->ndom)
		leaves *= 2;
	free(p->tree);
	p->tleaves = p->tres = 0;
	p->tree = calloc((size_t)(2 * leaves) * 3 * (size_t)nres, sizeof(int64_t));
	if (!p->tdirty)
		p->tdirty = calloc((size_t)p->ndom + 1, 1);
	if (!p->tdlist)
		p->tdlist = malloc(((size_t)p->ndom + 1) * sizeof(int));
	if (!p->tree || !p->tdirty || !p->tdlist) {
		free(p->tree);
		p->tree = NULL;
		return -ENOMEM;
	}
	for (int k = 0; k < p->ntd; k++)
		p->tdirty[p->tdlist[k]] = 0;
	p->ntd = 0;
	p->tleaves = leaves;
	p->tres = nres;
	for (int d = 0; d < leaves; d++)
		tree_leaf(p, d);
	for (int i = leaves - 1; i >= 1; i--)
		tree_pull(p, i);
	return 0;
}

/* ---- the node capacity index ------------------------------------------------ */

void sc_snapshot_drop_blocks(struct sc_snapshot *snap)
{
	free(snap->bmax);
	free(snap->smax);
	free(snap->bdirty);
	snap->bmax = NULL;
	snap->smax = NULL;
	snap->bdirty = NULL;
	snap->nblocks = 0;
	snap->free_sum_valid = false;
}

/* What node n has free of resource r, for the index: -1 when it fits nothing. */
static int64_t node_free(const struct sc_node *n, int r)
{
	return n->used[r] < 0 ? -1 : sc_sub(n->alloc[r], n->used[r]);
}

/* What node n has free of resource r toward the cluster's sum: never below 0. */
static int64_t node_free_pos(const struct sc_node *n, int r)
{
	int64_t f = node_free(n, r);

	return f > 0 ? f : 0;
}

__int128 sc_snapshot_free_sum_make(struct sc_snapshot *snap, int r)
{
	if (!snap->free_sum_valid) {
		memset(snap->free_sum, 0, sizeof(snap->free_sum));
		for (size_t i = 0; i < snap->nnodes; i++)
			for (int k = 0; k < snap->nres; k++)
				snap->free_sum[k] += node_free_pos(snap->nodes[i], k);
		snap->free_sum_valid = true;
	}
	return r >= 0 && r < SC_MAX_RES ? snap->free_sum[r] : 0;
}

static void block_refresh(struct sc_snapshot *snap, size_t b)
{
	size_t lo = b * SC_NODE_BLOCK, hi = lo + SC_NODE_BLOCK;
	int64_t *mx = snap->bmax[b];

	if (hi > snap->nnodes)
		hi = snap->nnodes;
	for (int r = 0; r < snap->bnres; r++)
		mx[r] = INT64_MIN;
	for (size_t i = lo; i < hi; i++)
		for (int r = 0; r < snap->bnres; r++) {
			int64_t v = node_free(snap->nodes[i], r);

			if (v > mx[r])
				mx[r] = v;
		}
	snap->bdirty[b] = 0;
}

/* Group g's bound from its blocks' maxima (dirty ones refreshed first). */
static void super_refresh(struct sc_snapshot *snap, size_t g)
{
	size_t lo = g * SC_NODE_SUPER, hi = lo + SC_NODE_SUPER;

	if (hi > snap->nblocks)
		hi = snap->nblocks;
	for (int r = 0; r < snap->bnres; r++)
		snap->smax[g][r] = INT64_MIN;
	for (size_t b = lo; b < hi; b++) {
		if (snap->bdirty[b])
			block_refresh(snap, b);
		for (int r = 0; r < snap->bnres; r++)
			if (snap->bmax[b][r] > snap->smax[g][r])
				snap->smax[g][r] = snap->bmax[b][r];
	}
}

int sc_snapshot_blocks(struct sc_snapshot *snap)
{
	size_t nb = (snap->nnodes + SC_NODE_BLOCK - 1) / SC_NODE_BLOCK;
	size_t ng = (nb + SC_NODE_SUPER - 1) / SC_NODE_SUPER;

	if (snap->nblocks && snap->bnres == snap->nres)
		return 0;
	sc_snapshot_drop_blocks(snap);
	if (!nb)
		return 0;
	snap->bmax = malloc(nb * sizeof(*snap->bmax));
	snap->smax = malloc(ng * sizeof(*snap->smax));
	snap->bdirty = malloc(nb);
	if (!snap->bmax || !snap->smax || !snap->bdirty) {
		sc_snapshot_drop_blocks(snap);
		return -ENOMEM;
	}
	snap->nblocks = nb;
	snap->bnres = snap->nres;
	for (size_t b = 0; b < nb; b++)
		block_refresh(snap, b);
	for (size_t g = 0; g < ng; g++)
		super_refresh(snap, g);
	return 0;
}

static bool holds(const int64_t *mx, const struct sc_pod *pod, const int *rr, int nrr)
{
	for (int j = 0; j < nrr; j++)
		if (mx[rr[j]] < pod->req[rr[j]])
			return false;
	return true;
}

size_t sc_next_block(struct sc_snapshot *snap, size_t b, const struct sc_pod *pod, const int *rr,
		     int nrr)
{
	while (b < snap->nblocks) {
		size_t g = b / SC_NODE_SUPER, end = (g + 1) * SC_NODE_SUPER;
		bool whole = b % SC_NODE_SUPER == 0;

		if (end > snap->nblocks)
			end = snap->nblocks;
		if (!holds(snap->smax[g], pod, rr, nrr)) {
			b = end;
			continue;
		}
		for (; b < end; b++) {
			if (snap->bdirty[b])
				block_refresh(snap, b);
			if (holds(snap->bmax[b], pod, rr, nrr))
				return b;
		}
		if (whole) /* no block of the group holds the pod: its bound was loose */
			super_refresh(snap, g);
	}
	return snap->nblocks;
}

/* Add sign * pod's requests to a node's usage and its domains' free space. */
/* ---- shares of devices (sched-snapshot.h: struct sc_devs) ---------------------------- */

/* An extended resource: a name with a domain ("nvidia.com/gpu"). */
static bool res_is_device(const struct sc_snapshot *snap, int r)
{
	return r > 0 && snap->res_name[r] && strchr(snap->res_name[r], '/');
}

const struct sc_devs *sc_node_devs(const struct sc_node *n, int r)
{
	for (int i = 0; i < n->ndevs; i++)
		if (n->devs[i].res == r)
			return &n->devs[i];
	return NULL;
}

int sc_devs_untouched(const struct sc_devs *d)
{
	int u = -d->whole;

	for (int i = 0; i < d->n; i++)
		u += d->free[i] == 1000;
	return u;
}

int sc_devs_pick(const int64_t *free_, int n, int untouched, int64_t f)
{
	int best = -1;

	for (int i = 0; i < n; i++)
		if (free_[i] >= f && free_[i] < 1000 && (best < 0 || free_[i] < free_[best]))
			best = i;
	for (int i = 0; best < 0 && untouched > 0 && i < n; i++)
		if (free_[i] == 1000)
			best = i;
	return best;
}

bool sc_devices_fit(const struct sc_snapshot *snap, const struct sc_pod *pod,
		    const struct sc_node *n)
{
	for (int i = 0; i < n->ndevs; i++) {
		const struct sc_devs *d = &n->devs[i];
		int64_t q = d->res < snap->nres ? pod->req[d->res] : 0, f = q % 1000;
		int u, k = (int)(q / 1000);

		if (q <= 0)
			continue;
		u = sc_devs_untouched(d);
		if (u < k || (f && u < k + 1 && sc_devs_pick(d->free, d->n, 0, f) < 0))
			return false;
	}
	return true;
}

/* The node's ledger of r, made at the first share (whole devices taken so far), or NULL. */
static struct sc_devs *devs_for(struct sc_node *n, int r)
{
	struct sc_devs *v, *d = (struct sc_devs *)sc_node_devs(n, r);
	int64_t ndev = n->alloc[r] / 1000;

	if (d || n->alloc[r] % 1000 || ndev <= 0 || ndev > SC_DEV_MAX || n->used[r] % 1000)
		return d;
	v = realloc(n->devs, (size_t)(n->ndevs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	n->devs = v;
	d = &v[n->ndevs];
	d->free = malloc((size_t)ndev * sizeof(*d->free));
	if (!d->free)
		return NULL; /* ENOMEM: the share is counted with the node's devices together */
	for (int64_t i = 0; i < ndev; i++)
		d->free[i] = 1000;
	d->res = r;
	d->n = (int)ndev;
	d->whole = (int)(n->used[r] / 1000);
	n->ndevs++;
	return d;
}

/* Before usage changes: whole devices and the share of one, on the node's ledgers. */
static void charge_devs(struct sc_snapshot *snap, struct sc_pod *pod, struct sc_node *n, int sign)
{
	for (int r = 1; r < snap->nres; r++) {
		int64_t q = pod->req[r], f = q % 1000;
		struct sc_devs *d;

		if (q <= 0 || !res_is_device(snap, r))
			continue;
		d = f && sign > 0 ? devs_for(n, r) : (struct sc_devs *)sc_node_devs(n, r);
		if (!d)
			continue;
		d->whole += sign * (int)(q / 1000);
		if (!f)
			continue;
		if (sign > 0) {
			int i = sc_devs_pick(d->free, d->n, sc_devs_untouched(d), f);

			for (int j = 0; i < 0 && j < d->n; j++) /* overbooked: the roomiest */
				if (i < 0 || d->free[j] > d->free[i])
					i = j;
			d->free[i] -= f;
			pod->share_dev = i;
		} else if (pod->share_dev >= 0 && pod->share_dev < d->n) {
			d->free[pod->share_dev] += f;
			pod->share_dev = -1;
		}
	}
}

static void charge(struct sc_snapshot *snap, struct sc_pod *pod, int node, int sign)
{
	struct sc_node *n = snap->nodes[node];
	size_t b = (size_t)node / SC_NODE_BLOCK;
	bool track = snap->nblocks && !snap->bdirty[b];
	int64_t before[SC_MAX_RES];

	for (int r = 0; track && r < snap->bnres; r++)
		before[r] = node_free(n, r);
	charge_devs(snap, pod, n, sign);
	for (int r = 0; r < snap->nres; r++) {
		int64_t was = snap->free_sum_valid ? node_free_pos(n, r) : 0;

		n->used[r] =
		    sign > 0 ? sc_add(n->used[r], pod->req[r]) : sc_sub(n->used[r], pod->req[r]);
		if (snap->free_sum_valid)
			snap->free_sum[r] += node_free_pos(n, r) - was;
	}
	/* the block's largest free amounts: a rise is taken (by its group's bound
	 * too), a fall of the largest means the block is recomputed when next asked */
	for (int r = 0; snap->nblocks && r < snap->bnres; r++) {
		int64_t after = node_free(n, r);

		if (after > snap->smax[b / SC_NODE_SUPER][r])
			snap->smax[b / SC_NODE_SUPER][r] = after;
	}
	for (int r = 0; track && r < snap->bnres; r++) {
		int64_t after = node_free(n, r);

		if (after > snap->bmax[b][r]) {
			snap->bmax[b][r] = after;
		} else if (after < before[r] && before[r] == snap->bmax[b][r]) {
			snap->bdirty[b] = 1;
			break;
		}
	}
	for (int i = 0; i < snap->next; i++)
		if (snap->ext[i].state)
			snap->ext[i].ops->charge(snap->ext[i].state, node, sign);
	if (snap->pod_ops)
		snap->pod_ops->charge(snap, pod, node, sign);
	for (size_t i = 0; i < snap->nparts; i++) {
		int d = snap->parts[i]->node_dom[node];

		if (d < 0)
			continue;
		for (int r = 0; r < snap->nres; r++)
			snap->parts[i]->free[d][r] =
			    sign > 0 ? sc_sub(snap->parts[i]->free[d][r], pod->req[r])
				     : sc_add(snap->parts[i]->free[d][r], pod->req[r]);
		snap->parts[i]->used_pods[d] =
		    sign > 0 ? sc_add(snap->parts[i]->used_pods[d], pod->req[SC_RES_PODS])
			     : sc_sub(snap->parts[i]->used_pods[d], pod->req[SC_RES_PODS]);
		if (snap->parts[i]->tree && !snap->parts[i]->tdirty[d]) {
			snap->parts[i]->tdirty[d] = 1;
			snap->parts[i]->tdlist[snap->parts[i]->ntd++] = d;
		}
	}
}

void sc_snapshot_bind(struct sc_snapshot *snap, struct sc_pod *pod, int node)
{
	if (node < 0 || (size_t)node >= snap->nnodes)
		return;
	charge(snap, pod, node, +1);
	pod->node = node;
}

void sc_snapshot_unbind(struct sc_snapshot *snap, struct sc_pod *pod)
{
	if (pod->node >= 0)
		charge(snap, pod, pod->node, -1);
	pod->node = -1;
}

static int log_push(struct sc_snapshot *snap, enum sc_undo_op op, struct sc_pod *pod, int node)
{
	if (snap->nlog == snap->caplog) {
		size_t cap = snap->caplog ? snap->caplog * 2 : 256;
		struct sc_undo *v = realloc(snap->log, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		snap->log = v;
		snap->caplog = cap;
	}
	snap->log[snap->nlog++] = (struct sc_undo){.op = op, .pod = pod, .node = node};
	return 0;
}

int sc_snapshot_assume(struct sc_snapshot *snap, struct sc_pod *pod, int node)
{
	int r;

	if (pod->cycle.assumed >= 0 || pod->node >= 0 || node < 0 || (size_t)node >= snap->nnodes)
		return -EINVAL;
	r = log_push(snap, SC_UNDO_ASSUME, pod, node);
	if (r < 0)
		return r;
	charge(snap, pod, node, +1);
	pod->cycle.assumed = node;
	return 0;
}

int sc_snapshot_assume_removed(struct sc_snapshot *snap, struct sc_pod *pod)
{
	int r;

	if (pod->node < 0 || pod->cycle.sim_removed)
		return -EINVAL;
	r = log_push(snap, SC_UNDO_REMOVE, pod, pod->node);
	if (r < 0)
		return r;
	snap->removing = true;
	charge(snap, pod, pod->node, -1);
	snap->removing = false;
	pod->cycle.sim_removed = true;
	return 0;
}

void sc_snapshot_commit(struct sc_snapshot *snap)
{
	for (size_t i = 0; i < snap->nlog; i++) {
		struct sc_undo *u = &snap->log[i];

		if (u->op == SC_UNDO_ASSUME) {
			u->pod->cycle.assumed = -1;
			u->pod->node = u->node;
		} else {
			charge(snap, u->pod, u->node, +1);
			u->pod->cycle.sim_removed = false;
		}
	}
	snap->nlog = 0;
}

void sc_snapshot_revert(struct sc_snapshot *snap, size_t mark)
{
	while (snap->nlog > mark) {
		struct sc_undo *u = &snap->log[--snap->nlog];

		if (u->op == SC_UNDO_ASSUME) {
			charge(snap, u->pod, u->node, -1);
			u->pod->cycle.assumed = -1;
		} else {
			charge(snap, u->pod, u->node, +1);
			u->pod->cycle.sim_removed = false;
		}
	}
}

/* ---- invariant checker: one step per property ------------------------------- */

struct check {
	const struct sc_snapshot *snap;
	char *why;
	size_t whylen;
};

static int check_fail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check_fail(struct check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->why) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->whylen, fmt, ap);
		va_end(ap);
	}
	return -EUCLEAN;
}

/* Pods are on existing nodes, never bound and assumed at once, none assumed
 * when quiet; what they request is summed per node into used. */
static int check_pods(struct check *c, const struct sc_vec *pods, bool quiet,
		      int64_t (*used)[SC_MAX_RES])
{
	const struct sc_snapshot *snap = c->snap;
	int nn = (int)snap->nnodes;

	if (quiet && snap->nlog)
		return check_fail(c, "%zu assumptions still outstanding", snap->nlog);
	for (size_t i = 0; pods && i < pods->n; i++) {
		const struct sc_pod *p = pods->v[i];

		if (quiet && (p->cycle.assumed >= 0 || p->cycle.sim_removed))
			return check_fail(c, "pod %s still assumed", p->key);
		if (p->node >= nn || p->cycle.assumed >= nn)
			return check_fail(c, "pod %s on node index out of range", p->key);
		if (p->node >= 0 && p->cycle.assumed >= 0)
			return check_fail(c, "pod %s both bound and assumed", p->key);
		for (int r = 0; r < snap->nres; r++) {
			if (p->node >= 0 && !p->cycle.sim_removed)
				used[p->node][r] = sc_add(used[p->node][r], p->req[r]);
			if (p->cycle.assumed >= 0)
				used[p->cycle.assumed][r] =
				    sc_add(used[p->cycle.assumed][r], p->req[r]);
		}
	}
	return 0;
}

/* Nodes sit at their index, are in the name index, and use what their pods sum to. */
static int check_nodes(struct check *c, int64_t (*used)[SC_MAX_RES])
{
	const struct sc_snapshot *snap = c->snap;

	for (size_t i = 0; i < snap->nnodes; i++) {
		const struct sc_node *n = snap->nodes[i];

		if (n->index != (int)i)
			return check_fail(c, "node %s has index %d at %zu", n->name, n->index, i);
		if (pk_map_get(&snap->node_by_name, n->name) != n)
			return check_fail(c, "node %s missing from the name index", n->name);
		for (int r = 0; r < snap->nres; r++)
			if (n->used[r] != used[i][r])
				return check_fail(
				    c, "node %s: %s used %" PRId64 ", pods sum to %" PRId64,
				    n->name, snap->res_name[r], n->used[r], used[i][r]);
	}
	return 0;
}

/* A device ledger's whole devices and parts are what the node's pods took. */
static int check_ledger(struct check *c, const struct sc_vec *pods, const struct sc_node *n,
			const struct sc_devs *d)
{
	int64_t whole = 0, part[SC_DEV_MAX] = {0};

	for (size_t i = 0; pods && i < pods->n; i++) {
		const struct sc_pod *p = pods->v[i];
		int64_t f = p->req[d->res] % 1000;

		if (!((p->node == n->index && !p->cycle.sim_removed) ||
		      p->cycle.assumed == n->index))
			continue;
		whole += p->req[d->res] / 1000;
		if (f && (p->share_dev < 0 || p->share_dev >= d->n))
			return check_fail(c, "pod %s: a share on node %s without a device", p->key,
					  n->name);
		if (f)
			part[p->share_dev] += f;
	}
	if (whole != d->whole)
		return check_fail(c, "node %s: %d devices taken whole, pods take %" PRId64, n->name,
				  d->whole, whole);
	for (int i = 0; i < d->n; i++)
		if (d->free[i] != 1000 - part[i])
			return check_fail(
			    c, "node %s: device %d has %" PRId64 " left, pods leave %" PRId64,
			    n->name, i, d->free[i], 1000 - part[i]);
	return 0;
}

/* A partition's values are sorted and each domain's summaries equal its nodes' sums. */
static int check_part_summaries(struct check *c, const struct sc_part *p)
{
	const struct sc_snapshot *snap = c->snap;

	for (int d = 0; d < p->ndom; d++) {
		int64_t free_[SC_MAX_RES] = {0}, upods = 0;

		if (d && strverscmp(p->values[d - 1], p->values[d]) >= 0)
			return check_fail(c, "partition %s: values not sorted", p->key);
		for (size_t i = 0; i < snap->nnodes; i++) {
			if (p->node_dom[i] != d)
				continue;
			upods = sc_add(upods, snap->nodes[i]->used[SC_RES_PODS]);
			for (int r = 0; r < snap->nres; r++)
				free_[r] = sc_add(free_[r], sc_sub(snap->nodes[i]->alloc[r],
								   snap->nodes[i]->used[r]));
		}
		if (p->scratch[d])
			return check_fail(c, "partition %s=%s: scratch counter left at %d", p->key,
					  p->values[d], p->scratch[d]);
		if (upods != p->used_pods[d])
			return check_fail(
			    c, "partition %s=%s: %" PRId64 " pods used, nodes say %" PRId64, p->key,
			    p->values[d], p->used_pods[d], upods);
		for (int r = 0; r < snap->nres; r++)
			if (free_[r] != p->free[d][r])
				return check_fail(
				    c, "partition %s=%s: free %s %" PRId64 " != %" PRId64, p->key,
				    p->values[d], snap->res_name[r], p->free[d][r], free_[r]);
	}
	return 0;
}

/* The capacity index's dirty list names exactly the dirty domains, once each. */
static int check_part_dirty(struct check *c, const struct sc_part *p)
{
	for (int k = 0; p->tree && k < p->ntd; k++)
		if (p->tdlist[k] < 0 || p->tdlist[k] >= p->ndom || p->tdirty[p->tdlist[k]] != 1)
			return check_fail(c, "partition %s: dirty list entry %d is wrong", p->key,
					  k);
	for (int d = 0, nd = 0; p->tree && d < p->ndom; d++)
		if (p->tdirty[d] && ++nd > p->ntd)
			return check_fail(c, "partition %s: domain %s dirty but not listed", p->key,
					  p->values[d]);
	return 0;
}

/* What node i of the capacity index should hold for resource r (min, max, positive min). */
static bool index_expected(const struct sc_part *p, int i, int r, int64_t ret[3])
{
	if (i >= p->tleaves) {
		int d = i - p->tleaves;
		int64_t v = d < p->ndom ? p->free[d][r] : 0;

		if (d < p->ndom && p->tdirty[d])
			return false; /* refreshed at the next query */
		ret[0] = d < p->ndom ? v : INT64_MAX;
		ret[1] = d < p->ndom ? v : INT64_MIN;
		ret[2] = v > 0 ? v : INT64_MAX;
		return true;
	}
	const int64_t *l = sc_tmin(p, 2 * i), *h = sc_tmin(p, 2 * i + 1);
	int t = p->tres;

	ret[0] = l[r] < h[r] ? l[r] : h[r];
	ret[1] = l[t + r] > h[t + r] ? l[t + r] : h[t + r];
	ret[2] = l[2 * t + r] < h[2 * t + r] ? l[2 * t + r] : h[2 * t + r];
	return true;
}

/* The capacity index: leaves are the summaries (or listed dirty), inner nodes
 * combine their children. */
static int check_part_index(struct check *c, const struct sc_part *p)
{
	for (int i = p->tree ? 2 * p->tleaves - 1 : 0; i >= 1; i--) {
		const int64_t *mn = sc_tmin(p, i), *mx = sc_tmax(p, i), *ps = sc_tpos(p, i);

		for (int r = 0; r < p->tres; r++) {
			int64_t w[3];

			if (!index_expected(p, i, r, w))
				continue;
			if (mn[r] != w[0] || mx[r] != w[1] || ps[r] != w[2])
				return check_fail(
				    c,
				    "partition %s: capacity index node %d, %s: min %" PRId64
				    " max %" PRId64 " positive min %" PRId64 ", expected %" PRId64
				    " %" PRId64 " %" PRId64,
				    p->key, i, c->snap->res_name[r], mn[r], mx[r], ps[r], w[0],
				    w[1], w[2]);
		}
	}
	return 0;
}

/* The node capacity index: a clean block holds its nodes' largest free amounts. */
static int check_blocks(struct check *c)
{
	const struct sc_snapshot *snap = c->snap;

	for (size_t b = 0; b < snap->nblocks; b++) {
		if (snap->bdirty[b])
			continue;
		for (int r = 0; r < snap->bnres; r++) {
			int64_t mx = INT64_MIN;

			for (size_t i = b * SC_NODE_BLOCK;
			     i < snap->nnodes && i < (b + 1) * SC_NODE_BLOCK; i++)
				if (node_free(snap->nodes[i], r) > mx)
					mx = node_free(snap->nodes[i], r);
			if (mx != snap->bmax[b][r])
				return check_fail(c,
						  "node block %zu: largest free %s %" PRId64
						  ", nodes say %" PRId64,
						  b, snap->res_name[r], snap->bmax[b][r], mx);
			if (mx > snap->smax[b / SC_NODE_SUPER][r])
				return check_fail(c,
						  "node block group %zu: bound of free %s %" PRId64
						  " below a node's %" PRId64,
						  b / SC_NODE_SUPER, snap->res_name[r],
						  snap->smax[b / SC_NODE_SUPER][r], mx);
		}
	}
	return 0;
}

int sc_snapshot_check(const struct sc_snapshot *snap, const struct sc_vec *pods, bool quiet,
		      char *why, size_t whylen)
{
	struct check c = {.snap = snap, .why = why, .whylen = whylen};
	int64_t(*used)[SC_MAX_RES] = calloc(snap->nnodes + 1, sizeof(*used));
	int rc;

	if (!used)
		return -ENOMEM;
	rc = check_pods(&c, pods, quiet, used);
	if (rc == 0)
		rc = check_nodes(&c, used);
	free(used);
	for (size_t i = 0; rc == 0 && i < snap->nnodes; i++)
		for (int k = 0; rc == 0 && k < snap->nodes[i]->ndevs; k++)
			rc = check_ledger(&c, pods, snap->nodes[i], &snap->nodes[i]->devs[k]);
	if (rc == 0)
		rc = check_blocks(&c);
	for (size_t k = 0; rc == 0 && k < snap->nparts; k++) {
		rc = check_part_summaries(&c, snap->parts[k]);
		if (rc == 0)
			rc = check_part_dirty(&c, snap->parts[k]);
		if (rc == 0)
			rc = check_part_index(&c, snap->parts[k]);
	}
	for (int i = 0; rc == 0 && i < snap->next; i++)
		if (snap->ext[i].state)
			rc = snap->ext[i].ops->check(snap, snap->ext[i].state, why, whylen);
	if (rc == 0 && snap->pod_ops)
		rc = snap->pod_ops->check(snap, why, whylen);
	return rc;
}

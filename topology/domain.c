/* SPDX-License-Identifier: Apache-2.0 */
/*
 * domain.c — trees of topology domains built from node labels.
 *
 * Nodes are added with their labels; for every level key, outermost first, the
 * node's label value names its domain at that level.  A domain is identified by
 * its parent and its value (as Kueue's TAS does with concatenated level
 * values), so "c3" under two superslices is two domains.  A node without a
 * level's label (or with an empty value) stops there: it belongs to the domains
 * above only.
 *
 * While nodes are added, domains live in first-seen order and a hash table maps
 * (parent, value) to a domain.  topo_domain_tree_build() freezes the tree and
 * renumbers everything densely: the root is 0, then each level in turn, the
 * domains of a level sorted by parent and then first-seen order, so the
 * children of a domain and the domains of a level are contiguous ranges.  Nodes
 * are laid out in depth-first order, which makes the nodes of every domain a
 * contiguous range of one permutation array as well.  Queries are array reads.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/domain_internal.h"

static uint64_t hash_of(int key, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)(unsigned)key;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int strhash_grow(struct strhash *h)
{
	size_t cap = h->cap ? h->cap * 2 : 64;
	struct slot *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		slots[i].val = -1;
	for (size_t i = 0; i < h->cap; i++) {
		struct slot *s = &h->slots[i];
		size_t j;

		if (s->val < 0)
			continue;
		for (j = hash_of(s->key, s->str) & (cap - 1); slots[j].val >= 0; j = (j + 1) & (cap - 1))
			;
		slots[j] = *s;
	}
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	return 0;
}

static int strhash_get(const struct strhash *h, int key, const char *str)
{
	if (!h->cap)
		return -1;
	for (size_t j = hash_of(key, str) & (h->cap - 1); h->slots[j].val >= 0;
	     j = (j + 1) & (h->cap - 1))
		if (h->slots[j].key == key && strcmp(h->slots[j].str, str) == 0)
			return h->slots[j].val;
	return -1;
}

/* Insert when absent; str must outlive the table. */
static int strhash_put(struct strhash *h, int key, const char *str, int val)
{
	size_t j;
	int r;

	if (strhash_get(h, key, str) >= 0)
		return 0;
	if ((h->used + 1) * 2 > h->cap) {
		r = strhash_grow(h);
		if (r < 0)
			return r;
	}
	for (j = hash_of(key, str) & (h->cap - 1); h->slots[j].val >= 0; j = (j + 1) & (h->cap - 1))
		;
	h->slots[j] = (struct slot){.key = key, .str = str, .val = val};
	h->used++;
	return 0;
}

static void strhash_done(struct strhash *h)
{
	free(h->slots);
	*h = (struct strhash){0};
}

static int domain_append(struct topo_domain_tree *t, const char *value, int level, int parent)
{
	if (t->ndom == t->domcap) {
		size_t cap = t->domcap ? t->domcap * 2 : 16;
		struct domain *d = realloc(t->dom, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		t->dom = d;
		t->domcap = cap;
	}
	t->dom[t->ndom] = (struct domain){.level = level, .parent = parent};
	if (value) {
		t->dom[t->ndom].value = strdup(value);
		if (!t->dom[t->ndom].value)
			return -ENOMEM;
	}
	return (int)t->ndom++;
}

struct topo_domain_tree *topo_domain_tree_new(const char *const *level_keys, size_t nlevels)
{
	struct topo_domain_tree *t;

	if (nlevels > DOMAIN_MAX_LEVELS || (nlevels && !level_keys))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->nlevels = nlevels;
	t->keys = calloc(nlevels + 1, sizeof(*t->keys));
	if (!t->keys)
		goto out_free;
	for (size_t i = 0; i < nlevels; i++) {
		if (!level_keys[i])
			goto out_free;
		t->keys[i] = strdup(level_keys[i]);
		if (!t->keys[i])
			goto out_free;
	}
	if (domain_append(t, NULL, -1, -1) < 0)
		goto out_free;
	return t;
out_free:
	topo_domain_tree_free(t);
	return NULL;
}

void topo_domain_tree_free(struct topo_domain_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->keys && i < t->nlevels; i++)
		free(t->keys[i]);
	free(t->keys);
	for (size_t i = 0; i < t->ndom; i++)
		free(t->dom[i].value);
	free(t->dom);
	strhash_done(&t->by_parent);
	strhash_done(&t->by_level);
	free(t->attach);
	free(t->perm);
	free(t->level_start);
	free(t->level_size);
	free(t);
}

static const char *label_of(const char *key, const char *const *keys, const char *const *values,
			    size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keys[i] && strcmp(keys[i], key) == 0)
			return values[i];
	return NULL;
}

static int attach_reserve(struct topo_domain_tree *t, int node_index)
{
	size_t need = (size_t)node_index + 1, cap;
	int *a;

	if (need <= t->nattach)
		return 0;
	cap = t->nattach ? t->nattach : 16;
	while (cap < need)
		cap *= 2;
	a = realloc(t->attach, cap * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = t->nattach; i < cap; i++)
		a[i] = -1;
	t->attach = a;
	t->nattach = cap;
	return 0;
}

int topo_domain_tree_add_node(struct topo_domain_tree *t, int node_index,
			      const char *const *label_keys, const char *const *label_values,
			      size_t nlabels)
{
	int cur = 0, r;

	if (!t || node_index < 0 || node_index >= DOMAIN_MAX_NODES ||
	    (nlabels && (!label_keys || !label_values)))
		return -EINVAL;
	if (t->built)
		return -EBUSY;
	if (t->broken)
		return -EINVAL;
	r = attach_reserve(t, node_index);
	if (r < 0)
		return r;
	if (t->attach[node_index] >= 0)
		return -EEXIST;
	for (size_t l = 0; l < t->nlevels; l++) {
		const char *v = label_of(t->keys[l], label_keys, label_values, nlabels);
		int d;

		if (!v || !*v)
			break;
		d = strhash_get(&t->by_parent, cur, v);
		if (d < 0) {
			d = domain_append(t, v, (int)l, cur);
			if (d < 0)
				return d;
			r = strhash_put(&t->by_parent, cur, t->dom[d].value, d);
			if (r < 0)
				return r;
		}
		cur = d;
	}
	t->attach[node_index] = cur;
	t->nnodes++;
	return 0;
}

/*
 * The new numbering: breadth-first from the root, the children of each domain
 * in first-seen order.  Children lists come from a counting sort by parent.
 */
static int build_order(struct topo_domain_tree *t, int **ret_order, int **ret_newidx)
{
	int *order = malloc(t->ndom * sizeof(int)), *newidx = malloc(t->ndom * sizeof(int));
	int *first = calloc(t->ndom + 1, sizeof(int)), *kids = malloc(t->ndom * sizeof(int));
	size_t n = 0;

	if (!order || !newidx || !first || !kids) {
		free(order);
		free(newidx);
		free(first);
		free(kids);
		return -ENOMEM;
	}
	for (size_t d = 1; d < t->ndom; d++)
		first[t->dom[d].parent + 1]++;
	for (size_t d = 1; d <= t->ndom; d++)
		first[d] += first[d - 1];
	/* first[p] is now where p's children start; fill in first-seen order. */
	for (size_t d = 1; d < t->ndom; d++)
		kids[first[t->dom[d].parent]++] = (int)d;
	/* first[p] now points past p's children, i.e. at p+1's start. */
	order[n++] = 0;
	newidx[0] = 0;
	for (size_t head = 0; head < n; head++) {
		int p = order[head];
		int begin = p ? first[p - 1] : 0;

		for (int k = begin; k < first[p]; k++) {
			newidx[kids[k]] = (int)n;
			order[n++] = kids[k];
		}
	}
	free(first);
	free(kids);
	*ret_order = order;
	*ret_newidx = newidx;
	return 0;
}

/* Depth-first placement of nodes: a domain's own nodes, then its children's. */
static void place_nodes(struct topo_domain_tree *t, int d, int **by_dom, int *by_dom_n, size_t *pos)
{
	struct domain *dm = &t->dom[d];

	dm->node_start = (int)*pos;
	for (int i = 0; i < by_dom_n[d]; i++)
		t->perm[(*pos)++] = by_dom[d][i];
	for (int c = 0; c < dm->child_count; c++)
		place_nodes(t, dm->child_start + c, by_dom, by_dom_n, pos);
	dm->node_count = (int)*pos - dm->node_start;
}

static int build_nodes(struct topo_domain_tree *t)
{
	int **by_dom = calloc(t->ndom, sizeof(*by_dom));
	int *by_dom_n = calloc(t->ndom, sizeof(*by_dom_n));
	int *storage = malloc((t->nnodes + 1) * sizeof(int));
	size_t pos = 0;
	int r = -ENOMEM;

	t->perm = malloc((t->nnodes + 1) * sizeof(int));
	if (!by_dom || !by_dom_n || !storage || !t->perm)
		goto out;
	for (size_t i = 0; i < t->nattach; i++)
		if (t->attach[i] >= 0)
			by_dom_n[t->attach[i]]++;
	for (size_t d = 0; d < t->ndom; d++) {
		by_dom[d] = storage + pos;
		pos += (size_t)by_dom_n[d];
		by_dom_n[d] = 0;
	}
	for (size_t i = 0; i < t->nattach; i++)
		if (t->attach[i] >= 0) {
			int d = t->attach[i];

			by_dom[d][by_dom_n[d]++] = (int)i;
		}
	pos = 0;
	place_nodes(t, 0, by_dom, by_dom_n, &pos);
	r = 0;
out:
	free(by_dom);
	free(by_dom_n);
	free(storage);
	return r;
}

int topo_domain_tree_build(struct topo_domain_tree *t)
{
	struct domain *dom;
	int *order, *newidx, r;

	if (!t)
		return -EINVAL;
	if (t->built)
		return -EBUSY;
	if (t->broken)
		return -EINVAL;
	r = build_order(t, &order, &newidx);
	if (r < 0)
		return r;
	dom = calloc(t->ndom, sizeof(*dom));
	t->level_start = calloc(t->nlevels + 1, sizeof(int));
	t->level_size = calloc(t->nlevels + 1, sizeof(int));
	if (!dom || !t->level_start || !t->level_size) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->ndom; i++) {
		const struct domain *old = &t->dom[order[i]];

		dom[i] = *old;
		dom[i].parent = old->parent < 0 ? -1 : newidx[old->parent];
		dom[i].child_start = 0;
		dom[i].child_count = 0;
	}
	for (size_t i = 0; i < t->ndom; i++) {
		int p = dom[i].parent;

		if (p >= 0) {
			if (dom[p].child_count++ == 0)
				dom[p].child_start = (int)i;
		}
		if (dom[i].level >= 0) {
			if (t->level_size[dom[i].level]++ == 0)
				t->level_start[dom[i].level] = (int)i;
		}
	}
	for (size_t i = 0; i < t->nattach; i++)
		if (t->attach[i] >= 0)
			t->attach[i] = newidx[t->attach[i]];
	free(t->dom); /* values moved into dom */
	t->dom = dom;
	t->domcap = t->ndom;
	dom = NULL;
	strhash_done(&t->by_parent);
	for (size_t i = 1; i < t->ndom; i++) {
		r = strhash_put(&t->by_level, t->dom[i].level, t->dom[i].value, (int)i);
		if (r < 0)
			goto out;
	}
	r = build_nodes(t);
	if (r < 0)
		goto out;
	t->built = true;
#ifndef NDEBUG
	/* Debug builds verify every tree they freeze (hwloc_topology_check). */
	if (topo_domain_tree_check(t, NULL, 0) < 0) {
		t->built = false;
		r = -EUCLEAN;
	}
#endif
out:
	if (r < 0)
		t->broken = true;
	free(dom);
	free(order);
	free(newidx);
	return r;
}

/* ---- queries ---------------------------------------------------------------- */

static bool dom_ok(const struct topo_domain_tree *t, int d)
{
	return t && t->built && d >= 0 && (size_t)d < t->ndom;
}

size_t topo_domain_count(const struct topo_domain_tree *t)
{
	return t && t->built ? t->ndom : 0;
}

size_t topo_domain_level_count(const struct topo_domain_tree *t)
{
	return t ? t->nlevels : 0;
}

int topo_domain_level(const struct topo_domain_tree *t, int d)
{
	return dom_ok(t, d) ? t->dom[d].level : -1;
}

const char *topo_domain_value(const struct topo_domain_tree *t, int d)
{
	return dom_ok(t, d) ? t->dom[d].value : NULL;
}

int topo_domain_parent(const struct topo_domain_tree *t, int d)
{
	return dom_ok(t, d) ? t->dom[d].parent : -1;
}

size_t topo_domain_child_count(const struct topo_domain_tree *t, int d)
{
	return dom_ok(t, d) ? (size_t)t->dom[d].child_count : 0;
}

int topo_domain_child(const struct topo_domain_tree *t, int d, size_t i)
{
	if (!dom_ok(t, d) || i >= (size_t)t->dom[d].child_count)
		return -1;
	return t->dom[d].child_start + (int)i;
}

size_t topo_domain_level_size(const struct topo_domain_tree *t, int level)
{
	if (!t || !t->built || level < 0 || (size_t)level >= t->nlevels)
		return 0;
	return (size_t)t->level_size[level];
}

int topo_domain_level_domain(const struct topo_domain_tree *t, int level, size_t i)
{
	if (i >= topo_domain_level_size(t, level))
		return -1;
	return t->level_start[level] + (int)i;
}

size_t topo_domain_node_count(const struct topo_domain_tree *t, int d)
{
	return dom_ok(t, d) ? (size_t)t->dom[d].node_count : 0;
}

int topo_domain_node(const struct topo_domain_tree *t, int d, size_t i)
{
	if (!dom_ok(t, d) || i >= (size_t)t->dom[d].node_count)
		return -1;
	return t->perm[t->dom[d].node_start + (int)i];
}

int topo_domain_node_domain(const struct topo_domain_tree *t, int node_index, int level)
{
	int d;

	if (!t || !t->built || node_index < 0 || (size_t)node_index >= t->nattach || level < 0 ||
	    (size_t)level >= t->nlevels)
		return -1;
	d = t->attach[node_index];
	if (d < 0)
		return -1;
	while (d > 0 && t->dom[d].level > level)
		d = t->dom[d].parent;
	return d > 0 && t->dom[d].level == level ? d : -1;
}

int topo_domain_find(const struct topo_domain_tree *t, int level, const char *value)
{
	if (!t || !t->built || !value || level < 0 || (size_t)level >= t->nlevels)
		return -1;
	return strhash_get(&t->by_level, level, value);
}

/* ---- invariant checker ---------------------------------------------------------- */

static int fail(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EUCLEAN;
}

static int check_domain(const struct topo_domain_tree *t, int d, char *why, size_t whylen)
{
	const struct domain *dm = &t->dom[d];
	int nodes = 0, own = 0;

	if (d == 0 && (dm->level != -1 || dm->parent != -1 || dm->value))
		return fail(why, whylen, "domain 0 is not the root");
	if (d > 0) {
		if (dm->parent < 0 || dm->parent >= d)
			return fail(why, whylen, "domain %d: parent %d is not before it", d,
				    dm->parent);
		if (t->dom[dm->parent].level != dm->level - 1)
			return fail(why, whylen, "domain %d: level %d under level %d", d,
				    dm->level, t->dom[dm->parent].level);
		if (!dm->value || !*dm->value)
			return fail(why, whylen, "domain %d: empty value", d);
		if (d < t->level_start[dm->level] ||
		    d >= t->level_start[dm->level] + t->level_size[dm->level])
			return fail(why, whylen, "domain %d: outside the range of level %d", d,
				    dm->level);
		if (topo_domain_find(t, dm->level, dm->value) < 0)
			return fail(why, whylen, "domain %d: value '%s' not found", d, dm->value);
	}
	for (int c = 0; c < dm->child_count; c++) {
		const struct domain *ch = &t->dom[dm->child_start + c];

		if (ch->parent != d)
			return fail(why, whylen, "domain %d: child %d has parent %d", d,
				    dm->child_start + c, ch->parent);
		for (int e = 0; e < c; e++)
			if (strcmp(t->dom[dm->child_start + e].value, ch->value) == 0)
				return fail(why, whylen, "domain %d: two children named '%s'", d,
					    ch->value);
		nodes += ch->node_count;
	}
	for (int i = 0; i < dm->node_count; i++) {
		int node = t->perm[dm->node_start + i];

		if (t->attach[node] == d)
			own++;
	}
	if (nodes + own != dm->node_count)
		return fail(why, whylen, "domain %d: %d nodes, children and own nodes hold %d", d,
			    dm->node_count, nodes + own);
	return 0;
}

int topo_domain_tree_check(const struct topo_domain_tree *t, char *why, size_t whylen)
{
	size_t total = 0, seen = 0;
	int *pos, r = 0;

	if (!t)
		return fail(why, whylen, "no tree");
	if (!t->built)
		return 0; /* nothing is numbered before build */
	for (size_t l = 0; l < t->nlevels; l++)
		total += (size_t)t->level_size[l];
	if (total + 1 != t->ndom)
		return fail(why, whylen, "levels hold %zu domains, tree has %zu", total + 1,
			    t->ndom);
	for (size_t d = 0; d < t->ndom; d++) {
		r = check_domain(t, (int)d, why, whylen);
		if (r < 0)
			return r;
	}
	if ((size_t)t->dom[0].node_count != t->nnodes)
		return fail(why, whylen, "root holds %d nodes, %zu were added",
			    t->dom[0].node_count, t->nnodes);
	/* Position of every node in the permutation, to test range membership. */
	pos = malloc((t->nattach + 1) * sizeof(int));
	if (!pos)
		return -ENOMEM;
	for (size_t i = 0; i < t->nattach; i++)
		pos[i] = -1;
	for (size_t k = 0; k < t->nnodes; k++) {
		int node = t->perm[k];

		if (node < 0 || (size_t)node >= t->nattach || pos[node] >= 0 || t->attach[node] < 0) {
			r = fail(why, whylen, "node order: entry %zu (%d) is not an added node", k,
				 node);
			goto out;
		}
		pos[node] = (int)k;
	}
	for (size_t i = 0; i < t->nattach; i++) {
		int d = t->attach[i];

		if (d < 0)
			continue;
		seen++;
		if ((size_t)d >= t->ndom) {
			r = fail(why, whylen, "node %zu: domain %d out of range", i, d);
			goto out;
		}
		/* The node must lie in the node range of every ancestor. */
		for (int a = d; a >= 0; a = t->dom[a].parent)
			if (pos[i] < t->dom[a].node_start ||
			    pos[i] >= t->dom[a].node_start + t->dom[a].node_count) {
				r = fail(why, whylen, "node %zu: missing from domain %d", i, a);
				goto out;
			}
	}
	if (seen != t->nnodes)
		r = fail(why, whylen, "%zu nodes placed, %zu were added", seen, t->nnodes);
out:
	free(pos);
	return r;
}

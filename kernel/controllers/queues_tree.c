/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_tree.c — quota shared in a cohort tree, as Kueue's hierarchical
 * cohorts share it: ClusterQueues are the leaves, Cohorts the inner nodes
 * (a ClusterQueue's spec.cohortName, a Cohort's spec.parentName; a name no
 * Cohort object carries is a Cohort with no quota of its own).
 *
 * Per node and (flavor, resource): its nominal quota, and optionally a
 * borrowingLimit and a lendingLimit.  Computed bottom up once per pass:
 *   subtree(n)    = nominal(n) + sum over children c of (subtree(c) - guaranteed(c))
 *   guaranteed(n) = max(0, subtree(n) - lendingLimit(n)), 0 without a lending limit
 * The guaranteed part is what a node never lends; the rest is its parent's
 * to share.  Usage goes up the same way: a child's usage counts in its
 * parent only where it exceeds the child's guaranteed part.  What a
 * ClusterQueue can still take, available(cq):
 *   root:   subtree - usage
 *   else:   max(0, guaranteed - usage) + min(available(parent),
 *                 subtree - guaranteed - max(0, usage - guaranteed) + borrowingLimit)
 * (the min only with a borrowing limit).  Without a cohort this is
 * nominal - usage, the nominal-quota rule.  A Cohort whose parents come back
 * to it is a cycle: its ClusterQueues admit nothing until it is broken.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/controllers-internal.h"
#include "topology/topology.h"

#define Q_TREE_MAX_DEPTH 32

struct q_tree {
	json_t *cqs, *cohorts; /* borrowed: name -> object */
	json_t *quota;	       /* node -> flavor -> resource -> subtree quota (milli) */
	json_t *usage;	       /* node -> flavor -> resource -> usage (milli) */
	json_t *parent;	       /* node -> parent node ("c/NAME"), absent at a root */
	json_t *cycle;	       /* node -> true: in or under a cycle of Cohorts */
};

/* Node keys: "q/NAME" for a ClusterQueue, "c/NAME" for a Cohort. */
static void node_key(char *buf, size_t n, bool cohort, const char *name)
{
	size_t len = strlen(name);

	if (len + 3 > n) {
		snprintf(buf, n, "%s/%s", cohort ? "c" : "q", name);
		return;
	}
	buf[0] = cohort ? 'c' : 'q';
	buf[1] = '/';
	memcpy(buf + 2, name, len + 1);
}

static const json_t *node_obj(const struct q_tree *t, const char *node)
{
	return json_object_get(node[0] == 'c' ? t->cohorts : t->cqs, node + 2);
}

static int64_t at(const json_t *map, const char *node, const char *f, const char *r)
{
	return json_integer_value(
	    json_object_get(json_object_get(json_object_get(map, node), f), r));
}

static void set_at(json_t *map, const char *node, const char *f, const char *r, int64_t v)
{
	json_t *a = json_object_get(map, node), *b;

	if (!a)
		json_object_set_new(map, node, a = json_object());
	b = json_object_get(a, f);
	if (!b)
		json_object_set_new(a, f, b = json_object());
	json_object_set_new(b, r, json_integer(v));
}

/* A quantity written as a string or an integer, in milli-units (-1: absent). */
static int64_t quantity(const json_t *v)
{
	int64_t milli = -1;

	if (json_is_integer(v))
		return json_integer_value(v) * 1000;
	if (json_is_string(v) && topo_quantity_parse(json_string_value(v), &milli) < 0)
		return -1;
	return milli;
}

/* The quota field key ("nominalQuota", "borrowingLimit", "lendingLimit") of (f, r) in obj. */
static int64_t limit(const json_t *obj, const char *f, const char *r, const char *key)
{
	size_t i, k, j;
	json_t *g, *fl, *res;

	CTL_ARRAY_EACH(ctl_at(obj, "spec", "resourceGroups"), i, g)
	CTL_ARRAY_EACH(json_object_get(g, "flavors"), k, fl)
	{
		const char *fn = json_string_value(json_object_get(fl, "name"));

		if (!fn || strcmp(fn, f) != 0)
			continue;
		CTL_ARRAY_EACH(json_object_get(fl, "resources"), j, res)
		{
			const char *rn = json_string_value(json_object_get(res, "name"));

			if (rn && strcmp(rn, r) == 0)
				return quantity(json_object_get(res, key));
		}
	}
	return -1;
}

static int64_t guaranteed(const struct q_tree *t, const char *node, const char *f, const char *r)
{
	int64_t lend = limit(node_obj(t, node), f, r, "lendingLimit");
	int64_t sub = at(t->quota, node, f, r);

	if (lend < 0)
		return 0;
	return sub > lend ? sub - lend : 0;
}

static const char *parent_of(const struct q_tree *t, const char *node)
{
	return json_string_value(json_object_get(t->parent, node));
}

/* Add every (flavor, resource) obj lists at its nominal quota to node's subtree quota. */
static void add_nominal(struct q_tree *t, const char *node, const json_t *obj)
{
	size_t i, k, j;
	json_t *g, *fl, *res;

	CTL_ARRAY_EACH(ctl_at(obj, "spec", "resourceGroups"), i, g)
	CTL_ARRAY_EACH(json_object_get(g, "flavors"), k, fl)
	{
		const char *fn = json_string_value(json_object_get(fl, "name"));

		CTL_ARRAY_EACH(fn ? json_object_get(fl, "resources") : NULL, j, res)
		{
			const char *rn = json_string_value(json_object_get(res, "name"));
			int64_t q = quantity(json_object_get(res, "nominalQuota"));

			if (rn && q > 0)
				set_at(t->quota, node, fn, rn, at(t->quota, node, fn, rn) + q);
		}
	}
}

/* node's parent link, and node marked a cycle when its chain of parents comes back. */
static void link_parent(struct q_tree *t, const char *node, const char *parent_name)
{
	char p[300], cur[300];

	if (!parent_name || !*parent_name)
		return;
	node_key(p, sizeof(p), true, parent_name);
	json_object_set_new(t->parent, node, json_string(p));
	snprintf(cur, sizeof(cur), "%s", p);
	for (int d = 0; d < Q_TREE_MAX_DEPTH; d++) {
		const char *up =
		    ctl_at_string(json_object_get(t->cohorts, cur + 2), "spec", "parentName");

		if (!up || !*up)
			return;
		node_key(cur, sizeof(cur), true, up);
		if (strcmp(cur, node) == 0)
			break;
	}
	json_object_set_new(t->cycle, node, json_true());
}

/*
 * Subtree quotas bottom up: a node's quota is final once all its children
 * gave theirs, so children are summed in order of depth, deepest first.
 */
static int depth_of(const struct q_tree *t, const char *node)
{
	int d = 0;

	for (const char *p = parent_of(t, node); p && d < Q_TREE_MAX_DEPTH; p = parent_of(t, p))
		d++;
	return d;
}

static void sum_up(struct q_tree *t)
{
	for (int d = Q_TREE_MAX_DEPTH; d > 0; d--) {
		const char *node, *f, *r;
		json_t *fm, *v;

		json_object_foreach(t->parent, node, v)
		{
			const char *p = json_string_value(v);

			if (depth_of(t, node) != d || json_object_get(t->cycle, node))
				continue;
			json_object_foreach(json_object_get(t->quota, node), f, fm)
			{
				json_t *q;

				json_object_foreach(fm, r, q)
				{
					int64_t share =
					    json_integer_value(q) - guaranteed(t, node, f, r);

					set_at(t->quota, p, f, r, at(t->quota, p, f, r) + share);
				}
			}
		}
	}
}

int q_tree_new(json_t *cqs, json_t *cohorts, struct q_tree **ret)
{
	struct q_tree *t = calloc(1, sizeof(*t));
	const char *name;
	json_t *o;
	char key[300];

	if (!t)
		return -ENOMEM;
	*t = (struct q_tree){.cqs = cqs,
			     .cohorts = cohorts,
			     .quota = json_object(),
			     .usage = json_object(),
			     .parent = json_object(),
			     .cycle = json_object()};
	if (!t->quota || !t->usage || !t->parent || !t->cycle) {
		q_tree_free(t);
		return -ENOMEM;
	}
	json_object_foreach(cqs, name, o)
	{
		node_key(key, sizeof(key), false, name);
		add_nominal(t, key, o);
		link_parent(t, key, ctl_at_string(o, "spec", "cohortName"));
	}
	json_object_foreach(cohorts, name, o)
	{
		node_key(key, sizeof(key), true, name);
		add_nominal(t, key, o);
		link_parent(t, key, ctl_at_string(o, "spec", "parentName"));
	}
	sum_up(t);
	*ret = t;
	return 0;
}

/*
 * t again for a new pass over cqs and cohorts, whose specs are those t was
 * built of (the queue cache's configuration generation unchanged): the
 * quotas, parents and cycles are kept, the usage starts from nothing.
 */
int q_tree_reuse(struct q_tree *t, json_t *cqs, json_t *cohorts)
{
	t->cqs = cqs;
	t->cohorts = cohorts;
	return json_object_clear(t->usage) == 0 ? 0 : -ENOMEM;
}

bool q_tree_equal(const struct q_tree *a, const struct q_tree *b)
{
	return json_equal(a->quota, b->quota) && json_equal(a->usage, b->usage) &&
	       json_equal(a->parent, b->parent) && json_equal(a->cycle, b->cycle);
}

void q_tree_free(struct q_tree *t)
{
	if (!t)
		return;
	json_decref(t->quota);
	json_decref(t->usage);
	json_decref(t->parent);
	json_decref(t->cycle);
	free(t);
}

static void add_usage(struct q_tree *t, const char *node, const char *f, const char *r,
		      int64_t delta)
{
	for (int d = 0; node && delta && d < Q_TREE_MAX_DEPTH; d++) {
		int64_t old = at(t->usage, node, f, r), now = old + delta;
		int64_t g = guaranteed(t, node, f, r);

		set_at(t->usage, node, f, r, now);
		delta = (now > g ? now - g : 0) - (old > g ? old - g : 0);
		node = json_object_get(t->cycle, node) ? NULL : parent_of(t, node);
	}
}

void q_tree_charge(struct q_tree *t, const char *cq, const char *f, const char *r, int64_t milli)
{
	char key[300];

	node_key(key, sizeof(key), false, cq);
	add_usage(t, key, f, r, milli);
}

static int64_t available(const struct q_tree *t, const char *node, const char *f, const char *r,
			 int depth)
{
	int64_t sub = at(t->quota, node, f, r), use = at(t->usage, node, f, r);
	int64_t g, local, up, borrow;
	const char *p = parent_of(t, node);

	if (!p || depth >= Q_TREE_MAX_DEPTH)
		return sub - use;
	g = guaranteed(t, node, f, r); /* what it keeps from its cohort */
	local = g > use ? g - use : 0;
	up = available(t, p, f, r, depth + 1);
	borrow = limit(node_obj(t, node), f, r, "borrowingLimit");
	if (borrow >= 0) {
		int64_t cap = sub - g - (use > g ? use - g : 0) + borrow;

		up = up < cap ? up : cap;
	}
	return local + (up > 0 ? up : 0);
}

int64_t q_tree_available(const struct q_tree *t, const char *cq, const char *f, const char *r)
{
	char key[300];

	node_key(key, sizeof(key), false, cq);
	return available(t, key, f, r, 0);
}

bool q_tree_in_cycle(const struct q_tree *t, const char *cq, char *why, size_t n)
{
	char key[300];

	node_key(key, sizeof(key), false, cq);
	if (!json_object_get(t->cycle, key))
		return false;
	snprintf(why, n, "the parents of Cohort %s form a cycle",
		 ctl_at_string(json_object_get(t->cqs, cq), "spec", "cohortName"));
	return true;
}

/* The root of a ClusterQueue's tree ("c/NAME"), NULL when it has no cohort. */
static const char *root_of(const struct q_tree *t, const char *cq)
{
	char key[300];
	const char *p, *root = NULL;
	int d = 0;

	node_key(key, sizeof(key), false, cq);
	for (p = parent_of(t, key); p && d < Q_TREE_MAX_DEPTH; p = parent_of(t, p), d++)
		root = p;
	return root;
}

bool q_tree_same_cohort(const struct q_tree *t, const char *a, const char *b)
{
	const char *ra = root_of(t, a), *rb = root_of(t, b);

	return ra && rb && strcmp(ra, rb) == 0;
}

int64_t q_tree_lendable(const struct q_tree *t, const char *cq, const char *f, const char *r)
{
	const char *root = root_of(t, cq);

	return root ? at(t->quota, root, f, r) : 0;
}

/* How far node reaches down: the longest chain of children under it (Kueue's getNodeHeight). */
static int height_of(const struct q_tree *t, const char *node)
{
	const char *n;
	json_t *v;
	int h = 0;

	json_object_foreach(t->parent, n, v)
	{
		int d = 1;

		for (const char *p = json_string_value(v); p && d <= Q_TREE_MAX_DEPTH;
		     p = parent_of(t, p), d++)
			if (strcmp(p, node) == 0) {
				h = d > h ? d : h;
				break;
			}
	}
	return h;
}

int q_tree_borrow_height(const struct q_tree *t, const char *cq, const char *f, const char *r,
			 int64_t milli)
{
	char key[300];
	const char *p, *last = NULL;
	int64_t remaining, use;
	int d = 0;

	node_key(key, sizeof(key), false, cq);
	use = at(t->usage, key, f, r);
	if (use + milli <= at(t->quota, key, f, r) || !parent_of(t, key))
		return 0;
	remaining = milli - (guaranteed(t, key, f, r) > use ? guaranteed(t, key, f, r) - use : 0);
	for (p = parent_of(t, key); p && d < Q_TREE_MAX_DEPTH; p = parent_of(t, p), d++) {
		int64_t g = guaranteed(t, p, f, r), u = at(t->usage, p, f, r);

		if (u + remaining <= at(t->quota, p, f, r))
			return height_of(t, p);
		remaining -= g > u ? g - u : 0;
		last = p;
	}
	return last ? height_of(t, last) : 0;
}

int64_t q_tree_nominal(const struct q_tree *t, const char *cq, const char *f, const char *r)
{
	int64_t q = limit(json_object_get(t->cqs, cq), f, r, "nominalQuota");

	return q > 0 ? q : 0;
}

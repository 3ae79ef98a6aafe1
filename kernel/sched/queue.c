/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.c — which root is scheduled next, and whether it may be (PreEnqueue).
 *
 * The queue holds only roots: root CompositePodGroups, standalone PodGroups
 * and standalone pods (the forest's roots vector).  A root is eligible when
 * it has pending work, something relevant changed since its last attempt
 * (its own subtree, or for capacity failures the cluster's generation) and
 * its backoff has expired.  Among eligible roots the highest priority wins,
 * then the oldest creationTimestamp (then name), then arrival order.  Scanning the roots
 * keeps the order exact under updates without a re-keyed heap; roots are few
 * compared with pods.
 *
 * Gang admission (sc_group_admissible), before a root enters a cycle, on
 * top of the plugins' PreEnqueue of each pod: a leaf is admissible when its pending or
 * running pods reach minCount; a composite when its admissible children reach
 * minGroupCount.  Basic groups need one pod or one admissible child.  Pods
 * held back by PreEnqueue (scheduling gates) count toward minCount (kube-scheduler's
 * GangScheduling) and the others are placed; a root whose pending pods are
 * all gated waits.  Under the opt-in gated_wait policy
 * (pk_sched_opts.gated_gangs_wait) a gang waits while any member is gated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"

#define SC_DEPTH_MAX 64

static int count_live_pods(const struct sc_group *g)
{
	int n = 0;

	for (size_t i = 0; i < g->pods.n; i++)
		if (!((struct sc_pod *)g->pods.v[i])->deleting)
			n++;
	return n;
}

/*
 * A pending pod with scheduling gates under g that holds g back: any, when
 * g or an ancestor is a gang (a gang waits for every member); in a basic
 * group the gated pod alone waits (it is not pending, sc_pod_pending).
 */
const struct sc_pod *sc_group_gated_pod(const struct sc_group *g, bool gang, int depth)
{
	if (depth > SC_DEPTH_MAX)
		return NULL;
	gang = gang || g->implicit || g->spec.policy == PK_POLICY_GANG;
	for (size_t i = 0; gang && i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (sc_cons_pre_enqueue(p, NULL) && p->node < 0 && !p->node_name && !p->deleting)
			return p;
	}
	for (size_t i = 0; i < g->children.n; i++) {
		const struct sc_pod *p = sc_group_gated_pod(g->children.v[i], gang, depth + 1);

		if (p)
			return p;
	}
	return NULL;
}

static bool gated_pending(const struct sc_pod *p)
{
	return sc_cons_pre_enqueue(p, NULL) && p->node < 0 && !p->node_name && !p->deleting;
}

void sc_group_note_gated(struct sc_group *g, bool wait, int depth)
{
	if (depth > SC_DEPTH_MAX)
		return;
	g->gated_wait = wait;
	g->gated = 0;
	for (size_t i = 0; !wait && i < g->pods.n; i++)
		g->gated += gated_pending(g->pods.v[i]);
	for (size_t i = 0; i < g->children.n; i++)
		sc_group_note_gated(g->children.v[i], wait, depth + 1);
}

/* A pod to place: unbound, not leaving, neither gated nor refused (sc_pod_pending). */
static bool placeable(const struct sc_pod *p)
{
	return p->node < 0 && !p->node_name && !p->deleting && !p->preempted && sc_cons_admits(p);
}

/* Does g's tree have a pod to place (pending, not gated)? */
static bool has_ungated_pending(const struct sc_group *g, int depth)
{
	if (depth > SC_DEPTH_MAX)
		return false;
	for (size_t i = 0; i < g->pods.n; i++)
		if (placeable(g->pods.v[i]))
			return true;
	for (size_t i = 0; i < g->children.n; i++)
		if (has_ungated_pending(g->children.v[i], depth + 1))
			return true;
	return false;
}

/*
 * The gated pod that holds a root back: under the gated_wait policy any
 * gang member's; else one only when nothing else of the root is left to
 * place (a gated standalone pod, a gang whose pending members are all
 * gated).
 */
static const struct sc_pod *root_gated_pod(const struct sc_group *g)
{
	const struct sc_pod *p = sc_group_gated_pod(g, false, 0);

	if (!p && !g->gated_wait) {
		for (size_t i = 0; !p && i < g->pods.n; i++)
			p = gated_pending(g->pods.v[i]) ? g->pods.v[i] : NULL;
		for (size_t i = 0; !p && i < g->children.n; i++)
			p = sc_group_gated_pod(g->children.v[i], true, 1);
	}
	if (!p || g->gated_wait)
		return p;
	return has_ungated_pending(g, 0) ? NULL : p;
}

bool sc_group_admissible(const struct sc_group *g, int depth, struct sc_buf *why)
{
	int have = 0, need;
	const struct sc_pod *gated;

	if (depth > SC_DEPTH_MAX) {
		if (why)
			sc_buf_printf(why, "hierarchy deeper than %d", SC_DEPTH_MAX);
		return false;
	}
	if (!g->present) {
		if (why)
			sc_buf_printf(why, "group %s not found", g->key);
		return false;
	}
	if (depth == 0 && (gated = root_gated_pod(g))) {
		const char *what = "";

		sc_cons_pre_enqueue(gated, &what);
		if (why)
			sc_buf_printf(why, "pod %s %s", gated->key, what);
		return false;
	}
	if (g->implicit)
		return true;
	need = g->spec.policy == PK_POLICY_GANG ? g->spec.min : 1;
	if (!g->composite) {
		have = count_live_pods(g);
		if (have >= need)
			return true;
		if (why)
			sc_buf_printf(why, "PodGroup %s has %d of %s %d pods", g->key, have,
				      g->spec.policy == PK_POLICY_GANG ? "minCount" : "at least",
				      need);
		return false;
	}
	const struct sc_group *first_bad = NULL;

	for (size_t i = 0; i < g->children.n; i++) {
		const struct sc_group *c = g->children.v[i];

		if (sc_group_admissible(c, depth + 1, NULL))
			have++;
		else if (!first_bad)
			first_bad = c;
	}
	if (have >= need)
		return true;
	if (why) {
		sc_buf_printf(
		    why, "CompositePodGroup %s has %d of %s %d admissible child groups", g->key,
		    have, g->spec.policy == PK_POLICY_GANG ? "minGroupCount" : "at least", need);
		if (first_bad) {
			sc_buf_printf(why, " (");
			sc_group_admissible(first_bad, depth + 1, why);
			sc_buf_printf(why, ")");
		}
	}
	return false;
}

static bool class_value(const struct pk_sched *s, const char *name, int32_t *ret)
{
	const int32_t *v = name ? pk_map_get(&s->prio_classes, name) : NULL;

	if (v)
		*ret = *v;
	return v != NULL;
}

int32_t sc_group_priority(const struct pk_sched *s, const struct sc_group *g, bool *ret_explicit)
{
	int32_t v;
	bool expl = true;

	if (g->spec.has_prio)
		v = g->spec.prio;
	else if (g->spec.prio_class && class_value(s, g->spec.prio_class, &v))
		;
	else {
		v = s->default_prio;
		expl =
		    g->spec.prio_class != NULL; /* named but unknown class: 0 like a typo'd pod */
		if (expl)
			v = 0;
	}
	if (ret_explicit)
		*ret_explicit = expl;
	return v;
}

bool sc_pod_explicit_priority(const struct pk_sched *s, const struct sc_pod *pod, int32_t *ret_prio)
{
	int32_t v;

	if (pod->has_prio)
		v = pod->prio;
	else if (!pod->prio_class || !class_value(s, pod->prio_class, &v))
		return false;
	*ret_prio = v;
	return true;
}

int32_t sc_pod_priority(const struct pk_sched *s, const struct sc_pod *pod)
{
	int32_t v;

	if (sc_pod_explicit_priority(s, pod, &v))
		return v;
	/* Bounded: a parent chain may be a cycle (an invalid hierarchy). */
	const struct sc_group *g = pod->group;

	for (int depth = 0; g && depth <= SC_DEPTH_MAX; g = g->parent, depth++) {
		bool expl;

		if (g->implicit)
			break;
		v = sc_group_priority(s, g, &expl);
		if (expl)
			return v;
		if (!g->spec.parent_key)
			break;
	}
	return s->default_prio;
}

static bool max_explicit(const struct pk_sched *s, const struct sc_group *g, int depth,
			 int32_t *best)
{
	bool expl, any = false;
	int32_t v = sc_group_priority(s, g, &expl);

	if (depth > SC_DEPTH_MAX)
		return false;
	if (expl && !g->implicit) {
		*best = v;
		return true;
	}
	for (size_t i = 0; i < g->children.n; i++) {
		int32_t c = 0;

		if (max_explicit(s, g->children.v[i], depth + 1, &c) && (!any || c > *best)) {
			*best = c;
			any = true;
		}
	}
	for (size_t i = 0; i < g->pods.n; i++) {
		int32_t c = sc_pod_priority(s, g->pods.v[i]);

		if (!any || c > *best) {
			*best = c;
			any = true;
		}
	}
	return any;
}

int32_t sc_root_priority(const struct pk_sched *s, const struct sc_group *root)
{
	int32_t v;

	if (max_explicit(s, root, 0, &v))
		return v;
	return s->default_prio;
}

struct ranked {
	struct sc_group *g;
	int32_t prio;
};

/* Negative when a goes first. */
static int rank_cmp(const struct ranked *a, const struct ranked *b)
{
	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->g->spec.creation != b->g->spec.creation)
		return a->g->spec.creation < b->g->spec.creation ? -1 : 1;
	if (a->g->spec.creation != INT64_MIN) {
		int c = strcmp(a->g->key, b->g->key);

		if (c)
			return c;
	}
	return a->g->seq < b->g->seq ? -1 : a->g->seq > b->g->seq;
}

static int rank_qsort(const void *a, const void *b)
{
	return rank_cmp(a, b);
}

static bool has_pending(const struct sc_group *g, int depth)
{
	if (depth > SC_DEPTH_MAX)
		return false;
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (p->node < 0 && !p->node_name && !p->deleting)
			return true;
	}
	for (size_t i = 0; i < g->children.n; i++)
		if (has_pending(g->children.v[i], depth + 1))
			return true;
	return false;
}

/* ---- the heaps ------------------------------------------------------------------- */

/*
 * g's entry in heap h: what the heap orders by, kept in the entry so that a
 * sift reads the heap's array only.  Active: by rank (rank_cmp); backoff: by
 * the end of the backoff, then arrival (backoffs ending at once end
 * together, all placed by rank then: any order).
 */
static struct sc_heap_ent heap_ent(int h, struct sc_group_queue *gq)
{
	struct sc_heap_ent e = {.q = gq};

	if (h == SC_QUEUE_ACTIVE) {
		e.k = -(int64_t)gq->prio_cache;
		e.creation = gq->kept ? gq->tcreation : gq->g->spec.creation;
		e.seq = gq->kept ? gq->tseq : gq->g->seq;
	} else if (h == SC_QUEUE_BACKOFF) {
		e.k = gq->backoff_until;
		e.seq = gq->kept ? gq->tseq : gq->g->seq;
		e.creation = ++gq->bstamp;
		gq->bkey = e.k;
	}
	return e;
}

/* Does a go before b in heap h? */
static bool heap_before(int h, const struct sc_heap_ent *a, const struct sc_heap_ent *b)
{
	if (a->k != b->k)
		return a->k < b->k;
	if (h == SC_QUEUE_ACTIVE && a->creation != b->creation)
		return a->creation < b->creation;
	if (h == SC_QUEUE_ACTIVE && a->creation != INT64_MIN) {
		int c = strcmp(a->q->g->key, b->q->g->key);

		if (c)
			return c < 0;
	}
	return a->seq < b->seq;
}

static struct sc_heap *heap_of(struct sc_queue *q, int h)
{
	return h == SC_QUEUE_ACTIVE  ? &q->active
	       : h == SC_QUEUE_WAIT  ? &q->waiting
	       : h == SC_QUEUE_DEFER ? &q->deferred
				     : &q->backoff;
}

static bool unordered(int h)
{
	return h == SC_QUEUE_WAIT || h == SC_QUEUE_DEFER;
}

/*
 * The backoff heap keeps no entry's place in the records (a sift writes no record): a root
 * leaving it leaves a stale entry behind (stamped with an older bstamp, or of a root no longer
 * in backoff), dropped when it reaches the top.
 */
static void heap_set(struct sc_heap *hp, int h, size_t i, struct sc_heap_ent e)
{
	hp->v[i] = e;
	if (h != SC_QUEUE_BACKOFF)
		e.q->qpos = (uint32_t)i;
}

/* The heaps are 4-ary: half the levels of a binary heap, so half the records written a sift. */
#define SC_HEAP_ARITY 4

static void sift_up(struct sc_heap *hp, int h, size_t i)
{
	struct sc_heap_ent e = hp->v[i];

	while (i > 0 && heap_before(h, &e, &hp->v[(i - 1) / SC_HEAP_ARITY])) {
		heap_set(hp, h, i, hp->v[(i - 1) / SC_HEAP_ARITY]);
		i = (i - 1) / SC_HEAP_ARITY;
	}
	heap_set(hp, h, i, e);
}

static void sift_down(struct sc_heap *hp, int h, size_t i)
{
	struct sc_heap_ent e = hp->v[i];

	for (;;) {
		size_t c = SC_HEAP_ARITY * i + 1, end = c + SC_HEAP_ARITY;

		if (c >= hp->n)
			break;
		if (end > hp->n)
			end = hp->n;
		for (size_t k = c + 1; k < end; k++)
			if (heap_before(h, &hp->v[k], &hp->v[c]))
				c = k;
		if (!heap_before(h, &hp->v[c], &e))
			break;
		heap_set(hp, h, i, hp->v[c]);
		i = c;
	}
	heap_set(hp, h, i, e);
}

/* g's order in heap h may have moved (a creation time, a backoff): its entry anew. */
static int heap_push_q(struct sc_queue *q, int h, struct sc_group_queue *gq);

static void heap_rekey(struct sc_queue *q, int h, struct sc_group *g)
{
	struct sc_heap *hp = heap_of(q, h);

	if (h == SC_QUEUE_BACKOFF) { /* a new entry, if its end moved */
		if (g->q->backoff_until != g->q->bkey) {
			g->q->bgarbage = true;
			heap_push_q(q, h, g->q);
		}
		return;
	}
	hp->v[g->q->qpos] = heap_ent(h, g->q);
	sift_down(hp, h, g->q->qpos);
	sift_up(hp, h, g->q->qpos);
}

static int heap_push_q(struct sc_queue *q, int h, struct sc_group_queue *gq)
{
	struct sc_heap *hp = heap_of(q, h);

	if (hp->n == hp->cap) {
		size_t cap = hp->cap ? hp->cap * 2 : 64;
		struct sc_heap_ent *v = realloc(hp->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		hp->v = v;
		hp->cap = cap;
	}
	hp->v[hp->n++] = heap_ent(h, gq);
	gq->qheap = (unsigned char)h;
	if (unordered(h))
		gq->qpos = (uint32_t)(hp->n - 1);
	else
		sift_up(hp, h, hp->n - 1);
	return 0;
}

/* ---- the park: a treap per resource in rank order, each subtree's least need ---------- */

/*
 * The treaps link the roots' queue records (struct sc_group_queue), each
 * holding what the order reads (its rank, kept when it entered: prio_cache,
 * tcreation, tseq), so a search touches one record per node.
 */
typedef struct sc_group_queue pnode;

/* The least need in t's subtree. */
static int64_t pmin(const pnode *t)
{
	int64_t m;

	if (!t)
		return INT64_MAX;
	m = t->pneed < t->lmin ? t->pneed : t->lmin;
	return m < t->rmin ? m : t->rmin;
}

/* t's links, each with its subtree's least need (the linked node, just visited, is read). */
static void setl(pnode *t, pnode *x)
{
	t->pl = x;
	t->lmin = pmin(x);
}

static void setr(pnode *t, pnode *x)
{
	t->pr = x;
	t->rmin = pmin(x);
}

/* The treap's priority of a node: a hash of its sequence number (any order will do). */
static uint64_t pprio(const pnode *t)
{
	uint64_t z = t->tseq + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Does a go before b in rank order (rank_cmp on the kept rank)? */
static bool pbefore(const pnode *a, const pnode *b)
{
	if (a->prio_cache != b->prio_cache)
		return a->prio_cache > b->prio_cache;
	if (a->tcreation != b->tcreation)
		return a->tcreation < b->tcreation;
	if (a->tcreation != INT64_MIN) {
		int c = strcmp(a->g->key, b->g->key);

		if (c)
			return c < 0;
	}
	return a->tseq < b->tseq;
}

static pnode *pmerge(pnode *a, pnode *b)
{
	if (!a || !b)
		return a ? a : b;
	if (pprio(a) > pprio(b)) {
		setr(a, pmerge(a->pr, b));
		return a;
	}
	setl(b, pmerge(a, b->pl));
	return b;
}

/* t's nodes before g (*ret_l) and after it (*ret_r) in rank order. */
static void psplit(pnode *t, const pnode *g, pnode **ret_l, pnode **ret_r)
{
	pnode *x;

	if (!t) {
		*ret_l = *ret_r = NULL;
	} else if (pbefore(t, g)) {
		psplit(t->pr, g, &x, ret_r);
		setr(t, x);
		*ret_l = t;
	} else {
		psplit(t->pl, g, ret_l, &x);
		setl(t, x);
		*ret_r = t;
	}
}

static pnode *pinsert(pnode *t, pnode *g)
{
	if (!t || pprio(g) > pprio(t)) {
		pnode *l, *r;

		psplit(t, g, &l, &r);
		setl(g, l);
		setr(g, r);
		return g;
	}
	if (pbefore(g, t))
		setl(t, pinsert(t->pl, g));
	else
		setr(t, pinsert(t->pr, g));
	return t;
}

static pnode *pdelete(pnode *t, const pnode *g)
{
	if (!t)
		return NULL;
	if (t == g)
		return pmerge(t->pl, t->pr);
	if (pbefore(g, t))
		setl(t, pdelete(t->pl, g));
	else
		setr(t, pdelete(t->pr, g));
	return t;
}

/*
 * Does parked root p go before the root of active entry e in rank order (rank_cmp)?  Both
 * ranks are current: a root whose rank changes is touched, which takes it out of the park
 * and re-keys its entry before a pick.
 */
static bool parked_before(const pnode *p, const struct sc_heap_ent *e)
{
	if (p->prio_cache != (int32_t)-e->k)
		return p->prio_cache > (int32_t)-e->k;
	if (p->tcreation != e->creation)
		return p->tcreation < e->creation;
	if (p->tcreation != INT64_MIN) {
		int c = strcmp(p->g->key, e->q->g->key);

		if (c)
			return c < 0;
	}
	return p->tseq < e->seq;
}

/*
 * The first root of treap *root in rank order whose need is at most free_, or NULL; the links
 * down to it into path (*ret_n of them, the last its own; more than SC_PATH_MAX: not all).
 */
static pnode *pfirst(pnode **root, __int128 free_, pnode ***path, int *ret_n)
{
	pnode **link = root, *t = *root;
	int n = 0;

	while (t && (__int128)pmin(t) <= free_) {
		if (n < SC_PATH_MAX)
			path[n] = link;
		n++;
		if ((__int128)t->lmin <= free_) {
			link = &t->pl;
		} else if ((__int128)t->pneed <= free_) {
			*ret_n = n;
			return t;
		} else {
			link = &t->pr;
		}
		t = *link;
	}
	*ret_n = 0;
	return NULL;
}

/* The root at the end of path (n links from its treap's root) leaves: its parents' least needs
 * mended on the way up, as far as they change. */
static void pdelete_path(pnode ***path, int n)
{
	pnode *t = *path[n - 1];

	*path[n - 1] = pmerge(t->pl, t->pr);
	for (int i = n - 2; i >= 0; i--) {
		pnode *a = *path[i];
		int64_t m;

		if (path[i + 1] == &a->pl) {
			if ((m = pmin(a->pl)) == a->lmin)
				break;
			a->lmin = m;
		} else {
			if ((m = pmin(a->pr)) == a->rmin)
				break;
			a->rmin = m;
		}
	}
}

/* t's roots in rank order into v (room for all of them); their count. */
static size_t plist(pnode *t, struct sc_group **v, size_t n)
{
	for (; t; t = t->pr) {
		n = plist(t->pl, v, n);
		v[n++] = t->g;
	}
	return n;
}

/* g enters the treap *t of resource r, its rank kept as it is now. */
static void penter(pnode **t, int r, struct sc_group_queue *gq)
{
	gq->pneed = gq->need[r];
	if (!gq->kept) { /* else unchanged since it last entered (a change touches it) */
		gq->tcreation = gq->g->spec.creation;
		gq->tseq = gq->g->seq;
		gq->kept = true;
	}
	*t = pinsert(*t, gq);
}

/* The root at i leaves heap h. */
static void heap_take(struct sc_queue *q, int h, size_t i)
{
	struct sc_heap *hp = heap_of(q, h);

	if (i != --hp->n) {
		heap_set(hp, h, i, hp->v[hp->n]);
		if (!unordered(h)) {
			sift_down(hp, h, i);
			sift_up(hp, h, i);
		}
	}
}

/* Is backoff entry e its root's live one? */
static bool backoff_live(const struct sc_heap_ent *e)
{
	return e->q->qheap == SC_QUEUE_BACKOFF && e->q->bstamp == (uint32_t)e->creation;
}

/* The backoff heap's top is a live entry, or the heap is empty. */
static void backoff_clean(struct sc_queue *q)
{
	while (q->backoff.n && !backoff_live(&q->backoff.v[0]))
		heap_take(q, SC_QUEUE_BACKOFF, 0);
}

/* Drop gq's stale backoff entries (before its record goes). */
static void backoff_purge(struct sc_queue *q, struct sc_group_queue *gq)
{
	struct sc_heap *hp = &q->backoff;
	size_t n = 0;

	for (size_t i = 0; i < hp->n; i++)
		if (hp->v[i].q != gq || backoff_live(&hp->v[i]))
			hp->v[n++] = hp->v[i];
	hp->n = n;
	for (size_t i = n / SC_HEAP_ARITY + 1; i-- > 0;)
		if (i < n)
			sift_down(hp, SC_QUEUE_BACKOFF, i);
	gq->bgarbage = false;
}

/* The root of record gq leaves its heap or park. */
static void heap_remove_q(struct sc_queue *q, struct sc_group_queue *gq)
{
	int h = gq->qheap;

	if (h == SC_QUEUE_NONE)
		return;
	gq->qheap = SC_QUEUE_NONE;
	if (h == SC_QUEUE_BACKOFF) { /* its entry, stale now, goes when it reaches the top */
		gq->bgarbage = true;
		return;
	}
	if (h < SC_QUEUE_PARK) {
		heap_take(q, h, gq->qpos);
		return;
	}
	if (q->path_node == gq && q->path_ver == q->pver && q->npath <= SC_PATH_MAX)
		pdelete_path(q->path, q->npath); /* found by the pick, nothing moved since */
	else
		q->park[h - SC_QUEUE_PARK] = pdelete(q->park[h - SC_QUEUE_PARK], gq);
	q->pver++;
	if (--q->nparked == 0)
		q->parked_prio = INT32_MIN;
}

static void heap_remove(struct sc_queue *q, struct sc_group *g)
{
	heap_remove_q(q, g->q);
}

void sc_queue_forget(struct sc_queue *q, struct sc_group *g)
{
	if (!g->q)
		return; /* never a root: in no heap, not listed */
	heap_remove(q, g);
	if (g->q->bgarbage)
		backoff_purge(q, g->q);
	if (g->q->qtouched) {
		sc_vec_remove(&q->touched, g);
		g->q->qtouched = false;
	}
}

void sc_queue_touched(struct sc_queue *q, struct sc_group *g)
{
	if (!g->q || g->q->qtouched || sc_vec_push(&q->touched, g) < 0)
		return; /* never a root: nothing to place (roots_add lists it when it is one) */
	g->q->qtouched = true;
}

void sc_queue_fini(struct sc_queue *q)
{
	free(q->active.v);
	free(q->backoff.v);
	free(q->waiting.v);
	free(q->deferred.v);
	free(q->marks);
	sc_vec_free(&q->touched);
	memset(q, 0, sizeof(*q));
}

/* ---- placing roots ------------------------------------------------------------------ */

/*
 * Eligible: a root with work that changed since its last attempt (its own
 * subtree, or for capacity failures the cluster's generation).  Whether it
 * still has pending pods is checked when it comes out of the heap.
 */
static bool eligible_q(const struct pk_sched *s, const struct sc_group_queue *gq)
{
	return gq->is_root && gq->present && !gq->done &&
	       (gq->dirty || (!gq->parked_invalid && s->gen > gq->tried_gen));
}

int64_t sc_backoff_ms(const struct pk_sched *s, int attempts)
{
	int64_t b = s->opts.backoff_initial_ms > 0 ? s->opts.backoff_initial_ms : 1000;
	int64_t max = s->opts.backoff_max_ms > 0 ? s->opts.backoff_max_ms : 10000;

	for (int i = 1; i < attempts && b < max; i++)
		b *= 2;
	return b < max ? b : max;
}

/* ---- queueing hints: failed roots wait for a change that may let them place ---------- */

#define SC_MARKS_MAX ((size_t)1 << 20) /* past this many marks every parked root wakes */

/* The smallest request of each resource over g's pods to place, and their count. */
static void least_requests(const struct sc_group *g, int nres, int depth, int64_t *least, int *n)
{
	if (depth > SC_DEPTH_MAX)
		return;
	for (size_t i = 0; i < g->pods.n; i++) {
		const struct sc_pod *p = g->pods.v[i];

		if (!placeable(p))
			continue;
		for (int r = 0; r < nres; r++)
			if (!*n || p->req[r] < least[r])
				least[r] = p->req[r];
		(*n)++;
	}
	for (size_t i = 0; i < g->children.n; i++)
		least_requests(g->children.v[i], nres, depth + 1, least, n);
}

/*
 * The least root g takes of each resource when it places anything: a gang
 * (a PodGroup root with a minimum) the pods it lacks of its minimum, each at
 * least the smallest request of its pods to place; any other root one such
 * pod.  False when it has no pod to place or lacks none of its minimum.
 */
static bool root_need(const struct pk_sched *s, const struct sc_group *g, int64_t *ret_need)
{
	int64_t least[SC_MAX_RES] = {0}, pods = 1;
	int n = 0, nres = s->snap.nres;

	memset(ret_need, 0, SC_MAX_RES * sizeof(*ret_need));
	least_requests(g, nres, 0, least, &n);
	if (!n)
		return false;
	if (!g->composite && !g->implicit && g->spec.policy == PK_POLICY_GANG) {
		int running = 0; /* bound or binding, leaving ones too: a need never too high */

		for (size_t i = 0; i < g->pods.n; i++) {
			const struct sc_pod *p = g->pods.v[i];

			running += p->node >= 0 || p->node_name;
		}
		/* its minimum, gated members counted toward it (sc_group_min) */
		pods = (int64_t)(g->spec.min > g->gated ? g->spec.min - g->gated : 0) - running;
		if (pods < 1)
			return false;
	}
	for (int r = 0; r < nres; r++)
		ret_need[r] = least[r] > INT64_MAX / pods ? INT64_MAX : least[r] * pods;
	return true;
}

/* A resource of which the cluster has less free in all than the root of record gq needs, or -1. */
static int lacking_q(struct pk_sched *s, const struct sc_group_queue *gq)
{
	for (int r = 0; r < s->snap.nres; r++)
		if ((__int128)gq->need[r] > sc_snapshot_free_sum(&s->snap, r))
			return r;
	return -1;
}

static int lacking(struct pk_sched *s, const struct sc_group *g)
{
	return lacking_q(s, g->q);
}

/*
 * Replay the attempts a parked root would have made before now, each a
 * failure (it was parked only while the cluster had too little free for
 * it): after a change it retries once its backoff is over, so at the later
 * of its backoff's end and the change; its attempts and backoff grow as they
 * would have.
 */
static void replay(struct pk_sched *s, struct sc_group_queue *gq, int64_t now)
{
	struct sc_queue *q = &s->forest.queue;
	uint64_t i = gq->mark_next, end = q->marks_base + q->nmarks;

	if (i < q->marks_base) /* never while it needs them (the marks outlive it) */
		i = q->marks_base;

	for (;;) {
		int64_t at;

		while (i < end && q->marks[i - q->marks_base].gen <= gq->tried_gen)
			i++;
		if (i >= end)
			break;
		at = q->marks[i - q->marks_base].t;
		if (gq->backoff_until > at)
			at = gq->backoff_until;
		if (at >= now)
			break;
		while (i + 1 < end && q->marks[i + 1 - q->marks_base].t <= at)
			i++;
		gq->attempts++;
		gq->backoff_until = at + sc_backoff_ms(s, gq->attempts);
		gq->tried_at = at;
		gq->tried_gen = q->marks[i - q->marks_base].gen;
		i++;
	}
	gq->mark_next = i;
}

void sc_queue_checked(struct pk_sched *s, struct sc_group *g)
{
	g->q->checked_epoch = s->forest.queue.full_epoch;
}

bool sc_queue_cannot_place(struct pk_sched *s, struct sc_group *g)
{
	g->q->need_ok = root_need(s, g, g->q->need);
	return g->q->need_ok && !sc_victim_floor_below(s, g->q->prio_cache) && lacking(s, g) >= 0;
}

static void failed_q(struct pk_sched *s, struct sc_group_queue *gq, int64_t now)
{
	gq->attempts++;
	gq->backoff_until = now + sc_backoff_ms(s, gq->attempts);
	gq->tried_gen = s->gen;
	gq->tried_at = now;
}

void sc_queue_failed(struct pk_sched *s, struct sc_group *g, int64_t now)
{
	failed_q(s, g->q, now);
}

/*
 * Would root g's attempt now fail as its last did?  Unchanged since then (its
 * subtree, and nothing but freed capacity in the cluster: it passes
 * PreEnqueue and validation again), unable to preempt (no bound pod has a
 * lower priority), and the cluster has less free in all of some resource
 * than the least it would take.  Not while tracing: every attempt is told.
 */
static bool fails_unchanged(struct pk_sched *s, const struct sc_group_queue *gq)
{
	return !gq->dirty && gq->need_ok && gq->checked_epoch == s->forest.queue.full_epoch &&
	       !s->opts.explain && !s->opts.trace && !s->opts.stat &&
	       !sc_victim_floor_below(s, gq->prio_cache) && lacking_q(s, gq) >= 0;
}

/* Leave the park, the attempts it missed replayed. */
static void unpark(struct pk_sched *s, struct sc_group_queue *gq, int64_t now)
{
	heap_remove_q(&s->forest.queue, gq);
	replay(s, gq, now);
}

static void park(struct sc_queue *q, int r, struct sc_group_queue *gq)
{
	penter(&q->park[r], r, gq);
	q->pver++;
	gq->qheap = (unsigned char)(SC_QUEUE_PARK + r);
	if (!q->nparked++ || gq->prio_cache > q->parked_prio)
		q->parked_prio = gq->prio_cache;
}

/*
 * A root not eligible until the cluster changes: parked when the cluster has
 * too little free for it and it cannot preempt (no bound pod has a lower
 * priority), else waiting for any change.
 */
static void wait_or_park(struct pk_sched *s, struct sc_group_queue *gq)
{
	struct sc_queue *q = &s->forest.queue;
	int r = -1;

	if (!gq->need_ok)
		gq->need_ok = root_need(s, gq->g, gq->need);
	if (gq->tried_gen == s->gen && gq->need_ok && !sc_victim_floor_below(s, gq->prio_cache))
		r = lacking_q(s, gq);
	if (r < 0) {
		heap_push_q(q, SC_QUEUE_WAIT, gq);
		return;
	}
	if (!q->nparked && !q->deferred.n) { /* no mark is needed before now */
		q->marks_base += q->nmarks;
		q->nmarks = 0;
	}
	gq->mark_next = q->marks_base + q->nmarks;
	park(q, r, gq);
}

/* Not eligible only until the cluster changes (it failed at the current generation). */
static bool waits_for_change(const struct sc_group_queue *gq)
{
	return gq->is_root && gq->present && !gq->done && !gq->dirty && !gq->parked_invalid;
}

/* sc_queue_place of a root's record (its group read only where the record has not what is
 * needed). */
static void place_q(struct pk_sched *s, struct sc_group_queue *gq, int64_t now)
{
	struct sc_queue *q = &s->forest.queue;
	int want;

	if (!gq->is_root) {
		sc_queue_forget(q, gq->g); /* a placeholder or inner group reached by a touch */
		return;
	}
	if (gq->qheap >= SC_QUEUE_PARK) {
		if (!gq->dirty && gq->present && !gq->done && !gq->parked_invalid &&
		    gq->prio_valid && gq->prio_epoch == s->prio_epoch)
			return; /* nothing it waits for happened */
		unpark(s, gq, now);
	}
	if (!gq->prio_valid || gq->prio_epoch != s->prio_epoch) {
		int32_t prio = sc_root_priority(s, gq->g);

		if (gq->qheap == SC_QUEUE_ACTIVE && prio != gq->prio_cache)
			heap_remove_q(q, gq); /* its rank moved */
		gq->prio_cache = prio;
		gq->prio_epoch = s->prio_epoch;
		gq->prio_valid = true;
	}
	want = eligible_q(s, gq)      ? gq->backoff_until > now ? SC_QUEUE_BACKOFF : SC_QUEUE_ACTIVE
	       : waits_for_change(gq) ? SC_QUEUE_WAIT
				      : SC_QUEUE_NONE;
	if (want == gq->qheap) {
		if (want == SC_QUEUE_ACTIVE || want == SC_QUEUE_BACKOFF) {
			/* creation or backoff may have moved */
			heap_rekey(q, want, gq->g);
		}
		return;
	}
	heap_remove_q(q, gq);
	if (want == SC_QUEUE_WAIT)
		wait_or_park(s, gq);
	else if (want != SC_QUEUE_NONE)
		heap_push_q(q, want, gq);
}

void sc_queue_place(struct pk_sched *s, struct sc_group *g, int64_t now)
{
	if (!g->q) {
		sc_queue_forget(&s->forest.queue, g); /* an inner group reached by a touch */
		return;
	}
	place_q(s, g->q, now);
}

/* Note the change the queue sees at now, while roots are parked. */
static void mark(struct sc_queue *q, int64_t now, uint64_t gen)
{
	if (!q->nparked && !q->deferred.n)
		return;
	if (q->nmarks == q->capmarks) {
		size_t cap = q->capmarks ? q->capmarks * 2 : 256;
		struct sc_queue_mark *v = realloc(q->marks, cap * sizeof(*v));

		if (!v) { /* without the mark a replay stops short: wake them all */
			q->started = false;
			return;
		}
		q->marks = v;
		q->capmarks = cap;
	}
	q->marks[q->nmarks++] = (struct sc_queue_mark){now, gen};
}

/* The roots of heap h leave it for sc_queue_place, which puts each where it belongs now. */
static void requeue_all(struct pk_sched *s, int h, int64_t now)
{
	struct sc_heap *hp = heap_of(&s->forest.queue, h), v = *hp;

	*hp = (struct sc_heap){0};
	for (size_t i = 0; i < v.n; i++)
		v.v[i].q->qheap = SC_QUEUE_NONE;
	for (size_t i = 0; i < v.n; i++)
		place_q(s, v.v[i].q, now);
	if (!hp->v) { /* keep the storage */
		hp->v = v.v;
		hp->cap = v.cap;
	} else {
		free(v.v);
	}
}

/* Every parked root wakes, the attempts it missed replayed, and goes where it belongs now. */
static void unpark_all(struct pk_sched *s, int64_t now)
{
	struct sc_queue *q = &s->forest.queue;
	struct sc_group **v = q->nparked ? malloc(q->nparked * sizeof(*v)) : NULL;
	size_t n = 0;

	if (!v)
		return; /* none parked (or no memory: they stay parked) */
	for (int r = 0; r < SC_MAX_RES; r++) {
		n = plist(q->park[r], v, n);
		q->park[r] = NULL;
	}
	q->pver++;
	q->nparked = 0;
	q->parked_prio = INT32_MIN;
	for (size_t i = 0; i < n; i++) { /* every replay before any is parked again */
		v[i]->q->qheap = SC_QUEUE_NONE;
		replay(s, v[i]->q, now);
	}
	for (size_t i = 0; i < n; i++)
		sc_queue_place(s, v[i], now);
	free(v);
}

/*
 * The best parked root in rank order whose need the cluster holds now, or
 * NULL; one that lacks another resource moves to that one's park.
 */
static pnode *parked_first(struct pk_sched *s)
{
	struct sc_queue *q = &s->forest.queue;
	pnode *best = NULL;

	for (int r = 0; r < s->snap.nres && q->nparked; r++) {
		pnode *t;
		int other;

		if (!q->park[r])
			continue;
		pnode **path[SC_PATH_MAX];
		int n;

		while ((t = pfirst(&q->park[r], sc_snapshot_free_sum(&s->snap, r), path, &n)) &&
		       (other = lacking_q(s, t)) >= 0) {
			heap_remove_q(q, t);
			park(q, other, t);
		}
		if (t && (!best || pbefore(t, best))) {
			best = t;
			q->path_node = t;
			q->path_ver = q->pver;
			q->npath = n;
			memcpy(q->path, path,
			       (size_t)(n < SC_PATH_MAX ? n : SC_PATH_MAX) * sizeof(*path));
		}
	}
	return best;
}

/*
 * The round ended: a deferred root the cluster still has room for backs off
 * (its retry, when its backoff ends, may place it), the others park again
 * as they are (that retry would fail: the replay counts it when they wake).
 */
static void settle_deferred(struct pk_sched *s, int64_t now)
{
	struct sc_queue *q = &s->forest.queue;
	struct sc_heap v = q->deferred;

	q->deferred = (struct sc_heap){0};
	for (size_t i = 0; i < v.n; i++) {
		struct sc_group_queue *gq = v.v[i].q;
		int r = gq->dirty ? -1 : lacking_q(s, gq);

		gq->qheap = SC_QUEUE_NONE;
		if (r >= 0 && !sc_victim_floor_below(s, gq->prio_cache))
			park(q, r, gq);
		else
			place_q(s, gq, now);
	}
	v.n = 0;
	if (!q->deferred.v)
		q->deferred = v; /* keep the storage */
	else
		free(v.v);
}

/* Bring the heaps up to date: priority classes, cluster events, touched roots. */
static void queue_refresh(struct pk_sched *s, int64_t now)
{
	struct sc_forest *f = &s->forest;
	struct sc_queue *q = &f->queue;

	if (q->deferred.n) /* a round that ended early */
		settle_deferred(s, now);
	if (q->gen_seen != s->gen)
		mark(q, now, s->gen);
	if (!q->started || q->epoch_seen != s->prio_epoch ||
	    s->gen - q->gen_seen != s->gen_cap - q->cap_seen || q->nmarks >= SC_MARKS_MAX ||
	    (q->nparked && sc_victim_floor_below(s, q->parked_prio))) {
		/* Every root may have changed rank or become eligible: once per event. */
		unpark_all(s, now);
		requeue_all(s, SC_QUEUE_WAIT, now);
		for (size_t i = 0; i < f->roots.n; i++)
			sc_queue_place(s, f->roots.v[i], now);
		q->started = true;
		q->full_epoch++;
	} else if (q->gen_seen != s->gen) { /* capacity freed: parked roots wake at their turn */
		requeue_all(s, SC_QUEUE_WAIT, now);
	}
	q->epoch_seen = s->prio_epoch;
	q->gen_seen = s->gen;
	q->cap_seen = s->gen_cap;
	for (size_t i = 0; i < q->touched.n; i++) {
		struct sc_group *g = q->touched.v[i];

		g->q->qtouched = false;
		sc_queue_place(s, g, now);
	}
	q->touched.n = 0;
	/* Backoffs that ended: a retry known to fail fails here (as at its turn). */
	for (backoff_clean(q); q->backoff.n && q->backoff.v[0].k <= now; backoff_clean(q)) {
		struct sc_group_queue *gq = q->backoff.v[0].q;

		heap_take(q, SC_QUEUE_BACKOFF, 0);
		gq->qheap = SC_QUEUE_NONE;
		if (fails_unchanged(s, gq)) {
			failed_q(s, gq, now);
			place_q(s, gq, now);
			continue;
		}
		heap_push_q(q, SC_QUEUE_ACTIVE, gq);
	}
}

struct sc_group *sc_queue_pick(struct pk_sched *s, int64_t now, int64_t *ret_wait)
{
	struct sc_queue *q = &s->forest.queue;

	if (ret_wait)
		*ret_wait = 0;
	queue_refresh(s, now);
	/* The free capacity stays as it is here, and what fails parks only where it lacks
	 * (never a candidate): the best parked candidate changes only as one leaves. */
	pnode *p = parked_first(s);

	for (;;) {
		struct sc_group_queue *gq = q->active.n ? q->active.v[0].q : NULL;
		struct sc_group *g = gq ? gq->g : NULL;

		if (p && (!g || parked_before(p, &q->active.v[0]))) { /* its turn, room for it */
			unpark(s, p, now);
			if (eligible_q(s, p) && p->backoff_until > now)
				heap_push_q(q, SC_QUEUE_DEFER, p); /* decided when the round ends */
			else
				place_q(s, p, now);
			p = parked_first(s);
			continue;
		}
		if (!g)
			break;
		heap_remove_q(q, gq);
		/* unchanged since it failed with pods to place (need_ok), it still has them */
		if ((gq->dirty || !gq->need_ok) && !has_pending(g, 0)) {
			gq->done = true;
			gq->dirty = false;
			continue;
		}
		if (gq->dirty) {
			gq->need_ok = false;
		} else if (fails_unchanged(s, gq)) { /* its attempt, without the search */
			failed_q(s, gq, now);
			place_q(s, gq, now);
			continue;
		}
		return g; /* the best eligible root in rank order */
	}
	settle_deferred(s, now);
	backoff_clean(q);
	if (ret_wait && q->backoff.n)
		*ret_wait = q->backoff.v[0].k;
	return NULL;
}

void sc_queue_order(struct pk_sched *s, struct sc_vec *ret_roots)
{
	size_t n = s->forest.roots.n;
	struct ranked *r = calloc(n + 1, sizeof(*r));

	if (!r)
		return;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){.g = s->forest.roots.v[i],
				       .prio = sc_root_priority(s, s->forest.roots.v[i])};
	qsort(r, n, sizeof(*r), rank_qsort);
	for (size_t i = 0; i < n; i++)
		sc_vec_push(ret_roots, r[i].g);
	free(r);
}

/* ---- the invariant check ------------------------------------------------------------- */

static int check_fail(char *why, size_t whylen, const char *what, const struct sc_group *g)
{
	if (why)
		snprintf(why, whylen, "queue: %s (root %s)", what, g ? g->key : "-");
	return -EUCLEAN;
}

/* Park r's subtree t: order, each link's least need, what it keeps; its roots counted. */
static int check_park(const pnode *t, int r, const pnode **prev, size_t *count, char *why,
		      size_t whylen)
{
	int rc;

	if (!t)
		return 0;
	if ((rc = check_park(t->pl, r, prev, count, why, whylen)) < 0)
		return rc;
	if (*prev && !pbefore(*prev, t))
		return check_fail(why, whylen, "park out of rank order", t->g);
	if (t->lmin != pmin(t->pl) || t->rmin != pmin(t->pr) || t->pneed != t->need[r])
		return check_fail(why, whylen, "park's least needs stale", t->g);
	if (t->qheap != SC_QUEUE_PARK + r || t->g->q != t)
		return check_fail(why, whylen, "parked root not marked parked", t->g);
	if (!t->dirty && (!t->kept || t->tcreation != t->g->spec.creation || t->tseq != t->g->seq ||
			  !t->present))
		return check_fail(why, whylen, "parked root's kept rank stale", t->g);
	*prev = t;
	(*count)++;
	return check_park(t->pr, r, prev, count, why, whylen);
}

int sc_queue_check(const struct pk_sched *s, char *why, size_t whylen)
{
	const struct sc_queue *q = &s->forest.queue;
	size_t parked = 0;
	int rc;

	for (int r = 0; r < SC_MAX_RES; r++) {
		const pnode *prev = NULL;

		if ((rc = check_park(q->park[r], r, &prev, &parked, why, whylen)) < 0)
			return rc;
	}
	if (parked != q->nparked)
		return check_fail(why, whylen, "parked count wrong", NULL);
	for (int h = SC_QUEUE_ACTIVE; h < SC_QUEUE_PARK; h++) {
		const struct sc_heap *hp = heap_of((struct sc_queue *)q, h);

		for (size_t i = 0; i < hp->n; i++) {
			const struct sc_heap_ent *e = &hp->v[i];

			if (h == SC_QUEUE_BACKOFF ? !backoff_live(e) && !e->q->bgarbage
						  : e->q->qheap != h || e->q->qpos != i)
				return check_fail(why, whylen, "heap entry misplaced", e->q->g);
			if (h == SC_QUEUE_ACTIVE && !e->q->dirty &&
			    (e->creation != e->q->g->spec.creation || e->seq != e->q->g->seq))
				return check_fail(why, whylen, "active entry's rank stale",
						  e->q->g);
			if (!unordered(h) && i &&
			    heap_before(h, e, &hp->v[(i - 1) / SC_HEAP_ARITY]))
				return check_fail(why, whylen, "heap out of order", e->q->g);
		}
	}
	for (size_t i = 0; i < s->forest.roots.n; i++) {
		const struct sc_group *g = s->forest.roots.v[i];

		if (g->q->present != g->present || g->q->g != g)
			return check_fail(why, whylen, "root's record out of step", g);
	}
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin.c — the constraint-plugin layer (plugin.h): the plugin table and
 * the calls the core makes through it (every extension point, each plugin
 * in table order), the dispatch of the objects the plugins consume with
 * their queueing hints, and sc_filter(), which puts the plugins' filters
 * between the static filters and resource fit.
 *
 * The table sits above the plugins, which sit above the label selectors and
 * the term index they share (terms.c), the static filters (filter.c) and
 * the snapshot.  The snapshot does not call up into any of them: the table
 * registers with it once (sc_cons_register, pk_sched_new) the hooks that
 * charge every plugin when usage changes, rebuild the terms when the
 * partitions go, check the index and free the plugins' state.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

static const struct sc_plugin_ops *const plugins[_SC_PLUGIN_MAX] = {
    [SC_PLUGIN_FIELDS] = &sc_plugin_fields,	[SC_PLUGIN_GATES] = &sc_plugin_gates,
    [SC_PLUGIN_NODEPREF] = &sc_plugin_nodepref, [SC_PLUGIN_INTERPOD] = &sc_plugin_interpod,
    [SC_PLUGIN_SPREAD] = &sc_plugin_spread,	[SC_PLUGIN_PORTS] = &sc_plugin_ports,
    [SC_PLUGIN_CLAIMS] = &sc_plugin_claims,	[SC_PLUGIN_VOLUMES] = &sc_plugin_volumes,
};

/*
 * The plugins with a PreEnqueue and with a PreFilter, in table order: the
 * queue and the strategies ask every pending pod both, so they go through
 * the few that answer (built once, by sc_cons_register).
 */
static const struct sc_plugin_ops *pre_enqueuers[_SC_PLUGIN_MAX], *pre_filters[_SC_PLUGIN_MAX];
static size_t npre_enqueuers, npre_filters;
static pthread_once_t hot_once = PTHREAD_ONCE_INIT;

static void hot_init(void)
{
	for (int i = 0; i < _SC_PLUGIN_MAX; i++) {
		if (plugins[i]->pre_enqueue)
			pre_enqueuers[npre_enqueuers++] = plugins[i];
		if (plugins[i]->pre_filter)
			pre_filters[npre_filters++] = plugins[i];
	}
}

/* ---- the calls the core makes ------------------------------------------------------ */

void sc_cons_free(struct sc_cons *c)
{
	if (!c)
		return;
	free(c->refuse);
	sc_labels_clear(&c->labels);
	free(c);
}

static bool cons_empty(const struct sc_cons *c)
{
	if (c->refuse || c->labels.n || c->never_preempt)
		return false;
	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (c->state[i])
			return false;
	return true;
}

int sc_cons_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod)
{
	struct sc_buf why = {0};
	int r;

	if (!pod->cons && !(pod->cons = calloc(1, sizeof(*pod->cons))))
		return -ENOMEM;
	if ((r = sc_labels_parse(obj, &pod->cons->labels)) < 0)
		return r;
	for (int i = 0; i < _SC_PLUGIN_MAX; i++) {
		r = plugins[i]->parse(s, obj, pod, &why);
		if (r == -EINVAL) {
			if (!pod->cons->refuse)
				pod->cons->refuse = why.s ? why.s : strdup("invalid constraints");
			else
				sc_buf_free(&why);
			why = (struct sc_buf){0};
			continue;
		}
		if (r < 0) {
			sc_buf_free(&why);
			return r;
		}
	}
	sc_buf_free(&why);
	s->snap.terms.version++; /* a pod changed: per-pod caches are stale */
	if (cons_empty(pod->cons)) {
		sc_cons_free(pod->cons);
		pod->cons = NULL; /* most pods: nothing to keep */
	}
	return 0;
}

void sc_cons_release(struct pk_sched *s, struct sc_pod *pod)
{
	if (!pod->cons)
		return;
	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->release)
			plugins[i]->release(s, pod);
}

enum sc_misfit sc_cons_filter(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	if (!pod->cons && snap->terms.owners <= 0 && !snap->terms.stale)
		return SC_FIT; /* the common case: nothing to say, nobody to repel it */
	for (int i = 0; i < _SC_PLUGIN_MAX; i++) {
		enum sc_misfit m;

		if (!plugins[i]->filter)
			continue;
		m = plugins[i]->filter(snap, pod, node);
		if (m != SC_FIT)
			return m;
	}
	return SC_FIT;
}

/*
 * The whole filter: the static filters (filter.c), then the plugins', then
 * resource fit.
 */
enum sc_misfit sc_filter(const struct sc_snapshot *snap, const struct sc_pod *pod,
			 const struct sc_node *node, int *ret_res)
{
	enum sc_misfit m = sc_filter_static(pod, node);

	if (m != SC_FIT)
		return m;
	/* the plugins' index is a cache the filters may build: not a change */
	m = sc_cons_filter((struct sc_snapshot *)snap, pod, node->index);
	if (m != SC_FIT)
		return m;
	for (int r = 0; r < snap->nres; r++) {
		int64_t after;

		/* A wrapped (negative) usage means an overbooked node: full. */
		if (pod->req[r] > 0 &&
		    (node->used[r] < 0 ||
		     __builtin_add_overflow(node->used[r], pod->req[r], &after) ||
		     after > node->alloc[r])) {
			if (ret_res)
				*ret_res = r;
			return SC_MISFIT_RESOURCES;
		}
	}
	if (node->ndevs && !sc_devices_fit(snap, pod, node)) {
		if (ret_res)
			*ret_res = node->devs[0].res;
		return SC_MISFIT_RESOURCES;
	}
	return SC_FIT;
}

bool sc_cons_scores(const struct sc_pod *pod)
{
	return pod->cons && pod->cons->scores;
}

int64_t sc_cons_score(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	int64_t sum = 0;

	if (!sc_cons_scores(pod))
		return 0;
	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->score)
			sum += plugins[i]->score(snap, pod, node);
	return sum;
}

void sc_cons_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign)
{
	sc_terms_charge(snap, pod, node, sign);
	if (!pod->cons)
		return;
	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->charge)
			plugins[i]->charge(snap, pod, node, sign);
}

const char *sc_cons_refusal(const struct sc_pod *pod)
{
	if (!pod->cons)
		return NULL;
	if (pod->cons->refuse)
		return pod->cons->refuse;
	for (size_t i = 0; i < npre_filters; i++) {
		const char *why = pre_filters[i]->pre_filter(pod);

		if (why)
			return why;
	}
	return NULL;
}

const struct sc_plugin_ops *sc_cons_pre_enqueue(const struct sc_pod *pod, const char **ret_what)
{
	if (!pod->cons)
		return NULL;
	for (size_t i = 0; i < npre_enqueuers; i++) {
		const char *what = pre_enqueuers[i]->pre_enqueue(pod);

		if (what) {
			if (ret_what)
				*ret_what = what;
			return pre_enqueuers[i];
		}
	}
	return NULL;
}

bool sc_cons_admits(const struct sc_pod *pod)
{
	return !pod->cons || (!sc_cons_pre_enqueue(pod, NULL) && !sc_cons_refusal(pod));
}

int sc_cons_pre_bind(struct sc_ctx *ctx, const struct sc_pod *pod, const char *node)
{
	int r;

	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->pre_bind && (r = plugins[i]->pre_bind(ctx, pod, node)) < 0)
			return r;
	return 0;
}

int sc_cons_cycle(struct pk_sched *s, struct pk_sched_result *res)
{
	int r;

	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->cycle && (r = plugins[i]->cycle(s, res)) < 0)
			return r;
	return 0;
}

void sc_cons_pod_gone(struct pk_sched *s, const struct sc_pod *pod)
{
	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->pod_gone)
			plugins[i]->pod_gone(s, pod);
}

void sc_cons_why(const struct sc_pod *pod, struct sc_buf *b)
{
	for (int i = 0; pod->cons && i < _SC_PLUGIN_MAX; i++) {
		const char *why = plugins[i]->why ? plugins[i]->why(pod) : NULL;

		if (why)
			sc_buf_printf(b, "; %s", why);
	}
}

int sc_cons_group_changed(struct sc_pod *pod)
{
	int r;

	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->group_changed && (r = plugins[i]->group_changed(pod)) < 0)
			return r;
	return 0;
}

void sc_cons_complete(struct pk_sched *s)
{
	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		if (plugins[i]->complete)
			plugins[i]->complete(s);
}

/* The registered event of kind, or NULL: no plugin consumes it. */
static const struct sc_plugin_event *event_of(const struct pk_type *kind)
{
	for (int i = 0; kind && i < _SC_PLUGIN_MAX; i++)
		for (size_t k = 0; k < plugins[i]->nevents; k++)
			if (plugins[i]->events[k].kind == kind)
				return &plugins[i]->events[k];
	return NULL;
}

/*
 * A handler's answer: a hint to queue requeues the roots parked for want of
 * room, and so does an error (the plugin's state may have changed in part),
 * but not -ENOENT (nothing of that name was known).
 */
static int hint(struct pk_sched *s, int r)
{
	if (r != SC_HINT_SKIP && r != -ENOENT)
		s->gen++;
	return r < 0 ? r : 0;
}

size_t sc_cons_kinds(const struct pk_type **v, size_t max)
{
	size_t n = 0;

	for (int i = 0; i < _SC_PLUGIN_MAX; i++)
		for (size_t k = 0; k < plugins[i]->nevents; k++, n++)
			if (n < max)
				v[n] = plugins[i]->events[k].kind;
	return n;
}

int sc_cons_event_set(struct pk_sched *s, const struct pk_type *kind, json_t *obj)
{
	const struct sc_plugin_event *ev = event_of(kind);

	return ev ? hint(s, ev->set(s, obj)) : -EOPNOTSUPP;
}

int sc_cons_event_remove(struct pk_sched *s, enum pk_kind kind, const char *ns, const char *name)
{
	const struct sc_plugin_event *ev = event_of(pk_type_of(kind));

	return ev && ev->remove ? hint(s, ev->remove(s, kind, ns, name)) : -ENOENT;
}

/* ---- what the snapshot calls back ------------------------------------------------ */

static void cons_snap_fini(struct sc_snapshot *snap)
{
	sc_terms_fini(&snap->terms);
	sc_ports_free(snap);
	sc_claims_free(snap);
	sc_vols_free(snap);
}

static const struct sc_snap_pod_ops cons_snap_ops = {
    .charge = sc_cons_charge,
    .parts_dropped = sc_terms_parts_dropped,
    .check = sc_terms_check,
    .fini = cons_snap_fini,
};

void sc_cons_register(struct sc_snapshot *snap)
{
	pthread_once(&hot_once, hot_init);
	sc_snapshot_register_pod_ops(snap, &cons_snap_ops);
	snap->terms.owns = sc_interpod_owns;
}

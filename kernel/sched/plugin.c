/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin.c — the constraint-plugin layer (plugin.h): the plugin table and
 * the calls the core makes through it, and sc_filter(), which puts the
 * plugins' filters between the static filters and resource fit.
 *
 * The table sits above the plugins, which sit above the label selectors and
 * the term index they share (terms.c), the static filters (filter.c) and
 * the snapshot.  The snapshot does not call up into any of them: the table
 * registers with it once (sc_cons_register, pk_sched_new) the hooks that
 * charge every plugin when usage changes, rebuild the terms when the
 * partitions go, check the index and free the plugins' state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-claims.h"
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

/* ---- the calls the core makes ------------------------------------------------------ */

void sc_cons_free(struct sc_cons *c)
{
	if (!c)
		return;
	free(c->refuse);
	free(c->gate0);
	sc_labels_clear(&c->labels);
	free(c);
}

static bool cons_empty(const struct sc_cons *c)
{
	if (c->refuse || c->labels.n || c->ngates || c->never_preempt)
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
	return pod->cons->refuse ? pod->cons->refuse : sc_vol_hold(pod);
}

bool sc_pod_gated(const struct sc_pod *pod)
{
	return pod->cons && pod->cons->ngates > 0;
}

int sc_cons_namespace(struct pk_sched *s, json_t *obj)
{
	struct sc_terms *t = &s->snap.terms;
	const char *name = pk_name(obj);
	struct sc_labels *l, *old;
	bool changed;
	int r;

	if (!name)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	old = pk_map_get(&t->ns_labels, name);
	if ((r = sc_labels_parse(obj, l)) < 0 || (r = sc_vec_push(&t->ns_all, l)) < 0) {
		sc_labels_clear(l);
		free(l);
		return r;
	}
	if ((r = pk_map_put(&t->ns_labels, name, l)) < 0) {
		sc_vec_remove(&t->ns_all, l);
		sc_labels_clear(l);
		free(l);
		return r;
	}
	changed = !sc_ns_labels_same(old, l, name);
	if (old) {
		sc_vec_remove(&t->ns_all, old);
		sc_labels_clear(old);
		free(old);
	}
	/*
	 * Only labels a namespaceSelector reads can change a match: a Namespace
	 * created without labels, or written again with the same, changes none
	 * and wakes no pending root (a namespace made per job would otherwise
	 * retry every root parked for capacity, each retry a longer backoff).
	 */
	if (changed) {
		sc_terms_parts_dropped(&s->snap);
		s->gen++;
	}
	return 0;
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
	sc_snapshot_register_pod_ops(snap, &cons_snap_ops);
	snap->terms.owns = sc_interpod_owns;
}

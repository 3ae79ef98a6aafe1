/* SPDX-License-Identifier: Apache-2.0 */
/*
 * interpod.c — pod affinity and anti-affinity (kube-scheduler's
 * InterPodAffinity), required and preferred.
 *
 * Each PodAffinityTerm becomes a term of the shared index (plugin.h): its
 * matchers (namespaces: the term's list, else the pod's own namespace, plus
 * a namespaceSelector; the labelSelector with matchLabelKeys added as
 * `key In (pod's value)` and mismatchLabelKeys as `key NotIn (pod's value)`)
 * over its topologyKey.  The index counts, per domain, the bound and assumed
 * pods each term matches, so every test below is an array lookup:
 *
 *   required affinity      the node's domain of every term's key holds a pod
 *                          matching all the pod's required affinity terms
 *                          (a term is indexed with the matchers of all of
 *                          them, as kube-scheduler counts only pods that
 *                          match every term); a node without the key fails.
 *                          First pod of a series: when no pod anywhere
 *                          matches and the pod matches its own terms, any
 *                          node with the keys passes.
 *   required anti-affinity no pod matching the term in the node's domain.
 *   symmetric rule         an existing pod's required anti-affinity term
 *                          that the incoming pod matches keeps it out of
 *                          that pod's domain: the index counts, per domain,
 *                          the pods owning each term; the terms an incoming
 *                          pod matches are found once per pod and cached.
 *   preferred              score += weight x matching pods in the node's
 *                          domain (affinity), -= for anti-affinity.
 *
 * Counts follow assume and revert (charge), so a gang's members see each
 * other, and a victim's simulated removal frees its domain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

struct interpod {
	bool self_match; /* the pod matches all its required affinity terms */
	size_t naff, nanti, npref;
	struct sc_term **aff, **anti;
	struct pref {
		struct sc_term *t;
		int32_t weight; /* negative for anti-affinity */
	} * pref;
};

#define AFF "spec.affinity.podAffinity"
#define ANTI "spec.affinity.podAntiAffinity"
#define REQ "requiredDuringSchedulingIgnoredDuringExecution"
#define PREF "preferredDuringSchedulingIgnoredDuringExecution"

static int label_keys(json_t *term, const char *field, const char *path, const struct sc_pod *pod,
		      enum sc_lop op, struct sc_lsel *sel, struct sc_buf *why)
{
	json_t *keys = json_object_get(term, field);

	if (json_array_size(keys) && sel->null) {
		sc_buf_printf(why, "%s.%s: requires a labelSelector", path, field);
		return -EINVAL;
	}
	for (size_t i = 0; i < json_array_size(keys); i++) {
		const char *k = json_string_value(json_array_get(keys, i));
		const char *v;
		int r;

		if (!k) {
			sc_buf_printf(why, "%s.%s[%zu]: not a string", path, field, i);
			return -EINVAL;
		}
		v = sc_labels_get(&pod->cons->labels, k);
		if (v && (r = sc_lsel_add(sel, k, op, &v, 1)) < 0)
			return r;
	}
	return 0;
}

static int parse_namespaces(json_t *term, const char *path, const struct sc_pod *pod,
			    struct sc_matcher *m, struct sc_buf *why)
{
	json_t *nss = json_object_get(term, "namespaces"), *nssel;
	size_t n = json_array_size(nss);
	int r;

	if (n > SC_CONS_MAX_VALUES) {
		sc_buf_printf(why, "%s.namespaces: more than %d", path, SC_CONS_MAX_VALUES);
		return -EINVAL;
	}
	nssel = json_object_get(term, "namespaceSelector");
	if (nssel && !json_is_null(nssel)) {
		char p[256];

		snprintf(p, sizeof(p), "%s.namespaceSelector", path);
		if ((r = sc_lsel_parse(nssel, p, &m->nssel, why)) < 0)
			return r;
		m->has_nssel = true;
	}
	m->ns = calloc(n + 1, sizeof(char *));
	if (!m->ns)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++, m->nns++) {
		const char *ns = json_string_value(json_array_get(nss, i));

		if (!ns) {
			sc_buf_printf(why, "%s.namespaces[%zu]: not a string", path, i);
			return -EINVAL;
		}
		if (!(m->ns[i] = strdup(ns)))
			return -ENOMEM;
	}
	if (!n && !m->has_nssel && !(m->ns[m->nns++] = strdup(pod->ns)))
		return -ENOMEM;
	return 0;
}

/* One PodAffinityTerm at path into m; *ret_key gets its topologyKey. */
static int parse_term(json_t *term, const char *path, const struct sc_pod *pod,
		      struct sc_matcher *m, const char **ret_key, struct sc_buf *why)
{
	const char *key = json_string_value(json_object_get(term, "topologyKey"));
	char p[256];
	int r;

	memset(m, 0, sizeof(*m));
	if (!json_is_object(term) || !key || !*key) {
		sc_buf_printf(why, "%s.topologyKey: Required value", path);
		return -EINVAL;
	}
	snprintf(p, sizeof(p), "%s.labelSelector", path);
	if ((r = sc_lsel_parse(json_object_get(term, "labelSelector"), p, &m->sel, why)) < 0 ||
	    (r = parse_namespaces(term, path, pod, m, why)) < 0 ||
	    (r = label_keys(term, "matchLabelKeys", path, pod, SC_LOP_IN, &m->sel, why)) < 0 ||
	    (r = label_keys(term, "mismatchLabelKeys", path, pod, SC_LOP_NOT_IN, &m->sel, why)) < 0)
		return r;
	*ret_key = key;
	return 0;
}

static void interpod_free(struct pk_sched *s, struct interpod *ip)
{
	if (!ip)
		return;
	for (size_t i = 0; i < ip->naff; i++)
		sc_terms_put(&s->snap.terms, ip->aff[i]);
	for (size_t i = 0; i < ip->nanti; i++)
		sc_terms_put(&s->snap.terms, ip->anti[i]);
	for (size_t i = 0; i < ip->npref; i++)
		sc_terms_put(&s->snap.terms, ip->pref[i].t);
	free(ip->aff);
	free(ip->anti);
	free(ip->pref);
	free(ip);
}

/* Register one term of a single matcher (taking m). */
static int add_one(struct pk_sched *s, const char *key, struct sc_matcher *m, struct sc_term **ret)
{
	struct sc_matcher *copy = malloc(sizeof(*copy));

	if (!copy) {
		sc_matcher_clear(m);
		return -ENOMEM;
	}
	*copy = *m;
	*ret = sc_terms_get(&s->snap.terms, key, copy, 1);
	return *ret ? 0 : -ENOMEM;
}

/* Required affinity: every term indexed with the matchers of all of them. */
static int parse_required_affinity(struct pk_sched *s, json_t *list, const struct sc_pod *pod,
				   struct interpod *ip, struct sc_buf *why)
{
	size_t n = json_array_size(list);
	struct sc_matcher *m = calloc(n + 1, sizeof(*m));
	const char **keys = calloc(n + 1, sizeof(char *));
	int r = 0;

	ip->aff = calloc(n + 1, sizeof(*ip->aff));
	if (!m || !keys || !ip->aff) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		char path[160];

		snprintf(path, sizeof(path), AFF "." REQ "[%zu]", i);
		r = parse_term(json_array_get(list, i), path, pod, &m[i], &keys[i], why);
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		struct sc_matcher *all = calloc(n, sizeof(*all));
		struct sc_buf b = {0};

		if (!all) {
			r = -ENOMEM;
			break;
		}
		/* deep copies through a reparse keep ownership simple */
		for (size_t k = 0; k < n && r == 0; k++) {
			const char *kk;
			char path[160];

			snprintf(path, sizeof(path), AFF "." REQ "[%zu]", k);
			r = parse_term(json_array_get(list, k), path, pod, &all[k], &kk, &b);
		}
		sc_buf_free(&b);
		if (r < 0) {
			for (size_t k = 0; k < n; k++)
				sc_matcher_clear(&all[k]);
			free(all);
			break;
		}
		ip->aff[i] = sc_terms_get(&s->snap.terms, keys[i], all, n);
		if (!ip->aff[i])
			r = -ENOMEM;
		else
			ip->naff++;
	}
	if (r == 0 && n) {
		ip->self_match = true;
		for (size_t i = 0; i < ip->naff; i++)
			if (!sc_term_matches(&s->snap.terms, ip->aff[i], pod->ns,
					     &pod->cons->labels))
				ip->self_match = false;
	}
out:
	for (size_t i = 0; m && i < n; i++)
		sc_matcher_clear(&m[i]);
	free(m);
	free(keys);
	return r;
}

static int parse_anti(struct pk_sched *s, json_t *list, const struct sc_pod *pod,
		      struct interpod *ip, struct sc_buf *why)
{
	size_t n = json_array_size(list);
	int r = 0;

	ip->anti = calloc(n + 1, sizeof(*ip->anti));
	if (!ip->anti)
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct sc_matcher m;
		const char *key;
		char path[160];

		snprintf(path, sizeof(path), ANTI "." REQ "[%zu]", i);
		r = parse_term(json_array_get(list, i), path, pod, &m, &key, why);
		if (r < 0) {
			sc_matcher_clear(&m);
			break;
		}
		if ((r = add_one(s, key, &m, &ip->anti[i])) == 0)
			ip->nanti++;
	}
	return r;
}

static int parse_preferred(struct pk_sched *s, json_t *list, const char *base, int sign,
			   const struct sc_pod *pod, struct interpod *ip, struct sc_buf *why)
{
	int r = 0;

	for (size_t i = 0; i < json_array_size(list) && r == 0; i++) {
		json_t *w = json_object_get(json_array_get(list, i), "weight");
		struct sc_matcher m;
		const char *key;
		char path[200];

		snprintf(path, sizeof(path), "%s." PREF "[%zu]", base, i);
		if (!json_is_integer(w) || json_integer_value(w) < 1 ||
		    json_integer_value(w) > 100) {
			sc_buf_printf(why, "%s.weight: an integer 1-100 required", path);
			return -EINVAL;
		}
		strcat(path, ".podAffinityTerm");
		r = parse_term(json_object_get(json_array_get(list, i), "podAffinityTerm"), path,
			       pod, &m, &key, why);
		if (r < 0) {
			sc_matcher_clear(&m);
			break;
		}
		ip->pref[ip->npref].weight = (int32_t)(sign * json_integer_value(w));
		if ((r = add_one(s, key, &m, &ip->pref[ip->npref].t)) == 0)
			ip->npref++;
	}
	return r;
}

static int interpod_parse(struct pk_sched *s, json_t *obj, struct sc_pod *pod, struct sc_buf *why)
{
	json_t *req = pk_get(obj, AFF "." REQ), *anti = pk_get(obj, ANTI "." REQ);
	json_t *pa = pk_get(obj, AFF "." PREF), *pn = pk_get(obj, ANTI "." PREF);
	size_t total = json_array_size(req) + json_array_size(anti) + json_array_size(pa) +
		       json_array_size(pn);
	struct interpod *ip;
	int r;

	if (!total)
		return 0;
	if (total > SC_CONS_MAX_TERMS) {
		sc_buf_printf(why, "spec.affinity: more than %d pod affinity terms",
			      SC_CONS_MAX_TERMS);
		return -EINVAL;
	}
	ip = calloc(1, sizeof(*ip));
	if (!ip || !(ip->pref = calloc(total, sizeof(*ip->pref)))) {
		free(ip);
		return -ENOMEM;
	}
	if ((r = parse_required_affinity(s, req, pod, ip, why)) < 0 ||
	    (r = parse_anti(s, anti, pod, ip, why)) < 0 ||
	    (r = parse_preferred(s, pa, AFF, 1, pod, ip, why)) < 0 ||
	    (r = parse_preferred(s, pn, ANTI, -1, pod, ip, why)) < 0) {
		interpod_free(s, ip);
		return r;
	}
	pod->cons->state[SC_PLUGIN_INTERPOD] = ip;
	if (ip->npref)
		pod->cons->scores = true;
	return 0;
}

static void interpod_release(struct pk_sched *s, struct sc_pod *pod)
{
	interpod_free(s, pod->cons->state[SC_PLUGIN_INTERPOD]);
	pod->cons->state[SC_PLUGIN_INTERPOD] = NULL;
}

static const struct interpod *state_of(const struct sc_pod *pod)
{
	return pod->cons ? pod->cons->state[SC_PLUGIN_INTERPOD] : NULL;
}

bool sc_interpod_owns(const struct sc_pod *pod, const struct sc_term *term)
{
	const struct interpod *ip = state_of(pod);

	for (size_t i = 0; ip && i < ip->nanti; i++)
		if (ip->anti[i] == term)
			return true;
	return false;
}

static enum sc_misfit filter_affinity(struct sc_snapshot *snap, const struct interpod *ip, int node)
{
	bool exist = true, none = true;

	for (size_t i = 0; i < ip->naff; i++) {
		const struct sc_term *t = ip->aff[i];
		int d = t->part->node_dom[node];

		if (d < 0)
			return SC_MISFIT_POD_AFFINITY; /* every topology key must be on the node */
		if (t->dom_cnt[d] <= 0)
			exist = false;
		if (t->total > 0)
			none = false;
	}
	(void)snap;
	if (exist || (none && ip->self_match))
		return SC_FIT;
	return SC_MISFIT_POD_AFFINITY;
}

/* The terms with owners that pod matches (cached per pod and index version). */
static struct sc_term **symmetric_terms(struct sc_snapshot *snap, const struct sc_pod *pod,
					size_t *ret_n)
{
	struct sc_terms *t = &snap->terms;
	static const struct sc_labels none;

	if (t->sym_pod != pod || t->sym_version != t->version) {
		t->nsym = 0;
		if (t->capsym < t->n) {
			struct sc_term **v = realloc(t->sym, (t->n + 1) * sizeof(*v));

			if (!v) {
				*ret_n = 0;
				t->sym_pod = NULL;
				return NULL;
			}
			t->sym = v;
			t->capsym = t->n;
		}
		for (size_t i = 0; i < t->n; i++)
			if (sc_term_matches(t, t->v[i], pod->ns,
					    pod->cons ? &pod->cons->labels : &none))
				t->sym[t->nsym++] = t->v[i];
		t->sym_pod = pod;
		t->sym_version = t->version;
	}
	*ret_n = t->nsym;
	return t->sym;
}

bool sc_interpod_target(const struct sc_terms *t, const struct sc_pod *pod,
			const struct sc_pod *other)
{
	const struct interpod *ip = state_of(pod);

	return ip && ip->naff && other->cons &&
	       sc_term_matches(t, ip->aff[0], other->ns, &other->cons->labels);
}

const char *sc_interpod_affinity_key(const struct sc_pod *pod)
{
	const struct interpod *ip = state_of(pod);

	return ip && ip->naff ? ip->aff[0]->topo_key : NULL;
}

static enum sc_misfit interpod_filter(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	const struct interpod *ip = state_of(pod);

	if (!ip && snap->terms.owners <= 0 && !snap->terms.stale)
		return SC_FIT;
	if (sc_terms_ready(snap) < 0)
		return SC_MISFIT_POD_AFFINITY;
	if (ip && ip->naff && filter_affinity(snap, ip, node) != SC_FIT)
		return SC_MISFIT_POD_AFFINITY;
	for (size_t i = 0; ip && i < ip->nanti; i++) {
		int d = ip->anti[i]->part->node_dom[node];

		if (d >= 0 && ip->anti[i]->dom_cnt[d] > 0)
			return SC_MISFIT_POD_ANTI_AFFINITY;
	}
	if (snap->terms.owners > 0) {
		size_t n;
		struct sc_term **sym = symmetric_terms(snap, pod, &n);

		for (size_t i = 0; i < n; i++) {
			int d;

			if (sym[i]->owners <= 0)
				continue;
			d = sym[i]->part->node_dom[node];
			if (d >= 0 && sym[i]->own_cnt[d] > 0)
				return SC_MISFIT_EXISTING_ANTI_AFFINITY;
		}
	}
	return SC_FIT;
}

static int64_t interpod_score(struct sc_snapshot *snap, const struct sc_pod *pod, int node)
{
	const struct interpod *ip = state_of(pod);
	int64_t sum = 0;

	if (!ip || !ip->npref || sc_terms_ready(snap) < 0)
		return 0;
	for (size_t i = 0; i < ip->npref; i++) {
		int d = ip->pref[i].t->part->node_dom[node];

		if (d >= 0)
			sum += (int64_t)ip->pref[i].weight * ip->pref[i].t->dom_cnt[d];
	}
	return sum;
}

/* The pod's required anti-affinity terms own its node's domain. */
static void interpod_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign)
{
	const struct interpod *ip = state_of(pod);

	for (size_t i = 0; ip && i < ip->nanti; i++) {
		struct sc_term *t = ip->anti[i];
		int d;

		if (!t->built || (size_t)node >= t->nnodes)
			continue;
		d = t->part->node_dom[node];
		if (d < 0)
			continue;
		t->own_cnt[d] += sign;
		t->owners += sign;
		snap->terms.owners += sign;
	}
}

/*
 * A Namespace object's labels, which namespaceSelector reads (the event the
 * plugin registers): SC_HINT_QUEUE when a label a selector reads changed.
 */
static int interpod_namespace(struct pk_sched *s, json_t *obj)
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
	if (!changed)
		return SC_HINT_SKIP;
	sc_terms_parts_dropped(&s->snap);
	return SC_HINT_QUEUE;
}

static const struct sc_plugin_event interpod_events[] = {
    {.kind = &pk_type_namespace, .set = interpod_namespace},
};

const struct sc_plugin_ops sc_plugin_interpod = {
    .name = "InterPodAffinity",
    .parse = interpod_parse,
    .release = interpod_release,
    .filter = interpod_filter,
    .score = interpod_score,
    .charge = interpod_charge,
    .events = interpod_events,
    .nevents = sizeof(interpod_events) / sizeof(interpod_events[0]),
};

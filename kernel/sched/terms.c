/* SPDX-License-Identifier: Apache-2.0 */
/*
 * terms.c — label selectors and the term index the affinity and spread
 * plugins share (plugin.h), below the plugins and above the snapshot: the
 * plugins (interpod.c, spread.c, volumes.c) and the plugin table (plugin.c)
 * call it, and it calls nothing of theirs.  Which pods own a term as a
 * required anti-affinity term is interpod.c's to say: it answers through
 * the index's owns callback, which the plugin table sets (sc_cons_register).
 *
 * A term's counts are built on its first use by one pass over every pod
 * (bound or assumed ones count) and kept from then on by sc_terms_charge():
 * adding a pod to a node tests the pod against each registered term once
 * and moves the node's and its domain's count.  Terms are refcounted by the
 * pods that state them and leave the index with their last user.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

/* ---- labels and selectors ------------------------------------------------------ */

const char *sc_labels_get(const struct sc_labels *l, const char *key)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (strcmp(l->kv[2 * i], key) == 0)
			return l->kv[2 * i + 1];
	return NULL;
}

static bool lreq_match(const struct sc_lreq *r, const struct sc_labels *l)
{
	const char *v = sc_labels_get(l, r->key);
	bool in = false;

	switch (r->op) {
	case SC_LOP_EXISTS:
		return v != NULL;
	case SC_LOP_NOT_EXISTS:
		return v == NULL;
	case SC_LOP_IN:
	case SC_LOP_NOT_IN:
		for (size_t i = 0; v && i < r->nvalues; i++)
			if (strcmp(v, r->values[i]) == 0)
				in = true;
		return r->op == SC_LOP_IN ? in : !in;
	}
	return false;
}

bool sc_lsel_match(const struct sc_lsel *sel, const struct sc_labels *l)
{
	if (sel->null)
		return false;
	for (size_t i = 0; i < sel->nreqs; i++)
		if (!lreq_match(&sel->reqs[i], l))
			return false;
	return true;
}

void sc_lsel_clear(struct sc_lsel *sel)
{
	for (size_t i = 0; i < sel->nreqs; i++) {
		free(sel->reqs[i].key);
		for (size_t k = 0; k < sel->reqs[i].nvalues; k++)
			free(sel->reqs[i].values[k]);
		free(sel->reqs[i].values);
	}
	free(sel->reqs);
	memset(sel, 0, sizeof(*sel));
}

void sc_labels_clear(struct sc_labels *l)
{
	for (size_t i = 0; i < 2 * l->n; i++)
		free(l->kv[i]);
	free(l->kv);
	memset(l, 0, sizeof(*l));
}

int sc_labels_parse(json_t *obj, struct sc_labels *ret)
{
	json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels"), *v;
	const char *k;
	size_t n = json_object_size(labels), i = 0;

	memset(ret, 0, sizeof(*ret));
	if (!json_is_object(labels) || !n)
		return 0;
	ret->kv = calloc(2 * n, sizeof(char *));
	if (!ret->kv)
		return -ENOMEM;
	json_object_foreach(labels, k, v)
	{
		if (!json_is_string(v))
			continue;
		ret->kv[2 * i] = strdup(k);
		ret->kv[2 * i + 1] = strdup(json_string_value(v));
		ret->n = ++i;
		if (!ret->kv[2 * i - 2] || !ret->kv[2 * i - 1])
			return -ENOMEM;
	}
	return 0;
}

int sc_lsel_add(struct sc_lsel *sel, const char *key, enum sc_lop op, const char *const *values,
		size_t nvalues)
{
	struct sc_lreq *v = realloc(sel->reqs, (sel->nreqs + 1) * sizeof(*v)), *r;

	if (!v)
		return -ENOMEM;
	sel->reqs = v;
	r = &v[sel->nreqs++];
	*r = (struct sc_lreq){.key = strdup(key), .op = op};
	r->values = calloc(nvalues + 1, sizeof(char *));
	if (!r->key || !r->values)
		return -ENOMEM;
	for (size_t i = 0; i < nvalues; i++, r->nvalues++)
		if (!(r->values[i] = strdup(values[i])))
			return -ENOMEM;
	return 0;
}

static int parse_expr(json_t *e, const char *path, size_t i, struct sc_lsel *sel,
		      struct sc_buf *why)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist"};
	const char *key = json_string_value(json_object_get(e, "key"));
	const char *op = json_string_value(json_object_get(e, "operator"));
	json_t *vals = json_object_get(e, "values");
	const char *vv[SC_CONS_MAX_VALUES];
	size_t nv = json_array_size(vals);
	int o = -1;

	for (int k = 0; op && k < 4; k++)
		if (strcmp(op, ops[k]) == 0)
			o = k;
	if (!key || o < 0) {
		sc_buf_printf(why,
			      "%s.matchExpressions[%zu]: key and an operator (In, NotIn, "
			      "Exists, DoesNotExist) required",
			      path, i);
		return -EINVAL;
	}
	if (nv > SC_CONS_MAX_VALUES || ((o == SC_LOP_IN || o == SC_LOP_NOT_IN) && !nv) ||
	    (o >= SC_LOP_EXISTS && nv)) {
		sc_buf_printf(why, "%s.matchExpressions[%zu].values: %s", path, i,
			      nv > SC_CONS_MAX_VALUES ? "too many values"
			      : o >= SC_LOP_EXISTS    ? "must be empty for Exists and DoesNotExist"
						      : "required for In and NotIn");
		return -EINVAL;
	}
	for (size_t k = 0; k < nv; k++)
		if (!(vv[k] = json_string_value(json_array_get(vals, k)))) {
			sc_buf_printf(why, "%s.matchExpressions[%zu].values[%zu]: not a string",
				      path, i, k);
			return -EINVAL;
		}
	return sc_lsel_add(sel, key, (enum sc_lop)o, vv, nv);
}

int sc_lsel_parse(json_t *v, const char *path, struct sc_lsel *ret, struct sc_buf *why)
{
	json_t *ml = json_object_get(v, "matchLabels"),
	       *me = json_object_get(v, "matchExpressions");
	const char *k;
	json_t *x;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	if (!v || json_is_null(v)) {
		ret->null = true;
		return 0;
	}
	if (!json_is_object(v) || json_object_size(ml) + json_array_size(me) > SC_CONS_MAX_REQS) {
		sc_buf_printf(why, "%s: a label selector of at most %d requirements expected", path,
			      SC_CONS_MAX_REQS);
		return -EINVAL;
	}
	json_object_foreach(ml, k, x)
	{
		const char *val = json_string_value(x);

		if (!val) {
			sc_buf_printf(why, "%s.matchLabels.%s: not a string", path, k);
			return -EINVAL;
		}
		if ((r = sc_lsel_add(ret, k, SC_LOP_IN, &val, 1)) < 0)
			return r;
	}
	for (size_t i = 0; i < json_array_size(me); i++)
		if ((r = parse_expr(json_array_get(me, i), path, i, ret, why)) < 0)
			return r;
	return 0;
}

/* ---- the term index -------------------------------------------------------------- */

static void lsel_text(struct sc_buf *b, const struct sc_lsel *sel)
{
	if (sel->null) {
		sc_buf_printf(b, "null");
		return;
	}
	sc_buf_printf(b, "{");
	for (size_t i = 0; i < sel->nreqs; i++) {
		sc_buf_printf(b, "%s%d:%s", i ? ";" : "", sel->reqs[i].op, sel->reqs[i].key);
		for (size_t k = 0; k < sel->reqs[i].nvalues; k++)
			sc_buf_printf(b, ",%s", sel->reqs[i].values[k]);
	}
	sc_buf_printf(b, "}");
}

static void term_text(struct sc_buf *b, const char *topo_key, const struct sc_matcher *m, size_t nm)
{
	sc_buf_printf(b, "%s", topo_key);
	for (size_t i = 0; i < nm; i++) {
		sc_buf_printf(b, "|ns=");
		for (size_t k = 0; k < m[i].nns; k++)
			sc_buf_printf(b, "%s,", m[i].ns[k]);
		if (m[i].has_nssel)
			lsel_text(b, &m[i].nssel);
		sc_buf_printf(b, "|sel=");
		lsel_text(b, &m[i].sel);
		if (m[i].live_only)
			sc_buf_printf(b, "|live");
	}
}

void sc_matcher_clear(struct sc_matcher *m)
{
	for (size_t i = 0; i < m->nns; i++)
		free(m->ns[i]);
	free(m->ns);
	sc_lsel_clear(&m->nssel);
	sc_lsel_clear(&m->sel);
	memset(m, 0, sizeof(*m));
}

static void term_free(struct sc_term *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nm; i++)
		sc_matcher_clear(&t->m[i]);
	free(t->m);
	free(t->id);
	free(t->topo_key);
	free(t->node_cnt);
	free(t->dom_cnt);
	free(t->own_cnt);
	free(t);
}

struct sc_term *sc_terms_get(struct sc_terms *t, const char *topo_key, struct sc_matcher *m,
			     size_t nm)
{
	struct sc_buf b = {0};
	struct sc_term *term;

	term_text(&b, topo_key, m, nm);
	if (!b.s)
		return NULL;
	term = pk_map_get(&t->byid, b.s);
	if (term) {
		for (size_t i = 0; i < nm; i++)
			sc_matcher_clear(&m[i]);
		free(m);
		sc_buf_free(&b);
		term->refs++;
		return term;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct sc_term **v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			goto fail;
		t->v = v;
		t->cap = cap;
	}
	term = calloc(1, sizeof(*term));
	if (!term)
		goto fail;
	*term =
	    (struct sc_term){.id = b.s, .topo_key = strdup(topo_key), .m = m, .nm = nm, .refs = 1};
	if (!term->topo_key || pk_map_put(&t->byid, term->id, term) < 0) {
		term->m = NULL;
		term->nm = 0;
		term->id = NULL;
		term_free(term);
		goto fail;
	}
	t->v[t->n++] = term;
	t->version++;
	t->stale = true;
	return term;
fail:
	for (size_t i = 0; i < nm; i++)
		sc_matcher_clear(&m[i]);
	free(m);
	sc_buf_free(&b);
	return NULL;
}

void sc_terms_put(struct sc_terms *t, struct sc_term *term)
{
	if (!term || --term->refs > 0)
		return;
	t->owners -= term->owners;
	pk_map_del(&t->byid, term->id);
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i] == term) {
			t->v[i] = t->v[--t->n];
			break;
		}
	t->version++;
	term_free(term);
}

void sc_terms_fini(struct sc_terms *t)
{
	for (size_t i = 0; i < t->n; i++)
		term_free(t->v[i]);
	free(t->v);
	free(t->sym);
	pk_map_free(&t->byid);
	for (size_t i = 0; i < t->ns_all.n; i++) {
		sc_labels_clear(t->ns_all.v[i]);
		free(t->ns_all.v[i]);
	}
	sc_vec_free(&t->ns_all);
	pk_map_free(&t->ns_labels);
	memset(t, 0, sizeof(*t));
}

/* kube-apiserver labels every namespace with its own name */
#define NS_NAME_LABEL "kubernetes.io/metadata.name"

/* The value of key a namespaceSelector sees on namespace ns labelled l (NULL: none known). */
static const char *ns_label(const struct sc_labels *l, const char *ns, const char *key)
{
	const char *v = sc_labels_get(l, key);

	return !v && strcmp(key, NS_NAME_LABEL) == 0 ? ns : v;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Does every label of a read the same on b? */
static bool ns_labels_within(const struct sc_labels *a, const struct sc_labels *b, const char *ns)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (!same_str(ns_label(a, ns, a->kv[2 * i]), ns_label(b, ns, a->kv[2 * i])))
			return false;
	return true;
}

bool sc_ns_labels_same(const struct sc_labels *a, const struct sc_labels *b, const char *ns)
{
	return same_str(ns_label(a, ns, NS_NAME_LABEL), ns_label(b, ns, NS_NAME_LABEL)) &&
	       ns_labels_within(a, b, ns) && ns_labels_within(b, a, ns);
}

static bool ns_match(const struct sc_terms *t, const struct sc_matcher *m, const char *ns)
{
	for (size_t i = 0; i < m->nns; i++)
		if (strcmp(m->ns[i], ns) == 0)
			return true;
	if (!m->has_nssel)
		return false;
	if (!m->nssel.nreqs)
		return true; /* {}: every namespace */
	const struct sc_labels *l = pk_map_get(&t->ns_labels, ns);
	char *kv[2] = {NS_NAME_LABEL, (char *)ns};
	struct sc_labels own = {.kv = kv, .n = 1};

	if (l && sc_labels_get(l, kv[0]))
		return sc_lsel_match(&m->nssel, l);
	if (!l)
		return sc_lsel_match(&m->nssel, &own);
	/* the namespace's labels and its name label together */
	struct sc_labels both = {.kv = malloc((2 * l->n + 2) * sizeof(char *)), .n = l->n + 1};
	bool ok;

	if (!both.kv)
		return false;
	if (l->n) /* a Namespace without labels has none to copy */
		memcpy(both.kv, l->kv, 2 * l->n * sizeof(char *));
	both.kv[2 * l->n] = kv[0];
	both.kv[2 * l->n + 1] = kv[1];
	ok = sc_lsel_match(&m->nssel, &both);
	free(both.kv);
	return ok;
}

bool sc_term_matches(const struct sc_terms *t, const struct sc_term *term, const char *ns,
		     const struct sc_labels *l)
{
	for (size_t i = 0; i < term->nm; i++)
		if (!ns_match(t, &term->m[i], ns) || !sc_lsel_match(&term->m[i].sel, l))
			return false;
	return term->nm > 0;
}

int sc_pod_where(const struct sc_pod *pod)
{
	if (pod->cycle.assumed >= 0)
		return pod->cycle.assumed;
	return pod->node >= 0 && !pod->cycle.sim_removed ? pod->node : -1;
}

static const struct sc_labels no_labels;

static const struct sc_labels *pod_labels(const struct sc_pod *pod)
{
	return pod->cons ? &pod->cons->labels : &no_labels;
}

/* Does pod count for term (a live_only term skips terminating pods)? */
static bool term_counts(const struct sc_terms *t, const struct sc_term *term,
			const struct sc_pod *pod)
{
	if (term->nm && term->m[0].live_only && pod->deleting)
		return false;
	return sc_term_matches(t, term, pod->ns, pod_labels(pod));
}

/* Move term's counts for a pod matching it on node. */
static void term_count(struct sc_term *term, int node, int sign)
{
	int d = term->part->node_dom[node];

	term->node_cnt[node] += sign;
	if (d >= 0) {
		term->dom_cnt[d] += sign;
		term->total += sign;
	}
}

int sc_term_build(struct sc_snapshot *snap, struct sc_term *term)
{
	struct sc_terms *t = &snap->terms;

	if (term->built)
		return 0;
	term->part = sc_snapshot_part(snap, term->topo_key);
	if (!term->part)
		return -ENOMEM;
	free(term->node_cnt);
	free(term->dom_cnt);
	free(term->own_cnt);
	term->nnodes = snap->nnodes;
	term->node_cnt = calloc(snap->nnodes + 1, sizeof(int));
	term->dom_cnt = calloc((size_t)term->part->ndom + 1, sizeof(int));
	term->own_cnt = calloc((size_t)term->part->ndom + 1, sizeof(int));
	if (!term->node_cnt || !term->dom_cnt || !term->own_cnt)
		return -ENOMEM;
	t->owners -= term->owners;
	term->total = term->owners = 0;
	for (size_t i = 0; t->pods && i < t->pods->n; i++) {
		const struct sc_pod *p = t->pods->v[i];
		int node = sc_pod_where(p), d;

		if (node < 0 || (size_t)node >= snap->nnodes)
			continue;
		if (term_counts(t, term, p))
			term_count(term, node, +1);
		d = term->part->node_dom[node];
		if (d >= 0 && t->owns && t->owns(p, term)) {
			term->own_cnt[d]++;
			term->owners++;
			t->owners++;
		}
	}
	term->built = true;
	return 0;
}

void sc_terms_parts_dropped(struct sc_snapshot *snap)
{
	for (size_t i = 0; i < snap->terms.n; i++) {
		struct sc_term *term = snap->terms.v[i];

		term->built = false;
		term->part = NULL;
		term->total = term->owners = 0;
	}
	snap->terms.owners = 0;
	snap->terms.stale = snap->terms.n > 0;
}

int sc_terms_ready(struct sc_snapshot *snap)
{
	int r;

	if (!snap->terms.stale)
		return 0;
	for (size_t i = 0; i < snap->terms.n; i++)
		if ((r = sc_term_build(snap, snap->terms.v[i])) < 0)
			return r;
	snap->terms.stale = false;
	return 0;
}

void sc_terms_charge(struct sc_snapshot *snap, const struct sc_pod *pod, int node, int sign)
{
	struct sc_terms *t = &snap->terms;

	t->charges++;
	for (size_t i = 0; i < t->n; i++) {
		struct sc_term *term = t->v[i];

		if (!term->built || (size_t)node >= term->nnodes)
			continue;
		if (term_counts(t, term, pod))
			term_count(term, node, sign);
	}
}

/* ---- invariant check --------------------------------------------------------------- */

int sc_terms_check(const struct sc_snapshot *snap, char *why, size_t whylen)
{
	const struct sc_terms *t = &snap->terms;
	int64_t owners = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct sc_term *term = t->v[i];
		int64_t total = 0, own = 0;

		if (!term->built)
			continue;
		for (int d = 0; d < term->part->ndom; d++) {
			total += term->dom_cnt[d];
			own += term->own_cnt[d];
			if (term->dom_cnt[d] < 0 || term->own_cnt[d] < 0) {
				snprintf(why, whylen, "term %s: negative count in domain %s",
					 term->id, term->part->values[d]);
				return -EUCLEAN;
			}
		}
		owners += own;
		if (total != term->total || own != term->owners) {
			snprintf(why, whylen, "term %s: totals %lld/%lld, domains sum to %lld/%lld",
				 term->id, (long long)term->total, (long long)term->owners,
				 (long long)total, (long long)own);
			return -EUCLEAN;
		}
		for (size_t p = 0; t->pods && p < t->pods->n; p++) {
			const struct sc_pod *pod = t->pods->v[p];
			int node = sc_pod_where(pod);

			if (node >= 0 && (size_t)node < term->nnodes && term_counts(t, term, pod))
				total--;
		}
		/* pods on nodes without the key count on the node only */
		for (size_t n = 0; n < term->nnodes; n++)
			if (term->part->node_dom[n] < 0)
				total += term->node_cnt[n];
		if (total != 0) {
			snprintf(why, whylen, "term %s: counts differ from a recount by %lld",
				 term->id, (long long)total);
			return -EUCLEAN;
		}
	}
	if (owners != t->owners) {
		snprintf(why, whylen, "term index: %lld owners, terms sum to %lld",
			 (long long)t->owners, (long long)owners);
		return -EUCLEAN;
	}
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objects.c — typed views of Nodes, Pods and PriorityClasses.
 *
 * A view is a small struct of arrays whose strings point into the object's
 * jansson tree; the view holds a reference on the tree (view->raw), so the
 * strings stay valid until the view is freed.  Decoding walks the tree once,
 * building the view and adding one field-path message per structural problem
 * (wrong type, unknown enum value, bad quantity) to the caller's error list;
 * the public decoders then fail as a whole, while validation (validate.c)
 * keeps the partial view to check the remaining rules.  The shared field
 * helpers (paths, typed getters, quantities) live here too.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"
#include "kernel/lib/macro.h"
#include "topology/topology.h"

/* ---- field paths ----------------------------------------------------------- */

/*
 * Append a, b and c (each may be NULL) to p, truncated to its buffer as
 * snprintf truncates; the old length (for pk_path_pop).  Without printf:
 * every field a decoder reads is named on the way, errors or not.
 */
static size_t path_append(struct pk_path *p, const char *a, const char *b, const char *c)
{
	const char *part[3] = {a, b, c};
	size_t old = p->len;

	if (p->len >= sizeof(p->s) - 1)
		return old;
	for (int i = 0; i < 3; i++) {
		size_t n = part[i] ? strlen(part[i]) : 0, room = sizeof(p->s) - 1 - p->len;

		memcpy(p->s + p->len, part[i] ? part[i] : "", n < room ? n : room);
		p->len += n < room ? n : room;
	}
	p->s[p->len] = '\0';
	return old;
}

size_t pk_path_key(struct pk_path *p, const char *key)
{
	return path_append(p, p->len ? "." : NULL, key ? key : "(null)", NULL);
}

size_t pk_path_index(struct pk_path *p, size_t i)
{
	char num[24], *d = num + sizeof(num) - 1;

	*d = '\0';
	do
		*--d = (char)('0' + i % 10);
	while ((i /= 10) > 0);
	return path_append(p, "[", d, "]");
}

size_t pk_path_mapkey(struct pk_path *p, const char *key)
{
	return path_append(p, "[", key ? key : "(null)", "]");
}

void pk_path_pop(struct pk_path *p, size_t len)
{
	if (len < sizeof(p->s)) {
		p->len = len;
		p->s[len] = '\0';
	}
}

const char *pk_value_text(const json_t *v, char *buf, size_t len)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_PRESERVE_ORDER);

	if (!s) {
		snprintf(buf, len, "?");
		return buf;
	}
	if (strlen(s) > 80)
		snprintf(buf, len, "%.72s...", s);
	else
		snprintf(buf, len, "%s", s);
	free(s);
	return buf;
}

/* ---- typed fields ------------------------------------------------------------- */

static void wrong_type(const json_t *v, const char *key, struct pk_path *p, struct pk_errors *errs,
		       const char *want)
{
	char text[96];
	size_t old = pk_path_key(p, key);

	pk_errors_add(errs, "%s: Invalid value: %s: must be %s", p->s,
		      pk_value_text(v, text, sizeof(text)), want);
	pk_path_pop(p, old);
}

bool pk_field_string(const json_t *parent, const char *key, struct pk_path *p,
		     struct pk_errors *errs, const char **ret)
{
	json_t *v = json_object_get(parent, key);

	if (!v || json_is_null(v))
		return true;
	if (!json_is_string(v)) {
		wrong_type(v, key, p, errs, "a string");
		return false;
	}
	*ret = json_string_value(v);
	return true;
}

bool pk_field_int32(const json_t *parent, const char *key, struct pk_path *p,
		    struct pk_errors *errs, bool *ret_has, int32_t *ret)
{
	json_t *v = json_object_get(parent, key);
	json_int_t i;

	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v)) {
		wrong_type(v, key, p, errs, "an integer");
		return false;
	}
	i = json_integer_value(v);
	if (i < INT32_MIN || i > INT32_MAX) {
		wrong_type(v, key, p, errs, "a 32-bit integer");
		return false;
	}
	if (ret_has)
		*ret_has = true;
	*ret = (int32_t)i;
	return true;
}

bool pk_field_bool(const json_t *parent, const char *key, struct pk_path *p, struct pk_errors *errs,
		   bool *ret)
{
	json_t *v = json_object_get(parent, key);

	if (!v || json_is_null(v))
		return true;
	if (!json_is_boolean(v)) {
		wrong_type(v, key, p, errs, "a boolean");
		return false;
	}
	*ret = json_is_true(v);
	return true;
}

json_t *pk_field_object(const json_t *parent, const char *key, struct pk_path *p,
			struct pk_errors *errs)
{
	json_t *v = json_object_get(parent, key);

	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_object(v)) {
		wrong_type(v, key, p, errs, "an object");
		return NULL;
	}
	return v;
}

json_t *pk_field_array(const json_t *parent, const char *key, struct pk_path *p,
		       struct pk_errors *errs)
{
	json_t *v = json_object_get(parent, key);

	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_array(v)) {
		wrong_type(v, key, p, errs, "a list");
		return NULL;
	}
	return v;
}

int pk_quantity_of(const json_t *v, int64_t *ret_milli)
{
	if (json_is_string(v))
		return topo_quantity_parse(json_string_value(v), ret_milli);
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		if (i > INT64_MAX / 1000 || i < INT64_MIN / 1000)
			return -ERANGE;
		*ret_milli = i * 1000;
		return 0;
	}
	if (json_is_real(v)) {
		double d = ceil(json_real_value(v) * 1000.0);

		if (!isfinite(d) || d >= 9.2e18 || d <= -9.2e18)
			return -ERANGE;
		*ret_milli = (int64_t)d;
		return 0;
	}
	return -EINVAL;
}

/* ---- resource lists ---------------------------------------------------------------- */

struct reslist {
	struct pk_resource *v;
	size_t n, cap;
};

static struct pk_resource *res_find(struct reslist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

enum res_op { RES_SET, RES_ADD, RES_MAX };

static int res_put(struct reslist *l, const char *name, int64_t milli, enum res_op op)
{
	struct pk_resource *r = res_find(l, name);

	if (r) {
		if (op == RES_ADD)
			r->milli = sat_add(r->milli, milli);
		else if (op == RES_SET || milli > r->milli)
			r->milli = milli;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct pk_resource *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].name = name;
	l->v[l->n].milli = milli;
	l->n++;
	return 0;
}

/*
 * A resource map ("requests", "allocatable") at p into l with op.  Bad or
 * negative quantities are reported and skipped.
 */
static int res_decode(const json_t *map, struct pk_path *p, struct pk_errors *errs,
		      struct reslist *l, enum res_op op)
{
	const char *name;
	json_t *v;
	char text[96];

	json_object_foreach((json_t *)map, name, v)
	{
		int64_t milli;
		size_t old = pk_path_mapkey(p, name);
		int ret = pk_quantity_of(v, &milli);

		if (ret < 0) {
			pk_errors_add(errs, "%s: Invalid value: %s: must be a valid quantity%s",
				      p->s, pk_value_text(v, text, sizeof(text)),
				      ret == -ERANGE ? " (out of range)" : "");
		} else if (milli < 0) {
			pk_errors_add(errs,
				      "%s: Invalid value: %s: must be greater than or equal to 0",
				      p->s, pk_value_text(v, text, sizeof(text)));
		} else if ((ret = res_put(l, name, milli, op)) < 0) {
			pk_path_pop(p, old);
			return ret;
		}
		pk_path_pop(p, old);
	}
	return 0;
}

/* ---- metadata ------------------------------------------------------------------------ */

int pk_meta_decode(json_t *obj, const struct pk_type *t, struct pk_meta *meta,
		   struct pk_errors *errs)
{
	struct pk_path p = {0};
	json_t *md, *labels, *v;
	const char *ts = NULL, *key;
	size_t i = 0;

	memset(meta, 0, sizeof(*meta));
	meta->creation = INT64_MIN;
	md = pk_field_object(obj, "metadata", &p, errs);
	pk_path_key(&p, "metadata");
	pk_field_string(md, "name", &p, errs, &meta->name);
	pk_field_string(md, "namespace", &p, errs, &meta->namespace);
	if (!meta->namespace || !*meta->namespace)
		meta->namespace = !t || t->namespaced ? "default" : NULL;
	pk_field_string(md, "uid", &p, errs, &meta->uid);
	if (pk_field_string(md, "creationTimestamp", &p, errs, &ts) && ts &&
	    pk_time_parse(ts, &meta->creation) < 0)
		pk_errors_add(errs,
			      "metadata.creationTimestamp: Invalid value: \"%s\": must be an "
			      "RFC 3339 time (e.g. 2024-05-01T10:00:00Z)",
			      ts);
	v = json_object_get(md, "deletionTimestamp");
	meta->deleting = v && !json_is_null(v);
	labels = pk_field_object(md, "labels", &p, errs);
	if (json_object_size(labels)) {
		meta->labels = calloc(json_object_size(labels), sizeof(*meta->labels));
		if (!meta->labels)
			return -ENOMEM;
	}
	pk_path_key(&p, "labels");
	json_object_foreach(labels, key, v)
	{
		if (!json_is_string(v)) {
			char text[96];

			pk_errors_add(errs, "%s[%s]: Invalid value: %s: must be a string", p.s, key,
				      pk_value_text(v, text, sizeof(text)));
			continue;
		}
		meta->labels[i].key = key;
		meta->labels[i].value = json_string_value(v);
		i++;
	}
	meta->nlabels = i;
	return 0;
}

void pk_meta_clear(struct pk_meta *meta)
{
	free(meta->labels);
	meta->labels = NULL;
	meta->nlabels = 0;
}

const char *pk_meta_label(const struct pk_meta *meta, const char *key)
{
	if (!meta || !key)
		return NULL;
	for (size_t i = 0; i < meta->nlabels; i++)
		if (strcmp(meta->labels[i].key, key) == 0)
			return meta->labels[i].value;
	return NULL;
}

/* ---- enum tables ------------------------------------------------------------------------ */

struct enum_name {
	const char *name;
	int value;
};

static const struct enum_name taint_effects[] = {
    {"NoExecute", PK_TAINT_NO_EXECUTE},
    {"NoSchedule", PK_TAINT_NO_SCHEDULE},
    {"PreferNoSchedule", PK_TAINT_PREFER_NO_SCHEDULE},
    {NULL, 0},
};

static const struct enum_name selector_ops[] = {
    {"DoesNotExist", PK_SEL_DOES_NOT_EXIST},
    {"Exists", PK_SEL_EXISTS},
    {"Gt", PK_SEL_GT},
    {"In", PK_SEL_IN},
    {"Lt", PK_SEL_LT},
    {"NotIn", PK_SEL_NOT_IN},
    {NULL, 0},
};

static const struct enum_name toleration_ops[] = {
    {"Equal", PK_TOL_EQUAL},
    {"Exists", PK_TOL_EXISTS},
    {NULL, 0},
};

/* Look s up; on failure add "path: Unsupported value: ..." listing the names. */
static bool enum_decode(const struct enum_name *t, const char *s, struct pk_path *p,
			struct pk_errors *errs, int *ret)
{
	char list[256] = "";
	size_t n = 0;

	for (const struct enum_name *e = t; e->name; e++) {
		if (strcmp(e->name, s) == 0) {
			*ret = e->value;
			return true;
		}
	}
	for (const struct enum_name *e = t; e->name; e++)
		n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s\"%s\"",
				      e == t ? "" : ", ", e->name);
	pk_errors_add(errs, "%s: Unsupported value: \"%s\": supported values: %s", p->s, s, list);
	return false;
}

/* ---- nodes ----------------------------------------------------------------------------------- */

static void taint_decode(json_t *t, struct pk_path *p, struct pk_errors *errs, struct pk_taint *ret)
{
	const char *effect = NULL;
	int e = PK_TAINT_NO_SCHEDULE;
	size_t old;

	if (!json_is_object(t)) {
		char text[96];

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(t, text, sizeof(text)));
		return;
	}
	pk_field_string(t, "key", p, errs, &ret->key);
	pk_field_string(t, "value", p, errs, &ret->value);
	pk_field_string(t, "effect", p, errs, &effect);
	old = pk_path_key(p, "key");
	if (!ret->key || !*ret->key)
		pk_errors_add(errs, "%s: Required value", p->s);
	pk_path_pop(p, old);
	old = pk_path_key(p, "effect");
	if (!effect || !*effect)
		pk_errors_add(errs, "%s: Required value", p->s);
	else if (enum_decode(taint_effects, effect, p, errs, &e))
		ret->effect = (enum pk_taint_effect)e;
	pk_path_pop(p, old);
}

struct pk_node *pk_node_decode_partial(json_t *obj, struct pk_errors *errs)
{
	struct pk_node *node = calloc(1, sizeof(*node));
	struct pk_path p = {0};
	struct reslist res = {0};
	json_t *spec, *status, *taints, *alloc;
	size_t i;

	if (!node)
		return NULL;
	node->raw = json_incref(obj);
	if (pk_meta_decode(obj, &pk_type_node, &node->meta, errs) < 0)
		goto oom;
	spec = pk_field_object(obj, "spec", &p, errs);
	pk_path_key(&p, "spec");
	pk_field_bool(spec, "unschedulable", &p, errs, &node->unschedulable);
	taints = pk_field_array(spec, "taints", &p, errs);
	if (json_array_size(taints)) {
		node->taints = calloc(json_array_size(taints), sizeof(*node->taints));
		if (!node->taints)
			goto oom;
		node->ntaints = json_array_size(taints);
	}
	pk_path_key(&p, "taints");
	for (i = 0; i < node->ntaints; i++) {
		size_t old = pk_path_index(&p, i);

		taint_decode(json_array_get(taints, i), &p, errs, &node->taints[i]);
		pk_path_pop(&p, old);
	}
	pk_path_pop(&p, 0);
	status = pk_field_object(obj, "status", &p, errs);
	pk_path_key(&p, "status");
	alloc = pk_field_object(status, "allocatable", &p, errs);
	if (alloc) {
		pk_path_key(&p, "allocatable");
	} else {
		alloc = pk_field_object(status, "capacity", &p, errs);
		pk_path_key(&p, "capacity");
	}
	if (alloc && res_decode(alloc, &p, errs, &res, RES_SET) < 0)
		goto oom_res;
	if (!res_find(&res, "pods") && res_put(&res, "pods", 110000, RES_SET) < 0)
		goto oom_res;
	node->allocatable = res.v;
	node->nallocatable = res.n;
	return node;
oom_res:
	free(res.v);
oom:
	pk_node_free(node);
	return NULL;
}

void pk_node_free(struct pk_node *node)
{
	if (!node)
		return;
	pk_meta_clear(&node->meta);
	free(node->taints);
	free(node->allocatable);
	json_decref(node->raw);
	free(node);
}

int64_t pk_node_allocatable(const struct pk_node *node, const char *resource)
{
	if (!node || !resource)
		return 0;
	for (size_t i = 0; i < node->nallocatable; i++)
		if (strcmp(node->allocatable[i].name, resource) == 0)
			return node->allocatable[i].milli;
	return 0;
}

/* ---- pods ------------------------------------------------------------------------------------ */

static int kv_decode(const json_t *map, struct pk_path *p, struct pk_errors *errs,
		     struct pk_kv **ret, size_t *ret_n)
{
	const char *key;
	json_t *v;
	size_t n = 0;

	if (!json_object_size(map))
		return 0;
	*ret = calloc(json_object_size(map), sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	json_object_foreach((json_t *)map, key, v)
	{
		if (!json_is_string(v)) {
			char text[96];

			pk_errors_add(errs, "%s[%s]: Invalid value: %s: must be a string", p->s,
				      key, pk_value_text(v, text, sizeof(text)));
			continue;
		}
		(*ret)[n].key = key;
		(*ret)[n].value = json_string_value(v);
		n++;
	}
	*ret_n = n;
	return 0;
}

static bool is_integer_text(const char *s)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	(void)strtoll(s, &end, 10);
	return !*end && errno == 0;
}

static void req_check_values(struct pk_selector_req *r, struct pk_path *p, struct pk_errors *errs)
{
	size_t old = pk_path_key(p, "values");

	switch (r->op) {
	case PK_SEL_IN:
	case PK_SEL_NOT_IN:
		if (!r->nvalues)
			pk_errors_add(errs,
				      "%s: Required value: must be specified when `operator` "
				      "is 'In' or 'NotIn'",
				      p->s);
		break;
	case PK_SEL_EXISTS:
	case PK_SEL_DOES_NOT_EXIST:
		if (r->nvalues)
			pk_errors_add(errs,
				      "%s: Forbidden: may not be specified when `operator` is "
				      "'Exists' or 'DoesNotExist'",
				      p->s);
		break;
	case PK_SEL_GT:
	case PK_SEL_LT:
		if (r->nvalues != 1)
			pk_errors_add(errs,
				      "%s: Required value: must be specified single value when "
				      "`operator` is 'Lt' or 'Gt'",
				      p->s);
		else if (!is_integer_text(r->values[0]))
			pk_errors_add(errs, "%s[0]: Invalid value: \"%s\": must be an integer",
				      p->s, r->values[0]);
		break;
	}
	pk_path_pop(p, old);
}

static int req_decode(json_t *e, bool field, struct pk_path *p, struct pk_errors *errs,
		      struct pk_selector_req *r)
{
	const char *op = NULL;
	json_t *values;
	int o = PK_SEL_IN;
	bool op_ok = false;
	size_t old;

	if (!json_is_object(e)) {
		char text[96];

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(e, text, sizeof(text)));
		return 0;
	}
	r->field = field;
	pk_field_string(e, "key", p, errs, &r->key);
	pk_field_string(e, "operator", p, errs, &op);
	old = pk_path_key(p, "key");
	if (!r->key || !*r->key)
		pk_errors_add(errs, "%s: Required value", p->s);
	else if (field && strcmp(r->key, "metadata.name") != 0)
		pk_errors_add(errs,
			      "%s: Invalid value: \"%s\": a valid field selector key must be "
			      "metadata.name",
			      p->s, r->key);
	pk_path_pop(p, old);
	old = pk_path_key(p, "operator");
	if (!op || !*op)
		pk_errors_add(errs, "%s: Required value", p->s);
	else if ((op_ok = enum_decode(selector_ops, op, p, errs, &o)))
		r->op = (enum pk_selector_op)o;
	pk_path_pop(p, old);
	values = pk_field_array(e, "values", p, errs);
	if (json_array_size(values)) {
		r->values = calloc(json_array_size(values), sizeof(*r->values));
		if (!r->values)
			return -ENOMEM;
	}
	for (size_t i = 0; i < json_array_size(values); i++) {
		json_t *v = json_array_get(values, i);

		if (json_is_string(v)) {
			r->values[r->nvalues++] = json_string_value(v);
		} else {
			char text[96];

			old = pk_path_key(p, "values");
			pk_errors_add(errs, "%s[%zu]: Invalid value: %s: must be a string", p->s, i,
				      pk_value_text(v, text, sizeof(text)));
			pk_path_pop(p, old);
		}
	}
	if (op_ok)
		req_check_values(r, p, errs);
	return 0;
}

static int term_decode(json_t *t, struct pk_path *p, struct pk_errors *errs,
		       struct pk_selector_term *term)
{
	json_t *exprs, *fields;
	size_t n, k = 0;
	int ret;

	if (!json_is_object(t)) {
		char text[96];

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(t, text, sizeof(text)));
		return 0;
	}
	exprs = pk_field_array(t, "matchExpressions", p, errs);
	fields = pk_field_array(t, "matchFields", p, errs);
	n = json_array_size(exprs) + json_array_size(fields);
	if (!n)
		return 0; /* an empty term matches no node */
	term->reqs = calloc(n, sizeof(*term->reqs));
	if (!term->reqs)
		return -ENOMEM;
	term->nreqs = n;
	for (int pass = 0; pass < 2; pass++) {
		json_t *list = pass ? fields : exprs;
		size_t old = pk_path_key(p, pass ? "matchFields" : "matchExpressions");

		for (size_t i = 0; i < json_array_size(list); i++) {
			size_t o2 = pk_path_index(p, i);

			ret = req_decode(json_array_get(list, i), pass, p, errs, &term->reqs[k++]);
			pk_path_pop(p, o2);
			if (ret < 0)
				return ret;
		}
		pk_path_pop(p, old);
	}
	return 0;
}

static int affinity_decode(json_t *spec, struct pk_path *p, struct pk_errors *errs,
			   struct pk_pod *pod)
{
	static const char *const steps[] = {"affinity", "nodeAffinity",
					    "requiredDuringSchedulingIgnoredDuringExecution"};
	json_t *cur = spec, *terms;
	size_t old = p->len, n;
	int ret = 0;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && cur; i++) {
		cur = pk_field_object(cur, steps[i], p, errs);
		pk_path_key(p, steps[i]);
	}
	terms = pk_field_array(cur, "nodeSelectorTerms", p, errs);
	pk_path_key(p, "nodeSelectorTerms");
	if (cur && !terms)
		pk_errors_add(errs, "%s: Required value: must have at least one node selector term",
			      p->s);
	n = json_array_size(terms);
	if (n) {
		pod->affinity = calloc(n, sizeof(*pod->affinity));
		if (!pod->affinity)
			return -ENOMEM;
		pod->naffinity = n;
	}
	for (size_t i = 0; i < n && ret == 0; i++) {
		size_t o2 = pk_path_index(p, i);

		ret = term_decode(json_array_get(terms, i), p, errs, &pod->affinity[i]);
		pk_path_pop(p, o2);
	}
	pk_path_pop(p, old);
	return ret;
}

static void toleration_decode(json_t *t, struct pk_path *p, struct pk_errors *errs,
			      struct pk_toleration *tol)
{
	const char *op = NULL, *effect = NULL;
	int v;
	size_t old;

	if (!json_is_object(t)) {
		char text[96];

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(t, text, sizeof(text)));
		return;
	}
	pk_field_string(t, "key", p, errs, &tol->key);
	pk_field_string(t, "operator", p, errs, &op);
	pk_field_string(t, "value", p, errs, &tol->value);
	pk_field_string(t, "effect", p, errs, &effect);
	old = pk_path_key(p, "operator");
	tol->op = PK_TOL_EQUAL;
	if (op && *op && enum_decode(toleration_ops, op, p, errs, &v))
		tol->op = (enum pk_toleration_op)v;
	if (tol->op == PK_TOL_EXISTS && tol->value && *tol->value)
		pk_errors_add(errs,
			      "%s: Invalid value: \"%s\": value must be empty when `operator` "
			      "is 'Exists'",
			      p->s, tol->value);
	if (tol->op == PK_TOL_EQUAL && (!tol->key || !*tol->key))
		pk_errors_add(errs,
			      "%s: Invalid value: \"%s\": operator must be Exists when `key` "
			      "is empty, which means \"match all values and all keys\"",
			      p->s, op ? op : "Equal");
	pk_path_pop(p, old);
	old = pk_path_key(p, "effect");
	if (effect && *effect && enum_decode(taint_effects, effect, p, errs, &v)) {
		tol->has_effect = true;
		tol->effect = (enum pk_taint_effect)v;
	}
	pk_path_pop(p, old);
}

/* One container's effective requests: requests, defaulted from limits. */
static int container_requests(json_t *c, struct pk_path *p, struct pk_errors *errs,
			      struct reslist *one)
{
	json_t *res, *req, *lim;
	size_t old;
	int ret = 0;

	if (!json_is_object(c)) {
		char text[96];

		pk_errors_add(errs, "%s: Invalid value: %s: must be an object", p->s,
			      pk_value_text(c, text, sizeof(text)));
		return 0;
	}
	res = pk_field_object(c, "resources", p, errs);
	old = pk_path_key(p, "resources");
	req = pk_field_object(res, "requests", p, errs);
	lim = pk_field_object(res, "limits", p, errs);
	if (lim) {
		size_t o2 = pk_path_key(p, "limits");

		ret = res_decode(lim, p, errs, one, RES_SET);
		pk_path_pop(p, o2);
	}
	if (req && ret == 0) {
		size_t o2 = pk_path_key(p, "requests");

		ret = res_decode(req, p, errs, one, RES_SET);
		pk_path_pop(p, o2);
	}
	pk_path_pop(p, old);
	return ret;
}

static int64_t res_get(const struct reslist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return l->v[i].milli;
	return 0;
}

/*
 * Init containers run one at a time before the others, except restartable
 * ("sidecar", restartPolicy: Always) ones, which keep running: each init
 * container needs its own requests plus every sidecar started before it.
 * Into init: the peak; into sidecars: what the sidecars hold at the end.
 */
static int init_requests(json_t *cs, struct pk_path *p, struct pk_errors *errs,
			 struct reslist *init, struct reslist *sidecars)
{
	int ret = 0;

	for (size_t i = 0; i < json_array_size(cs) && ret == 0; i++) {
		json_t *c = json_array_get(cs, i);
		const char *policy = json_string_value(json_object_get(c, "restartPolicy"));
		bool sidecar = policy && strcmp(policy, "Always") == 0;
		struct reslist one = {0};
		size_t o2 = pk_path_index(p, i);

		ret = container_requests(c, p, errs, &one);
		for (size_t k = 0; k < one.n && ret == 0; k++) {
			const char *name = one.v[k].name;

			if (sidecar)
				ret = res_put(sidecars, name, one.v[k].milli, RES_ADD);
			else
				ret = res_put(init, name,
					      sat_add(one.v[k].milli, res_get(sidecars, name)),
					      RES_MAX);
		}
		for (size_t k = 0; sidecar && k < sidecars->n && ret == 0; k++)
			ret = res_put(init, sidecars->v[k].name, sidecars->v[k].milli, RES_MAX);
		free(one.v);
		pk_path_pop(p, o2);
	}
	return ret;
}

/*
 * The pod's requests as the scheduler counts them: the sum over containers
 * and sidecars, at least the peak of the init containers, plus spec.overhead.
 */
static int pod_requests(json_t *spec, struct pk_path *p, struct pk_errors *errs,
			struct reslist *total)
{
	struct reslist init = {0}, sidecars = {0};
	json_t *cs, *overhead;
	size_t old;
	int ret = 0;

	cs = pk_field_array(spec, "containers", p, errs);
	old = pk_path_key(p, "containers");
	for (size_t i = 0; i < json_array_size(cs) && ret == 0; i++) {
		struct reslist one = {0};
		size_t o2 = pk_path_index(p, i);

		ret = container_requests(json_array_get(cs, i), p, errs, &one);
		for (size_t k = 0; k < one.n && ret == 0; k++)
			ret = res_put(total, one.v[k].name, one.v[k].milli, RES_ADD);
		free(one.v);
		pk_path_pop(p, o2);
	}
	pk_path_pop(p, old);
	cs = pk_field_array(spec, "initContainers", p, errs);
	old = pk_path_key(p, "initContainers");
	if (ret == 0)
		ret = init_requests(cs, p, errs, &init, &sidecars);
	pk_path_pop(p, old);
	for (size_t k = 0; k < sidecars.n && ret == 0; k++)
		ret = res_put(total, sidecars.v[k].name, sidecars.v[k].milli, RES_ADD);
	for (size_t k = 0; k < init.n && ret == 0; k++)
		ret = res_put(total, init.v[k].name, init.v[k].milli, RES_MAX);
	free(init.v);
	free(sidecars.v);
	overhead = pk_field_object(spec, "overhead", p, errs);
	if (overhead && ret == 0) {
		old = pk_path_key(p, "overhead");
		ret = res_decode(overhead, p, errs, total, RES_ADD);
		pk_path_pop(p, old);
	}
	return ret;
}

static int pod_spec_decode(json_t *spec, struct pk_path *p, struct pk_errors *errs,
			   struct pk_pod *pod)
{
	struct reslist req = {0};
	json_t *sg, *sel, *tols;
	size_t old;
	int ret;

	sg = pk_field_object(spec, "schedulingGroup", p, errs);
	old = pk_path_key(p, "schedulingGroup");
	pk_field_string(sg, "podGroupName", p, errs, &pod->pod_group);
	pk_path_pop(p, old);
	pk_field_string(spec, "nodeName", p, errs, &pod->node_name);
	if (pod->node_name && !*pod->node_name)
		pod->node_name = NULL;
	pk_field_int32(spec, "priority", p, errs, &pod->has_priority, &pod->priority);
	pk_field_string(spec, "priorityClassName", p, errs, &pod->priority_class);
	sel = pk_field_object(spec, "nodeSelector", p, errs);
	old = pk_path_key(p, "nodeSelector");
	ret = kv_decode(sel, p, errs, &pod->node_selector, &pod->nnode_selector);
	pk_path_pop(p, old);
	if (ret < 0 || (ret = affinity_decode(spec, p, errs, pod)) < 0)
		return ret;
	tols = pk_field_array(spec, "tolerations", p, errs);
	if (json_array_size(tols)) {
		pod->tolerations = calloc(json_array_size(tols), sizeof(*pod->tolerations));
		if (!pod->tolerations)
			return -ENOMEM;
		pod->ntolerations = json_array_size(tols);
	}
	old = pk_path_key(p, "tolerations");
	for (size_t i = 0; i < pod->ntolerations; i++) {
		size_t o2 = pk_path_index(p, i);

		toleration_decode(json_array_get(tols, i), p, errs, &pod->tolerations[i]);
		pk_path_pop(p, o2);
	}
	pk_path_pop(p, old);
	ret = pod_requests(spec, p, errs, &req);
	pod->requests = req.v;
	pod->nrequests = req.n;
	return ret;
}

/* The group a pod names by label when spec.schedulingGroup is absent. */
static void pod_group_label(struct pk_pod *pod)
{
	static const char *const keys[] = {TOPO_LABEL_POD_GROUP, TOPO_LABEL_POD_GROUP_COSCHED};

	for (size_t k = 0; !pod->pod_group && k < sizeof(keys) / sizeof(keys[0]); k++)
		for (size_t i = 0; i < pod->meta.nlabels; i++)
			if (strcmp(pod->meta.labels[i].key, keys[k]) == 0) {
				pod->pod_group = pod->meta.labels[i].value;
				pod->pod_group_label = keys[k];
				break;
			}
}

const char *pk_pod_group_name(const json_t *pod)
{
	const char *g = pk_get_string(pod, "spec.schedulingGroup.podGroupName");
	json_t *labels = pk_get(pod, "metadata.labels");

	if (!g)
		g = json_string_value(json_object_get(labels, TOPO_LABEL_POD_GROUP));
	if (!g)
		g = json_string_value(json_object_get(labels, TOPO_LABEL_POD_GROUP_COSCHED));
	return g;
}

struct pk_pod *pk_pod_decode_partial(json_t *obj, struct pk_errors *errs)
{
	struct pk_pod *pod = calloc(1, sizeof(*pod));
	struct pk_path p = {0};
	json_t *spec;

	if (!pod)
		return NULL;
	pod->raw = json_incref(obj);
	if (pk_meta_decode(obj, &pk_type_pod, &pod->meta, errs) < 0)
		goto oom;
	spec = pk_field_object(obj, "spec", &p, errs);
	pk_path_key(&p, "spec");
	if (pod_spec_decode(spec, &p, errs, pod) < 0)
		goto oom;
	pod_group_label(pod);
	return pod;
oom:
	pk_pod_free(pod);
	return NULL;
}

void pk_pod_free(struct pk_pod *pod)
{
	if (!pod)
		return;
	pk_meta_clear(&pod->meta);
	free(pod->node_selector);
	for (size_t i = 0; i < pod->naffinity; i++) {
		for (size_t k = 0; k < pod->affinity[i].nreqs; k++)
			free(pod->affinity[i].reqs[k].values);
		free(pod->affinity[i].reqs);
	}
	free(pod->affinity);
	free(pod->tolerations);
	free(pod->requests);
	json_decref(pod->raw);
	free(pod);
}

int64_t pk_pod_request(const struct pk_pod *pod, const char *resource)
{
	if (!pod || !resource)
		return 0;
	for (size_t i = 0; i < pod->nrequests; i++)
		if (strcmp(pod->requests[i].name, resource) == 0)
			return pod->requests[i].milli;
	return 0;
}

/* ---- priority classes
 * ---------------------------------------------------------------------------- */

struct pk_priority_class *pk_priority_class_decode_partial(json_t *obj, struct pk_errors *errs)
{
	struct pk_priority_class *pc = calloc(1, sizeof(*pc));
	struct pk_path p = {0};
	bool has = false;

	if (!pc)
		return NULL;
	pc->raw = json_incref(obj);
	if (pk_meta_decode(obj, &pk_type_priority_class, &pc->meta, errs) < 0) {
		pk_priority_class_free(pc);
		return NULL;
	}
	if (pk_field_int32(obj, "value", &p, errs, &has, &pc->value) && !has)
		pk_errors_add(errs, "value: Required value");
	pk_field_bool(obj, "globalDefault", &p, errs, &pc->global_default);
	return pc;
}

void pk_priority_class_free(struct pk_priority_class *pc)
{
	if (!pc)
		return;
	pk_meta_clear(&pc->meta);
	json_decref(pc->raw);
	free(pc);
}

/* ---- public decoders: all or nothing
 * -------------------------------------------------------------- */

#define DECODE_ALL_OR_NOTHING(type, partial, destroy)                                              \
	do {                                                                                       \
		struct pk_errors local = {0}, *e = errs ? errs : &local;                           \
		size_t n0 = e->n;                                                                  \
		struct type *v;                                                                    \
                                                                                                   \
		if (!json_is_object(obj)) {                                                        \
			pk_errors_add(e, "<object>: Invalid value: must be an object");            \
			pk_errors_clear(&local);                                                   \
			return -EINVAL;                                                            \
		}                                                                                  \
		v = partial(obj, e);                                                               \
		if (!v) {                                                                          \
			pk_errors_clear(&local);                                                   \
			return -ENOMEM;                                                            \
		}                                                                                  \
		if (e->n != n0) {                                                                  \
			destroy(v);                                                                \
			pk_errors_clear(&local);                                                   \
			return -EINVAL;                                                            \
		}                                                                                  \
		*ret = v;                                                                          \
		return 0;                                                                          \
	} while (0)

int pk_node_decode(json_t *obj, struct pk_node **ret, struct pk_errors *errs)
{
	DECODE_ALL_OR_NOTHING(pk_node, pk_node_decode_partial, pk_node_free);
}

static int default_host_ports(json_t *containers)
{
	size_t i, k;
	json_t *c, *p;

	json_array_foreach(containers, i, c)
	{
		json_array_foreach(json_object_get(c, "ports"), k, p)
		{
			json_t *hp = json_object_get(p, "hostPort"),
			       *cp = json_object_get(p, "containerPort");

			if (!json_is_object(p) || !json_is_integer(cp) ||
			    (hp && !json_is_null(hp) &&
			     !(json_is_integer(hp) && json_integer_value(hp) == 0)))
				continue;
			if (json_object_set_new(p, "hostPort",
						json_integer(json_integer_value(cp))) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int pk_pod_default_host_ports(json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec");
	int r;

	if (!json_is_true(json_object_get(spec, "hostNetwork")))
		return 0;
	r = default_host_ports(json_object_get(spec, "containers"));
	return r < 0 ? r : default_host_ports(json_object_get(spec, "initContainers"));
}

int pk_pod_decode(json_t *obj, struct pk_pod **ret, struct pk_errors *errs)
{
	DECODE_ALL_OR_NOTHING(pk_pod, pk_pod_decode_partial, pk_pod_free);
}

int pk_priority_class_decode(json_t *obj, struct pk_priority_class **ret, struct pk_errors *errs)
{
	DECODE_ALL_OR_NOTHING(pk_priority_class, pk_priority_class_decode_partial,
			      pk_priority_class_free);
}

int pk_group_decode(json_t *obj, struct pk_group **ret, struct pk_errors *errs)
{
	DECODE_ALL_OR_NOTHING(pk_group, pk_group_decode_partial, pk_group_free);
}

int pk_workload_decode(json_t *obj, struct pk_workload **ret, struct pk_errors *errs)
{
	DECODE_ALL_OR_NOTHING(pk_workload, pk_workload_decode_partial, pk_workload_free);
}

const char *pk_event_type_to_string(enum pk_event_type type)
{
	static const char *const names[] = {"ADDED", "MODIFIED", "DELETED"};
	return PK_STRING_TABLE_LOOKUP(names, type);
}

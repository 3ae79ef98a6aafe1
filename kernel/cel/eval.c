/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eval.c — evaluation of a checked expression against one device.
 *
 * Values are small tagged structs on the stack: strings are borrowed from
 * the program's literals or the device, so an evaluation allocates nothing
 * (only a matches() with a computed pattern compiles it on the spot).  A
 * runtime error is a value too (CV_ERR) that records the node it came from
 * and why; && and || absorb it exactly as the language definition says
 * (false && err == false, true || err == true, in either order), every other
 * operator propagates it, and cel_eval reports it with the node's column.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cel/cel-internal.h"
#include "topology/topology.h"

enum cv_type { CV_BOOL, CV_INT, CV_STRING, CV_QUANTITY, CV_SEMVER, CV_DOMAIN, CV_ERR };

enum cv_err {
	E_NO_KEY,   /* attribute or capacity absent: str is the domain */
	E_TYPE,	    /* a dyn value of the wrong type */
	E_QUANTITY, /* quantity() of a malformed string */
	E_SEMVER,   /* semver() of a malformed string */
	E_REGEX,    /* matches() with a malformed pattern */
	E_OVERFLOW, /* -INT64_MIN */
};

struct cv {
	enum cv_type t;
	enum cv_err err;
	const struct cel_node *at; /* CV_ERR: the failing node */
	union {
		bool b;
		int64_t i;     /* CV_INT, CV_QUANTITY (milli) */
		const char *s; /* CV_STRING, CV_DOMAIN (domain name) */
		struct cel_semver v;
	};
	enum cel_type domains; /* CV_DOMAIN: CT_ATTR_MAP or CT_CAP_MAP */
};

struct env {
	const struct cel_device *dev;
};

static struct cv eval(const struct env *e, const struct cel_node *n);

static struct cv err_at(const struct cel_node *n, enum cv_err why, const char *s)
{
	return (struct cv){.t = CV_ERR, .err = why, .at = n, .s = s};
}

static struct cv boolean(bool b)
{
	return (struct cv){.t = CV_BOOL, .b = b};
}

static const struct cel_attr *find_attr(const struct cel_device *d, const char *dom,
					const char *name, size_t len)
{
	for (size_t i = 0; i < d->nattrs; i++)
		if (strncmp(d->attrs[i].name, name, len) == 0 && d->attrs[i].name[len] == '\0' &&
		    strcmp(d->attrs[i].domain, dom) == 0)
			return &d->attrs[i];
	return NULL;
}

static const struct cel_capacity *find_cap(const struct cel_device *d, const char *dom,
					   const char *name, size_t len)
{
	for (size_t i = 0; i < d->ncaps; i++)
		if (strncmp(d->caps[i].name, name, len) == 0 && d->caps[i].name[len] == '\0' &&
		    strcmp(d->caps[i].domain, dom) == 0)
			return &d->caps[i];
	return NULL;
}

static struct cv attr_value(const struct cel_attr *a)
{
	switch (a->type) {
	case CEL_ATTR_INT:
		return (struct cv){.t = CV_INT, .i = a->i};
	case CEL_ATTR_BOOL:
		return boolean(a->b);
	case CEL_ATTR_STRING:
		return (struct cv){.t = CV_STRING, .s = a->s};
	default:
		return (struct cv){.t = CV_SEMVER, .v = a->v};
	}
}

/* device.attributes[D].N, device.capacity[D].N, and has() of them. */
static struct cv lookup(const struct env *e, const struct cel_node *n, bool presence)
{
	struct cv dom;

	/* the common case, a literal domain, skips a step of recursion */
	if (n->a->kind == CN_DOMAIN && n->a->b->kind == CN_STRING)
		dom = (struct cv){.t = CV_DOMAIN, .s = n->a->b->str, .domains = n->a->type};
	else
		dom = eval(e, n->a);

	if (dom.t == CV_ERR)
		return dom;
	if (dom.t != CV_DOMAIN)
		return err_at(n->a, E_TYPE, NULL);
	if (n->kind == CN_ATTR) {
		const struct cel_attr *a = find_attr(e->dev, dom.s, n->str, n->len);

		if (presence || !a)
			return presence ? boolean(a != NULL) : err_at(n, E_NO_KEY, dom.s);
		return attr_value(a);
	} else {
		const struct cel_capacity *c = find_cap(e->dev, dom.s, n->str, n->len);

		if (presence || !c)
			return presence ? boolean(c != NULL) : err_at(n, E_NO_KEY, dom.s);
		return (struct cv){.t = CV_QUANTITY, .i = c->milli};
	}
}

static bool domain_has(const struct cel_device *d, enum cel_type t, const char *dom,
		       const char *key)
{
	if (t == CT_ATTR_MAP)
		return find_attr(d, dom, key, strlen(key)) != NULL;
	return find_cap(d, dom, key, strlen(key)) != NULL;
}

/* Whether a domain appears among the device's attributes or capacities. */
static bool has_domain(const struct cel_device *d, bool attrs, const char *dom)
{
	for (size_t i = 0; attrs && i < d->nattrs; i++)
		if (strcmp(d->attrs[i].domain, dom) == 0)
			return true;
	for (size_t i = 0; !attrs && i < d->ncaps; i++)
		if (strcmp(d->caps[i].domain, dom) == 0)
			return true;
	return false;
}

/* Heterogeneous equality: values of different types are not equal. */
static bool equal(const struct cv *a, const struct cv *b)
{
	if (a->t != b->t)
		return false;
	switch (a->t) {
	case CV_BOOL:
		return a->b == b->b;
	case CV_INT:
	case CV_QUANTITY:
		return a->i == b->i;
	case CV_STRING:
		return strcmp(a->s, b->s) == 0;
	case CV_SEMVER:
		return cel_semver_compare(&a->v, &b->v) == 0;
	default:
		return false;
	}
}

static int order(const struct cv *a, const struct cv *b, bool *ok)
{
	*ok = a->t == b->t && (a->t == CV_INT || a->t == CV_STRING || a->t == CV_BOOL);
	if (!*ok)
		return 0;
	if (a->t == CV_STRING)
		return strcmp(a->s, b->s);
	if (a->t == CV_BOOL)
		return (int)a->b - (int)b->b;
	return a->i < b->i ? -1 : a->i > b->i;
}

static struct cv compare(const struct env *e, const struct cel_node *n)
{
	struct cv a = eval(e, n->a), b;
	bool ok;
	int c;

	if (a.t == CV_ERR)
		return a;
	b = eval(e, n->b);
	if (b.t == CV_ERR)
		return b;
	if (n->kind == CN_EQ || n->kind == CN_NE)
		return boolean(equal(&a, &b) == (n->kind == CN_EQ));
	c = order(&a, &b, &ok);
	if (!ok)
		return err_at(n, E_TYPE, NULL);
	switch (n->kind) {
	case CN_LT:
		return boolean(c < 0);
	case CN_LE:
		return boolean(c <= 0);
	case CN_GT:
		return boolean(c > 0);
	default:
		return boolean(c >= 0);
	}
}

static struct cv membership(const struct env *e, const struct cel_node *n)
{
	struct cv a = eval(e, n->a), b;

	if (a.t == CV_ERR)
		return a;
	if (n->b->kind == CN_LIST) {
		for (size_t i = 0; i < n->b->nargs; i++) {
			b = eval(e, n->b->args[i]);
			if (b.t == CV_ERR)
				return b;
			if (equal(&a, &b))
				return boolean(true);
		}
		return boolean(false);
	}
	if (a.t != CV_STRING)
		return err_at(n->a, E_TYPE, NULL);
	if (n->b->kind == CN_ATTRS || n->b->kind == CN_CAPS)
		return boolean(has_domain(e->dev, n->b->kind == CN_ATTRS, a.s));
	b = eval(e, n->b);
	if (b.t == CV_ERR)
		return b;
	return boolean(domain_has(e->dev, b.domains, b.s, a.s));
}

/* && and ||: an error is absorbed when the other side decides. */
static struct cv logic(const struct env *e, const struct cel_node *n)
{
	bool decide = n->kind == CN_OR; /* the value that decides the result */
	struct cv a = eval(e, n->a), b;

	if (a.t != CV_ERR && a.t != CV_BOOL)
		a = err_at(n->a, E_TYPE, NULL);
	if (a.t == CV_BOOL && a.b == decide)
		return a;
	b = eval(e, n->b);
	if (b.t != CV_ERR && b.t != CV_BOOL)
		b = err_at(n->b, E_TYPE, NULL);
	if (b.t == CV_BOOL && b.b == decide)
		return b;
	if (a.t == CV_ERR)
		return a;
	return b;
}

static struct cv string_fn(const struct cel_node *n, const struct cv *s, const struct cv *arg)
{
	size_t ls, la;

	if (s->t != CV_STRING || arg->t != CV_STRING)
		return err_at(n, E_TYPE, NULL);
	ls = strlen(s->s), la = strlen(arg->s);
	switch (n->fn) {
	case CF_STARTS_WITH:
		return boolean(la <= ls && memcmp(s->s, arg->s, la) == 0);
	case CF_ENDS_WITH:
		return boolean(la <= ls && memcmp(s->s + ls - la, arg->s, la) == 0);
	case CF_CONTAINS:
		return boolean(strstr(s->s, arg->s) != NULL);
	default:
		break;
	}
	if (n->re)
		return boolean(regexec(n->re, s->s, 0, NULL, 0) == 0);
	{
		regex_t re;
		char why[200];
		bool m;

		if (cel_regex_compile_max(arg->s, CEL_RE_MAX_EXPANDED_DYNAMIC, &re, NULL, why,
					  sizeof(why)) < 0)
			return err_at(n, E_REGEX, NULL);
		m = regexec(&re, s->s, 0, NULL, 0) == 0;
		regfree(&re);
		return boolean(m);
	}
}

static struct cv ordered_fn(const struct cel_node *n, const struct cv *t, const struct cv *arg)
{
	int c;

	if (t->t != arg->t || (t->t != CV_QUANTITY && t->t != CV_SEMVER))
		return err_at(n, E_TYPE, NULL);
	if (t->t == CV_QUANTITY)
		c = t->i < arg->i ? -1 : t->i > arg->i;
	else
		c = cel_semver_compare(&t->v, &arg->v);
	if (n->fn == CF_COMPARE_TO)
		return (struct cv){.t = CV_INT, .i = c};
	return boolean(n->fn == CF_IS_LESS_THAN ? c < 0 : c > 0);
}

static struct cv convert_fn(const struct cel_node *n, const struct cv *arg)
{
	struct cv r = {.t = CV_QUANTITY};

	if (arg->t != CV_STRING)
		return err_at(n, E_TYPE, NULL);
	switch (n->fn) {
	case CF_QUANTITY:
		return topo_quantity_parse(arg->s, &r.i) < 0 ? err_at(n, E_QUANTITY, arg->s) : r;
	case CF_IS_QUANTITY:
		return boolean(topo_quantity_parse(arg->s, &r.i) == 0);
	case CF_SEMVER:
		r.t = CV_SEMVER;
		return cel_semver_parse(arg->s, &r.v) < 0 ? err_at(n, E_SEMVER, arg->s) : r;
	default:
		return boolean(cel_semver_parse(arg->s, &r.v) == 0);
	}
}

static struct cv call(const struct env *e, const struct cel_node *n)
{
	struct cv t = {.t = CV_BOOL}, arg = {.t = CV_BOOL};

	if (n->a && (t = eval(e, n->a)).t == CV_ERR)
		return t;
	if (n->nargs && (arg = eval(e, n->args[0])).t == CV_ERR)
		return arg;
	switch (n->fn) {
	case CF_STARTS_WITH:
	case CF_ENDS_WITH:
	case CF_CONTAINS:
	case CF_MATCHES:
		return string_fn(n, &t, &arg);
	case CF_COMPARE_TO:
	case CF_IS_LESS_THAN:
	case CF_IS_GREATER_THAN:
		return ordered_fn(n, &t, &arg);
	case CF_MAJOR:
	case CF_MINOR:
	case CF_PATCH:
		if (t.t != CV_SEMVER)
			return err_at(n, E_TYPE, NULL);
		return (struct cv){.t = CV_INT,
				   .i = (int64_t)(n->fn == CF_MAJOR   ? t.v.major
						  : n->fn == CF_MINOR ? t.v.minor
								      : t.v.patch)};
	default:
		return convert_fn(n, &arg);
	}
}

static struct cv eval(const struct env *e, const struct cel_node *n)
{
	struct cv v;

	switch (n->kind) {
	case CN_BOOL:
		return boolean(n->bval);
	case CN_INT:
		return (struct cv){.t = CV_INT, .i = n->i};
	case CN_STRING:
		return (struct cv){.t = CV_STRING, .s = n->str};
	case CN_QUANTITY:
		return (struct cv){.t = CV_QUANTITY, .i = n->i};
	case CN_SEMVER:
		return (struct cv){.t = CV_SEMVER, .v = n->v};
	case CN_DRIVER:
		return (struct cv){.t = CV_STRING, .s = e->dev->driver ? e->dev->driver : ""};
	case CN_MULTI:
		return boolean(e->dev->multi);
	case CN_DOMAIN:
		v = eval(e, n->b);
		if (v.t == CV_ERR)
			return v;
		if (v.t != CV_STRING)
			return err_at(n->b, E_TYPE, NULL);
		/* an unknown domain is an empty map, so has() can test it */
		return (struct cv){.t = CV_DOMAIN, .s = v.s, .domains = n->type};
	case CN_ATTR:
	case CN_CAP:
		return lookup(e, n, false);
	case CN_HAS:
		return lookup(e, n->a, true);
	case CN_NOT:
		v = eval(e, n->a);
		if (v.t == CV_ERR)
			return v;
		return v.t == CV_BOOL ? boolean(!v.b) : err_at(n->a, E_TYPE, NULL);
	case CN_NEG:
		v = eval(e, n->a);
		if (v.t == CV_ERR)
			return v;
		if (v.t != CV_INT)
			return err_at(n->a, E_TYPE, NULL);
		return v.i == INT64_MIN ? err_at(n, E_OVERFLOW, NULL)
					: (struct cv){.t = CV_INT, .i = -v.i};
	case CN_AND:
	case CN_OR:
		return logic(e, n);
	case CN_IN:
		return membership(e, n);
	case CN_FUNC:
		return call(e, n);
	case CN_EQ:
	case CN_NE:
	case CN_LT:
	case CN_LE:
	case CN_GT:
	case CN_GE:
		return compare(e, n);
	default: /* the checker leaves no other node where a value is read */
		return err_at(n, E_TYPE, NULL);
	}
}

static const char *type_of_value(const struct cv *v)
{
	static const char *const names[] = {"bool",   "int", "string", "quantity",
					    "semver", "map", "error"};

	return names[v->t];
}

static void report(const struct cv *v, struct cel_error *err)
{
	const struct cel_node *n = v->at;

	switch (v->err) {
	case E_NO_KEY:
		cel_fail(err, n->col, "no such key: %.*s (device.%s[\"%s\"])", (int)n->len, n->str,
			 n->kind == CN_ATTR ? "attributes" : "capacity", v->s);
		break;
	case E_QUANTITY:
		cel_fail(err, n->col, "quantity(\"%s\"): not a valid quantity", v->s);
		break;
	case E_SEMVER:
		cel_fail(err, n->col, "semver(\"%s\"): not a valid semantic version", v->s);
		break;
	case E_REGEX:
		cel_fail(err, n->col, "matches(): the pattern is not a valid regular expression");
		break;
	case E_OVERFLOW:
		cel_fail(err, n->col, "integer overflow");
		break;
	default:
		cel_fail(err, n->col, "no such overload: a value of another type than expected");
		break;
	}
}

int cel_eval(const struct cel_program *prog, const struct cel_device *dev, bool *ret_match,
	     struct cel_error *err)
{
	struct env e = {.dev = dev};
	struct cv v;

	if (!prog || !dev || !ret_match)
		return -EINVAL;
	v = eval(&e, prog->root);
	if (v.t == CV_ERR) {
		report(&v, err);
		return -EINVAL;
	}
	if (v.t != CV_BOOL)
		return cel_fail(err, prog->root->col, "expression evaluated to %s, not bool",
				type_of_value(&v));
	*ret_match = v.b;
	return 0;
}

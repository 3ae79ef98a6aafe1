/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonpath.c — kubectl's JSONPath templates for `podctl get -o jsonpath=` and
 * the paths of `-o custom-columns=`.
 *
 * A template is text with expressions in braces: `{.a.b}`, `{.items[*].x}`,
 * `{..name}`, `{.a[0]}`, `{.a[-1:]}`, `{.a[0,2]}`, `{.a['b.c']}`,
 * `{.a[?(@.x=="y")].z}`, `{range .items[*]}...{end}` and quoted text
 * `{"\n"}`.  Paths are relative to the current object (the document, or the
 * item of the innermost range); `$` names the document, `@` the current
 * object.  As in kubectl (whose missing keys are allowed by default), a key
 * that is absent yields nothing; an index outside an array is an error.
 * An expression's values are printed separated by one space: strings as
 * they are, objects and arrays as compact JSON with sorted keys.
 *
 * Evaluation has a work budget, so that a template such as `{..*..*..*}`
 * fails with a message instead of running for hours.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/podctl/podctl-internal.h"

#define JP_MAX_DEPTH 32
#define JP_BUDGET (1L << 20)

enum step_kind { ST_FIELD, ST_WILD, ST_RECURSE, ST_SUBSCRIPT, ST_FILTER };
enum op { OP_EXISTS, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct path;

struct sub {
	bool slice, has[3];
	long v[3];
	struct path *key; /* a quoted key: its dot-separated fields */
};

struct operand {
	struct path *path; /* @... or $...; else lit */
	json_t *lit;
};

struct step {
	enum step_kind kind;
	char *name;
	struct sub *subs;
	size_t nsubs;
	enum op op;
	struct operand l, r;
};

struct path {
	bool from_root;
	struct step *steps;
	size_t n;
};

enum node_kind { N_TEXT, N_PATH, N_RANGE, N_END };

struct node {
	enum node_kind kind;
	char *text;
	struct path *path;
	size_t end; /* N_RANGE: index of its N_END */
};

struct podctl_jsonpath {
	struct node *nodes;
	size_t n;
};

/* ---- parsing ------------------------------------------------------------------------ */

struct parser {
	const char *s; /* the expression being parsed */
	size_t i;
	char *err;
	size_t errlen;
	bool failed;
};

static void perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
}

static void path_free(struct path *pa);

static void step_free(struct step *st)
{
	free(st->name);
	for (size_t i = 0; i < st->nsubs; i++)
		path_free(st->subs[i].key);
	free(st->subs);
	path_free(st->l.path);
	path_free(st->r.path);
	json_decref(st->l.lit);
	json_decref(st->r.lit);
}

static void path_free(struct path *pa)
{
	if (!pa)
		return;
	for (size_t i = 0; i < pa->n; i++)
		step_free(&pa->steps[i]);
	free(pa->steps);
	free(pa);
}

static struct step *add_step(struct path *pa, enum step_kind k)
{
	struct step *s = realloc(pa->steps, (pa->n + 1) * sizeof(*s));

	if (!s)
		abort();
	pa->steps = s;
	s = &pa->steps[pa->n++];
	memset(s, 0, sizeof(*s));
	s->kind = k;
	return s;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A field name up to an unescaped '.', '[', space or one of stop; "\." is a dot. */
static char *parse_name(struct parser *p, const char *stop)
{
	const char *s = p->s;
	size_t cap = strlen(s + p->i) + 1, n = 0;
	char *out = malloc(cap);

	if (!out)
		abort();
	while (s[p->i] && s[p->i] != '.' && s[p->i] != '[' && !is_space(s[p->i]) &&
	       !strchr(stop, s[p->i])) {
		if (s[p->i] == '\\' && s[p->i + 1])
			p->i++;
		out[n++] = s[p->i++];
	}
	out[n] = '\0';
	return out;
}

/* A quoted string ('...' or "..."), with \n, \t, \\, \" and \' escapes. */
static char *parse_quoted(struct parser *p)
{
	const char *s = p->s;
	char q = s[p->i++], *out = malloc(strlen(s + p->i) + 1);
	size_t n = 0;

	if (!out)
		abort();
	while (s[p->i] && s[p->i] != q) {
		char c = s[p->i++];

		if (c == '\\' && s[p->i]) {
			c = s[p->i++];
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	if (s[p->i] != q) {
		perr(p, "unterminated quoted string");
		free(out);
		return NULL;
	}
	p->i++;
	return out;
}

static struct path *parse_path(struct parser *p, const char *stop, int depth);

/* The fields of a quoted key: 'a.b' is a then b, 'a\.b' the one key "a.b". */
static struct path *key_path(struct parser *p, const char *key)
{
	struct parser kp = {.s = key, .err = p->err, .errlen = p->errlen};
	struct path *pa = calloc(1, sizeof(*pa));

	if (!pa)
		abort();
	while (!kp.failed && key[kp.i]) {
		struct step *st = add_step(pa, ST_FIELD);

		st->name = parse_name(&kp, "");
		if (key[kp.i] == '.')
			kp.i++;
		else if (key[kp.i])
			kp.i++; /* '[' or a space: part of no name, skipped */
	}
	return pa;
}

static bool parse_long(struct parser *p, long *v)
{
	const char *s = p->s + p->i;
	char *end;

	while (is_space(*s))
		s++;
	if (!(*s == '-' || (*s >= '0' && *s <= '9')))
		return false;
	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || end == s || (*s == '-' && end == s + 1)) {
		perr(p, "invalid array index at offset %zu", p->i);
		return false;
	}
	p->i = (size_t)(end - p->s);
	while (is_space(p->s[p->i]))
		p->i++;
	return true;
}

static void parse_sub(struct parser *p, struct sub *sb)
{
	const char *s = p->s;

	while (is_space(s[p->i]))
		p->i++;
	if (s[p->i] == '\'' || s[p->i] == '"') {
		char *k = parse_quoted(p);

		if (k)
			sb->key = key_path(p, k);
		free(k);
		while (is_space(s[p->i]))
			p->i++;
		return;
	}
	for (int part = 0; part < 3 && !p->failed; part++) {
		sb->has[part] = parse_long(p, &sb->v[part]);
		if (s[p->i] != ':')
			break;
		sb->slice = true;
		p->i++;
	}
	if (!sb->slice && !sb->has[0])
		perr(p, "invalid array index at offset %zu", p->i);
}

static bool parse_operand(struct parser *p, struct operand *o, int depth)
{
	const char *s = p->s;

	while (is_space(s[p->i]))
		p->i++;
	if (s[p->i] == '@' || s[p->i] == '$') {
		o->path = parse_path(p, "=!<>) ", depth + 1);
		return o->path != NULL;
	}
	if (s[p->i] == '\'' || s[p->i] == '"') {
		char *q = parse_quoted(p);

		o->lit = q ? json_string(q) : NULL;
		free(q);
		if (q && !o->lit)
			perr(p, "filter: the quoted text is not UTF-8");
		return o->lit != NULL;
	}
	if (strncmp(s + p->i, "true", 4) == 0 || strncmp(s + p->i, "false", 5) == 0) {
		o->lit = json_boolean(s[p->i] == 't');
		p->i += s[p->i] == 't' ? 4 : 5;
		return true;
	}
	char *end;
	double d;

	errno = 0;
	d = strtod(s + p->i, &end);
	if (end == s + p->i || errno) {
		perr(p, "filter: expected @path, a quoted string or a number at offset %zu", p->i);
		return false;
	}
	p->i = (size_t)(end - s);
	o->lit = json_real(d);
	return true;
}

static const struct {
	const char *text;
	enum op op;
} ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"<", OP_LT}, {">", OP_GT}};

/* [?(LEFT OP RIGHT)] or [?(LEFT)], from after "[?(" up to and past ")]". */
static void parse_filter(struct parser *p, struct step *st, int depth)
{
	const char *s = p->s;

	if (!parse_operand(p, &st->l, depth))
		return;
	while (is_space(s[p->i]))
		p->i++;
	st->op = OP_EXISTS;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strncmp(s + p->i, ops[k].text, strlen(ops[k].text)) == 0) {
			st->op = ops[k].op;
			p->i += strlen(ops[k].text);
			if (!parse_operand(p, &st->r, depth))
				return;
			break;
		}
	while (is_space(s[p->i]))
		p->i++;
	if (s[p->i] != ')' || s[p->i + 1] != ']')
		return perr(p, "filter: expected ')]' at offset %zu", p->i);
	p->i += 2;
}

static void parse_bracket(struct parser *p, struct path *pa, int depth)
{
	const char *s = p->s;

	p->i++; /* '[' */
	if (s[p->i] == '?') {
		if (s[p->i + 1] != '(')
			return perr(p, "filter: expected '(' after '?' at offset %zu", p->i);
		p->i += 2;
		return parse_filter(p, add_step(pa, ST_FILTER), depth);
	}
	if (s[p->i] == '*' && s[p->i + 1] == ']') {
		add_step(pa, ST_WILD);
		p->i += 2;
		return;
	}
	struct step *st = add_step(pa, ST_SUBSCRIPT);

	do {
		struct sub *sb = realloc(st->subs, (st->nsubs + 1) * sizeof(*sb));

		if (!sb)
			abort();
		st->subs = sb;
		sb = &st->subs[st->nsubs++];
		memset(sb, 0, sizeof(*sb));
		parse_sub(p, sb);
	} while (!p->failed && s[p->i] == ',' && ++p->i);
	if (!p->failed && s[p->i] != ']')
		perr(p, "unclosed array, expected ']' at offset %zu", p->i);
	p->i++;
}

/* A path: [$|@] then .name, .*, ..name, [..] steps, up to a space or one of stop. */
static struct path *parse_path(struct parser *p, const char *stop, int depth)
{
	const char *s = p->s;
	struct path *pa = calloc(1, sizeof(*pa));

	if (!pa)
		abort();
	if (depth > JP_MAX_DEPTH)
		perr(p, "expression nested too deeply");
	if (s[p->i] == '$' || s[p->i] == '@')
		pa->from_root = s[p->i++] == '$';
	while (!p->failed && s[p->i] && !is_space(s[p->i]) && !strchr(stop, s[p->i])) {
		if (s[p->i] == '[') {
			parse_bracket(p, pa, depth);
			continue;
		}
		if (s[p->i] != '.') {
			perr(p, "unexpected '%c' at offset %zu", s[p->i], p->i);
			break;
		}
		p->i++;
		if (s[p->i] == '.') {
			p->i++;
			add_step(pa, ST_RECURSE);
			if (s[p->i] == '[')
				continue;
		}
		if (s[p->i] == '*') {
			p->i++;
			add_step(pa, ST_WILD);
			continue;
		}
		char *name = parse_name(p, stop);

		if (*name)
			add_step(pa, ST_FIELD)->name = name;
		else
			free(name);
	}
	if (p->failed) {
		path_free(pa);
		return NULL;
	}
	return pa;
}

static void add_node(struct podctl_jsonpath *jp, struct node nd)
{
	struct node *n = realloc(jp->nodes, (jp->n + 1) * sizeof(*n));

	if (!n)
		abort();
	jp->nodes = n;
	jp->nodes[jp->n++] = nd;
}

/* The end of the action that starts at s[0] == '{': its '}' outside quotes. */
static const char *action_end(const char *s)
{
	char q = 0;

	for (s++; *s; s++) {
		if (q && *s == '\\' && s[1])
			s++;
		else if (q && *s == q)
			q = 0;
		else if (!q && (*s == '"' || *s == '\''))
			q = *s;
		else if (!q && *s == '}')
			return s;
	}
	return NULL;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = strndup(s, n);

	if (!d)
		abort();
	return d;
}

/* One action's text, trimmed: "range PATH", "end", a quoted string or a path. */
static void parse_action(struct podctl_jsonpath *jp, struct parser *p, size_t *open, size_t *nopen)
{
	const char *a = p->s;
	size_t n = strlen(a);

	while (n && is_space(a[n - 1]))
		n--;
	while (is_space(a[p->i]))
		p->i++;
	if (strcmp(a + p->i, "end") == 0 || (n == p->i + 3 && strncmp(a + p->i, "end", 3) == 0)) {
		if (*nopen == 0)
			return perr(p, "not in range, nothing to end");
		jp->nodes[open[--*nopen]].end = jp->n;
		add_node(jp, (struct node){.kind = N_END});
		return;
	}
	bool range = strncmp(a + p->i, "range", 5) == 0 && is_space(a[p->i + 5]);

	if (range) {
		if (*nopen >= JP_MAX_DEPTH)
			return perr(p, "ranges nested too deeply");
		p->i += 6;
		while (is_space(a[p->i]))
			p->i++;
	} else if (a[p->i] == '"' || a[p->i] == '\'') {
		char *t = parse_quoted(p);

		if (t)
			add_node(jp, (struct node){.kind = N_TEXT, .text = t});
		while (t && is_space(a[p->i]))
			p->i++;
		if (t && a[p->i])
			perr(p, "unexpected text after the quoted string at offset %zu", p->i);
		return;
	}
	struct path *pa = parse_path(p, "", 0);

	while (pa && is_space(a[p->i]))
		p->i++;
	if (pa && a[p->i])
		perr(p, "unexpected '%c' at offset %zu", a[p->i], p->i);
	if (p->failed) {
		path_free(pa);
		return;
	}
	if (range)
		open[(*nopen)++] = jp->n;
	add_node(jp, (struct node){.kind = range ? N_RANGE : N_PATH, .path = pa});
}

struct podctl_jsonpath *podctl_jsonpath_parse(const char *tmpl, char *err, size_t errlen)
{
	struct podctl_jsonpath *jp = calloc(1, sizeof(*jp));
	size_t open[JP_MAX_DEPTH], nopen = 0;
	const char *s = tmpl;
	bool failed = false;

	if (!jp)
		abort();
	while (*s && !failed) {
		const char *b = strchr(s, '{'), *e;

		if (b != s) {
			size_t n = b ? (size_t)(b - s) : strlen(s);

			add_node(jp, (struct node){.kind = N_TEXT, .text = dup_n(s, n)});
			s += n;
			continue;
		}
		e = action_end(b);
		if (!e) {
			snprintf(err, errlen, "unclosed action at offset %zu", (size_t)(b - tmpl));
			failed = true;
			break;
		}
		char *act = dup_n(b + 1, (size_t)(e - b - 1));
		struct parser p = {.s = act, .err = err, .errlen = errlen};

		parse_action(jp, &p, open, &nopen);
		failed = p.failed;
		if (failed) {
			/* name the action, then what is wrong in it */
			char *m = strdup(err);

			snprintf(err, errlen, "in {%s}: %s", act, m ? m : "");
			free(m);
		}
		free(act);
		s = e + 1;
	}
	if (!failed && nopen) {
		snprintf(err, errlen, "range without end");
		failed = true;
	}
	if (failed) {
		podctl_jsonpath_free(jp);
		return NULL;
	}
	return jp;
}

void podctl_jsonpath_free(struct podctl_jsonpath *jp)
{
	if (!jp)
		return;
	for (size_t i = 0; i < jp->n; i++) {
		free(jp->nodes[i].text);
		path_free(jp->nodes[i].path);
	}
	free(jp->nodes);
	free(jp);
}

/* ---- evaluation --------------------------------------------------------------------- */

struct vals {
	json_t **v; /* borrowed */
	size_t n, cap;
};

struct eval {
	const json_t *root;
	long budget;
	char *err;
	size_t errlen;
	bool failed;
};

static void eerr(struct eval *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void eerr(struct eval *e, const char *fmt, ...)
{
	va_list ap;

	if (e->failed)
		return;
	e->failed = true;
	va_start(ap, fmt);
	vsnprintf(e->err, e->errlen, fmt, ap);
	va_end(ap);
}

static void push(struct eval *e, struct vals *vs, const json_t *v)
{
	if (--e->budget < 0) {
		eerr(e, "the template needs too much work (too many values)");
		return;
	}
	if (vs->n == vs->cap) {
		size_t cap = vs->cap ? vs->cap * 2 : 8;
		json_t **nv = realloc(vs->v, cap * sizeof(*nv));

		if (!nv)
			abort();
		vs->v = nv;
		vs->cap = cap;
	}
	vs->v[vs->n++] = (json_t *)v;
}

static void eval_path(struct eval *e, const struct path *pa, const json_t *cur, struct vals *out);

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* An object's keys, sorted (kubectl's output does not depend on map order). */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
	const char *k, **keys;
	json_t *c;
	size_t j = 0;

	*n = json_object_size(obj);
	keys = malloc((*n ? *n : 1) * sizeof(*keys));
	if (!keys)
		abort();
	json_object_foreach((json_t *)obj, k, c) keys[j++] = k;
	qsort(keys, *n, sizeof(*keys), cmp_key);
	return keys;
}

static void children(struct eval *e, const json_t *v, struct vals *out)
{
	json_t *c;
	size_t i, n;

	if (json_is_array(v)) {
		json_array_foreach(v, i, c) push(e, out, c);
	} else if (json_is_object(v)) {
		const char **keys = sorted_keys(v, &n);

		for (i = 0; i < n; i++)
			push(e, out, json_object_get(v, keys[i]));
		free(keys);
	}
}

/* v and everything under it, in document order (keys sorted). */
static void descend(struct eval *e, const json_t *v, struct vals *out, int depth)
{
	size_t i, n;
	json_t *c;
	const char *k;

	push(e, out, v);
	if (e->failed)
		return;
	if (depth > 512)
		return eerr(e, "the document is nested too deeply");
	if (json_is_array(v)) {
		json_array_foreach(v, i, c)
		{
			descend(e, c, out, depth + 1);
			if (e->failed)
				return;
		}
	} else if (json_object_size(v) == 1) {
		json_object_foreach((json_t *)v, k, c) descend(e, c, out, depth + 1);
	} else if (json_is_object(v)) {
		const char **keys = sorted_keys(v, &n);

		for (i = 0; i < n && !e->failed; i++)
			descend(e, json_object_get(v, keys[i]), out, depth + 1);
		free(keys);
	}
}

static void subscript(struct eval *e, const struct sub *sb, const json_t *v, struct vals *out)
{
	long len = (long)json_array_size(v);

	if (sb->key) {
		if (json_is_object(v))
			eval_path(e, sb->key, v, out);
		return;
	}
	if (!json_is_array(v))
		return;
	if (!sb->slice) {
		long i = sb->v[0] < 0 ? sb->v[0] + len : sb->v[0];

		if (i < 0 || i >= len)
			return eerr(e, "array index out of bounds: index %ld, length %ld", sb->v[0],
				    len);
		return push(e, out, json_array_get(v, (size_t)i));
	}
	long from = sb->has[0] ? sb->v[0] : 0, to = sb->has[1] ? sb->v[1] : len;
	long step = sb->has[2] ? sb->v[2] : 1;

	if (step <= 0)
		return eerr(e, "slice step must be positive, not %ld", step);
	from = from < 0 ? from + len : from;
	to = to < 0 ? to + len : to;
	if (from < 0 || to < 0)
		return eerr(e, "array index out of bounds: slice [%ld:%ld], length %ld", sb->v[0],
			    sb->v[1], len);
	for (long i = from; i < to && i < len && !e->failed; i += step)
		push(e, out, json_array_get(v, (size_t)i));
}

/* The first value an operand names for element el, or NULL. */
static const json_t *operand(struct eval *e, const struct operand *o, const json_t *el)
{
	struct vals vs = {0};
	const json_t *r;

	if (o->lit)
		return o->lit;
	eval_path(e, o->path, el, &vs);
	r = vs.n ? vs.v[0] : NULL;
	free(vs.v);
	return r;
}

static bool compare(enum op op, const json_t *a, const json_t *b)
{
	int c;

	if (json_is_number(a) && json_is_number(b)) {
		double x = json_number_value(a), y = json_number_value(b);

		c = x < y ? -1 : x > y;
	} else if (json_is_string(a) && json_is_string(b)) {
		c = strcmp(json_string_value(a), json_string_value(b));
	} else if (op == OP_EQ || op == OP_NE) {
		bool eq =
		    json_is_boolean(a) && json_is_boolean(b) && json_is_true(a) == json_is_true(b);

		return op == OP_EQ ? eq : !eq;
	} else {
		return false;
	}
	switch (op) {
	case OP_EQ:
		return c == 0;
	case OP_NE:
		return c != 0;
	case OP_LT:
		return c < 0;
	case OP_LE:
		return c <= 0;
	case OP_GT:
		return c > 0;
	case OP_GE:
		return c >= 0;
	default:
		return false;
	}
}

static void filter(struct eval *e, const struct step *st, const json_t *v, struct vals *out)
{
	json_t *el;
	size_t i;

	if (!json_is_array(v))
		return;
	json_array_foreach(v, i, el)
	{
		const json_t *a = operand(e, &st->l, el), *b;

		if (e->failed)
			return;
		if (st->op == OP_EXISTS) {
			if (a)
				push(e, out, el);
			continue;
		}
		b = operand(e, &st->r, el);
		if (a && b && compare(st->op, a, b))
			push(e, out, el);
	}
}

static void apply_step(struct eval *e, const struct step *st, const json_t *v, struct vals *out)
{
	switch (st->kind) {
	case ST_FIELD:
		if (json_is_object(v) && json_object_get(v, st->name))
			push(e, out, json_object_get(v, st->name));
		break;
	case ST_WILD:
		children(e, v, out);
		break;
	case ST_RECURSE:
		descend(e, v, out, 0);
		break;
	case ST_SUBSCRIPT: /* eval_path takes the members in turn */
		break;
	case ST_FILTER:
		filter(e, st, v, out);
		break;
	}
}

static void eval_path(struct eval *e, const struct path *pa, const json_t *cur, struct vals *out)
{
	struct vals a = {0}, b = {0};

	push(e, &a, pa->from_root ? e->root : cur);
	for (size_t s = 0; s < pa->n && !e->failed; s++) {
		const struct step *st = &pa->steps[s];

		b.n = 0;
		if (st->kind == ST_SUBSCRIPT) /* a union: each member over all values */
			for (size_t k = 0; k < st->nsubs && !e->failed; k++)
				for (size_t i = 0; i < a.n && !e->failed; i++)
					subscript(e, &st->subs[k], a.v[i], &b);
		else
			for (size_t i = 0; i < a.n && !e->failed; i++)
				apply_step(e, st, a.v[i], &b);
		struct vals t = a;

		a = b;
		b = t;
	}
	for (size_t i = 0; i < a.n && !e->failed; i++)
		push(e, out, a.v[i]);
	free(a.v);
	free(b.v);
}

/* A float as Go's %v prints it: the shortest text that reads back the same. */
static void print_real(FILE *out, double d)
{
	char buf[64];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fputs(buf, out);
}

static void print_value(FILE *out, const json_t *v)
{
	if (json_is_string(v))
		fwrite(json_string_value(v), 1, json_string_length(v), out);
	else if (json_is_integer(v))
		fprintf(out, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		print_real(out, json_real_value(v));
	else if (json_is_true(v) || json_is_false(v))
		fputs(json_is_true(v) ? "true" : "false", out);
	else if (json_is_null(v))
		fputs("null", out);
	else
		json_dumpf(v, out, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static size_t run_nodes(struct eval *e, const struct podctl_jsonpath *jp, size_t from, size_t to,
			const json_t *cur, FILE *out)
{
	size_t i = from;

	while (i < to && !e->failed) {
		const struct node *nd = &jp->nodes[i];
		struct vals vs = {0};

		if (nd->kind == N_TEXT) {
			fputs(nd->text, out);
			i++;
			continue;
		}
		eval_path(e, nd->path, cur, &vs);
		if (nd->kind == N_PATH) {
			for (size_t k = 0; k < vs.n && !e->failed; k++) {
				if (k)
					fputc(' ', out);
				print_value(out, vs.v[k]);
			}
			i++;
		} else {
			/* as kubectl: the body once per value (`.items[*]`, not `.items`) */
			for (size_t k = 0; k < vs.n && !e->failed; k++)
				run_nodes(e, jp, i + 1, nd->end, vs.v[k], out);
			i = nd->end + 1;
		}
		free(vs.v);
	}
	return i;
}

int podctl_jsonpath_print(const struct podctl_jsonpath *jp, const json_t *doc, FILE *out, char *err,
			  size_t errlen)
{
	struct eval e = {.root = doc, .budget = JP_BUDGET, .err = err, .errlen = errlen};

	run_nodes(&e, jp, 0, jp->n, doc, out);
	return e.failed ? -1 : 0;
}

json_t *podctl_jsonpath_find(const struct podctl_jsonpath *jp, const json_t *doc, char *err,
			     size_t errlen)
{
	struct eval e = {.root = doc, .budget = JP_BUDGET, .err = err, .errlen = errlen};
	json_t *arr = json_array();

	for (size_t i = 0; i < jp->n && !e.failed; i++) {
		struct vals vs = {0};

		if (jp->nodes[i].kind != N_PATH)
			continue;
		eval_path(&e, jp->nodes[i].path, doc, &vs);
		for (size_t k = 0; k < vs.n; k++)
			json_array_append(arr, vs.v[k]);
		free(vs.v);
	}
	if (e.failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* ---- custom columns ----------------------------------------------------------------- */

/* A value as Go's %v prints it: map[a:1 b:x], [1 2], <nil>. */
static void go_value(FILE *out, const json_t *v)
{
	size_t i, n;
	json_t *c;

	if (json_is_object(v)) {
		const char **keys = sorted_keys(v, &n);

		fputs("map[", out);
		for (i = 0; i < n; i++) {
			fprintf(out, "%s%s:", i ? " " : "", keys[i]);
			go_value(out, json_object_get(v, keys[i]));
		}
		fputc(']', out);
		free(keys);
	} else if (json_is_array(v)) {
		fputc('[', out);
		json_array_foreach(v, i, c)
		{
			if (i)
				fputc(' ', out);
			go_value(out, c);
		}
		fputc(']', out);
	} else if (json_is_null(v)) {
		fputs("<nil>", out);
	} else {
		print_value(out, v);
	}
}

char *podctl_column_text(const json_t *values)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	json_t *v;

	if (!f)
		abort();
	if (json_array_size(values) == 0)
		fputs("<none>", f);
	json_array_foreach(values, i, v)
	{
		if (i)
			fputc(',', f);
		go_value(f, v);
	}
	fclose(f);
	return buf;
}

char *podctl_relaxed_path(const char *expr)
{
	size_t n = strlen(expr);
	char *out;

	/* kubectl's RelaxedJSONPathExpression: {.a}, .a and a all mean {.a} */
	if (n >= 2 && expr[0] == '{' && expr[n - 1] == '}') {
		expr++;
		n -= 2;
	}
	if (asprintf(&out, "{%s%.*s}", n && expr[0] == '.' ? "" : ".", (int)n, expr) < 0)
		abort();
	return out;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * program.c — a compiled expression's lifecycle (compile: parse, check;
 * free), its error reports, and the two value types CEL's Kubernetes
 * libraries add that this subset supports besides quantities: semantic
 * versions (semver 2.0 precedence) and regular expressions.
 *
 * matches() is RE2 in CEL; here a pattern is translated to a POSIX extended
 * regular expression (regcomp, REG_EXTENDED) and searched unanchored, as
 * RE2's partial match is.  The translation keeps what both dialects share and
 * maps the Perl classes \d \w \s (and \D \W \S outside brackets) to POSIX
 * brackets; what POSIX lacks (non-greedy quantifiers, (?flags) groups,
 * \b, \p{..}, \Q..\E, back-references) is refused by name, never read with
 * another meaning.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cel/cel-internal.h"

int cel_fail(struct cel_error *err, unsigned col, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->col = col;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

struct cel_node *cel_node_new(struct cel_program *p, enum cel_node_kind kind, unsigned col)
{
	struct cel_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->kind = kind;
	n->col = col;
	n->next_owned = p->nodes;
	p->nodes = n;
	return n;
}

int cel_program_own(struct cel_program *p, char *s)
{
	if (p->nstrings == p->capstrings) {
		size_t cap = p->capstrings ? 2 * p->capstrings : 8;
		char **grown = realloc(p->strings, cap * sizeof(*grown));

		if (!grown) {
			free(s);
			return -ENOMEM;
		}
		p->strings = grown;
		p->capstrings = cap;
	}
	p->strings[p->nstrings++] = s;
	return 0;
}

void cel_program_free(struct cel_program *p)
{
	struct cel_node *n, *next;

	if (!p)
		return;
	for (n = p->nodes; n; n = next) {
		next = n->next_owned;
		if (n->re) {
			regfree(n->re);
			free(n->re);
		}
		free(n->args);
		free(n);
	}
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->source);
	free(p);
}

const char *cel_program_source(const struct cel_program *p)
{
	return p ? p->source : NULL;
}

int cel_compile(const char *expr, struct cel_program **ret, struct cel_error *err)
{
	struct cel_program *p;
	size_t len;
	int r;

	if (err)
		*err = (struct cel_error){0};
	if (!expr || !ret)
		return -EINVAL;
	len = strnlen(expr, CEL_EXPRESSION_MAX + 1);
	if (len > CEL_EXPRESSION_MAX) {
		cel_fail(err, 0, "expression longer than %d characters", CEL_EXPRESSION_MAX);
		return -E2BIG;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->source = strdup(expr);
	if (!p->source) {
		free(p);
		return -ENOMEM;
	}
	r = cel_parse(p, err);
	if (r == 0)
		r = cel_check(p, err);
	if (r < 0) {
		cel_program_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* ---- semantic versions --------------------------------------------------------- */

/* A numeric identifier: digits, no leading zero; *s advanced past it. */
static int semver_number(const char **s, uint64_t *ret)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*ret = v;
	return 0;
}

/* Dot-separated non-empty identifiers of [0-9A-Za-z-]; returns its length. */
static size_t semver_idents(const char *s, bool numeric_no_zero)
{
	size_t n = 0, start = 0;
	bool digits = true;

	for (;; n++) {
		char c = s[n];

		if (c == '.' || c == '\0' || c == '+') {
			if (n == start)
				return 0;
			if (numeric_no_zero && digits && n - start > 1 && s[start] == '0')
				return 0;
			if (c != '.')
				return n;
			start = n + 1;
			digits = true;
			continue;
		}
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '-'))
			return 0;
		if (c < '0' || c > '9')
			digits = false;
	}
}

int cel_semver_parse(const char *s, struct cel_semver *ret)
{
	struct cel_semver v = {0};
	size_t n;

	if (!s || semver_number(&s, &v.major) < 0 || *s++ != '.' ||
	    semver_number(&s, &v.minor) < 0 || *s++ != '.' || semver_number(&s, &v.patch) < 0)
		return -EINVAL;
	if (*s == '-') {
		n = semver_idents(++s, true);
		if (n == 0)
			return -EINVAL;
		v.pre = s;
		v.prelen = n;
		s += n;
	}
	if (*s == '+') {
		n = semver_idents(++s, false);
		if (n == 0 || s[n] != '\0')
			return -EINVAL;
		s += n;
	}
	if (*s != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

/* One prerelease identifier against another (numeric < alphanumeric). */
static int pre_ident_compare(const char *a, size_t la, const char *b, size_t lb)
{
	bool na = strspn(a, "0123456789") >= la, nb = strspn(b, "0123456789") >= lb;
	int c;

	if (na && nb)
		return la != lb ? (la < lb ? -1 : 1) : memcmp(a, b, la);
	if (na != nb)
		return na ? -1 : 1;
	c = memcmp(a, b, la < lb ? la : lb);
	return c ? c : (la < lb ? -1 : la > lb);
}

static int pre_compare(const struct cel_semver *a, const struct cel_semver *b)
{
	size_t ia = 0, ib = 0;

	if (!a->pre || !b->pre)
		return a->pre ? -1 : b->pre ? 1 : 0; /* a release outranks its prereleases */
	while (ia < a->prelen && ib < b->prelen) {
		size_t la = strcspn(a->pre + ia, ".+"), lb = strcspn(b->pre + ib, ".+");
		int c;

		la = la > a->prelen - ia ? a->prelen - ia : la;
		lb = lb > b->prelen - ib ? b->prelen - ib : lb;
		c = pre_ident_compare(a->pre + ia, la, b->pre + ib, lb);
		if (c)
			return c < 0 ? -1 : 1;
		ia += la + 1, ib += lb + 1;
	}
	return ia < a->prelen ? 1 : ib < b->prelen ? -1 : 0;
}

int cel_semver_compare(const struct cel_semver *a, const struct cel_semver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return pre_compare(a, b);
}

/* ---- regular expressions ------------------------------------------------------------ */

struct re_out {
	char *buf;
	size_t n, cap;
};

static void re_put(struct re_out *o, const char *s)
{
	size_t l = strlen(s);

	if (o->n + l < o->cap)
		memcpy(o->buf + o->n, s, l + 1);
	o->n += l;
}

/* The POSIX text of a Perl class escape, inside or outside brackets. */
static const char *perl_class(char c, bool in_bracket)
{
	switch (c) {
	case 'd':
		return in_bracket ? "0-9" : "[0-9]";
	case 'w':
		return in_bracket ? "A-Za-z0-9_" : "[A-Za-z0-9_]";
	case 's':
		return in_bracket ? "[:space:]" : "[[:space:]]";
	case 'D':
		return in_bracket ? NULL : "[^0-9]";
	case 'W':
		return in_bracket ? NULL : "[^A-Za-z0-9_]";
	case 'S':
		return in_bracket ? NULL : "[^[:space:]]";
	default:
		return NULL;
	}
}

static int re_translate(const char *p, struct re_out *o, char *msg, size_t msglen)
{
	bool br = false; /* inside a bracket expression */
	char one[3] = {0};

	for (size_t i = 0; p[i]; i++) {
		char c = p[i], d = p[i + 1];

		if (c == '\\') {
			const char *cls = perl_class(d, br);

			if (cls) {
				re_put(o, cls);
			} else if (d && !br && strchr(".[]{}()\\*+?|^$-/", d)) {
				one[0] = '\\', one[1] = d;
				re_put(o, one);
			} else if (d && br && strchr(".[{}()*+?|^$/", d)) {
				one[0] = d, one[1] = '\0'; /* POSIX brackets take them literally */
				re_put(o, one);
			} else {
				snprintf(msg, msglen,
					 "'\\%c' at offset %zu is not supported "
					 "(POSIX extended subset)",
					 d ? d : ' ', i);
				return -EINVAL;
			}
			i++;
			continue;
		}
		if (!br && c == '(' && d == '?') {
			snprintf(msg, msglen,
				 "'(?' groups and flags at offset %zu are not supported", i);
			return -EINVAL;
		}
		if (!br && (c == '*' || c == '+' || c == '?' || c == '}') &&
		    (d == '?' || d == '+')) {
			snprintf(msg, msglen,
				 "non-greedy or possessive quantifier at offset %zu is "
				 "not supported",
				 i);
			return -EINVAL;
		}
		if (!br && c == '[') {
			br = true;
			re_put(o, "[");
			if (p[i + 1] == '^')
				re_put(o, "^"), i++;
			if (p[i + 1] == ']')
				re_put(o, "]"), i++;
			continue;
		}
		if (br && c == ']')
			br = false;
		one[0] = c, one[1] = '\0';
		re_put(o, one);
	}
	return 0;
}

/*
 * RE2's limits, checked before anything is compiled, as kube-apiserver's CEL
 * refuses such a pattern when the expression is compiled: a counted
 * repetition over CEL_RE_MAX_REPEAT, or nested ones whose counts multiply
 * past it ("(a{1,1000}){1,1000}"), and a pattern whose repetitions expand
 * past CEL_RE_MAX_EXPANDED atoms.  What a compile and a match cost stays
 * bounded by the pattern's text.
 */
struct re_frame {
	unsigned long size, prod;	    /* expanded atoms so far, largest nested product */
	unsigned long last_size, last_prod; /* of the last atom or group: a quantifier's operand */
};

/* "{n}", "{n,}" or "{n,m}" at p: its length and the count that bounds it; 0: not one. */
static size_t re_counted(const char *p, unsigned long *ret_min, unsigned long *ret_max)
{
	char *end;
	unsigned long n, m;

	if (*p != '{' || p[1] < '0' || p[1] > '9')
		return 0;
	n = m = strtoul(p + 1, &end, 10);
	if (*end == ',') {
		if (end[1] == '}') {
			m = n, end++;
		} else if (end[1] >= '0' && end[1] <= '9') {
			m = strtoul(end + 1, &end, 10);
		} else {
			return 0;
		}
	}
	if (*end != '}')
		return 0;
	*ret_min = n, *ret_max = m;
	return (size_t)(end - p) + 1;
}

static int re_quantify(struct re_frame *f, unsigned long lo, unsigned long hi, size_t at, char *msg,
		       size_t msglen)
{
	if (lo > CEL_RE_MAX_REPEAT || hi > CEL_RE_MAX_REPEAT) {
		snprintf(msg, msglen, "repetition count at offset %zu is over %d", at,
			 CEL_RE_MAX_REPEAT);
		return -EINVAL;
	}
	unsigned long k = hi > lo ? hi : lo, prod = f->last_prod * (k ? k : 1);
	if (prod > CEL_RE_MAX_REPEAT) {
		snprintf(msg, msglen,
			 "nested repetition at offset %zu repeats more than %d times in all", at,
			 CEL_RE_MAX_REPEAT);
		return -EINVAL;
	}
	f->size += f->last_size * (k ? k - 1 : 0);
	f->last_size *= k ? k : 1;
	f->last_prod = prod;
	if (prod > f->prod)
		f->prod = prod;
	return 0;
}

static int re_limits(const char *p, size_t max_atoms, size_t *ret_atoms, char *msg, size_t msglen)
{
	struct re_frame st[CEL_RE_MAX_GROUPS + 1] = {{0, 1, 0, 1}};
	size_t depth = 0;

	for (size_t i = 0; p[i]; i++) {
		struct re_frame *f = &st[depth];
		unsigned long lo, hi;
		size_t q = re_counted(p + i, &lo, &hi);

		if (q) {
			if (re_quantify(f, lo, hi, i, msg, msglen) < 0)
				return -EINVAL;
			i += q - 1;
		} else if (p[i] == '(') {
			if (depth == CEL_RE_MAX_GROUPS) {
				snprintf(msg, msglen, "groups nest deeper than %d",
					 CEL_RE_MAX_GROUPS);
				return -EINVAL;
			}
			st[++depth] = (struct re_frame){0, 1, 0, 1};
		} else if (p[i] == ')' && depth) {
			struct re_frame g = st[depth--];
			f = &st[depth];
			f->size += g.size;
			f->last_size = g.size, f->last_prod = g.prod;
			if (g.prod > f->prod)
				f->prod = g.prod;
		} else if (p[i] != '*' && p[i] != '+' && p[i] != '?' && p[i] != '|') {
			if (p[i] == '\\' && p[i + 1])
				i++;
			else if (p[i] == '[') /* a bracket expression is one atom */
				i += 1 + (p[i + 1] == ']') +
				     strcspn(p + i + 1 + (p[i + 1] == ']'), "]");
			if (!p[i])
				break;
			f->size++;
			f->last_size = 1, f->last_prod = 1;
		}
		if (f->size > max_atoms) {
			snprintf(msg, msglen, "the pattern expands to more than %zu atoms",
				 max_atoms);
			return -EINVAL;
		}
	}
	if (ret_atoms)
		*ret_atoms = st[0].size;
	return 0;
}

int cel_regex_compile(const char *pattern, regex_t *ret, char *msg, size_t msglen)
{
	return cel_regex_compile_max(pattern, CEL_RE_MAX_EXPANDED, ret, NULL, msg, msglen);
}

int cel_regex_compile_max(const char *pattern, size_t max_atoms, regex_t *ret, size_t *ret_atoms,
			  char *msg, size_t msglen)
{
	struct re_out o = {0};
	int r;

	if (strlen(pattern) > CEL_RE_MAX_PATTERN) {
		snprintf(msg, msglen, "the pattern is longer than %d bytes", CEL_RE_MAX_PATTERN);
		return -EINVAL;
	}
	if (re_limits(pattern, max_atoms, ret_atoms, msg, msglen) < 0)
		return -EINVAL;

	o.cap = 8 * strlen(pattern) + 16; /* "\\W" becomes 13 characters */
	o.buf = malloc(o.cap);
	if (!o.buf)
		return -ENOMEM;
	o.buf[0] = '\0';
	r = re_translate(pattern, &o, msg, msglen);
	if (r == 0 && regcomp(ret, o.buf, REG_EXTENDED | REG_NOSUB) != 0) {
		snprintf(msg, msglen, "not a valid regular expression: \"%s\"", pattern);
		r = -EINVAL;
	}
	free(o.buf);
	return r;
}

size_t cel_program_regex_atoms(const struct cel_program *prog)
{
	size_t n = 0;

	for (const struct cel_node *x = prog ? prog->nodes : NULL; x; x = x->next_owned)
		n += x->re_atoms;
	return n;
}

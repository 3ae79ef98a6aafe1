/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c — lexer and recursive-descent parser of CEL expressions.
 *
 * The grammar is the language definition's, precedence lowest first:
 *   Expr     = Or ["?" Or ":" Expr]
 *   Or       = And {"||" And}
 *   And      = Relation {"&&" Relation}
 *   Relation = Addition {("<"|"<="|">="|">"|"=="|"!="|"in") Addition}
 *   Addition = Mult {("+"|"-") Mult}      Mult = Unary {("*"|"/"|"%") Unary}
 *   Unary    = Member | "!" {"!"} Member | "-" {"-"} Member
 *   Member   = Primary {"." IDENT ["(" args ")"] | "[" Expr "]"}
 *   Primary  = IDENT ["(" args ")"] | "(" Expr ")" | "[" args "]" | literal
 * The parser knows the whole grammar so that what lies outside the subset
 * (the conditional operator, arithmetic, maps, doubles, bytes, null,
 * comprehension macros) is refused by name with its column rather than as a
 * vague syntax error.  Recursion is bounded by CEL_DEPTH_MAX.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cel/cel-internal.h"

enum tok {
	T_EOF,
	T_IDENT,
	T_INT,
	T_STRING,
	T_LPAREN,
	T_RPAREN,
	T_LBRACKET,
	T_RBRACKET,
	T_DOT,
	T_COMMA,
	T_AND,
	T_OR,
	T_NOT,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_MINUS,
	T_OTHER, /* an operator outside the subset: + * / % ? : { } */
};

struct parser {
	struct cel_program *p;
	struct cel_error *err;
	const char *s;
	size_t pos;
	/* current token */
	enum tok tok;
	size_t start, len;
	int64_t ival;
	char *sval; /* decoded string literal, owned until consumed */
	int depth;
};

static unsigned col_of(const struct parser *ps, size_t off)
{
	(void)ps;
	return (unsigned)off + 1;
}

static int lex_number(struct parser *ps)
{
	const char *s = ps->s + ps->pos;
	size_t n = 0;
	uint64_t v = 0;
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

	if (hex)
		n = 2;
	for (;; n++) {
		char c = s[n];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (hex && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (hex && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		if (v > ((uint64_t)INT64_MAX + 1 - d) / (hex ? 16 : 10))
			return cel_fail(ps->err, col_of(ps, ps->pos),
					"integer literal out of range");
		v = v * (hex ? 16 : 10) + d;
	}
	if (hex && n == 2)
		return cel_fail(ps->err, col_of(ps, ps->pos), "malformed hexadecimal literal");
	if (s[n] == '.' || s[n] == 'e' || s[n] == 'E')
		return cel_fail(ps->err, col_of(ps, ps->pos),
				"double literals are outside the supported CEL subset");
	if (s[n] == 'u' || s[n] == 'U')
		return cel_fail(ps->err, col_of(ps, ps->pos),
				"unsigned literals are outside the supported CEL subset");
	/* INT64_MIN's magnitude is only valid under a unary minus (checked there) */
	ps->tok = T_INT;
	ps->len = n;
	ps->ival = v > (uint64_t)INT64_MAX ? INT64_MIN : (int64_t)v;
	return 0;
}

static int lex_escape(struct parser *ps, const char *s, size_t *n, char *out, size_t *o)
{
	char c = s[*n + 1];
	const char *from = "abfnrtv\\\"'`?", *to = "\a\b\f\n\r\t\v\\\"'`?";
	const char *hit = c ? strchr(from, c) : NULL;

	if (hit) {
		out[(*o)++] = to[hit - from];
		*n += 2;
		return 0;
	}
	return cel_fail(ps->err, col_of(ps, ps->pos + *n),
			"escape sequence '\\%c' is outside the supported CEL subset", c ? c : ' ');
}

static int lex_string(struct parser *ps)
{
	const char *s = ps->s + ps->pos;
	char q = s[0], *out;
	size_t n = 1, o = 0;
	int r;

	if (s[1] == q && s[2] == q)
		return cel_fail(ps->err, col_of(ps, ps->pos),
				"triple-quoted strings are outside the supported CEL subset");
	out = malloc(strlen(s) + 1);
	if (!out)
		return -ENOMEM;
	while (s[n] != q) {
		if (s[n] == '\0' || s[n] == '\n' || s[n] == '\r') {
			free(out);
			return cel_fail(ps->err, col_of(ps, ps->pos),
					"unterminated string literal");
		}
		if (s[n] == '\\') {
			r = lex_escape(ps, s, &n, out, &o);
			if (r < 0) {
				free(out);
				return r;
			}
			continue;
		}
		out[o++] = s[n++];
	}
	out[o] = '\0';
	ps->tok = T_STRING;
	ps->len = n + 1;
	ps->sval = out;
	ps->ival = (int64_t)o;
	return 0;
}

struct op_token {
	const char *text;
	enum tok tok;
};

static const struct op_token op_tokens[] = {
    {"&&", T_AND},   {"||", T_OR},	{"==", T_EQ},	   {"!=", T_NE},   {"<=", T_LE},
    {">=", T_GE},    {"<", T_LT},	{">", T_GT},	   {"!", T_NOT},   {"(", T_LPAREN},
    {")", T_RPAREN}, {"[", T_LBRACKET}, {"]", T_RBRACKET}, {".", T_DOT},   {",", T_COMMA},
    {"-", T_MINUS},  {"+", T_OTHER},	{"*", T_OTHER},	   {"/", T_OTHER}, {"%", T_OTHER},
    {"?", T_OTHER},  {":", T_OTHER},	{"{", T_OTHER},	   {"}", T_OTHER},
};

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Advance to the next token. */
static int lex(struct parser *ps)
{
	const char *s;

	free(ps->sval);
	ps->sval = NULL;
	ps->pos += ps->len;
	while (strchr(" \t\r\n\f", ps->s[ps->pos]) && ps->s[ps->pos])
		ps->pos++;
	s = ps->s + ps->pos;
	ps->start = ps->pos;
	ps->len = 0;
	if (*s == '\0') {
		ps->tok = T_EOF;
		return 0;
	}
	if (s[0] == '/' && s[1] == '/') {
		ps->len = strcspn(s, "\n");
		ps->tok = T_EOF; /* placeholder: re-lex after the comment */
		return lex(ps);
	}
	if ((s[0] == 'r' || s[0] == 'R' || s[0] == 'b' || s[0] == 'B') &&
	    (s[1] == '"' || s[1] == '\''))
		return cel_fail(ps->err, col_of(ps, ps->pos),
				"raw and bytes literals are outside the supported CEL subset");
	if (is_ident_start(*s)) {
		while (is_ident_char(s[ps->len]))
			ps->len++;
		ps->tok = T_IDENT;
		return 0;
	}
	if (*s >= '0' && *s <= '9')
		return lex_number(ps);
	if (*s == '"' || *s == '\'')
		return lex_string(ps);
	for (size_t i = 0; i < sizeof(op_tokens) / sizeof(op_tokens[0]); i++) {
		size_t n = strlen(op_tokens[i].text);

		if (strncmp(s, op_tokens[i].text, n) == 0) {
			ps->tok = op_tokens[i].tok;
			ps->len = n;
			return 0;
		}
	}
	if ((unsigned char)*s >= 0x80)
		return cel_fail(ps->err, col_of(ps, ps->pos),
				"unexpected character outside a string literal");
	return cel_fail(ps->err, col_of(ps, ps->pos), "unexpected character '%c'", *s);
}

static bool tok_is(const struct parser *ps, const char *word)
{
	return ps->tok == T_IDENT && ps->len == strlen(word) &&
	       strncmp(ps->s + ps->start, word, ps->len) == 0;
}

static int expect(struct parser *ps, enum tok t, const char *what)
{
	if (ps->tok != t)
		return cel_fail(ps->err, col_of(ps, ps->start),
				ps->tok == T_EOF ? "unexpected end of expression, expected %s"
						 : "syntax error, expected %s",
				what);
	return lex(ps);
}

static int parse_expr(struct parser *ps, struct cel_node **ret);

static struct cel_node *node(struct parser *ps, enum cel_node_kind kind, size_t off)
{
	return cel_node_new(ps->p, kind, col_of(ps, off));
}

/* "(" args ")" or "[" args "]"; the opening token is current. */
static int parse_args(struct parser *ps, enum tok close, struct cel_node *n)
{
	int r = lex(ps);

	while (r == 0 && ps->tok != close) {
		struct cel_node *arg, **grown;

		r = parse_expr(ps, &arg);
		if (r < 0)
			return r;
		if (n->nargs >= 1000)
			return cel_fail(ps->err, arg->col, "too many arguments or list items");
		grown = realloc(n->args, (n->nargs + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		n->args = grown;
		n->args[n->nargs++] = arg;
		if (ps->tok != T_COMMA)
			break;
		r = lex(ps);
	}
	if (r < 0)
		return r;
	return expect(ps, close, close == T_RPAREN ? "')'" : "']'");
}

static int parse_ident(struct parser *ps, struct cel_node **ret)
{
	struct cel_node *n;
	size_t off = ps->start;
	int r;

	if (tok_is(ps, "true") || tok_is(ps, "false")) {
		n = node(ps, CN_BOOL, off);
		if (!n)
			return -ENOMEM;
		n->bval = tok_is(ps, "true");
		*ret = n;
		return lex(ps);
	}
	if (tok_is(ps, "null"))
		return cel_fail(ps->err, col_of(ps, off),
				"null is outside the supported CEL subset");
	n = node(ps, CN_IDENT, off);
	if (!n)
		return -ENOMEM;
	n->str = ps->s + ps->start;
	n->len = ps->len;
	r = lex(ps);
	if (r == 0 && ps->tok == T_LPAREN) {
		n->kind = CN_CALL;
		r = parse_args(ps, T_RPAREN, n);
	}
	*ret = n;
	return r;
}

static int parse_primary(struct parser *ps, struct cel_node **ret)
{
	struct cel_node *n;
	size_t off = ps->start;
	int r;

	switch (ps->tok) {
	case T_IDENT:
		return parse_ident(ps, ret);
	case T_INT:
		n = node(ps, CN_INT, off);
		if (!n)
			return -ENOMEM;
		n->i = ps->ival;
		if (n->i == INT64_MIN)
			n->bval = true; /* magnitude 2^63: only valid negated */
		*ret = n;
		return lex(ps);
	case T_STRING:
		n = node(ps, CN_STRING, off);
		if (!n)
			return -ENOMEM;
		n->str = ps->sval;
		n->len = (size_t)ps->ival;
		r = cel_program_own(ps->p, ps->sval);
		ps->sval = NULL;
		*ret = n;
		return r < 0 ? r : lex(ps);
	case T_LPAREN:
		r = lex(ps);
		if (r == 0)
			r = parse_expr(ps, ret);
		return r < 0 ? r : expect(ps, T_RPAREN, "')'");
	case T_LBRACKET:
		n = node(ps, CN_LIST, off);
		if (!n)
			return -ENOMEM;
		*ret = n;
		return parse_args(ps, T_RBRACKET, n);
	case T_EOF:
		return cel_fail(ps->err, col_of(ps, off), "unexpected end of expression");
	default:
		if (ps->s[off] == '{')
			return cel_fail(ps->err, col_of(ps, off),
					"map literals are outside the supported CEL subset");
		if (ps->s[off] == '.')
			return cel_fail(
			    ps->err, col_of(ps, off),
			    "qualified identifiers ('.name') are outside the supported CEL "
			    "subset");
		return cel_fail(ps->err, col_of(ps, off), "syntax error at '%.*s'", (int)ps->len,
				ps->s + off);
	}
}

static int parse_member(struct parser *ps, struct cel_node **ret)
{
	struct cel_node *n = NULL, *m;
	int r = parse_primary(ps, &n);

	while (r == 0 && (ps->tok == T_DOT || ps->tok == T_LBRACKET)) {
		size_t off = ps->start;

		if (ps->tok == T_LBRACKET) {
			m = node(ps, CN_INDEX, off);
			if (!m)
				return -ENOMEM;
			m->a = n;
			r = lex(ps);
			if (r == 0)
				r = parse_expr(ps, &m->b);
			if (r == 0)
				r = expect(ps, T_RBRACKET, "']'");
			n = m;
			continue;
		}
		r = lex(ps);
		if (r < 0)
			break;
		if (ps->tok != T_IDENT)
			return cel_fail(ps->err, col_of(ps, ps->start),
					"syntax error, expected a field name after '.'");
		m = node(ps, CN_SELECT, ps->start);
		if (!m)
			return -ENOMEM;
		m->a = n;
		m->str = ps->s + ps->start;
		m->len = ps->len;
		r = lex(ps);
		if (r == 0 && ps->tok == T_LPAREN) {
			m->kind = CN_CALL;
			r = parse_args(ps, T_RPAREN, m);
		}
		n = m;
	}
	*ret = n;
	return r;
}

static int parse_unary(struct parser *ps, struct cel_node **ret)
{
	struct cel_node *n;
	size_t off = ps->start;
	int r;

	if (ps->tok != T_NOT && ps->tok != T_MINUS)
		return parse_member(ps, ret);
	if (++ps->depth > CEL_DEPTH_MAX)
		return -E2BIG;
	n = node(ps, ps->tok == T_NOT ? CN_NOT : CN_NEG, off);
	if (!n)
		return -ENOMEM;
	r = lex(ps);
	if (r == 0)
		r = parse_unary(ps, &n->a);
	ps->depth--;
	if (r == 0 && n->kind == CN_NEG && n->a->kind == CN_INT) {
		/* fold a negative literal, the only way to write INT64_MIN */
		n->kind = CN_INT;
		n->i = n->a->bval ? INT64_MIN : -n->a->i;
		n->bval = false;
	}
	*ret = n;
	return r;
}

static int refuse_operator(struct parser *ps)
{
	char c = ps->s[ps->start];

	if (c == '?' || c == ':')
		return cel_fail(ps->err, col_of(ps, ps->start),
				"the conditional operator '? :' is outside the supported CEL "
				"subset");
	return cel_fail(ps->err, col_of(ps, ps->start),
			"arithmetic ('%c') is outside the supported CEL subset", c);
}

static enum cel_node_kind relation_of(const struct parser *ps)
{
	switch (ps->tok) {
	case T_EQ:
		return CN_EQ;
	case T_NE:
		return CN_NE;
	case T_LT:
		return CN_LT;
	case T_LE:
		return CN_LE;
	case T_GT:
		return CN_GT;
	case T_GE:
		return CN_GE;
	default:
		return tok_is(ps, "in") ? CN_IN : CN_BOOL;
	}
}

static int parse_relation(struct parser *ps, struct cel_node **ret)
{
	struct cel_node *n = NULL, *m;
	enum cel_node_kind k;
	int r = parse_unary(ps, &n);

	while (r == 0) {
		if (ps->tok == T_OTHER || ps->tok == T_MINUS) {
			if (ps->s[ps->start] == '?' || ps->s[ps->start] == ':' ||
			    ps->s[ps->start] == '}')
				break;
			return refuse_operator(ps);
		}
		k = relation_of(ps);
		if (k == CN_BOOL)
			break;
		m = node(ps, k, ps->start);
		if (!m)
			return -ENOMEM;
		m->a = n;
		r = lex(ps);
		if (r == 0)
			r = parse_unary(ps, &m->b);
		n = m;
	}
	*ret = n;
	return r;
}

/* Left-associative chain of one logical operator. */
static int parse_logic(struct parser *ps, enum tok op, struct cel_node **ret)
{
	struct cel_node *n = NULL, *m;
	int r = op == T_OR ? parse_logic(ps, T_AND, &n) : parse_relation(ps, &n);

	while (r == 0 && ps->tok == op) {
		m = node(ps, op == T_OR ? CN_OR : CN_AND, ps->start);
		if (!m)
			return -ENOMEM;
		m->a = n;
		r = lex(ps);
		if (r == 0)
			r = op == T_OR ? parse_logic(ps, T_AND, &m->b) : parse_relation(ps, &m->b);
		n = m;
	}
	*ret = n;
	return r;
}

static int parse_expr(struct parser *ps, struct cel_node **ret)
{
	int r;

	if (++ps->depth > CEL_DEPTH_MAX)
		return -E2BIG;
	r = parse_logic(ps, T_OR, ret);
	if (r == 0 && ps->tok == T_OTHER)
		r = refuse_operator(ps);
	ps->depth--;
	return r;
}

int cel_parse(struct cel_program *p, struct cel_error *err)
{
	struct parser ps = {.p = p, .err = err, .s = p->source};
	int r = lex(&ps);

	if (r == 0)
		r = parse_expr(&ps, &p->root);
	if (r == 0 && ps.tok != T_EOF)
		r = cel_fail(err, col_of(&ps, ps.start), "syntax error at '%.*s'", (int)ps.len,
			     ps.s + ps.start);
	if (r == -E2BIG)
		cel_fail(err, col_of(&ps, ps.start), "expression nested deeper than %d levels",
			 CEL_DEPTH_MAX),
		    r = -E2BIG;
	free(ps.sval);
	return r;
}

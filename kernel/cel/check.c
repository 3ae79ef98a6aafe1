/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.c — type checking of a parsed expression against the DRA device
 * environment.
 *
 * Every node gets its static type bottom-up.  Accesses to the one variable
 * are resolved here: device.driver, device.attributes[D].N and
 * device.capacity[D].N become CN_DRIVER, CN_ATTR and CN_CAP; attribute
 * values are dyn (an attribute may be an int, bool, string or version, known
 * only per device), capacities are quantities.  Calls are resolved to
 * builtins by name, receiver and argument types, as CEL's overload
 * resolution does; a call with constant arguments (quantity("1Gi"),
 * semver("1.2.3"), a literal matches() pattern) is folded here so that a
 * malformed constant fails at compile time with its column.  Overloads the
 * subset lacks fail as "found no matching overload", like cel-go's checker.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cel/cel-internal.h"
#include "topology/topology.h"

static const char *const type_names[] = {
    [CT_BOOL] = "bool",
    [CT_INT] = "int",
    [CT_STRING] = "string",
    [CT_QUANTITY] = "quantity",
    [CT_SEMVER] = "semver",
    [CT_DYN] = "dyn",
    [CT_LIST] = "list",
    [CT_DEVICE] = "device",
    [CT_ATTR_DOMAINS] = "map(string, map(string, dyn))",
    [CT_CAP_DOMAINS] = "map(string, map(string, quantity))",
    [CT_ATTR_MAP] = "map(string, dyn)",
    [CT_CAP_MAP] = "map(string, quantity)",
};

const char *cel_type_name(enum cel_type t)
{
	return t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "?";
}

static int check(struct cel_program *p, struct cel_node *n, struct cel_error *err);

static bool is_name(const struct cel_node *n, const char *name)
{
	return n->len == strlen(name) && strncmp(n->str, name, n->len) == 0;
}

static bool scalar(enum cel_type t)
{
	return t <= CT_DYN;
}

/* Whether == may compare values of these static types. */
static bool comparable(enum cel_type a, enum cel_type b)
{
	return scalar(a) && scalar(b) && (a == b || a == CT_DYN || b == CT_DYN);
}

/* Whether < may order them: ints, strings, bools, or dyn against those. */
static bool orderable(enum cel_type a, enum cel_type b)
{
	bool oa = a == CT_INT || a == CT_STRING || a == CT_BOOL || a == CT_DYN;
	bool ob = b == CT_INT || b == CT_STRING || b == CT_BOOL || b == CT_DYN;

	return oa && ob && (a == b || a == CT_DYN || b == CT_DYN);
}

static int no_overload(struct cel_error *err, const struct cel_node *n, const char *op)
{
	if (n->b)
		return cel_fail(err, n->col,
				"found no matching overload for '%s' applied to '(%s, %s)'", op,
				cel_type_name(n->a->type), cel_type_name(n->b->type));
	return cel_fail(err, n->col, "found no matching overload for '%s' applied to '(%s)'", op,
			cel_type_name(n->a->type));
}

static int check_select(struct cel_node *n, struct cel_error *err)
{
	enum cel_type t = n->a->type;

	if (t == CT_DEVICE) {
		if (is_name(n, "driver"))
			n->kind = CN_DRIVER, n->type = CT_STRING;
		else if (is_name(n, "allowMultipleAllocations"))
			n->kind = CN_MULTI, n->type = CT_BOOL;
		else if (is_name(n, "attributes"))
			n->kind = CN_ATTRS, n->type = CT_ATTR_DOMAINS;
		else if (is_name(n, "capacity"))
			n->kind = CN_CAPS, n->type = CT_CAP_DOMAINS;
		else
			return cel_fail(err, n->col, "undefined field '%.*s' of device",
					(int)n->len, n->str);
		return 0;
	}
	if (t == CT_ATTR_MAP || t == CT_CAP_MAP) {
		n->kind = t == CT_ATTR_MAP ? CN_ATTR : CN_CAP;
		n->type = t == CT_ATTR_MAP ? CT_DYN : CT_QUANTITY;
		return 0;
	}
	if (t == CT_ATTR_DOMAINS || t == CT_CAP_DOMAINS)
		return cel_fail(
		    err, n->col,
		    "select a domain with [\"domain\"] before '%.*s' (device.%s[\"domain\"]"
		    ".%.*s)",
		    (int)n->len, n->str, t == CT_ATTR_DOMAINS ? "attributes" : "capacity",
		    (int)n->len, n->str);
	return cel_fail(err, n->col, "type '%s' does not support field selection",
			cel_type_name(t));
}

/* a[b]: a domain of device.attributes/capacity, or a name in one domain. */
static int check_index(struct cel_program *p, struct cel_node *n, struct cel_error *err)
{
	enum cel_type t = n->a->type;
	int r = check(p, n->b, err);

	if (r < 0)
		return r;
	if ((t == CT_ATTR_DOMAINS || t == CT_CAP_DOMAINS) &&
	    (n->b->type == CT_STRING || n->b->type == CT_DYN)) {
		n->kind = CN_DOMAIN;
		n->type = t == CT_ATTR_DOMAINS ? CT_ATTR_MAP : CT_CAP_MAP;
		return 0;
	}
	if ((t == CT_ATTR_MAP || t == CT_CAP_MAP) && n->b->kind == CN_STRING) {
		n->kind = t == CT_ATTR_MAP ? CN_ATTR : CN_CAP;
		n->type = t == CT_ATTR_MAP ? CT_DYN : CT_QUANTITY;
		n->str = n->b->str;
		n->len = n->b->len;
		return 0;
	}
	if (t == CT_ATTR_MAP || t == CT_CAP_MAP)
		return cel_fail(err, n->b->col,
				"an attribute or capacity name must be a string literal");
	if (t == CT_LIST)
		return cel_fail(err, n->col, "list indexing is outside the supported CEL subset");
	return no_overload(err, n, "_[_]");
}

static int check_has(struct cel_program *p, struct cel_node *n, struct cel_error *err)
{
	struct cel_node *arg = n->nargs == 1 ? n->args[0] : NULL;
	int r;

	if (!arg || arg->kind != CN_SELECT)
		return cel_fail(err, n->col,
				"has() takes one field selection, as in "
				"has(device.attributes[\"domain\"].name)");
	r = check(p, arg, err);
	if (r < 0)
		return r;
	if (arg->kind != CN_ATTR && arg->kind != CN_CAP)
		return cel_fail(err, arg->col,
				"has() tests device.attributes[\"domain\"].name or "
				"device.capacity[\"domain\"].name");
	n->kind = CN_HAS;
	n->a = arg;
	n->type = CT_BOOL;
	return 0;
}

struct builtin {
	const char *name;
	enum cel_fn fn;
	bool method;
	enum cel_type target; /* receiver (methods) */
	int nargs;
	enum cel_type arg;
	enum cel_type result;
};

/* Overloads; a dyn receiver or argument matches when resolved at run time. */
static const struct builtin builtins[] = {
    {"quantity", CF_QUANTITY, false, 0, 1, CT_STRING, CT_QUANTITY},
    {"semver", CF_SEMVER, false, 0, 1, CT_STRING, CT_SEMVER},
    {"isSemver", CF_IS_SEMVER, false, 0, 1, CT_STRING, CT_BOOL},
    {"isQuantity", CF_IS_QUANTITY, false, 0, 1, CT_STRING, CT_BOOL},
    {"startsWith", CF_STARTS_WITH, true, CT_STRING, 1, CT_STRING, CT_BOOL},
    {"endsWith", CF_ENDS_WITH, true, CT_STRING, 1, CT_STRING, CT_BOOL},
    {"contains", CF_CONTAINS, true, CT_STRING, 1, CT_STRING, CT_BOOL},
    {"matches", CF_MATCHES, true, CT_STRING, 1, CT_STRING, CT_BOOL},
    {"compareTo", CF_COMPARE_TO, true, CT_QUANTITY, 1, CT_QUANTITY, CT_INT},
    {"isLessThan", CF_IS_LESS_THAN, true, CT_QUANTITY, 1, CT_QUANTITY, CT_BOOL},
    {"isGreaterThan", CF_IS_GREATER_THAN, true, CT_QUANTITY, 1, CT_QUANTITY, CT_BOOL},
    {"compareTo", CF_COMPARE_TO, true, CT_SEMVER, 1, CT_SEMVER, CT_INT},
    {"isLessThan", CF_IS_LESS_THAN, true, CT_SEMVER, 1, CT_SEMVER, CT_BOOL},
    {"isGreaterThan", CF_IS_GREATER_THAN, true, CT_SEMVER, 1, CT_SEMVER, CT_BOOL},
    {"major", CF_MAJOR, true, CT_SEMVER, 0, 0, CT_INT},
    {"minor", CF_MINOR, true, CT_SEMVER, 0, 0, CT_INT},
    {"patch", CF_PATCH, true, CT_SEMVER, 0, 0, CT_INT},
};

static bool fits(enum cel_type have, enum cel_type want)
{
	return have == want || have == CT_DYN;
}

static bool known_name(const struct cel_node *n)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (is_name(n, builtins[i].name) && builtins[i].method == (n->a != NULL))
			return true;
	return false;
}

static const struct builtin *resolve(const struct cel_node *n)
{
	bool method = n->a != NULL;

	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		const struct builtin *b = &builtins[i];

		if (!is_name(n, b->name) || b->method != method)
			continue;
		if ((size_t)b->nargs != n->nargs)
			continue;
		if (method && !fits(n->a->type, b->target))
			continue;
		if (b->nargs == 1 && !fits(n->args[0]->type, b->arg))
			continue;
		/* a dyn receiver takes its overload from the argument's type */
		if (method && n->a->type == CT_DYN && b->nargs == 1 && n->args[0]->type != b->arg &&
		    n->args[0]->type != CT_DYN)
			continue;
		return b;
	}
	return NULL;
}

/* Fold a call whose arguments are constants; errors carry their column. */
static int fold_call(struct cel_node *n, struct cel_error *err)
{
	struct cel_node *arg = n->nargs ? n->args[0] : NULL;
	char why[200];
	int r;

	if (!arg || arg->kind != CN_STRING)
		return 0;
	switch (n->fn) {
	case CF_QUANTITY:
		if (topo_quantity_parse(arg->str, &n->i) < 0)
			return cel_fail(err, arg->col, "quantity(\"%s\"): not a valid quantity",
					arg->str);
		n->kind = CN_QUANTITY;
		break;
	case CF_SEMVER:
		if (cel_semver_parse(arg->str, &n->v) < 0)
			return cel_fail(err, arg->col,
					"semver(\"%s\"): not a valid semantic version", arg->str);
		n->kind = CN_SEMVER;
		break;
	case CF_MATCHES:
		n->re = malloc(sizeof(*n->re));
		if (!n->re)
			return -ENOMEM;
		r = cel_regex_compile_max(arg->str, CEL_RE_MAX_EXPANDED, n->re, &n->re_atoms, why,
					  sizeof(why));
		if (r < 0) {
			free(n->re);
			n->re = NULL;
			return r == -EINVAL ? cel_fail(err, arg->col, "matches(): %s", why) : r;
		}
		break;
	default:
		break;
	}
	return 0;
}

static int check_call(struct cel_program *p, struct cel_node *n, struct cel_error *err)
{
	const struct builtin *b;
	int r;

	if (!n->a && is_name(n, "has"))
		return check_has(p, n, err);
	if (!known_name(n))
		return cel_fail(err, n->col, "%s '%.*s' is outside the supported CEL subset",
				n->a ? "method" : "function", (int)n->len, n->str);
	if (n->a && (r = check(p, n->a, err)) < 0)
		return r;
	for (size_t i = 0; i < n->nargs; i++)
		if ((r = check(p, n->args[i], err)) < 0)
			return r;
	b = resolve(n);
	if (!b) {
		char args[160] = "";

		for (size_t i = 0; i < n->nargs && i < 4; i++)
			snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s%s",
				 i ? ", " : "", cel_type_name(n->args[i]->type));
		return cel_fail(err, n->col,
				"found no matching overload for '%.*s' applied to '%s%s(%s)'",
				(int)n->len, n->str, n->a ? cel_type_name(n->a->type) : "",
				n->a ? "." : "", args);
	}
	n->kind = CN_FUNC;
	n->fn = b->fn;
	n->type = b->result;
	return fold_call(n, err);
}

static int check_list(struct cel_program *p, struct cel_node *n, struct cel_error *err)
{
	n->type = CT_LIST;
	n->elem = CT_DYN;
	for (size_t i = 0; i < n->nargs; i++) {
		int r = check(p, n->args[i], err);

		if (r < 0)
			return r;
		if (!scalar(n->args[i]->type))
			return cel_fail(err, n->args[i]->col, "a list holds %s values only here",
					"bool, int, string, quantity or semver");
		n->elem = i == 0 || n->args[i]->type == n->elem ? n->args[i]->type : CT_DYN;
	}
	return 0;
}

static int check_binary(struct cel_program *p, struct cel_node *n, struct cel_error *err)
{
	static const char *const ops[] = {[CN_AND] = "_&&_", [CN_OR] = "_||_", [CN_EQ] = "_==_",
					  [CN_NE] = "_!=_",  [CN_LT] = "_<_",  [CN_LE] = "_<=_",
					  [CN_GT] = "_>_",   [CN_GE] = "_>=_", [CN_IN] = "@in"};
	enum cel_type a, b;
	int r = check(p, n->a, err);

	if (r == 0)
		r = check(p, n->b, err);
	if (r < 0)
		return r;
	a = n->a->type, b = n->b->type;
	n->type = CT_BOOL;
	switch (n->kind) {
	case CN_AND:
	case CN_OR:
		return fits(a, CT_BOOL) && fits(b, CT_BOOL) ? 0 : no_overload(err, n, ops[n->kind]);
	case CN_EQ:
	case CN_NE:
		return comparable(a, b) ? 0 : no_overload(err, n, ops[n->kind]);
	case CN_IN:
		if (b == CT_LIST && (n->b->nargs == 0 || comparable(a, n->b->elem)))
			return 0;
		if ((b == CT_ATTR_MAP || b == CT_CAP_MAP || b == CT_ATTR_DOMAINS ||
		     b == CT_CAP_DOMAINS) &&
		    fits(a, CT_STRING))
			return 0;
		return no_overload(err, n, ops[n->kind]);
	default:
		return orderable(a, b) ? 0 : no_overload(err, n, ops[n->kind]);
	}
}

static int check_node(struct cel_program *p, struct cel_node *n, struct cel_error *err)
{
	int r;

	switch (n->kind) {
	case CN_BOOL:
		n->type = CT_BOOL;
		return 0;
	case CN_INT:
		if (n->bval)
			return cel_fail(err, n->col, "integer literal out of range");
		n->type = CT_INT;
		return 0;
	case CN_STRING:
		n->type = CT_STRING;
		return 0;
	case CN_LIST:
		return check_list(p, n, err);
	case CN_IDENT:
		if (!is_name(n, "device"))
			return cel_fail(err, n->col, "undeclared reference to '%.*s'", (int)n->len,
					n->str);
		n->kind = CN_DEVICE;
		n->type = CT_DEVICE;
		return 0;
	case CN_SELECT:
		r = check(p, n->a, err);
		return r < 0 ? r : check_select(n, err);
	case CN_INDEX:
		r = check(p, n->a, err);
		return r < 0 ? r : check_index(p, n, err);
	case CN_CALL:
		return check_call(p, n, err);
	case CN_NOT:
	case CN_NEG:
		r = check(p, n->a, err);
		if (r < 0)
			return r;
		n->type = n->kind == CN_NOT ? CT_BOOL : CT_INT;
		if (!fits(n->a->type, n->type))
			return no_overload(err, n, n->kind == CN_NOT ? "!_" : "-_");
		return 0;
	default:
		return check_binary(p, n, err);
	}
}

/*
 * Chains of members and operators parse iteratively but nest in the tree;
 * the checker bounds the tree's height so that the evaluator's recursion is
 * bounded too.
 */
static int check(struct cel_program *p, struct cel_node *n, struct cel_error *err)
{
	int r;

	if (++p->height > CEL_HEIGHT_MAX)
		return cel_fail(err, n->col, "expression nested deeper than %d levels",
				CEL_HEIGHT_MAX);
	r = check_node(p, n, err);
	p->height--;
	return r;
}

int cel_check(struct cel_program *p, struct cel_error *err)
{
	int r = check(p, p->root, err);

	if (r < 0)
		return r;
	if (p->root->type != CT_BOOL && p->root->type != CT_DYN)
		return cel_fail(err, p->root->col, "expression must evaluate to bool, not %s",
				cel_type_name(p->root->type));
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cel-internal.h — the expression tree shared by the parser (parse.c), the
 * type checker (check.c) and the evaluator (eval.c).
 *
 * The parser builds generic nodes (identifiers, selections, indexes, calls,
 * operators); the checker gives every node its static type and rewrites the
 * device environment's accesses into the nodes the evaluator runs fast
 * (CN_DRIVER, CN_DOMAIN, CN_ATTR, CN_CAP) and constant calls into constants
 * (quantity("1Gi"), semver("1.2.3"), a literal matches() pattern).
 */
#ifndef PODKERNEL_KERNEL_CEL_INTERNAL_H
#define PODKERNEL_KERNEL_CEL_INTERNAL_H

#include <regex.h>
#include <stdarg.h>

#include "kernel/cel/cel.h"

enum cel_node_kind {
	/* from the parser */
	CN_BOOL,
	CN_INT,
	CN_STRING,
	CN_LIST,   /* args */
	CN_IDENT,  /* str */
	CN_SELECT, /* a.str */
	CN_INDEX,  /* a[b] */
	CN_CALL,   /* str(args) or a.str(args) */
	CN_HAS,	   /* has(a), a a selection */
	CN_NOT,
	CN_NEG,
	CN_AND,
	CN_OR,
	CN_EQ,
	CN_NE,
	CN_LT,
	CN_LE,
	CN_GT,
	CN_GE,
	CN_IN,
	/* from the checker */
	CN_DEVICE,   /* the variable `device` */
	CN_DRIVER,   /* device.driver */
	CN_MULTI,    /* device.allowMultipleAllocations */
	CN_ATTRS,    /* device.attributes */
	CN_CAPS,     /* device.capacity */
	CN_DOMAIN,   /* device.attributes[b] or device.capacity[b]: a is CN_ATTRS/CN_CAPS */
	CN_ATTR,     /* attribute str of domain a (a CN_DOMAIN) */
	CN_CAP,	     /* capacity str of domain a (a CN_DOMAIN) */
	CN_QUANTITY, /* constant quantity: i milli-units */
	CN_SEMVER,   /* constant version: v */
	CN_FUNC,     /* builtin fn applied to a (target or NULL) and args */
};

/* Static types; CT_DYN is an attribute value, known only at evaluation. */
enum cel_type {
	CT_BOOL,
	CT_INT,
	CT_STRING,
	CT_QUANTITY,
	CT_SEMVER,
	CT_DYN,
	CT_LIST,
	CT_DEVICE,
	CT_ATTR_DOMAINS, /* device.attributes */
	CT_CAP_DOMAINS,	 /* device.capacity */
	CT_ATTR_MAP,	 /* device.attributes["domain"] */
	CT_CAP_MAP,	 /* device.capacity["domain"] */
};
const char *cel_type_name(enum cel_type t);

/* Builtin functions and methods, resolved by the checker. */
enum cel_fn {
	CF_QUANTITY,
	CF_SEMVER,
	CF_IS_SEMVER,
	CF_IS_QUANTITY,
	CF_STARTS_WITH,
	CF_ENDS_WITH,
	CF_CONTAINS,
	CF_MATCHES,
	CF_COMPARE_TO,
	CF_IS_LESS_THAN,
	CF_IS_GREATER_THAN,
	CF_MAJOR,
	CF_MINOR,
	CF_PATCH,
};

struct cel_node {
	enum cel_node_kind kind;
	enum cel_type type;
	enum cel_type elem; /* element type of a CT_LIST */
	enum cel_fn fn;
	unsigned col;
	struct cel_node *a, *b;
	struct cel_node **args;
	size_t nargs;
	const char *str; /* identifier, field, method or decoded literal (NUL-terminated) */
	size_t len;
	int64_t i;
	bool bval;
	struct cel_semver v;
	regex_t *re;	 /* compiled literal pattern of matches() */
	size_t re_atoms; /* its size once repetitions are expanded */
	struct cel_node *next_owned;
};

struct cel_program {
	char *source;
	struct cel_node *root;
	struct cel_node *nodes; /* every node, for freeing */
	char **strings;		/* decoded literals */
	size_t nstrings, capstrings;
	int height; /* of the checker's recursion */
};

/* Height of an expression tree (operator and member chains included). */
#define CEL_HEIGHT_MAX 256

/* Set err (may be NULL) to "msg" at col; returns -EINVAL. */
int cel_fail(struct cel_error *err, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct cel_node *cel_node_new(struct cel_program *p, enum cel_node_kind kind, unsigned col);
/* Keep s (malloc'ed) until the program is freed; -ENOMEM (s freed) on failure. */
int cel_program_own(struct cel_program *p, char *s);

int cel_parse(struct cel_program *p, struct cel_error *err);
int cel_check(struct cel_program *p, struct cel_error *err);

/*
 * Translate an RE2-style pattern of the supported subset into a POSIX
 * extended one and compile it; -EINVAL with why in msg.  RE2's limits hold
 * first, before anything is compiled: counted repetitions at most
 * CEL_RE_MAX_REPEAT, also multiplied through nested groups; at most
 * CEL_RE_MAX_EXPANDED atoms once repetitions are expanded; at most
 * CEL_RE_MAX_PATTERN bytes and CEL_RE_MAX_GROUPS nested groups.
 */
#define CEL_RE_MAX_REPEAT 1000
#define CEL_RE_MAX_EXPANDED 10000
#define CEL_RE_MAX_PATTERN 4096
#define CEL_RE_MAX_GROUPS 64
int cel_regex_compile(const char *pattern, regex_t *ret, char *msg, size_t msglen);
/*
 * The same with max_atoms in place of CEL_RE_MAX_EXPANDED, the pattern's
 * expanded size in *ret_atoms (may be NULL).  A pattern computed at run time
 * is compiled for each evaluation: it gets CEL_RE_MAX_EXPANDED_DYNAMIC.
 */
#define CEL_RE_MAX_EXPANDED_DYNAMIC 256
int cel_regex_compile_max(const char *pattern, size_t max_atoms, regex_t *ret, size_t *ret_atoms,
			  char *msg, size_t msglen);

#endif /* PODKERNEL_KERNEL_CEL_INTERNAL_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cel.h — the subset of the Common Expression Language that Dynamic Resource
 * Allocation device selectors are written in (resource.k8s.io/v1
 * DeviceSelector.cel.expression).
 *
 * An expression is compiled once (lexed, parsed into a tree, type-checked
 * against the DRA device environment, constant arguments folded) and then
 * evaluated against many devices without allocating.  The environment is one
 * variable, `device`, with
 *   device.driver                       string
 *   device.allowMultipleAllocations     bool (KEP-5075: a shared device)
 *   device.attributes["domain"].name    int, bool, string or semver (dyn)
 *   device.capacity["domain"].name      quantity
 * and the subset of the language the README lists: literals (string, int,
 * bool, lists), == != < <= > >=, && || !, `in`, has(), quantity(), semver(),
 * isSemver(), and the methods startsWith, endsWith, contains, matches,
 * compareTo, isLessThan, isGreaterThan, major, minor, patch.  Anything else
 * is refused at compile time with its column.
 *
 * Errors follow the language definition: a runtime error (a missing
 * attribute, a value of the wrong type) is a value that && and || absorb
 * only when the other side decides the result (false && error is false,
 * true || error is true); otherwise the evaluation fails.  A selector is
 * never true by accident.
 *
 * Columns are 1-based character offsets into the expression.
 */
#ifndef PODKERNEL_KERNEL_CEL_H
#define PODKERNEL_KERNEL_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upstream's limit on a selector expression (DeviceSelector.cel.expression). */
#define CEL_EXPRESSION_MAX 10240
/* Nesting depth of an expression (parentheses, operators, calls). */
#define CEL_DEPTH_MAX 64

struct cel_error {
	unsigned col;  /* 1-based column of the offending token, 0 when none */
	char msg[256]; /* "undeclared reference to 'foo'" */
};

/* A semantic version (semver 2.0): MAJOR.MINOR.PATCH[-prerelease][+build]. */
struct cel_semver {
	uint64_t major, minor, patch;
	const char *pre; /* prerelease identifiers, not NUL-terminated; NULL if none */
	size_t prelen;
};
/*
 * Parse a strict semantic version; pre points into s (s must outlive ret).
 * -EINVAL when s is not one.
 */
int cel_semver_parse(const char *s, struct cel_semver *ret);
/* <0, 0, >0 by semver 2.0 precedence (build metadata ignored). */
int cel_semver_compare(const struct cel_semver *a, const struct cel_semver *b);

/* ---- the device a selector is evaluated against ---------------------------- */
enum cel_attr_type {
	CEL_ATTR_INT,
	CEL_ATTR_BOOL,
	CEL_ATTR_STRING,
	CEL_ATTR_VERSION,
};

/*
 * One attribute, split into domain and name ("dra.example.com/model" ->
 * "dra.example.com", "model"; an unqualified name has the driver's domain).
 * Strings are borrowed from the caller.
 */
struct cel_attr {
	const char *domain;
	const char *name;
	enum cel_attr_type type;
	union {
		int64_t i;
		bool b;
		const char *s;
		struct cel_semver v;
	};
};

struct cel_capacity {
	const char *domain;
	const char *name;
	int64_t milli; /* the quantity in milli-units */
};

struct cel_device {
	const char *driver;
	const struct cel_attr *attrs;
	size_t nattrs;
	const struct cel_capacity *caps;
	size_t ncaps;
	bool multi; /* allowMultipleAllocations */
};

/* ---- programs ------------------------------------------------------------------------ */
struct cel_program;

/*
 * Compile expr (NUL-terminated) into a program that yields bool.  Returns 0,
 * -EINVAL (syntax, outside the subset, type error: err says which and where),
 * -E2BIG (longer than CEL_EXPRESSION_MAX or deeper than CEL_DEPTH_MAX),
 * -ENOMEM.  err may be NULL.
 */
int cel_compile(const char *expr, struct cel_program **ret, struct cel_error *err);
/*
 * Evaluate against one device.  Returns 0 with *ret_match, or -EINVAL when
 * the evaluation ends in an error (err says which, with the column of the
 * expression part that failed).  Never allocates, except for matches() with
 * a pattern that is not a literal.  Thread-safe on a shared program.
 */
int cel_eval(const struct cel_program *prog, const struct cel_device *dev, bool *ret_match,
	     struct cel_error *err);
/* What compiling the program's matches() patterns cost: their sizes once
 * repetitions are expanded (a caller's work budget counts it). */
size_t cel_program_regex_atoms(const struct cel_program *prog);
/* The expression the program was compiled from (owned by the program). */
const char *cel_program_source(const struct cel_program *prog);
void cel_program_free(struct cel_program *prog); /* accepts NULL */

#endif /* PODKERNEL_KERNEL_CEL_H */

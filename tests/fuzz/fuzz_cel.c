/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_cel.c — libFuzzer target for the CEL subset of device selectors:
 * compile any bytes as an expression and evaluate what compiles against two
 * devices (one with attributes of every type and capacities, one bare).
 * Crashes, leaks and sanitizer reports are findings; so is an error without
 * a message or with a column past the expression's end (an abort).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cel/cel.h"

static void check_error(const struct cel_error *err, size_t len)
{
	if (err->msg[0] == '\0' || err->col > len + 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cel_attr attrs[4] = {
	    {.domain = "x", .name = "type", .type = CEL_ATTR_STRING, .s = "gpu"},
	    {.domain = "x", .name = "index", .type = CEL_ATTR_INT, .i = 7},
	    {.domain = "x", .name = "ok", .type = CEL_ATTR_BOOL, .b = true},
	    {.domain = "y.example.com", .name = "v", .type = CEL_ATTR_VERSION},
	};
	struct cel_capacity caps[1] = {{.domain = "x", .name = "memory", .milli = 1024000}};
	struct cel_device devs[2] = {
	    {.driver = "x", .attrs = attrs, .nattrs = 4, .caps = caps, .ncaps = 1},
	    {.driver = ""},
	};
	struct cel_program *p = NULL;
	struct cel_error err;
	char *expr;
	bool m;
	int r;

	if (cel_semver_parse("1.2.3-rc.1", &attrs[3].v) < 0)
		abort();
	expr = malloc(size + 1);
	if (!expr)
		return 0;
	memcpy(expr, data, size);
	expr[size] = '\0';
	r = cel_compile(expr, &p, &err);
	if (r == -EINVAL || r == -E2BIG)
		check_error(&err, strlen(expr));
	for (int i = 0; r == 0 && i < 2; i++)
		if (cel_eval(p, &devs[i], &m, &err) < 0)
			check_error(&err, strlen(expr));
	cel_program_free(p);
	free(expr);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cel.c — the CEL subset of device selectors: what compiles, what each
 * expression yields against a GPU device as a DRA driver publishes it, the
 * language's error absorption by && and ||, and the column of every error.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cel/cel.h"

static struct cel_attr attrs[6];
static struct cel_capacity caps[2];
static struct cel_device gpu;

static void setup(void)
{
	attrs[0] = (struct cel_attr){
	    .domain = "gpu.example.com", .name = "type", .type = CEL_ATTR_STRING, .s = "gpu"};
	attrs[1] = (struct cel_attr){
	    .domain = "gpu.example.com", .name = "index", .type = CEL_ATTR_INT, .i = 3};
	attrs[2] = (struct cel_attr){.domain = "gpu.example.com",
				     .name = "model",
				     .type = CEL_ATTR_STRING,
				     .s = "H100-SXM5-80GB"};
	attrs[3] = (struct cel_attr){
	    .domain = "gpu.example.com", .name = "mig", .type = CEL_ATTR_BOOL, .b = false};
	attrs[4] = (struct cel_attr){
	    .domain = "gpu.example.com", .name = "driverVersion", .type = CEL_ATTR_VERSION};
	ck_assert_int_eq(cel_semver_parse("550.54.15", &attrs[4].v), 0);
	attrs[5] = (struct cel_attr){.domain = "resource.kubernetes.io",
				     .name = "pcieRoot",
				     .type = CEL_ATTR_STRING,
				     .s = "pci0000:00"};
	caps[0] = (struct cel_capacity){.domain = "gpu.example.com",
					.name = "memory",
					.milli = 80LL * 1024 * 1024 * 1024 * 1000};
	caps[1] =
	    (struct cel_capacity){.domain = "gpu.example.com", .name = "cores", .milli = 132000};
	gpu = (struct cel_device){
	    .driver = "gpu.example.com", .attrs = attrs, .nattrs = 6, .caps = caps, .ncaps = 2};
}

/* Compile and evaluate; returns 1 (true), 0 (false) or the negative errno. */
static int run(const char *expr, struct cel_error *err)
{
	struct cel_program *p = NULL;
	bool m = false;
	int r = cel_compile(expr, &p, err);

	if (r < 0)
		return r;
	r = cel_eval(p, &gpu, &m, err);
	cel_program_free(p);
	return r < 0 ? r : m;
}

static void expect(const char *expr, int want)
{
	struct cel_error err = {0};
	int got = run(expr, &err);

	ck_assert_msg(got == want, "%s: got %d, want %d (col %u: %s)", expr, got, want, err.col,
		      err.msg);
}

static void expect_error(const char *expr, int want_r, unsigned want_col, const char *want_msg)
{
	struct cel_error err = {0};
	int got = run(expr, &err);

	ck_assert_msg(got == want_r, "%s: got %d, want %d (%s)", expr, got, want_r, err.msg);
	ck_assert_msg(err.col == want_col, "%s: column %u, want %u (%s)", expr, err.col, want_col,
		      err.msg);
	ck_assert_msg(strstr(err.msg, want_msg), "%s: message \"%s\" lacks \"%s\"", expr, err.msg,
		      want_msg);
}

START_TEST(test_selectors)
{
	expect("device.driver == \"gpu.example.com\"", 1);
	expect("device.driver == 'other'", 0);
	expect("device.driver == \"gpu.example.com\" && "
	       "device.attributes[\"gpu.example.com\"].type == \"gpu\"",
	       1);
	expect("device.attributes[\"gpu.example.com\"].index >= 2 && "
	       "device.attributes[\"gpu.example.com\"].index < 4",
	       1);
	expect("device.attributes['gpu.example.com'].index in [0, 1, 2]", 0);
	expect("device.attributes['gpu.example.com'].model in ['A100', 'H100-SXM5-80GB']", 1);
	expect("!device.attributes['gpu.example.com'].mig", 1);
	expect("device.attributes['gpu.example.com'].mig == false", 1);
	expect("device.attributes['gpu.example.com']['index'] == 3", 1);
	expect("device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:00'", 1);
	expect("'model' in device.attributes['gpu.example.com']", 1);
	expect("'color' in device.attributes['gpu.example.com']", 0);
	expect("'gpu.example.com' in device.attributes", 1);
	expect("'memory' in device.capacity['gpu.example.com']", 1);
	expect("has(device.attributes['gpu.example.com'].model)", 1);
	expect("has(device.attributes['nic.example.com'].model)", 0);
	expect("has(device.capacity['gpu.example.com'].memory)", 1);
	/* a comment and whitespace */
	expect("// any GPU\n  device.driver.startsWith('gpu.')", 1);
	expect("-3 < 0 && 0x10 == 16", 1);
}
END_TEST

START_TEST(test_strings_and_regex)
{
	expect("device.attributes['gpu.example.com'].model.startsWith('H100')", 1);
	expect("device.attributes['gpu.example.com'].model.endsWith('80GB')", 1);
	expect("device.attributes['gpu.example.com'].model.contains('SXM')", 1);
	expect("device.attributes['gpu.example.com'].model.contains('PCIe')", 0);
	expect("device.attributes['gpu.example.com'].model.matches('^H[0-9]+-SXM\\\\d-\\\\d+GB$')",
	       1);
	expect("device.attributes['gpu.example.com'].model.matches('A100')", 0);
	expect("device.driver.matches('example')", 1); /* unanchored, as RE2's partial match */
	expect("device.attributes['gpu.example.com'].model.matches(device.driver)", 0);
	expect("'abc' < 'abd' && 'b' > 'a'", 1);
	expect_error("device.driver.matches('a(?i)b')", -EINVAL, 23, "'(?' groups");
	expect_error("device.driver.matches('a+?')", -EINVAL, 23, "non-greedy");
	expect_error("device.driver.matches('(')", -EINVAL, 23, "not a valid regular");
	/* RE2's limits, before anything is compiled: 23 bytes that would take
	 * gigabytes to compile are refused at once. */
	expect_error("device.driver.matches('([a-z]{1,1000}){1,1000}')", -EINVAL, 23,
		     "nested repetition");
	expect_error("device.driver.matches('a{1001}')", -EINVAL, 23, "over 1000");
	expect_error("device.driver.matches('((a{10}){10}){11}')", -EINVAL, 23,
		     "nested repetition");
	expect_error("device.driver.matches('a{1000}b{1000}c{1000}d{1000}e{1000}f{1000}g{1000}"
		     "h{1000}i{1000}j{1000}k{1000}')",
		     -EINVAL, 23, "expands to more than");
	expect("device.driver.matches('^[a-z.]{1,1000}$')", 1);
	expect("device.driver.matches('((x{10}){10}){10}|example')", 1);
	expect("device.driver.matches('e[]x]{0,3}ample')", 1);
	/* A pattern computed at run time is held to the same limits: an error, not a compile. */
	attrs[0].s = "([a-z]{1,1000}){1,1000}";
	expect_error("device.driver.matches(device.attributes['gpu.example.com'].type)", -EINVAL,
		     15, "not a valid regular expression");
	attrs[0].s = "gpu";
	/* ... and to less of them: it is compiled at each evaluation. */
	attrs[0].s = "g{300}";
	expect_error("device.driver.matches(device.attributes['gpu.example.com'].type)", -EINVAL,
		     15, "not a valid regular expression");
	attrs[0].s = "g{3}";
	expect("device.driver.matches(device.attributes['gpu.example.com'].type)", 0);
	attrs[0].s = "gpu";
	expect("device.driver.matches('g{300}') || true", 1);
	{
		struct cel_program *p = NULL;
		struct cel_error e = {0};
		ck_assert_int_eq(cel_compile("device.driver.matches('(ab){10}c{300}')", &p, &e), 0);
		ck_assert_uint_eq(cel_program_regex_atoms(p), 320);
		cel_program_free(p);
	}
}
END_TEST

START_TEST(test_quantity_semver)
{
	expect("device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) > 0", 1);
	expect("device.capacity['gpu.example.com'].memory.compareTo(quantity('80Gi')) == 0", 1);
	expect("device.capacity['gpu.example.com'].memory.isLessThan(quantity('100Gi'))", 1);
	expect("device.capacity['gpu.example.com'].cores.isGreaterThan(quantity('200'))", 0);
	expect("device.capacity['gpu.example.com'].memory == quantity('85899345920')", 1);
	expect(
	    "device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('550.0.0'))",
	    1);
	expect("device.attributes['gpu.example.com'].driverVersion.compareTo(semver('550.54.15')) "
	       "== 0",
	       1);
	expect("device.attributes['gpu.example.com'].driverVersion == semver('550.54.15')", 1);
	expect("device.attributes['gpu.example.com'].driverVersion.major() == 550", 1);
	expect("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1')) && "
	       "semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta')) && "
	       "semver('1.0.0-rc.1').isLessThan(semver('1.0.0')) && "
	       "semver('1.0.0-2').isLessThan(semver('1.0.0-11'))",
	       1);
	expect("isSemver('1.2.3') && !isSemver('1.2') && isQuantity('1Gi') && !isQuantity('1Gb')",
	       1);
	expect_error("quantity('1Gb').isLessThan(quantity('1Gi'))", -EINVAL, 10,
		     "not a valid quantity");
	expect_error("semver('v1.0.0') == semver('1.0.0')", -EINVAL, 8, "not a valid semantic");
	expect_error("device.capacity['gpu.example.com'].memory < quantity('1')", -EINVAL, 43,
		     "no matching overload for '_<_' applied to '(quantity, quantity)'");
	expect_error("quantity(device.driver).isLessThan(quantity('1'))", -EINVAL, 1,
		     "not a valid quantity");
}
END_TEST

START_TEST(test_error_absorption)
{
	const char *missing = "device.attributes['gpu.example.com'].color == 'red'";
	char buf[256];

	expect_error(missing, -EINVAL, 38, "no such key: color");
	snprintf(buf, sizeof(buf), "false && %s", missing);
	expect(buf, 0);
	snprintf(buf, sizeof(buf), "%s && false", missing);
	expect(buf, 0);
	snprintf(buf, sizeof(buf), "true || %s", missing);
	expect(buf, 1);
	snprintf(buf, sizeof(buf), "%s || true", missing);
	expect(buf, 1);
	/* undecided: the error stays, never true by accident */
	snprintf(buf, sizeof(buf), "%s || false", missing);
	ck_assert_int_eq(run(buf, NULL), -EINVAL);
	snprintf(buf, sizeof(buf), "true && %s", missing);
	ck_assert_int_eq(run(buf, NULL), -EINVAL);
	snprintf(buf, sizeof(buf), "!(%s)", missing);
	ck_assert_int_eq(run(buf, NULL), -EINVAL);
	snprintf(buf, sizeof(buf), "%s == false", missing);
	ck_assert_int_eq(run(buf, NULL), -EINVAL);
	/* a dyn of the wrong type is an error at run time */
	expect_error("device.attributes['gpu.example.com'].model > 3", -EINVAL, 44,
		     "no such overload");
	expect_error("device.attributes['gpu.example.com'].index.startsWith('3')", -EINVAL, 44,
		     "no such overload");
	expect_error("device.attributes['gpu.example.com'].model", -EINVAL, 38, "not bool");
	/* heterogeneous equality is false, not an error */
	expect("device.attributes['gpu.example.com'].model == 3", 0);
	expect("device.attributes['gpu.example.com'].model != 3", 1);
}
END_TEST

START_TEST(test_compile_errors)
{
	char *deep, *longx;

	expect_error("device.drivr == 'x'", -EINVAL, 8, "undefined field 'drivr'");
	expect_error("dev.driver == 'x'", -EINVAL, 1, "undeclared reference to 'dev'");
	expect_error("device.driver == 1", -EINVAL, 15,
		     "no matching overload for '_==_' applied to '(string, int)'");
	expect_error("device.driver", -EINVAL, 8, "must evaluate to bool, not string");
	expect_error("1 + 2 == 3", -EINVAL, 3, "arithmetic ('+')");
	expect_error("true ? true : false", -EINVAL, 6, "conditional operator");
	expect_error("device.driver == \"x", -EINVAL, 18, "unterminated string");
	expect_error("device.driver == null", -EINVAL, 18, "null is outside");
	expect_error("1.5 > 1", -EINVAL, 1, "double literals");
	expect_error("{'a': 1}['a'] == 1", -EINVAL, 1, "map literals");
	expect_error("size(device.driver) > 1", -EINVAL, 1, "function 'size' is outside");
	expect_error("[1, 2].all(x, x > 0)", -EINVAL, 8, "method 'all' is outside");
	expect_error("device.attributes.model == 'x'", -EINVAL, 19, "select a domain");
	expect_error("has(device.driver)", -EINVAL, 12, "has() tests");
	expect_error("device.driver == 'x' &&", -EINVAL, 24, "unexpected end");
	expect_error("device.driver == 'x' 'y'", -EINVAL, 22, "syntax error");
	expect_error("9223372036854775808 > 0", -EINVAL, 1, "out of range");
	expect("-9223372036854775808 < 0", 1);
	expect_error("device.driver.matches('\\\\bx')", -EINVAL, 23, "'\\b'");
	expect_error("'a' == 'b' @", -EINVAL, 12, "unexpected character '@'");

	deep = malloc(2 * CEL_DEPTH_MAX + 16);
	memset(deep, '(', CEL_DEPTH_MAX + 1);
	strcpy(deep + CEL_DEPTH_MAX + 1, "true");
	memset(deep + CEL_DEPTH_MAX + 5, ')', CEL_DEPTH_MAX + 1);
	deep[2 * CEL_DEPTH_MAX + 6] = '\0';
	ck_assert_int_eq(run(deep, NULL), -E2BIG);
	free(deep);

	longx = malloc(CEL_EXPRESSION_MAX + 2);
	memset(longx, ' ', CEL_EXPRESSION_MAX + 1);
	memcpy(longx, "true", 4);
	longx[CEL_EXPRESSION_MAX + 1] = '\0';
	ck_assert_int_eq(run(longx, NULL), -E2BIG);
	free(longx);
}
END_TEST

START_TEST(test_long_chains)
{
	/* chains parse iteratively; the tree height is bounded by the checker */
	size_t n = 400;
	char *s = malloc(n * 9 + 8), *p = s;
	struct cel_error err;

	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "true && ");
	strcpy(p, "true");
	ck_assert_int_eq(run(s, &err), -EINVAL);
	ck_assert_msg(strstr(err.msg, "nested deeper"), "%s", err.msg);
	free(s);
	expect("true && true && true && !false || false", 1);
}
END_TEST

START_TEST(test_semver_parse)
{
	struct cel_semver a, b;

	ck_assert_int_eq(cel_semver_parse("1.2.3-rc.1+build.5", &a), 0);
	ck_assert_int_eq(a.major, 1);
	ck_assert_int_eq(a.patch, 3);
	ck_assert_int_eq(a.prelen, 4);
	ck_assert_int_eq(cel_semver_parse("1.2.3+other", &b), 0);
	ck_assert_int_lt(cel_semver_compare(&a, &b), 0);
	ck_assert_int_eq(cel_semver_parse("01.2.3", &a), -EINVAL);
	ck_assert_int_eq(cel_semver_parse("1.2.3-01", &a), -EINVAL);
	ck_assert_int_eq(cel_semver_parse("1.2.3-", &a), -EINVAL);
	ck_assert_int_eq(cel_semver_parse("1.2.3.4", &a), -EINVAL);
	ck_assert_int_eq(cel_semver_parse("1.2", &a), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cel");
	TCase *tc = tcase_create("cel");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_selectors);
	tcase_add_test(tc, test_strings_and_regex);
	tcase_add_test(tc, test_quantity_semver);
	tcase_add_test(tc, test_error_absorption);
	tcase_add_test(tc, test_compile_errors);
	tcase_add_test(tc, test_long_chains);
	tcase_add_test(tc, test_semver_parse);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

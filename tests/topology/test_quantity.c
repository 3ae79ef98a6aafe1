/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of topology/quantity.c: parsing, overflow, canonical formatting. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "topology/topology.h"

static int64_t parse_ok(const char *s)
{
	int64_t v = -12345;

	ck_assert_msg(topo_quantity_parse(s, &v) == 0, "parse %s", s);
	return v;
}

START_TEST(good)
{
	ck_assert_int_eq(parse_ok("500m"), 500);
	ck_assert_int_eq(parse_ok("64"), 64000);
	ck_assert_int_eq(parse_ok("1.5"), 1500);
	ck_assert_int_eq(parse_ok("256Gi"), 256LL * 1024 * 1024 * 1024 * 1000);
	ck_assert_int_eq(parse_ok("1e3"), 1000000);
	ck_assert_int_eq(parse_ok("1E3"), 1000000);
	ck_assert_int_eq(parse_ok("2k"), 2000000);
	ck_assert_int_eq(parse_ok("0.1"), 100);
	ck_assert_int_eq(parse_ok("-1"), -1000);
	ck_assert_int_eq(parse_ok("+7"), 7000);
	ck_assert_int_eq(parse_ok("10Mi"), 10LL * 1024 * 1024 * 1000);
	ck_assert_int_eq(parse_ok("1Ki"), 1024000);
	ck_assert_int_eq(parse_ok("1.5Ki"), 1536000);
	ck_assert_int_eq(parse_ok("0"), 0);
	ck_assert_int_eq(parse_ok("-0"), 0);
	ck_assert_int_eq(parse_ok("000012"), 12000);
	ck_assert_int_eq(parse_ok(".5"), 500);
	ck_assert_int_eq(parse_ok("1e-3"), 1);
	ck_assert_int_eq(parse_ok("15E-1"), 1500);
	ck_assert_int_eq(parse_ok("110"), 110000);
	ck_assert_int_eq(parse_ok("1P"), 1000000000000000000LL);
}
END_TEST

START_TEST(rounding)
{
	/* Below a milli-unit rounds away from zero, like MilliValue(). */
	ck_assert_int_eq(parse_ok("1u"), 1);
	ck_assert_int_eq(parse_ok("100n"), 1);
	ck_assert_int_eq(parse_ok("0.0001"), 1);
	ck_assert_int_eq(parse_ok("1.0001"), 1001);
	ck_assert_int_eq(parse_ok("-0.0001"), -1);
	ck_assert_int_eq(parse_ok("1e-400"), 1);
	ck_assert_int_eq(parse_ok("1.000000000000000000000000000000000001"), 1001);
	ck_assert_int_eq(parse_ok("1.000000000000000000000000000000000000"), 1000);
	ck_assert_int_eq(parse_ok("0.0000000001Ki"), 1);
}
END_TEST

START_TEST(bad)
{
	static const char *bad[] = {
	    "",	    "m",   "-",	  "+",	  ".",	   "1x",   "1 ",   " 1",
	    "1ki",  "1KI", "1e",  "1e+",  "1e3.5", "--1",  "1..2", "1.2.3",
	    "1Kib", "Gi",  "1mm", "0x10", "1,5",   "1e3m", NULL,
	};
	int64_t v = 42;
	char longs[200];

	for (size_t i = 0; bad[i]; i++)
		ck_assert_msg(topo_quantity_parse(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
	ck_assert_int_eq(v, 42); /* untouched on failure */
	ck_assert_int_eq(topo_quantity_parse(NULL, &v), -EINVAL);
	memset(longs, '1', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	ck_assert_int_eq(topo_quantity_parse(longs, &v), -EINVAL);
}
END_TEST

START_TEST(overflow)
{
	static const char *big[] = {
	    "1E",
	    "9223372036854775808m",
	    "9223372036854776",
	    "8Ei",
	    "10P",
	    "1e19",
	    "1e400",
	    "99999999999999999999999999",
	    "-1E",
	    "123456789012345678901234567890e-5",
	    NULL,
	};
	int64_t v = 42;

	for (size_t i = 0; big[i]; i++)
		ck_assert_msg(topo_quantity_parse(big[i], &v) == -ERANGE, "'%s' not ERANGE",
			      big[i]);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(parse_ok("9223372036854775807m"), INT64_MAX);
	ck_assert_int_eq(parse_ok("9223372036854775.807"), INT64_MAX);
	ck_assert_int_eq(parse_ok("-9223372036854775807m"), -INT64_MAX);
	ck_assert_int_eq(topo_quantity_parse("9223372036854775.8071", &v), -ERANGE);
	ck_assert_int_eq(parse_ok("8Pi"), (8LL << 50) * 1000);
	ck_assert_int_eq(topo_quantity_parse("9Pi", &v), -ERANGE);
	ck_assert_int_eq(topo_quantity_parse("1Ei", &v), -ERANGE);
}
END_TEST

static const char *fmt(int64_t milli, enum topo_quantity_format f)
{
	static char buf[64];

	ck_assert_int_eq(topo_quantity_format(milli, f, buf, sizeof(buf)), 0);
	return buf;
}

START_TEST(format)
{
	ck_assert_str_eq(fmt(500, TOPO_QUANTITY_DECIMAL_SI), "500m");
	ck_assert_str_eq(fmt(64000, TOPO_QUANTITY_DECIMAL_SI), "64");
	ck_assert_str_eq(fmt(2000000, TOPO_QUANTITY_DECIMAL_SI), "2k");
	ck_assert_str_eq(fmt(1500, TOPO_QUANTITY_DECIMAL_SI), "1500m");
	ck_assert_str_eq(fmt(1500000000000LL, TOPO_QUANTITY_DECIMAL_SI), "1500M");
	ck_assert_str_eq(fmt(0, TOPO_QUANTITY_BINARY_SI), "0");
	ck_assert_str_eq(fmt(-1000, TOPO_QUANTITY_DECIMAL_SI), "-1");
	ck_assert_str_eq(fmt(1000000000000000000LL, TOPO_QUANTITY_DECIMAL_SI), "1P");
	ck_assert_str_eq(fmt(INT64_MAX, TOPO_QUANTITY_DECIMAL_SI), "9223372036854775807m");
	ck_assert_str_eq(fmt(INT64_MIN, TOPO_QUANTITY_DECIMAL_SI), "-9223372036854775808m");
	ck_assert_str_eq(fmt(256LL * 1024 * 1024 * 1024 * 1000, TOPO_QUANTITY_BINARY_SI), "256Gi");
	ck_assert_str_eq(fmt(1536000, TOPO_QUANTITY_BINARY_SI), "1536");
	ck_assert_str_eq(fmt(3072000, TOPO_QUANTITY_BINARY_SI), "3Ki");
	ck_assert_str_eq(fmt(512000, TOPO_QUANTITY_BINARY_SI), "512");
	ck_assert_str_eq(fmt(1500, TOPO_QUANTITY_BINARY_SI), "1500m");
	ck_assert_str_eq(fmt(-10LL * 1024 * 1024 * 1000, TOPO_QUANTITY_BINARY_SI), "-10Mi");
	/* Binary asked but not exact: decimal. */
	ck_assert_str_eq(fmt(2000000, TOPO_QUANTITY_BINARY_SI), "2k");
}
END_TEST

START_TEST(format_small_buffer)
{
	char buf[5]; /* "500m" and its NUL */

	ck_assert_int_eq(topo_quantity_format(500, TOPO_QUANTITY_DECIMAL_SI, buf, sizeof(buf)), 0);
	ck_assert_int_eq(topo_quantity_format(5000, TOPO_QUANTITY_DECIMAL_SI, buf, 1), -ENOSPC);
	ck_assert_int_eq(topo_quantity_format(123456, TOPO_QUANTITY_DECIMAL_SI, buf, sizeof(buf)),
			 -ENOSPC);
}
END_TEST

START_TEST(round_trip)
{
	static const char *in[] = {"500m", "64",  "256Gi", "2k",   "10Mi", "1500M",
				   "-3",   "7Ki", "1",	   "999m", NULL};

	for (size_t i = 0; in[i]; i++) {
		char buf[64];
		int64_t v = parse_ok(in[i]), back;

		ck_assert_int_eq(
		    topo_quantity_format(v, topo_quantity_format_of(in[i]), buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, in[i]);
		back = parse_ok(buf);
		ck_assert_int_eq(back, v);
	}
	ck_assert_int_eq(topo_quantity_format_of("1Ki"), TOPO_QUANTITY_BINARY_SI);
	ck_assert_int_eq(topo_quantity_format_of("1k"), TOPO_QUANTITY_DECIMAL_SI);
	ck_assert_int_eq(topo_quantity_format_of(NULL), TOPO_QUANTITY_DECIMAL_SI);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quantity");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, good);
	tcase_add_test(tc, rounding);
	tcase_add_test(tc, bad);
	tcase_add_test(tc, overflow);
	tcase_add_test(tc, format);
	tcase_add_test(tc, format_small_buffer);
	tcase_add_test(tc, round_trip);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

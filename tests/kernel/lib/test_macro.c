/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_macro.c — ELEMENTSOF() and the string-table lookups both ways:
 * a hit, a miss, a NULL string, holes of a designated-initialiser table,
 * indexes out of range on either side.
 */
#include <check.h>
#include <stdlib.h>

#include "kernel/lib/macro.h"

enum colour { RED, GREEN, BLUE, _COLOUR_MAX };
static const char *const colours[_COLOUR_MAX] = {[RED] = "red", [BLUE] = "blue"}; /* GREEN: hole */

START_TEST(test_elementsof)
{
	static const int five[5];
	char buf[17];

	ck_assert_uint_eq(ELEMENTSOF(five), 5);
	ck_assert_uint_eq(ELEMENTSOF(buf), 17);
	ck_assert_uint_eq(ELEMENTSOF(colours), _COLOUR_MAX);
}
END_TEST

START_TEST(test_find)
{
	ck_assert_int_eq(PK_STRING_TABLE_FIND(colours, "red"), RED);
	ck_assert_int_eq(PK_STRING_TABLE_FIND(colours, "blue"), BLUE);
	ck_assert_int_eq(PK_STRING_TABLE_FIND(colours, "green"), -1);
	ck_assert_int_eq(PK_STRING_TABLE_FIND(colours, ""), -1);
	ck_assert_int_eq(PK_STRING_TABLE_FIND(colours, NULL), -1);
}
END_TEST

START_TEST(test_lookup)
{
	int minus = -1;

	ck_assert_str_eq(PK_STRING_TABLE_LOOKUP(colours, RED), "red");
	ck_assert_str_eq(PK_STRING_TABLE_LOOKUP(colours, BLUE), "blue");
	ck_assert_ptr_null(PK_STRING_TABLE_LOOKUP(colours, GREEN));
	ck_assert_ptr_null(PK_STRING_TABLE_LOOKUP(colours, _COLOUR_MAX));
	ck_assert_ptr_null(PK_STRING_TABLE_LOOKUP(colours, minus));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("macro");
	TCase *tc = tcase_create("tables");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_elementsof);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_lookup);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

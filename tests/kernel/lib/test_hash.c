/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hash.c — FNV-1a against the published test vectors, 64- and 32-bit:
 * the store's row checksums on disk and the placement map's colours (which
 * must match map.js) depend on the exact function.
 */
#include <check.h>
#include <stdlib.h>

#include "kernel/lib/hash.h"

START_TEST(test_fnv1a64)
{
	ck_assert_uint_eq(pk_fnv1a(PK_FNV1A_INIT, ""), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(pk_fnv1a(PK_FNV1A_INIT, "a"), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(pk_fnv1a(PK_FNV1A_INIT, "foobar"), 0x85944171f73967e8ULL);
	/* folding continues where a string stopped */
	ck_assert_uint_eq(pk_fnv1a(pk_fnv1a(PK_FNV1A_INIT, "foo"), "bar"),
			  pk_fnv1a(PK_FNV1A_INIT, "foobar"));
	ck_assert_uint_eq(pk_fnv1a_byte(PK_FNV1A_INIT, 'a'), 0xaf63dc4c8601ec8cULL);
}
END_TEST

START_TEST(test_fnv1a32)
{
	ck_assert_uint_eq(pk_fnv1a32(""), 0x811c9dc5u);
	ck_assert_uint_eq(pk_fnv1a32("a"), 0xe40c292cu);
	ck_assert_uint_eq(pk_fnv1a32("foobar"), 0xbf9cf968u);
	ck_assert_uint_eq(pk_fnv1a32_byte(PK_FNV1A32_INIT, 'a'), 0xe40c292cu);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("fnv1a");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fnv1a64);
	tcase_add_test(tc, test_fnv1a32);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

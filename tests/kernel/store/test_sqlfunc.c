/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_sqlfunc.c — the store connections' instr() answers as SQLite's
 * built-in does, for text, BLOBs, numbers, NULLs and multi-byte characters.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store-internal.h"

/* instr(?1, ?2) on db, the arguments bound by kind: 't' text, 'b' blob, 'i' integer, 'n' null. */
static void answer(sqlite3 *db, char kind_h, const char *h, int nh, char kind_n, const char *n,
		   int nn, char *out, size_t len)
{
	sqlite3_stmt *q = NULL;
	const char *kinds = (const char[]){kind_h, kind_n};
	const char *vals[] = {h, n};
	const int lens[] = {nh, nn};

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT instr(?1, ?2)", -1, &q, NULL), SQLITE_OK);
	for (int i = 0; i < 2; i++) {
		if (kinds[i] == 't')
			sqlite3_bind_text(q, i + 1, vals[i], lens[i], SQLITE_STATIC);
		else if (kinds[i] == 'b')
			sqlite3_bind_blob(q, i + 1, vals[i], lens[i], SQLITE_STATIC);
		else if (kinds[i] == 'i')
			sqlite3_bind_int(q, i + 1, atoi(vals[i]));
	}
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	if (sqlite3_column_type(q, 0) == SQLITE_NULL)
		snprintf(out, len, "NULL");
	else
		snprintf(out, len, "%d", sqlite3_column_int(q, 0));
	sqlite3_finalize(q);
}

START_TEST(test_instr_as_builtin)
{
	static const struct {
		char kh;
		const char *h;
		int nh;
		char kn;
		const char *n;
		int nn;
	} cases[] = {
	    {'t', "{\"metadata\":{\"ownerReferences\":[]}}", -1, 't', "\"ownerReferences\"", -1},
	    {'t', "{\"metadata\":{}}", -1, 't', "\"ownerReferences\"", -1},
	    {'t', "\xc3\xa9t\xc3\xa9 \xe2\x82\xac x", -1, 't', "x", -1},
	    {'t', "\xe2\x82\xac\xe2\x82\xac", -1, 't', "\x82", -1}, /* inside a character */
	    {'t', "\xe2\x82\xac\x82", -1, 't', "\x82", -1},
	    {'t', "abcabc", -1, 't', "cab", -1},
	    {'t', "abc", -1, 't', "", -1},
	    {'t', "", -1, 't', "", -1},
	    {'t', "", -1, 't', "a", -1},
	    {'t', "ab", -1, 't', "abc", -1},
	    {'t', "a\0b\0c", 5, 't', "b\0c", 3},
	    {'b', "\xe2\x82\xac\x82", 4, 'b', "\x82", 1},
	    {'b', "xyz", 3, 'b', "", 0},
	    {'b', "\xc3\xa9z", 3, 't', "z", -1},
	    {'t', "\xc3\xa9z", -1, 'b', "z", 1},
	    {'i', "12345", 0, 't', "34", -1},
	    {'t', "a12", -1, 'i', "12", 0},
	    {'n', NULL, 0, 't', "a", -1},
	    {'t', "a", -1, 'n', NULL, 0},
	};
	sqlite3 *builtin = NULL, *ours = NULL;

	ck_assert_int_eq(sqlite3_open(":memory:", &builtin), SQLITE_OK);
	ck_assert_int_eq(sqlite3_open(":memory:", &ours), SQLITE_OK);
	ck_assert_int_eq(pk_store_sql_functions(ours), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[32], got[32];

		answer(builtin, cases[i].kh, cases[i].h, cases[i].nh, cases[i].kn, cases[i].n,
		       cases[i].nn, want, sizeof(want));
		answer(ours, cases[i].kh, cases[i].h, cases[i].nh, cases[i].kn, cases[i].n,
		       cases[i].nn, got, sizeof(got));
		ck_assert_msg(strcmp(want, got) == 0, "case %zu: built-in %s, store's %s", i, want,
			      got);
	}
	/* and it is the store's own that answered */
	sqlite3_stmt *q = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(ours,
					    "SELECT count(*) FROM pragma_function_list"
					    " WHERE name = 'instr' AND builtin = 0",
					    -1, &q, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(q, 0), 1);
	sqlite3_finalize(q);
	sqlite3_close(builtin);
	sqlite3_close(ours);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sqlfunc");
	TCase *tc = tcase_create("sqlfunc");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_instr_as_builtin);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

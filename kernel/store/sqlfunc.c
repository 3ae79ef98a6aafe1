/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sqlfunc.c — SQL functions of the store's connections.
 *
 * instr(X, Y), SQLite's own, answered by memmem(): the owner index's
 * triggers and the foreground-deletion index ask every row written whether
 * its body mentions "ownerReferences" or "foregroundDeletion" (gc.c), three
 * times a write on average, and SQLite's instr() steps through the body a
 * character at a time, comparing at every '"': about a third of the
 * instructions of a row's INSERT or UPDATE.  The answer is the built-in's,
 * to the character (the schema, its triggers and the partial index are
 * unchanged, and any other reader of the file, the sqlite3 shell included,
 * finds the same rows indexed): NULL when either argument is NULL; for two
 * BLOBs one more than the bytes before the first occurrence; else, as text,
 * one more than the characters before it (a match starts on a character);
 * 0 when there is none; 1 for an empty needle.
 */
#include <errno.h>
#include <string.h>

#include "kernel/store/store-internal.h"

/* One more than the characters (UTF-8 lead bytes) of h before at. */
static int chars_before(const unsigned char *h, const unsigned char *at)
{
	int n = 1;

	for (; h < at; h++)
		n += (*h & 0xc0) != 0x80;
	return n;
}

/* instr()'s answer for haystack h (nh bytes) and needle n (nn bytes). */
static int find(const unsigned char *h, int nh, const unsigned char *n, int nn, bool text)
{
	if (nn == 0)
		return 1;
	for (const unsigned char *from = h, *at; nh - (from - h) >= nn; from = at + 1) {
		at = memmem(from, (size_t)(nh - (from - h)), n, (size_t)nn);
		if (!at)
			return 0;
		if (!text)
			return (int)(at - h) + 1;
		if ((*at & 0xc0) != 0x80) /* a match starts on a character */
			return chars_before(h, at);
	}
	return 0;
}

static void instr_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	int th = sqlite3_value_type(argv[0]), tn = sqlite3_value_type(argv[1]);
	bool blob = th == SQLITE_BLOB && tn == SQLITE_BLOB;
	sqlite3_value *hv = NULL, *nv = NULL;
	const unsigned char *h, *n;
	int nh, nn;

	(void)argc;
	if (th == SQLITE_NULL || tn == SQLITE_NULL)
		return; /* NULL */
	if (!blob && (th == SQLITE_BLOB || tn == SQLITE_BLOB)) {
		/* one BLOB, one not: both read as text, the arguments left as they are */
		hv = sqlite3_value_dup(argv[0]);
		nv = sqlite3_value_dup(argv[1]);
	}
	h = blob ? sqlite3_value_blob(argv[0]) : sqlite3_value_text(hv ? hv : argv[0]);
	nh = sqlite3_value_bytes(hv ? hv : argv[0]);
	n = blob ? sqlite3_value_blob(argv[1]) : sqlite3_value_text(nv ? nv : argv[1]);
	nn = sqlite3_value_bytes(nv ? nv : argv[1]);
	if ((!blob && (!hv) != (!nv)) || (nn > 0 && !n) || (nh > 0 && !h))
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_int(ctx, find(h, nh, n, nn, !blob));
	sqlite3_value_free(hv);
	sqlite3_value_free(nv);
}

int pk_store_sql_functions(sqlite3 *db)
{
	return sqlite3_create_function_v2(db, "instr", 2,
					  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
					  NULL, instr_fn, NULL, NULL, NULL) == SQLITE_OK
		   ? 0
		   : -EIO;
}

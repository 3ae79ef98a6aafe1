/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_check.c — `podctl store check FILE`: is a podkerneld store intact?
 *
 * Opens the SQLite file read-only (the server may be running: WAL readers do
 * not disturb it), runs SQLite's own quick_check for the page structure, then
 * checks every object row as podkerneld does at start (pk_row_verify():
 * checksum, resourceVersion within 1..counter, body identity).  Each damaged
 * row is printed as "KIND NS/NAME: what is wrong"; rows set aside earlier by
 * --allow-damaged-store are counted.  Exit 0 intact, 1 damage found, 2 bad
 * usage or a file that is not a podkerneld store.
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "kernel/store/store.h"

struct check {
	sqlite3 *db;
	const char *path;
	uint64_t counter, rows, damaged, unsummed;
};

int64_t podctl_sql_scalar(sqlite3 *db, const char *sql, int64_t dflt)
{
	sqlite3_stmt *q;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return dflt;
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* SQLite's structural check: each message is damage. */
static void check_pages(struct check *c)
{
	sqlite3_stmt *q;

	if (sqlite3_prepare_v2(c->db, "PRAGMA quick_check", -1, &q, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(q, 0);

		if (m && strcmp(m, "ok") != 0) {
			printf("database: %s\n", m);
			c->damaged++;
		}
	}
	sqlite3_finalize(q);
}

static void check_rows(struct check *c)
{
	sqlite3_stmt *q;
	int step;

	if (sqlite3_prepare_v2(c->db, "SELECT kind, ns, name, rv, body, sum FROM objects", -1, &q,
			       NULL) != SQLITE_OK) {
		printf("database: %s\n", sqlite3_errmsg(c->db));
		c->damaged++;
		return;
	}
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(q, 0);
		const char *ns = (const char *)sqlite3_column_text(q, 1);
		const char *name = (const char *)sqlite3_column_text(q, 2);
		bool has_sum = sqlite3_column_type(q, 5) != SQLITE_NULL;
		char why[200];

		c->rows++;
		c->unsummed += !has_sum;
		if (pk_row_verify(kind, ns, name, sqlite3_column_int64(q, 3),
				  (const char *)sqlite3_column_text(q, 4),
				  (size_t)sqlite3_column_bytes(q, 4), has_sum,
				  (uint64_t)sqlite3_column_int64(q, 5), c->counter, why,
				  sizeof(why)) == 0)
			continue;
		printf("%s %s%s%s: %s\n", kind ? kind : "?", ns && *ns ? ns : "",
		       ns && *ns ? "/" : "", name ? name : "?", why);
		c->damaged++;
	}
	if (step != SQLITE_DONE) {
		printf("database: reading the objects: %s\n", sqlite3_errmsg(c->db));
		c->damaged++;
	}
	sqlite3_finalize(q);
}

static int check_file(const char *path)
{
	struct check c = {.path = path};
	char uri[4200];
	int64_t counter, set_aside, schema;

	snprintf(uri, sizeof(uri), "file:%s?mode=ro", path);
	if (sqlite3_open_v2(uri, &c.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) !=
		SQLITE_OK ||
	    podctl_sql_scalar(c.db, "SELECT count(*) FROM sqlite_master WHERE name='objects'", 0) !=
		1) {
		fprintf(stderr, "podctl: store check: %s: not a podkerneld store (%s)\n", path,
			c.db ? sqlite3_errmsg(c.db) : "cannot open");
		sqlite3_close(c.db);
		return PODCTL_EXIT_USAGE;
	}
	counter = podctl_sql_scalar(c.db, "SELECT value FROM meta WHERE key='rv'", -1);
	if (counter < 0) {
		printf("database: the resourceVersion counter is %" PRId64 "\n", counter);
		c.damaged++;
	}
	c.counter = counter < 0 ? 0 : (uint64_t)counter;
	check_pages(&c);
	check_rows(&c);
	set_aside = podctl_sql_scalar(c.db, "SELECT count(*) FROM damaged_objects", 0);
	schema = podctl_sql_scalar(c.db, "PRAGMA user_version", 0);
	sqlite3_close(c.db);
	printf("%s: %" PRIu64 " objects, %" PRIu64 " damaged", path, c.rows, c.damaged);
	if (schema != PK_STORE_SCHEMA_VERSION)
		printf(", schema %" PRId64 " (this podkernel writes %d)", schema,
		       PK_STORE_SCHEMA_VERSION);
	if (c.unsummed)
		printf(", %" PRIu64 " without a checksum yet", c.unsummed);
	if (set_aside > 0)
		printf(", %" PRId64 " set aside earlier", set_aside);
	printf("\n");
	return c.damaged ? PODCTL_EXIT_FAILURE : PODCTL_EXIT_OK;
}

int podctl_store(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf(
		    "Usage: podctl store check FILE\n"
		    "       podctl store backup [--data-dir DIR] FILE\n"
		    "       podctl store restore [--data-dir DIR] FILE\n"
		    "  check: a podkerneld store (DATA-DIR/podkernel.db): SQLite's page\n"
		    "  structure and every row's checksum, resourceVersion and body.\n"
		    "  Exit 0 intact, 1 damage found (each damaged row printed), 2 bad usage\n"
		    "  or not a store.\n"
		    "  backup: copy DIR/podkernel.db (default ./podkernel-data) to FILE as of\n"
		    "  one commit, while podkerneld runs.\n"
		    "  restore: replace DIR/podkernel.db by the backup FILE; podkerneld must be\n"
		    "  stopped (the store replaced is kept as podkernel.db.pre-restore).\n");
		return PODCTL_EXIT_OK;
	}
	if (argc >= 2 && (strcmp(argv[1], "backup") == 0 || strcmp(argv[1], "restore") == 0))
		return podctl_store_copy(argc, argv);
	if (argc != 3 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr,
			"Usage: podctl store check|backup|restore ... (podctl store --help)\n");
		return PODCTL_EXIT_USAGE;
	}
	return check_file(argv[2]);
}

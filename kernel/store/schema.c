/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.c — the store file's schema version and its migrations, and the
 * data directory's lock.
 *
 * The version lives in the SQLite header (PRAGMA user_version).  At open a
 * file newer than PK_STORE_SCHEMA_VERSION is refused before anything is
 * written to it; an older one is brought up to date by the migrations below,
 * all in one transaction with the new version, so a crash leaves either the
 * old file or the new one.  A file from before versions (0) gets every
 * migration; each is written to be a no-op on what it already finds.
 *
 * The lock (flock on DIR/podkernel.lock) keeps a second podkerneld, and
 * `podctl store restore`, off a data directory that one is serving.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "kernel/store/store-internal.h"

struct migration {
	int to;		  /* the version the file has after it */
	const char *what; /* for the message when it fails */
	int (*apply)(sqlite3 *db);
};

static bool has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *q;
	bool found = false;
	char sql[128];

	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return false;
	while (!found && sqlite3_step(q) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 1);

		found = name && strcmp(name, column) == 0;
	}
	sqlite3_finalize(q);
	return found;
}

/* 1: row checksums (objects.sum) and the table of rows set aside. */
static int migrate_row_checksums(sqlite3 *db)
{
	if (!has_column(db, "objects", "sum") &&
	    sqlite3_exec(db, "ALTER TABLE objects ADD COLUMN sum INTEGER", NULL, NULL, NULL) !=
		SQLITE_OK)
		return -EIO;
	return sqlite3_exec(db, pk_store_quarantine_schema, NULL, NULL, NULL) == SQLITE_OK ? 0
											   : -EIO;
}

static const struct migration MIGRATIONS[] = {
    {1, "row checksums", migrate_row_checksums},
    {2, "owner index", pk_store_migrate_owner_index},
    {3, "event expiry index", pk_store_migrate_event_expiry},
    {4, "foreground deletion index", pk_store_migrate_foreground_index},
};

int pk_store_schema_version(sqlite3 *db)
{
	sqlite3_stmt *q;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	return v;
}

int pk_store_schema_check(sqlite3 *db, const char *path, int *ret_version, char *err, size_t errlen)
{
	int v = pk_store_schema_version(db);

	if (v < 0) {
		snprintf(err, errlen, "%s: cannot read the schema version: %s", path,
			 sqlite3_errmsg(db));
		return -EIO;
	}
	if (v > PK_STORE_SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s: store schema version %d is newer than this podkernel (%s) "
			 "understands (%d): run a newer podkerneld, or restore a backup taken "
			 "with this version",
			 path, v, PODKERNEL_VERSION, PK_STORE_SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (ret_version)
		*ret_version = v;
	return 0;
}

static int run_migrations(sqlite3 *db, int from, char *err, size_t errlen)
{
	char sql[64];

	for (size_t i = 0; i < sizeof(MIGRATIONS) / sizeof(MIGRATIONS[0]); i++) {
		if (MIGRATIONS[i].to <= from)
			continue;
		if (MIGRATIONS[i].apply(db) < 0) {
			snprintf(err, errlen, "migrating the store to schema %d (%s): %s",
				 MIGRATIONS[i].to, MIGRATIONS[i].what, sqlite3_errmsg(db));
			return -EIO;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", PK_STORE_SCHEMA_VERSION);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "setting the store schema version: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

int pk_store_schema_migrate(sqlite3 *db, const char *path, int *ret_from, char *err, size_t errlen)
{
	int from, rc;

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	rc = pk_store_schema_check(db, path, &from, err, errlen);
	if (rc == 0 && from < PK_STORE_SCHEMA_VERSION)
		rc = run_migrations(db, from, err, errlen);
	if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: committing the schema: %s", path, sqlite3_errmsg(db));
		rc = -EIO;
	}
	if (rc < 0) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if (ret_from)
		*ret_from = from;
	return 0;
}

int pk_store_lock_dir(const char *dir, int wait_ms, int *ret_fd, char *err, size_t errlen)
{
	char path[4096];
	int fd, r;

	if (snprintf(path, sizeof(path), "%s/podkernel.lock", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* read-only and readable by all: whoever made it (a restore as root), podkerneld opens it
	 */
	fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	/* a podkerneld killed a moment ago may not have closed its files yet */
	while ((r = flock(fd, LOCK_EX | LOCK_NB)) < 0 && errno == EWOULDBLOCK && wait_ms > 0) {
		usleep(20000);
		wait_ms -= 20;
	}
	if (r < 0) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK) {
			snprintf(err, errlen, "%s: in use by a running podkerneld", dir);
			return -EBUSY;
		}
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_backup.c — `podctl store backup FILE` and `podctl store restore FILE`.
 *
 * Backup is online: SQLite's backup API copies DIR/podkernel.db in one read
 * transaction, so the copy is the store as of one commit while podkerneld
 * keeps serving (WAL: the reader never blocks its writer).  The copy is
 * written to FILE.partial, checked (quick_check), synced and renamed, so FILE
 * is either a whole backup or untouched.
 *
 * Restore needs podkerneld stopped: it takes the data directory's lock (held
 * by a running podkerneld), checks the backup (a podkerneld store of a schema
 * this podkernel reads, quick_check ok), copies it next to the store, keeps
 * the store it replaces as podkernel.db.pre-restore (its WAL checkpointed
 * first) and renames the copy into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/podctl/podctl-internal.h"
#include "kernel/podctl/podctl.h"
#include "kernel/store/store.h"

#define STORE_DEFAULT_DIR "./podkernel-data"

struct store_info {
	int64_t objects, rv;
	int schema;
};

static bool quick_check_ok(sqlite3 *db)
{
	sqlite3_stmt *q;
	bool ok = false;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &q, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_step(q) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(q, 0);

		ok = m && strcmp(m, "ok") == 0;
	}
	sqlite3_finalize(q);
	return ok;
}

/* DB is a podkerneld store this podkernel reads: its counts, or a message. */
static int store_describe(sqlite3 *db, const char *path, struct store_info *ret, char *err,
			  size_t errlen)
{
	struct store_info info = {0};

	if (podctl_sql_scalar(db,
			      "SELECT count(*) FROM sqlite_master WHERE name IN ('objects','meta')",
			      0) != 2) {
		snprintf(err, errlen, "%s: not a podkerneld store (%s)", path,
			 sqlite3_errcode(db) == SQLITE_OK ? "no objects table"
							  : sqlite3_errmsg(db));
		return -EINVAL;
	}
	if (pk_store_schema_check(db, path, &info.schema, err, errlen) < 0)
		return -EPROTONOSUPPORT;
	info.objects = podctl_sql_scalar(db, "SELECT count(*) FROM objects", -1);
	info.rv = podctl_sql_scalar(db, "SELECT value FROM meta WHERE key='rv'", -1);
	if (info.objects < 0 || info.rv < 0) {
		snprintf(err, errlen, "%s: cannot read the store: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	*ret = info;
	return 0;
}

static int open_store(const char *path, int flags, sqlite3 **ret, char *err, size_t errlen)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -EIO;
	}
	sqlite3_busy_timeout(db, 10000);
	*ret = db;
	return 0;
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/*
 * Copy SRC (an open store) into a new single file DST (journal_mode DELETE),
 * checked; DST is removed on failure.
 */
static int copy_store(sqlite3 *src, const char *dst, char *err, size_t errlen)
{
	sqlite3 *out = NULL;
	sqlite3_backup *b;
	int rc = -EIO;

	unlink(dst);
	if (open_store(dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &out, err, errlen) < 0)
		return -EIO;
	b = sqlite3_backup_init(out, "main", src, "main");
	if (!b) {
		snprintf(err, errlen, "%s: %s", dst, sqlite3_errmsg(out));
		goto out;
	}
	int step = sqlite3_backup_step(b, -1);

	sqlite3_backup_finish(b);
	if (step != SQLITE_DONE) {
		snprintf(err, errlen, "copying the store: %s", sqlite3_errstr(step));
		goto out;
	}
	if (sqlite3_exec(out, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK ||
	    !quick_check_ok(out)) {
		snprintf(err, errlen, "%s: the copy does not check: %s", dst, sqlite3_errmsg(out));
		goto out;
	}
	rc = 0;
out:
	if (sqlite3_close(out) != SQLITE_OK && rc == 0) {
		snprintf(err, errlen, "%s: cannot close", dst);
		rc = -EIO;
	}
	if (rc == 0 && fsync_path(dst) < 0) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		rc = -EIO;
	}
	if (rc < 0)
		unlink(dst);
	return rc;
}

static int backup(const char *dir, const char *file)
{
	char src[4096], tmp[4200], err[512];
	struct store_info info;
	sqlite3 *db = NULL;
	int rc;

	snprintf(src, sizeof(src), "%s/podkernel.db", dir);
	snprintf(tmp, sizeof(tmp), "%s.partial", file);
	rc = open_store(src, SQLITE_OPEN_READWRITE, &db, err, sizeof(err));
	if (rc == 0)
		rc = store_describe(db, src, &info, err, sizeof(err));
	if (rc == 0)
		rc = copy_store(db, tmp, err, sizeof(err));
	sqlite3_close(db);
	if (rc == 0 && rename(tmp, file) < 0) {
		snprintf(err, sizeof(err), "%s: %s", file, strerror(errno));
		unlink(tmp);
		rc = -EIO;
	}
	if (rc < 0) {
		fprintf(stderr, "podctl: store backup: %s\n", err);
		return rc == -EINVAL ? PODCTL_EXIT_USAGE : PODCTL_EXIT_FAILURE;
	}
	/* the copy's own counts: the commit it was taken at */
	if (open_store(file, SQLITE_OPEN_READONLY, &db, err, sizeof(err)) == 0 &&
	    store_describe(db, file, &info, err, sizeof(err)) == 0)
		printf("%s: %" PRId64 " objects at resourceVersion %" PRId64 " (schema %d)\n", file,
		       info.objects, info.rv, info.schema);
	sqlite3_close(db);
	return PODCTL_EXIT_OK;
}

/* Checkpoint DB's WAL into it and keep it as DB.pre-restore (a hard link). */
static int keep_previous(const char *db_path, char *err, size_t errlen)
{
	char keep[4200], side[4200];
	sqlite3 *db = NULL;

	if (access(db_path, F_OK) < 0)
		return 0;
	if (open_store(db_path, SQLITE_OPEN_READWRITE, &db, err, errlen) < 0)
		return -EIO;
	sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	sqlite3_close(db);
	snprintf(keep, sizeof(keep), "%s.pre-restore", db_path);
	unlink(keep);
	if (link(db_path, keep) < 0) {
		snprintf(err, errlen, "%s: %s", keep, strerror(errno));
		return -errno;
	}
	snprintf(side, sizeof(side), "%s-wal", db_path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", db_path);
	unlink(side);
	return 0;
}

/*
 * The restored file belongs to whoever owns the store it replaces (or the
 * directory): a restore run as root leaves podkerneld's user able to write it.
 */
static void same_owner(const char *dir, const char *db_path, const char *file)
{
	struct stat st;

	/* not root: chown fails, and the file is ours already */
	if (stat(db_path, &st) == 0 || stat(dir, &st) == 0)
		(void)!chown(file, st.st_uid, st.st_gid);
}

static int restore_into(const char *dir, sqlite3 *from, char *err, size_t errlen)
{
	char db_path[4096], tmp[4200];

	snprintf(db_path, sizeof(db_path), "%s/podkernel.db", dir);
	snprintf(tmp, sizeof(tmp), "%s.restore", db_path);
	if (copy_store(from, tmp, err, errlen) < 0)
		return -EIO;
	same_owner(dir, db_path, tmp);
	if (keep_previous(db_path, err, errlen) < 0 || rename(tmp, db_path) < 0) {
		if (!*err)
			snprintf(err, errlen, "%s: %s", db_path, strerror(errno));
		unlink(tmp);
		return -EIO;
	}
	fsync_path(dir);
	return 0;
}

static int restore(const char *dir, const char *file)
{
	char err[512] = "";
	struct store_info info;
	sqlite3 *db = NULL;
	int lock = -1, rc;

	rc = open_store(file, SQLITE_OPEN_READONLY, &db, err, sizeof(err));
	if (rc == 0)
		rc = store_describe(db, file, &info, err, sizeof(err));
	if (rc == 0 && !quick_check_ok(db)) {
		snprintf(err, sizeof(err), "%s: damaged (PRAGMA quick_check): not restored", file);
		rc = -EIO;
	}
	if (rc == 0 && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, sizeof(err), "%s: %s", dir, strerror(errno));
		rc = -EIO;
	}
	if (rc == 0) {
		rc = pk_store_lock_dir(dir, 0, &lock, err, sizeof(err));
		if (rc == -EBUSY)
			snprintf(err, sizeof(err),
				 "%s is in use by a running podkerneld: stop it first", dir);
	}
	if (rc == 0)
		rc = restore_into(dir, db, err, sizeof(err));
	sqlite3_close(db);
	if (lock >= 0)
		close(lock);
	if (rc < 0) {
		fprintf(stderr, "podctl: store restore: %s\n", err);
		return rc == -EINVAL ? PODCTL_EXIT_USAGE : PODCTL_EXIT_FAILURE;
	}
	printf("%s/podkernel.db: restored from %s: %" PRId64 " objects at resourceVersion %" PRId64
	       "\n",
	       dir, file, info.objects, info.rv);
	return PODCTL_EXIT_OK;
}

/* `store backup|restore [--data-dir DIR] FILE`; argv[0] is "store". */
int podctl_store_copy(int argc, char **argv)
{
	const char *dir = STORE_DEFAULT_DIR;
	int i = 2;

	if (i + 1 < argc && strcmp(argv[i], "--data-dir") == 0) {
		dir = argv[i + 1];
		i += 2;
	} else if (i < argc && strncmp(argv[i], "--data-dir=", 11) == 0) {
		dir = argv[i] + 11;
		i++;
	}
	if (i + 1 != argc || !*argv[i] || argv[i][0] == '-') {
		fprintf(stderr, "Usage: podctl store %s [--data-dir DIR] FILE\n", argv[1]);
		return PODCTL_EXIT_USAGE;
	}
	return strcmp(argv[1], "backup") == 0 ? backup(dir, argv[i]) : restore(dir, argv[i]);
}

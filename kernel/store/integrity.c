/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrity.c — what the store does about damage on disk.
 *
 * SQLite's own checks cover its page structure, not the bytes of a row: a
 * flipped byte inside a body passes PRAGMA integrity_check and used to make
 * the row unparseable and silently absent.  Every row therefore carries a
 * checksum (pk_row_sum(): key, resourceVersion and body), written with the
 * row and verified whenever the row is read.
 *
 * At open, every row is checked in full (pk_row_verify(): checksum,
 * resourceVersion within 1..counter, body identity) and rows written before
 * checksums existed get theirs.  Damaged rows refuse the open, naming them,
 * unless the caller allows a damaged store: then they are moved to the
 * damaged_objects table (kept for inspection, never served) and reported.
 * A damaged row met later by a read is an error (-EIO) for that read.
 * Either way the damage is counted, its last description kept (for
 * /readyz and /metrics) and handed to the damage callback (the log).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/store/store-internal.h"

void pk_store_set_damage_log(struct pk_store *st, void (*fn)(void *arg, const char *msg), void *arg)
{
	pthread_mutex_lock(&st->dlock);
	st->damage_log = fn;
	st->damage_log_arg = arg;
	pthread_mutex_unlock(&st->dlock);
}

void pk_store_damage_note(struct pk_store *st, const char *kind, const char *ns, const char *name,
			  const char *why)
{
	char msg[sizeof(st->damage_last)];

	snprintf(msg, sizeof(msg), "damaged row %s %s%s%s: %s", kind ? kind : "?",
		 ns && *ns ? ns : "", ns && *ns ? "/" : "", name ? name : "?", why);
	pthread_mutex_lock(&st->dlock);
	st->damaged++;
	memcpy(st->damage_last, msg, sizeof(msg));
	if (st->damage_log)
		st->damage_log(st->damage_log_arg, msg);
	pthread_mutex_unlock(&st->dlock);
}

void pk_store_get_damage(struct pk_store *st, struct pk_store_damage *ret)
{
	pthread_mutex_lock(&st->dlock);
	ret->rows = st->damaged;
	ret->quarantined = st->quarantined;
	snprintf(ret->last, sizeof(ret->last), "%s", st->damage_last);
	pthread_mutex_unlock(&st->dlock);
}

int pk_store_row_check(struct pk_store *st, sqlite3_stmt *q, int col, const char *kind,
		       const char *ns, const char *name)
{
	const char *body = (const char *)sqlite3_column_text(q, col);
	size_t len = (size_t)sqlite3_column_bytes(q, col);
	int64_t rv = sqlite3_column_int64(q, col + 1);
	bool has_sum = sqlite3_column_type(q, col + 2) != SQLITE_NULL;
	uint64_t sum = (uint64_t)sqlite3_column_int64(q, col + 2);

	if (!body || (has_sum && pk_row_sum(kind, ns, name, rv, body, len) != sum)) {
		pk_store_damage_note(st, kind, ns, name, body ? "checksum mismatch" : "no body");
		return -EIO;
	}
	if (rv <= 0) {
		char why[64];

		snprintf(why, sizeof(why), "resourceVersion %" PRId64, rv);
		pk_store_damage_note(st, kind, ns, name, why);
		return -EIO;
	}
	return 0;
}

/* The body of a checked row to its tree: 0, or -EIO when it is not JSON (noted). */
static int row_parse(struct pk_store *st, sqlite3_stmt *q, int col, const char *kind,
		     const char *ns, const char *name, json_t **ret)
{
	json_t *obj;

	atomic_fetch_add(&st->read_parsed, 1);
	obj = pk_row_parse((const char *)sqlite3_column_text(q, col),
			   (size_t)sqlite3_column_bytes(q, col));
	if (!obj) {
		pk_store_damage_note(st, kind, ns, name, "the body is not JSON");
		return -EIO;
	}
	*ret = obj;
	return 0;
}

int pk_store_row_load(struct pk_store *st, sqlite3_stmt *q, int col, const char *kind,
		      const char *ns, const char *name, json_t **ret)
{
	int r = pk_store_row_check(st, q, col, kind, ns, name);

	if (r < 0)
		return r;
	if (!ret)
		return 0; /* checked, not parsed */
	return row_parse(st, q, col, kind, ns, name, ret);
}

int pk_store_row_load_opened(struct pk_store *st, sqlite3_stmt *q, int col, const char *kind,
			     const char *ns, const char *name, json_t **ret)
{
	int64_t rv = sqlite3_column_int64(q, col + 1);
	bool verified =
	    rv > 0 && (uint64_t)rv <= st->verified_rv && sqlite3_column_type(q, col) != SQLITE_NULL;

	if (!verified || !ret)
		return pk_store_row_load(st, q, col, kind, ns, name, ret);
	return row_parse(st, q, col, kind, ns, name, ret);
}

/* ---- the check at open ------------------------------------------------------ */

/*
 * A row to change once the scan is over (SQLite leaves changes to a table
 * under an open cursor undefined): a checksum to fill in, or a damaged row
 * to move out (its columns kept as they were).
 */
struct deferred {
	sqlite3_value *col[6];
	uint64_t sum;
	char *why; /* NULL: fill in sum */
};

struct verify_state {
	struct pk_store *st;
	bool allow_damaged;
	uint64_t damaged;
	char first[256];
	struct deferred *todo;
	size_t ntodo, cap;
};

static void deferred_free(struct verify_state *vs)
{
	for (size_t i = 0; i < vs->ntodo; i++) {
		for (int c = 0; c < 6; c++)
			sqlite3_value_free(vs->todo[i].col[c]);
		free(vs->todo[i].why);
	}
	free(vs->todo);
}

static int defer(struct verify_state *vs, sqlite3_stmt *q, uint64_t sum, const char *why)
{
	struct deferred *d;

	if (vs->ntodo == vs->cap) {
		size_t cap = vs->cap ? vs->cap * 2 : 16;

		d = realloc(vs->todo, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		vs->todo = d;
		vs->cap = cap;
	}
	d = &vs->todo[vs->ntodo++];
	memset(d, 0, sizeof(*d));
	for (int c = 0; c < 6; c++)
		d->col[c] = sqlite3_value_dup(sqlite3_column_value(q, c));
	d->sum = sum;
	d->why = why ? strdup(why) : NULL;
	return d->col[0] && (!why || d->why) ? 0 : -ENOMEM;
}

/* One row at open: checked; one without a checksum or a damaged one is deferred. */
static int verify_row(struct verify_state *vs, sqlite3_stmt *q)
{
	const char *kind = (const char *)sqlite3_column_text(q, 0);
	const char *ns = (const char *)sqlite3_column_text(q, 1);
	const char *name = (const char *)sqlite3_column_text(q, 2);
	int64_t rv = sqlite3_column_int64(q, 3);
	const char *body = (const char *)sqlite3_column_text(q, 4);
	size_t len = (size_t)sqlite3_column_bytes(q, 4);
	bool has_sum = sqlite3_column_type(q, 5) != SQLITE_NULL;
	char why[200];

	if (pk_row_verify(kind, ns, name, rv, body, len, has_sum,
			  (uint64_t)sqlite3_column_int64(q, 5), vs->st->rv, why, sizeof(why)) == 0)
		return has_sum ? 0 : defer(vs, q, pk_row_sum(kind, ns, name, rv, body, len), NULL);
	if (vs->damaged++ == 0)
		snprintf(vs->first, sizeof(vs->first), "%s %s%s%s: %s", kind ? kind : "?",
			 ns && *ns ? ns : "", ns && *ns ? "/" : "", name ? name : "?", why);
	pk_store_damage_note(vs->st, kind, ns, name, why);
	return vs->allow_damaged ? defer(vs, q, 0, why) : 0;
}

const char pk_store_quarantine_schema[] =
    "CREATE TABLE IF NOT EXISTS damaged_objects(kind TEXT, ns TEXT, name TEXT, rv INTEGER,"
    " body BLOB, sum INTEGER, reason TEXT, found TEXT DEFAULT CURRENT_TIMESTAMP);";

/* pk_row_intact(kind, ns, name, rv, body, sum): does the row pass pk_row_verify()? */
static void row_intact_fn(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	const struct pk_store *st = sqlite3_user_data(ctx);
	char why[200];
	(void)argc;
	bool ok =
	    pk_row_verify((const char *)sqlite3_value_text(v[0]),
			  (const char *)sqlite3_value_text(v[1]),
			  (const char *)sqlite3_value_text(v[2]), sqlite3_value_int64(v[3]),
			  (const char *)sqlite3_value_text(v[4]), (size_t)sqlite3_value_bytes(v[4]),
			  sqlite3_value_type(v[5]) != SQLITE_NULL,
			  (uint64_t)sqlite3_value_int64(v[5]), st->rv, why, sizeof(why)) == 0;
	sqlite3_result_int(ctx, ok);
}

/*
 * The objects table rebuilt from a full scan of its intact rows.  A damaged
 * row cannot be deleted by its key: when the key itself is damaged the
 * b-tree is out of order there, and a lookup finds nothing, or finds the
 * intact row whose key the damage now spells.  The scan reads every row
 * whatever its key.  Dropping the table drops its triggers (the owner index
 * sets them up again after this check) and fires none: the index forgets
 * the rows set aside here.
 */
static const char REBUILD[] =
    "CREATE TABLE objects_intact(kind TEXT NOT NULL, ns TEXT NOT NULL,"
    " name TEXT NOT NULL, rv INTEGER NOT NULL, body TEXT NOT NULL, sum INTEGER,"
    " PRIMARY KEY(kind, ns, name)) WITHOUT ROWID;"
    "INSERT OR IGNORE INTO objects_intact SELECT kind, ns, name, rv, body, sum FROM objects"
    " NOT INDEXED WHERE pk_row_intact(kind, ns, name, rv, body, sum);"
    "DROP TABLE objects;"
    "ALTER TABLE objects_intact RENAME TO objects;"
    "CREATE INDEX IF NOT EXISTS objects_by_ns ON objects(ns);";

static bool table_exists(sqlite3 *db, const char *name)
{
	sqlite3_stmt *q = NULL;
	bool there = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
			       -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
		there = sqlite3_step(q) == SQLITE_ROW;
	}
	sqlite3_finalize(q);
	return there;
}

static int rebuild_intact(struct verify_state *vs)
{
	sqlite3 *db = vs->st->db;
	int r = 0;

	if (sqlite3_create_function(db, "pk_row_intact", 6, SQLITE_UTF8, vs->st, row_intact_fn,
				    NULL, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_exec(db, REBUILD, NULL, NULL, NULL) != SQLITE_OK)
		r = -EIO;
	/* The owner index (gc.c) gets its triggers back (dropped with the table)
	 * and is built again from the intact rows: none fired for those set aside. */
	if (r == 0 && table_exists(db, "owner_refs"))
		r = pk_store_migrate_owner_index(db);
	/* The Event expiry index gets its triggers back (dropped with the table)
	 * and forgets the Events set aside. */
	if (r == 0 && table_exists(db, "event_expiry"))
		r = pk_store_migrate_event_expiry(db);
	/* the foreground index went with the table */
	if (r == 0)
		r = pk_store_migrate_foreground_index(db);
	sqlite3_create_function(db, "pk_row_intact", 6, SQLITE_UTF8, NULL, NULL, NULL, NULL);
	return r;
}

/* Fill in the checksums and copy the damaged rows to damaged_objects (the
 * table is then rebuilt without them: rebuild_intact()). */
static int apply_deferred(struct verify_state *vs)
{
	sqlite3 *db = vs->st->db;
	sqlite3_stmt *fill = NULL, *ins = NULL;
	bool damaged = false;
	int r = -EIO;

	if (sqlite3_exec(db, pk_store_quarantine_schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "UPDATE objects SET sum=?4 WHERE kind=?1 AND ns=?2 AND name=?3",
			       -1, &fill, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "INSERT INTO damaged_objects(kind,ns,name,rv,body,sum,reason)"
			       " VALUES(?1,?2,?3,?4,?5,?6,?7)",
			       -1, &ins, NULL) != SQLITE_OK)
		goto out;
	r = 0;
	for (size_t i = 0; r == 0 && i < vs->ntodo; i++) {
		struct deferred *d = &vs->todo[i];
		sqlite3_stmt *step = d->why ? ins : fill;

		for (int c = 0; c < 3; c++)
			sqlite3_bind_value(step, c + 1, d->col[c]);
		if (d->why) {
			for (int c = 3; c < 6; c++)
				sqlite3_bind_value(ins, c + 1, d->col[c]);
			sqlite3_bind_text(ins, 7, d->why, -1, SQLITE_STATIC);
			damaged = true;
		} else {
			sqlite3_bind_int64(fill, 4, (sqlite3_int64)d->sum);
		}
		if (sqlite3_step(step) != SQLITE_DONE)
			r = -EIO;
		sqlite3_reset(step);
	}
	if (r == 0 && damaged)
		r = rebuild_intact(vs);
out:
	sqlite3_finalize(fill);
	sqlite3_finalize(ins);
	return r;
}

/* Every row, in one write transaction (checksums and quarantine commit together). */
static int verify_rows(struct verify_state *vs, char *err, size_t errlen)
{
	sqlite3 *db = vs->st->db;
	sqlite3_stmt *q = NULL;
	int r = 0, step = SQLITE_DONE;

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_prepare_v2(db, "SELECT kind, ns, name, rv, body, sum FROM objects", -1, &q,
			       NULL) != SQLITE_OK)
		r = -EIO;
	while (r == 0 && (step = sqlite3_step(q)) == SQLITE_ROW)
		r = verify_row(vs, q);
	if (r == 0 && step != SQLITE_DONE) {
		/* SQLite itself cannot read on: the file is damaged below the rows */
		snprintf(err, errlen, "reading the objects: %s", sqlite3_errmsg(db));
		if (vs->damaged++ == 0)
			snprintf(vs->first, sizeof(vs->first), "database: %s", sqlite3_errmsg(db));
		pk_store_damage_note(vs->st, "database", "", "objects", sqlite3_errmsg(db));
	}
	sqlite3_finalize(q);
	if (r == 0)
		r = apply_deferred(vs);
	if (sqlite3_exec(db, r == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK &&
	    r == 0)
		r = -EIO;
	deferred_free(vs);
	return r;
}

int pk_store_verify_open(struct pk_store *st, bool allow_damaged, char *err, size_t errlen)
{
	struct verify_state vs = {.st = st, .allow_damaged = allow_damaged};
	int r;

	if ((int64_t)st->rv < 0) {
		snprintf(err, errlen, "the resourceVersion counter is %" PRId64 " (negative)",
			 (int64_t)st->rv);
		return -EUCLEAN;
	}
	r = verify_rows(&vs, err, errlen);
	if (r < 0)
		return r;
	if (vs.damaged && !allow_damaged) {
		snprintf(err, errlen,
			 "%" PRIu64 " damaged row%s (first: %s); start with --allow-damaged-store "
			 "to set them aside and serve the rest",
			 vs.damaged, vs.damaged == 1 ? "" : "s", vs.first);
		return -EUCLEAN;
	}
	pthread_mutex_lock(&st->dlock);
	st->quarantined = vs.damaged;
	pthread_mutex_unlock(&st->dlock);
	st->verified_rv = st->rv;
	return 0;
}

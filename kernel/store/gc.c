/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gc.c — the store's part of garbage collection: the owner index and
 * orphaning, and the reads of the owner and Event-expiry indexes.
 *
 * The owner index is the table owner_refs: one row per ownerReference of
 * every stored object (the owner's uid; the dependent's kind, namespace and
 * name), kept by triggers on the objects table inside the transaction of the
 * write itself, so that it says what the objects say whatever wrote them (a
 * write, a namespace's deletion, a damaged row moved aside at open).
 * Finding an owner's dependents is one range of an index, never a scan of
 * the store.  A database from before the index has it filled once at open.
 *
 * A delete with propagationPolicy Orphan (or orphanDependents true) leaves
 * the owner's dependents in place and removes, from each of them, the
 * ownerReferences that name the owner's uid, as kube-controller-manager's
 * garbage collector does before it lets the owner go.  Here it happens in
 * the delete's own transaction, so a client that sees the owner gone also
 * sees the dependents free.  The dependents are the objects whose
 * ownerReferences name the uid, as in upstream's graph (keyed by uid).
 * Background and Foreground deletion of dependents is standalone's
 * collector (kernel/controllers/gc.c).
 *
 * The Event expiry index is the table event_expiry: one row per stored
 * Event (namespace, name) with the time of its last write, in seconds, kept
 * by triggers like the owner index.  A write of an Event (a new one, or a
 * repeat that bumps its count) starts its TTL again, as kube-apiserver's
 * lease on an Event does; expiring Events (pk_store_expired_events()) reads
 * one range of the index, never the Events themselves.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/store/store-internal.h"

/* Drop obj's references to uid; true when there were any. */
static bool drop_refs(json_t *obj, const char *uid)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *refs = json_object_get(meta, "ownerReferences");
	bool dropped = false;

	for (size_t i = json_array_size(refs); i-- > 0;) {
		const char *ruid =
		    json_string_value(json_object_get(json_array_get(refs, i), "uid"));

		if (ruid && strcmp(ruid, uid) == 0) {
			json_array_remove(refs, i);
			dropped = true;
		}
	}
	if (dropped && json_array_size(refs) == 0)
		json_object_del(meta, "ownerReferences");
	return dropped;
}

/*
 * The index: one row per reference, keyed by the owner's uid then the
 * dependent; a row's references are found again through their uids (no
 * second index to keep).  The triggers run in the write's own transaction.
 * Only a body that mentions ownerReferences is parsed; an update whose
 * references did not change (a status, a binding) writes nothing here.
 * PRAGMA recursive_triggers (set at each open) makes the row an INSERT OR
 * REPLACE replaces fire the delete trigger.  A damaged body (invalid JSON,
 * set aside at open) is not parsed: its rows stay, naming a dependent that
 * is gone, which the collector finds gone.
 */
#define ADD_ROWS                                                                                   \
	" INSERT OR IGNORE INTO owner_refs SELECT json_extract(value, '$.uid'), NEW.kind,"         \
	" NEW.ns, NEW.name FROM json_each(NEW.body, '$.metadata.ownerReferences')"                 \
	" WHERE type = 'object' AND json_type(value, '$.uid') = 'text';"
#define DROP_ROWS                                                                                  \
	" DELETE FROM owner_refs WHERE kind = OLD.kind AND ns = OLD.ns AND name = OLD.name"        \
	" AND uid IN (SELECT json_extract(value, '$.uid')"                                         \
	" FROM json_each(OLD.body, '$.metadata.ownerReferences') WHERE type = 'object');"
#define MENTIONS(ROW) " instr(" ROW ".body, '\"ownerReferences\"') > 0 "

static const char OWNERS_SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS owner_refs(uid TEXT NOT NULL, kind TEXT NOT NULL,"
    " ns TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY(uid, kind, ns, name)) WITHOUT ROWID;"
    "CREATE TRIGGER IF NOT EXISTS owner_refs_insert AFTER INSERT ON objects"
    " WHEN" MENTIONS(
	"NEW") "BEGIN" ADD_ROWS " END;"
	       "CREATE TRIGGER IF NOT EXISTS owner_refs_update AFTER UPDATE OF body ON objects"
	       " WHEN (" MENTIONS("OLD") "OR" MENTIONS(
		   "NEW") ") AND"
			  " json_extract(OLD.body, '$.metadata.ownerReferences') IS NOT"
			  " json_extract(NEW.body, '$.metadata.ownerReferences')"
			  " BEGIN" DROP_ROWS ADD_ROWS " END;"
			  "CREATE TRIGGER IF NOT EXISTS owner_refs_delete AFTER DELETE ON objects"
			  " WHEN" MENTIONS("OLD") "AND json_valid(OLD.body) BEGIN" DROP_ROWS " END;"
						  /* every stored object's references (a file from
						     before the index) */
						  "DELETE FROM owner_refs;"
						  "INSERT OR IGNORE INTO owner_refs SELECT "
						  "json_extract(r.value, '$.uid'), o.kind, o.ns,"
						  " o.name FROM objects AS o, json_each(o.body, "
						  "'$.metadata.ownerReferences') AS r"
						  " WHERE instr(o.body, '\"ownerReferences\"') > 0 "
						  "AND json_valid(o.body)"
						  " AND r.type = 'object' AND json_type(r.value, "
						  "'$.uid') = 'text';";

#define EVENT_NOW " CAST(strftime('%s', 'now') AS INTEGER)"
#define EVENT_TOUCH                                                                                \
	" INSERT OR REPLACE INTO event_expiry(ns, name, at) VALUES(NEW.ns, NEW.name," EVENT_NOW ");"

static const char EVENT_EXPIRY_SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS event_expiry(ns TEXT NOT NULL, name TEXT NOT NULL,"
    " at INTEGER NOT NULL, PRIMARY KEY(ns, name)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS event_expiry_by_at ON event_expiry(at, ns, name);"
    "CREATE TRIGGER IF NOT EXISTS event_expiry_insert AFTER INSERT ON objects"
    " WHEN NEW.kind = 'Event' BEGIN" EVENT_TOUCH " END;"
    "CREATE TRIGGER IF NOT EXISTS event_expiry_update AFTER UPDATE OF body ON objects"
    " WHEN NEW.kind = 'Event' BEGIN" EVENT_TOUCH " END;"
    "CREATE TRIGGER IF NOT EXISTS event_expiry_delete AFTER DELETE ON objects"
    " WHEN OLD.kind = 'Event' BEGIN"
    " DELETE FROM event_expiry WHERE ns = OLD.ns AND name = OLD.name; END;"
    /* the Events gone without a trigger (rows set aside at open: integrity.c) */
    "DELETE FROM event_expiry WHERE NOT EXISTS (SELECT 1 FROM objects AS o WHERE"
    " o.kind = 'Event' AND o.ns = event_expiry.ns AND o.name = event_expiry.name);"
    /* the Events of a file from before the index: their TTL from their creation */
    "INSERT OR IGNORE INTO event_expiry(ns, name, at) SELECT ns, name,"
    " COALESCE(CAST(strftime('%s', json_extract(body, '$.metadata.creationTimestamp'))"
    " AS INTEGER)," EVENT_NOW ") FROM objects WHERE kind = 'Event' AND json_valid(body);";

int pk_store_migrate_event_expiry(sqlite3 *db)
{
	return sqlite3_exec(db, EVENT_EXPIRY_SCHEMA, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Objects that carry the foreground finalizer: few, found without a scan. */
int pk_store_migrate_foreground_index(sqlite3 *db)
{
	return sqlite3_exec(
		   db,
		   "CREATE INDEX IF NOT EXISTS objects_foreground ON objects(kind, ns, name)"
		   " WHERE " PK_STORE_FOREGROUND_TERM ";",
		   NULL, NULL, NULL) == SQLITE_OK
		   ? 0
		   : -EIO;
}

int pk_store_migrate_owner_index(sqlite3 *db)
{
	return sqlite3_exec(db, OWNERS_SCHEMA, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Each object of st->db whose ownerReferences name uid, as {kind, namespace, name}. */
static int dependents_of(struct pk_store *st, const char *uid, json_t **ret)
{
	sqlite3_stmt *q = NULL;
	json_t *out = json_array();
	int rc = 0, s;

	if (!out ||
	    sqlite3_prepare_v2(st->db, PK_STORE_DEPENDENTS_SQL, -1, &q, NULL) != SQLITE_OK) {
		json_decref(out);
		return out ? -EIO : -ENOMEM;
	}
	sqlite3_bind_text(q, 1, uid, -1, SQLITE_STATIC);
	while (rc == 0 && (s = sqlite3_step(q)) == SQLITE_ROW)
		rc = pk_store_dependent_row(q, out);
	if (rc == 0 && s != SQLITE_DONE)
		rc = -EIO;
	sqlite3_finalize(q);
	if (rc < 0)
		json_decref(out);
	else
		*ret = out;
	return rc;
}

int pk_store_dependent_row(sqlite3_stmt *q, json_t *out)
{
	json_t *d = json_pack("{s:s,s:s,s:s}", "kind", (const char *)sqlite3_column_text(q, 0),
			      "namespace", (const char *)sqlite3_column_text(q, 1), "name",
			      (const char *)sqlite3_column_text(q, 2));

	return d && json_array_append_new(out, d) == 0 ? 0 : -ENOMEM;
}

int pk_store_orphan_dependents(struct pk_store *st, struct txn *tx, const struct pk_type *t,
			       const json_t *owner)
{
	const char *uid = pk_store_meta_str(owner, "uid");
	json_t *deps = NULL, *d;
	size_t i;
	int rc;

	(void)t;
	if (!uid || !*uid)
		return 0;
	rc = dependents_of(st, uid, &deps);
	json_array_foreach(deps, i, d)
	{
		const char *ns = json_string_value(json_object_get(d, "namespace"));
		json_t *obj = pk_store_db_get(st, json_string_value(json_object_get(d, "kind")), ns,
					      json_string_value(json_object_get(d, "name")));

		if (rc == 0 && obj && drop_refs(obj, uid))
			rc = pk_store_txn_put(st, tx, obj, PK_EVENT_MODIFIED);
		json_decref(obj);
	}
	json_decref(deps);
	return rc;
}

/* Read the dependents of uid on reader r. */
static int dependents_read(struct store_reader *r, const char *uid, json_t *out)
{
	int rc = 0, s = SQLITE_DONE;

	if (!r->st_owned &&
	    sqlite3_prepare_v3(r->db, PK_STORE_DEPENDENTS_SQL, -1, SQLITE_PREPARE_PERSISTENT,
			       &r->st_owned, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(r->st_owned, 1, uid, -1, SQLITE_STATIC);
	while (rc == 0 && (s = sqlite3_step(r->st_owned)) == SQLITE_ROW)
		rc = pk_store_dependent_row(r->st_owned, out);
	if (rc == 0 && s != SQLITE_DONE)
		rc = -EIO;
	sqlite3_reset(r->st_owned);
	sqlite3_clear_bindings(r->st_owned);
	return rc;
}

int pk_store_dependents(struct pk_store *st, const char *uid, json_t **ret)
{
	json_t *out;
	struct store_reader *r;
	int rc;

	if (!uid || !*uid)
		return -EINVAL;
	if (!(out = json_array()))
		return -ENOMEM;
	r = pk_store_reader_take(st);
	rc = dependents_read(r, uid, out);
	atomic_fetch_add(&st->read_queries, 1);
	pk_store_reader_give(st, r);
	if (rc < 0) {
		json_decref(out);
		return rc;
	}
	*ret = out;
	return 0;
}

int pk_store_gc_candidates(struct pk_store *st, json_t **ret)
{
	sqlite3_stmt *q = NULL;
	struct store_reader *r;
	json_t *out = json_array();
	int rc = 0, s = SQLITE_DONE;

	if (!out)
		return -ENOMEM;
	r = pk_store_reader_take(st);
	if (sqlite3_prepare_v2(r->db, PK_STORE_GC_CANDIDATES_SQL, -1, &q, NULL) != SQLITE_OK)
		rc = -EIO;
	while (rc == 0 && (s = sqlite3_step(q)) == SQLITE_ROW)
		rc = pk_store_dependent_row(q, out);
	if (rc == 0 && s != SQLITE_DONE)
		rc = -EIO;
	atomic_fetch_add(&st->read_steps,
			 q ? (uint64_t)sqlite3_stmt_status(q, SQLITE_STMTSTATUS_VM_STEP, 0) : 0);
	sqlite3_finalize(q);
	atomic_fetch_add(&st->read_queries, 1);
	pk_store_reader_give(st, r);
	if (rc < 0) {
		json_decref(out);
		return rc;
	}
	*ret = out;
	return 0;
}

static int expired_read(struct store_reader *r, int64_t before_s, size_t max, json_t *out,
			uint64_t *ret_steps)
{
	sqlite3_stmt *q;
	int rc = 0, s = SQLITE_DONE;

	if (sqlite3_prepare_v2(r->db,
			       "SELECT ns, name FROM event_expiry INDEXED BY event_expiry_by_at"
			       " WHERE at <= ?1 ORDER BY at, ns, name LIMIT ?2",
			       -1, &q, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(q, 1, before_s);
	sqlite3_bind_int64(q, 2, max > INT64_MAX ? INT64_MAX : (sqlite3_int64)max);
	while (rc == 0 && (s = sqlite3_step(q)) == SQLITE_ROW) {
		json_t *k =
		    json_pack("{s:s,s:s}", "namespace", (const char *)sqlite3_column_text(q, 0),
			      "name", (const char *)sqlite3_column_text(q, 1));
		rc = k && json_array_append_new(out, k) == 0 ? 0 : -ENOMEM;
	}
	if (rc == 0 && s != SQLITE_DONE)
		rc = -EIO;
	*ret_steps = (uint64_t)sqlite3_stmt_status(q, SQLITE_STMTSTATUS_VM_STEP, 0);
	sqlite3_finalize(q);
	return rc;
}

int pk_store_expired_events(struct pk_store *st, int64_t before_s, size_t max, json_t **ret)
{
	json_t *out = json_array();
	uint64_t steps = 0;
	int rc;

	if (!out)
		return -ENOMEM;
	struct store_reader *r = pk_store_reader_take(st);
	rc = expired_read(r, before_s, max, out, &steps);
	pk_store_reader_give(st, r);
	atomic_fetch_add(&st->read_queries, 1);
	atomic_fetch_add(&st->read_steps, steps);
	if (rc < 0) {
		json_decref(out);
		return rc;
	}
	*ret = out;
	return 0;
}

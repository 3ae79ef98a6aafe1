/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.c — the SQLite database, the resourceVersion counter and the event ring.
 *
 * One table holds every object as JSON text keyed by (kind, namespace, name),
 * with a checksum per row (integrity.c); a second holds the resourceVersion
 * counter.  Writes go through a small
 * transaction object (txn_*): BEGIN IMMEDIATE, rows, counter, COMMIT with
 * synchronous=FULL in WAL mode; only after COMMIT returns are the events put
 * into the ring and waiters woken, so nobody sees an unacknowledged write.
 * Concurrent writers share one commit (group commit, see pk_store_writer_enter()).
 * The write rules themselves (defaulting, validation, finalizers) live in
 * registry.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/lib/macro.h"
#include "kernel/store/store-internal.h"

const char *pk_store_ns_key(const struct pk_type *t, const char *ns)
{
	if (!t->namespaced)
		return "";
	return ns && *ns ? ns : "default";
}

const char *pk_store_meta_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

uint64_t pk_store_obj_rv(const json_t *obj)
{
	const char *s = pk_store_meta_str(obj, "resourceVersion");
	return s ? strtoull(s, NULL, 10) : 0;
}

/* ---- database ------------------------------------------------------------ */
/*
 * SQLite's page cache, per connection (the writer and PK_STORE_READERS
 * readers): bounded, so the
 * process's memory grows with the objects the appliance keeps, not with the
 * database file.  Rows are read by primary key; the OS page cache holds the
 * rest.
 */
#define PK_STORE_CACHE_KIB 2048
#define PK_STORE_STR(x) #x
#define PK_STORE_XSTR(x) PK_STORE_STR(x)
#define PK_STORE_CACHE_PRAGMA                                                                      \
	"PRAGMA cache_size=-" PK_STORE_XSTR(PK_STORE_CACHE_KIB) ";PRAGMA mmap_size=0;"             \
								"PRAGMA cache_spill=1;"
static const char SCHEMA[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    /* a row INSERT OR REPLACE replaces fires the owner index's delete trigger (gc.c) */
    "PRAGMA recursive_triggers=ON;" PK_STORE_CACHE_PRAGMA
    "CREATE TABLE IF NOT EXISTS objects(kind TEXT NOT NULL, ns TEXT NOT NULL,"
    " name TEXT NOT NULL, rv INTEGER NOT NULL, body TEXT NOT NULL, sum INTEGER,"
    " PRIMARY KEY(kind, ns, name)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS objects_by_ns ON objects(ns);"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('rv', 0);";

static int prepare(struct pk_store *st, const char *sql, sqlite3_stmt **ret)
{
	return sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, ret, NULL) ==
		       SQLITE_OK
		   ? 0
		   : -EIO;
}

static int db_setup(struct pk_store *st, const char *path, char *err, size_t errlen)
{
	char *msg = NULL;
	/* a newer file is refused before anything is written to it */
	if (pk_store_schema_check(st->db, path, NULL, err, errlen) < 0)
		return -EPROTONOSUPPORT;
	if (sqlite3_exec(st->db, SCHEMA, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "database schema: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -EIO;
	}
	sqlite3_busy_timeout(st->db, 5000);
	int rc = pk_store_schema_migrate(st->db, path, NULL, err, errlen);
	if (rc < 0)
		return rc;
	if (prepare(st, "SELECT body, rv, sum FROM objects WHERE kind=?1 AND ns=?2 AND name=?3",
		    &st->st_get) < 0 ||
	    prepare(st,
		    "INSERT OR REPLACE INTO objects(kind,ns,name,rv,body,sum)"
		    " VALUES(?1,?2,?3,?4,?5,?6)",
		    &st->st_put) < 0 ||
	    prepare(st,
		    "UPDATE objects SET rv=?4, body=?5, sum=?6 WHERE kind=?1 AND ns=?2 AND name=?3",
		    &st->st_update) < 0 ||
	    prepare(st, "DELETE FROM objects WHERE kind=?1 AND ns=?2 AND name=?3", &st->st_del) <
		0 ||
	    prepare(st, "UPDATE meta SET value=?1 WHERE key='rv'", &st->st_setrv) < 0 ||
	    prepare(st, "SAVEPOINT w", &st->st_savepoint) < 0 ||
	    prepare(st, "RELEASE w", &st->st_release) < 0 ||
	    prepare(st, "ROLLBACK TO w", &st->st_rollback_to) < 0 ||
	    prepare(st,
		    "SELECT 1 FROM objects WHERE kind IN ('PodGroup','CompositePodGroup') AND ns=?1"
		    " AND json_extract(body,'$.spec.parentCompositePodGroupName')=?2 LIMIT 1",
		    &st->st_children) < 0 ||
	    prepare(st,
		    "SELECT body, rv, sum, name FROM objects WHERE kind='PriorityClass'"
		    " AND json_extract(body,'$.globalDefault')=1 ORDER BY name LIMIT 1",
		    &st->st_default_pc) < 0) {
		snprintf(err, errlen, "database statements: %s", sqlite3_errmsg(st->db));
		return -EIO;
	}
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE key='rv'", -1, &q, NULL) !=
	    SQLITE_OK)
		return -EIO;
	if (sqlite3_step(q) == SQLITE_ROW)
		st->rv = (uint64_t)sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	st->rv_pending = st->rv;
	st->ring_floor = st->ring_kept_floor = st->rv;
	return 0;
}

static int reader_prepare(struct store_reader *r, const char *sql, sqlite3_stmt **ret)
{
	return sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, ret, NULL) == SQLITE_OK
		   ? 0
		   : -EIO;
}

static int open_reader(struct store_reader *r, const char *path, char *err, size_t errlen)
{
	if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		SQLITE_OK ||
	    pk_store_sql_functions(r->db) < 0 ||
	    sqlite3_exec(r->db, "PRAGMA query_only=1;" PK_STORE_CACHE_PRAGMA, NULL, NULL, NULL) !=
		SQLITE_OK ||
	    reader_prepare(r,
			   "SELECT body, rv, sum FROM objects WHERE kind=?1 AND ns=?2 AND name=?3",
			   &r->st_get) < 0 ||
	    reader_prepare(r, "BEGIN", &r->st_begin) < 0 ||
	    reader_prepare(r, "SELECT value FROM meta WHERE key='rv'", &r->st_counter) < 0 ||
	    reader_prepare(r, "COMMIT", &r->st_commit) < 0) {
		snprintf(err, errlen, "%s: read connection: %s", path,
			 r->db ? sqlite3_errmsg(r->db) : "cannot open");
		return -EIO;
	}
	sqlite3_busy_timeout(r->db, 5000);
	return 0;
}

static int open_readers(struct pk_store *st, const char *path, char *err, size_t errlen)
{
	for (size_t i = 0; i < PK_STORE_READERS; i++) {
		int rc = open_reader(&st->readers[i], path, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void close_reader(struct store_reader *r)
{
	sqlite3_finalize(r->st_get);
	sqlite3_finalize(r->st_owned);
	sqlite3_finalize(r->st_begin);
	sqlite3_finalize(r->st_counter);
	sqlite3_finalize(r->st_commit);
	for (size_t i = 0; i < ELEMENTSOF(r->st_list); i++)
		sqlite3_finalize(r->st_list[i]);
	sqlite3_close(r->db);
}

/* A free read connection, waiting while all are in use; give it back with pk_store_reader_give. */
struct store_reader *pk_store_reader_take(struct pk_store *st)
{
	struct store_reader *r = NULL;

	pthread_mutex_lock(&st->rlock);
	for (;;) {
		for (size_t i = 0; !r && i < PK_STORE_READERS; i++)
			if (!st->readers[i].busy)
				r = &st->readers[i];
		if (r)
			break;
		pthread_cond_wait(&st->rfree, &st->rlock);
	}
	r->busy = true;
	pthread_mutex_unlock(&st->rlock);
	return r;
}

void pk_store_reader_give(struct pk_store *st, struct store_reader *r)
{
	pthread_mutex_lock(&st->rlock);
	r->busy = false;
	pthread_cond_signal(&st->rfree);
	pthread_mutex_unlock(&st->rlock);
}

/* Namespaces with content but no Namespace object (stores from before NamespaceLifecycle). */
static json_t *content_namespaces(struct pk_store *st)
{
	json_t *names =
	    json_pack("[s,s,s,s]", "default", "kube-system", "kube-public", "kube-node-lease");
	sqlite3_stmt *q;

	if (sqlite3_prepare_v2(st->db, "SELECT DISTINCT ns FROM objects WHERE ns != ''", -1, &q,
			       NULL) != SQLITE_OK)
		return names;
	while (sqlite3_step(q) == SQLITE_ROW)
		json_array_append_new(names, json_string((const char *)sqlite3_column_text(q, 0)));
	sqlite3_finalize(q);
	return names;
}

/* The four namespaces kube-apiserver starts with, and every namespace in use. */
static int seed_namespaces(struct pk_store *st)
{
	json_t *all = content_namespaces(st);
	size_t n = json_array_size(all);
	const char *names[n ? n : 1];

	for (size_t i = 0; i < n; i++)
		names[i] = json_string_value(json_array_get(all, i));
	for (size_t i = 0; i < n; i++) {
		json_t *old = NULL;
		if (pk_store_get(st, &pk_type_namespace, NULL, names[i], &old) == 0) {
			json_decref(old);
			continue;
		}
		json_t *ns =
		    json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
			      "metadata", "name", names[i], "status", "phase", "Active");
		int rc = pk_store_create(st, ns, NULL, NULL);
		json_decref(ns);
		if (rc < 0 && rc != -EEXIST && rc != -EINVAL) {
			json_decref(all);
			return rc;
		}
	}
	json_decref(all);
	return 0;
}

int pk_store_open_opts(const char *dir, const struct pk_store_open_opts *opts,
		       struct pk_store **ret, char *err, size_t errlen)
{
	char path[4096];
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(e));
		return -e;
	}
	if (snprintf(path, sizeof(path), "%s/podkernel.db", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	struct pk_store *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ring = calloc(PK_STORE_RING_SIZE, sizeof(*st->ring));
	st->ring_cap = PK_STORE_RING_SIZE;
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->rlock, NULL);
	pthread_mutex_init(&st->ring_lock, NULL);
	pthread_cond_init(&st->rfree, NULL);
	pthread_mutex_init(&st->dlock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->changed, &ca);
	pthread_cond_init(&st->batch_cond, NULL);
	pthread_condattr_destroy(&ca);
	st->lock_fd = -1;
	int rc = -ENOMEM;
	if (!st->ring)
		goto fail;
	rc = pk_store_lock_dir(dir, PK_STORE_LOCK_WAIT_MS, &st->lock_fd, err, errlen);
	if (rc < 0)
		goto fail;
	if (sqlite3_open_v2(path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK ||
	    pk_store_sql_functions(st->db) < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 st->db ? sqlite3_errmsg(st->db) : "cannot open");
		rc = -EIO;
		goto fail;
	}
	if (opts) {
		pk_store_set_damage_log(st, opts->damage_log, opts->damage_log_arg);
		st->admission = opts->admission;
		st->nadmission = opts->admission ? opts->nadmission : 0;
		st->creation_clock = opts->creation_clock;
		st->creation_clock_arg = opts->creation_clock_arg;
	}
	rc = db_setup(st, path, err, errlen);
	if (rc == 0)
		rc = pk_store_verify_open(st, opts && opts->allow_damaged, err, errlen);
	if (rc == 0)
		rc = open_readers(st, path, err, errlen);
	if (rc < 0)
		goto fail;
	rc = seed_namespaces(st);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(-rc));
		goto fail;
	}
	*ret = st;
	return 0;
fail:
	pk_store_close(st);
	return rc;
}

void pk_store_shutdown(struct pk_store *st)
{
	if (!st)
		return;
	pthread_mutex_lock(&st->ring_lock);
	st->closing = true;
	pthread_cond_broadcast(&st->changed);
	pthread_mutex_unlock(&st->ring_lock);
}

void pk_store_close(struct pk_store *st)
{
	if (!st)
		return;
	pk_store_shutdown(st);
	sqlite3_finalize(st->st_get);
	sqlite3_finalize(st->st_put);
	sqlite3_finalize(st->st_update);
	sqlite3_finalize(st->st_del);
	sqlite3_finalize(st->st_setrv);
	sqlite3_finalize(st->st_savepoint);
	sqlite3_finalize(st->st_release);
	sqlite3_finalize(st->st_rollback_to);
	sqlite3_finalize(st->st_children);
	sqlite3_finalize(st->st_default_pc);
	sqlite3_close(st->db);
	for (size_t i = 0; i < PK_STORE_READERS; i++)
		close_reader(&st->readers[i]);
	for (size_t i = 0; st->ring && i < st->ring_cap; i++) {
		json_decref(st->ring[i].object);
		json_decref(st->ring[i].text);
	}
	free(st->ring);
	pthread_cond_destroy(&st->changed);
	pthread_cond_destroy(&st->batch_cond);
	free(st->batch_ev);
	free(st->stakes);
	pk_store_cache_free(st);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	pthread_mutex_destroy(&st->lock);
	pthread_mutex_destroy(&st->rlock);
	pthread_mutex_destroy(&st->ring_lock);
	pthread_cond_destroy(&st->rfree);
	pthread_mutex_destroy(&st->dlock);
	free(st);
}

uint64_t pk_store_rv(struct pk_store *st)
{
	pthread_mutex_lock(&st->ring_lock);
	uint64_t rv = st->rv;
	pthread_mutex_unlock(&st->ring_lock);
	return rv;
}

void pk_store_get_stats(struct pk_store *st, struct pk_store_stats *ret)
{
	struct pk_store_stats s = {0};
	pthread_mutex_lock(&st->lock);
	pk_store_wait_batch_closed(st);
	s.writes = st->writes;
	s.cache_hits = st->cache.hits;
	s.lock_seconds = (double)st->lock_ns / 1e9;
	s.commit_seconds = (double)st->commit_ns / 1e9;
	s.commit_writers = st->commit_writers;
	pthread_mutex_lock(&st->ring_lock);
	s.ring_floor = st->ring_floor;
	s.ring_events = st->ring_pub;
	s.ring_bytes = st->ring_bytes;
	s.held_events = st->ring_len - st->ring_pub;
	s.held_bytes = st->ring_held_bytes;
	s.holds_dropped = st->holds_dropped;
	pthread_mutex_unlock(&st->ring_lock);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM objects", -1, &q, NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			s.objects = (uint64_t)sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	pthread_mutex_unlock(&st->lock);
	s.read_queries = atomic_load(&st->read_queries);
	s.read_steps = atomic_load(&st->read_steps);
	s.read_parsed = atomic_load(&st->read_parsed);
	*ret = s;
}

static int check_rows(struct pk_store *st, char *err, size_t errlen)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db, "SELECT kind, ns, name, rv, body, sum FROM objects", -1, &q,
			       NULL) != SQLITE_OK)
		return -EIO;
	int rc = 0;
	while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
		char why[200];
		const char *kind = (const char *)sqlite3_column_text(q, 0);
		if (pk_row_verify(
			kind, (const char *)sqlite3_column_text(q, 1),
			(const char *)sqlite3_column_text(q, 2), sqlite3_column_int64(q, 3),
			(const char *)sqlite3_column_text(q, 4), (size_t)sqlite3_column_bytes(q, 4),
			true, (uint64_t)sqlite3_column_int64(q, 5), st->rv, why, sizeof(why)) < 0 ||
		    !pk_type_by_kind(kind)) {
			snprintf(err, errlen, "%s %s/%s: %s", kind, sqlite3_column_text(q, 1),
				 sqlite3_column_text(q, 2),
				 pk_type_by_kind(kind) ? why : "unknown kind");
			rc = -EUCLEAN;
		}
	}
	sqlite3_finalize(q);
	return rc;
}

static int check_ring(struct pk_store *st, char *err, size_t errlen)
{
	uint64_t prev = st->ring_kept_floor;
	size_t oldest = (st->ring_head + st->ring_cap - st->ring_len) % st->ring_cap;
	if (st->ring_pub > st->ring_len || st->ring_pub > PK_STORE_RING_SIZE ||
	    (st->ring_len > st->ring_pub && !st->holding)) {
		snprintf(err, errlen, "ring: %zu events, %zu in the window, hold %d", st->ring_len,
			 st->ring_pub, st->holding);
		return -EUCLEAN;
	}
	for (size_t i = 0; i < st->ring_len; i++) {
		const struct ring_slot *s = &st->ring[(oldest + i) % st->ring_cap];
		if (i + 1 == st->ring_len - st->ring_pub && s->rv != st->ring_floor) {
			snprintf(err, errlen,
				 "ring: the window's floor %" PRIu64 " is not %" PRIu64,
				 st->ring_floor, s->rv);
			return -EUCLEAN;
		}
		if (s->rv <= prev || s->rv > st->rv || !s->object || !s->text) {
			snprintf(err, errlen,
				 "ring slot %zu: rv %" PRIu64 " after %" PRIu64 " (counter %" PRIu64
				 ")",
				 i, s->rv, prev, st->rv);
			return -EUCLEAN;
		}
		prev = s->rv;
	}
	return 0;
}

int pk_store_check(struct pk_store *st, char *err, size_t errlen)
{
	pthread_mutex_lock(&st->lock);
	pk_store_wait_batch_closed(st);
	int rc = check_rows(st, err, errlen);
	if (rc == 0) {
		pthread_mutex_lock(&st->ring_lock);
		rc = check_ring(st, err, errlen);
		pthread_mutex_unlock(&st->ring_lock);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* ---- rows ------------------------------------------------------------------ */
/* The row of (kind, ns, name) by q: 0, -ENOENT, or -EIO (damaged, or the database). */
static int row_get(struct pk_store *st, sqlite3_stmt *q, const char *kind, const char *ns,
		   const char *name, json_t **ret)
{
	int rc = -ENOENT, step;
	sqlite3_bind_text(q, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, name, -1, SQLITE_STATIC);
	step = sqlite3_step(q);
	if (step == SQLITE_ROW)
		rc = pk_store_row_load(st, q, 0, kind, ns, name, ret);
	else if (step != SQLITE_DONE)
		rc = -EIO;
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc;
}

json_t *pk_store_db_get(struct pk_store *st, const char *kind, const char *ns, const char *name)
{
	json_t *obj = NULL;
	return row_get(st, st->st_get, kind, ns, name, &obj) == 0 ? obj : NULL;
}

bool pk_store_db_has_children(struct pk_store *st, const char *ns, const char *name)
{
	sqlite3_stmt *q = st->st_children;
	sqlite3_bind_text(q, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
	bool found = sqlite3_step(q) == SQLITE_ROW;
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return found;
}

bool pk_store_db_namespace_empty(struct pk_store *st, const char *ns)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM objects WHERE ns=?1 LIMIT 1", -1, &q, NULL) !=
	    SQLITE_OK)
		return false;
	sqlite3_bind_text(q, 1, ns, -1, SQLITE_STATIC);
	bool empty = sqlite3_step(q) == SQLITE_DONE;
	sqlite3_finalize(q);
	return empty;
}

json_t *pk_store_db_names(struct pk_store *st, const char *kind, const char *ns)
{
	sqlite3_stmt *q;
	json_t *names = json_array();
	if (sqlite3_prepare_v2(st->db, "SELECT name FROM objects WHERE kind=?1 AND ns=?2", -1, &q,
			       NULL) != SQLITE_OK)
		return names;
	sqlite3_bind_text(q, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, ns, -1, SQLITE_STATIC);
	while (sqlite3_step(q) == SQLITE_ROW)
		json_array_append_new(names, json_string((const char *)sqlite3_column_text(q, 0)));
	sqlite3_finalize(q);
	return names;
}

json_t *pk_store_db_default_priority_class(struct pk_store *st)
{
	sqlite3_stmt *q = st->st_default_pc;
	json_t *obj = NULL;
	if (sqlite3_step(q) == SQLITE_ROW &&
	    pk_store_row_load(st, q, 0, "PriorityClass", "",
			      (const char *)sqlite3_column_text(q, 3), &obj) < 0)
		obj = NULL;
	sqlite3_reset(q);
	return obj;
}

static int exec(struct pk_store *st, const char *sql)
{
	return sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* The ring's i-th oldest slot. */
static struct ring_slot *ring_at(struct pk_store *st, size_t i)
{
	size_t oldest = (st->ring_head + st->ring_cap - st->ring_len) % st->ring_cap;
	return &st->ring[(oldest + i) % st->ring_cap];
}

/* The ring's events, oldest first, into cap slots (cap >= ring_len). */
static int ring_resize(struct pk_store *st, size_t cap)
{
	struct ring_slot *r = calloc(cap, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < st->ring_len; i++)
		r[i] = *ring_at(st, i);
	free(st->ring);
	st->ring = r;
	st->ring_cap = cap;
	st->ring_head = st->ring_len % cap;
	return 0;
}

/* Drop the oldest event from memory; from the window too when it is in it. */
static void ring_drop_oldest(struct pk_store *st)
{
	struct ring_slot *slot = ring_at(st, 0);
	size_t bytes = json_string_length(slot->text);
	st->ring_kept_floor = slot->rv;
	if (st->ring_len == st->ring_pub) {
		st->ring_floor = slot->rv;
		st->ring_bytes -= bytes;
		st->ring_pub--;
	} else {
		st->ring_held_bytes -= bytes;
	}
	json_decref(slot->object);
	json_decref(slot->text);
	slot->object = slot->text = NULL;
	st->ring_len--;
}

/* The window's oldest event leaves it: watchers older than it get 410 Gone. */
static void ring_retire(struct pk_store *st)
{
	struct ring_slot *slot = ring_at(st, st->ring_len - st->ring_pub);
	size_t bytes = json_string_length(slot->text);
	st->ring_floor = slot->rv;
	st->ring_bytes -= bytes;
	st->ring_held_bytes += bytes;
	st->ring_pub--;
}

/* Drop the events past the window that the hold does not keep: all of them
 * once it is more than PK_STORE_HOLD_BYTES behind (or none is set). */
static void ring_trim(struct pk_store *st)
{
	if (st->holding && st->ring_held_bytes > PK_STORE_HOLD_BYTES) {
		st->holding = false;
		st->holds_dropped++;
	}
	while (st->ring_len > st->ring_pub && (!st->holding || ring_at(st, 0)->rv <= st->hold))
		ring_drop_oldest(st);
	/* the slots a burst took go back once the hold caught up (a failure keeps them) */
	if (st->ring_cap > PK_STORE_RING_SIZE && st->ring_len <= PK_STORE_RING_SIZE / 2)
		(void)ring_resize(st, PK_STORE_RING_SIZE);
}

/* The window is bounded by count and by bytes (PK_STORE_RING_BYTES of JSON);
 * the events the hold keeps past it by PK_STORE_HOLD_BYTES. */
/* A prepared statement without results (savepoints: one per writer, so a
 * batch of many edits does not parse the same SQL again and again). */
static int step(sqlite3_stmt *q)
{
	int rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -EIO;

	sqlite3_reset(q);
	return rc;
}

static void ring_push(struct pk_store *st, struct ring_slot *ev)
{
	/* full, and the oldest is kept for the hold: more slots */
	if (st->ring_len == st->ring_cap && st->holding && ring_at(st, 0)->rv > st->hold &&
	    ring_resize(st, st->ring_cap * 2) < 0) {
		st->holding = false; /* no memory to keep more */
		st->holds_dropped++;
		ring_trim(st);
	}
	if (st->ring_len == st->ring_cap)
		ring_drop_oldest(st);
	size_t bytes = json_string_length(ev->text);
	st->ring[st->ring_head] = *ev;
	st->ring_len++;
	st->ring_pub++;
	st->ring_bytes += bytes;
	ev->object = NULL;
	ev->text = NULL;
	st->ring_head = (st->ring_head + 1) % st->ring_cap;
	while (st->ring_pub > PK_STORE_RING_SIZE ||
	       (st->ring_pub > 1 && st->ring_bytes > PK_STORE_RING_BYTES))
		ring_retire(st);
	ring_trim(st);
}

/*
 * Group commit.  Writers take the lock in turn; the first opens a batch
 * (BEGIN IMMEDIATE) and each writes its rows inside its own SAVEPOINT, so a
 * failing writer undoes only its part.  A writer that leaves while others
 * wait for the lock keeps the batch open and sleeps; the last one commits it
 * (one fsync for all of them), publishes the events and wakes them with the
 * result.  Nobody is acknowledged before the commit.
 */
#define BATCH_MAX_WRITERS 64

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pk_store_writer_enter(struct pk_store *st)
{
	atomic_fetch_add(&st->writers_waiting, 1);
	pthread_mutex_lock(&st->lock);
	atomic_fetch_sub(&st->writers_waiting, 1);
	st->lock_since_ns = mono_ns();
}

static void batch_commit(struct pk_store *st)
{
	int rc = 0;
	if (st->batch_nev > 0) {
		int64_t t0 = mono_ns();

		sqlite3_bind_int64(st->st_setrv, 1, (sqlite3_int64)st->rv_pending);
		rc = sqlite3_step(st->st_setrv) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st->st_setrv);
		if (rc == 0)
			rc = exec(st, "COMMIT");
		st->commit_ns += (uint64_t)(mono_ns() - t0);
		if (rc == 0)
			st->commit_writers += st->nstakes;
	} else {
		exec(st, "ROLLBACK");
	}
	/* /readyz reports the store unready from a failed commit to the next good one. */
	if (rc < 0 || st->batch_nev > 0)
		atomic_store(&st->write_failed, rc < 0);
	if (rc < 0) {
		exec(st, "ROLLBACK");
		st->rv_pending = st->rv;
		for (size_t i = 0; i < st->batch_nev; i++) {
			json_decref(st->batch_ev[i].object);
			json_decref(st->batch_ev[i].text);
		}
	} else if (st->batch_nev > 0) {
		/* Published after the commit's fsync, under the ring's own lock:
		 * watches and waiters never wait for a commit. */
		pthread_mutex_lock(&st->ring_lock);
		st->rv = st->rv_pending;
		st->writes++;
		pk_store_cache_publish(st, st->batch_ev, st->batch_nev);
		for (size_t i = 0; i < st->batch_nev; i++)
			ring_push(st, &st->batch_ev[i]);
		pthread_cond_broadcast(&st->changed);
		pthread_mutex_unlock(&st->ring_lock);
	}
	st->batch_nev = 0;
	st->batch_open = false;
	pk_store_cache_batch_end(st);
	for (size_t i = 0; i < st->nstakes; i++) {
		st->stakes[i]->rc = rc;
		st->stakes[i]->done = true;
	}
	st->nstakes = 0;
	pthread_cond_broadcast(&st->batch_cond);
}

int pk_store_writer_leave_many(struct pk_store *st, struct txn *txs, size_t n)
{
	/* Commit when nobody else is about to join, or the batch is big enough
	 * that its first writers should not wait any longer. */
	if (st->batch_open &&
	    (atomic_load(&st->writers_waiting) == 0 || st->nstakes >= BATCH_MAX_WRITERS))
		batch_commit(st);
	st->lock_ns += (uint64_t)(mono_ns() - st->lock_since_ns);
	int rc = 0;
	for (size_t i = 0; txs && i < n; i++) {
		if (!txs[i].staked)
			continue;
		while (!txs[i].done)
			pthread_cond_wait(&st->batch_cond, &st->lock);
		if (txs[i].rc < 0)
			rc = txs[i].rc;
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int pk_store_writer_leave(struct pk_store *st, struct txn *tx)
{
	return pk_store_writer_leave_many(st, tx, tx ? 1 : 0);
}

void pk_store_wait_batch_closed(struct pk_store *st)
{
	while (st->batch_open)
		pthread_cond_wait(&st->batch_cond, &st->lock);
}

int pk_store_txn_begin(struct pk_store *st, struct txn *tx)
{
	tx->nev = 0;
	tx->staked = tx->done = false;
	tx->rc = 0;
	if (!st->batch_open) {
		if (exec(st, "BEGIN IMMEDIATE") < 0)
			return -EIO;
		st->batch_open = true;
		st->rv_pending = st->rv;
	}
	tx->rv_start = st->rv_pending;
	tx->savepoint = step(st->st_savepoint) == 0;
	return tx->savepoint ? 0 : -EIO;
}

/* text: the object's compact JSON (taken; NULL: serialise here). */
static int txn_add_event(struct txn *tx, enum pk_event_type type, uint64_t rv, json_t *obj,
			 char *text)
{
	if (!text)
		text = pk_json_compact(obj, NULL);
	json_t *str = text ? json_string_nocheck(text) : NULL;
	free(text);
	if (!str)
		return -ENOMEM;
	if (tx->nev >= TXN_MAX_EVENTS) {
		json_decref(str);
		return -E2BIG;
	}
	if (tx->nev == tx->cap) {
		size_t cap = tx->cap ? tx->cap * 2 : 4;
		struct ring_slot *ev = realloc(tx->ev, cap * sizeof(*ev));
		if (!ev) {
			json_decref(str);
			return -ENOMEM;
		}
		tx->ev = ev;
		tx->cap = cap;
	}
	/* The ring keeps its own copy: callers own (and may change) what they
	 * get back, unless they promised not to (tx->share). */
	json_t *copy = tx->share ? json_incref(obj) : json_deep_copy(obj);
	if (!copy) {
		json_decref(str);
		return -ENOMEM;
	}
	tx->ev[tx->nev++] = (struct ring_slot){type, rv, copy, str};
	return 0;
}

static void stamp_rv(json_t *obj, uint64_t rv)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, rv);
	json_t *meta = json_object_get(obj, "metadata");
	json_object_set_new(meta, "resourceVersion", json_string(buf));
}

/* Put metadata.resourceVersion back to prev (taken; NULL: none). */
static void restore_rv(json_t *obj, json_t *prev)
{
	json_t *meta = json_object_get(obj, "metadata");
	if (prev)
		json_object_set_new(meta, "resourceVersion", prev);
	else
		json_object_del(meta, "resourceVersion");
}

/*
 * Write a row: an object that was there (MODIFIED) is updated in place, so
 * the primary key and the namespace index stay as they are; a new one (or a
 * MODIFIED one that is somehow missing) is inserted.
 */
static int row_put(struct pk_store *st, const struct pk_type *t, const json_t *obj, uint64_t rv,
		   const char *body, enum pk_event_type type)
{
	sqlite3_stmt *q = type == PK_EVENT_MODIFIED ? st->st_update : st->st_put;
	const char *ns = pk_store_ns_key(t, pk_store_meta_str(obj, "namespace"));
	const char *name = pk_store_meta_str(obj, "name");
	uint64_t sum = pk_row_sum(t->kind, ns, name ? name : "", (int64_t)rv, body, strlen(body));
	int rc;

	for (;;) {
		sqlite3_bind_text(q, 1, t->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, ns, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 3, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(q, 4, (sqlite3_int64)rv);
		sqlite3_bind_text(q, 5, body, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 6, (sqlite3_int64)sum);
		rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(q);
		sqlite3_clear_bindings(q);
		if (rc < 0 || q == st->st_put || sqlite3_changes(st->db) > 0)
			return rc;
		q = st->st_put;
	}
}

int pk_store_txn_put(struct pk_store *st, struct txn *tx, json_t *obj, enum pk_event_type type)
{
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));
	if (!t)
		return -EINVAL;
	uint64_t rv = st->rv_pending + 1;
	json_t *prev_rv =
	    json_incref(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	pk_store_cache_forget(st, t, obj);
	stamp_rv(obj, rv);
	char *body = pk_json_compact(obj, NULL);
	if (!body || strlen(body) > PK_STORE_OBJECT_MAX) {
		restore_rv(obj, prev_rv);
		free(body);
		return body ? -E2BIG : -ENOMEM;
	}
	/* A dry run writes (to see every rule apply) but rolls back: the caller
	 * gets the object as it would be stored, under its current version. */
	if (tx->dry_run)
		restore_rv(obj, json_incref(prev_rv));
	json_decref(prev_rv);
	int rc = row_put(st, t, obj, rv, body, type);
	if (rc == 0)
		rc = txn_add_event(tx, type, rv, obj, body);
	else
		free(body);
	if (rc == 0)
		st->rv_pending = rv;
	return rc;
}

int pk_store_txn_remove(struct pk_store *st, struct txn *tx, json_t *obj)
{
	const struct pk_type *t = pk_type_by_kind(json_string_value(json_object_get(obj, "kind")));
	if (!t)
		return -EINVAL;
	uint64_t rv = st->rv_pending + 1;
	json_t *prev_rv =
	    tx->dry_run
		? json_incref(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"))
		: NULL;
	pk_store_cache_forget(st, t, obj);
	stamp_rv(obj, rv);
	sqlite3_stmt *q = st->st_del;
	sqlite3_bind_text(q, 1, t->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, pk_store_ns_key(t, pk_store_meta_str(obj, "namespace")), -1,
			  SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 3, pk_store_meta_str(obj, "name"), -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -EIO;
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	if (rc == 0)
		rc = txn_add_event(tx, PK_EVENT_DELETED, rv, obj, NULL);
	if (tx->dry_run)
		restore_rv(obj, prev_rv);
	if (rc == 0)
		st->rv_pending = rv;
	return rc;
}

static void ring_slots_free(struct ring_slot *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_decref(ev[i].object);
		json_decref(ev[i].text);
	}
}

void pk_store_txn_release(struct txn *tx)
{
	free(tx->ev);
	tx->ev = NULL;
	tx->nev = tx->cap = 0;
}

int pk_store_txn_commit(struct pk_store *st, struct txn *tx)
{
	if (tx->nev == 0 || tx->dry_run) {
		pk_store_txn_abort(st, tx);
		return 0;
	}
	if (st->batch_nev + tx->nev > st->batch_cap || st->nstakes == st->stakes_cap) {
		size_t cap = (st->batch_nev + tx->nev) * 2 + 16;
		struct ring_slot *ev = realloc(st->batch_ev, cap * sizeof(*ev));
		if (ev) {
			st->batch_ev = ev;
			st->batch_cap = cap;
		}
		struct txn **sk = realloc(st->stakes, (st->nstakes * 2 + 16) * sizeof(*sk));
		if (sk) {
			st->stakes = sk;
			st->stakes_cap = st->nstakes * 2 + 16;
		}
		if (!ev || !sk) {
			pk_store_txn_abort(st, tx);
			return -ENOMEM;
		}
	}
	if (step(st->st_release) < 0) {
		pk_store_txn_abort(st, tx);
		return -EIO;
	}
	memcpy(st->batch_ev + st->batch_nev, tx->ev, tx->nev * sizeof(*tx->ev));
	st->batch_nev += tx->nev;
	tx->nev = 0;
	pk_store_txn_release(tx);
	st->stakes[st->nstakes++] = tx;
	tx->staked = true;
	return 0;
}

void pk_store_txn_abort(struct pk_store *st, struct txn *tx)
{
	if (tx->savepoint) {
		step(st->st_rollback_to);
		step(st->st_release);
		tx->savepoint = false;
	}
	ring_slots_free(tx->ev, tx->nev);
	tx->nev = 0;
	pk_store_txn_release(tx);
	if (st->batch_open)
		st->rv_pending = tx->rv_start;
}

bool pk_store_writable(struct pk_store *st)
{
	return !atomic_load(&st->write_failed);
}

/* ---- reads -------------------------------------------------------------- */
int pk_store_get(struct pk_store *st, const struct pk_type *t, const char *ns, const char *name,
		 json_t **ret)
{
	t = pk_type_stored(t);
	if (!t || !name)
		return -EINVAL;
	json_t *obj = NULL;
	struct store_reader *r = pk_store_reader_take(st);
	int rc = row_get(st, r->st_get, t->kind, pk_store_ns_key(t, ns), name, ret ? &obj : NULL);
	atomic_fetch_add(&st->read_queries, 1);
	atomic_fetch_add(&st->read_steps,
			 (uint64_t)sqlite3_stmt_status(r->st_get, SQLITE_STMTSTATUS_VM_STEP, 1));
	pk_store_reader_give(st, r);
	if (rc == 0 && ret)
		*ret = obj;
	return rc;
}

static char *token_encode(const char *ns, const char *name)
{
	size_t n = strlen(ns) + 1 + strlen(name);
	char *out = malloc(2 * n + 1);
	if (!out)
		return NULL;
	char *p = out;
	for (const char *s = ns; *s; s++, p += 2)
		sprintf(p, "%02x", (unsigned char)*s);
	p += sprintf(p, "2f");
	for (const char *s = name; *s; s++, p += 2)
		sprintf(p, "%02x", (unsigned char)*s);
	*p = '\0';
	return out;
}

/* Token back into "ns" and "name" (malloc'ed, split at '/'). */
static int token_decode(const char *tok, char **ret_ns, char **ret_name)
{
	size_t n = strlen(tok);
	if (n == 0 || n % 2 || n > 2048)
		return -EINVAL;
	char *raw = malloc(n / 2 + 1);
	if (!raw)
		return -ENOMEM;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(tok + 2 * i, "%2x", &v) != 1 || !v) {
			free(raw);
			return -EINVAL;
		}
		raw[i] = (char)v;
	}
	raw[n / 2] = '\0';
	char *slash = strchr(raw, '/');
	if (!slash) {
		free(raw);
		return -EINVAL;
	}
	*slash = '\0';
	*ret_name = strdup(slash + 1);
	*ret_ns = raw;
	return *ret_name ? 0 : -ENOMEM;
}

/*
 * A page is a range scan of the primary key (kind, ns, name) from the
 * continue token: rows come in key order, so SQLite neither sorts nor reads
 * an object twice, and a page costs the rows it returns (plus those the
 * selectors skip).  The planner is told the index: with the namespace index
 * it would read a namespace's rows and sort them, bodies included, on every
 * page.  A page across namespaces that starts inside one is two scans (the
 * rest of that namespace, then the namespaces after it): a row-value
 * comparison would be re-checked on every row.  One prepared statement per
 * shape, kept for the reader connection's lifetime.
 */
enum list_shape { LIST_KIND, LIST_NS_AFTER, LIST_NS, LIST_NAME_AFTER, LIST_SHAPES };
static const char *const LIST_SQL[LIST_SHAPES] = {
    [LIST_KIND] =
	"SELECT ns, name, body, rv, sum FROM objects INDEXED BY sqlite_autoindex_objects_1"
	" WHERE kind=?1 ORDER BY kind, ns, name",
    [LIST_NS_AFTER] =
	"SELECT ns, name, body, rv, sum FROM objects INDEXED BY sqlite_autoindex_objects_1"
	" WHERE kind=?1 AND ns>?2 ORDER BY kind, ns, name",
    [LIST_NS] = "SELECT ns, name, body, rv, sum FROM objects INDEXED BY sqlite_autoindex_objects_1"
		" WHERE kind=?1 AND ns=?2 ORDER BY kind, ns, name",
    [LIST_NAME_AFTER] = "SELECT ns, name, body, rv, sum FROM objects INDEXED BY"
			" sqlite_autoindex_objects_1"
			" WHERE kind=?1 AND ns=?2 AND name>?3 ORDER BY kind, ns, name",
};

/* Count a finished read statement's work, then reset it. */
static void read_done(struct pk_store *st, sqlite3_stmt *q)
{
	atomic_fetch_add(&st->read_queries, 1);
	atomic_fetch_add(&st->read_steps,
			 (uint64_t)sqlite3_stmt_status(q, SQLITE_STMTSTATUS_VM_STEP, 1));
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
}

/* Is the page full once it holds n objects of bytes JSON? */
static bool page_full(const struct pk_store_list_opts *o, size_t n, size_t bytes)
{
	return (o->limit && n >= o->limit) || (o->limit_bytes && bytes >= o->limit_bytes);
}

struct list_page {
	struct store_reader *r; /* the connection the page is read on */
	const struct pk_type *t;
	const struct pk_store_list_opts *o;
	json_t *items;
	size_t bytes;
	char *cont; /* set when a matching object is left over */
};

/* One range scan of shape with its keys into the page; stops when the page is full. */
static int list_scan(struct pk_store *st, struct list_page *pg, enum list_shape shape,
		     const char *ns, const char *after_name)
{
	sqlite3_stmt *q = pg->r->st_list[shape];
	if (!q && sqlite3_prepare_v3(pg->r->db, LIST_SQL[shape], -1, SQLITE_PREPARE_PERSISTENT,
				     &pg->r->st_list[shape], NULL) != SQLITE_OK)
		return -EIO;
	q = pg->r->st_list[shape];
	sqlite3_bind_text(q, 1, pg->t->kind, -1, SQLITE_STATIC);
	if (ns)
		sqlite3_bind_text(q, 2, ns, -1, SQLITE_STATIC);
	if (after_name)
		sqlite3_bind_text(q, 3, after_name, -1, SQLITE_STATIC);
	int rc = 0, step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		size_t len = (size_t)sqlite3_column_bytes(q, 2);
		json_t *obj = NULL;
		/* a damaged row fails the list: never a list silently short of it; a
		 * row that cannot match the labels is checked and passed over unparsed */
		if (!pk_selector_may_match_text(pg->o->labels,
						(const char *)sqlite3_column_blob(q, 2), len)) {
			rc = pk_store_row_check(st, q, 2, pg->t->kind,
						(const char *)sqlite3_column_text(q, 0),
						(const char *)sqlite3_column_text(q, 1));
			if (rc < 0)
				break;
			continue;
		}
		rc = (pg->o->verified_at_open ? pk_store_row_load_opened : pk_store_row_load)(
		    st, q, 2, pg->t->kind, (const char *)sqlite3_column_text(q, 0),
		    (const char *)sqlite3_column_text(q, 1), &obj);
		if (rc < 0)
			break;
		if (!pk_selector_match_labels(pg->o->labels, obj) ||
		    !pk_selector_match_fields(pg->o->fields, obj)) {
			json_decref(obj);
			continue;
		}
		if (page_full(pg->o, json_array_size(pg->items), pg->bytes)) {
			json_decref(obj);
			json_t *last = json_array_get(pg->items, json_array_size(pg->items) - 1);
			pg->cont = token_encode(
			    pk_store_ns_key(pg->t, pk_store_meta_str(last, "namespace")),
			    pk_store_meta_str(last, "name"));
			rc = pg->cont ? 0 : -ENOMEM;
			break;
		}
		json_array_append_new(pg->items, obj);
		pg->bytes += len;
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		rc = -EIO;
	read_done(st, q);
	return rc;
}

static int list_page(struct pk_store *st, struct store_reader *r, const struct pk_type *t,
		     const char *ns, const struct pk_store_list_opts *o, const char *after_ns,
		     const char *after_name, json_t *items, char **ret_continue)
{
	struct list_page pg = {.r = r, .t = t, .o = o, .items = items};
	const char *key = ns ? pk_store_ns_key(t, ns) : NULL;
	int rc;
	int cmp = ns && after_ns ? strcmp(after_ns, key) : -1;
	if (ns && cmp > 0) /* a token past this namespace */
		rc = 0;
	else if (ns)
		rc = cmp == 0 ? list_scan(st, &pg, LIST_NAME_AFTER, key, after_name)
			      : list_scan(st, &pg, LIST_NS, key, NULL);
	else if (!after_ns)
		rc = list_scan(st, &pg, LIST_KIND, NULL, NULL);
	else {
		rc = list_scan(st, &pg, LIST_NAME_AFTER, after_ns, after_name);
		if (rc == 0 && !pg.cont)
			rc = list_scan(st, &pg, LIST_NS_AFTER, after_ns, NULL);
	}
	*ret_continue = pg.cont;
	return rc;
}

static int snapshot_begin(struct store_reader *r, uint64_t *ret_rv)
{
	int rc = sqlite3_step(r->st_begin) == SQLITE_DONE ? 0 : -EIO;
	sqlite3_reset(r->st_begin);
	if (rc < 0)
		return rc;
	rc = -EIO;
	if (sqlite3_step(r->st_counter) == SQLITE_ROW) {
		*ret_rv = (uint64_t)sqlite3_column_int64(r->st_counter, 0);
		rc = 0;
	}
	sqlite3_reset(r->st_counter);
	if (rc < 0)
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static void snapshot_end(struct store_reader *r)
{
	sqlite3_step(r->st_commit);
	sqlite3_reset(r->st_commit);
}

int pk_store_list(struct pk_store *st, const struct pk_type *t, const char *ns,
		  const struct pk_store_list_opts *opts, json_t **ret_items, uint64_t *ret_rv,
		  char **ret_continue)
{
	static const struct pk_store_list_opts none = {0};
	t = pk_type_stored(t);
	if (!t)
		return -EINVAL;
	const struct pk_store_list_opts *o = opts ? opts : &none;
	char *after_ns = NULL, *after_name = NULL, *cont = NULL;
	if (o->continue_token && *o->continue_token) {
		int rc = token_decode(o->continue_token, &after_ns, &after_name);
		if (rc < 0)
			return rc;
	}
	json_t *items = json_array();
	uint64_t rv = 0;
	/* One read transaction: the items and the version are the same snapshot. */
	struct store_reader *r = pk_store_reader_take(st);
	int rc = items ? snapshot_begin(r, &rv) : -ENOMEM;
	if (rc == 0) {
		rc = list_page(st, r, t, t->namespaced ? ns : NULL, o, after_ns, after_name, items,
			       &cont);
		snapshot_end(r);
	}
	pk_store_reader_give(st, r);
	free(after_ns);
	free(after_name);
	if (rc < 0) {
		json_decref(items);
		free(cont);
		return rc;
	}
	*ret_items = items;
	if (ret_rv)
		*ret_rv = rv;
	if (ret_continue)
		*ret_continue = cont;
	else
		free(cont);
	return 0;
}

/* ---- change stream -------------------------------------------------------- */
/* Position (from the oldest) of the first event newer than since.  The ring's
 * resourceVersions rise strictly (check_ring), so a binary search finds it:
 * a caller that is up to date costs a dozen comparisons, not a walk of the
 * ring.  Called under ring_lock. */
static size_t ring_first_after(struct pk_store *st, uint64_t since)
{
	size_t lo = 0, hi = st->ring_len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ring_at(st, mid)->rv <= since)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Copy (and reference) the events newer than since, at most max (0: all),
 * into a buffer the size of the answer, never of the ring. */
static int ring_copy_since(struct pk_store *st, uint64_t since, size_t max,
			   struct ring_slot **ret_copy, size_t *ret_n)
{
	size_t first = ring_first_after(st, since);
	size_t n = st->ring_len - first;
	if (max && max < n)
		n = max;
	*ret_copy = NULL;
	*ret_n = n;
	if (n == 0)
		return 0;
	struct ring_slot *copy = malloc(n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		copy[i] = *ring_at(st, first + i);
		json_incref(copy[i].object);
		json_incref(copy[i].text);
	}
	*ret_copy = copy;
	return 0;
}

/* Hand the copied events to cb, in order, until it says stop. */
static int deliver(struct ring_slot *copy, size_t n, uint64_t since, pk_store_event_cb cb,
		   void *arg, uint64_t *ret_last)
{
	int rc = 0;
	uint64_t last = since;
	for (size_t i = 0; i < n; i++) {
		if (rc == 0) {
			struct pk_store_event ev = {
			    .type = copy[i].type,
			    .rv = copy[i].rv,
			    .kind = pk_type_by_kind(
				json_string_value(json_object_get(copy[i].object, "kind"))),
			    .object = copy[i].object,
			    .object_json = json_string_value(copy[i].text),
			    .object_json_len = json_string_length(copy[i].text),
			};
			rc = cb(&ev, arg);
			last = copy[i].rv;
		}
		json_decref(copy[i].object);
		json_decref(copy[i].text);
	}
	free(copy);
	if (ret_last)
		*ret_last = last;
	return rc;
}

int pk_store_events_since(struct pk_store *st, uint64_t since, size_t max, pk_store_event_cb cb,
			  void *arg, uint64_t *ret_last)
{
	struct ring_slot *copy;
	size_t n;
	pthread_mutex_lock(&st->ring_lock);
	int rc =
	    since < st->ring_floor ? -PK_STORE_EGONE : ring_copy_since(st, since, max, &copy, &n);
	pthread_mutex_unlock(&st->ring_lock);
	return rc < 0 ? rc : deliver(copy, n, since, cb, arg, ret_last);
}

int pk_store_events_since_held(struct pk_store *st, uint64_t since, size_t max,
			       pk_store_event_cb cb, void *arg, uint64_t *ret_last)
{
	struct ring_slot *copy;
	size_t n;
	int rc = -PK_STORE_EGONE;
	pthread_mutex_lock(&st->ring_lock);
	if (since >= st->ring_kept_floor) {
		st->holding = true;
		st->hold = since;
		ring_trim(st);
		rc = ring_copy_since(st, since, max, &copy, &n);
	}
	pthread_mutex_unlock(&st->ring_lock);
	return rc < 0 ? rc : deliver(copy, n, since, cb, arg, ret_last);
}

void pk_store_hold_release(struct pk_store *st)
{
	if (!st)
		return;
	pthread_mutex_lock(&st->ring_lock);
	st->holding = false;
	ring_trim(st);
	pthread_mutex_unlock(&st->ring_lock);
}

int pk_store_wait(struct pk_store *st, uint64_t rv, int timeout_ms)
{
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	if (timeout_ms > 0) {
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	int rc = 0;
	pthread_mutex_lock(&st->ring_lock);
	while (st->rv <= rv && !st->closing) {
		if (timeout_ms == 0) {
			rc = -ETIMEDOUT;
			break;
		}
		if (timeout_ms < 0) {
			pthread_cond_wait(&st->changed, &st->ring_lock);
		} else if (pthread_cond_timedwait(&st->changed, &st->ring_lock, &deadline) ==
			   ETIMEDOUT) {
			rc = st->rv > rv ? 0 : -ETIMEDOUT;
			break;
		}
	}
	if (rc == 0 && st->rv <= rv && st->closing)
		rc = -ECANCELED;
	pthread_mutex_unlock(&st->ring_lock);
	return rc;
}

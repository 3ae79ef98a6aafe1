/* SPDX-License-Identifier: Apache-2.0 */
/* store-internal.h — what store.c (database, ring) shares with registry.c (write rules). */
#ifndef PODKERNEL_KERNEL_STORE_INTERNAL_H
#define PODKERNEL_KERNEL_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>

#include "kernel/lib/map.h"
#include "kernel/store/store.h"

struct ring_slot {
	enum pk_event_type type;
	uint64_t rv;
	json_t *object;
	json_t *text; /* the object as compact JSON (a json string), serialised once */
};

/*
 * Read connections: as many as reads that run at once.  Each is taken for one
 * get or one list page, so an event thread waits for a reader only while
 * PK_STORE_READERS other reads are running, never behind a queue of them.
 */
#define PK_STORE_READERS 4
struct store_reader {
	sqlite3 *db;
	sqlite3_stmt *st_get;
	sqlite3_stmt *st_list[4]; /* list pages: one per shape of range scan (store.c) */
	sqlite3_stmt *st_owned;	  /* PK_STORE_DEPENDENTS_SQL, prepared on first use */
	/* a list page's snapshot: BEGIN, the counter, COMMIT (parsed once, not per page) */
	sqlite3_stmt *st_begin, *st_counter, *st_commit;
	bool busy; /* under pk_store.rlock */
};

/*
 * The decoded objects last written (cache.c): key -> the tree its row
 * holds, the oldest put dropped past PK_STORE_CACHE_OBJECTS.
 */
#define PK_STORE_CACHE_OBJECTS PK_STORE_RING_SIZE
struct cache_order {
	char *key;
	uint64_t seq;
};
struct pk_store_cache {
	struct pk_map index;	   /* key -> struct cache_entry (cache.c) */
	struct cache_order *order; /* the puts, oldest first, from head */
	size_t head, len;
	uint64_t seq, hits;
	/* the default PriorityClass (pk_store_cache_default_pc) */
	json_t *pc;
	bool pc_known, pc_dirty;  /* pc looked up; a PriorityClass written in the open batch */
	uint64_t pc_gen, pc_seen; /* PriorityClass writes; pc_gen when pc was looked up */
};

struct pk_store {
	sqlite3 *db;
	int lock_fd;			      /* DIR/podkernel.lock, held while open (-1: none) */
	const struct pk_admission *admission; /* pk_store_open_opts: rules beyond validation */
	size_t nadmission;
	int64_t (*creation_clock)(void *arg); /* pk_store_open_opts; NULL: time() */
	void *creation_clock_arg;
	sqlite3_stmt *st_get, *st_put, *st_update, *st_del, *st_setrv, *st_children, *st_default_pc;
	sqlite3_stmt *st_savepoint, *st_release, *st_rollback_to;
	pthread_mutex_t lock;
	/* Reads (get, list) use their own connections: WAL lets them run during a
	 * write's commit and beside each other, and they only ever see committed
	 * data.  A reader is taken from the pool for one read (pk_store_reader_take). */
	struct store_reader readers[PK_STORE_READERS];
	pthread_mutex_t rlock;				/* the pool's busy flags */
	pthread_cond_t rfree;				/* a reader was handed back */
	atomic_uint_least64_t read_queries, read_steps; /* work of reads */
	atomic_uint_least64_t read_parsed;		/* bodies they parsed */
	/*
	 * The ring and rv: written under both lock and ring_lock (lock first; the
	 * hold trims the ring under ring_lock alone),
	 * read under either; closing under ring_lock.  Readers of the change stream take only
	 * ring_lock, which a writer holds just to publish a committed batch.
	 */
	pthread_mutex_t ring_lock;
	pthread_cond_t changed; /* with ring_lock */
	uint64_t rv;		/* last committed */
	/* the counter when the check at open passed (0: not checked): every row at
	 * or below it was verified then, and a write after open takes a higher one */
	uint64_t verified_rv;
	uint64_t rv_pending; /* last assigned inside the open transaction */
	uint64_t writes;
	bool closing;
	/* Group commit: the open batch, its events and the writers waiting on it. */
	atomic_int writers_waiting;
	bool batch_open;
	struct ring_slot *batch_ev;
	size_t batch_nev, batch_cap;
	struct txn **stakes;
	size_t nstakes, stakes_cap;
	pthread_cond_t batch_cond;
	/* Where the writers' time goes (pk_store_stats), under lock: the lock
	 * held (the one serial section of every write), the part of it spent in
	 * COMMIT (the WAL's fsync), and the writers the commits carried. */
	int64_t lock_since_ns;
	uint64_t lock_ns, commit_ns, commit_writers;
	/*
	 * The ring: ring_len events, oldest first, in ring_cap slots
	 * (PK_STORE_RING_SIZE, more only while a hold keeps events).  The newest
	 * ring_pub of them (at most PK_STORE_RING_SIZE and PK_STORE_RING_BYTES of
	 * JSON) are the window every reader sees, above ring_floor; the older
	 * ones are kept only for the hold (pk_store_events_since_held), above
	 * ring_kept_floor.
	 */
	struct ring_slot *ring;
	size_t ring_cap;
	size_t ring_head; /* next slot to write */
	size_t ring_len;
	size_t ring_pub;
	size_t ring_bytes;	  /* JSON text of the window */
	size_t ring_held_bytes;	  /* JSON text of the events kept past the window */
	uint64_t ring_floor;	  /* events with rv > ring_floor are in the window */
	uint64_t ring_kept_floor; /* events with rv > ring_kept_floor are in the ring */
	bool holding;		  /* the hold is set: events with rv > hold are kept */
	uint64_t hold;
	uint64_t holds_dropped;	  /* the hold was dropped past PK_STORE_HOLD_BYTES */
	atomic_bool write_failed; /* the last commit failed (disk full, I/O error) */
	/* Damage found (integrity.c), under dlock. */
	pthread_mutex_t dlock;
	uint64_t damaged, quarantined;
	char damage_last[256];
	void (*damage_log)(void *arg, const char *msg);
	void *damage_log_arg;
	struct pk_store_cache cache; /* under lock */
};

/* integrity.c */
/* Count a damaged row and say so (the damage callback); any thread. */
void pk_store_damage_note(struct pk_store *st, const char *kind, const char *ns, const char *name,
			  const char *why);
/*
 * A row's object from columns col (body), col + 1 (rv), col + 2 (sum) of q:
 * 0 and a new reference, or -EIO when the row is damaged (noted).  ret
 * NULL: the row checked (checksum, version), not parsed.
 */
/*
 * A stored body to its JSON tree (rowparse.c): what json_loadb(body, len, 0,
 * NULL) returns, in one pass for the plain JSON the store writes and by
 * json_loadb() itself for anything else; NULL when it is not JSON.
 */
json_t *pk_row_parse(const char *body, size_t len);
int pk_store_row_load(struct pk_store *st, sqlite3_stmt *q, int col, const char *kind,
		      const char *ns, const char *name, json_t **ret);
/* The same checks without the parse: 0, or -EIO when the row is damaged (noted). */
int pk_store_row_check(struct pk_store *st, sqlite3_stmt *q, int col, const char *kind,
		       const char *ns, const char *name);
/*
 * pk_store_row_load() for the loop's start-up list
 * (pk_store_list_opts.verified_at_open): a row the check at open verified
 * (its resourceVersion at most st->verified_rv) is not summed again; any
 * other row is checked in full.
 */
int pk_store_row_load_opened(struct pk_store *st, sqlite3_stmt *q, int col, const char *kind,
			     const char *ns, const char *name, json_t **ret);
/* The full check at open (the counter read): 0, -EUCLEAN with err, -EIO. */
int pk_store_verify_open(struct pk_store *st, bool allow_damaged, char *err, size_t errlen);
/* CREATE TABLE IF NOT EXISTS damaged_objects (integrity.c). */
extern const char pk_store_quarantine_schema[];
/* Bring DB to PK_STORE_SCHEMA_VERSION (schema.c); the version it had before. */
int pk_store_schema_migrate(sqlite3 *db, const char *path, int *ret_from, char *err, size_t errlen);

/* One write transaction: events are published to the ring on commit. */
#define TXN_MAX_EVENTS 100000 /* a namespace deletion touches all its objects */
struct txn {
	struct ring_slot *ev; /* malloc'ed */
	size_t nev, cap;
	uint64_t rv_start; /* rv_pending before this writer */
	bool savepoint;	   /* inside its SAVEPOINT */
	bool staked;	   /* rows handed to the batch; wait for done */
	bool done;
	bool dry_run; /* roll back instead of committing (set before pk_store_txn_begin) */
	bool share;   /* the next put's event keeps the object itself, not a copy:
		       * the caller changes it no more (a batched edit's result) */
	int rc;	      /* the batch's commit result */
};

/* Every write: pk_store_writer_enter() (takes the lock), txn_*, then pk_store_writer_leave(),
 * which commits the batch when nobody else waits and returns this writer's
 * commit result (0 when it wrote nothing).  tx may be NULL. */
/* A free read connection, waiting while all are in use; hand it back with
 * pk_store_reader_give. */
struct store_reader *pk_store_reader_take(struct pk_store *st);
void pk_store_reader_give(struct pk_store *st, struct store_reader *r);
void pk_store_writer_enter(struct pk_store *st);
int pk_store_writer_leave(struct pk_store *st, struct txn *tx);
/* The same for n transactions of one writer (all staked in one batch): the
 * first commit error of any of them, or 0. */
int pk_store_writer_leave_many(struct pk_store *st, struct txn *txs, size_t n);
/* With the lock held: wait until no batch is open (for reads of st->db). */
void pk_store_wait_batch_closed(struct pk_store *st);

/* sqlfunc.c: the SQL functions of a store connection (instr() by memmem()); 0 or -EIO. */
int pk_store_sql_functions(sqlite3 *db);

/* All below are called with store->lock held. */
/*
 * cache.c: an object's entry dropped as its write enters the open
 * transaction (put, remove); a committed batch's objects put (or, deleted,
 * dropped); the tree of (t, ns, name) as its row holds it (a new reference,
 * read only), or NULL when not kept; everything dropped.
 */
void pk_store_cache_forget(struct pk_store *st, const struct pk_type *t, const json_t *obj);
void pk_store_cache_publish(struct pk_store *st, const struct ring_slot *ev, size_t n);
json_t *pk_store_cache_get(struct pk_store *st, const struct pk_type *t, const char *ns,
			   const char *name);
void pk_store_cache_free(struct pk_store *st);
/* The open batch committed or rolled back. */
void pk_store_cache_batch_end(struct pk_store *st);
/* pk_store_db_default_priority_class(), looked up again only after a PriorityClass write. */
json_t *pk_store_cache_default_pc(struct pk_store *st);
const char *pk_store_ns_key(const struct pk_type *t, const char *ns);
json_t *pk_store_db_get(struct pk_store *st, const char *kind, const char *ns, const char *name);
int pk_store_txn_begin(struct pk_store *st, struct txn *tx);
/* Stamp obj with the next resourceVersion and write it (obj borrowed). */
int pk_store_txn_put(struct pk_store *st, struct txn *tx, json_t *obj, enum pk_event_type type);
int pk_store_txn_remove(struct pk_store *st, struct txn *tx, json_t *obj);
int pk_store_txn_commit(struct pk_store *st, struct txn *tx);
/* Free the event array (pk_store_txn_commit and pk_store_txn_abort do; safe to call twice). */
void pk_store_txn_release(struct txn *tx);
void pk_store_txn_abort(struct pk_store *st, struct txn *tx);
bool pk_store_db_has_children(struct pk_store *st, const char *ns, const char *name);
/* No object at all in namespace ns? */
bool pk_store_db_namespace_empty(struct pk_store *st, const char *ns);
/* Names of the objects of kind in ns, as a JSON array of strings. */
json_t *pk_store_db_names(struct pk_store *st, const char *kind, const char *ns);
json_t *pk_store_db_default_priority_class(struct pk_store *st);
uint64_t pk_store_obj_rv(const json_t *obj);
/* metadata.<key> as a string, or NULL. */
const char *pk_store_meta_str(const json_t *obj, const char *key);
/*
 * podupdate.c: the spec fields an update of a Pod may change (kube-apiserver's
 * pod strategy); next may get its omitted spec.schedulingGroup back from old.
 * -EINVAL with field-path messages in errs when it changes any other.
 */
int pk_pod_update_check(json_t *next, const json_t *old, struct pk_errors *errs);
/*
 * gc.c: remove every ownerReference to owner (by uid) from its dependents,
 * inside the open transaction tx (propagationPolicy Orphan).
 */
int pk_store_orphan_dependents(struct pk_store *st, struct txn *tx, const struct pk_type *t,
			       const json_t *owner);
/* gc.c: migration 2, the owner index's table and triggers, filled from the objects. */
int pk_store_migrate_owner_index(sqlite3 *db);
/* gc.c: migration 3, the Event expiry index (event_expiry) and its triggers. */
int pk_store_migrate_event_expiry(sqlite3 *db);
/* gc.c: migration 4, the partial index of the objects deleted in the foreground. */
int pk_store_migrate_foreground_index(sqlite3 *db);
/* The objects garbage collection looks at after a start (pk_store_gc_candidates). */
#define PK_STORE_GC_CANDIDATES_SQL                                                                 \
	"SELECT kind, ns, name FROM owner_refs UNION SELECT kind, ns, name FROM objects"           \
	" INDEXED BY objects_foreground WHERE " PK_STORE_FOREGROUND_TERM
#define PK_STORE_FOREGROUND_TERM "instr(body, '\"" PK_STORE_FOREGROUND_FINALIZER "\"') > 0"
/* The dependents of an owner uid (?1): kind, ns (stored: "" cluster-scoped), name. */
#define PK_STORE_DEPENDENTS_SQL                                                                    \
	"SELECT kind, ns, name FROM owner_refs WHERE uid = ?1 ORDER BY kind, ns, name"
/* Append a row of PK_STORE_DEPENDENTS_SQL to out as {kind, namespace, name}; -ENOMEM. */
int pk_store_dependent_row(sqlite3_stmt *q, json_t *out);

#endif

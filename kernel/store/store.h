/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.h — podkerneld's durable object store.
 *
 * Objects are Kubernetes-shaped jansson trees kept in one SQLite database
 * (DIR/podkernel.db, WAL journal, synchronous=FULL).  Every write returns
 * only after its commit, so an acknowledged write survives kill -9 and power
 * loss; writers that arrive together share one commit (group commit), each
 * inside its own savepoint so that one failing writer undoes only itself.
 * Reads use a pool of read connections and see committed data only.  A global counter, persisted
 * with the objects, gives every write a resourceVersion; the object carries it as the string
 * metadata.resourceVersion.
 *
 * The write calls (create/update/patch/delete) are the one path every writer
 * takes — the HTTP handlers and, in the same process, the scheduling loop and
 * the Job/JobSet controllers: they default (uid, creationTimestamp, generation,
 * namespace, disruptionMode, priority from PriorityClasses, finalizers), run
 * pk_validate(), enforce optimistic concurrency and deletion semantics
 * (deletionTimestamp + finalizers; bottom-up protection of CompositePodGroups).
 *
 * Limits: an object serializes to at most PK_STORE_OBJECT_MAX bytes (-E2BIG,
 * HTTP 413) and its annotations total at most PK_STORE_ANNOTATIONS_MAX
 * (-EINVAL with the field path, HTTP 422), as kube-apiserver and etcd.
 *
 * Change stream: the last PK_STORE_RING_SIZE events, and no more than
 * PK_STORE_RING_BYTES of their JSON, live in an in-memory ring.
 * pk_store_events_since() replays them to a callback and pk_store_wait() blocks
 * until something newer than a resourceVersion is committed, so consumers never
 * poll the whole store.  A resourceVersion older than the ring is "gone"
 * (-PK_STORE_EGONE, HTTP 410): re-list and watch from the list's version.
 * After a restart the ring starts empty at the persisted counter.
 * The one in-process consumer that must never fall off (the scheduling loop)
 * reads with pk_store_events_since_held(): the events it has not read yet stay
 * in memory past the ring's window (up to PK_STORE_HOLD_BYTES of JSON), so a
 * burst of writes while it is busy costs it no re-list; other readers, and
 * watches, still see only the window.
 *
 * Thread safety: every call may be made from any thread; one mutex serialises
 * access to the database.  Callbacks run without that mutex held and may call
 * back into the store.
 *
 * Errors: 0 or a negative errno.  -ENOENT not found, -EEXIST already exists,
 * -PK_STORE_ECONFLICT resourceVersion mismatch, -PK_STORE_EGONE too old,
 * -EINVAL invalid object (messages with field paths in errs), -EPERM refused
 * by a rule (a system namespace, content in a terminating namespace; the
 * reason in errs), -EIO database (a damaged row included: every row carries
 * a checksum, verified on each read).
 * Objects returned through ret_* are new references the caller json_decref()s.
 */
#ifndef PODKERNEL_KERNEL_STORE_H
#define PODKERNEL_KERNEL_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"

#define PK_STORE_RING_SIZE 4096		      /* watch history, events */
#define PK_STORE_RING_BYTES (64u << 20)	      /* ... and at most this much JSON text */
#define PK_STORE_HOLD_BYTES (256u << 20)      /* kept past the window for the hold */
#define PK_STORE_OBJECT_MAX (1536 * 1024)     /* serialized object (etcd's request limit) */
#define PK_STORE_ANNOTATIONS_MAX (256 * 1024) /* keys + values, as kube-apiserver */
#define PK_STORE_ECONFLICT ESTALE	      /* -PK_STORE_ECONFLICT: HTTP 409 */
#define PK_STORE_EGONE ERANGE		      /* -PK_STORE_EGONE: HTTP 410 */
#define PK_STORE_GROUP_FINALIZER "scheduling.k8s.io/group-protection"
#define PK_STORE_FOREGROUND_FINALIZER "foregroundDeletion" /* kube-apiserver's */

/* ---- selectors (labelSelector / fieldSelector syntax) ------------------- */
enum pk_sel_op {
	PK_SELOP_EQ,
	PK_SELOP_NE,
	PK_SELOP_IN,
	PK_SELOP_NOTIN,
	PK_SELOP_EXISTS,
	PK_SELOP_NOT_EXISTS
};
struct pk_sel_req {
	char *key;
	enum pk_sel_op op;
	char **values;
	size_t nvalues;
};
struct pk_selector {
	struct pk_sel_req *reqs;
	size_t nreqs;
};
/*
 * Parse "a=b,c!=d,e in (x,y),f notin (z),g,!h" (== is =).  With fields true
 * only =, == and != are accepted (fieldSelector).  On error a message saying
 * where ("col N: expected ...") is written to err.  Empty string: empty selector.
 */
int pk_selector_parse(const char *s, bool fields, struct pk_selector **ret, char *err,
		      size_t errlen);
void pk_selector_free(struct pk_selector *sel);
/* Label selector against metadata.labels; NULL selector matches. */
bool pk_selector_match_labels(const struct pk_selector *sel, const json_t *obj);
/*
 * Whether the JSON text of an object may match the label selector: false
 * when a label it requires (=, in, exists) is named nowhere in the text, so
 * a list can pass over the row without parsing it.  NULL matches.
 */
bool pk_selector_may_match_text(const struct pk_selector *sel, const char *text, size_t len);
/* Field selector: keys are dotted paths (metadata.name, spec.nodeName, ...). */
bool pk_selector_match_fields(const struct pk_selector *sel, const json_t *obj);

/* ---- store lifecycle ---------------------------------------------------- */
struct pk_store;
/*
 * Create DIR if needed and open (or create) DIR/podkernel.db.  Every row is
 * checked first (checksum, resourceVersion, body; see integrity.c): damaged
 * rows make the open fail with -EUCLEAN and say which in err, unless
 * opts->allow_damaged, which moves them to the damaged_objects table (never
 * served) and opens; pk_store_get_damage() then reports them.
 */
struct pk_store_open_opts {
	bool allow_damaged; /* --allow-damaged-store */
	/* where damage is said as found, from the check at open on (a log) */
	void (*damage_log)(void *arg, const char *msg);
	void *damage_log_arg;
	/*
	 * Admission rules every write of their kind must pass after static
	 * validation (borrowed: they must outlive the store).  podkerneld opens
	 * with the workload builder's (wb_admission); without them Jobs and
	 * JobSets are checked by static validation only.
	 */
	const struct pk_admission *admission;
	size_t nadmission;
	/*
	 * The clock that stamps metadata.creationTimestamp, in seconds since the
	 * epoch (NULL: the wall clock); a simulator's scratch store runs on its
	 * virtual time so that queue order (oldest first) is arrival order.
	 */
	int64_t (*creation_clock)(void *arg);
	void *creation_clock_arg;
};

/*
 * The store file's schema (PRAGMA user_version; kernel/store/schema.c).  Open
 * migrates an older file in one transaction and refuses a newer one
 * (-EPROTONOSUPPORT, err says both versions).  Open also locks DIR
 * (DIR/podkernel.lock): a second open of a served directory fails with -EBUSY.
 */
#define PK_STORE_SCHEMA_VERSION 4
struct sqlite3;
/* DB's version, -1 when it cannot be read. */
int pk_store_schema_version(struct sqlite3 *db);
/* 0 (and the version) when this podkernel can open DB; the message names PATH. */
int pk_store_schema_check(struct sqlite3 *db, const char *path, int *ret_version, char *err,
			  size_t errlen);
/*
 * Take DIR's lock (an open descriptor: close it to release), waiting up to
 * wait_ms for a holder to go; -EBUSY when still held.
 */
#define PK_STORE_LOCK_WAIT_MS 1000
int pk_store_lock_dir(const char *dir, int wait_ms, int *ret_fd, char *err, size_t errlen);
int pk_store_open_opts(const char *dir, const struct pk_store_open_opts *opts,
		       struct pk_store **ret, char *err, size_t errlen);

/*
 * Damage found: rows set aside at open plus damaged rows met by reads since
 * (each such read fails with -EIO), and the last one described.
 */
struct pk_store_damage {
	uint64_t rows;	      /* damaged rows found since open (set aside ones included) */
	uint64_t quarantined; /* set aside at open (--allow-damaged-store) */
	char last[256];
};
void pk_store_get_damage(struct pk_store *store, struct pk_store_damage *ret);
/* Where damage is said when found (a log); fn(arg, msg) may run on any thread. */
void pk_store_set_damage_log(struct pk_store *store, void (*fn)(void *arg, const char *msg),
			     void *arg);
/* Wakes every pk_store_wait() caller, then closes.  Accepts NULL. */
void pk_store_close(struct pk_store *store);
/* Make waiters return now (-ECANCELED) and refuse new waits; for shutdown. */
void pk_store_shutdown(struct pk_store *store);
/* Latest committed resourceVersion. */
uint64_t pk_store_rv(struct pk_store *store);

struct pk_store_stats {
	uint64_t writes;	/* committed write transactions */
	uint64_t objects;	/* objects stored */
	uint64_t ring_floor;	/* events with rv > ring_floor are replayable */
	size_t ring_events;	/* events in the ring */
	size_t ring_bytes;	/* their JSON text (at most PK_STORE_RING_BYTES) */
	size_t held_events;	/* events kept past the ring for the hold */
	size_t held_bytes;	/* their JSON text (at most PK_STORE_HOLD_BYTES) */
	uint64_t holds_dropped; /* times the hold fell more than that behind */
	/* Work done by reads (get, list pages) since open: statements run and
	 * SQLite virtual-machine steps they took.  A measure of cost that does
	 * not depend on the machine's speed (tests, metrics). */
	uint64_t read_queries;
	uint64_t read_steps;
	uint64_t read_parsed; /* rows whose JSON body a read parsed */
	/* Writes that started from the tree the store last wrote instead of
	 * reading and parsing the object's row again (cache.c). */
	uint64_t cache_hits;
	/* The writer lock, every write's serial section: seconds held (the
	 * commits included), seconds of them in COMMIT (the WAL's fsync), and
	 * the writers the commits carried (per commit: how many shared one). */
	double lock_seconds, commit_seconds;
	uint64_t commit_writers;
};
void pk_store_get_stats(struct pk_store *store, struct pk_store_stats *ret);

/*
 * Invariant checker (tests, debug builds): every row's resourceVersion column
 * equals its body's metadata.resourceVersion and does not exceed the counter;
 * ring events are in strictly increasing order above ring_floor and not past
 * the counter.  Returns 0 or -EUCLEAN with the first violation in err.
 */
int pk_store_check(struct pk_store *store, char *err, size_t errlen);

/*
 * False from a failed commit (disk full, I/O error) until the next commit
 * succeeds: /readyz reports it.
 */
bool pk_store_writable(struct pk_store *store);

/* ---- reads -------------------------------------------------------------- */
/*
 * A kind is its row of the kinds table, t (&pk_type_pod, a route's
 * row); another version's row or events.k8s.io's Event names the objects of
 * the stored row.  ns is ignored (may be NULL) for cluster-scoped kinds.
 * ret NULL: whether the object is there (0 or -ENOENT), its row checked
 * (checksum, version) but not parsed.
 */
int pk_store_get(struct pk_store *store, const struct pk_type *t, const char *ns, const char *name,
		 json_t **ret);

/*
 * The dependents of an owner: every object whose metadata.ownerReferences
 * name uid, whatever its kind and namespace, from the owner index (one
 * range of an index, not a scan), as a new array of {kind, namespace, name}
 * (namespace "" for a cluster-scoped object), by kind, namespace and name.
 */
int pk_store_dependents(struct pk_store *store, const char *uid, json_t **ret);
/*
 * What garbage collection looks at after a start: every object with
 * ownerReferences (the owner index) and every object that carries
 * PK_STORE_FOREGROUND_FINALIZER (a partial index of those), as a new array of
 * {kind, namespace, name}.  Read from the two indexes, never from a scan of
 * the objects: a store of a million pods without owners answers [].
 */
int pk_store_gc_candidates(struct pk_store *store, json_t **ret);

/*
 * The Events last written at or before before_s (seconds since the epoch),
 * oldest first, at most max of them, as [{namespace, name}], from the
 * Event expiry index: the read visits the expired rows only, whatever the
 * number of Events.  The caller deletes them (the TTL sweep).
 */
int pk_store_expired_events(struct pk_store *store, int64_t before_s, size_t max, json_t **ret);

struct pk_store_list_opts {
	const struct pk_selector *labels; /* NULL: all */
	const struct pk_selector *fields; /* NULL: all */
	size_t limit;			  /* 0: every matching object */
	size_t limit_bytes;		  /* 0: none; else the page ends once its objects'
					   * JSON reaches this many bytes (at least one) */
	const char *continue_token;	  /* from a previous page, or NULL */
	/* a row the check at open verified (unchanged since) is not summed again:
	 * the scheduling loop's start-up list, seconds after that check */
	bool verified_at_open;
};
/*
 * Matching objects of kind in namespace ns (NULL: every namespace), ordered by
 * namespace then name, at most limit of them (and about limit_bytes).  A page
 * is one range scan in key order from the token: its cost is the rows it
 * reads, never the size of the namespace or of the store.  ret_continue is a token for the
 * next page (malloc'ed) or NULL when this was the last; ret_rv the store's
 * resourceVersion at the time of the read.  A malformed token is -EINVAL.
 * Pages after the first are read at their own time (not a snapshot).
 */
int pk_store_list(struct pk_store *store, const struct pk_type *t, const char *ns,
		  const struct pk_store_list_opts *opts, json_t **ret_items, uint64_t *ret_rv,
		  char **ret_continue);

/* ---- writes ------------------------------------------------------------- */
enum pk_patch_type {
	PK_PATCH_MERGE,	    /* application/merge-patch+json (RFC 7386) */
	PK_PATCH_STRATEGIC, /* application/strategic-merge-patch+json: merge, $-directives dropped
			     */
	PK_PATCH_JSON,	    /* application/json-patch+json (RFC 6902) */
};
enum pk_store_sub { PK_SUB_MAIN, PK_SUB_STATUS };
/* Dry run and preconditions of a write (below); NULL: none. */
struct pk_store_write_opts;

/*
 * Create obj (borrowed; the store works on a copy).  generateName is honoured
 * when metadata.name is absent.  status is kept as given on create.
 */
int pk_store_create(struct pk_store *store, const json_t *obj, struct pk_errors *errs,
		    json_t **ret);
/*
 * Replace an object (PUT).  When obj carries metadata.resourceVersion it must
 * equal the stored one (else -PK_STORE_ECONFLICT).  For kinds with a status
 * subresource, sub MAIN keeps the stored status and sub STATUS changes only
 * status.  uid and creationTimestamp cannot change; generation is bumped when
 * anything outside metadata and status changes.  Removing the last finalizer of
 * an object with a deletionTimestamp deletes it.
 */
int pk_store_update_opts(struct pk_store *store, const json_t *obj, enum pk_store_sub sub,
			 const struct pk_store_write_opts *opts, struct pk_errors *errs,
			 json_t **ret);
/* Apply a patch to the stored object atomically, then update as above. */
int pk_store_patch(struct pk_store *store, const struct pk_type *t, const char *ns,
		   const char *name, enum pk_patch_type type, const json_t *patch,
		   enum pk_store_sub sub, struct pk_errors *errs, json_t **ret);
/*
 * Delete: an object with finalizers gets metadata.deletionTimestamp and stays
 * until they are gone (ret is that object); otherwise it is removed (ret is the
 * last state).  A CompositePodGroup keeps PK_STORE_GROUP_FINALIZER while child
 * groups (spec.parentCompositePodGroupName) exist.  opts->precondition_rv (may be
 * NULL) must match the stored resourceVersion.  Deleting a Namespace deletes
 * every object in it by the same rules; it goes when its last object does.
 */
int pk_store_delete_opts(struct pk_store *store, const struct pk_type *t, const char *ns,
			 const char *name, const struct pk_store_write_opts *opts,
			 struct pk_errors *errs, json_t **ret);

/*
 * Create many objects in one transaction, one commit (the appliance's
 * Events): each by the rules of pk_store_create(), rcs[i] its outcome; a
 * failed create is undone alone.  Returns 0 once the transaction committed,
 * -EIO when the commit failed (then every rcs[i] that was 0 carries it).
 */
int pk_store_create_batch(struct pk_store *store, json_t *const *objs, size_t n, int *rcs);

/*
 * The write path's store backend (kernel/write/writer.h): a batch becomes
 * one pk_store_edit_batch().  Conflicts come back as -PK_WRITE_ECONFLICT.
 */
struct pk_writer;
int pk_writer_store_new(struct pk_store *store, struct pk_writer **ret);

/*
 * The same four writes with options (NULL opts: as above).  dry_run runs
 * defaulting, validation and every rule, writes nothing, publishes no event,
 * and returns in ret what would be stored (under the current resourceVersion,
 * none for a create).  precondition_uid (update, patch, delete): the stored
 * object's metadata.uid must equal it, else -PK_STORE_ECONFLICT with the
 * reason in errs.  An update or patch that changes metadata.uid is refused the
 * same way.
 */
/*
 * A delete's propagationPolicy.  ORPHAN first removes the owner's
 * ownerReferences from its dependents (pk_store_dependents()), in the same
 * transaction.
 * FOREGROUND keeps the owner, marked with PK_STORE_FOREGROUND_FINALIZER,
 * until the garbage collector has deleted its blocking dependents.
 * BACKGROUND (and DEFAULT) deletes the owner now; the collector deletes the
 * dependents left without an owner.  A Namespace deletes all its contents
 * whatever the policy.
 */
enum pk_propagation {
	PK_PROPAGATE_DEFAULT,
	PK_PROPAGATE_ORPHAN,
	PK_PROPAGATE_BACKGROUND,
	PK_PROPAGATE_FOREGROUND,
};
struct pk_store_write_opts {
	bool dry_run;
	const char *precondition_uid;
	const char *precondition_rv;	 /* delete only (update/patch: metadata.resourceVersion) */
	enum pk_propagation propagation; /* delete only */
	bool by_user; /* a user's request (the API server's): admit_user rules apply too */
};
int pk_store_create_opts(struct pk_store *store, const json_t *obj,
			 const struct pk_store_write_opts *opts, struct pk_errors *errs,
			 json_t **ret);
int pk_store_patch_opts(struct pk_store *store, const struct pk_type *t, const char *ns,
			const char *name, enum pk_patch_type type, const json_t *patch,
			enum pk_store_sub sub, const struct pk_store_write_opts *opts,
			struct pk_errors *errs, json_t **ret);

/*
 * Batched edits (the write path's store backend): many objects written in
 * one transaction, one commit.  An edit is one of:
 *   - MODIFY: read the stored object, check the preconditions, let apply()
 *     change a private copy in place (any of metadata, spec, status;
 *     identity, uid, timestamps and resourceVersion are kept), validate and
 *     store it; with delete_after it is then deleted by the rules of
 *     pk_store_delete_opts();
 *   - CREATE: create a copy of create by the rules of pk_store_create();
 *   - DELETE: delete the object by the rules of pk_store_delete_opts(),
 *     with propagation.
 * Preconditions: precondition_rv (0: none) and precondition_uid (NULL:
 * none) must match the stored object.  An edit that fails
 * (-PK_STORE_ECONFLICT, -ENOENT, -EEXIST, -EINVAL, or what apply()
 * returned) is undone alone and the others commit.  Watchers see one event
 * per edited object (two when it is deleted after the edit), in order.
 *
 * Results per edit: rc, and object (a new reference or NULL): on success
 * the object as stored (its last state when deleted), on a conflict the
 * current stored object.  A stored object is shared with the change stream:
 * read it, never change it.  Returns 0 once the transaction committed (then
 * each rc tells), -EIO when the commit failed (each edit that was to be
 * written then carries the commit's error and no object).
 */
enum pk_store_edit_op {
	PK_STORE_EDIT_MODIFY,
	PK_STORE_EDIT_CREATE,
	PK_STORE_EDIT_DELETE,
};
struct pk_store_edit {
	enum pk_store_edit_op op;
	const struct pk_type *kind; /* CREATE: taken from create */
	const char *ns, *name;	    /* CREATE: taken from create */
	uint64_t precondition_rv;
	const char *precondition_uid;
	int (*apply)(json_t *obj, void *arg); /* MODIFY */
	void *arg;
	bool delete_after; /* MODIFY */
	/*
	 * MODIFY of a Pod, Job or JobSet: apply changes metadata, status and spec's own
	 * fields only (sets, deletes or replaces them, never changes what they
	 * hold): it gets a copy of those, the rest of the tree shared with the
	 * stored object, not copied (pk_write_item_apply() is such an apply).
	 */
	bool apply_shallow;
	const json_t *create;		 /* CREATE: the object (copied) */
	enum pk_propagation propagation; /* DELETE */
	int rc;				 /* out */
	json_t *object;			 /* out */
	char message[256];		 /* out: why it failed, "" when unsaid */
};
int pk_store_edit_batch(struct pk_store *store, struct pk_store_edit *edits, size_t n);

/* The key a strategic merge patch merges the items of list field by
 * (containers: "name"), NULL when the list is replaced whole. */
const char *pk_patch_merge_key(const char *field);
/* Apply a patch to a tree without the store (used by pk_store_patch). */
int pk_patch_apply(const json_t *target, enum pk_patch_type type, const json_t *patch, json_t **ret,
		   char *err, size_t errlen);

/* ---- change stream ------------------------------------------------------- */
/* A change's type is the object model's (enum pk_event_type, kernel/api/api.h). */
struct pk_store_event {
	enum pk_event_type type;
	uint64_t rv;
	const struct pk_type *kind; /* the object's kind: its row of the kinds table */
	json_t *object;		    /* borrowed and shared: read only; json_deep_copy() to change */
	const char *object_json;    /* the same object as compact JSON, borrowed */
	size_t object_json_len;
};
/* Return 0 to continue, anything else to stop (returned by events_since). */
typedef int (*pk_store_event_cb)(const struct pk_store_event *ev, void *arg);
/*
 * Call cb, in order, for every committed event with rv > since (at most max
 * events; 0 = all in the ring).  ret_last (may be NULL) gets the rv of the last
 * event delivered, or since when none.  -PK_STORE_EGONE when since is older
 * than the ring.
 */
int pk_store_events_since(struct pk_store *store, uint64_t since, size_t max, pk_store_event_cb cb,
			  void *arg, uint64_t *ret_last);
/*
 * The same for the store's one holding consumer: since becomes the hold (the
 * consumer has everything up to since), and events newer than the hold are
 * kept past the ring until the hold moves past them, so since may be older
 * than ring_floor.  -PK_STORE_EGONE only when since is older than what was
 * kept: the first call, or once the hold fell more than PK_STORE_HOLD_BYTES
 * of events behind (the kept events are then dropped, holds_dropped counts
 * it).  One consumer per store: a second caller moves the same hold.
 */
int pk_store_events_since_held(struct pk_store *store, uint64_t since, size_t max,
			       pk_store_event_cb cb, void *arg, uint64_t *ret_last);
/* The holding consumer is gone: nothing is kept past the ring for it. */
void pk_store_hold_release(struct pk_store *store);
/*
 * Block until the store's resourceVersion exceeds rv (0), timeout_ms passes
 * (-ETIMEDOUT; timeout_ms < 0 waits forever) or the store shuts down
 * (-ECANCELED).
 */
int pk_store_wait(struct pk_store *store, uint64_t rv, int timeout_ms);

#endif /* PODKERNEL_KERNEL_STORE_H */

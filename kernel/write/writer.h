/* SPDX-License-Identifier: Apache-2.0 */
/*
 * writer.h — the write path of podkernel: one interface, several backends.
 * This library depends on the object model only (kernel/api); its backends
 * live with what they write to: the store's in kernel/store/ (standalone
 * mode), the kube-apiserver's in kernel/attach/ (attach mode).
 *
 * The loop collects the actions of the cycles of one scheduling round
 * (bindings, conditions, evictions, claim allocations) into a batch and
 * commits the batch at the end of the round; standalone's controllers write
 * their creates, status updates, node taints, deletions and node-loss
 * evictions the same way, through a writer of their own.  Events, the
 * record of what a batch wrote (pk_writer_events() below), go through a
 * writer too: standalone's recorder creates, repeats and expires them
 * through a writer of its own on the store (kernel/controllers/recorder.c),
 * attach mode's creates them on the cluster through a remote writer of its
 * own (kernel/attach/recorder.c), and an eviction's are written in the
 * eviction's own batch (kernel/server/eviction.c).
 * Writes are grouped per object: every
 * action on one object becomes one write of that object (a binding and its PodScheduled condition
 * are one update, as a Kubernetes binding is), guarded by the object's resourceVersion as the
 * writer last saw it (and its uid, when the caller names one: an object deleted and created again
 * under the same name is not written by a decision about the old one).  An object whose
 * precondition fails (a concurrent writer changed or deleted it) is left out
 * and handed back with its current state; the other objects commit.
 *
 * The batching is shared (writer.c); a backend only commits a finished batch
 * and reads an object back:
 *   - the store backend (kernel/store/writer.c) writes the whole batch in one
 *     SQLite transaction, one fsync, through pk_store_edit_batch();
 *   - a remote backend (attach mode) sends each object's write to a
 *     kube-apiserver, many in flight;
 *   - the in-memory backend (memory.c, below) writes a JSON array of objects
 *     in place: the offline runs (podctl schedule, the queue controller's
 *     admission pass) write the cluster they were given.
 * The loop does not know which one it runs on.
 *
 * Lifecycle: pk_writer_new(ops, backend) -> { pk_writer_batch_begin() ->
 * pk_writer_bind()/set_condition()/evict()/create()/replace()/status()/
 * delete() ... -> pk_writer_batch_commit() }*
 * -> pk_writer_free() (which frees the backend through ops->free).
 * Not thread safe: one loop owns a writer.
 */
#ifndef PODKERNEL_KERNEL_WRITE_WRITER_H
#define PODKERNEL_KERNEL_WRITE_WRITER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/api/api.h"
#include "kernel/lib/map.h"

/*
 * The write path's own error codes, beside -errno ones (values above any
 * errno).  A backend turns its own failures into these or into -errno.
 */
enum pk_write_error {
	PK_WRITE_ECONFLICT = 4090, /* a precondition failed (HTTP 409 Conflict) */
};
/* A message for a write result's error: the codes above, else pk_errno_text(). */
const char *pk_write_strerror(int error);

/*
 * Which object a write is about, and what it must still look like.  kind is
 * the object's row of the kinds table (&pk_type_pod); the status
 * and conditions of a kind without a status subresource (Event,
 * WorkloadPriorityClass) are not written: such an object is created,
 * replaced or deleted (a backend that does not reach the kind refuses it
 * with -EOPNOTSUPP; attach's remote one reaches the kinds attach mode
 * watches, and creates Events).
 */
struct pk_write_ref {
	const struct pk_type *kind;
	const char *ns; /* NULL or "" for cluster-scoped kinds */
	const char *name;
	uint64_t rv;	 /* precondition: metadata.resourceVersion; 0: none */
	const char *uid; /* precondition: metadata.uid; NULL: none */
};

/* A deletion's propagationPolicy (as DeleteOptions). */
enum pk_write_propagation {
	PK_WRITE_PROPAGATE_DEFAULT,
	PK_WRITE_PROPAGATE_ORPHAN,
	PK_WRITE_PROPAGATE_BACKGROUND,
	PK_WRITE_PROPAGATE_FOREGROUND,
};

/* A condition to set (replacing one of the same type). */
struct pk_write_cond {
	char *type, *status, *reason, *message;
};
/* Free a condition's strings (owned, as a batch's are). */
void pk_write_cond_clear(struct pk_write_cond *c);

/*
 * One object's writes in a batch, in the order they were asked for; what a
 * backend's commit() receives.  Strings are owned by the batch.
 */
struct pk_write_item {
	const struct pk_type *kind;
	char *ns, *name;
	uint64_t rv;	     /* precondition of the first action on the object */
	char *uid;	     /* uid precondition of the first action that named one, or NULL */
	char *node;	     /* bind: spec.nodeName, or NULL */
	char *volume;	     /* PersistentVolumeClaim: spec.volumeName, or NULL */
	json_t *annotations; /* bind, volume claim: merged into metadata.annotations, or NULL */
	struct pk_write_cond *conds;
	size_t nconds;
	/*
	 * Delete the object after its other actions are written: an eviction
	 * or preemption (after its DisruptionTarget condition), or a plain
	 * deletion with propagation.
	 */
	bool evict;
	enum pk_write_propagation propagation;
	/* Create this object (then the item's only action); its kind, namespace and name. */
	json_t *create;
	/* The object's new content but status (replace), or its new status (status), or NULL. */
	json_t *replace, *status;
	/*
	 * ResourceClaim: status.allocation and status.reservedFor set to those
	 * of claim, removed where claim lacks them ({}: deallocate); or NULL.
	 */
	json_t *claim;
	/* Items (indices in the batch) that must be written for this one to be. */
	size_t *deps;
	size_t ndeps;
};

/*
 * The outcome of one item, in item order.  error: 0 written;
 * -PK_WRITE_ECONFLICT the precondition failed (or a binding found the pod
 * bound elsewhere); -ENOENT the object is gone; another -errno the write
 * failed.  object (a new reference, may be NULL): on 0 the object as
 * written (NULL when the backend does not know it, e.g. a binding POST);
 * on a conflict the current object (NULL: the loop reads it again with
 * ops->get).
 */
struct pk_write_result {
	const struct pk_type *kind;
	const char *ns, *name; /* borrowed from the batch: valid until the next batch_begin */
	int error;
	json_t *object; /* read it, never change it: the store backend shares it with watchers */
	char *message;	/* why it failed when the backend says (owned by the writer), or NULL */
};

struct pk_write_batch {
	struct pk_write_item *items;
	size_t n, cap;
};

struct pk_writer_ops {
	const char *name; /* "store", "kube" */
	/*
	 * Write every item of batch (n >= 1).  Each item is guarded by its
	 * precondition on its own; failed ones are left out and the rest are
	 * written (the store backend: in one transaction).  Fill results[i] for
	 * items[i] (zeroed on entry).  Return 0, or -errno when nothing could be
	 * written at all (then every result carries that error too).
	 */
	int (*commit)(void *backend, const struct pk_write_batch *batch,
		      struct pk_write_result *results);
	/* Read the current object (a new reference), -ENOENT when gone. */
	int (*get)(void *backend, const struct pk_type *kind, const char *ns, const char *name,
		   json_t **ret);
	void (*free)(void *backend); /* may be NULL */
};

struct pk_writer;

/* The writer takes ownership of backend (freed through ops->free). */
int pk_writer_new(const struct pk_writer_ops *ops, void *backend, struct pk_writer **ret);
void pk_writer_free(struct pk_writer *w);
const char *pk_writer_name(const struct pk_writer *w);
/* w's backend when w writes through ops, else NULL. */
void *pk_writer_backend(const struct pk_writer *w, const struct pk_writer_ops *ops);

/* Start a new batch (drops the results of the previous one). */
int pk_writer_batch_begin(struct pk_writer *w);
/* Bind a pod; annotations (borrowed, may be NULL) are merged into the pod's. */
int pk_writer_bind(struct pk_writer *w, const struct pk_write_ref *pod, const char *node,
		   const json_t *annotations);
int pk_writer_set_condition(struct pk_writer *w, const struct pk_write_ref *obj, const char *type,
			    const char *status, const char *reason, const char *message);
/* Preemption or eviction: the conditions already asked for, then delete the pod. */
int pk_writer_evict(struct pk_writer *w, const struct pk_write_ref *pod);
/*
 * Create obj (a reference is kept: obj must not change until the batch is
 * committed; each backend writes a copy): an object of kind with metadata.name, or
 * metadata.generateName (then the backend names it: the result's object
 * says the name; the item goes by "PREFIX(N)"); kind is the row of the
 * kind obj names (&pk_type_event for an Event).  -EEXIST in its result when
 * it exists.  Nothing else may be asked of the same object in the batch
 * (-EBUSY).
 */
int pk_writer_create(struct pk_writer *w, const struct pk_type *kind, const json_t *obj);
/*
 * Replace the object but its status with obj (borrowed; a PUT): metadata's
 * identity, uid and timestamps are the backend's, the rest is obj's.  Only
 * a deletion may share the object's item (-EBUSY for a binding, conditions,
 * a status, a claim or a volume: another batch writes those).
 */
int pk_writer_replace(struct pk_writer *w, const struct pk_write_ref *ref, const json_t *obj);
/*
 * pk_writer_replace with obj held (a reference taken), not copied: the
 * caller changes neither obj nor anything it shares with other trees after
 * the call (a replacement built over a stored object's read-only tree).
 */
int pk_writer_replace_held(struct pk_writer *w, const struct pk_write_ref *ref, json_t *obj);
/* Replace the object's status with status (borrowed; a PUT of the status subresource). */
int pk_writer_status(struct pk_writer *w, const struct pk_write_ref *ref, const json_t *status);
/* pk_writer_status with status held (a reference taken), not copied: the caller changes it no
 * more. */
int pk_writer_status_held(struct pk_writer *w, const struct pk_write_ref *ref, json_t *status);
/* Delete the object after anything else asked of it (any kind; pk_writer_evict for a pod). */
int pk_writer_delete(struct pk_writer *w, const struct pk_write_ref *ref,
		     enum pk_write_propagation how);
/* A claim's allocation and reservations (status borrowed; see pk_write_item.claim). */
int pk_writer_claim(struct pk_writer *w, const struct pk_write_ref *claim, const json_t *status);
/*
 * A PersistentVolumeClaim of a pod about to be bound: its volume
 * (spec.volumeName, NULL: none) and annotations (the selected node, borrowed).
 * The binding depends on it (pk_writer_depend).
 */
int pk_writer_volume_claim(struct pk_writer *w, const struct pk_write_ref *claim,
			   const char *volume, const json_t *annotations);
/*
 * obj is written only if dep is (a binding after the claims its pod uses):
 * a backend writes dep first and leaves obj out with -PK_WRITE_ECONFLICT
 * when dep failed.
 */
int pk_writer_depend(struct pk_writer *w, const struct pk_write_ref *obj,
		     const struct pk_write_ref *dep);
/* Items in the open batch. */
size_t pk_writer_batch_size(const struct pk_writer *w);
/* The open (or just committed) batch, owned by the writer. */
const struct pk_write_batch *pk_writer_batch(const struct pk_writer *w);
/*
 * Commit the open batch.  *ret_results (owned by the writer, valid until the
 * next batch_begin or free) gets one result per object, *ret_n their number.
 * Returns what ops->commit returned.
 */
int pk_writer_batch_commit(struct pk_writer *w, const struct pk_write_result **ret_results,
			   size_t *ret_n);
/* ops->get. */
int pk_writer_get(struct pk_writer *w, const struct pk_type *kind, const char *ns, const char *name,
		  json_t **ret);

/* Apply one item to a copy of its object (what a backend writes); 0 or -errno. */
int pk_write_item_apply(const struct pk_write_item *it, json_t *obj, int64_t now);

/* ---- the in-memory backend (memory.c) ------------------------------------------ */

/*
 * What an in-memory writer holds and how it writes:
 *   holds      the kinds (pk_kind_of() of an object; PK_KIND_UNKNOWN for
 *              the served kinds without a typed view) it writes; NULL: every
 *              kind.  Objects of other kinds in the array are not its own:
 *              it never changes them, and a write about one is -ENOENT as for
 *              an object that is not there; a create of such a kind is
 *              -EOPNOTSUPP.
 *   now        the clock of the conditions it sets (seconds); 0: time(NULL)
 *              at each commit.
 *   versions   stamp what a store stamps: each object written gets the next
 *              metadata.resourceVersion, a created one also a uid and a
 *              creationTimestamp.  Without it objects keep their metadata as
 *              given (an offline run over a cluster dump writes its objects
 *              back with the resourceVersions they came with); preconditions
 *              are checked against metadata.resourceVersion and uid either way.
 *   shared     the array's objects are shared with someone who keeps them as
 *              they are: an object is copied (deep) into the array, in its
 *              place, before its first change, and only the copy changes.
 */
struct pk_writer_memory_opts {
	bool (*holds)(const struct pk_type *kind);
	int64_t now;
	bool versions;
	bool shared;
	struct pk_writer_memory_index *index;
	size_t indexed;
};

/*
 * An in-memory writer's index of its array's objects, kept by the caller from
 * one writer to the next over the same array, so that a writer over an array
 * that starts with the objects a writer before left indexes only the ones
 * after them (a scheduler kept from run to run, pk_sched_run_kept):
 *   index      the index (NULL: the writer's own);
 *   indexed    how many of the array's first objects it holds, as the last
 *              writer over it left them (its writes included: copies made,
 *              objects created or deleted); 0, or more than that writer's
 *              array held: it is emptied and every object indexed again.
 * The objects it names are borrowed: the caller keeps the array the last
 * writer wrote alive, and gives the next writer one that starts with the
 * same objects.
 */
struct pk_writer_memory_index;
int pk_writer_memory_index_new(struct pk_writer_memory_index **ret);
void pk_writer_memory_index_free(struct pk_writer_memory_index *ix);
/*
 * The kinds (pk_kind_of()) of objects' items, in their order, when w is an
 * in-memory writer over objects: read once per object, kept with the index
 * (the next writer reads only those after opts.indexed); NULL for another
 * writer or array, or out of memory.  Valid until w's next commit: the walks
 * of a run over its objects (its controllers', what it left unbound) read
 * them instead of each object's kind.
 */
const enum pk_kind *pk_writer_memory_kinds(struct pk_writer *w, const json_t *objects);
/*
 * The index of an array that changed between two writers (a scheduler carried
 * to the next cluster): the objects of gone are no longer in it, those of came
 * are, any other object of the kinds holds names (the writers' opts.holds) is
 * the same object as before, and it has n items, of kinds (pk_kind_of() of
 * each; NULL: read again when asked); the next writer may then be given
 * indexed n.  -ENOMEM: the next indexes everything.
 */
int pk_writer_memory_index_moved(struct pk_writer_memory_index *ix,
				 bool (*holds)(const struct pk_type *kind), const json_t *gone,
				 const json_t *came, size_t n, const enum pk_kind *kinds);
/* The object the index holds under key (pk_obj_key()), or NULL; its count of objects. */
json_t *pk_writer_memory_index_get(const struct pk_writer_memory_index *ix, const char *key);
size_t pk_writer_memory_index_count(const struct pk_writer_memory_index *ix);

/*
 * A writer over objects (a JSON array; a reference is kept), written in
 * place: an item changes its object as the store's backend would (the same
 * pk_write_item_apply(), under the same resourceVersion, uid, binding and
 * dependency preconditions), a create appends a copy of the new object
 * (metadata.generateName: named with five characters derived from the
 * namespace, the prefix and the writer's count of names, so a run is
 * reproducible; -EEXIST when the name is taken), a deletion or an eviction
 * removes the object from the array (at once: no finalizer waits and no
 * garbage collector runs on an in-memory set; propagation orphan and
 * foreground are refused, -EOPNOTSUPP).  An object changes only when its
 * whole item can be written (out of memory aside).  A result's object is the
 * array's own (the object after the write; for a deletion the object as it
 * was removed): read it, never change it.  Items that are not JSON objects
 * (compact text, pk_compact_object) are not the writer's.  objects must not
 * gain or lose items behind the writer's back while it lives (replacing an
 * item the writer does not hold is fine).  Opts may be NULL.
 */
int pk_writer_memory_new(json_t *objects, const struct pk_writer_memory_opts *opts,
			 struct pk_writer **ret);

/* ---- Events: what a committed batch tells a user (both modes) ------------------ */

#define PK_EVENT_REPEAT_S 300	   /* the same note about an object: at most this often */
#define PK_EVENT_LIMITER_MAX 65536 /* remembered (object, reason) pairs before forgetting all */

/*
 * One Event of a committed batch: type "Normal" or "Warning", reason
 * Scheduled (action Binding), FailedScheduling (Scheduling) or Preempted
 * (Preempting), as kube-scheduler reports them.  obj is the object as
 * written when the backend knows it (its uid), else NULL.
 */
typedef void (*pk_writer_event_cb)(void *arg, const struct pk_write_item *it, const json_t *obj,
				   const char *type, const char *reason, const char *action,
				   const char *note);
/* cb once per Event of the items written without error; objects[i] may be NULL. */
void pk_writer_events(const struct pk_write_batch *batch, const struct pk_write_result *results,
		      json_t *const *objects, pk_writer_event_cb cb, void *arg);
/*
 * client-go's event correlator, reduced: the same note about the same
 * (object, reason) key again within PK_EVENT_REPEAT_S is dropped (false); a
 * new note goes out.  A zeroed limiter is empty; it remembers at most
 * PK_EVENT_LIMITER_MAX keys, then forgets them all.  One thread at a time.
 */
struct pk_event_limiter {
	struct pk_map seen; /* key -> struct pk_event_seen (writer.c) */
	int64_t window_s;   /* 0: PK_EVENT_REPEAT_S; < 0: every repeat goes out */
};
bool pk_event_allowed(struct pk_event_limiter *l, const char *key, const char *note, int64_t now_s);
void pk_event_limiter_free(struct pk_event_limiter *l);

#endif /* PODKERNEL_KERNEL_WRITE_WRITER_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gc.c — standalone's garbage collector, as kube-controller-manager's: one
 * graph over every served kind, by the ownerReferences of the objects.
 *
 * What it looks at comes from the change stream (ctl_gc_note), never from
 * scans: an object deleted (its dependents, found through the store's owner
 * index, pk_store_dependents(), may have lost their last owner; an owner
 * that waits for it in the foreground may go), an object written with
 * ownerReferences (an owner may be missing), an object deleted in the
 * foreground (its dependents go first).  After the listing at start, one
 * pass reads the objects with ownerReferences and those deleted in the
 * foreground, found through the store's indexes (pk_store_gc_candidates()).
 *
 * A dependent is judged as upstream's attemptToDeleteItem does.  Each
 * reference is resolved: the owner is looked up by kind and name in the
 * dependent's namespace (in none for a cluster-scoped kind) and must have
 * the reference's uid, else the reference dangles (an owner in another
 * namespace is not found there: it dangles too).  An owner deleted in the
 * foreground is "waiting".  A reference to a kind not served, or from a
 * cluster-scoped dependent to a namespaced kind, cannot be resolved: the
 * dependent is left alone (said in the log; the latter also in a Warning
 * Event OwnerRefInvalidNamespace about it), as upstream does.  Then:
 *   - some owner solid: the dangling and waiting references are removed;
 *   - no owner solid, some waiting, the dependent has dependents itself:
 *     it is deleted in the foreground;
 *   - otherwise it is deleted with the policy its finalizers ask for
 *     (orphan, foregroundDeletion), else in the background.
 * An owner deleted in the foreground loses its foregroundDeletion finalizer
 * (and so goes) once no dependent whose reference has blockOwnerDeletion is
 * left; a dependent about to be deleted in the foreground while one of its
 * own dependents waits has its references made non-blocking first (an
 * ownership cycle would wait for ever).  A pass goes on in rounds over what
 * its own writes make worth a look (again()), so a chain goes down and is
 * released in one pass.  It writes through the controllers' writer (the
 * write path, write.c), never on the store: deletions with their
 * propagation, and references dropped or a finalizer removed as
 * replacements of the object as read, each under the uid and
 * resourceVersion read, in batches of GC_BATCH objects; a conflict is
 * looked at again on the write's event.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/controllers/controllers-internal.h"
#include "kernel/lib/macro.h"

#define GC_BATCH 256
#define GC_ROUNDS 4096 /* rounds of one pass down a chain of owners (then the next pass) */
#define SEP "\x1f"     /* between the parts of a key: never in a name */
#define ORPHAN_FINALIZER "orphan"

/* What a reference's owner is found to be (memoised for a pass). */
enum owner_state {
	OWNER_UNRESOLVED =
	    1,		/* a kind not served, or a namespaced owner of a cluster-scoped object */
	OWNER_DANGLING, /* missing, or another object under the name */
	OWNER_WAITING,	/* being deleted in the foreground */
	OWNER_SOLID,
};

/* What an owner was queued for (the bits of its value in ctl_gc.owners). */
#define LOOK_DEPENDENTS 1 /* it went: its dependents may have lost their last owner */
#define LOOK_RELEASE 2	  /* deleted in the foreground: it may go once nothing blocks it */

struct ctl_gc {
	struct pk_map owners; /* "uid SEP kind SEP ns SEP name" -> LOOK_* bits */
	struct pk_map deps;   /* "kind SEP ns SEP name" -> json_t * (its last event, held) */
	bool full;	      /* a pass over every object is due */
};

/* What a write of the collector does to its object. */
enum gc_op {
	GC_DELETE,  /* deleted, with a propagation */
	GC_DROP,    /* its dangling and waiting references removed */
	GC_RELEASE, /* an owner deleted in the foreground: its foregroundDeletion finalizer goes */
	GC_UNBLOCK, /* its references stop blocking their owners (an ownership cycle) */
};

/* One write of the batch: item i of ctl->writer's open batch. */
struct gc_edit {
	enum gc_op op;
	enum pk_write_propagation how; /* GC_DELETE */
	const struct pk_type *type;
	json_t *held; /* the object as judged */
	json_t *drop; /* GC_DROP: the uids whose references go */
	bool lost;    /* not asked of the writer (out of memory): its result is not looked at */
};

/* One pass: memo of owners, dependents judged, the batch of writes. */
struct gc_pass {
	struct pk_ctl *ctl;
	struct pk_map memo;   /* "kind SEP ns SEP name SEP uid" -> enum owner_state */
	struct pk_map seen;   /* dependents judged in this pass */
	struct pk_map queued; /* "kind SEP ns SEP name" of the objects in the batch */
	struct gc_edit edits[GC_BATCH];
	size_t n;
	int written;
	bool events;	      /* Warning Events noted: created before the writes */
	struct pk_map *again; /* owners to look at in the pass's next round */
};

/* The destructor of the dependents' map: the events' objects are held. */
static void held_free(void *obj)
{
	json_decref(obj);
}

int ctl_gc_new(struct ctl_gc **ret)
{
	struct ctl_gc *gc = calloc(1, sizeof(*gc));

	if (!gc)
		return -ENOMEM;
	gc->deps = (struct pk_map)PK_MAP_INIT(held_free);
	*ret = gc;
	return 0;
}

void ctl_gc_free(struct ctl_gc *gc)
{
	if (!gc)
		return;
	pk_map_free(&gc->owners);
	pk_map_free(&gc->deps);
	free(gc);
}

void ctl_gc_full(struct ctl_gc *gc)
{
	gc->full = true;
}

static bool has_finalizer(const json_t *obj, const char *name)
{
	json_t *f;
	size_t i;

	json_array_foreach(pk_get(obj, "metadata.finalizers"), i, f)
	{
		if (strcmp(json_string_value(f) ?: "", name) == 0)
			return true;
	}
	return false;
}

static bool deleting_dependents(const json_t *obj)
{
	return pk_get(obj, "metadata.deletionTimestamp") &&
	       has_finalizer(obj, PK_STORE_FOREGROUND_FINALIZER);
}

/* The namespace an owner of kind t is looked for in, from a dependent's. */
static const char *owner_ns(const struct pk_type *t, const char *dep_ns)
{
	return t && t->namespaced ? dep_ns : "";
}

static void queue_owner(struct pk_map *owners, const char *uid, const char *kind, const char *ns,
			const char *name, uintptr_t look)
{
	char key[CTL_KEY_MAX + 64];

	if (!uid || !*uid || !kind || !name ||
	    snprintf(key, sizeof(key), "%s" SEP "%s" SEP "%s" SEP "%s", uid, kind, ns ? ns : "",
		     name) >= (int)sizeof(key))
		return;
	look |= (uintptr_t)pk_map_get(owners, key);
	pk_map_put(owners, key, (void *)look); /* ENOMEM: the next event asks again */
}

static void queue_dependent(struct ctl_gc *gc, const char *kind, const json_t *obj)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	char key[CTL_KEY_MAX];

	if (!t || !pk_name(obj) ||
	    snprintf(key, sizeof(key), "%s" SEP "%s" SEP "%s", kind,
		     t->namespaced ? pk_namespace(obj) : "", pk_name(obj)) >= (int)sizeof(key))
		return;
	if (pk_map_put(&gc->deps, key, json_incref((json_t *)obj)) < 0)
		json_decref((json_t *)obj); /* the map did not take it */
}

void ctl_gc_note(struct pk_ctl *ctl, const struct pk_source_event *ev)
{
	const struct pk_type *t = ev->kind;
	const json_t *obj = ev->object;
	const char *ns = t && t->namespaced ? pk_namespace(obj) : "";
	json_t *refs = pk_get(obj, "metadata.ownerReferences"), *r;
	size_t i;

	if (!t || !ctl->gc)
		return;
	if (ev->type == PK_EVENT_DELETED) {
		/* its dependents may have lost their last owner */
		queue_owner(&ctl->gc->owners, pk_get_string(obj, "metadata.uid"), t->kind, ns,
			    pk_name(obj), LOOK_DEPENDENTS);
		/* an owner deleted in the foreground may wait for it no more */
		json_array_foreach(refs, i, r)
		{
			const char *kind = json_string_value(json_object_get(r, "kind"));

			if (json_is_true(json_object_get(r, "blockOwnerDeletion")))
				queue_owner(
				    &ctl->gc->owners, json_string_value(json_object_get(r, "uid")),
				    kind, owner_ns(pk_type_by_kind(kind), ns),
				    json_string_value(json_object_get(r, "name")), LOOK_RELEASE);
		}
		return;
	}
	if (deleting_dependents(obj))
		queue_owner(&ctl->gc->owners, pk_get_string(obj, "metadata.uid"), t->kind, ns,
			    pk_name(obj), LOOK_DEPENDENTS | LOOK_RELEASE);
	if (json_array_size(refs) && !pk_get(obj, "metadata.deletionTimestamp"))
		queue_dependent(ctl->gc, t->kind, obj);
}

/* ---- judging a dependent ------------------------------------------------------------ */

/* Whether the reference names an apiVersion and kind this appliance serves: its type. */
static const struct pk_type *served_owner(const json_t *ref)
{
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *av = json_string_value(json_object_get(ref, "apiVersion"));

	for (const struct pk_type *const *p_t = pk_types, *t; kind && av && (t = *p_t); p_t++)
		if (strcmp(t->kind, kind) == 0 && strcmp(t->api_version, av) == 0)
			return t;
	return NULL;
}

static enum owner_state owner_lookup(struct gc_pass *p, const struct pk_type *t, const char *ns,
				     const char *name, const char *uid)
{
	char key[CTL_KEY_MAX + 64];
	json_t *owner = NULL;
	enum owner_state s;
	void *seen;

	if (snprintf(key, sizeof(key), "%s" SEP "%s" SEP "%s" SEP "%s", t->kind, ns, name, uid) >=
	    (int)sizeof(key))
		return OWNER_UNRESOLVED;
	seen = pk_map_get(&p->memo, key);
	if (seen)
		return (enum owner_state)(uintptr_t)seen;
	if (pk_store_get(p->ctl->store, t, ns, name, &owner) < 0 ||
	    strcmp(pk_get_string(owner, "metadata.uid") ?: "", uid) != 0)
		s = OWNER_DANGLING;
	else
		s = deleting_dependents(owner) ? OWNER_WAITING : OWNER_SOLID;
	json_decref(owner);
	pk_map_put(&p->memo, key, (void *)(uintptr_t)s); /* ENOMEM: looked up again */
	return s;
}

/* Reported as upstream's collector does: a Warning Event about the dependent. */
static void invalid_namespace(struct gc_pass *p, const char *kind, const json_t *obj,
			      const json_t *ref)
{
	char note[512];

	snprintf(
	    note, sizeof(note),
	    "ownerRef [%s/%s, namespace: , name: %s, uid: %s] does not exist in namespace \"\"",
	    json_string_value(json_object_get(ref, "apiVersion")) ?: "",
	    json_string_value(json_object_get(ref, "kind")) ?: "",
	    json_string_value(json_object_get(ref, "name")) ?: "",
	    json_string_value(json_object_get(ref, "uid")) ?: "");
	ctl_record_warning(p->ctl, pk_type_by_kind(kind), obj, "OwnerRefInvalidNamespace", note);
	p->events = true;
}

/*
 * The state of each reference of obj (a cluster-scoped one when ns is ""),
 * into states; OWNER_UNRESOLVED (logged) when any cannot be resolved.
 */
static enum owner_state classify(struct gc_pass *p, const char *kind, const json_t *obj,
				 const char *ns, enum owner_state *states)
{
	json_t *refs = pk_get(obj, "metadata.ownerReferences"), *r;
	size_t i;

	json_array_foreach(refs, i, r)
	{
		const struct pk_type *t = served_owner(r);
		const char *name = json_string_value(json_object_get(r, "name"));
		const char *uid = json_string_value(json_object_get(r, "uid"));
		const char *why = NULL;

		if (!t)
			why = "names a kind this server does not serve";
		else if (!name || !uid)
			why = "has no name or no uid";
		else if (!*ns && t->namespaced)
			why = "names a namespaced owner of a cluster-scoped object";
		if (why) {
			ctl_log(p->ctl, 2,
				"garbage collection: %s %s%s%s: metadata.ownerReferences[%zu] %s; "
				"left alone",
				kind, ns, *ns ? "/" : "", pk_name(obj), i, why);
			if (t && t->namespaced && !*ns)
				invalid_namespace(p, kind, obj, r);
			return OWNER_UNRESOLVED;
		}
		states[i] = owner_lookup(p, t, owner_ns(t, ns), name, uid);
	}
	return OWNER_SOLID;
}

static void drop_refs(json_t *obj, const json_t *uids)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *refs = json_object_get(meta, "ownerReferences"), *u;
	size_t k;

	for (size_t i = json_array_size(refs); i-- > 0;) {
		const char *ruid =
		    json_string_value(json_object_get(json_array_get(refs, i), "uid")) ?: "";

		json_array_foreach(uids, k, u) if (strcmp(json_string_value(u), ruid) == 0)
		{
			json_array_remove(refs, i);
			break;
		}
	}
	if (json_array_size(refs) == 0)
		json_object_del(meta, "ownerReferences");
}

static void drop_finalizer(json_t *obj, const char *name)
{
	json_t *fins = pk_get(obj, "metadata.finalizers");

	for (size_t i = json_array_size(fins); i-- > 0;)
		if (strcmp(json_string_value(json_array_get(fins, i)) ?: "", name) == 0)
			json_array_remove(fins, i);
}

/* For a dependent in an ownership cycle: no reference blocks its owner. */
static void unblock_refs(json_t *obj)
{
	json_t *r;
	size_t i;

	json_array_foreach(pk_get(obj, "metadata.ownerReferences"), i, r)
	    json_object_del(r, "blockOwnerDeletion");
}

/* The object e makes of its object as judged (a replacement), NULL on ENOMEM. */
static json_t *replacement(const struct gc_edit *e)
{
	json_t *obj = json_deep_copy(e->held);

	if (!obj)
		return NULL;
	if (e->op == GC_DROP)
		drop_refs(obj, e->drop);
	else if (e->op == GC_RELEASE)
		drop_finalizer(obj, PK_STORE_FOREGROUND_FINALIZER);
	else
		unblock_refs(obj);
	return obj;
}

/*
 * Ask e of the writer's open batch: a deletion, or a replacement under the
 * resourceVersion read (the object as judged, changed); both under its uid.
 */
static int write_edit(struct pk_ctl *ctl, const struct gc_edit *e)
{
	const struct pk_type *t = e->type;
	struct pk_write_ref ref = ctl_ref_of(t, e->held);
	json_t *obj;
	int r;

	ref.ns = t->namespaced ? ref.ns : NULL;
	if (e->op == GC_DELETE)
		return pk_writer_delete(ctl->writer, &ref, e->how);
	if (!(obj = replacement(e)))
		return -ENOMEM;
	r = pk_writer_replace(ctl->writer, &ref, obj);
	json_decref(obj);
	return r;
}

static void flush(struct gc_pass *p);

/*
 * Queue a write of obj (kind) as judged; takes drop.  An object already in
 * the batch is written in the next one (its second write then finds it
 * changed, and it is looked at again on its event).
 */
static void edit(struct gc_pass *p, enum gc_op op, const char *kind, const json_t *obj,
		 enum pk_write_propagation how, json_t *drop)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	char key[CTL_KEY_MAX];
	struct gc_edit *e;
	size_t had;
	int r;

	if (!t ||
	    snprintf(key, sizeof(key), "%s" SEP "%s" SEP "%s", t->kind,
		     t->namespaced ? pk_namespace(obj) : "", pk_name(obj)) >= (int)sizeof(key)) {
		json_decref(drop);
		return;
	}
	if (p->n == GC_BATCH || pk_map_get(&p->queued, key))
		flush(p);
	if (p->n == 0 && pk_writer_batch_begin(p->ctl->writer) < 0) {
		json_decref(drop);
		return;
	}
	e = &p->edits[p->n];
	*e = (struct gc_edit){.op = op, .how = how, .type = t, .drop = drop};
	e->held = json_incref((json_t *)obj);
	had = pk_writer_batch_size(p->ctl->writer);
	r = write_edit(p->ctl, e);
	if (r < 0)
		ctl_log(p->ctl, 1, "garbage collection: %s %s: %s", t->kind, pk_name(obj),
			pk_write_strerror(r));
	if (pk_writer_batch_size(p->ctl->writer) == had) { /* nothing asked */
		json_decref(e->held);
		json_decref(e->drop);
		return;
	}
	e->lost = r < 0;
	pk_map_put(&p->queued, key, (void *)1); /* ENOMEM: a second write fails on its own */
	p->n++;
}

static const char *edit_what(const struct gc_edit *e)
{
	switch (e->op) {
	case GC_UNBLOCK:
		return "references made non-blocking: an ownership cycle deleted in the foreground";
	case GC_DROP:
		return "references to owners gone or going removed";
	case GC_RELEASE:
		return "released: no blocking dependents are left";
	default:
		return e->how == PK_WRITE_PROPAGATE_FOREGROUND ? "deleted in the foreground"
		       : e->how == PK_WRITE_PROPAGATE_ORPHAN   ? "deleted, orphaning"
							       : "deleted";
	}
}

/*
 * After a write of obj (kind) in this pass, what the pass's next round looks
 * at, as the write's events would ask the next pass: a deleted object's
 * dependents, and the owners it blocked (all its owners when it unblocked
 * them).  A chain or a cycle deleted in the foreground goes in one pass, not
 * one level per pass.
 */
static void again(struct gc_pass *p, const char *kind, const json_t *obj, bool deleted,
		  bool unblocked)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	const char *ns = t && t->namespaced ? pk_namespace(obj) : "";
	json_t *r;
	size_t i;

	if (!p->again || (!deleted && !unblocked))
		return;
	if (deleted)
		queue_owner(p->again, pk_get_string(obj, "metadata.uid"), kind, ns, pk_name(obj),
			    LOOK_DEPENDENTS);
	json_array_foreach(pk_get(obj, "metadata.ownerReferences"), i, r)
	{
		const char *k = json_string_value(json_object_get(r, "kind"));

		if (unblocked || json_is_true(json_object_get(r, "blockOwnerDeletion")))
			queue_owner(p->again, json_string_value(json_object_get(r, "uid")), k,
				    owner_ns(pk_type_by_kind(k), ns),
				    json_string_value(json_object_get(r, "name")), LOOK_RELEASE);
	}
}

/* What one write came to: logged, and what it makes worth a look. */
static void outcome(struct gc_pass *p, const struct gc_edit *e, const struct pk_write_result *res)
{
	const char *kind = e->type->kind, *name = pk_name(e->held);

	if (res->error == 0) {
		const char *ns = e->type->namespaced ? pk_namespace(e->held) : "";

		ctl_log(p->ctl, 2, "garbage collection: %s %s%s%s %s", kind, ns, *ns ? "/" : "",
			name, edit_what(e));
		/* a release drops the last finalizer: the owner goes */
		again(p, kind, e->held, e->op == GC_DELETE || e->op == GC_RELEASE,
		      e->op == GC_UNBLOCK);
		p->written++;
	} else if (res->error == -ENOENT || res->error == -PK_WRITE_ECONFLICT) {
		ctl_log(p->ctl, 3, "garbage collection: %s %s: %s, looked at again on its event",
			kind, name, res->error == -ENOENT ? "gone" : "changed");
	} else {
		ctl_log(p->ctl, 1, "garbage collection: %s %s: %s", kind, name,
			res->message ? res->message : pk_write_strerror(res->error));
	}
	if (res->error == 0 && e->op == GC_DELETE) {
		CTL_COUNT(p->ctl, gc_deleted);
		/* an owner recreated under the same name wants its objects back */
		ctl_reconcile_owner_of(p->ctl, e->held);
	}
}

/* Commit the batch: one result per edit, in order (one object each). */
static void flush(struct gc_pass *p)
{
	const struct pk_write_result *res = NULL;
	size_t nres = 0;

	if (p->n && ctl_commit(p->ctl, &res, &nres) < 0)
		ctl_log(p->ctl, 1, "garbage collection: writing %zu edits failed", p->n);
	for (size_t i = 0; i < p->n; i++) {
		struct gc_edit *e = &p->edits[i];

		if (i < nres && !e->lost)
			outcome(p, e, &res[i]);
		json_decref(e->held);
		json_decref(e->drop);
	}
	p->n = 0;
	pk_map_free(&p->queued);
	memset(&p->queued, 0, sizeof(p->queued));
}

/* Whether anything names obj as its owner. */
static bool has_dependents(struct pk_ctl *ctl, const json_t *obj)
{
	json_t *deps = NULL;
	const char *uid = pk_get_string(obj, "metadata.uid");
	bool any =
	    uid && pk_store_dependents(ctl->store, uid, &deps) == 0 && json_array_size(deps) > 0;

	json_decref(deps);
	return any;
}

/* What to do with a dependent no owner of which is solid. */
static enum pk_write_propagation policy_of(struct pk_ctl *ctl, const json_t *obj, bool waiting)
{
	if (waiting && has_dependents(ctl, obj))
		return PK_WRITE_PROPAGATE_FOREGROUND;
	if (has_finalizer(obj, ORPHAN_FINALIZER))
		return PK_WRITE_PROPAGATE_ORPHAN;
	if (has_finalizer(obj, PK_STORE_FOREGROUND_FINALIZER))
		return PK_WRITE_PROPAGATE_FOREGROUND;
	return PK_WRITE_PROPAGATE_BACKGROUND;
}

/* Whether a dependent of obj is itself waiting for its dependents: deleting
 * obj in the foreground could close a cycle of owners that wait on each other. */
static bool dependent_waiting(struct pk_ctl *ctl, const json_t *obj)
{
	json_t *deps = NULL, *d;
	const char *uid = pk_get_string(obj, "metadata.uid");
	bool any = false;
	size_t i;

	if (!uid || pk_store_dependents(ctl->store, uid, &deps) < 0)
		return false;
	json_array_foreach(deps, i, d)
	{
		json_t *dep = NULL;

		if (any || pk_store_get(ctl->store, pk_type_by_kind(pk_get_string(d, "kind")),
					json_string_value(json_object_get(d, "namespace")),
					json_string_value(json_object_get(d, "name")), &dep) < 0)
			continue;
		any = deleting_dependents(dep);
		json_decref(dep);
	}
	json_decref(deps);
	return any;
}

static bool blocks_an_owner(const json_t *obj)
{
	json_t *r;
	size_t i;

	json_array_foreach(pk_get(obj, "metadata.ownerReferences"), i, r)
	{
		if (json_is_true(json_object_get(r, "blockOwnerDeletion")))
			return true;
	}
	return false;
}

/*
 * A dependent none of whose owners is solid: deleted as policy_of() says;
 * as upstream's collector does, one deleted in the foreground for a waiting
 * owner while one of its own dependents waits too first has its references
 * made non-blocking (else each would wait for the other forever).
 */
static void delete_dependent(struct gc_pass *p, const char *kind, const json_t *obj, bool waiting)
{
	enum pk_write_propagation how = policy_of(p->ctl, obj, waiting);

	if (how == PK_WRITE_PROPAGATE_FOREGROUND && waiting && blocks_an_owner(obj) &&
	    dependent_waiting(p->ctl, obj))
		edit(p, GC_UNBLOCK, kind, obj, 0, NULL);
	else
		edit(p, GC_DELETE, kind, obj, how, NULL);
}

/* Judge one dependent (of kind) as read. */
static void judge(struct gc_pass *p, const char *kind, const json_t *obj)
{
	const struct pk_type *t = pk_type_by_kind(kind);
	const char *ns = t && t->namespaced ? pk_namespace(obj) : "";
	json_t *refs = pk_get(obj, "metadata.ownerReferences"), *drop;
	size_t n = json_array_size(refs), solid = 0, waiting = 0;
	enum owner_state *states;

	if (!t || !n || pk_get(obj, "metadata.deletionTimestamp") || !pk_name(obj))
		return;
	if (!(states = calloc(n, sizeof(*states))))
		return;
	if (classify(p, kind, obj, ns, states) == OWNER_UNRESOLVED) {
		free(states);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		solid += states[i] == OWNER_SOLID;
		waiting += states[i] == OWNER_WAITING;
	}
	if (!solid) {
		delete_dependent(p, kind, obj, waiting > 0);
	} else if (solid < n && (drop = json_array())) {
		for (size_t i = 0; i < n; i++)
			if (states[i] != OWNER_SOLID)
				json_array_append(drop,
						  json_object_get(json_array_get(refs, i), "uid"));
		edit(p, GC_DROP, kind, obj, 0, drop);
	}
	free(states);
}

/* Judge a dependent once per pass: obj as read (NULL: read it now). */
static void judge_once(struct gc_pass *p, const char *kind, const char *ns, const char *name,
		       const json_t *obj)
{
	char key[CTL_KEY_MAX];
	json_t *got = NULL;

	if (snprintf(key, sizeof(key), "%s" SEP "%s" SEP "%s", kind, ns, name) >=
		(int)sizeof(key) ||
	    pk_map_get(&p->seen, key) || pk_map_put(&p->seen, key, (void *)1) < 0)
		return;
	if (!obj && pk_store_get(p->ctl->store, pk_type_by_kind(kind), ns, name, &got) < 0)
		return;
	judge(p, kind, obj ? obj : got);
	json_decref(got);
}

/* Split a queued key into its n parts (in place). */
static bool split_key(char *key, char **parts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		parts[i] = key;
		key = strchr(key, SEP[0]);
		if ((key == NULL) != (i == n - 1))
			return false;
		if (key)
			*key++ = '\0';
	}
	return true;
}

/* The dependents of the owner uid, each judged. */
static void judge_dependents(struct gc_pass *p, const char *uid)
{
	json_t *deps = NULL, *d;
	size_t i;

	if (pk_store_dependents(p->ctl->store, uid, &deps) < 0)
		return;
	json_array_foreach(deps, i, d)
	    judge_once(p, json_string_value(json_object_get(d, "kind")),
		       json_string_value(json_object_get(d, "namespace")),
		       json_string_value(json_object_get(d, "name")), NULL);
	json_decref(deps);
}

/* Whether a dependent of uid still blocks its owner's deletion. */
static bool blocked(struct pk_ctl *ctl, const char *uid)
{
	json_t *deps = NULL, *d, *r;
	bool block = false;
	size_t i, k;

	if (pk_store_dependents(ctl->store, uid, &deps) < 0)
		return true;
	json_array_foreach(deps, i, d)
	{
		json_t *obj = NULL;

		if (block || pk_store_get(ctl->store, pk_type_by_kind(pk_get_string(d, "kind")),
					  json_string_value(json_object_get(d, "namespace")),
					  json_string_value(json_object_get(d, "name")), &obj) < 0)
			continue;
		json_array_foreach(pk_get(obj, "metadata.ownerReferences"), k, r)
		{
			if (strcmp(json_string_value(json_object_get(r, "uid")) ?: "", uid) == 0 &&
			    json_is_true(json_object_get(r, "blockOwnerDeletion")))
				block = true;
			if (block)
				ctl_log(ctl, 3, "garbage collection: %s waits for %s %s", uid,
					json_string_value(json_object_get(d, "kind")),
					json_string_value(json_object_get(d, "name")));
		}
		json_decref(obj);
	}
	json_decref(deps);
	return block;
}

/* An owner deleted in the foreground: its finalizer goes once nothing blocks it. */
static void release(struct gc_pass *p, const char *uid, const char *kind, const char *ns,
		    const char *name)
{
	json_t *owner = NULL;

	if (pk_store_get(p->ctl->store, pk_type_by_kind(kind), ns, name, &owner) < 0)
		return;
	if (strcmp(pk_get_string(owner, "metadata.uid") ?: "", uid) == 0 &&
	    deleting_dependents(owner) && !blocked(p->ctl, uid))
		edit(p, GC_RELEASE, kind, owner, 0, NULL);
	json_decref(owner);
}

/*
 * After the listing at start: the objects with ownerReferences and those
 * deleted in the foreground, from the store's indexes (never a scan of every
 * object): dependents judged, foreground owners noted.
 */
static void full_pass(struct gc_pass *p, struct pk_map *owners)
{
	json_t *cands = NULL, *c;
	size_t i;

	if (pk_store_gc_candidates(p->ctl->store, &cands) < 0)
		return;
	json_array_foreach(cands, i, c)
	{
		const char *kind = json_string_value(json_object_get(c, "kind")),
			   *ns = json_string_value(json_object_get(c, "namespace")),
			   *name = json_string_value(json_object_get(c, "name"));
		const struct pk_type *t = pk_type_by_kind(kind);
		json_t *obj = NULL;

		if (!t || pk_store_get(p->ctl->store, t, ns, name, &obj) < 0)
			continue;
		if (deleting_dependents(obj))
			queue_owner(owners, pk_get_string(obj, "metadata.uid"), t->kind, ns, name,
				    LOOK_DEPENDENTS | LOOK_RELEASE);
		judge_once(p, t->kind, ns, name, obj);
		json_decref(obj);
	}
	json_decref(cands);
}

/*
 * One round over the owners at hand: their dependents judged, then each
 * released when nothing blocks it.  What the round's writes make worth a
 * look (again()) replaces *owners for the next round; what was judged and
 * looked up is forgotten, since the writes changed it.
 */
/* The Warning Events judging noted, created before the writes that follow. */
static void report(struct gc_pass *p)
{
	if (p->events)
		ctl_record_flush(p->ctl);
	p->events = false;
}

static void owners_round(struct gc_pass *p, struct pk_map *owners)
{
	struct pk_map next = {0};
	const char *key;
	void *v;

	p->again = &next;
	for (size_t i = 0; pk_map_next(owners, &i, &key, &v);) {
		char buf[CTL_KEY_MAX + 64], *part[4];

		snprintf(buf, sizeof(buf), "%s", key);
		if (((uintptr_t)v & LOOK_DEPENDENTS) && split_key(buf, part, 4))
			judge_dependents(p, part[0]);
	}
	report(p);
	flush(p);
	for (size_t i = 0; pk_map_next(owners, &i, &key, &v);) {
		char buf[CTL_KEY_MAX + 64], *part[4];

		snprintf(buf, sizeof(buf), "%s", key);
		if (((uintptr_t)v & LOOK_RELEASE) && split_key(buf, part, 4))
			release(p, part[0], part[1], part[2], part[3]);
	}
	flush(p);
	p->again = NULL;
	pk_map_free(owners);
	*owners = next;
	pk_map_free(&p->memo);
	pk_map_free(&p->seen);
	memset(&p->memo, 0, sizeof(p->memo));
	memset(&p->seen, 0, sizeof(p->seen));
}

int ctl_gc_run(struct pk_ctl *ctl)
{
	struct ctl_gc *gc = ctl->gc;
	struct pk_map owners, deps;
	struct gc_pass *p;
	const char *key;
	void *v;

	if (!gc || (!gc->full && !gc->owners.live && !gc->deps.live))
		return 0;
	if (!(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	p->ctl = ctl;
	owners = gc->owners;
	deps = gc->deps;
	memset(&gc->owners, 0, sizeof(gc->owners));
	gc->deps = (struct pk_map)PK_MAP_INIT(held_free);
	if (gc->full)
		full_pass(p, &owners);
	gc->full = false;
	for (size_t i = 0; pk_map_next(&deps, &i, &key, &v);) {
		char buf[CTL_KEY_MAX], *part[3];

		snprintf(buf, sizeof(buf), "%s", key);
		if (split_key(buf, part, 3))
			judge_once(p, part[0], part[1], part[2], v);
	}
	report(p);
	/* the first round also writes what judging the dependents above decided */
	for (int round = 0; (owners.live || p->n) && round < GC_ROUNDS; round++)
		owners_round(p, &owners);
	flush(p);
	/* past the rounds: the next pass goes on */
	for (size_t i = 0; pk_map_next(&owners, &i, &key, &v);)
		pk_map_put(&gc->owners, key,
			   (void *)((uintptr_t)v | (uintptr_t)pk_map_get(&gc->owners, key)));
	int written = p->written;

	pk_map_free(&owners);
	pk_map_free(&deps);
	pk_map_free(&p->memo);
	pk_map_free(&p->seen);
	pk_map_free(&p->queued);
	free(p);
	return written;
}

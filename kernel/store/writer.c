/* SPDX-License-Identifier: Apache-2.0 */
/*
 * writer.c — the store's backend of the write path (kernel/write/writer.h):
 * standalone mode writes podkerneld's own store.
 *
 * A batch becomes one pk_store_edit_batch() call: every item is one
 * read-modify-write of its object under its resourceVersion and uid
 * preconditions (a create is a create, a bare deletion a delete with its
 * propagation), all of them in one SQLite transaction and one fsync; an
 * item that fails is undone alone.  Watchers see each written object's new state as one
 * MODIFIED event (then DELETED for an eviction), committed together.
 * Items that depend on others (a binding on the claims its pod uses) are
 * edited after every item without dependencies, and fail with a conflict
 * when one of theirs failed: a pod is never bound without its claims.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/store/store.h"
#include "kernel/write/writer.h"

struct store_backend {
	struct pk_store *store;
	struct pk_store_edit *edits;
	size_t cap;
};

struct item_arg {
	const struct pk_write_item *it;
	int64_t now;
	const struct pk_store_edit *edits; /* the batch's edits, in edit order */
	const size_t *pos;		   /* item index -> edit index */
	size_t at;			   /* this item's edit index */
};

static int apply_item(json_t *obj, void *arg)
{
	const struct item_arg *a = arg;
	int r;

	for (size_t i = 0; i < a->it->ndeps; i++) {
		size_t d = a->pos[a->it->deps[i]];

		if (d >= a->at || a->edits[d].rc != 0)
			return -PK_STORE_ECONFLICT;
	}
	r = pk_write_item_apply(a->it, obj, a->now);
	/* the store hands back the current object with its own conflict code */
	return r == -PK_WRITE_ECONFLICT ? -PK_STORE_ECONFLICT : r;
}

static enum pk_propagation propagation_of(enum pk_write_propagation how)
{
	switch (how) {
	case PK_WRITE_PROPAGATE_ORPHAN:
		return PK_PROPAGATE_ORPHAN;
	case PK_WRITE_PROPAGATE_BACKGROUND:
		return PK_PROPAGATE_BACKGROUND;
	case PK_WRITE_PROPAGATE_FOREGROUND:
		return PK_PROPAGATE_FOREGROUND;
	default:
		return PK_PROPAGATE_DEFAULT;
	}
}

/* A deletion and nothing else: the store's delete, with its propagation. */
static bool bare_delete(const struct pk_write_item *it)
{
	return it->evict && !it->node && !it->volume && !it->annotations && !it->nconds &&
	       !it->claim && !it->replace && !it->status && !it->ndeps;
}

static struct pk_store_edit edit_of(const struct pk_write_item *it, struct item_arg *arg)
{
	struct pk_store_edit e = {
	    .op = PK_STORE_EDIT_MODIFY,
	    .kind = it->kind,
	    .ns = it->ns,
	    .name = it->name,
	    .precondition_rv = it->rv,
	    .precondition_uid = it->uid,
	    .apply = apply_item,
	    .arg = arg,
	    .delete_after = it->evict,
	    .apply_shallow = true, /* pk_write_item_apply() */
	};

	if (it->create) {
		e.op = PK_STORE_EDIT_CREATE;
		e.create = it->create;
	} else if (bare_delete(it)) {
		e.op = PK_STORE_EDIT_DELETE;
		e.propagation = propagation_of(it->propagation);
	}
	return e;
}

static int store_commit(void *backend, const struct pk_write_batch *batch,
			struct pk_write_result *results)
{
	struct store_backend *b = backend;
	struct item_arg *args;
	size_t *pos;
	int64_t now = time(NULL);
	int r;

	if (batch->n > b->cap) {
		struct pk_store_edit *e = realloc(b->edits, batch->n * sizeof(*e));

		if (!e)
			return -ENOMEM;
		b->edits = e;
		b->cap = batch->n;
	}
	args = calloc(batch->n, sizeof(*args));
	pos = calloc(batch->n, sizeof(*pos));
	if (!args || !pos) {
		free(args);
		free(pos);
		return -ENOMEM;
	}
	/* items without dependencies first */
	for (size_t pass = 0, k = 0; pass < 2; pass++)
		for (size_t i = 0; i < batch->n; i++)
			if ((batch->items[i].ndeps > 0) == (pass == 1))
				pos[i] = k++;
	for (size_t i = 0; i < batch->n; i++) {
		const struct pk_write_item *it = &batch->items[i];
		size_t e = pos[i];

		args[e] =
		    (struct item_arg){.it = it, .now = now, .edits = b->edits, .pos = pos, .at = e};
		b->edits[e] = edit_of(it, &args[e]);
	}
	r = pk_store_edit_batch(b->store, b->edits, batch->n);
	for (size_t i = 0; i < batch->n; i++) {
		int rc = b->edits[pos[i]].rc;

		results[i].error = rc == -PK_STORE_ECONFLICT ? -PK_WRITE_ECONFLICT : rc;
		results[i].object = b->edits[pos[i]].object;
		if (rc != 0 && b->edits[pos[i]].message[0])
			results[i].message = strdup(b->edits[pos[i]].message);
	}
	free(args);
	free(pos);
	return r;
}

static int store_get(void *backend, const struct pk_type *kind, const char *ns, const char *name,
		     json_t **ret)
{
	struct store_backend *b = backend;

	return pk_store_get(b->store, kind, ns, name, ret);
}

static void store_free(void *backend)
{
	struct store_backend *b = backend;

	if (!b)
		return;
	free(b->edits);
	free(b);
}

static const struct pk_writer_ops store_ops = {
    .name = "store",
    .commit = store_commit,
    .get = store_get,
    .free = store_free,
};

int pk_writer_store_new(struct pk_store *store, struct pk_writer **ret)
{
	struct store_backend *b;
	int r;

	if (!store || !ret)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->store = store;
	r = pk_writer_new(&store_ops, b, ret);
	if (r < 0)
		store_free(b);
	return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues_scratch.c — the queue controller's pass on objects that live in no
 * store of podkernel's (attach mode's mirror of a cluster): the objects are
 * created in a scratch store under $TMPDIR, group by group, the pass runs on
 * it as it runs standalone, and the caller gets the objects the pass may
 * write as they were before it and after it, to write the difference back
 * where the objects live.  The store is removed before the call returns.
 *
 * The store's creation clock keeps the caller's order: objects are created
 * one second apart, in the order given, from a year ago on; the queued
 * workloads (the last group, in their queue order) get their own creation
 * times, so what the pass writes of their order (queue.podkernel.dev/
 * queue-order) is the same from pass to pass.
 */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/controllers/controllers-internal.h"

/* The scratch store's creation clock: one second apart, in creation order. */
struct clock {
	int64_t next;
	int64_t *times; /* while the last group is created: its objects', in order */
	size_t n, at;
};

static int64_t clock_tick(void *arg)
{
	struct clock *c = arg;

	return c->times && c->at < c->n ? c->times[c->at++] : c->next++;
}

/* The creation times of objs (in queue order, never going back) into c; none: no memory. */
static void clock_times(struct clock *c, const json_t *objs)
{
	size_t n = json_array_size(objs);
	int64_t last = 0;

	c->times = calloc(n ? n : 1, sizeof(*c->times));
	c->n = c->times ? n : 0;
	c->at = 0;
	for (size_t i = 0; i < c->n; i++) {
		const char *t =
		    ctl_at_string(json_array_get(objs, i), "metadata", "creationTimestamp");
		int64_t sec = 0;

		c->times[i] = last = t && pk_time_parse(t, &sec) == 0 && sec > last ? sec : last;
	}
}

/* The object as created in the scratch store: its identity is the store's. */
static json_t *scratch_copy(const json_t *obj)
{
	json_t *c = json_deep_copy(obj), *meta = json_object_get(c, "metadata");

	if (!json_is_object(meta)) {
		json_decref(c);
		return NULL;
	}
	json_object_del(meta, "resourceVersion");
	json_object_del(meta, "uid");
	json_object_del(meta, "managedFields");
	json_object_del(meta, "generation");
	json_object_del(meta, "deletionTimestamp");
	return c;
}

/* Create one group's objects in one transaction; the refused ones are told and left out. */
static int create_group(const struct pk_queues_scratch *s, struct pk_store *st, const json_t *objs)
{
	size_t n = json_array_size(objs), i;
	json_t **v = calloc(n ? n : 1, sizeof(*v));
	int *rcs = calloc(n ? n : 1, sizeof(*rcs)), r = v && rcs ? 0 : -ENOMEM;
	json_t *o;

	json_array_foreach(r == 0 ? objs : NULL, i, o) v[i] = scratch_copy(o);
	if (r == 0)
		r = pk_store_create_batch(st, v, n, rcs);
	for (i = 0; r == 0 && i < n; i++)
		if (rcs[i] != 0 && rcs[i] != -EEXIST && s->refused)
			s->refused(s->refused_arg, json_array_get(objs, i), rcs[i]);
	for (i = 0; v && i < n; i++)
		json_decref(v[i]);
	free(v);
	free(rcs);
	return r;
}

/* The objects of the written kinds, "Kind/ns/name" -> object. */
static json_t *snapshot(const struct pk_queues_scratch *s, struct pk_store *st)
{
	json_t *snap = json_object(), *items, *o;
	char key[800];
	size_t i;

	for (const struct pk_type *const *k = s->written_kinds; snap && k && *k; k++) {
		items = NULL;
		if (pk_store_list(st, *k, NULL, NULL, &items, NULL, NULL) < 0) {
			json_decref(snap);
			return NULL;
		}
		json_array_foreach(items, i, o)
		{
			pk_obj_key(key, sizeof(key), *k, pk_namespace(o), pk_name(o));
			json_object_set(snap, key, o);
		}
		json_decref(items);
	}
	return snap;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int pk_queues_pass_scratch(const struct pk_queues_scratch *s, const struct pk_queues_pass_opts *o,
			   json_t **ret_before, json_t **ret_after, char *err, size_t errlen)
{
	struct clock clk = {.next = (int64_t)time(NULL) - 86400 * 365};
	struct pk_store_open_opts opts = {.creation_clock = clock_tick, .creation_clock_arg = &clk};
	const char *tmp = getenv("TMPDIR");
	struct pk_store *st = NULL;
	json_t *before = NULL, *after = NULL;
	char dir[512];
	int r;

	snprintf(dir, sizeof(dir), "%s/podkernel-queues-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		r = -errno;
		snprintf(err, errlen, "a scratch store in %s: %s", dir, pk_errno_text(-r));
		return r;
	}
	r = pk_store_open_opts(dir, &opts, &st, err, errlen);
	for (size_t g = 0; r == 0 && g < s->ngroups; g++) {
		if (g + 1 == s->ngroups)
			clock_times(&clk, s->groups[g]);
		r = create_group(s, st, s->groups[g]);
	}
	free(clk.times);
	if (r == 0 && !(before = snapshot(s, st)))
		r = -ENOMEM;
	if (r == 0)
		r = pk_queues_pass_opts(st, o);
	if (r == 0 && !(after = snapshot(s, st)))
		r = -ENOMEM;
	if (st)
		pk_store_close(st);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (r < 0) {
		json_decref(before);
		json_decref(after);
		return r;
	}
	*ret_before = before;
	*ret_after = after;
	return 0;
}

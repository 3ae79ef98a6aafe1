/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline.c — scheduling a fixed set of objects to quiescence, as
 * `podctl schedule` and the scenario tests do.  The rounds are the
 * appliance's (pk_sched_round()), and each cycle's actions are written as
 * the appliance writes them (pk_sched_result_write()), through a writer
 * whose backend is the objects in memory (pk_writer_memory_new()): a copy of
 * the caller's objects, or the caller's own array in place.  Only the kinds
 * scheduling changes (pods, groups, claims) are copied and written, the rest
 * (Nodes are most of a cluster dump) are shared with the caller.  Unbound
 * pods of another spec.schedulerName are left alone.  Backoff
 * waits are skipped on a virtual clock: when the only eligible roots are
 * backing off, the clock jumps to the earliest retry.  The loop ends when a
 * cycle finds nothing eligible and nothing waiting.
 *
 * First the caller's controllers run once on the objects, through the same
 * writer (struct pk_sched_opts.controllers: podctl schedule runs the
 * resource claim controller of kernel/controllers/); the scheduling core
 * runs none of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/sched/sched-core.h"
#include "kernel/write/writer.h"

#define SC_OFFLINE_MAX_CYCLES 1000000

static bool scheduling_changes(enum pk_kind kind)
{
	return kind == PK_KIND_POD || kind == PK_KIND_POD_GROUP ||
	       kind == PK_KIND_COMPOSITE_POD_GROUP || kind == PK_KIND_RESOURCE_CLAIM ||
	       kind == PK_KIND_PERSISTENT_VOLUME_CLAIM;
}

/*
 * The output array: a private copy of every object scheduling may change,
 * and a shared reference to every other.
 */
static int copy_objects(const json_t *objects, json_t **ret_out)
{
	json_t *out = json_array(), *o;
	size_t i;

	if (!out)
		return -ENOMEM;
	json_array_foreach(objects, i, o)
	{
		if (!scheduling_changes(pk_kind_of(o))) {
			if (json_array_append(out, o) < 0)
				goto nomem;
			continue;
		}
		if (json_array_append_new(out, json_deep_copy(o)) < 0)
			goto nomem;
	}
	*ret_out = out;
	return 0;
nomem:
	json_decref(out);
	return -ENOMEM;
}

/*
 * A writer over objects: the kinds scheduling changes, conditions at now
 * (seconds); shared: an object is copied at its first change.
 */
static bool holds_type(const struct pk_type *t)
{
	return scheduling_changes(t->pk);
}

static int offline_writer(json_t *objects, int64_t now, bool shared, struct pk_writer **ret)
{
	struct pk_writer_memory_opts o = {.holds = holds_type, .now = now, .shared = shared};

	return pk_writer_memory_new(objects, &o, ret);
}

void sc_carry_index(struct pk_sched *s, const json_t *gone, const json_t *came, size_t n,
		    const enum pk_kind *kinds)
{
	/* gone NULL, or a change of a kind the writer holds and the carry ignores: lost */
	bool whole = pk_sched_reads(&pk_type_resource_claim) &&
		     pk_sched_reads(&pk_type_persistent_volume_claim);

	if (s->windex && whole && gone &&
	    pk_writer_memory_index_moved(s->windex, holds_type, gone, came, n, kinds) == 0)
		return;
	pk_writer_memory_index_free(s->windex);
	s->windex = NULL;
}

/*
 * A kept scheduler's writer (shared): its index kept with the scheduler, so
 * that a run indexes only the objects after objects[0..from), which the last
 * run's writer left indexed.
 */
static int kept_writer(struct pk_sched *s, json_t *objects, size_t from, struct pk_writer **ret)
{
	struct pk_writer_memory_opts o = {
	    .holds = holds_type, .now = (int64_t)time(NULL), .shared = true, .indexed = from};
	int r = s->windex ? 0 : pk_writer_memory_index_new(&s->windex);

	o.index = s->windex;
	return r < 0 ? r : pk_writer_memory_new(objects, &o, ret);
}

/*
 * Commit the open batch; the objects evicted go to preempted (may be NULL).
 * A write about an object the array does not hold changes nothing; any
 * other failure is the run's (-ESTALE: the objects and the scheduler's view
 * of them disagree).
 */
static int commit(struct pk_writer *w, json_t *preempted)
{
	const struct pk_write_batch *batch = pk_writer_batch(w);
	const struct pk_write_result *res = NULL;
	size_t n = 0;
	int r = pk_writer_batch_commit(w, &res, &n);

	for (size_t i = 0; r == 0 && i < n; i++) {
		if (res[i].error == -ENOENT)
			continue;
		if (res[i].error < 0)
			r = res[i].error == -PK_WRITE_ECONFLICT ? -ESTALE : res[i].error;
		else if (batch->items[i].evict && preempted &&
			 json_array_append(preempted, res[i].object) < 0)
			r = -ENOMEM;
	}
	return r;
}

/* One cycle's actions written through w. */
static int write_result(struct pk_writer *w, const struct pk_sched_result *res, json_t *preempted)
{
	int r = pk_writer_batch_begin(w);

	if (r == 0)
		r = pk_sched_result_write(w, res, NULL, NULL);
	return r < 0 ? r : commit(w, preempted);
}

int pk_sched_apply(json_t *objects, const struct pk_sched_result *res, json_t *preempted,
		   int64_t now)
{
	struct pk_writer *w = NULL;
	int r;

	if (!json_is_array(objects) || !res)
		return -EINVAL;
	r = offline_writer(objects, now, false, &w);
	if (r == 0)
		r = write_result(w, res, preempted);
	pk_writer_free(w);
	return r;
}

/* Say which object the field paths of errs (from before on) belong to. */
static void name_errors(struct pk_errors *errs, size_t before, size_t i, const json_t *o)
{
	for (size_t k = before; errs && k < errs->n; k++) {
		char *m = NULL;

		if (asprintf(&m, "items[%zu] (%s %s): %s", i,
			     json_string_value(json_object_get(o, "kind")) ?: "?",
			     pk_name(o) ?: "?", errs->msg[k]) >= 0) {
			free(errs->msg[k]);
			errs->msg[k] = m;
		}
	}
}

/*
 * An unbound pod that names another scheduler in spec.schedulerName is that
 * scheduler's to place: it is left as it is (a bound one still holds its
 * node).  podkernel answers to PK_SCHED_NAME and to the default scheduler's
 * name, as the only scheduler of an offline run.
 */
bool sc_other_scheduler(const json_t *obj)
{
	const json_t *spec = json_object_get(obj, "spec"); /* every object is asked */
	const char *name = json_string_value(json_object_get(spec, "schedulerName"));
	const char *node;

	if (!name || !*name || strcmp(name, "default-scheduler") == 0 ||
	    strcmp(name, PK_SCHED_NAME) == 0)
		return false;
	node = json_string_value(json_object_get(spec, "nodeName"));
	return !(node && *node) && pk_kind_of(obj) == PK_KIND_POD;
}

/*
 * Add every object (an item that is compact text, pk_compact_object, is read
 * back for the moment of its adding).  compact (in place): the objects
 * scheduling never changes (Nodes above all) are only kept to be written out
 * again, so once added each is replaced by its compact text, and the trees of
 * a cluster never coexist with all of the scheduler's own copy.
 */
static int add_all(struct pk_sched *s, json_t *objects, size_t from, bool compact,
		   struct pk_errors *errs)
{
	for (size_t i = from; i < json_array_size(objects); i++) {
		json_t *o = json_array_get(objects, i);
		size_t before = errs ? errs->n : 0;
		bool text = json_is_string(o);
		json_t *tree =
		    text ? json_loadb(json_string_value(o), json_string_length(o), 0, NULL)
			 : json_incref(o);
		int r = !tree			   ? -ENOMEM
			: sc_other_scheduler(tree) ? 0
						   : pk_sched_add(s, tree, errs);

		if (r == 0 && compact && !text && !scheduling_changes(pk_kind_of(tree))) {
			json_t *c = pk_compact_object(tree);

			if (!c || json_array_set_new(objects, i, c) < 0)
				r = -ENOMEM;
		} else if (r < 0 && tree) {
			name_errors(errs, before, i, tree);
		}
		json_decref(tree);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Where an offline round's results go. */
struct offline_sink {
	struct pk_writer *w;
	json_t *pre;
};

static int offline_result(void *arg, const struct pk_sched_result *res, int64_t now_ms)
{
	struct offline_sink *k = arg;

	(void)now_ms;
	return write_result(k->w, res, k->pre);
}

/*
 * Rounds until nothing changes, each cycle's actions written through w; a
 * round that ends with roots in backoff moves the virtual clock to the
 * earliest retry.
 */
static int run_cycles(struct pk_sched *s, struct pk_writer *w, json_t *pre)
{
	struct offline_sink sink = {w, pre};
	struct pk_sched_round_ops ops = {.result = offline_result, .until_quiet = true};
	size_t left = SC_OFFLINE_MAX_CYCLES;
	int64_t clock = 0;

	while (left) {
		struct pk_sched_round round;
		int r;

		ops.max_cycles = left;
		if ((r = pk_sched_round(s, clock, &ops, &sink, &round)) < 0)
			return r;
		left -= round.cycles;
		if (!round.idle || !round.has_retry || round.retry_at_ms <= clock)
			break;
		clock = round.retry_at_ms;
	}
	return 0;
}

/* Where a run writes: a copy of the objects, the objects themselves, or a shared array. */
enum run_mode { RUN_COPY, RUN_IN_PLACE, RUN_SHARED };

/* A new array with the items of objects (the objects shared). */
static int share_objects(const json_t *objects, json_t **ret_out)
{
	json_t *out = json_array();

	if (!out || json_array_extend(out, (json_t *)objects) < 0) {
		json_decref(out);
		return -ENOMEM;
	}
	*ret_out = out;
	return 0;
}

/*
 * objects scheduled into out (objects itself when in place, a copy, or an
 * array sharing each object until it changes), written through an
 * in-memory writer; conditions at the wall clock.
 */
static int run(const json_t *objects, enum run_mode mode, const struct pk_sched_opts *opts,
	       json_t **ret_objects, json_t **ret_preempted, struct pk_errors *errs)
{
	bool in_place = mode == RUN_IN_PLACE;
	struct pk_sched *s = NULL;
	struct pk_writer *w = NULL;
	json_t *out = NULL, *pre = json_array();
	int r;

	if (!json_is_array(objects) || !pre) {
		json_decref(pre);
		return -EINVAL;
	}
	r = pk_sched_new(opts, &s);
	if (r == 0 && in_place)
		out = json_incref((json_t *)objects);
	else if (r == 0 && mode == RUN_SHARED)
		r = share_objects(objects, &out);
	else if (r == 0)
		r = copy_objects(objects, &out);
	if (r == 0)
		r = offline_writer(out, (int64_t)time(NULL), mode == RUN_SHARED, &w);
	if (r == 0 && opts && opts->controllers)
		r = opts->controllers(opts->controllers_arg, out, w);
	if (r == 0)
		r = add_all(s, out, 0, in_place, errs);
	if (r == 0) {
		sc_cons_complete(s);
		r = run_cycles(s, w, pre);
	}
	if (r == 0) {
		if (ret_objects)
			*ret_objects = json_incref(out);
		if (ret_preempted)
			*ret_preempted = json_incref(pre);
	}
	pk_writer_free(w);
	json_decref(out);
	json_decref(pre);
	pk_sched_free(s);
	return r;
}

int pk_sched_run(const json_t *objects, const struct pk_sched_opts *opts, json_t **ret_objects,
		 json_t **ret_preempted, struct pk_errors *errs)
{
	return run(objects, RUN_COPY, opts, ret_objects, ret_preempted, errs);
}

int pk_sched_run_shared(const json_t *objects, const struct pk_sched_opts *opts,
			json_t **ret_objects, json_t **ret_preempted, struct pk_errors *errs)
{
	return run(objects, RUN_SHARED, opts, ret_objects, ret_preempted, errs);
}

int pk_sched_run_in_place(json_t *objects, const struct pk_sched_opts *opts, json_t **ret_preempted,
			  struct pk_errors *errs)
{
	return run(objects, RUN_IN_PLACE, opts, NULL, ret_preempted, errs);
}

/* Whether every pod of objects is bound (kinds: the items' kinds, or NULL). */
static bool all_bound(const json_t *objects, const enum pk_kind *kinds)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o)
	{
		if (kinds && kinds[i] != PK_KIND_POD)
			continue;
		if (!json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName")) &&
		    (kinds || pk_kind_of(o) == PK_KIND_POD))
			return false;
	}
	return true;
}

/*
 * The run of a kept scheduler (pk_sched_run_kept): s holds objects[0..from)
 * as a run left them; the controllers' writes, the rest of the objects
 * added, and the cycles, into out and pre.  -EAGAIN, s untouched: the
 * controllers changed an object s holds; 1: the run went well but s is not
 * to be kept: it made objects s does not hold, or left pods waiting (their
 * place in the queue is not a new scheduler's).
 */
static int run_kept(struct pk_sched *s, const json_t *objects, size_t from, json_t *out,
		    json_t *pre, struct pk_errors *errs)
{
	const struct pk_sched_opts *opts = &s->opts;
	struct pk_writer *w = NULL;
	int r = kept_writer(s, out, from, &w);

	if (r == 0 && opts->controllers)
		r = opts->controllers(opts->controllers_arg, out, w);
	for (size_t i = 0; r == 0 && i < from; i++)
		if (json_array_get(out, i) != json_array_get(objects, i))
			r = -EAGAIN;
	if (r == 0) {
		/* what a new scheduler starts from: the fit strategy's scan and caches */
		s->sample_next = 0;
		if (s->ops->state_size)
			memset(s->ops_state, 0, s->ops->state_size);
		r = add_all(s, out, from, false, errs);
	}
	if (r == 0) {
		size_t added = json_array_size(out);

		sc_cons_complete(s);
		r = run_cycles(s, w, pre);
		if (r == 0 && (json_array_size(out) != added ||
			       !all_bound(out, pk_writer_memory_kinds(w, out))))
			r = 1; /* it made objects s does not hold, or left pods waiting */
	}
	pk_writer_free(w);
	if (r != 0) { /* the index is of out, which s does not hold */
		pk_writer_memory_index_free(s->windex);
		s->windex = NULL;
	}
	return r;
}

int pk_sched_run_kept(struct pk_sched **kept, const json_t *objects, size_t from,
		      const struct pk_sched_opts *opts, json_t **ret_objects,
		      json_t **ret_preempted, struct pk_errors *errs)
{
	json_t *out = NULL, *pre = NULL;
	int r;

	if (!kept || !json_is_array(objects) || from > json_array_size(objects) || (!*kept && from))
		return -EINVAL;
	r = *kept ? 0 : pk_sched_new(opts, kept);
	if (r == 0)
		r = share_objects(objects, &out);
	if (r == 0 && !(pre = json_array()))
		r = -ENOMEM;
	if (r == 0)
		r = run_kept(*kept, objects, from, out, pre, errs);
	if (r >= 0) {
		*ret_objects = json_incref(out);
		*ret_preempted = json_incref(pre);
	}
	if (r == 0 && json_array_size(pre))
		r = 1; /* preempted pods left out: not what s holds */
	if (r == 1) {
		pk_sched_free(*kept);
		*kept = NULL;
		r = 0;
	} else if (r < 0 && r != -EAGAIN) {
		pk_sched_free(*kept);
		*kept = NULL;
	}
	json_decref(out);
	json_decref(pre);
	return r;
}

/* errs' messages after those of into (the run that counts). */
static void errors_move(struct pk_errors *into, struct pk_errors *errs)
{
	for (size_t i = 0; into && i < errs->n; i++)
		pk_errors_add(into, "%s", errs->msg[i]);
	pk_errors_clear(errs);
}

int pk_sched_run_carried(struct pk_sched **kept, const json_t *held, const json_t *objects,
			 size_t from, const struct pk_sched_opts *opts, json_t **ret_objects,
			 json_t **ret_preempted, struct pk_errors *errs)
{
	struct pk_errors mine = {0};
	int r;

	if (!kept || !json_is_array(objects) || from > json_array_size(objects))
		return -EINVAL;
	r = *kept && json_is_array(held) ? sc_carry(*kept, held, objects, from, &mine) : -ESTALE;
	if (r == 0)
		r = pk_sched_run_kept(kept, objects, from, opts, ret_objects, ret_preempted, &mine);
	if (r == 0 && *kept) {
		errors_move(errs, &mine); /* every pod bound, nothing preempted or made */
		return 1;
	}
	if (r == 0) { /* a run a new scheduler may decide otherwise: it decides */
		json_decref(*ret_objects);
		json_decref(*ret_preempted);
		*ret_objects = *ret_preempted = NULL;
	}
	pk_errors_clear(&mine);
	pk_sched_free(*kept);
	*kept = NULL;
	return pk_sched_run_kept(kept, objects, 0, opts, ret_objects, ret_preempted, errs);
}

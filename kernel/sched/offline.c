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
 * First, as kube-controller-manager's resource claim controller would (and
 * through the same writer), a pod claim naming a ResourceClaimTemplate of
 * the input gets its
 * ResourceClaim (named "<pod>-<pod claim>-" and five characters derived from
 * the pod's namespace, name and claim, so a run is reproducible; owned by
 * the pod; the template's labels, annotations and spec) and the pod's
 * status.resourceClaimStatuses records it; a PodGroup's claim naming a
 * template gets one claim for the group the same way ("<group>-<claim>-",
 * owned by the PodGroup, recorded in its status).  A template not in the
 * input makes nothing: the pod waits for its claim.
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

static json_t *find_template(const json_t *objects, const char *ns, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o) if (pk_kind_of(o) == PK_KIND_RESOURCE_CLAIM_TEMPLATE &&
					      strcmp(pk_namespace(o), ns) == 0 &&
					      strcmp(pk_name(o) ?: "", name) == 0) return o;
	return NULL;
}

/*
 * The claim of claim pcn of pod (a Pod or a PodGroup) from template t (new
 * reference): named "<pod>-<claim>-" and five characters derived from the
 * pod's namespace, name and claim, so a run is reproducible.
 */
static json_t *template_claim(const json_t *pod, const char *pcn, const json_t *t)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	uint64_t h =
	    pk_fnv1a(pk_fnv1a(pk_fnv1a(PK_FNV1A_INIT, pk_namespace(pod)), pk_name(pod)), pcn);
	char name[320], suffix[6];

	for (int i = 0; i < 5; i++, h /= sizeof(alphabet) - 1)
		suffix[i] = alphabet[h % (sizeof(alphabet) - 1)];
	suffix[5] = '\0';
	snprintf(name, sizeof(name), "%s-%s-%s", pk_name(pod), pcn, suffix);
	return pk_claim_from_template(pod, pcn, t, name, NULL);
}

/* Whether pod's claim name is recorded in status (a status object, or NULL). */
static bool claim_recorded(const json_t *status, const char *name)
{
	size_t i;
	json_t *x;

	json_array_foreach(json_object_get(status, "resourceClaimStatuses"), i,
			   x) if (strcmp(pk_get_string(x, "name") ?: "", name) == 0) return true;
	return false;
}

/* status (made from pod's when NULL) with claim pcn recorded as claim c. */
static json_t *record_claim(json_t *status, const json_t *pod, const char *pcn, const json_t *c)
{
	json_t *st;

	if (!status) {
		status = json_deep_copy(pk_get(pod, "status"));
		if (!json_is_object(status)) {
			json_decref(status);
			status = json_object();
		}
	}
	st = json_object_get(status, "resourceClaimStatuses");
	if (!json_is_array(st)) {
		st = json_array();
		json_object_set_new(status, "resourceClaimStatuses", st);
	}
	json_array_append_new(
	    st, json_pack("{s:s, s:s}", "name", pcn, "resourceClaimName", pk_name(c)));
	return status;
}

/* pod's claims from templates created, and its status recording them, into w's batch. */
static int pod_claims(struct pk_writer *w, const json_t *objects, const json_t *pod)
{
	struct pk_write_ref ref = {
	    .kind = pk_type_of(pk_kind_of(pod)), .ns = pk_namespace(pod), .name = pk_name(pod)};
	json_t *status = NULL, *pc;
	size_t k;
	int r = 0;

	json_array_foreach(pk_get(pod, "spec.resourceClaims"), k, pc)
	{
		const char *pcn = pk_get_string(pc, "name"),
			   *tn = pk_get_string(pc, "resourceClaimTemplateName");
		json_t *t = tn ? find_template(objects, pk_namespace(pod), tn) : NULL, *c;

		if (!pcn || !t || claim_recorded(status ? status : pk_get(pod, "status"), pcn))
			continue;
		if (!(c = template_claim(pod, pcn, t)) ||
		    !(status = record_claim(status, pod, pcn, c)))
			r = -ENOMEM;
		else
			r = pk_writer_create(w, &pk_type_resource_claim, c);
		json_decref(c);
		if (r < 0)
			break;
	}
	if (r == 0 && status)
		r = pk_writer_status(w, &ref, status);
	json_decref(status);
	return r;
}

/*
 * Claims from templates for the pods and PodGroups of objects, written
 * through w: each claim created (one that exists already is the pod's), then
 * the owner's status.resourceClaimStatuses.
 */
static int template_claims(struct pk_writer *w, json_t *objects)
{
	const struct pk_write_batch *batch = pk_writer_batch(w);
	const struct pk_write_result *res = NULL;
	size_t n = json_array_size(objects), nres = 0;
	int r = pk_writer_batch_begin(w);

	for (size_t i = 0; r == 0 && i < n; i++) {
		const json_t *pod = json_array_get(objects, i);

		if (pk_kind_of(pod) == PK_KIND_POD || pk_kind_of(pod) == PK_KIND_POD_GROUP)
			r = pod_claims(w, objects, pod);
	}
	if (r == 0 && pk_writer_batch_size(w))
		r = pk_writer_batch_commit(w, &res, &nres);
	for (size_t i = 0; r == 0 && i < nres; i++)
		if (res[i].error < 0 && !(batch->items[i].create && res[i].error == -EEXIST))
			r = res[i].error == -PK_WRITE_ECONFLICT ? -ESTALE : res[i].error;
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
static bool other_schedulers(const json_t *obj)
{
	const char *name = pk_get_string(obj, "spec.schedulerName");
	const char *node = pk_get_string(obj, "spec.nodeName");

	return pk_kind_of(obj) == PK_KIND_POD && name && *name && !(node && *node) &&
	       strcmp(name, "default-scheduler") != 0 && strcmp(name, PK_SCHED_NAME) != 0;
}

/*
 * Add every object (an item that is compact text, pk_compact_object, is read
 * back for the moment of its adding).  compact (in place): the objects
 * scheduling never changes (Nodes above all) are only kept to be written out
 * again, so once added each is replaced by its compact text, and the trees of
 * a cluster never coexist with all of the scheduler's own copy.
 */
static int add_all(struct pk_sched *s, json_t *objects, bool compact, struct pk_errors *errs)
{
	size_t i;
	json_t *o;

	json_array_foreach(objects, i, o)
	{
		size_t before = errs ? errs->n : 0;
		bool text = json_is_string(o);
		json_t *tree =
		    text ? json_loadb(json_string_value(o), json_string_length(o), 0, NULL)
			 : json_incref(o);
		int r = !tree ? -ENOMEM : other_schedulers(tree) ? 0 : pk_sched_add(s, tree, errs);

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
	if (r == 0)
		r = template_claims(w, out);
	if (r == 0)
		r = add_all(s, out, in_place, errs);
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c — arrival replays for placement quality (replay.h).
 *
 * The replay owns one scheduler.  An arriving pod is added to it like any
 * pod the appliance sees; then either the scheduler's cycles run until the
 * queue is idle (a strategy places it, on a clock that stays at zero, so no
 * backoff ever expires and a pod that failed is not tried again: with
 * capacity that only shrinks it could not fit later), or the replay lists
 * the nodes sc_filter() accepts, with their free accelerators, CPU and
 * memory, and binds the pod where the caller's policy says, by adding it
 * again with spec.nodeName set.  The accelerators allocated are read from
 * the snapshot's usage, so whatever a strategy does to earlier pods counts.
 * A sequence may carry a gang's PodGroup before its pods (strategy mode):
 * the gang is placed when its last pod arrives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/replay.h"
#include "kernel/sched/sched-common.h"
#include "kernel/sched/sched-core.h"
#include "kernel/sched/sched-filter.h"
#include "kernel/sched/sched-forest.h"
#include "kernel/sched/sched-snapshot.h"

struct pk_replay {
	struct pk_replay_opts opts;
	char *resource;
	struct pk_sched *s;
	struct pk_replay_node *cand; /* policy mode: the candidates of one pod */
	size_t ncand_cap;
	int64_t requested;
	int64_t total; /* accelerators of the cluster, -1: count again (a node came) */
	size_t arrived, bound;
};

int pk_replay_new(const struct pk_replay_opts *opts, struct pk_replay **ret)
{
	struct pk_sched_opts so = {.strategy = opts ? opts->strategy : NULL};
	struct pk_replay *r;
	int err;

	if (!opts || !opts->resource || !*opts->resource)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->total = -1;
	r->opts = *opts;
	r->resource = strdup(opts->resource);
	if (!r->resource) {
		free(r);
		return -ENOMEM;
	}
	r->opts.resource = r->resource;
	err = pk_sched_new(&so, &r->s);
	if (err < 0) {
		pk_replay_free(r);
		return err;
	}
	*ret = r;
	return 0;
}

void pk_replay_free(struct pk_replay *r)
{
	if (!r)
		return;
	pk_sched_free(r->s);
	free(r->cand);
	free(r->resource);
	free(r);
}

int pk_replay_add_node(struct pk_replay *r, json_t *node, struct pk_errors *errs)
{
	r->total = -1;
	return pk_sched_add(r->s, node, errs);
}

/* The resource id of name in the snapshot, or -1 when no object named it. */
static int res_lookup(const struct sc_snapshot *snap, const char *name)
{
	for (int i = 0; i < snap->nres; i++)
		if (snap->res_name[i] && strcmp(snap->res_name[i], name) == 0)
			return i;
	return -1;
}

static void res_ids(const struct pk_replay *r, int ids[PK_REPLAY_DIMS])
{
	ids[PK_REPLAY_ACCEL] = res_lookup(&r->s->snap, r->resource);
	ids[PK_REPLAY_CPU] = res_lookup(&r->s->snap, "cpu");
	ids[PK_REPLAY_MEMORY] = res_lookup(&r->s->snap, "memory");
}

/* Strategy mode: cycles until the queue is idle; the pods they bound. */
static int run_strategy(struct pk_replay *r)
{
	for (;;) {
		struct pk_sched_result *res = NULL;
		int err = pk_sched_cycle(r->s, 0, &res);
		bool idle;

		if (err < 0)
			return err;
		r->bound += res->bound;
		idle = res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED;
		pk_sched_result_free(res);
		if (idle)
			return 0;
	}
}

/* Policy mode: the nodes the filters accept, the policy's choice, the binding. */
static int run_policy(struct pk_replay *r, const struct sc_pod *p, json_t *pod,
		      struct pk_errors *errs)
{
	const struct sc_snapshot *snap = &r->s->snap;
	int ids[PK_REPLAY_DIMS], k, err;
	int64_t req[PK_REPLAY_DIMS];
	size_t n = 0;
	json_t *copy, *spec;

	if (r->ncand_cap < snap->nnodes) {
		struct pk_replay_node *v = realloc(r->cand, snap->nnodes * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->cand = v;
		r->ncand_cap = snap->nnodes;
	}
	res_ids(r, ids);
	for (int d = 0; d < PK_REPLAY_DIMS; d++)
		req[d] = ids[d] >= 0 ? p->req[ids[d]] : 0;
	for (size_t i = 0; i < snap->nnodes; i++) {
		const struct sc_node *node = snap->nodes[i];
		struct pk_replay_node *c = &r->cand[n];
		const struct sc_devs *devs;
		int short_of = 0;

		if (sc_filter(snap, p, node, &short_of) != SC_FIT)
			continue;
		c->name = node->name;
		c->index = (int)i;
		for (int d = 0; d < PK_REPLAY_DIMS; d++) {
			c->alloc[d] = ids[d] >= 0 ? node->alloc[ids[d]] : 0;
			c->free[d] =
			    ids[d] >= 0 ? sc_sub(node->alloc[ids[d]], node->used[ids[d]]) : 0;
		}
		devs = ids[PK_REPLAY_ACCEL] >= 0 ? sc_node_devs(node, ids[PK_REPLAY_ACCEL]) : NULL;
		c->dev_free = devs ? devs->free : NULL;
		c->ndev = devs ? devs->n : 0;
		c->dev_untouched = devs ? sc_devs_untouched(devs) : 0;
		n++;
	}
	k = n ? r->opts.pick(r->opts.pick_arg, r->cand, n, req) : -1;
	if (k < 0 || (size_t)k >= n)
		return 0;
	copy = json_deep_copy(pod);
	spec = copy ? json_object_get(copy, "spec") : NULL;
	if (!spec || json_object_set_new(spec, "nodeName", json_string(r->cand[k].name)) < 0) {
		json_decref(copy);
		return -ENOMEM;
	}
	err = pk_sched_update(r->s, copy, errs);
	json_decref(copy);
	if (err < 0)
		return err;
	r->bound++;
	return 0;
}

int pk_replay_share_device(const int64_t *dev_free, int n, int untouched, int64_t f)
{
	return sc_devs_pick(dev_free, n, untouched, f);
}

int pk_replay_arrive(struct pk_replay *r, json_t *pod, struct pk_errors *errs, bool *ret_bound)
{
	json_t *meta = json_object_get(pod, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	char *key = sc_key(ns, name);
	const struct sc_pod *p;
	int ids[PK_REPLAY_DIMS], err;
	size_t bound0 = r->bound;

	if (!key)
		return -ENOMEM;
	if (pk_map_get(&r->s->forest.pods, key)) {
		free(key);
		return -EEXIST;
	}
	err = pk_sched_add(r->s, pod, errs);
	p = err < 0 ? NULL : pk_map_get(&r->s->forest.pods, key);
	if (err < 0 || !p) {
		free(key);
		return err < 0 ? err : -EINVAL; /* not a pod */
	}
	res_ids(r, ids);
	r->arrived++;
	if (ids[PK_REPLAY_ACCEL] >= 0)
		r->requested = sc_add(r->requested, p->req[ids[PK_REPLAY_ACCEL]]);
	if (r->opts.pick)
		err = p->node >= 0 ? 0 : run_policy(r, p, pod, errs);
	else
		err = run_strategy(r);
	free(key);
	if (err < 0)
		return err;
	if (ret_bound)
		*ret_bound = r->bound > bound0;
	return 0;
}

void pk_replay_stats(const struct pk_replay *r, struct pk_replay_stats *ret)
{
	const struct sc_snapshot *snap = &r->s->snap;
	int ids[PK_REPLAY_DIMS], a;
	struct pk_replay_stats st = {
	    .requested = r->requested, .arrived = r->arrived, .bound = r->bound};

	res_ids(r, ids);
	a = ids[PK_REPLAY_ACCEL];
	for (size_t i = 0; a >= 0 && i < snap->nnodes; i++) {
		const struct sc_node *n = snap->nodes[i];
		const struct sc_devs *d;

		if (n->removed)
			continue;
		st.total = sc_add(st.total, n->alloc[a]);
		st.allocated = sc_add(st.allocated, n->used[a]);
		d = sc_node_devs(n, a);
		for (int k = 0; d && k < d->n; k++)
			if (d->free[k] > 0 && d->free[k] < 1000)
				st.parts = sc_add(st.parts, d->free[k]);
	}
	*ret = st;
}

/* Level i is reached: the allocated fraction, and the caller's hook told. */
static double level_reached(const struct pk_replay *r, size_t i)
{
	struct pk_replay_stats st;

	pk_replay_stats(r, &st);
	if (r->opts.on_level)
		r->opts.on_level(r->opts.level_arg, i, &st);
	return st.total > 0 ? (double)st.allocated / (double)st.total : 0;
}

/*
 * Anything but a pod in the sequence (a PodGroup, a CompositePodGroup, a
 * PriorityClass) goes to the scheduler before the pods that need it; a
 * comparison policy places single pods, so it refuses groups.
 */
static int add_object(struct pk_replay *r, json_t *obj, struct pk_errors *errs)
{
	enum pk_kind k = pk_kind_of(obj);

	if (r->opts.pick && (k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP)) {
		pk_errors_add(errs, "%s %s: a comparison policy replays single pods only",
			      json_string_value(json_object_get(obj, "kind")),
			      pk_name(obj) ? pk_name(obj) : "");
		return -EINVAL;
	}
	return pk_sched_add(r->s, obj, errs);
}

int pk_replay_feed(struct pk_replay *r, json_t *obj, const double *levels, size_t nlevels,
		   size_t *next, double *ret_alloc, struct pk_errors *errs)
{
	int err;

	if (*next >= nlevels)
		return 0;
	err = pk_kind_of(obj) == PK_KIND_POD ? pk_replay_arrive(r, obj, errs, NULL)
					     : add_object(r, obj, errs);
	if (err < 0 || pk_kind_of(obj) != PK_KIND_POD)
		return err;
	if (r->total < 0) {
		struct pk_replay_stats st;

		pk_replay_stats(r, &st);
		r->total = st.total;
	}
	while (*next < nlevels && (double)r->requested >= levels[*next] * (double)r->total) {
		ret_alloc[*next] = level_reached(r, *next);
		(*next)++;
	}
	return 0;
}

void pk_replay_levels_end(const struct pk_replay *r, size_t nlevels, size_t *next,
			  double *ret_alloc)
{
	for (; *next < nlevels; (*next)++)
		ret_alloc[*next] = level_reached(r, *next);
}

int pk_replay_run(const struct pk_replay_opts *opts, json_t *nodes, json_t *pods,
		  const double *levels, size_t nlevels, double *ret_alloc, struct pk_errors *errs)
{
	struct pk_replay *r = NULL;
	size_t i, next = 0;
	json_t *o;
	int err = pk_replay_new(opts, &r);

	if (err < 0)
		return err;
	json_array_foreach(nodes, i, o)
	{
		if ((err = pk_replay_add_node(r, o, errs)) < 0)
			goto out;
	}
	json_array_foreach(pods, i, o)
	{
		if ((err = pk_replay_feed(r, o, levels, nlevels, &next, ret_alloc, errs)) < 0)
			goto out;
	}
	pk_replay_levels_end(r, nlevels, &next, ret_alloc);
out:
	pk_replay_free(r);
	return err;
}

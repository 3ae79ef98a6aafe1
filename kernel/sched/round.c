/* SPDX-License-Identifier: Apache-2.0 */
/*
 * round.c — a round of scheduling cycles, the one driver of the cycles.
 *
 * The scheduling loop (kernel/appliance/), podctl schedule (offline.c) and
 * the simulator (kernel/sim/) all run cycles the same way: one after the
 * other until a cycle finds nothing eligible, each cycle's actions handed
 * to the caller before the next cycle runs (its own copy of the cluster
 * must hold them: a bound pod is bound there too).  They differ only in
 * what they do with the actions (write them as a batch, set them on their
 * objects, replay them on a simulated cluster), in their clock (the loop's
 * is real time, the others' virtual) and in when a round must end early
 * (the loop writes a preemption's evictions before anything else and
 * stops when asked to): pk_sched_round_ops says which.
 *
 * What a cycle's actions become is one definition too:
 * pk_sched_result_write() queues them into a writer (kernel/write/writer.h),
 * whose backend is the store, a kube-apiserver or, offline, the caller's
 * objects in memory.
 */
#include <errno.h>

#include "kernel/sched/sched.h"
#include "kernel/write/writer.h"

int pk_sched_round(struct pk_sched *s, int64_t now_ms, const struct pk_sched_round_ops *ops,
		   void *arg, struct pk_sched_round *ret)
{
	struct pk_sched_round round = {0};
	int r = 0;

	if (!s || !ops || !ops->result || !ret)
		return -EINVAL;
	while (!ops->max_cycles || round.cycles < ops->max_cycles) {
		struct pk_sched_result *res = NULL;
		int64_t now = now_ms;
		bool idle;

		if (ops->cycle_begins && !ops->cycle_begins(arg, &now))
			break;
		if ((r = pk_sched_cycle(s, now, &res)) < 0)
			break;
		round.cycles++;
		r = ops->result(arg, res, now);
		idle = res->outcome == PK_SCHED_IDLE || res->outcome == PK_SCHED_GATED;
		if (ops->until_quiet && res->nactions)
			idle = false;
		round.idle = idle;
		round.has_retry = idle && res->has_retry;
		round.retry_at_ms = round.has_retry ? res->retry_at_ms : 0;
		pk_sched_result_free(res);
		if (r != 0 || idle)
			break;
	}
	*ret = round;
	return r < 0 ? r : 0;
}

static struct pk_write_ref ref_of(const struct pk_sched_write_ops *ops, void *arg,
				  const struct pk_type *kind, const char *ns, const char *name)
{
	return (struct pk_write_ref){
	    .kind = kind,
	    .ns = ns,
	    .name = name,
	    .rv = ops && ops->rv ? ops->rv(arg, kind, ns, name) : 0,
	};
}

/* A binding's annotations (a TPU slice pod's coordinates and worker id), or NULL. */
static json_t *action_annotations(const struct pk_sched_action *a)
{
	json_t *ann = NULL;

	for (size_t i = 0; i < PK_SCHED_BIND_ANNOTATIONS; i++) {
		if (!a->annotations[i].key)
			continue;
		if (!ann && !(ann = json_object()))
			return NULL;
		if (json_object_set_new(ann, a->annotations[i].key,
					json_string(a->annotations[i].value)) < 0) {
			json_decref(ann);
			return NULL;
		}
	}
	return ann;
}

/* An action bind_after_claims() makes a later binding wait for. */
static bool is_claim_write(const struct pk_sched_action *c)
{
	return (c->action == PK_SCHED_CLAIM && json_object_get(c->claim, "allocation")) ||
	       c->action == PK_SCHED_VOLUME_CLAIM;
}

/* A binding waits for the claims its cycle allocated, reserved or bound to volumes. */
static int bind_after_claims(struct pk_writer *w, const struct pk_sched_result *res, size_t upto,
			     const struct pk_write_ref *pod, const struct pk_sched_write_ops *ops,
			     void *arg)
{
	int r = 0;

	for (size_t i = 0; i < upto && r == 0; i++) {
		const struct pk_sched_action *c = &res->actions[i];
		struct pk_write_ref ref;

		if (!is_claim_write(c))
			continue;
		ref = ref_of(ops, arg, c->kind, c->ns, c->name);
		r = pk_writer_depend(w, pod, &ref);
	}
	return r;
}

/* claims_before: whether an action before i is a claim write (else no binding waits). */
static int write_action(struct pk_writer *w, const struct pk_sched_result *res, size_t i,
			bool claims_before, const struct pk_sched_write_ops *ops, void *arg)
{
	const struct pk_sched_action *a = &res->actions[i];
	struct pk_write_ref ref = ref_of(ops, arg, a->kind, a->ns, a->name);
	json_t *ann;
	int r = -EINVAL;

	switch (a->action) {
	case PK_SCHED_BIND:
		ann = action_annotations(a);
		r = pk_writer_bind(w, &ref, a->node, ann);
		json_decref(ann);
		if (r == 0 && claims_before)
			r = bind_after_claims(w, res, i, &ref, ops, arg);
		break;
	case PK_SCHED_CLAIM:
		r = pk_writer_claim(w, &ref, a->claim);
		break;
	case PK_SCHED_CONDITION:
		r = pk_writer_set_condition(w, &ref, a->type, a->status, a->reason, a->message);
		break;
	case PK_SCHED_PREEMPT:
		r = pk_writer_evict(w, &ref);
		break;
	case PK_SCHED_VOLUME_CLAIM:
		ann = action_annotations(a);
		r = pk_writer_volume_claim(w, &ref, a->volume, ann);
		json_decref(ann);
		break;
	}
	return r;
}

int pk_sched_result_write(struct pk_writer *w, const struct pk_sched_result *res,
			  const struct pk_sched_write_ops *ops, void *arg)
{
	bool claims = false;

	if (!w || !res)
		return -EINVAL;
	/* a gang's bindings look back for claims only when there is one: no n^2 walk */
	for (size_t i = 0; i < res->nactions; i++) {
		int r = write_action(w, res, i, claims, ops, arg);

		claims = claims || is_claim_write(&res->actions[i]);
		if (r < 0 && !(ops && ops->failed))
			return r;
		if (r < 0)
			ops->failed(arg, &res->actions[i], r);
	}
	return 0;
}

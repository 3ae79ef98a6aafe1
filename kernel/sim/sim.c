/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim.c — the event loop of a simulation run.
 *
 * Events sit in a binary heap ordered by virtual time, then by the order
 * they were made (so equal times replay in trace order): a job arrives, pods
 * bound together finish, a job attempt fails, a node is lost, the
 * scheduler's backoff expires.  After the events of one instant the
 * scheduler runs cycles until nothing is eligible, exactly as the
 * appliance's loop does, and each action is played: a binding takes the
 * node's resources and, once the job's pods are all bound, starts its clock
 * (start delay, then duration; a failure drawn from the seed may cut it
 * short); a preemption sends the victim's whole job back to the queue.  A
 * finished pod is removed from the scheduler, which frees its node and
 * wakes the gangs that waited for capacity.  A failed attempt (injected, or
 * a pod on a lost node) removes all of the job's pods and groups and
 * submits them again, gated and placed as a whole, up to max_retries times.
 *
 * Jobs live in namespace t<index> so that a binding names its job; CSV pods
 * are p<k> in a PodGroup g (a gang of all of them), made at arrival and
 * never kept as trees.  Measurements (stats.c) follow every change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched/replay.h"
#include "kernel/sched/sched.h"
#include "kernel/sim/sim-run.h"
#include "topology/topology.h"

/* ---- random numbers: splitmix64 ------------------------------------------------------- */

static uint64_t rnd_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double rnd_unit(uint64_t *state)
{
	return (double)(rnd_next(state) >> 11) / 9007199254740992.0;
}

/* ---- the event heap --------------------------------------------------------------------- */

static bool ev_less(const struct sim_event *a, const struct sim_event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int ev_push(struct sim_run *s, int64_t t, enum sim_ev type, uint32_t job, int32_t attempt,
		   int64_t aux)
{
	struct sim_event e = {t, s->seq++, type, job, attempt, aux};
	size_t i;

	if (s->nev == s->capev) {
		size_t cap = s->capev ? s->capev * 2 : 1024;
		struct sim_event *n = realloc(s->ev, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->ev = n;
		s->capev = cap;
	}
	i = s->nev++;
	while (i > 0 && ev_less(&e, &s->ev[(i - 1) / 2])) {
		s->ev[i] = s->ev[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->ev[i] = e;
	return 0;
}

static struct sim_event ev_pop(struct sim_run *s)
{
	struct sim_event top = s->ev[0], last = s->ev[--s->nev];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nev)
			break;
		if (c + 1 < s->nev && ev_less(&s->ev[c + 1], &s->ev[c]))
			c++;
		if (!ev_less(&s->ev[c], &last))
			break;
		s->ev[i] = s->ev[c];
		i = c;
	}
	if (s->nev)
		s->ev[i] = last;
	return top;
}

/* ---- jobs in and out of the scheduler ------------------------------------------------- */

static void job_ns(uint32_t j, char ns[24])
{
	snprintf(ns, 24, "t%u", j);
}

/*
 * CSV pods are p<k>, k zero-padded to the width of the largest index, so that
 * name order is index order (the scheduler breaks creation-time ties by name).
 */
static void csv_pod_name(int32_t pods, int32_t k, char *buf, size_t len)
{
	char tmp[16], *end = tmp + sizeof(tmp), *d = end;
	uint32_t v = k < 0 ? 0 : (uint32_t)k, w = pods > 1 ? (uint32_t)(pods - 1) : 0;
	size_t width = 0, n = 0;

	if (k < 0 || !len) { /* never: an index (what "p%0*d" writes otherwise) */
		if (len)
			snprintf(buf, len, "p%0*d", snprintf(NULL, 0, "%d", (int)w), k);
		return;
	}
	do
		width++;
	while (w /= 10);
	do
		*--d = (char)('0' + v % 10);
	while (v /= 10);
	while ((size_t)(end - d) < width)
		*--d = '0';
	buf[n++] = 'p';
	for (; d < end && n + 1 < len; d++)
		buf[n++] = *d;
	buf[n < len ? n : len - 1] = '\0';
}

void sim_pod_name(const struct sim_run *s, uint32_t j, int32_t k, char *buf, size_t len)
{
	const struct sim_jobrun *r = &s->runs[j];

	if (r->names)
		snprintf(buf, len, "%s", r->names[k]);
	else
		csv_pod_name(s->trace->jobs[j].pods, k, buf, len);
}

/*
 * Objects are created at the virtual time, in whole seconds from
 * SIM_EPOCH_S, as a store stamps creationTimestamp: the scheduler orders
 * roots and a gang's pods by it, then by name, as it does in the appliance.
 */

static int add_obj(struct sim_run *s, json_t *obj)
{
	struct pk_errors errs = {0};
	char ts[32];
	int r;

	pk_time_format(SIM_EPOCH_S + s->now / 1000, ts);
	json_object_set_new(json_object_get(obj, "metadata"), "creationTimestamp", json_string(ts));
	r = pk_sched_add(s->sched, obj, &errs);

	if (r < 0 && !s->err[0])
		snprintf(s->err, sizeof(s->err), "%s %s/%s: %s",
			 json_string_value(json_object_get(obj, "kind")), pk_namespace(obj),
			 pk_name(obj), errs.n ? errs.msg[0] : strerror(-r));
	pk_errors_clear(&errs);
	return r;
}

/* A CSV job's n pods, p<k>, alike: handed to the scheduler together, in name order. */
static int add_pods(struct sim_run *s, json_t *pod, int32_t n)
{
	struct pk_errors errs = {0};
	char(*names)[24] = malloc((size_t)(n > 0 ? n : 1) * sizeof(*names)), ts[32];
	const char **v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));
	int r = names && v ? 0 : -ENOMEM;

	for (int32_t k = 0; r == 0 && k < n; k++) {
		csv_pod_name(n, k, names[k], sizeof(names[k]));
		v[k] = names[k];
	}
	pk_time_format(SIM_EPOCH_S + s->now / 1000, ts);
	json_object_set_new(json_object_get(pod, "metadata"), "creationTimestamp", json_string(ts));
	if (r == 0)
		r = pk_sched_add_pods(s->sched, pod, v, (size_t)n, &errs);
	if (r < 0 && !s->err[0])
		snprintf(s->err, sizeof(s->err), "Pod %s/%s: %s", pk_namespace(pod), pk_name(pod),
			 errs.n ? errs.msg[0] : strerror(-r));
	pk_errors_clear(&errs);
	free(names);
	free(v);
	return r;
}

/* Required node affinity: the product label In models (NULL-ended). */
static json_t *models_affinity(char *const *models)
{
	json_t *values = json_array();

	for (size_t i = 0; values && models[i]; i++)
		json_array_append_new(values, json_string(models[i]));
	return json_pack("{s:{s:{s:[{s:[{s:s,s:s,s:o}]}]}}}", "nodeAffinity",
			 "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
			 "matchExpressions", "key", SIM_PRODUCT_LABEL, "operator", "In", "values",
			 values);
}

/*
 * A CSV job's objects in namespace ns: its PodGroup (a gang: NULL for one
 * pod) and the pod all its pods are made from (named p0).
 */
static int csv_objects(const struct sim_job *job, const char *ns, const char *resource,
		       json_t **ret_group, json_t **ret_pod)
{
	json_t *g = NULL, *pod, *req;

	if (job->pods > 1) {
		g = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:s,s:s},s:{s:{s:i}}}}", "apiVersion",
			      "scheduling.k8s.io/v1alpha3", "kind", "PodGroup", "metadata", "name",
			      "g", "namespace", ns, "spec", "workloadRef", "workloadName", "g",
			      "templateName", "g", "schedulingPolicy", "gang", "minCount",
			      (int)job->pods);
		if (!g)
			return -ENOMEM;
		if (job->topology)
			pk_set(g, "spec.schedulingConstraints",
			       json_pack("{s:[{s:s}]}", "topology", "key", job->topology));
	}
	pod = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:s,s:{s:{}}}]}}", "apiVersion", "v1",
			"kind", "Pod", "metadata", "name", "p0", "namespace", ns, "spec",
			"containers", "name", "c", "image", "sim", "resources", "requests");
	if (!pod) {
		json_decref(g);
		return -ENOMEM;
	}
	req = pk_get(pod, "spec.containers[0].resources.requests");
	sim_set_requests(req, resource, job->accel_milli, job->cpu_milli, job->mem_milli);
	if (job->pods > 1)
		pk_set(pod, "spec.schedulingGroup.podGroupName", json_string("g"));
	if (job->has_priority)
		pk_set(pod, "spec.priority", json_integer(job->priority));
	if (job->model)
		pk_set(pod, "spec.nodeSelector", json_pack("{s:s}", SIM_PRODUCT_LABEL, job->model));
	if (job->models)
		pk_set(pod, "spec.affinity", models_affinity(job->models));
	*ret_group = g;
	*ret_pod = pod;
	return 0;
}

/* A group object about to be placed again: its home domain as the annotation. */
static void set_home(const struct sim_jobrun *r, json_t *group)
{
	const char *home = json_string_value(json_object_get(r->homes, pk_name(group)));
	json_t *meta = json_object_get(group, "metadata"), *ann;

	if (!home || !json_is_object(meta))
		return;
	ann = json_object_get(meta, "annotations");
	if (!json_is_object(ann))
		json_object_set_new(meta, "annotations", ann = json_object());
	json_object_set_new(ann, TOPO_ANNOTATION_HOME_DOMAIN, json_string(home));
}

/*
 * An admitted queued job's pods: the node selector and tolerations its
 * admission put in the Job's pod template (the flavor's), added to the pod's.
 */
static void add_flavor(json_t *pod, const json_t *flavor)
{
	json_t *sel = json_object_get(flavor, "nodeSelector"), *tol;
	json_t *spec = json_object_get(pod, "spec");

	if (json_object_size(sel)) {
		if (!json_is_object(json_object_get(spec, "nodeSelector")))
			json_object_set_new(spec, "nodeSelector", json_object());
		json_object_update(json_object_get(spec, "nodeSelector"), sel);
	}
	tol = json_object_get(flavor, "tolerations");
	if (json_array_size(tol))
		json_object_set(spec, "tolerations", tol);
}

/* The pods (and gang) of a CSV job, made and handed to the scheduler together. */
static int submit_csv(struct sim_run *s, uint32_t j)
{
	const struct sim_job *job = &s->trace->jobs[j];
	char ns[24];
	json_t *g = NULL, *pod = NULL;
	int r;

	job_ns(j, ns);
	r = csv_objects(job, ns, s->resource, &g, &pod);
	if (r == 0)
		add_flavor(pod, s->runs[j].flavor);
	if (r == 0 && g) {
		set_home(&s->runs[j], g);
		r = add_obj(s, g);
	}
	if (r == 0)
		r = add_pods(s, pod, job->pods);
	json_decref(g);
	json_decref(pod);
	return r;
}

/* The groups and pods of an object job, copied into its namespace. */
static int submit_objects(struct sim_run *s, uint32_t j)
{
	const struct sim_job *job = &s->trace->jobs[j];
	char ns[24];
	size_t i;
	json_t *o;
	int r = 0;

	job_ns(j, ns);
	json_array_foreach(job->objects, i, o)
	{
		json_t *c = json_deep_copy(o);

		if (!c)
			return -ENOMEM;
		pk_set(c, "metadata.namespace", json_string(ns));
		set_home(&s->runs[j], c);
		r = add_obj(s, c);
		json_decref(c);
		if (r < 0)
			return r;
	}
	return 0;
}

int sim_submit(struct sim_run *s, uint32_t j)
{
	struct sim_jobrun *r = &s->runs[j];

	if (!r->node) {
		size_t n = s->trace->jobs[j].pods ? (size_t)s->trace->jobs[j].pods : 1;

		r->node = malloc(n * sizeof(*r->node));
		r->bind_at = malloc(n * sizeof(*r->bind_at));
		if (!r->node || !r->bind_at)
			return -ENOMEM;
	}
	r->state = SIM_WAITING;
	r->bound = r->finished = 0;
	for (int32_t k = 0; k < s->trace->jobs[j].pods; k++)
		r->node[k] = -1;
	return s->trace->jobs[j].objects ? submit_objects(s, j) : submit_csv(s, j);
}

/* Take the job's groups (not its pods) out of the scheduler. */
static void remove_groups(struct sim_run *s, uint32_t j)
{
	const struct sim_job *job = &s->trace->jobs[j];
	char ns[24];
	size_t i;
	json_t *o;

	job_ns(j, ns);
	if (!job->objects && job->pods > 1)
		pk_sched_remove(s->sched, &pk_type_pod_group, ns, "g");
	json_array_foreach(job->objects, i, o)
	{
		enum pk_kind k = pk_kind_of(o);

		if (k != PK_KIND_POD)
			pk_sched_remove(s->sched, pk_type_of(k), ns, pk_name(o));
	}
}

/* Take the job's pods and groups out of the scheduler, freeing their nodes. */
void sim_withdraw(struct sim_run *s, uint32_t j)
{
	const struct sim_job *job = &s->trace->jobs[j];
	struct sim_jobrun *r = &s->runs[j];
	char ns[24], name[320];

	job_ns(j, ns);
	for (int32_t k = 0; k < job->pods; k++) {
		sim_pod_name(s, j, k, name, sizeof(name));
		pk_sched_remove(s->sched, &pk_type_pod, ns, name);
		if (r->node[k] >= 0) {
			sim_stats_release(s, r->node[k], sim_pod_req(s, j, k));
			sim_q_pod(s, j, k, false);
		}
		r->node[k] = -1;
	}
	remove_groups(s, j);
	r->attempt++;
	r->bound = r->finished = 0;
}

/*
 * Before a node loss withdraws a job: the home domain of each of its groups,
 * handed back as the annotation when it is placed again (repair in the same
 * domain); other failures place the job afresh.
 */
static int keep_homes(struct sim_run *s, uint32_t j, bool node_loss)
{
	const struct sim_job *job = &s->trace->jobs[j];
	struct sim_jobrun *r = &s->runs[j];
	char ns[24], *home = NULL;
	size_t i;
	json_t *o;

	json_decref(r->homes);
	r->homes = NULL;
	if (!node_loss || !(r->homes = json_object()))
		return node_loss ? -ENOMEM : 0;
	job_ns(j, ns);
	if (!job->objects && job->pods > 1 &&
	    pk_sched_group_home(s->sched, &pk_type_pod_group, ns, "g", &home) == 0 && home)
		json_object_set_new(r->homes, "g", json_string(home));
	free(home);
	json_array_foreach(job->objects, i, o)
	{
		enum pk_kind k = pk_kind_of(o);

		home = NULL;
		if ((k == PK_KIND_POD_GROUP || k == PK_KIND_COMPOSITE_POD_GROUP) &&
		    pk_sched_group_home(s->sched, pk_type_of(k), ns, pk_name(o), &home) == 0 &&
		    home)
			json_object_set_new(r->homes, pk_name(o), json_string(home));
		free(home);
	}
	return 0;
}

/* A failed attempt: place the whole job again, or give up past max_retries. */
static int fail_job(struct sim_run *s, uint32_t j, bool node_loss)
{
	struct sim_jobrun *r = &s->runs[j];

	if (keep_homes(s, j, node_loss) < 0)
		return -ENOMEM;
	sim_withdraw(s, j);
	if (node_loss)
		s->count.node_loss_failures++;
	else
		s->count.injected_failures++;
	int32_t limit = s->trace->jobs[j].max_retries;

	if (++r->failures > (limit >= 0 ? limit : s->max_retries)) {
		r->state = SIM_FAILED;
		s->count.jobs_failed++;
		sim_q_job_end(s, j);
		return 0;
	}
	s->count.retries++;
	return sim_submit(s, j);
}

/* ---- actions ------------------------------------------------------------------------- */

static int32_t pod_index(const struct sim_run *s, uint32_t j, const char *name)
{
	const struct sim_jobrun *r = &s->runs[j];

	if (!r->names)
		return name[0] == 'p' ? (int32_t)strtol(name + 1, NULL, 10) : -1;
	for (int32_t k = 0; k < s->trace->jobs[j].pods; k++)
		if (strcmp(r->names[k], name) == 0)
			return k;
	return -1;
}

static int job_of(const struct sim_run *s, const char *ns, uint32_t *ret)
{
	char *end;
	unsigned long j;

	if (!ns || ns[0] != 't')
		return -ENOENT;
	j = strtoul(ns + 1, &end, 10);
	if (*end || j >= s->trace->n)
		return -ENOENT;
	*ret = (uint32_t)j;
	return 0;
}

/* All pods of the job bound: its clock starts. */
static int job_started(struct sim_run *s, uint32_t j, int64_t t)
{
	const struct sim_job *job = &s->trace->jobs[j];
	struct sim_jobrun *r = &s->runs[j];

	r->state = SIM_RUNNING;
	if (r->started_at < 0) {
		r->started_at = t;
		sim_stats_delay(s, j, t - job->arrival_ms);
	}
	sim_q_started(s, j, t);
	if (s->failure_rate > 0 && job->duration_ms > 0 && rnd_unit(&s->rng) < s->failure_rate)
		return ev_push(s,
			       t + s->start_delay_ms +
				   (int64_t)(rnd_unit(&s->rng) * (double)job->duration_ms),
			       SIM_EV_FAIL, j, r->attempt, 0);
	return 0;
}

static int on_bind(struct sim_run *s, const struct pk_sched_action *a, int64_t t)
{
	uint32_t j;
	json_t *n = json_object_get(s->node_index, a->node);
	int32_t k;

	if (job_of(s, a->ns, &j) < 0 || !n || (k = pod_index(s, j, a->name)) < 0)
		return 0;
	struct sim_jobrun *r = &s->runs[j];
	const struct sim_job *job = &s->trace->jobs[j];

	r->node[k] = (int32_t)json_integer_value(n);
	r->bind_at[k] = t;
	sim_stats_take(s, r->node[k], sim_pod_req(s, j, k));
	sim_q_pod(s, j, k, true);
	s->count.bindings++;
	if (s->bindings)
		fprintf(s->bindings, "%s/%s %s\n", a->ns, a->name, a->node);
	r->bound++;
	/* pods bound at the same instant finish together: one event per batch */
	if (r->last_batch != t || r->last_batch_attempt != r->attempt) {
		r->last_batch = t;
		r->last_batch_attempt = r->attempt;
		if (job->duration_ms > 0 && ev_push(s, t + s->start_delay_ms + job->duration_ms,
						    SIM_EV_FINISH, j, r->attempt, t) < 0)
			return -ENOMEM;
	}
	return r->bound == job->pods ? job_started(s, j, t) : 0;
}

static int on_preempt(struct sim_run *s, const struct pk_sched_action *a)
{
	uint32_t j;

	if (job_of(s, a->ns, &j) < 0)
		return 0;
	s->count.preempted_pods++;
	if (s->runs[j].state != SIM_RUNNING && s->runs[j].state != SIM_WAITING)
		return 0;
	s->count.preempted_jobs++;
	s->runs[j].preemptions++;
	keep_homes(s, j, false); /* placed again after a preemption: not a repair */
	sim_withdraw(s, j);
	return sim_submit(s, j);
}

/*
 * A group's Repaired condition, of a job placed again after a node loss: a
 * repair in its home domain, or a whole re-placement.
 */
static void count_repair(struct sim_run *s, const struct pk_sched_action *a)
{
	size_t n = a->type ? strlen(a->type) : 0;
	uint32_t j;

	if (n < 8 || strcmp(a->type + n - 8, "Repaired") != 0 || !a->reason ||
	    job_of(s, a->ns, &j) < 0 || !s->runs[j].homes)
		return;
	if (strcmp(a->reason, "RepairedInPlace") == 0)
		s->count.repairs_in_place++;
	else
		s->count.repairs_whole++;
}

static int sim_result(void *arg, const struct pk_sched_result *res, int64_t t)
{
	struct sim_run *s = arg;
	int r = 0;

	for (size_t i = 0; r == 0 && i < res->nactions; i++) {
		if (res->actions[i].action == PK_SCHED_BIND)
			r = on_bind(s, &res->actions[i], t);
		else if (res->actions[i].action == PK_SCHED_PREEMPT)
			r = on_preempt(s, &res->actions[i]);
		else if (res->actions[i].action == PK_SCHED_CONDITION)
			count_repair(s, &res->actions[i]);
	}
	return r;
}

/* Cycles until nothing is eligible; the earliest backoff expiry becomes a wake-up. */
static int schedule_round(struct sim_run *s, int64_t t)
{
	static const struct pk_sched_round_ops ops = {.result = sim_result};
	struct pk_sched_round round = {0};
	int r = pk_sched_round(s->sched, t, &ops, s, &round);
	int64_t retry = round.has_retry ? round.retry_at_ms : 0;

	s->count.cycles += round.cycles;
	if (r < 0 || !round.idle)
		return r;
	if (retry > t && (s->wake_at <= t || retry < s->wake_at)) {
		s->wake_at = retry;
		return ev_push(s, retry, SIM_EV_WAKE, 0, 0, 0);
	}
	return 0;
}

/* ---- events ------------------------------------------------------------------------- */

static int on_finish(struct sim_run *s, const struct sim_event *e)
{
	const struct sim_job *job = &s->trace->jobs[e->job];
	struct sim_jobrun *r = &s->runs[e->job];
	char ns[24], name[320];

	if (e->attempt != r->attempt || r->state >= SIM_DONE)
		return 0;
	job_ns(e->job, ns);
	for (int32_t k = 0; k < job->pods; k++) {
		if (r->node[k] < 0 || r->bind_at[k] != e->aux)
			continue;
		sim_pod_name(s, e->job, k, name, sizeof(name));
		pk_sched_remove(s->sched, &pk_type_pod, ns, name);
		sim_stats_release(s, r->node[k], sim_pod_req(s, e->job, k));
		sim_q_pod(s, e->job, k, false);
		r->node[k] = -2; /* Succeeded */
		r->finished++;
		s->count.pods_succeeded++;
	}
	if (r->finished == job->pods) {
		/* a finished job's groups schedule nothing more: the queue forgets them */
		remove_groups(s, e->job);
		r->state = SIM_DONE;
		r->done_at = e->t;
		s->count.jobs_completed++;
		sim_q_job_end(s, e->job);
		free(r->node);
		free(r->bind_at);
		r->node = NULL;
		r->bind_at = NULL;
	}
	return 0;
}

static int on_node_loss(struct sim_run *s, const struct sim_event *e)
{
	int32_t n = (int32_t)e->aux;
	int r = 0;

	sim_stats_node_lost(s, n);
	sim_q_node_lost(s, n);
	pk_sched_remove(s->sched, &pk_type_node, NULL, s->node_names[n]);
	for (uint32_t j = 0; r == 0 && j < s->trace->n; j++) {
		struct sim_jobrun *jr = &s->runs[j];
		bool hit = false;

		if (jr->state != SIM_RUNNING && jr->state != SIM_WAITING)
			continue;
		for (int32_t k = 0; k < s->trace->jobs[j].pods && !hit; k++)
			hit = jr->node[k] == n;
		if (hit)
			r = fail_job(s, j, true);
	}
	return r;
}

static int handle(struct sim_run *s, const struct sim_event *e)
{
	s->count.events++;
	switch (e->type) {
	case SIM_EV_ARRIVE:
		s->count.arrivals++;
		return sim_q_queued(s, e->job) ? sim_q_arrive(s, e->job) : sim_submit(s, e->job);
	case SIM_EV_FINISH:
		return on_finish(s, e);
	case SIM_EV_FAIL:
		if (e->attempt != s->runs[e->job].attempt || s->runs[e->job].state != SIM_RUNNING)
			return 0;
		return fail_job(s, e->job, false);
	case SIM_EV_NODE_LOSS:
		return on_node_loss(s, e);
	case SIM_EV_WAKE:
		return 0;
	}
	return 0;
}

static int loop(struct sim_run *s)
{
	int r = 0;

	while (r == 0 && s->nev > 0) {
		int64_t t = s->ev[0].t;

		if (s->until_ms > 0 && t > s->until_ms)
			break;
		s->now = t;
		while (r == 0 && s->nev > 0 && s->ev[0].t == t) {
			struct sim_event e = ev_pop(s);

			r = handle(s, &e);
		}
		if (r == 0)
			r = sim_q_pass(s);
		if (r == 0)
			r = schedule_round(s, t);
		if (r == 0)
			r = sim_q_after(s);
		if (r == 0)
			r = sim_stats_sample(s, t);
	}
	return r;
}

/* ---- the run -------------------------------------------------------------------------- */

int pk_sim_run(const struct pk_sim_opts *opts, const json_t *nodes, const struct pk_sim_trace *t,
	       json_t **ret_report, uint64_t *ret_events, char *err, size_t errlen)
{
	struct sim_run *s = NULL;
	int r;

	if (!opts || !nodes || !t || !ret_report)
		return -EINVAL;
	r = sim_run_new(opts, nodes, t, &s);
	if (r == 0)
		r = sim_q_new(s, opts, nodes);
	if (r == 0)
		for (uint32_t j = 0; r == 0 && j < t->n; j++)
			r = ev_push(s, t->jobs[j].arrival_ms, SIM_EV_ARRIVE, j, 0, 0);
	for (size_t i = 0; r == 0 && i < opts->nnode_loss; i++) {
		json_t *n = json_object_get(s->node_index, opts->node_loss[i].node);

		if (!n) {
			/* another board's node (runs of two boards share the list) */
			r = json_array_append_new(s->loss_unknown,
						  json_string(opts->node_loss[i].node));
		} else {
			r = ev_push(s, opts->node_loss[i].at_ms, SIM_EV_NODE_LOSS, 0, 0,
				    json_integer_value(n));
		}
	}
	if (r == 0)
		r = loop(s);
	if (r == 0)
		r = sim_stats_report(s, ret_report);
	if (r == 0)
		r = sim_q_report(s, *ret_report);
	if (r < 0 && s && s->err[0])
		snprintf(err, errlen, "%s", s->err);
	else if (r < 0)
		snprintf(err, errlen, "%s", strerror(-r));
	if (r == 0 && ret_events)
		*ret_events = s->count.events + s->count.bindings;
	sim_run_free(s);
	return r;
}

/* ---- arrival levels: the placement-quality comparison ---------------------------- */

static const struct pk_sim_trace *order_of;

static int by_arrival(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int64_t tx = order_of->jobs[x].arrival_ms, ty = order_of->jobs[y].arrival_ms;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

struct levels_run {
	struct pk_replay *rp;
	const double *levels;
	size_t nlevels, next;
	double *alloc;
	struct pk_errors errs;
};

/* obj stamped with the job's arrival, fed to the replay. */
static int feed(struct levels_run *lr, json_t *obj, const char *ns, const char *ts)
{
	json_t *md = json_object_get(obj, "metadata");

	if (!json_is_object(md) || json_object_set_new(md, "namespace", json_string(ns)) < 0 ||
	    json_object_set_new(md, "creationTimestamp", json_string(ts)) < 0)
		return -ENOMEM;
	return pk_replay_feed(lr->rp, obj, lr->levels, lr->nlevels, &lr->next, lr->alloc,
			      &lr->errs);
}

/* Job j's objects, in namespace t<j> as in a run, one after the other. */
static int feed_job(struct levels_run *lr, const struct pk_sim_trace *t, uint32_t j,
		    const char *resource)
{
	const struct sim_job *job = &t->jobs[j];
	char ns[24], ts[32], name[24];
	json_t *g = NULL, *pod = NULL, *o;
	size_t i;
	int r = 0;

	job_ns(j, ns);
	pk_time_format(SIM_EPOCH_S + job->arrival_ms / 1000, ts);
	json_array_foreach(job->objects, i, o)
	{
		json_t *c = json_deep_copy(o);

		r = c ? feed(lr, c, ns, ts) : -ENOMEM;
		json_decref(c);
		if (r < 0)
			return r;
	}
	if (job->objects)
		return 0;
	r = csv_objects(job, ns, resource, &g, &pod);
	if (r == 0 && g)
		r = feed(lr, g, ns, ts);
	for (int32_t k = 0; r == 0 && k < job->pods; k++) {
		csv_pod_name(job->pods, k, name, sizeof(name));
		pk_set(pod, "metadata.name", json_string(name));
		r = feed(lr, pod, ns, ts);
	}
	json_decref(g);
	json_decref(pod);
	return r;
}

int pk_sim_levels(const struct pk_sim_opts *opts, const json_t *nodes, const struct pk_sim_trace *t,
		  const double *levels, size_t nlevels, double *ret_alloc, char *err, size_t errlen)
{
	struct levels_run lr = {.levels = levels, .nlevels = nlevels, .alloc = ret_alloc};
	struct pk_replay_opts ro = {.strategy = opts ? opts->strategy : NULL,
				    .pick = opts ? opts->pick : NULL,
				    .pick_arg = opts ? opts->pick_arg : NULL,
				    .on_level = opts ? opts->on_level : NULL,
				    .level_arg = opts ? opts->level_arg : NULL};
	uint32_t *order = NULL;
	char resource[256];
	size_t i;
	json_t *o;
	int r;

	if (!opts || !nodes || !t || (nlevels && (!levels || !ret_alloc)))
		return -EINVAL;
	sim_find_resource(nodes, resource, sizeof(resource));
	ro.resource = resource;
	r = pk_replay_new(&ro, &lr.rp);
	if (r == -ENOENT)
		snprintf(err, errlen, "unknown strategy %s", opts->strategy);
	if (r < 0)
		return r == -ENOENT ? -EINVAL : r;
	json_array_foreach(nodes, i, o) if (r == 0) r = pk_replay_add_node(lr.rp, o, &lr.errs);
	json_array_foreach(t->classes, i, o) if (r == 0) r =
	    pk_replay_feed(lr.rp, o, levels, nlevels, &lr.next, ret_alloc, &lr.errs);
	order = malloc((t->n ? t->n : 1) * sizeof(*order));
	if (r == 0 && !order)
		r = -ENOMEM;
	for (uint32_t j = 0; r == 0 && j < t->n; j++)
		order[j] = j;
	order_of = t;
	if (r == 0)
		qsort(order, t->n, sizeof(*order), by_arrival);
	for (size_t k = 0; r == 0 && k < t->n && lr.next < nlevels; k++)
		r = feed_job(&lr, t, order[k], resource);
	if (r == 0)
		pk_replay_levels_end(lr.rp, nlevels, &lr.next, ret_alloc);
	if (r < 0)
		snprintf(err, errlen, "%s", lr.errs.n ? lr.errs.msg[0] : strerror(-r));
	pk_errors_clear(&lr.errs);
	pk_replay_free(lr.rp);
	free(order);
	return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * standalone.c — the controllers on the loop: pk_standalone_start() and the
 * hooks (appliance.h) through which they see the loop's listing, events and
 * committed batches, and run before each of its rounds.
 *
 * Per event: a Node write from outside is a heartbeat (heartbeat.c), a
 * node's Lease renewal too; a deleted Node's pods are evicted (nodes.c); a
 * Job or JobSet, a pod whose phase counts or that waits for claims from its
 * templates is reconciled (controllers.c, claims.c); an owner's deletion
 * runs the garbage collector.  Per round: those reconciles, the node-loss
 * check, the Event sweep and the simulated pods' timers (lifecycle.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/builder/builder.h"
#include "kernel/controllers/controllers-internal.h"

#define CTL_BEAT_CHECK_MS 1000

/* ---- the change stream ------------------------------------------------------------ */

static void queue_reconcile(struct pk_ctl *ctl, enum pk_kind kind, const json_t *obj)
{
	if (ctl_queue_reconcile(ctl, kind, pk_namespace(obj), pk_name(obj)) < 0)
		ctl_log(ctl, 0, "%s %s/%s: not reconciled: out of memory", pk_kind_to_string(kind),
			pk_namespace(obj), pk_name(obj));
}

/*
 * What the queue controller's pass reads (queues.c): queues,
 * WorkloadPriorityClasses, and queued Jobs, JobSets and pods.
 */
static bool queue_relevant(const struct pk_source_event *ev)
{
	enum pk_kind k = ev->kind ? ev->kind->pk : PK_KIND_UNKNOWN;

	if (k == PK_KIND_JOB || k == PK_KIND_JOBSET)
		return wb_queue_name(ev->object) != NULL;
	if (k == PK_KIND_POD)
		return pk_pod_queue_name(ev->object) != NULL;
	return k == PK_KIND_WORKLOAD_PRIORITY_CLASS || k == PK_KIND_CLUSTER_QUEUE ||
	       k == PK_KIND_LOCAL_QUEUE || k == PK_KIND_RESOURCE_FLAVOR || k == PK_KIND_COHORT ||
	       k == PK_KIND_NAMESPACE;
}

/* A node's heartbeat Lease: in the node lease namespace. */
static bool is_node_lease(const struct pk_ctl *ctl, const json_t *lease)
{
	const char *ns = pk_get_string(lease, "metadata.namespace");

	return ns && strcmp(ns, ctl->scfg.node_lease_namespace) == 0;
}

static bool tainted_unreachable(const json_t *node)
{
	json_t *t;
	size_t i;

	json_array_foreach(pk_get(node, "spec.taints"), i, t)
	{
		const char *key = json_string_value(json_object_get(t, "key"));

		if (key && strcmp(key, PK_TAINT_UNREACHABLE) == 0)
			return true;
	}
	return false;
}

static void on_node_write(struct pk_ctl *ctl, const json_t *node)
{
	bool recovered = false;

	if (ctl_node_agent_registered(node))
		ctl_heartbeat_expect(ctl->beats, pk_name(node), ctl_now_ms());
	ctl_heartbeat_seen(ctl->beats, pk_name(node), ctl_node_monitored(node), ctl_now_ms(),
			   &recovered);
	if (tainted_unreachable(node))
		recovered = true;
	if (recovered && ctl_heartbeat_live(ctl->beats, pk_name(node)))
		ctl_node_recovered(ctl, pk_name(node));
}

/* A renewed (or deleted) node Lease: a sign of life of the node it names. */
static void on_lease_event(struct pk_ctl *ctl, const struct pk_source_event *ev)
{
	bool recovered = false;
	const char *name = pk_name(ev->object);
	json_t *node = NULL;

	if (!is_node_lease(ctl, ev->object))
		return;
	ctl_heartbeat_lease(ctl->beats, name, ev->type != PK_EVENT_DELETED, ctl_now_ms(),
			    &recovered);
	if (!recovered && ev->type != PK_EVENT_DELETED && ctl_heartbeat_live(ctl->beats, name) &&
	    ctl_heartbeat_lease_writes(ctl->beats, name) <= 2 &&
	    pk_store_get(ctl->store, &pk_type_node, NULL, name, &node) == 0) {
		/* the first renewal seen: the Node may still be tainted from before a
		 * restart of the appliance (later renewals need no look) */
		recovered = tainted_unreachable(node);
		json_decref(node);
	}
	if (recovered)
		ctl_node_recovered(ctl, name);
}

/* A Job, a JobSet or a Workload: what owns the pods and groups. */
static bool owner_kind(enum pk_kind k)
{
	return k == PK_KIND_JOB || k == PK_KIND_JOBSET || k == PK_KIND_LEADER_WORKER_SET ||
	       k == PK_KIND_WORKLOAD;
}

/*
 * What an event the loop decided (d) means for the controllers:
 * heartbeat, a Node write from outside the loop; reconcile, a Job, a
 * JobSet or a LeaderWorkerSet changed; owner, a pod changed (its phase counts) or a pod, group
 * or Job went, so its controller reconciles.
 */
struct ctl_event_work {
	bool heartbeat, reconcile, owner;
};

static struct ctl_event_work event_work(const struct pk_source_event *ev, enum pk_kind k,
					const struct ap_decision *d)
{
	bool gone = ev->type == PK_EVENT_DELETED;

	return (struct ctl_event_work){
	    .heartbeat = !gone && d->fresh && k == PK_KIND_NODE,
	    .reconcile =
		!gone && d->changed &&
		(k == PK_KIND_JOB || k == PK_KIND_JOBSET || k == PK_KIND_LEADER_WORKER_SET),
	    .owner = gone ? k == PK_KIND_POD || owner_kind(k) || k == PK_KIND_POD_GROUP ||
				k == PK_KIND_COMPOSITE_POD_GROUP
			  : d->changed && k == PK_KIND_POD,
	};
}

static void hook_event(void *arg, const struct pk_source_event *ev, const struct ap_decision *d)
{
	struct pk_ctl *ctl = arg;
	enum pk_kind k = ev->kind ? ev->kind->pk : PK_KIND_UNKNOWN;
	bool pod_or_group = k == PK_KIND_POD || k == PK_KIND_POD_GROUP;
	struct ctl_event_work w;

	ctl_gc_note(ctl, ev); /* every kind: one graph of owners */
	if (ctl_budgets_note(ctl, ev) < 0)
		ctl_log(ctl, 1, "poddisruptionbudgets: out of memory noting %s",
			ev->kind ? ev->kind->kind : "?");
	if (queue_relevant(ev))
		ctl->queues_dirty = true;
	if (!d) {
		if (k == PK_KIND_LEASE)
			on_lease_event(ctl, ev);
		return;
	}
	w = event_work(ev, k, d);
	if (k == PK_KIND_NODE && d->verdict == AP_FEED)
		ctl_lifecycle_node(ctl->lifecycle, ev->object, false);
	if (k == PK_KIND_NODE && d->verdict == AP_REMOVE) {
		ctl_lifecycle_node(ctl->lifecycle, ev->object, true);
		ctl_heartbeat_forget(ctl->beats, pk_name(ev->object));
		json_array_append_new(ctl->gone_nodes, json_string(pk_name(ev->object)));
	}
	if (w.heartbeat)
		on_node_write(ctl, ev->object);
	if (w.reconcile)
		queue_reconcile(ctl, k, ev->object);
	if (pod_or_group && ev->type != PK_EVENT_DELETED && ctl_needs_claims(ev->object))
		queue_reconcile(ctl, k, ev->object); /* the claim controller */
	if (w.owner)
		ctl_reconcile_owner_of(ctl, ev->object);
}

/* ---- the listing ------------------------------------------------------------------- */

static void hook_listed(void *arg, const struct pk_type *kind, const json_t *obj, int64_t now)
{
	struct pk_ctl *ctl = arg;
	enum pk_kind k = kind->pk;

	switch (k) {
	case PK_KIND_LEASE:
		if (is_node_lease(ctl, obj))
			ctl_heartbeat_lease(ctl->beats, pk_name(obj), true, now, NULL);
		break;
	case PK_KIND_JOB:
	case PK_KIND_JOBSET:
	case PK_KIND_LEADER_WORKER_SET:
		queue_reconcile(ctl, k, obj);
		break;
	case PK_KIND_POD:
	case PK_KIND_POD_GROUP:
		if (ctl_needs_claims(obj))
			queue_reconcile(ctl, k, obj);
		break;
	case PK_KIND_NODE:
		ctl_lifecycle_node(ctl->lifecycle, obj, false);
		if (ctl_node_agent_registered(obj))
			ctl_heartbeat_expect(ctl->beats, pk_name(obj), now);
		ctl_heartbeat_seen(ctl->beats, pk_name(obj), ctl_node_monitored(obj), now, NULL);
		break;
	default:
		break;
	}
}

static void hook_list_done(void *arg)
{
	struct pk_ctl *ctl = arg;

	ctl_gc_full(ctl->gc);
	ctl_budgets_note_all(ctl);
}

/* ---- after a batch, before a round ------------------------------------------------- */

static void hook_written(void *arg, const struct pk_write_batch *b,
			 const struct pk_write_result *res, size_t n, int64_t now)
{
	struct pk_ctl *ctl = arg;

	for (size_t i = 0; ctl->lifecycle && i < n; i++)
		if (res[i].error == 0 && b->items[i].node && res[i].object)
			ctl_lifecycle_bound(ctl->lifecycle, res[i].object, b->items[i].node, now);
	ctl_record_batch(ctl, b, res);
}

/* Returns whether the garbage collector wrote: the events of its writes want it again. */
static bool run_controllers(struct pk_ctl *ctl)
{
	size_t i;
	json_t *n;

	json_array_foreach(ctl->gone_nodes, i, n) ctl_node_deleted(ctl, json_string_value(n));
	json_array_clear(ctl->gone_nodes);
	if (ctl->queues_dirty) {
		ctl->queues_dirty = false;
		ctl_queues_run(ctl);
	}
	ctl_queue_run(ctl);
	bool more = ctl_gc_run(ctl) > 0;

	ctl_budgets_run(ctl);
	return more;
}

/* The node-loss policy's state, logged when it changes (a held node is logged once). */
static void log_loss_state(struct pk_ctl *ctl, const struct ctl_loss_report *r)
{
	static const char *const why[] = {
	    [CTL_LOSS_PARTIAL] = "a large share of the nodes is silent at once",
	    [CTL_LOSS_FULL] = "every node is silent at once",
	    [CTL_LOSS_BLIND] = "the API server was saturated within the grace period, so a "
			       "silent node may not have got through",
	};

	if (r->state != ctl->loss_state && r->state != CTL_LOSS_NORMAL)
		ctl_log(ctl, 1, "node-loss monitor: %zu of %zu nodes silent: %s; declaring %s",
			r->silent, r->monitored, why[r->state],
			r->state == CTL_LOSS_PARTIAL && r->monitored > ctl->loss.large_cluster
			    ? "them lost at the secondary rate"
			    : "none lost");
	else if (r->state != ctl->loss_state)
		ctl_log(ctl, 1, "node-loss monitor: back to normal (%zu of %zu nodes silent)",
			r->silent, r->monitored);
	ctl->loss_state = r->state;
}

static void check_heartbeats(struct pk_ctl *ctl, int64_t now)
{
	struct ctl_loss_report rep;
	json_t *names = NULL, *n;
	size_t i;

	if (now < ctl->next_beat_check_ms)
		return;
	ctl->next_beat_check_ms = now + CTL_BEAT_CHECK_MS;
	ctl->loss.saturated_ms =
	    ctl->scfg.saturated_ms ? ctl->scfg.saturated_ms(ctl->scfg.saturated_arg) : 0;
	if (ctl_heartbeats_lost(ctl->beats, &ctl->loss, &ctl->loss_limiter, now, &names, &rep) < 0)
		return;
	log_loss_state(ctl, &rep);
	json_array_foreach(names, i, n) ctl_node_unreachable(ctl, json_string_value(n));
	json_decref(names);
}

/*
 * Pods the lifecycle ends free their places before this round's cycles (the
 * loop reads the events first), as a kubelet's report would reach
 * kube-scheduler before its next attempt.
 */
static int64_t hook_round(void *arg, int64_t now)
{
	struct pk_ctl *ctl = arg;

	bool again = run_controllers(ctl);
	int64_t due;

	check_heartbeats(ctl, now);
	ctl_record_sweep(ctl, now);
	due = ctl_lifecycle_run(ctl, now);
	/* a deletion's dependents, a released owner: the next level at once */
	return again && (due == 0 || due > now) ? now : due;
}

/* ---- metrics ----------------------------------------------------------------------- */

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
		(unsigned long long)v);
}

static void hook_metrics(void *arg, FILE *f)
{
	struct pk_ctl *ctl = arg;
	struct ctl_metrics *m = &ctl->m;

	pthread_mutex_lock(&m->lock);
	counter(f, "podkernel_appliance_kube_events_written_total",
		"Event objects written to the store (standalone).", m->kevents_written);
	counter(f, "podkernel_appliance_kube_events_limited_total",
		"Event objects not written: the same note about the object within five minutes.",
		m->kevents_limited);
	counter(f, "podkernel_appliance_kube_events_failed_total",
		"Event objects whose write failed.", m->kevents_failed);
	counter(f, "podkernel_appliance_kube_events_expired_total",
		"Event objects deleted after the event TTL.", m->kevents_expired);
	counter(f, "podkernel_controller_reconciles_total", "Job and JobSet reconciles.",
		m->reconciles);
	counter(f, "podkernel_controller_reconcile_errors_total", "Failed reconciles.",
		m->reconcile_errors);
	counter(f, "podkernel_controller_objects_created_total", "Objects created by controllers.",
		m->objects_created);
	counter(f, "podkernel_garbage_collector_deleted_total",
		"Owned objects deleted after their owner went away.", m->gc_deleted);
	counter(f, "podkernel_nodes_unreachable_total", "Nodes declared unreachable.",
		m->nodes_unreachable);
	counter(f, "podkernel_nodes_recovered_total", "Unreachable nodes that reported again.",
		m->nodes_recovered);
	counter(f, "podkernel_node_evictions_total", "Pods evicted from unreachable nodes.",
		m->evictions);
	counter(f, "podkernel_node_eviction_conflicts_total",
		"Evictions refused because the pod changed since it was listed, then retried.",
		m->eviction_conflicts);
	q_metrics_render(ctl, f);
	pthread_mutex_unlock(&m->lock);
}

/* ---- start and stop ---------------------------------------------------------------- */

static void ctl_free(void *arg)
{
	struct pk_ctl *ctl = arg;

	if (!ctl)
		return;
	/* the loop that held the change stream is gone: the store keeps no more for it */
	pk_store_hold_release(ctl->store);
	ctl_heartbeats_free(ctl->beats);
	ctl_lifecycle_free(ctl->lifecycle);
	ctl_recorder_free(ctl->recorder);
	ctl_gc_free(ctl->gc);
	ctl_queue_free(&ctl->queue);
	q_cache_free(ctl->qcache);
	pk_writer_free(ctl->writer);
	json_decref(ctl->gone_nodes);
	pk_map_free(&ctl->budget_ns);
	pk_map_free(&ctl->budget_keys);
	pk_map_free(&ctl->budget_count);
	pthread_mutex_destroy(&ctl->m.lock);
	q_metrics_free(&ctl->m);
	free(ctl);
}

static int hook_start(void *arg, struct pk_appliance *app, char *err, size_t errlen)
{
	struct pk_ctl *ctl = arg;
	int r = 0;

	ctl->app = app;
	if (ctl->scfg.sim_lifecycle)
		r = ctl_lifecycle_new(&ctl->scfg, ctl_now_ms(), &ctl->lifecycle, err, errlen);
	if (r == 0 && ctl->scfg.board)
		r = ctl_register_board(ctl, ctl->scfg.board, err, errlen);
	if (r == 0)
		ctl_log(ctl, 1,
			"controllers: node grace %lld ms, node eviction rate %g/s, secondary %g/s, "
			"unhealthy share %g, large cluster > %u nodes",
			(long long)ctl->grace_ms, ctl->loss.rate, ctl->loss.secondary_rate,
			ctl->loss.unhealthy_share, ctl->loss.large_cluster);
	return r;
}

/* Node heartbeat Leases: the loop lists them first and hands their events over undecided. */
static const struct pk_type *const standalone_kinds[] = {&pk_type_lease, NULL};
/* The owners of pods and groups: the controllers reconcile them when they change. */
static const struct pk_type *const standalone_tracked[] = {
    &pk_type_workload, &pk_type_job, &pk_type_jobset, &pk_type_leader_worker_set, NULL};

static const struct pk_appliance_hooks standalone_hooks = {
    .kinds = standalone_kinds,
    .tracked = standalone_tracked,
    .start = hook_start,
    .listed = hook_listed,
    .list_done = hook_list_done,
    .event = hook_event,
    .written = hook_written,
    .round = hook_round,
    .metrics = hook_metrics,
    .free = ctl_free,
};

static int64_t grace_from_env(void)
{
	const char *s = getenv("PODKERNEL_NODE_GRACE_SECONDS");
	char *end;
	double v;

	if (!s || !*s)
		return PK_STANDALONE_DEFAULT_GRACE_MS;
	v = strtod(s, &end);
	if (*end || v <= 0 || v > 86400)
		return PK_STANDALONE_DEFAULT_GRACE_MS;
	return (int64_t)(v * 1000);
}

/* The node-loss policy from the configuration (zero: the defaults). */
static void loss_policy_init(struct pk_ctl *ctl)
{
	const struct pk_standalone_config *c = &ctl->scfg;
	struct ctl_loss_policy *p = &ctl->loss;

	p->grace_ms = ctl->grace_ms;
	p->rate = c->node_eviction_rate ? c->node_eviction_rate : PK_STANDALONE_EVICTION_RATE;
	p->secondary_rate = c->secondary_node_eviction_rate ? c->secondary_node_eviction_rate
							    : PK_STANDALONE_SECONDARY_EVICTION_RATE;
	p->unhealthy_share = c->unhealthy_zone_threshold > 0 ? c->unhealthy_zone_threshold
							     : PK_STANDALONE_UNHEALTHY_THRESHOLD;
	p->large_cluster = c->large_cluster_size_threshold ? c->large_cluster_size_threshold
							   : PK_STANDALONE_LARGE_CLUSTER;
	if (p->rate < 0)
		p->rate = 0;
	if (p->secondary_rate < 0)
		p->secondary_rate = 0;
}

static int ctl_new(struct pk_store *store, const struct pk_appliance_config *cfg,
		   const struct pk_standalone_config *scfg, struct pk_ctl **ret)
{
	struct pk_ctl *ctl = calloc(1, sizeof(*ctl));
	int r;

	if (!ctl)
		return -ENOMEM;
	ctl->store = store;
	if (cfg)
		ctl->cfg = *cfg;
	if (scfg)
		ctl->scfg = *scfg;
	if (!ctl->scfg.node_lease_namespace || !*ctl->scfg.node_lease_namespace)
		ctl->scfg.node_lease_namespace = PK_STANDALONE_DEFAULT_LEASE_NS;
	ctl->grace_ms = ctl->scfg.node_grace_ms > 0 ? ctl->scfg.node_grace_ms : grace_from_env();
	loss_policy_init(ctl);
	r = -pthread_mutex_init(&ctl->m.lock, NULL);
	if (r < 0) {
		free(ctl);
		return r;
	}
	ctl->gone_nodes = json_array();
	ctl->queues_dirty = true; /* the first round admits what waits from before */
	r = ctl->gone_nodes ? pk_writer_store_new(store, &ctl->writer) : -ENOMEM;
	if (r == 0)
		r = ctl_heartbeats_new(&ctl->beats);
	if (r == 0)
		r = ctl_recorder_new(&ctl->recorder);
	if (r == 0)
		r = ctl_gc_new(&ctl->gc);
	if (r < 0) {
		ctl_free(ctl);
		return r;
	}
	*ret = ctl;
	return 0;
}

/* ---- the store as the loop's source ------------------------------------------------ */

static int store_list(void *src, const struct pk_type *kind, const struct pk_source_list_opts *opts,
		      json_t **ret_items, char **ret_continue)
{
	/* the loop lists at start (seconds after the store's check at open) and after a lost stream
	 */
	struct pk_store_list_opts o = {.verified_at_open = true};

	if (opts)
		o = (struct pk_store_list_opts){.limit = opts->limit,
						.continue_token = opts->continue_token,
						.verified_at_open = true};
	return pk_store_list(src, kind, NULL, &o, ret_items, NULL, ret_continue);
}

static uint64_t store_rv(void *src)
{
	return pk_store_rv(src);
}

/* The loop's callback, for the store's events. */
struct store_events {
	pk_source_event_cb cb;
	void *arg;
};

static int store_event(const struct pk_store_event *ev, void *arg)
{
	const struct store_events *e = arg;
	struct pk_source_event s = {ev->type, ev->rv, ev->kind, ev->object};

	return e->cb(&s, e->arg);
}

static int store_events_since(void *src, uint64_t since, size_t max, pk_source_event_cb cb,
			      void *arg, uint64_t *ret_last)
{
	struct store_events e = {cb, arg};
	/* the loop holds the stream: a burst while it schedules costs it no re-list */
	int r = pk_store_events_since_held(src, since, max, store_event, &e, ret_last);

	return r == -PK_STORE_EGONE ? -PK_SOURCE_EGONE : r;
}

static int store_wait(void *src, uint64_t since, int timeout_ms)
{
	return pk_store_wait(src, since, timeout_ms);
}

static int store_get(void *src, const struct pk_type *kind, const char *ns, const char *name,
		     json_t **ret)
{
	return pk_store_get(src, kind, ns, name, ret);
}

static const struct pk_appliance_source_ops store_source = {
    .list = store_list,
    .rv = store_rv,
    .events_since = store_events_since,
    .wait = store_wait,
    .get = store_get,
};

int pk_standalone_start(struct pk_store *store, const struct pk_appliance_config *cfg,
			const struct pk_standalone_config *scfg, struct pk_appliance **ret,
			char *err, size_t errlen)
{
	struct pk_appliance_config c = {0};
	struct pk_ctl *ctl = NULL;
	int r;

	if (!store || !ret || (cfg && (cfg->source || cfg->nhooks >= PK_APPLIANCE_MAX_HOOKS))) {
		if (cfg)
			pk_writer_free(cfg->writer);
		return -EINVAL;
	}
	if (cfg)
		c = *cfg;
	r = ctl_new(store, cfg, scfg, &ctl);
	if (r == 0 && !c.writer)
		r = pk_writer_store_new(store, &c.writer);
	if (r < 0) {
		ctl_free(ctl);
		pk_writer_free(c.writer);
		if (err && errlen)
			snprintf(err, errlen, "appliance: %s", strerror(-r));
		return r;
	}
	c.source = &store_source;
	c.source_arg = store;
	pk_appliance_config_add_hooks(&c, &standalone_hooks, ctl); /* room checked above */
	return pk_appliance_start(&c, ret, err, errlen);
}

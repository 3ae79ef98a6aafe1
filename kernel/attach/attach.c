/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attach.c — assembling attach mode (attach.h): credentials, the informers
 * feeding the mirror, the Event recorder, the Lease elector, the remote
 * write backend, the scheduling loop on the mirror, and the health server.
 *
 * The loop may schedule only when every informer has delivered its first
 * list and none is listing again after a 410 (a scheduler that has seen the
 * pods but not yet all the nodes would place gangs on part of the cluster)
 * and, with --leader-elect, while this instance holds the Lease.  Both conditions are checked
 * before every round and again by the write backend before each request, so a leader that loses the
 * Lease stops writing even in the middle of a round.  A standby consumes every event all the same:
 * its scheduler is warm when it takes over.  Leadership changes and the first sync wake the loop at
 * once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/attach/attach-internal.h"
#include "kernel/lib/log.h"

struct pk_attach {
	struct pk_attach_config cfg;
	struct at_api api;
	struct kube_client *client;
	struct at_mirror *mirror;
	struct kube_informer *inf[_AT_RES_MAX];
	struct at_recorder *recorder;
	struct kube_lease *lease;
	struct pk_appliance *app;
	struct at_health *health;
	char identity[256];
	atomic_bool ready; /* latched once every informer synced */
	struct at_remote_stats writes;
	struct at_remote_stats queue_writes; /* --queues=podkernel: the queue controller's */
};

#define at_log(a, level, ...)                                                                      \
	pk_logf((a)->cfg.log, (a)->cfg.log_arg, (a)->cfg.verbosity, level, __VA_ARGS__)

static void sub_log(void *arg, int level, const char *msg)
{
	struct pk_attach *a = arg;

	at_log(a, level, "attach: %s", msg);
}

bool pk_attach_ready(struct pk_attach *a)
{
	if (atomic_load(&a->ready))
		return true;
	for (int i = 0; i < _AT_RES_MAX; i++) {
		struct kube_informer_stats st;

		if (!at_api_watched(&a->api, i))
			continue;
		if (!a->inf[i])
			return false;
		kube_informer_get_stats(a->inf[i], &st);
		if (!st.synced)
			return false;
	}
	if (!atomic_exchange(&a->ready, true))
		at_log(a, 1, "attach: caches synced");
	return true;
}

bool pk_attach_leading(struct pk_attach *a)
{
	return !a->cfg.leader_elect || kube_lease_leading(a->lease);
}

/* No informer is listing again (after a 410 its kind is stale until the list lands). */
static bool lists_current(struct pk_attach *a)
{
	for (int i = 0; i < _AT_RES_MAX; i++) {
		struct kube_informer_stats st;

		if (!a->inf[i])
			continue;
		kube_informer_get_stats(a->inf[i], &st);
		if (st.listing)
			return false;
	}
	return true;
}

bool at_may_schedule(void *arg)
{
	struct pk_attach *a = arg;

	return pk_attach_ready(a) && pk_attach_leading(a) && lists_current(a);
}

static bool may_write(void *arg)
{
	return pk_attach_leading(arg);
}

/* ---- informer sink -------------------------------------------------------------------- */

static void on_replace(void *arg, const struct kube_resource *res, const json_t *items)
{
	struct pk_attach *a = arg;

	at_mirror_replace(a->mirror, at_api_type(&a->api, res), items);
	at_log(a, 2, "attach: listed %zu %s", json_array_size(items), res->plural);
}

static void on_listed(void *arg, const struct kube_resource *res)
{
	struct pk_attach *a = arg;

	(void)res;
	pk_attach_ready(a);	   /* logs the first time every list is in */
	at_mirror_kick(a->mirror); /* maybe every list is current now: schedule */
}

static void on_event(void *arg, const struct kube_resource *res, enum kube_event type,
		     const json_t *obj)
{
	struct pk_attach *a = arg;

	at_mirror_event(a->mirror, at_api_type(&a->api, res), type, obj);
}

static void on_leading(void *arg, bool leading)
{
	struct pk_attach *a = arg;

	at_log(a, 1, "attach: %s", leading ? "leading: scheduling" : "standby: not writing");
	at_mirror_kick(a->mirror);
}

/* ---- start and stop ---------------------------------------------------------------------- */

static int credentials(const struct pk_attach_config *cfg, struct pk_kube_credentials *ret,
		       char *err, size_t errlen)
{
	struct pk_kubeconfig *kc = NULL;
	struct pk_kube_overrides o = {.context = cfg->context};
	int r;

	if (cfg->in_cluster)
		return kube_credentials_in_cluster(cfg->sa_dir, ret, err, errlen);
	r = pk_kubeconfig_load(cfg->kubeconfig, getenv("KUBECONFIG"), getenv("HOME"), &kc, err,
			       errlen);
	if (r == 0)
		r = pk_kubeconfig_resolve(kc, &o, ret, err, errlen);
	pk_kubeconfig_free(kc);
	return r < 0 && r != -ENOMEM ? -EINVAL : r;
}

static int start_informers(struct pk_attach *a)
{
	struct kube_informer_sink sink = {.replace = on_replace,
					  .event = on_event,
					  .log = sub_log,
					  .listed = on_listed,
					  .arg = a};

	for (int i = 0; i < _AT_RES_MAX; i++) {
		if (!at_api_watched(&a->api, i))
			continue;
		int r = kube_informer_start(a->client, &a->api.res[i], &sink, &a->inf[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

static int start_loop(struct pk_attach *a, char *err, size_t errlen)
{
	struct at_remote_config rc = {
	    .client = a->client,
	    .api = &a->api,
	    .mirror = a->mirror,
	    .recorder = a->recorder,
	    .may_write = may_write,
	    .may_write_arg = a,
	    .stats = &a->writes,
	};
	struct pk_appliance_config acfg = {
	    .verbosity = a->cfg.verbosity,
	    .strategy = a->cfg.strategy,
	    .gated_gangs_wait = a->cfg.gated_gangs_wait,
	    .source = &at_mirror_source_ops,
	    .source_arg = a->mirror,
	    .may_schedule = at_may_schedule,
	    .may_schedule_arg = a,
	    .log = a->cfg.log,
	    .log_arg = a->cfg.log_arg,
	};
	int r = at_remote_writer_new(&rc, &acfg.writer);

	if (a->cfg.map) /* the first registration: there is room */
		pk_appliance_config_add_hooks(&acfg, &pk_ui_map_hooks, a->cfg.map);
	if (r == 0 && a->cfg.queues) {
		struct at_queues *q = NULL;

		rc.stats = &a->queue_writes; /* its own writer, counted apart */
		r = at_queues_new(a, &rc, &q);
		if (r == 0) /* the second registration: there is room */
			pk_appliance_config_add_hooks(&acfg, &at_queues_hooks, q);
	}
	if (r == 0)
		r = pk_appliance_start(&acfg, &a->app, err, errlen);
	else
		pk_writer_free(acfg.writer);
	return r;
}

static int start_lease(struct pk_attach *a)
{
	struct kube_lease_config lc = {
	    .ns =
		a->cfg.lease_namespace ? a->cfg.lease_namespace : PK_ATTACH_DEFAULT_LEASE_NAMESPACE,
	    .name = a->cfg.lease_name ? a->cfg.lease_name : PK_ATTACH_DEFAULT_LEASE_NAME,
	    .identity = a->identity,
	    .duration_ms = a->cfg.lease_duration_ms,
	    .renew_deadline_ms = a->cfg.renew_deadline_ms,
	    .retry_ms = a->cfg.retry_ms,
	    .on_change = on_leading,
	    .log = sub_log,
	    .arg = a,
	};

	return kube_lease_start(a->client, &lc, &a->lease);
}

int pk_attach_start(const struct pk_attach_config *cfg, struct pk_attach **ret, char *err,
		    size_t errlen)
{
	struct pk_kube_credentials creds = {0};
	struct pk_attach *a = calloc(1, sizeof(*a));
	char host[200] = "podkernel";
	int r;

	if (!a)
		return -ENOMEM;
	a->cfg = *cfg;
	atomic_init(&a->ready, false);
	gethostname(host, sizeof(host) - 1);
	snprintf(a->identity, sizeof(a->identity), "%s", cfg->identity ? cfg->identity : "");
	if (!cfg->identity)
		snprintf(a->identity, sizeof(a->identity), "%s_%ld", host, (long)getpid());
	r = at_api_init(&a->api,
			cfg->workload_api ? cfg->workload_api : PK_ATTACH_DEFAULT_WORKLOAD_API);
	a->api.queues = cfg->queues;
	if (r < 0)
		snprintf(err, errlen, "--workload-api %s: expected GROUP/VERSION",
			 cfg->workload_api);
	if (r == 0 && cfg->queues && !cfg->queue_pass) {
		snprintf(err, errlen,
			 "--queues=podkernel: no queue controller was given (queue_pass)");
		r = -EINVAL;
	}
	if (r == 0)
		r = credentials(cfg, &creds, err, errlen);
	if (r == 0)
		r = kube_client_new(&creds, &a->client);
	if (r == 0)
		r = at_mirror_new(cfg->scheduler_name ? cfg->scheduler_name
						      : PK_ATTACH_DEFAULT_SCHEDULER,
				  &a->mirror);
	if (r == 0)
		r = at_recorder_new(a->client, &a->api, a->identity, &a->recorder);
	if (r == 0)
		r = start_informers(a);
	if (r == 0 && cfg->leader_elect)
		r = start_lease(a);
	if (r == 0)
		r = start_loop(a, err, errlen);
	if (r == 0)
		r = at_health_start(a, cfg, &a->health, err, errlen);
	if (r < 0) {
		if (!*err)
			snprintf(err, errlen, "attach: %s", strerror(-r));
		pk_attach_stop(a);
		return r;
	}
	at_log(a, 1,
	       "attach: scheduling pods of schedulerName %s on %s as %s; serving health on %s://%s "
	       "(port %u)",
	       cfg->scheduler_name ? cfg->scheduler_name : PK_ATTACH_DEFAULT_SCHEDULER,
	       kube_client_credentials(a->client)->server, a->identity,
	       cfg->tls_cert_file ? "https" : "http", cfg->listen,
	       (unsigned)at_health_port(a->health));
	*ret = a;
	return 0;
}

void pk_attach_stop(struct pk_attach *a)
{
	if (!a)
		return;
	at_health_stop(a->health);
	if (a->mirror)
		at_mirror_close(a->mirror);
	pk_appliance_stop(a->app); /* no writes after this */
	kube_lease_stop(a->lease); /* then hand the Lease over */
	/* every thread first: one informer's callback reads the others' stats */
	for (int i = 0; i < _AT_RES_MAX; i++)
		kube_informer_halt(a->inf[i]);
	for (int i = 0; i < _AT_RES_MAX; i++)
		kube_informer_stop(a->inf[i]);
	at_recorder_free(a->recorder);
	at_mirror_free(a->mirror);
	kube_client_free(a->client);
	free(a);
}

struct pk_ui_map *at_map(struct pk_attach *a)
{
	return a->cfg.map;
}

struct kube_client *at_client(struct pk_attach *a)
{
	return a->client;
}

const struct pk_attach_config *at_config(struct pk_attach *a)
{
	return &a->cfg;
}

void pk_attach_metrics(struct pk_attach *a, FILE *f)
{
	uint64_t events = 0, filtered = 0, sent = 0, limited = 0, failed = 0;
	size_t objects = 0;

	fprintf(f, "# HELP podkernel_attach_informer_total Informer activity per resource.\n"
		   "# TYPE podkernel_attach_informer_total counter\n");
	for (int i = 0; i < _AT_RES_MAX; i++) {
		struct kube_informer_stats st;

		if (!a->inf[i])
			continue;
		kube_informer_get_stats(a->inf[i], &st);
		fprintf(f,
			"podkernel_attach_informer_total{resource=\"%s\",what=\"lists\"} %llu\n"
			"podkernel_attach_informer_total{resource=\"%s\",what=\"watches\"} %llu\n"
			"podkernel_attach_informer_total{resource=\"%s\",what=\"events\"} %llu\n"
			"podkernel_attach_informer_total{resource=\"%s\",what=\"gone\"} %llu\n"
			"podkernel_attach_informer_total{resource=\"%s\",what=\"errors\"} %llu\n"
			"podkernel_attach_informer_total{resource=\"%s\",what=\"undecodable\"} "
			"%llu\n"
			"podkernel_attach_informer_total{resource=\"%s\",what=\"too_big\"} %llu\n",
			a->api.res[i].plural, (unsigned long long)st.lists, a->api.res[i].plural,
			(unsigned long long)st.watches, a->api.res[i].plural,
			(unsigned long long)st.events, a->api.res[i].plural,
			(unsigned long long)st.gone, a->api.res[i].plural,
			(unsigned long long)st.errors, a->api.res[i].plural,
			(unsigned long long)st.undecodable, a->api.res[i].plural,
			(unsigned long long)st.too_big);
	}
	at_mirror_stats(a->mirror, &events, &filtered, &objects);
	at_recorder_stats(a->recorder, &sent, &limited, &failed);
	fprintf(
	    f,
	    "# TYPE podkernel_attach_mirror_objects gauge\npodkernel_attach_mirror_objects %zu\n"
	    "# TYPE podkernel_attach_mirror_events_total counter\n"
	    "podkernel_attach_mirror_events_total %llu\n"
	    "# HELP podkernel_attach_foreign_pods_total Pod updates of other schedulers "
	    "ignored (unbound).\n"
	    "# TYPE podkernel_attach_foreign_pods_total counter\n"
	    "podkernel_attach_foreign_pods_total %llu\n"
	    "# TYPE podkernel_attach_events_total counter\n"
	    "podkernel_attach_events_total{result=\"sent\"} %llu\n"
	    "podkernel_attach_events_total{result=\"rate_limited\"} %llu\n"
	    "podkernel_attach_events_total{result=\"failed\"} %llu\n"
	    "# TYPE podkernel_attach_ready gauge\npodkernel_attach_ready %d\n"
	    "# TYPE podkernel_attach_leader gauge\npodkernel_attach_leader %d\n",
	    objects, (unsigned long long)events, (unsigned long long)filtered,
	    (unsigned long long)sent, (unsigned long long)limited, (unsigned long long)failed,
	    pk_attach_ready(a) ? 1 : 0, pk_attach_leading(a) ? 1 : 0);
	fprintf(f,
		"# HELP podkernel_attach_requests_total Writes sent to the cluster.\n"
		"# TYPE podkernel_attach_requests_total counter\n"
		"podkernel_attach_requests_total{request=\"binding\"} %llu\n"
		"podkernel_attach_requests_total{request=\"status\"} %llu\n"
		"podkernel_attach_requests_total{request=\"delete\"} %llu\n"
		"# TYPE podkernel_attach_request_conflicts_total counter\n"
		"podkernel_attach_request_conflicts_total %llu\n"
		"# TYPE podkernel_attach_request_failures_total counter\n"
		"podkernel_attach_request_failures_total %llu\n"
		"# HELP podkernel_attach_requests_fenced_total Writes not sent: not the leader.\n"
		"# TYPE podkernel_attach_requests_fenced_total counter\n"
		"podkernel_attach_requests_fenced_total %llu\n",
		atomic_load(&a->writes.bindings), atomic_load(&a->writes.status_writes),
		atomic_load(&a->writes.deletes), atomic_load(&a->writes.conflicts),
		atomic_load(&a->writes.failures), atomic_load(&a->writes.fenced));
	if (a->app)
		pk_appliance_metrics(a->app, f);
	if (a->cfg.map)
		pk_ui_map_metrics(a->cfg.map, f);
}

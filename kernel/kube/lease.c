/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lease.c — leader election over a coordination.k8s.io/v1 Lease, the way
 * client-go's leaderelection package does it (see kube.h for the rules).
 *
 * The elector thread wakes every retry period.  It reads the Lease; when
 * there is none it creates one naming itself; when it holds it, it renews
 * renewTime with an update carrying the resourceVersion it read (so two
 * candidates can never both succeed); when another holds it, it remembers
 * when it last saw the record change, and takes the Lease over once that is
 * older than the lease duration.  Leadership is a deadline, not a flag:
 * valid_until = last successful renewal + renew deadline, read against the
 * monotonic clock by kube_lease_leading(), so a leader whose renewals hang
 * stops counting as leader by itself, before any standby may take over
 * (renew deadline < lease duration).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/kube/kube-internal.h"
#include "kernel/kube/kube.h"
#include "kernel/lib/log.h"

struct kube_lease {
	struct kube_client *c;
	struct kube_lease_config cfg;
	char *ns, *name, *identity;
	struct kube_conn *conn;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	atomic_llong valid_until; /* monotonic ms; 0: not leading */
	bool leading;		  /* as last reported to on_change */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* what a standby last saw, and when */
	char seen_holder[256], seen_rv[64];
	int64_t seen_at;
};

int64_t kube_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool kube_nap(pthread_mutex_t *lock, pthread_cond_t *cond, atomic_bool *stop, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(lock);
	while (!atomic_load(stop) && pthread_cond_timedwait(cond, lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(lock);
	return !atomic_load(stop);
}

void kube_micro_time(char buf[40])
{
	struct timespec ts;
	struct tm tm;
	char s[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, 40, "%s.%06ldZ", s, ts.tv_nsec / 1000);
}

/* Every line goes to the sink, which filters by level. */
#define lease_log(l, level, ...) pk_logf((l)->cfg.log, (l)->cfg.arg, PK_LOG_ALL, level, __VA_ARGS__)

bool kube_lease_leading(const struct kube_lease *l)
{
	return l && kube_now_ms() < atomic_load(&((struct kube_lease *)l)->valid_until);
}

static void report(struct kube_lease *l)
{
	bool now = kube_lease_leading(l);

	if (now == l->leading)
		return;
	l->leading = now;
	lease_log(l, 1, "leader election: %s lease %s/%s", now ? "acquired" : "lost", l->ns,
		  l->name);
	if (l->cfg.on_change)
		l->cfg.on_change(l->cfg.arg, now);
}

static json_t *spec_for(struct kube_lease *l, const json_t *old, bool takeover)
{
	char now[40];
	json_t *spec = json_deep_copy(json_object_get(old, "spec"));
	json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));

	if (!json_is_object(spec)) {
		json_decref(spec);
		spec = json_object();
	}
	kube_micro_time(now);
	json_object_set_new(spec, "holderIdentity", json_string(l->identity));
	json_object_set_new(spec, "leaseDurationSeconds",
			    json_integer((l->cfg.duration_ms + 999) / 1000));
	json_object_set_new(spec, "renewTime", json_string(now));
	if (takeover || !json_object_get(spec, "acquireTime")) {
		json_object_set_new(spec, "acquireTime", json_string(now));
		if (old && takeover)
			json_object_set_new(spec, "leaseTransitions",
					    json_integer(transitions + 1));
	}
	return spec;
}

/* Write the Lease (create when old is NULL); true when it is now ours. */
static bool write_lease(struct kube_lease *l, const json_t *old, bool takeover)
{
	char path[512];
	json_t *obj, *ans = NULL;
	long status = 0;
	int64_t started = kube_now_ms();
	int r;

	if (old) {
		obj = json_deep_copy(old);
		json_object_set_new(obj, "spec", spec_for(l, old, takeover));
		snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
			 l->ns, l->name);
	} else {
		obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "apiVersion", "coordination.k8s.io/v1",
				"kind", "Lease", "metadata", "name", l->name, "namespace", l->ns,
				"spec", spec_for(l, NULL, true));
		snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases",
			 l->ns);
	}
	r = obj ? kube_request(l->conn, old ? "PUT" : "POST", path, NULL, obj,
			       l->cfg.renew_deadline_ms / 2, &status, &ans)
		: -ENOMEM;
	json_decref(obj);
	if (r == 0 && (status == 200 || status == 201)) {
		/* valid from when the request started: the server saw it after that */
		atomic_store(&l->valid_until, started + l->cfg.renew_deadline_ms);
		json_decref(ans);
		return true;
	}
	if (r == 0 && status != 409)
		lease_log(l, 1, "leader election: writing lease %s/%s: HTTP %ld: %s", l->ns,
			  l->name, status, kube_status_message(ans));
	else if (r < 0)
		lease_log(l, 2, "leader election: writing lease %s/%s: %s", l->ns, l->name,
			  kube_conn_error(l->conn));
	json_decref(ans);
	return false;
}

static void try_once(struct kube_lease *l)
{
	char path[512];
	json_t *lease = NULL;
	long status = 0;
	int r;

	snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns,
		 l->name);
	r = kube_request(l->conn, "GET", path, NULL, NULL, l->cfg.renew_deadline_ms / 2, &status,
			 &lease);
	if (r < 0 || (status != 200 && status != 404)) {
		if (r < 0)
			lease_log(l, 2, "leader election: reading lease: %s",
				  kube_conn_error(l->conn));
		json_decref(lease);
		return;
	}
	if (status == 404) {
		json_decref(lease);
		write_lease(l, NULL, true);
		return;
	}
	const char *holder = pk_kube_str(lease, "spec", "holderIdentity");
	const char *rv = pk_kube_str(lease, "metadata", "resourceVersion");
	int64_t now = kube_now_ms();

	if (holder && strcmp(holder, l->identity) == 0) {
		write_lease(l, lease, false);
	} else {
		if (strcmp(holder ? holder : "", l->seen_holder) != 0 ||
		    strcmp(rv ? rv : "", l->seen_rv) != 0 || l->seen_at == 0) {
			snprintf(l->seen_holder, sizeof(l->seen_holder), "%s",
				 holder ? holder : "");
			snprintf(l->seen_rv, sizeof(l->seen_rv), "%s", rv ? rv : "");
			l->seen_at = now;
		}
		if (!holder || !*holder || now - l->seen_at >= l->cfg.duration_ms)
			write_lease(l, lease, true);
		else
			atomic_store(&l->valid_until, 0);
	}
	json_decref(lease);
}

static void *lease_main(void *arg)
{
	struct kube_lease *l = arg;

	do {
		try_once(l);
		report(l);
		/* a leader renews a little more often than the retry period */
		int wait = l->cfg.retry_ms;
		int64_t left = atomic_load(&l->valid_until) - kube_now_ms();

		if (left > 0 && left < wait)
			wait = (int)left;
		if (!kube_nap(&l->lock, &l->cond, &l->stop, wait > 10 ? wait : 10))
			break;
		report(l);
	} while (!atomic_load(&l->stop));
	return NULL;
}

int kube_lease_start(struct kube_client *c, const struct kube_lease_config *cfg,
		     struct kube_lease **ret)
{
	struct kube_lease *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	l->c = c;
	l->cfg = *cfg;
	if (l->cfg.duration_ms <= 0)
		l->cfg.duration_ms = KUBE_LEASE_DURATION_MS;
	if (l->cfg.renew_deadline_ms <= 0)
		l->cfg.renew_deadline_ms = KUBE_LEASE_RENEW_DEADLINE_MS;
	if (l->cfg.retry_ms <= 0)
		l->cfg.retry_ms = KUBE_LEASE_RETRY_MS;
	l->ns = strdup(cfg->ns);
	l->name = strdup(cfg->name);
	l->identity = strdup(cfg->identity);
	l->cfg.ns = l->ns;
	l->cfg.name = l->name;
	l->cfg.identity = l->identity;
	atomic_init(&l->stop, false);
	atomic_init(&l->valid_until, 0);
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	if (l->cfg.renew_deadline_ms >= l->cfg.duration_ms)
		r = -EINVAL;
	else
		r = l->ns && l->name && l->identity ? kube_conn_new(c, &l->conn) : -ENOMEM;
	if (r == 0) {
		r = -pthread_create(&l->thread, NULL, lease_main, l);
		l->started = r == 0;
	}
	if (r < 0) {
		kube_lease_stop(l);
		return r;
	}
	*ret = l;
	return 0;
}

/* Give a held lease back: a standby need not wait for it to expire. */
static void release(struct kube_lease *l)
{
	char path[512];
	json_t *lease = NULL, *ans = NULL;
	long status = 0;

	snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns,
		 l->name);
	if (kube_request(l->conn, "GET", path, NULL, NULL, 2000, &status, &lease) == 0 &&
	    status == 200 &&
	    strcmp(pk_kube_str(lease, "spec", "holderIdentity") ?: "", l->identity) == 0) {
		json_object_set_new(json_object_get(lease, "spec"), "holderIdentity",
				    json_string(""));
		kube_request(l->conn, "PUT", path, NULL, lease, 2000, &status, &ans);
		lease_log(l, 1, "leader election: released lease %s/%s", l->ns, l->name);
	}
	json_decref(lease);
	json_decref(ans);
}

void kube_lease_stop(struct kube_lease *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	atomic_store(&l->stop, true);
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	if (l->started)
		pthread_join(l->thread, NULL);
	if (l->conn && kube_lease_leading(l)) {
		atomic_store(&l->valid_until, 0);
		release(l);
	}
	kube_conn_free(l->conn);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l);
}

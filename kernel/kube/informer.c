/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informer.c — one resource of a Kubernetes API server, mirrored by list
 * and watch (client-go's Reflector).
 *
 * One thread per resource.  It lists in pages (items get the kind and
 * apiVersion that list answers leave out), hands the whole list to the
 * sink's replace(), then watches from the list's resourceVersion with
 * bookmarks and a server-side timeout.  Every event moves the resourceVersion
 * it resumes from, so a watch that ends (the timeout, a server restart, a
 * broken connection) is opened again from exactly where it stopped and no
 * event is lost; only an answer of 410 Gone (the server no longer holds that
 * history, as an HTTP status or as an ERROR event in the stream) makes it
 * list again.  Failures back off exponentially between KUBE_BACKOFF_MIN_MS
 * and KUBE_BACKOFF_MAX_MS and the backoff resets once a watch delivers.
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

#define WATCH_TIMEOUT_S 290

struct kube_informer {
	struct kube_client *c;
	struct kube_resource res;
	char *kind, *group, *version, *plural; /* res's strings */
	struct kube_informer_sink sink;
	struct kube_conn *conn;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kube_informer_stats stats;
	char rv[64]; /* where the watch resumes */
	bool gone;   /* the watch answered 410 */
};

int kube_resource_path(const struct kube_resource *res, const char *ns, const char *name,
		       const char *sub, char *buf, size_t len)
{
	int n;

	if (*res->group)
		n = snprintf(buf, len, "/apis/%s/%s", res->group, res->version);
	else
		n = snprintf(buf, len, "/api/%s", res->version);
	if (ns && res->namespaced)
		n += snprintf(buf + n, n < (int)len ? len - (size_t)n : 0, "/namespaces/%s", ns);
	n += snprintf(buf + n, n < (int)len ? len - (size_t)n : 0, "/%s", res->plural);
	if (name)
		n += snprintf(buf + n, n < (int)len ? len - (size_t)n : 0, "/%s", name);
	if (sub)
		n += snprintf(buf + n, n < (int)len ? len - (size_t)n : 0, "/%s", sub);
	return n < (int)len ? 0 : -ENAMETOOLONG;
}

static void inf_log(struct kube_informer *inf, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void inf_log(struct kube_informer *inf, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!inf->sink.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	inf->sink.log(inf->sink.arg, level, msg);
}

static void count(struct kube_informer *inf, uint64_t *field)
{
	pthread_mutex_lock(&inf->lock);
	(*field)++;
	pthread_mutex_unlock(&inf->lock);
}

/* List answers leave kind and apiVersion out of their items. */
static void stamp_kind(struct kube_informer *inf, json_t *obj)
{
	char av[128];

	snprintf(av, sizeof(av), "%s%s%s", inf->res.group, *inf->res.group ? "/" : "",
		 inf->res.version);
	if (!json_object_get(obj, "kind"))
		json_object_set_new(obj, "kind", json_string(inf->res.kind));
	if (!json_object_get(obj, "apiVersion"))
		json_object_set_new(obj, "apiVersion", json_string(av));
}

/*
 * Every page of the list into one array; 0, -ENOENT (404: not served),
 * -EPROTO (another status), -EIO (no answer).
 */
static int list_all(struct kube_informer *inf, json_t **ret_items)
{
	char base[512], path[3072], esc[2048];
	json_t *items = json_array();
	char *cont = NULL;
	int r = kube_resource_path(&inf->res, NULL, NULL, NULL, base, sizeof(base));

	while (r == 0) {
		json_t *ans = NULL, *it;
		long status = 0;
		size_t i;

		snprintf(path, sizeof(path), "%s?limit=%d%s%s", base, KUBE_LIST_PAGE,
			 cont ? "&continue=" : "", cont ? kube_escape(cont, esc, sizeof(esc)) : "");
		free(cont);
		cont = NULL;
		r = kube_request(inf->conn, "GET", path, NULL, NULL, 60000, &status, &ans);
		if (r == 0 && status != 200) {
			inf_log(inf, 1, "list %s: HTTP %ld: %s", base, status,
				kube_status_message(ans));
			r = status == 404 ? -ENOENT : -EPROTO;
		} else if (r < 0) {
			inf_log(inf, 1, "list %s: %s", base, kube_conn_error(inf->conn));
		}
		if (r == 0) {
			json_array_foreach(json_object_get(ans, "items"), i, it)
			{
				stamp_kind(inf, it);
				json_array_append(items, it);
			}
			const char *rv = pk_kube_str(ans, "metadata", "resourceVersion");
			const char *c = pk_kube_str(ans, "metadata", "continue");

			snprintf(inf->rv, sizeof(inf->rv), "%s", rv ? rv : "0");
			cont = c && *c ? strdup(c) : NULL;
		}
		json_decref(ans);
		if (r < 0 || !cont)
			break;
	}
	free(cont);
	if (r < 0) {
		json_decref(items);
		return r;
	}
	*ret_items = items;
	return 0;
}

static enum kube_event event_type(const char *t, bool *ret_ok)
{
	*ret_ok = true;
	if (strcmp(t, "ADDED") == 0)
		return KUBE_ADDED;
	if (strcmp(t, "MODIFIED") == 0)
		return KUBE_MODIFIED;
	if (strcmp(t, "DELETED") == 0)
		return KUBE_DELETED;
	*ret_ok = false;
	return KUBE_ADDED;
}

/* One line of the watch stream; 1 stops it (410 Gone), -EPROTO on an error event. */
static int on_line(void *arg, const char *line, size_t len)
{
	struct kube_informer *inf = arg;
	json_t *ev = json_loadb(line, len, 0, NULL);
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *obj = json_object_get(ev, "object");
	const char *rv = pk_kube_str(obj, "metadata", "resourceVersion");
	int r = 0;
	bool ok;

	if (!type || !json_is_object(obj)) {
		/* a lone newline keeps a quiet stream alive; a bare Status is an error */
		if (ev && json_integer_value(json_object_get(ev, "code")) == 410)
			r = 1;
		json_decref(ev);
		return r;
	}
	if (strcmp(type, "ERROR") == 0) {
		long code = (long)json_integer_value(json_object_get(obj, "code"));

		inf_log(inf, code == 410 ? 2 : 1, "watch %s: %ld %s", inf->res.plural, code,
			kube_status_message(obj));
		r = code == 410 ? 1 : -EPROTO;
	} else if (strcmp(type, "BOOKMARK") == 0) {
		if (rv)
			snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
	} else {
		enum kube_event t = event_type(type, &ok);

		if (ok) {
			stamp_kind(inf, obj);
			inf->sink.event(inf->sink.arg, &inf->res, t, obj);
			count(inf, &inf->stats.events);
			if (rv)
				snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
		}
	}
	if (r == 1)
		inf->gone = true;
	json_decref(ev);
	return r;
}

/* One watch from inf->rv: 0 ended normally, 1 gone, -errno failed. */
static int watch_once(struct kube_informer *inf)
{
	char base[512], path[1024];
	long status = 0;
	int r = kube_resource_path(&inf->res, NULL, NULL, NULL, base, sizeof(base));

	if (r < 0)
		return r;
	snprintf(path, sizeof(path),
		 "%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=%d&resourceVersion=%s", base,
		 WATCH_TIMEOUT_S + rand() % 60, inf->rv);
	inf->gone = false;
	count(inf, &inf->stats.watches);
	r = kube_stream(inf->conn, path, on_line, inf, &inf->stop, &status);
	if (inf->gone || status == 410)
		return 1;
	if (r == 0 && status != 200) {
		inf_log(inf, 1, "watch %s: HTTP %ld", base, status);
		return -EPROTO;
	}
	if (r == -EIO)
		inf_log(inf, 1, "watch %s: %s; resuming from resourceVersion %s", base,
			kube_conn_error(inf->conn), inf->rv);
	return r;
}

static int backoff_next(int ms)
{
	ms = ms ? ms * 2 : KUBE_BACKOFF_MIN_MS;
	return ms > KUBE_BACKOFF_MAX_MS ? KUBE_BACKOFF_MAX_MS : ms;
}

/* List (until it works) and deliver; false when stopping. */
static void set_listing(struct kube_informer *inf, bool listing)
{
	pthread_mutex_lock(&inf->lock);
	inf->stats.listing = listing;
	pthread_mutex_unlock(&inf->lock);
}

static bool sync_list(struct kube_informer *inf, int *backoff)
{
	set_listing(inf, true);
	for (;;) {
		json_t *items = NULL;
		int r = list_all(inf, &items);

		if (atomic_load(&inf->stop)) {
			json_decref(items);
			return false;
		}
		if (r == -ENOENT) {
			/* not served (no CRD): empty until it appears */
			items = json_array();
			snprintf(inf->rv, sizeof(inf->rv), "%s", "");
		}
		if (items) {
			inf->sink.replace(inf->sink.arg, &inf->res, items);
			json_decref(items);
			pthread_mutex_lock(&inf->lock);
			inf->stats.lists++;
			inf->stats.synced = true;
			inf->stats.listing = false;
			pthread_mutex_unlock(&inf->lock);
			if (inf->sink.listed)
				inf->sink.listed(inf->sink.arg, &inf->res);
			if (r == 0)
				return true;
			if (!kube_nap(&inf->lock, &inf->cond, &inf->stop,
				      KUBE_MISSING_RETRY_S * 1000))
				return false;
			continue;
		}
		count(inf, &inf->stats.errors);
		*backoff = backoff_next(*backoff);
		if (!kube_nap(&inf->lock, &inf->cond, &inf->stop, *backoff))
			return false;
	}
}

static void *informer_main(void *arg)
{
	struct kube_informer *inf = arg;
	int backoff = 0;
	bool need_list = true;

	while (!atomic_load(&inf->stop)) {
		if (need_list && !sync_list(inf, &backoff))
			break;
		need_list = false;
		uint64_t before = inf->stats.events;
		int r = watch_once(inf);

		if (atomic_load(&inf->stop))
			break;
		if (r == 1) {
			count(inf, &inf->stats.gone);
			need_list = true;
			continue;
		}
		if (r == 0 || inf->stats.events > before)
			backoff = 0;
		if (r < 0) {
			count(inf, &inf->stats.errors);
			backoff = backoff_next(backoff);
			if (!kube_nap(&inf->lock, &inf->cond, &inf->stop, backoff))
				break;
		}
	}
	return NULL;
}

int kube_informer_start(struct kube_client *c, const struct kube_resource *res,
			const struct kube_informer_sink *sink, struct kube_informer **ret)
{
	struct kube_informer *inf = calloc(1, sizeof(*inf));
	int r;

	if (!inf)
		return -ENOMEM;
	inf->c = c;
	inf->sink = *sink;
	inf->kind = strdup(res->kind);
	inf->group = strdup(res->group);
	inf->version = strdup(res->version);
	inf->plural = strdup(res->plural);
	inf->res = (struct kube_resource){inf->kind, inf->group, inf->version, inf->plural,
					  res->namespaced};
	atomic_init(&inf->stop, false);
	pthread_mutex_init(&inf->lock, NULL);
	pthread_cond_init(&inf->cond, NULL);
	r = inf->kind && inf->group && inf->version && inf->plural ? kube_conn_new(c, &inf->conn)
								   : -ENOMEM;
	if (r == 0) {
		r = -pthread_create(&inf->thread, NULL, informer_main, inf);
		inf->started = r == 0;
	}
	if (r < 0) {
		kube_informer_stop(inf);
		return r;
	}
	*ret = inf;
	return 0;
}

void kube_informer_halt(struct kube_informer *inf)
{
	if (!inf)
		return;
	pthread_mutex_lock(&inf->lock);
	atomic_store(&inf->stop, true);
	pthread_cond_broadcast(&inf->cond);
	pthread_mutex_unlock(&inf->lock);
	if (inf->started)
		pthread_join(inf->thread, NULL);
	inf->started = false;
}

void kube_informer_stop(struct kube_informer *inf)
{
	if (!inf)
		return;
	kube_informer_halt(inf);
	kube_conn_free(inf->conn);
	pthread_mutex_destroy(&inf->lock);
	pthread_cond_destroy(&inf->cond);
	free(inf->kind);
	free(inf->group);
	free(inf->version);
	free(inf->plural);
	free(inf);
}

void kube_informer_get_stats(struct kube_informer *inf, struct kube_informer_stats *ret)
{
	pthread_mutex_lock(&inf->lock);
	*ret = inf->stats;
	pthread_mutex_unlock(&inf->lock);
}

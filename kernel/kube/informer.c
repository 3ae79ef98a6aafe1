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
#include "kernel/lib/log.h"
#include "kernel/lib/macro.h"

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
	char rv[64];	/* where the watch resumes */
	bool gone;	/* the watch answered 410 */
	bool delivered; /* the current watch delivered an event or a bookmark */
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

/* Every line goes to the sink, which filters by level. */
#define inf_log(inf, level, ...)                                                                   \
	pk_logf((inf)->sink.log, (inf)->sink.arg, PK_LOG_ALL, level, __VA_ARGS__)

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

/* ---- decoding ------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int kube_list_decode(const json_t *ans, const json_t **ret_items, const char **ret_rv,
		     const char **ret_continue)
{
	const json_t *items = json_object_get(ans, "items"), *it;
	const char *rv = pk_kube_str(ans, "metadata", "resourceVersion");
	const char *cont = pk_kube_str(ans, "metadata", "continue");
	size_t i;

	if (!json_is_object(ans) || !rv)
		return -EBADMSG;
	if (json_is_null(items) &&
	    ends_with(json_string_value(json_object_get(ans, "kind")), "List"))
		items = NULL;
	else if (!json_is_array(items))
		return -EBADMSG;
	json_array_foreach(items, i, it)
	{
		if (!pk_kube_str(it, "metadata", "name"))
			return -EBADMSG;
	}
	*ret_items = items;
	*ret_rv = rv;
	*ret_continue = cont && *cont ? cont : NULL;
	return 0;
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return false;
	}
	return true;
}

static int watch_type(const char *t, enum kube_watch_type *ret)
{
	static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

	ssize_t i = PK_STRING_TABLE_FIND(names, t);

	if (i < 0)
		return -EBADMSG;
	*ret = (enum kube_watch_type)i;
	return 0;
}

int kube_watch_decode(const char *line, size_t len, struct kube_watch_event *ret)
{
	json_t *ev;
	const char *type;
	json_t *obj;

	*ret = (struct kube_watch_event){.type = KUBE_WATCH_BLANK};
	if (blank(line, len))
		return 0;
	ev = json_loadb(line, len, 0, NULL);
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	if (!type && json_is_integer(json_object_get(ev, "code")) &&
	    json_is_string(json_object_get(ev, "kind"))) {
		/* a bare Status: the answer to a watch that could not start */
		*ret = (struct kube_watch_event){
		    KUBE_WATCH_ERROR, ev, ev, NULL,
		    (long)json_integer_value(json_object_get(ev, "code"))};
		return 0;
	}
	if (!json_is_object(obj) || watch_type(type, &ret->type) < 0) {
		json_decref(ev);
		*ret = (struct kube_watch_event){.type = KUBE_WATCH_BLANK};
		return -EBADMSG;
	}
	ret->line = ev;
	ret->object = obj;
	if (ret->type == KUBE_WATCH_ERROR) {
		ret->code = (long)json_integer_value(json_object_get(obj, "code"));
		return 0;
	}
	ret->rv = pk_kube_str(obj, "metadata", "resourceVersion");
	if (!ret->rv ||
	    (ret->type != KUBE_WATCH_BOOKMARK && !pk_kube_str(obj, "metadata", "name"))) {
		json_decref(ev);
		*ret = (struct kube_watch_event){.type = KUBE_WATCH_BLANK};
		return -EBADMSG;
	}
	return 0;
}

void kube_watch_event_clear(struct kube_watch_event *ev)
{
	json_decref(ev->line);
	*ev = (struct kube_watch_event){.type = KUBE_WATCH_BLANK};
}

/* ---- list ------------------------------------------------------------------------------ */

/* The answer that did not decode, logged with what it looked like. */
static void log_undecodable(struct kube_informer *inf, const char *what, const char *base)
{
	size_t bytes;
	const char *type, *head;

	kube_conn_answer(inf->conn, &bytes, &type, &head);
	inf_log(inf, 1,
		"list %s: %s (HTTP 200, %zu bytes, Content-Type \"%s\": \"%s\"); keeping what "
		"was listed before, listing again",
		base, what, bytes, type, head);
	count(inf, &inf->stats.undecodable);
}

/* One page into items; 0, -ENOENT (404: not served), -EPROTO, -EIO, -EBADMSG, -EFBIG. */
static int list_page(struct kube_informer *inf, const char *base, const char *path, json_t *items,
		     uint64_t *bytes, char *rv, size_t rvlen, char **ret_cont)
{
	json_t *ans = NULL, *it;
	const json_t *page;
	const char *prv, *cont, *type, *head;
	long status = 0;
	size_t i, n;
	uint64_t left = kube_client_max_list_bytes(inf->c) > *bytes
			    ? kube_client_max_list_bytes(inf->c) - *bytes
			    : 1;

	/* a page is bounded before it is parsed, whatever limit the cluster honours */
	kube_conn_set_max_answer(inf->conn, left < KUBE_LIST_PAGE_MAX_BYTES
						? (size_t)left + 1
						: KUBE_LIST_PAGE_MAX_BYTES);
	int r = kube_request(inf->conn, "GET", path, NULL, NULL, 60000, &status, &ans);
	kube_conn_set_max_answer(inf->conn, 0);

	if (r == 0 && status != 200) {
		inf_log(inf, 1, "list %s: HTTP %ld: %s", base, status, kube_status_message(ans));
		r = status == 404 ? -ENOENT : -EPROTO;
	} else if (r < 0) {
		inf_log(inf, 1, "list %s: %s", base, kube_conn_error(inf->conn));
		if (r == -EFBIG)
			count(inf, &inf->stats.too_big);
	} else if (kube_list_decode(ans, &page, &prv, &cont) < 0) {
		log_undecodable(inf, "the answer is not a list", base);
		r = -EBADMSG;
	}
	kube_conn_answer(inf->conn, &n, &type, &head);
	*bytes += n;
	if (r == 0 && *bytes > kube_client_max_list_bytes(inf->c)) {
		inf_log(inf, 1,
			"list %s: more than %llu bytes; keeping what was listed before, listing "
			"again",
			base, (unsigned long long)kube_client_max_list_bytes(inf->c));
		count(inf, &inf->stats.too_big);
		r = -EFBIG;
	}
	if (r == 0) {
		json_array_foreach(page, i, it)
		{
			stamp_kind(inf, it);
			json_array_append(items, it);
		}
		snprintf(rv, rvlen, "%s", prv);
		*ret_cont = cont ? strdup(cont) : NULL;
		if (cont && !*ret_cont)
			r = -ENOMEM;
	}
	json_decref(ans);
	return r;
}

/*
 * Every page of the list into one array, the resourceVersion into inf->rv
 * only once every page decoded; 0 or list_page()'s errors.
 */
static int list_all(struct kube_informer *inf, json_t **ret_items)
{
	char base[512], path[3072], esc[2048], rv[sizeof(inf->rv)] = "";
	json_t *items = json_array();
	char *cont = NULL;
	uint64_t bytes = 0;
	int r = kube_resource_path(&inf->res, NULL, NULL, NULL, base, sizeof(base));

	if (!items)
		return -ENOMEM;
	while (r == 0) {
		snprintf(path, sizeof(path), "%s?limit=%d%s%s", base, KUBE_LIST_PAGE,
			 cont ? "&continue=" : "", cont ? kube_escape(cont, esc, sizeof(esc)) : "");
		free(cont);
		cont = NULL;
		r = list_page(inf, base, path, items, &bytes, rv, sizeof(rv), &cont);
		if (r < 0 || !cont)
			break;
	}
	free(cont);
	if (r < 0) {
		json_decref(items);
		return r;
	}
	snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
	*ret_items = items;
	return 0;
}

/* ---- watch ----------------------------------------------------------------------------- */

/* One line of the watch stream; 1 stops it (410 Gone), -EPROTO on an error event. */
static int on_line(void *arg, const char *line, size_t len)
{
	struct kube_informer *inf = arg;
	struct kube_watch_event ev;
	char head[81];
	int r = 0;

	if (kube_watch_decode(line, len, &ev) < 0) {
		kube_printable(line, len, head, sizeof(head));
		inf_log(inf, 1,
			"watch %s: a line that is not a watch event (%zu bytes: \"%s\"); resuming "
			"from resourceVersion %s",
			inf->res.plural, len, head, inf->rv);
		count(inf, &inf->stats.undecodable);
		return -EBADMSG;
	}
	switch (ev.type) {
	case KUBE_WATCH_BLANK: /* a lone newline keeps a quiet stream alive */
		break;
	case KUBE_WATCH_ERROR:
		inf_log(inf, ev.code == 410 ? 2 : 1, "watch %s: %ld %s", inf->res.plural, ev.code,
			kube_status_message(ev.object));
		r = ev.code == 410 ? 1 : -EPROTO;
		break;
	case KUBE_WATCH_BOOKMARK:
		snprintf(inf->rv, sizeof(inf->rv), "%s", ev.rv);
		inf->delivered = true;
		break;
	default:
		stamp_kind(inf, ev.object);
		inf->sink.event(inf->sink.arg, &inf->res,
				ev.type == KUBE_WATCH_ADDED	 ? KUBE_ADDED
				: ev.type == KUBE_WATCH_MODIFIED ? KUBE_MODIFIED
								 : KUBE_DELETED,
				ev.object);
		count(inf, &inf->stats.events);
		snprintf(inf->rv, sizeof(inf->rv), "%s", ev.rv);
		inf->delivered = true;
		break;
	}
	if (r == 1)
		inf->gone = true;
	kube_watch_event_clear(&ev);
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
	inf->delivered = false;
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
		int64_t began = kube_now_ms();
		int r = watch_once(inf);

		if (atomic_load(&inf->stop))
			break;
		if (r == 1) {
			count(inf, &inf->stats.gone);
			need_list = true;
			continue;
		}
		/* a watch that ends at once with nothing in it is no better than an error */
		if (r == 0 && !inf->delivered && kube_now_ms() - began < KUBE_SHORT_WATCH_MS)
			r = -EPROTO;
		if (r == 0 || inf->delivered)
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
